"""Stochastic subgradient training of the structured SVM (Martins, Smith, Xing,
ICML 2009, Algorithm 1; ``docs/algorithms.md`` section 5, "SSG-eta").

Pegasos steps (Shalev-Shwartz et al. 2007): ``alpha_t = 1 / (lambda t)``,
``w <- Proj_W(w - alpha_t (lambda w + Phi(z_hat) - Phi(z*)))`` with ``W`` the ball of
radius ``1 / sqrt(lambda)``; the model returned is the average of the iterates.
With ``eta > 0`` each loss-augmented inference is, with probability ``eta_t``, the
relaxed one (LP, fractional ``z_hat``); otherwise exact.

The ball: Pegasos' radius ``1/sqrt(lambda)`` assumes a loss of at most 1 at ``w = 0``.
Our slack at ``w = 0`` is the largest cost of a sentence, ``2 n`` (Hamming over arc
indicators), so the optimum satisfies ``(lambda/2)||w*||^2 <= mean_t 2 n_t`` and the
ball that surely contains it has radius ``sqrt(2 mean_t(2 n_t) / lambda)``
(``docs/algorithms.md`` section 5 writes ``1/sqrt(lambda)``: correct only for losses
bounded by 1). The mean is taken over the steps so far.

The projection is an option (``project=True``), off by default, although the paper's
Algorithm 1 projects (the option keeps that algorithm): Shalev-Shwartz et al. (2011,
Mathematical Programming, section 2) show it is not needed for Pegasos' convergence, and
here, with small ``lambda``, a step is longer than the ball's radius for the first
~``||g|| / sqrt(2 lambda mean(2n))`` steps, so projecting keeps little more than the
latest subgradient: on en_ewt (``eval/tune_first_order.py``, lambda 1e-5) dev UAS after
3 epochs is 84.46 with the projection and 87.33 without.

The default ``lambda = 1e-5`` was tuned there (first-order model, 10 epochs, en_ewt dev
UAS / LAS): 1e-5 gives 87.68 / 85.99, 3e-5 gives 87.51 / 85.79, and the averaged
perceptron 87.45 / 85.80 (best 87.57 after 5 epochs).
"""

from __future__ import annotations

import numpy as np

from .base import OnlineTrainer, register
from ..inference import find_constraint


@register("ssg")
class SubgradientTrainer(OnlineTrainer):
    """SSG-eta.

    Parameters
    ----------
    lambda_:
        Regularization constant of ``(lambda/2)||w||^2 + (1/m) sum_t r_t(w)``.
    eta:
        Probability of relaxed loss-augmented inference; ``"sqrt"`` for
        ``eta_t = min(1, t^-1/2)``. Needs ``relaxed`` when not 0.
    relaxed:
        The relaxed decoder (e.g. the LP) used when the coin says so.
    t0:
        Steps are ``alpha_t = 1 / (lambda (t + t0))`` (Bottou's offset): with ``t0 = 0``
        (Pegasos as published) the first iterates are huge, ``||w_1|| = ||g_1|| /
        lambda``, and dominate the uniform average for small ``lambda``. ``None`` takes
        the number of steps of one epoch, as if one epoch had been spent at ``w = 0``.
    project:
        Project on the ball after each step (see the module docstring).
    Further keyword arguments (``epochs, seed, batch, jobs, progress``) are those of
    :class:`~parser.trainers.base.OnlineTrainer`; with ``batch > 1`` this is mini-batch
    Pegasos (the subgradient averaged over the batch, one step per batch).
    """

    def __init__(self, *, lambda_: float = 1e-5, eta: float | str = 0.0, relaxed=None,
                 t0: int | None = None, project: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        if lambda_ <= 0:
            raise ValueError("lambda must be > 0")
        if eta != "sqrt" and not 0.0 <= float(eta) <= 1.0:
            raise ValueError("eta must be in [0, 1] or 'sqrt'")
        if eta != 0.0 and relaxed is None:
            raise ValueError("eta > 0 needs a relaxed decoder")
        self.lambda_ = lambda_
        self.eta = eta
        self.relaxed = relaxed
        self.t0 = t0
        self.project = project

    def eta_at(self, t: int) -> float:
        return min(1.0, t ** -0.5) if self.eta == "sqrt" else float(self.eta)

    def start(self, examples):
        steps_per_epoch = -(-len(examples) // self.batch)
        self._t0 = steps_per_epoch if self.t0 is None else self.t0
        self._coin = np.random.default_rng(self.seed + 1)
        self._max_cost_sum = 0.0
        self._max_cost_count = 0
        self._counts = np.zeros(4)

    def relaxed_draws(self, t, k):
        eta_t = self.eta_at(t)
        return [eta_t > 0.0 and self._coin.random() < eta_t for _ in range(k)]

    def inference(self, example, model, decoder, relaxed, v, scale):
        constraint = find_constraint(model, example, self.relaxed if relaxed else decoder,
                                     v, scale)
        constraint.relaxed = relaxed
        return constraint

    def update(self, t, constraints, weights):
        """Mini-batch Pegasos: ``w <- Proj(w - alpha_t (lambda w + mean_i delta_i))``."""
        alpha = 1.0 / (self.lambda_ * (t + self._t0))
        weights.shrink(1.0 - alpha * self.lambda_)
        for constraint in constraints:
            weights.add(*constraint.delta, step=-alpha / len(constraints))
            self._max_cost_sum += 2.0 * constraint.result.heads.size - 2.0
            self._max_cost_count += 1
            stats = constraint.result.stats
            self._counts += (1, constraint.relaxed,
                             constraint.relaxed and not constraint.result.integral,
                             not constraint.relaxed and bool(stats.get("fallback")))
        if self.project:
            mean_max_cost = self._max_cost_sum / self._max_cost_count
            weights.project(np.sqrt(2.0 * mean_max_cost / self.lambda_))
        weights.finish_iterate()

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

    def objective(self, mean_slack, weights):
        """``(lambda/2)||w||^2 + mean slack``, the slacks taken online during the epoch."""
        return 0.5 * self.lambda_ * weights.norm ** 2 + mean_slack
