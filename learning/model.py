"""The linear model: weights over part features and label-conjoined arc features.

Score of a labeled tree (``docs/algorithms.md`` section 1): ``s^T z`` with part scores
``s = F(x) w_parts``, plus, for each arc (h, m) in the tree with label l,
``G(x)[(h, m)] W_labels[:, l]``. Labels depend on the arc only, so the best label of
each candidate arc is chosen first and folded into the arc's score; then the decoder
picks the tree (McDonald, Crammer, Pereira 2005, "labeled parsing" by the one-best label
per arc). The flat weight vector is ``[w_parts, W_labels.ravel()]`` with
``W_labels`` of shape ``(2**label_bits, n_labels)``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from polyparse.corpora.sentence import ROOT, Sentence
from polyparse.corpora.signals import stops_to_main_thread
from polyparse.decoders import Parts, PartType
from polyparse.decoders.higher_order import PartsConfig
from polyparse.features.extractor import FeatureExtractor, real_weights
from polyparse.features.vocab import EncodedSentence

from . import _kernels

THREADED_WORDS = 200
"""Sentences of at least this many words get their arc and label scores computed in two
threads (:meth:`LinearModel.arc_scores`): below it a thread costs more than it saves."""


@dataclass
class Example:
    """A sentence prepared for the model: candidate parts and their features.

    ``part_features`` has one row per part; ``label_features`` one row per ARC part, in
    the order of ``parts.arcs``. ``gold`` (0/1 over parts) and ``gold_labels``
    (label id of each ARC row's modifier's gold label, -1 where the arc is not gold) are
    set for training sentences.
    """

    sentence: Sentence
    parts: Parts
    part_features: sp.csr_matrix
    label_features: sp.csr_matrix
    gold: np.ndarray | None = None
    gold_labels: np.ndarray | None = None


@dataclass
class Scores:
    """Scores of one example under some weights.

    ``parts``: score of each part, each ARC row with its best label's score folded in;
    ``labels``: best label id of each ARC row; ``label_scores``: ``(n_arcs, n_labels)``
    label scores (cost-augmented when asked for); ``gold``: score of the gold labeled
    tree (training examples only).
    """

    parts: np.ndarray
    labels: np.ndarray
    label_scores: np.ndarray
    gold: float = float("nan")


class LinearModel:
    """Part and label weights plus the frozen feature map and label set.

    Parameters
    ----------
    extractor:
        Fitted feature extractor (its vocabulary and template configuration are part of
        the model).
    labels:
        Dependency relation labels; label id ``i`` is ``labels[i]``. Empty: an unlabeled
        model (arc scores only, no label weights; a pruner's, :mod:`learning.pruning`).
    weights:
        Flat weight vector of length :attr:`dim` (float64 zeros by default; a model read
        from its file keeps the file's float32, half the memory, the same scores).
    parts:
        Which part types the model scores (:class:`decoders.higher_order.PartsConfig`;
        default: arcs alone).
    pruner:
        A :class:`learning.pruning.Pruner` giving the candidate arcs (all arcs if None).
    """

    def __init__(self, extractor: FeatureExtractor, labels: list[str],
                 weights: np.ndarray | None = None, *, parts: PartsConfig = PartsConfig(),
                 pruner=None) -> None:
        self.part_config = parts
        self.pruner = pruner
        self.extractor = extractor
        self.labels = list(labels)
        self._label_ids = {label: i for i, label in enumerate(self.labels)}
        self.part_dim = 1 << extractor.config.bits
        self.label_dim = 1 << extractor.config.label_bits
        self.dim = self.dimension(extractor, len(self.labels))
        self.weights = np.zeros(self.dim) if weights is None else real_weights(weights)
        if self.weights.shape != (self.dim,):
            raise ValueError(f"weights have shape {self.weights.shape}, expected ({self.dim},)")

    @staticmethod
    def dimension(extractor: FeatureExtractor, n_labels: int) -> int:
        """Length of the flat weight vector ``[w_parts, W_labels.ravel()]`` of a model
        with ``extractor``'s (sized) feature spaces and ``n_labels`` labels."""
        return (1 << extractor.config.bits) + (1 << extractor.config.label_bits) * n_labels

    # -- examples -----------------------------------------------------------------

    def candidate_arcs(self, sentence: Sentence, *, gold: bool = False,
                       encoded: EncodedSentence | None = None) -> np.ndarray | None:
        """The pruner's arcs (None: all arcs); with ``gold=True`` the gold arcs are
        added, so that the gold tree is a feasible structure for training. ``encoded``:
        the sentence as this model's extractor encodes it, if already at hand (a pruner
        that shares the extractor, as a trained one does, then does not encode it again)."""
        if self.pruner is None:
            return None
        arcs = self.pruner.candidate_arcs(sentence, encoded, self.extractor)
        if gold:
            words = np.arange(1, len(sentence) + 1)
            arcs = np.unique(np.concatenate([arcs, np.stack([sentence.heads[1:], words], 1)]),
                             axis=0)
        return arcs

    def parts(self, sentence: Sentence, arcs: np.ndarray | None) -> Parts:
        """The model's parts of ``sentence`` over candidate ``arcs`` (None: all arcs)."""
        return self.part_config.build(len(sentence), arcs)

    def example(self, sentence: Sentence, *, gold: bool = False,
                parts: Parts | None = None) -> Example:
        """Prepare ``sentence`` over its candidate ``parts`` (default: :meth:`parts` over
        :meth:`candidate_arcs`); with ``gold=True`` also its gold structure and labels."""
        encoded = self.extractor.encode(sentence)
        if parts is None:
            parts = self.parts(sentence, self.candidate_arcs(sentence, gold=gold,
                                                             encoded=encoded))
        part_features = self.extractor.part_features(encoded, parts)
        if self.labels:
            label_features = self.extractor.label_features(encoded, parts.arcs)
        else:
            label_features = sp.csr_matrix((len(parts.arcs), self.label_dim))
        example = Example(sentence, parts, part_features, label_features)
        if gold:
            example.gold = parts.from_heads(sentence.heads)
            arcs = parts.arcs
            gold_ids = np.array([self._label_ids.get(r, -1) for r in sentence.deprels])
            is_gold = sentence.heads[arcs[:, 1]] == arcs[:, 0]
            example.gold_labels = np.where(is_gold, gold_ids[arcs[:, 1]], -1)
        return example

    # -- scoring ------------------------------------------------------------------

    def scores(self, example: Example, v: np.ndarray | None = None, scale: float = 1.0,
               label_cost: float = 0.0) -> Scores:
        """Part scores under ``w = scale * v`` (the model's own weights by default).

        With ``label_cost > 0`` (loss-augmented inference, ``docs/algorithms.md``
        section 4, labeled variant) a gold arc's non-gold labels get ``+label_cost``.
        """
        if v is None:
            v = self.weights
        part_scores = scale * weigh(example.part_features, v[:self.part_dim])
        label_matrix = v[self.part_dim:].reshape(self.label_dim, len(self.labels))
        label_scores = scale * weigh(example.label_features, label_matrix)
        gold = float("nan")
        if example.gold is not None:
            rows = np.flatnonzero(example.gold_labels >= 0)
            gold = float(part_scores @ example.gold
                         + label_scores[rows, example.gold_labels[rows]].sum())
            if label_cost:
                label_scores[rows] += label_cost
                label_scores[rows, example.gold_labels[rows]] -= label_cost
        if not self.labels:
            return Scores(part_scores, np.zeros(len(label_scores), dtype=np.int64),
                          label_scores, gold)
        best = label_scores.argmax(axis=1)
        part_scores[example.parts.block(PartType.ARC)] += label_scores[np.arange(best.size), best]
        return Scores(part_scores, best, label_scores, gold)

    @property
    def arc_factored(self) -> bool:
        """Whether the model scores arcs only (order 1): then :meth:`arc_scores` gives
        all its scores."""
        return self.part_config.order == "1"

    def arc_scores(self, sentence: Sentence, v: np.ndarray | None = None,
                   label_scores: np.ndarray | None = None, *,
                   encoded: EncodedSentence | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(S, labels)``, both ``(n + 1, n + 1)``: ``S[h, m]`` the score of arc h -> m
        with its best label folded in (as :meth:`scores` does for an ARC row), ``-inf``
        for what is not a candidate arc (the diagonal, column 0, pruned arcs), and
        ``labels[h, m]`` that label's id. ``label_scores`` (``float64 (n + 1, n + 1,
        n_labels)``), if given, receives every label's score of every arc (what
        :meth:`label_scores` gives for them) from the same pass. An unlabeled model
        has no label pass and its ``labels`` are 0.

        The features of the ``n^2`` arcs are hashed and weighed in one pass and never
        stored (:meth:`FeatureExtractor.arc_scores`): memory O(n^2), time O(n^2) times
        the templates, where :meth:`example` then :meth:`scores` hold every arc's feature
        row and pay O(|h - m|) per in-between template (O(n^3)). From
        :data:`THREADED_WORDS` words on, the arc and the label scores (about half of the
        time each) are computed in two threads.
        """
        if v is None:
            v = self.weights
        if encoded is None:
            encoded = self.extractor.encode(sentence)
        if not self.labels:
            S = self.extractor.arc_scores(encoded, v[:self.part_dim])
            labels = np.zeros(S.shape, dtype=np.int64)
        else:
            label_matrix = v[self.part_dim:].reshape(self.label_dim, len(self.labels))
            if len(sentence) < THREADED_WORDS:
                S = self.extractor.arc_scores(encoded, v[:self.part_dim])
                best, labels = self.extractor.best_label_scores(encoded, label_matrix,
                                                                label_scores)
            else:       # two GIL-free kernels of about the same cost, side by side
                with ThreadPoolExecutor(1) as pool:
                    with stops_to_main_thread():
                        label_job = pool.submit(self.extractor.best_label_scores, encoded,
                                                label_matrix, label_scores)
                    S = self.extractor.arc_scores(encoded, v[:self.part_dim])
                    best, labels = label_job.result()
            S += best
        arcs = self.candidate_arcs(sentence, encoded=encoded)
        if arcs is not None:
            keep = np.zeros(S.shape, dtype=bool)
            keep[arcs[:, 0], arcs[:, 1]] = True
            S[~keep] = -np.inf
        return S, labels

    # -- feature differences ----------------------------------------------------------

    def feature_difference(self, example: Example, output: np.ndarray,
                           labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sparse ``Phi(output, labels) - Phi(gold)`` as ``(indices, values)``.

        ``output`` may be fractional (an LP solution): each ARC row then contributes its
        label features with weight ``output[row]`` on its ``labels[row]``.
        """
        part, label = example.part_features, example.label_features
        return _kernels.feature_difference(
            part.indptr, part.indices, part.data, output - example.gold, label.indptr,
            label.indices, label.data, example.parts.block(PartType.ARC).start,
            np.asarray(output, dtype=np.float64), np.asarray(labels, dtype=np.int64),
            example.gold_labels, self.part_dim, len(self.labels))

    # -- parsing --------------------------------------------------------------------

    def label_scores(self, sentence: Sentence, arcs: np.ndarray) -> np.ndarray:
        """``(k, n_labels)`` scores of every label on each of the ``arcs`` (``(k, 2)``
        rows ``(h, m)``) of ``sentence``, from their label feature rows."""
        features = self.extractor.label_features(self.extractor.encode(sentence), arcs)
        return weigh(features, self.weights[self.part_dim:].reshape(self.label_dim,
                                                                      len(self.labels)))

    def label_names(self, heads: np.ndarray, example: Example, labels: np.ndarray) -> list[str]:
        """Label strings of the tree ``heads`` given each arc row's best label."""
        return [ROOT] + [self.labels[i] for i in labels[self.arc_rows(heads, example)]]

    @staticmethod
    def arc_rows(heads: np.ndarray, example: Example) -> np.ndarray:
        """``int64 (n,)``: the ARC row of ``example`` of each word's arc in the tree
        ``heads`` (every arc must be a candidate)."""
        return example.parts.arc_ids()[heads[1:], np.arange(1, len(heads))]


def weigh(features: sp.csr_matrix, weights: np.ndarray) -> np.ndarray:
    """``features @ weights`` (``weights``: a vector, or a matrix of a row per feature)
    in float64, by :func:`learning._kernels.rows_dot`: float32 ``weights`` (a model read
    from its file) are read as they are, where scipy would first widen all of them, 70
    million for an order-2 en_ewt model, for every sentence; the sums are scipy's, to the
    last bit."""
    matrix = weights.reshape(weights.shape[0], -1)
    out = _kernels.rows_dot(features.indptr, features.indices, features.data, matrix)
    return out[:, 0] if weights.ndim == 1 else out
