"""Sentence + candidate parts -> sparse feature matrix (the F(x) of ``docs/algorithms.md``).

:class:`FeatureExtractor` encodes a sentence once (:meth:`FeatureExtractor.encode`) and
then builds, per call, a CSR matrix whose row ``r`` holds the hashed features of part
``r`` (:meth:`FeatureExtractor.part_features`) or of arc ``r`` for labeling
(:meth:`FeatureExtractor.label_features`). Every part type of
:func:`decoders.higher_order.build_parts` has templates (:mod:`features.templates`: arcs
after McDonald, Crammer, Pereira 2005, higher-order parts after Carreras 2007, Koo and
Collins 2010, McDonald and Pereira 2006, Martins, Smith, Xing 2009); the work is done by
numba kernels (:mod:`features._kernels`), one call per part-type block.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from polyparse.corpora.sentence import Sentence
from polyparse.corpora.word_clusters import ClusterTable
from polyparse.decoders.higher_order import PartsConfig
from polyparse.decoders.parts import Parts, PartType

from .templates import LABEL_TEMPLATES, PART_TEMPLATES, TEMPLATE_SETS, WITH_CLUSTERS
from .vocab import EncodedSentence, Vocabulary, cluster_rows

MAX_BITS, MAX_LABEL_BITS = 24, 21
"""The largest feature spaces that :meth:`FeatureExtractor.fit` chooses. en_ewt's training
set (12,544 sentences) and en_gum's (9,933) reach both (the headroom would give their
order-2 models 2**25 part weights); the five other treebanks stay below. On en_ewt dev
(``eval/results/feature_space_en_ewt.md``) 2**21 label rows instead of 2**20 raised the
pipeline's UAS by 0.21 and LAS by 0.15 from gold tokens, by 0.18 and 0.14 from raw text
(en_gum: 0.19 and 0.15, 0.17 and 0.14, ``feature_space_en_gum.md``), with 472 MB of
float32 weights instead of 268 MB. 2**25 part weights raised LAS by 0.24, the two together
by 0.16, but parsed 4-23% fewer words a second in the same table (its rows timed under the
same load): a parse reads the part weights at random, once per feature of every part."""
HEADROOM, LABEL_HEADROOM = 8, 1
""":meth:`FeatureExtractor.fit` gives the part features at least ``HEADROOM`` slots per
distinct feature of the gold parts (the loss-augmented predictions add the features of
wrong parts, and few features should share a weight), and the label features
``LABEL_HEADROOM``: each of their slots is a row of ``n_labels`` weights, most of them
zero, and sharing rows costs little (on the sample, 2**10 rows instead of 2**20 lose
0.1 dev LAS)."""
PROBE_BITS = 30
"""Distinct features are counted in a ``2**30`` space, where collisions are rare."""


@dataclass(frozen=True)
class FeatureConfig:
    """Feature-space settings.

    Attributes
    ----------
    bits:
        Part features are hashed into ``[0, 2**bits)`` (``1 <= bits <= 30``). ``None``:
        sized by :meth:`FeatureExtractor.fit` from the training data, the smallest power
        of two with :data:`HEADROOM` slots per distinct feature of the gold parts, at
        most ``2**MAX_BITS``.
    label_bits:
        Label features are hashed into ``[0, 2**label_bits)``; ``None``: sized like
        ``bits`` (:data:`LABEL_HEADROOM`, at most ``2**MAX_LABEL_BITS``).
    min_count:
        Forms seen fewer times in training are mapped to UNK.
    templates:
        Template set, one of :data:`features.templates.TEMPLATE_SETS` (``"full"``, or
        ``"reduced"`` for fast experiments).
    morphology:
        Every template that reads XPOS reads the fine tag refined by the word's
        morphological features, ``XPOS|FEATS``, instead (:func:`features.vocab.
        word_strings`), as the fine tags of CoNLL-X treebanks carry them. On tr_imst
        (Turkish, gold tags) at order 2 it raised dev UAS from 68.36 to 70.20 (LP) and
        from 68.45 to 70.21 (exact), LAS by 2.5 (``eval/results/frozen/orders_tr_imst_morphology.md``
        against ``orders_tr_imst_lambda1e-2.md``, the same settings otherwise).
    clusters:
        The templates also read the Brown clusters of the words (Koo, Carreras and
        Collins 2008; :data:`features.templates.WITH_CLUSTERS`): the extractor is then
        given a :class:`~corpora.word_clusters.ClusterTable`.
    """

    bits: int | None = None
    label_bits: int | None = None
    min_count: int = 1
    templates: str = "full"
    morphology: bool = False
    clusters: bool = False

    def __post_init__(self):
        for name in ("bits", "label_bits"):
            if getattr(self, name) is not None and not 1 <= getattr(self, name) <= 30:
                raise ValueError(f"{name} must be in 1..30 (int32 column indices)")
        if self.min_count < 1:
            raise ValueError("min_count must be >= 1")
        if self.templates not in TEMPLATE_SETS:
            raise ValueError(f"templates must be one of {TEMPLATE_SETS}")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "FeatureConfig":
        return cls(**d)


class FeatureExtractor:
    """Hashed features of parts and of labeled arcs.

    Parameters
    ----------
    config:
        Feature-space settings.
    vocab:
        A fitted vocabulary; if ``None``, call :meth:`fit` before encoding.
    clusters:
        The word clusters that the templates read when ``config.clusters``; stored
        with the model (:mod:`parser.parser_file`), not in :meth:`to_json`.

    Attributes
    ----------
    vocab_:
        The :class:`~features.vocab.Vocabulary` (``None`` until fitted).
    """

    def __init__(self, config: FeatureConfig = FeatureConfig(), vocab: Vocabulary | None = None,
                 clusters: ClusterTable | None = None):
        if config.clusters and clusters is None:
            raise ValueError("FeatureConfig.clusters: the extractor needs the word clusters")
        self.config = config
        self.vocab_ = vocab
        self.clusters = clusters if config.clusters else None

    @property
    def template_set(self) -> str:
        """The name of the templates used: ``config.templates``, with the cluster
        templates if ``config.clusters``."""
        return self.config.templates + (WITH_CLUSTERS if self.config.clusters else "")

    @property
    def n_features(self) -> int:
        """Columns of :meth:`part_features`, ``2**bits``."""
        return 1 << self._bits("bits")

    @property
    def n_label_features(self) -> int:
        """Columns of :meth:`label_features`, ``2**label_bits``."""
        return 1 << self._bits("label_bits")

    def _bits(self, name: str) -> int:
        bits = getattr(self.config, name)
        if bits is None:
            raise RuntimeError(f"{name} is not sized yet: call fit() or give it")
        return bits

    def fit(self, sentences: Sequence[Sentence], *, parts: PartsConfig = PartsConfig()
            ) -> "FeatureExtractor":
        """Build the vocabulary from training sentences (gold trees) and size the
        feature spaces left at ``None`` (:class:`FeatureConfig`) from the distinct
        features of their gold parts; ``parts``: the parts the model will score."""
        self.vocab_ = Vocabulary.fit(sentences, min_count=self.config.min_count,
                                     morphology=self.config.morphology)
        if self.config.bits is None or self.config.label_bits is None:
            n_parts, n_labels = self.distinct_gold_features(sentences, parts)
            self.config = replace(
                self.config,
                bits=self.config.bits or _sized(n_parts, HEADROOM, MAX_BITS),
                label_bits=self.config.label_bits or _sized(n_labels, LABEL_HEADROOM,
                                                            MAX_LABEL_BITS))
        return self

    def distinct_gold_features(self, sentences: Sequence[Sentence], parts: PartsConfig,
                               chunk: int = 2000) -> tuple[int, int]:
        """Numbers of distinct part features of the gold parts (of the part types of
        ``parts``) and of distinct label features of the gold arcs of
        ``sentences``, counted in a ``2**PROBE_BITS`` space."""
        probe = FeatureExtractor(replace(self.config, bits=PROBE_BITS, label_bits=PROBE_BITS),
                                 self.vocab_, self.clusters)
        seen = [np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)]
        for first in range(0, len(sentences), chunk):
            found = [[seen[0]], [seen[1]]]
            for sentence in sentences[first:first + chunk]:
                n = len(sentence)
                gold = parts.build(n, np.stack([sentence.heads[1:], np.arange(1, n + 1)], 1))
                encoded = probe.encode(sentence)
                found[0].append(probe.part_features(encoded, gold).indices)
                found[1].append(probe.label_features(encoded, gold.arcs).indices)
            seen = [np.unique(np.concatenate(f)) for f in found]
            if (_sized(seen[0].size, HEADROOM, MAX_BITS) == MAX_BITS
                    and _sized(seen[1].size, LABEL_HEADROOM, MAX_LABEL_BITS) == MAX_LABEL_BITS):
                break   # both spaces are as large as they get: more sentences change nothing
        return seen[0].size, seen[1].size

    def encode(self, sentence: Sentence) -> EncodedSentence:
        """Integer ids of the sentence's words (do it once per sentence and keep it)."""
        if self.vocab_ is None:
            raise RuntimeError("FeatureExtractor is not fitted: call fit() or pass a vocab")
        encoded = self.vocab_.encode(sentence, self.config.morphology)
        if self.clusters is None:
            return encoded
        rows = cluster_rows(*self.clusters.lookup(list(sentence.forms[1:])))
        return EncodedSentence(np.ascontiguousarray(np.concatenate([encoded.ids, rows])))

    def part_features(self, encoded: EncodedSentence, parts: Parts) -> sp.csr_matrix:
        """``(len(parts), 2**bits)`` CSR matrix, row ``r`` = features of part ``r``.

        Data are 1.0; column indices within a row are in template order (unsorted) and
        repeat only where two features collide in the hash; a repeat counts twice in
        ``F @ w`` and ``F.T @ v``, as a feature count should. Raises
        ``NotImplementedError`` for a part type without templates and ``ValueError`` for
        parts that do not belong to a sentence of ``len(encoded)`` words.
        """
        if parts.n != len(encoded):
            raise ValueError(f"parts are for n = {parts.n}, sentence has {len(encoded)} words")
        blocks = sorted(((s.start, s.stop, t) for t, s in parts.offsets.items()
                         if s.stop > s.start))
        if sum(stop - start for start, stop, _ in blocks) != len(parts):
            raise ValueError("part-type blocks do not cover the parts")
        indptrs, indices = [np.zeros(1, dtype=np.int32)], []
        for start, stop, part_type in blocks:
            templates = PART_TEMPLATES.get(PartType(part_type))
            if templates is None:
                raise NotImplementedError(f"no feature templates for {PartType(part_type).name}")
            indptr, idx = templates.features(encoded.ids, parts.index[start:stop],
                                             self.template_set, self._bits("bits"))
            indptrs.append(indptr[1:] + indptrs[-1][-1])
            indices.append(idx)
        if len(indices) == 1:
            return _csr(indptr, indices[0], self.n_features)
        indices = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int32)
        return _csr(np.concatenate(indptrs), indices, self.n_features)

    def label_features(self, encoded: EncodedSentence, arcs: np.ndarray) -> sp.csr_matrix:
        """``(len(arcs), 2**label_bits)`` CSR matrix of the labeling features of ``(h, m)`` arcs.

        Not conjoined with any label: the parser multiplies it by a dense
        ``(2**label_bits, n_labels)`` weight matrix.
        """
        arcs = np.asarray(arcs, dtype=np.int64).reshape(-1, 2)
        rows = np.empty((arcs.shape[0], 4), dtype=np.int64)
        rows[:, 0] = PartType.ARC
        rows[:, 1:3] = arcs
        rows[:, 3] = -1
        indptr, indices = LABEL_TEMPLATES.features(encoded.ids, rows, self.template_set,
                                                   self._bits("label_bits"))
        return _csr(indptr, indices, self.n_label_features)

    def arc_scores(self, encoded: EncodedSentence, weights: np.ndarray) -> np.ndarray:
        """``(n + 1, n + 1)`` matrix of ``part_features(encoded, arc_parts(n)) @ weights``
        (``-inf`` on the diagonal and in column 0), computed without the feature rows of
        the ``n^2`` arcs (:func:`features._kernels.arc_scores`): O(n^2) memory."""
        table = PART_TEMPLATES[PartType.ARC]
        scores, _ = table.arc_scores(encoded.ids, self.template_set, self.config.bits,
                                     real_weights(weights).reshape(-1, 1))
        return scores

    def best_label_scores(self, encoded: EncodedSentence, label_weights: np.ndarray,
                          every: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, labels)``, both ``(n + 1, n + 1)``: for every arc the best label id
        under ``label_features(encoded, arcs) @ label_weights`` and its score, computed
        without the feature rows of the ``n^2`` arcs; ``every`` (``float64 (n + 1, n + 1,
        n_labels)``), if given, receives the score of every label of every arc."""
        return LABEL_TEMPLATES.arc_scores(encoded.ids, self.template_set,
                                          self.config.label_bits,
                                          np.ascontiguousarray(real_weights(label_weights)),
                                          every)

    def to_json(self) -> dict:
        """``{"config": ..., "vocab": ...}``: plain JSON, no pickle."""
        return {"config": self.config.to_json(),
                "vocab": None if self.vocab_ is None else self.vocab_.to_json()}

    @classmethod
    def from_json(cls, d: dict, clusters: ClusterTable | None = None) -> "FeatureExtractor":
        """The extractor of :meth:`to_json`, with its word ``clusters`` if it reads
        them."""
        vocab = None if d["vocab"] is None else Vocabulary.from_json(d["vocab"])
        return cls(FeatureConfig.from_json(d["config"]), vocab, clusters)


def _sized(distinct: int, headroom: int, max_bits: int) -> int:
    """The smallest ``bits`` with ``2**bits >= headroom * distinct``, in 1..max_bits."""
    return min(max_bits, max(1, (headroom * distinct - 1).bit_length()))


def _csr(indptr: np.ndarray, indices: np.ndarray, n_columns: int) -> sp.csr_matrix:
    data = np.ones(indices.shape[0], dtype=np.float64)
    return sp.csr_matrix((data, indices, indptr), shape=(indptr.shape[0] - 1, n_columns))


def real_weights(weights: np.ndarray) -> np.ndarray:
    """``weights`` as they are when float32 or float64, else as float64. A model read from
    its file holds float32 weights (as the file stores them): the kernels read them as
    they are, without a float64 copy of the whole vector per sentence, and add them up in
    float64, so the scores are those of the same weights in float64 to the last bit."""
    weights = np.asarray(weights)
    return weights if weights.dtype in (np.float32, np.float64) else weights.astype(np.float64)
