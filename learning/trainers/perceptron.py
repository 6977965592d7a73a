"""The averaged structured perceptron (Collins 2002): the baseline trainer."""

from __future__ import annotations

from ..inference import find_constraint
from .base import OnlineTrainer, register


@register("perceptron")
class PerceptronTrainer(OnlineTrainer):
    """The averaged perceptron: ``w <- w - (Phi(z_hat) - Phi(z*))`` whenever the
    prediction is wrong.

    The prediction is the plain argmax (no cost augmentation); the reported objective
    is the mean perceptron loss ``s(z_hat) - s(z*)``.
    """

    def inference(self, example, model, decoder, relaxed, v, scale, state):
        return find_constraint(model, example, decoder, v, scale, cost_augmented=False)

    def update(self, t, constraints, weights):
        for constraint in constraints:
            if constraint.cost > 0:
                weights.add(*constraint.delta, step=-1.0)
        weights.finish_iterate()
