"""Per-word confidence: the probability of each predicted head and label, calibrated.

A linear model's scores are not log-probabilities, but dividing them by a temperature
and normalizing gives a distribution whose one free parameter can be fitted on held-out
data (temperature scaling, Guo, Pleiss, Sun, Weinberger 2017, "On Calibration of Modern
Neural Networks", section 4.2). Heads: the edge-factored distribution over trees

    p(tree) ∝ exp(sum_{(h, m) in tree} S[h, m] / T_head),

``S`` the model's arc scores with each arc's best label folded in (the scores the
decoder maximizes, :meth:`LinearModel.arc_scores`), single-rooted when the model decodes
so; the head probability of word m is the marginal of its predicted arc, given by the
matrix-tree theorem (Koo, Globerson, Carreras, Collins 2007; Smith and Smith 2007;
:func:`decoders.matrix_tree.arc_marginals`). Labels: given an arc, the softmax of its
label scores divided by ``T_label``; the label probability is that of the predicted
label. Summing the labels out of the arc weights instead (``exp(a / T + log sum_l exp(b_l
/ T))``, the labelled-tree distribution's marginals) was measured and dropped: the model
is trained with the best label folded in, not summed, and on 500 en_ewt dev sentences (a
model of 2,000 training sentences) its marginals were worse calibrated at their best
temperature (ECE 6.1 points against 1.6 for the folded scores).

For a higher-order model the arc marginals are those of its first-order pruner's model
(:class:`learning.pruning.Pruner`, stored in the model file), with ``T_head`` fitted for
them; the labels are the model's own (its label scores are arc-factored at every order).

:func:`fit_temperatures` fits ``T_label`` on the negative log-likelihood of the gold
labels given the gold arcs, and ``T_head`` on that of the gold heads under the marginals
(the per-word distribution over heads whose entry at the predicted head is reported),
each by a bounded one-dimensional search over ``log T``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import logsumexp

from polyparse.corpora.sentence import Sentence
from polyparse.decoders.matrix_tree import reliable_marginals

from .model import LinearModel

LOG_T_BOUNDS = (math.log(1e-3), math.log(1e6))
"""The range of ``log T`` searched by :func:`fit_temperatures` (a trained model's scores
run from below 1 to about 1e4)."""


@dataclass(frozen=True)
class Temperatures:
    """``head`` divides the arcs' part scores, ``label`` the label scores (both > 0;
    1 is the model's scores read as log-potentials as they are)."""

    head: float = 1.0
    label: float = 1.0

    def __post_init__(self) -> None:
        for name, value in (("head", self.head), ("label", self.label)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"the {name} temperature must be a positive number, "
                                 f"not {value}")


def head_model(model: LinearModel) -> LinearModel:
    """The arc-factored model whose marginals give head probabilities: ``model`` itself
    at order 1, its pruner's model at higher orders."""
    if model.arc_factored:
        return model
    if model.pruner is None:
        raise ValueError("a higher-order model without a first-order pruner has no head "
                         "marginals")
    return model.pruner.model


def head_marginals(S: np.ndarray, head_temperature: float, single_root: bool) -> np.ndarray:
    """``(n + 1, n + 1)`` arc marginals ``[h, m]`` of ``p(tree) ∝ exp(sum S / T_head)``
    (module docstring); :func:`decoders.matrix_tree.reliable_marginals` heats scores too
    sharp for float64."""
    return reliable_marginals(S / head_temperature, single_root)


def masked_scores(S: np.ndarray, given_heads: np.ndarray, forbidden: np.ndarray
                  ) -> np.ndarray:
    """``S`` with ``-inf`` on the arcs that no tree under the constraints has: those
    ``forbidden`` (``bool (n + 1, n + 1)``) and, for each word m with a given head
    (``given_heads[m] >= 0``; -1: free), every other head of m. A tree's weight is the
    product of its arcs' ``exp(S / T)``, so the matrix-tree marginals of the result
    (:func:`head_marginals`) are exactly those of the distribution restricted to the trees
    with the given arcs and without the forbidden ones (Koo et al. 2007)."""
    out = np.where(forbidden, -np.inf, S)
    words = np.flatnonzero(given_heads >= 0)
    kept = out[given_heads[words], words]
    out[:, words] = -np.inf
    out[given_heads[words], words] = kept
    return out


