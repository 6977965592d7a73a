"""Stochastic subgradient training of the structured SVM (Martins, Smith, Xing,
ICML 2009, Algorithm 1; ``docs/algorithms.md`` section 5, "SSG-eta").

Pegasos steps (:mod:`.pegasos`) on the subgradient ``Phi(z_hat) - Phi(z*)`` of each
sentence's slack; the model returned is the average of the iterates. With ``eta > 0``
each loss-augmented inference is, with probability ``eta_t``, the relaxed one (LP,
fractional ``z_hat``); otherwise exact.

The default ``lambda = 1e-5`` was tuned on en_ewt (``eval/results/frozen/tune_first_order.md``,
first-order model, 10 epochs, dev UAS / LAS): 1e-5 gives 87.68 / 85.99, 3e-5 gives
87.51 / 85.79, and the averaged perceptron 87.45 / 85.80 (best 87.57 after 5 epochs).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from polyparse.decoders import DECODERS, make_decoder

from ..inference import find_constraint
from .base import register
from .pegasos import PegasosTrainer


@register("ssg")
class SubgradientTrainer(PegasosTrainer):
    """SSG-eta: stochastic subgradient, Pegasos steps, averaged (the default).

    Parameters
    ----------
    eta:
        Probability of relaxed loss-augmented inference, a number in [0, 1], or
        ``"sqrt"`` for ``eta_t = min(1, t^-1/2)``; 0 trains exactly. (default 1:
        relaxed, as exact inference at order 2 can take hours per epoch)
    relaxed:
        The decoder of relaxed loss-augmented inference, whose fractional optimum
        enters the subgradient: ``lp`` (HiGHS), ``ad3`` (the same LP by AD3, 3.5x faster
        on order-2 en_ewt, ``eval/results/frozen/decoders_en_ewt.md``), or ``auto`` (the
        default): the exact decoder's relaxed twin (:meth:`~decoders.base.Decoder.
        relaxed_twin`: ``ad3`` for AD3's branch and bound, whose factor graph then holds
        the model's parts; the exact decoder itself when it decodes arcs alone, for
        which the LP relaxation is tight; else ``lp``). An ``ad3`` relaxed
        decoder takes the exact decoder's ``rounds`` when that is AD3's, else None:
        at full order lazy rounds (``ad3-exact``'s root relaxation), unless
        ``--rounds 1`` asks for the optimistic program alone, 3.4x faster on tr_imst
        but 0.15 dev UAS lower (``eval/results/orders_tr_imst_full_relaxed_*.md``).
    relaxed_max_iter:
        Most AD3 iterations of relaxed loss-augmented inference by ``ad3``; None: AD3's
        own (10,000, to convergence). 100 trained order 2 on da_ddt 5.2x faster than
        convergence, to 2.6 UAS more, on sv_talbanken 2.0x faster, to 0.7 more
        (``eval/results/relaxed_iterations.md``).
    """

    def __init__(self, *, eta: float | Literal["sqrt"] = 1.0, relaxed: str = "auto",
                 relaxed_max_iter: int | None = 100, **kwargs) -> None:
        super().__init__(**kwargs)
        if relaxed_max_iter is not None and relaxed_max_iter < 1:
            raise ValueError(f"relaxed_max_iter must be at least 1, not {relaxed_max_iter}")
        self.relaxed_max_iter = relaxed_max_iter
        if eta != "sqrt" and not 0.0 <= float(eta) <= 1.0:
            raise ValueError(f"eta must be in [0, 1] or 'sqrt', not {eta!r}")
        if relaxed != "auto" and relaxed not in DECODERS:
            raise ValueError(f"unknown relaxed decoder {relaxed!r}; choose from auto, "
                             f"{', '.join(sorted(DECODERS))}")
        self.eta = eta
        self.relaxed = relaxed

    def eta_at(self, t: int) -> float:
        return min(1.0, t ** -0.5) if self.eta == "sqrt" else float(self.eta)

    def start(self, examples, decoder):
        super().start(examples, decoder)
        if self.relaxed == "auto":
            relaxed = decoder.relaxed_twin()
        else:
            relaxed = make_decoder(self.relaxed, decoder.single_root)
            if "rounds" in relaxed.options():   # the exact decoder's, else lazy rounds
                relaxed = relaxed.with_options(rounds=getattr(decoder, "rounds", None))
        if self.relaxed_max_iter is not None and "max_iter" in relaxed.options():
            relaxed = relaxed.with_options(max_iter=self.relaxed_max_iter)
        self._relaxed = relaxed
        self._coin = np.random.default_rng(self.seed + 1)
        self._counts = np.zeros(4)

    def relaxed_draws(self, t, k):
        eta_t = self.eta_at(t)
        return [eta_t > 0.0 and self._coin.random() < eta_t for _ in range(k)]

    def inference(self, example, model, decoder, relaxed, v, scale, state):
        constraint = find_constraint(model, example, self._relaxed if relaxed else decoder,
                                     v, scale)
        constraint.relaxed = relaxed
        return constraint

    def update(self, t, constraints, weights):
        super().update(t, constraints, weights)
        for constraint in constraints:
            self._counts += (1, constraint.relaxed,
                             constraint.relaxed and not constraint.result.integral,
                             not constraint.relaxed
                             and constraint.result.stats.fallback)

    def epoch_extra(self):
        """Share (%) of relaxed loss-augmented inferences, and of fractional solutions
        among them; and, when the exact decoder hit its time limit, the share of exact
        inferences that fell back to LP + rounding."""
        calls, relaxed, fractional, fallbacks = self._counts
        self._counts = np.zeros(4)
        extra = {}
        if self.eta != 0.0:
            extra = {"relaxed_share": 100.0 * relaxed / max(calls, 1),
                     "fractional_share": 100.0 * fractional / max(relaxed, 1)}
        if fallbacks:
            extra["fallback_share"] = 100.0 * fallbacks / max(calls - relaxed, 1)
        return extra
