"""Pegasos steps on the regularized structured hinge loss, shared by every trainer that
takes a subgradient step on ``w`` after its per-sentence work: SSG-eta (the slack's
subgradient from loss-augmented inference), DLPW and Hazan-Urtasun (the subgradient of
the sentence's dual at its current messages).

``alpha_t = 1 / (lambda (t + t0))``, ``w <- Proj_W(w - alpha_t (lambda w + mean_i
delta_i))`` (Shalev-Shwartz et al. 2007), with ``W`` the ball that surely holds the
optimum: our slack at ``w = 0`` is at most the largest cost of a sentence, ``2 n``
(Hamming over arc indicators), so ``(lambda/2)||w*||^2 <= mean_t 2 n_t`` and the radius
is ``sqrt(2 mean_t(2 n_t) / lambda)`` (``docs/algorithms.md`` section 5; the shared
notes, ``../shared/docs/algorithms.md``, write ``1/sqrt(lambda)``: correct only for losses
bounded by 1). The mean is over the steps so far.

The projection is an option (``project=True``), off by default: Shalev-Shwartz et al.
(2011, Mathematical Programming, section 2) show it is not needed for convergence, and
with small ``lambda`` a step is longer than the ball's radius for the first
~``||g|| / sqrt(2 lambda mean(2n))`` steps, so projecting keeps little more than the
latest subgradient: on en_ewt (``eval/results/frozen/tune_first_order.md``, lambda 1e-5) dev UAS after
3 epochs is 84.46 with the projection and 87.33 without.
"""

from __future__ import annotations

import numpy as np

from .base import OnlineTrainer


class PegasosTrainer(OnlineTrainer):
    """An online trainer whose update is a mini-batch Pegasos step; the model returned
    is the average of the iterates.

    Parameters
    ----------
    lambda_:
        Regularization constant of ``(lambda/2)||w||^2 + (1/m) sum_t r_t(w)``.
    t0:
        Steps are ``alpha_t = 1 / (lambda (t + t0))`` (Bottou's offset): with ``t0 = 0``
        (Pegasos as published) the first iterates are huge, ``||w_1|| = ||g_1|| /
        lambda``, and dominate the uniform average for small ``lambda``. None takes the
        number of steps of one epoch, as if one epoch had been spent at ``w = 0``.
    project:
        Project on the ball after each step (see the module docstring).
    """

    def __init__(self, *, lambda_: float = 1e-5, t0: int | None = None,
                 project: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        if lambda_ <= 0:
            raise ValueError("lambda must be > 0")
        self.lambda_ = lambda_
        self.t0 = t0
        self.project = project

    def start(self, examples, decoder):
        steps_per_epoch = -(-len(examples) // self.batch)
        self._t0 = steps_per_epoch if self.t0 is None else self.t0
        self._max_cost_sum = 0.0
        self._max_cost_count = 0

    def update(self, t, constraints, weights):
        """``w <- Proj(w - alpha_t (lambda w + mean_i delta_i))``."""
        alpha = 1.0 / (self.lambda_ * (t + self._t0))
        weights.shrink(1.0 - alpha * self.lambda_)
        for constraint in constraints:
            weights.add(*constraint.delta, step=-alpha / len(constraints))
            self._max_cost_sum += 2.0 * constraint.result.heads.size - 2.0
            self._max_cost_count += 1
        if self.project:
            mean_max_cost = self._max_cost_sum / self._max_cost_count
            weights.project(np.sqrt(2.0 * mean_max_cost / self.lambda_))
        weights.finish_iterate()

    def objective(self, mean_slack, weights):
        """``(lambda/2)||w||^2 + mean slack``, the slacks taken online during the epoch."""
        return 0.5 * self.lambda_ * weights.norm ** 2 + mean_slack