def label_probabilities(label_scores: np.ndarray, chosen: np.ndarray, temperature: float
                        ) -> np.ndarray:
    """``softmax(label_scores[k] / temperature)[chosen[k]]`` for every row ``k`` (an arc)
    of ``label_scores`` (``(k, L)``)."""
    logits = label_scores / temperature
    return np.exp(logits[np.arange(len(chosen)), chosen] - logsumexp(logits, axis=1))


def fit_temperatures(model: LinearModel, sentences: Sequence[Sentence], single_root: bool
                     ) -> Temperatures:
    """Temperatures minimizing the negative log-likelihood of the gold labels given the
    gold arcs, and of the gold heads under the marginals, of ``sentences`` (module
    docstring; Guo et al. 2017). ``sentences`` must have gold trees and be what the
    model's features see (:meth:`parser.pipeline.Parser.fit_confidence` drops lemmas as
    it parses)."""
    sentences = [s for s in sentences if len(s) > 0]
    if not sentences:
        raise ValueError("fitting temperatures needs sentences with gold trees")
    ids = {label: i for i, label in enumerate(model.labels)}
    label_rows, gold_labels = [], []
    for sentence in sentences:
        if not sentence.has_tree():
            raise ValueError(f"{sentence.source}:{sentence.first_line}: fitting temperatures "
                             "needs gold heads")
        gold = np.array([ids.get(label, -1) for label in sentence.deprels[1:]])
        arcs = np.stack([sentence.heads[1:], np.arange(1, len(sentence) + 1)], axis=1)
        label_rows.append(model.label_scores(sentence, arcs[gold >= 0]))
        gold_labels.append(gold[gold >= 0])
    rows, gold = np.concatenate(label_rows), np.concatenate(gold_labels)
    chosen = rows[np.arange(len(gold)), gold]
    label_t = _fit(lambda t: -(chosen / t - logsumexp(rows / t, axis=1)).sum())

    heads_of = head_model(model)
    scored = [(heads_of.arc_scores(s)[0], s.heads) for s in sentences]

    def head_nll(t: float) -> float:
        total = 0.0
        for S, heads in scored:
            mu = head_marginals(S, t, single_root)
            total -= np.log(np.maximum(mu[heads[1:], np.arange(1, len(heads))], 1e-300)).sum()
        return total

    return Temperatures(head=_fit(head_nll), label=label_t)


def _fit(nll) -> float:
    """The temperature in :data:`LOG_T_BOUNDS` minimizing ``nll(T)`` (bounded Brent
    search over ``log T``)."""
    from scipy.optimize import minimize_scalar  # 0.4 s to import: not at start-up

    found = minimize_scalar(lambda log_t: nll(math.exp(log_t)), bounds=LOG_T_BOUNDS,
                            method="bounded", options={"xatol": 1e-3})
    return float(math.exp(found.x))


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray,
                               bins: int = 15) -> float:
    """ECE (Guo et al. 2017, eq. 3; Naeini et al. 2015): the accuracy-minus-confidence
    gap of ``bins`` equal-width confidence bins of ``(0, 1]``, weighted by their share
    of the predictions."""
    confidence = np.asarray(confidence, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    which = np.clip(np.ceil(confidence * bins).astype(np.int64) - 1, 0, bins - 1)
    count = np.bincount(which, minlength=bins)
    gap = np.abs(np.bincount(which, correct, bins) - np.bincount(which, confidence, bins))
    return float(gap.sum() / max(count.sum(), 1))
