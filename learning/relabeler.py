"""The second-stage labeler: each arc's DEPREL chosen again once the tree is known.

The parser's labels are arc-factored: an arc's label is scored from the features of its
head and modifier alone (:meth:`learning.model.LinearModel.label_scores`), and decoding
keeps each arc's best label. What decides many labels lies elsewhere in the tree: a
subject is ``nsubj:pass`` when its head has an ``aux:pass`` sibling, ``iobj`` when another
object follows, a clause ``xcomp`` when it has no subject of its own and ``ccomp`` when
it has. McDonald, Lerman and Pereira (2006) label the arcs of a parsed tree in a second
stage for this reason; here the second stage is a multiclass averaged perceptron
(Collins 2002) over hashed features of each word's arc *in its tree*
(:func:`learning._relabel_kernels.relabel_features`: the words, tags and FEATS of the arc,
its grandparent, the head's DEPREL, the children's and the siblings' tags, function
words and DEPRELs), and an arc's label is the best under the sum of the two stages'
scores, each standardized over the labels of the arc
(:meth:`Relabeler.combined_scores`), so that neither stage's scale decides.

It is fitted on gold trees with the tags the pipeline gives (jackknifed), the other
words' DEPRELs gold; when parsing it reads the tree decoded and the first stage's
labels of the other words (stacking, as the second-pass tagger: Nivre and McDonald 2008,
Martins et al. 2008). Where the best labels break a UD rule that the first stage's keep,
the parser keeps the best that do not (:func:`parser.constrained.labels_under_rules`).
From raw text, the same trees, it raised LAS on en_ewt dev from 82.30 to 82.62 and MLAS
from 74.14 to 74.71 (``eval/results/peers_en_ewt_polyparse.md`` against
``peers_en_ewt.md``), and LAS by 0.00 to 2.16 and MLAS by 0.39 to 3.09 on the six other
treebanks (``eval/results/stages_relabel.md``, ``stages_relabel_tr_imst.md``,
``stages_relabel_en_gum.md``).

References
----------
- R. McDonald, K. Lerman, F. Pereira. Multilingual dependency analysis with a two-stage
  discriminative parser. CoNLL-X 2006.
- M. Collins. Discriminative training methods for hidden Markov models. EMNLP 2002.
- H. Daume III. Practical structured learning techniques for natural language
  processing. PhD thesis, USC, 2006 (lazy averaging).
- K. Weinberger et al. Feature hashing for large scale multitask learning. ICML 2009.
- J. Nivre, R. McDonald. Integrating graph-based and transition-based dependency
  parsers. ACL 2008 (stacking).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from typing import Sequence

import numpy as np

from polyparse.corpora._hashing import string_hashes
from polyparse.corpora.sentence import Sentence

from . import _relabel_kernels as K

log = logging.getLogger(__name__)

FORMAT = "polyparse-relabeler"
FORMAT_VERSION = 1
NOMINAL_UPOS = frozenset({"NOUN", "PROPN", "PRON", "NUM"})
FUNCTION_UPOS = frozenset({"ADP", "SCONJ", "PART", "AUX", "DET", "CCONJ", "PRON", "PUNCT"})
"""Words whose form is a feature where they are a child or a sibling: markers, case
markers, auxiliaries, determiners, pronouns, punctuation."""
_VALUE_SEEDS = np.arange(1, K.N_VALUES + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class RelabelerOptions:
    """The settings of a :class:`Relabeler` (stored with it in a model file).

    Attributes
    ----------
    hash_bits:
        Features are hashed into ``2**hash_bits`` rows of weights, one per label.
    epochs:
        Perceptron passes over the training words.
    """

    hash_bits: int = 18
    epochs: int = 10

    def __post_init__(self) -> None:
        for f in fields(RelabelerOptions):
            value = getattr(self, f.name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{f.name} must be a positive integer, not {value!r}")


def _encode(sentences: Sequence[Sentence]) -> tuple[np.ndarray, np.ndarray]:
    """``(ptr, features)`` of :func:`~learning._relabel_kernels.relabel_features` for the
    trees of ``sentences`` (HEAD and DEPREL as they are)."""
    words = [(form.lower(), upos, xpos, feats, form.lower()[-3:], deprel)
             for s in sentences for form, upos, xpos, feats, deprel
             in zip(s.forms[1:], s.upos[1:], s.xpos[1:], s.feats[1:], s.deprels[1:])]
    n = len(words)
    values = string_hashes([x for w in words for x in w],
                           np.tile(_VALUE_SEEDS, n)).reshape(n, K.N_VALUES)
    upos = [w[1] for w in words]
    nominal = np.fromiter((u in NOMINAL_UPOS for u in upos), dtype=bool, count=n)
    function = np.fromiter((u in FUNCTION_UPOS for u in upos), dtype=bool, count=n)
    sent_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sentences], out=sent_ptr[1:])
    heads = np.fromiter((h for s in sentences for h in s.heads[1:]), dtype=np.int64, count=n)
    with np.errstate(over="ignore"):
        return K.relabel_features(sent_ptr, heads, values, nominal, function)


def _standardized(scores: np.ndarray) -> np.ndarray:
    """Each row of ``scores`` minus its mean, over its standard deviation (rows that are
    constant: zero)."""
    centred = scores - scores.mean(axis=1, keepdims=True)
    spread = centred.std(axis=1, keepdims=True)
    return np.divide(centred, spread, out=np.zeros_like(centred), where=spread > 0)


class Relabeler:
    """Labels the arcs of parsed trees again (second stage); fit with :meth:`fit`.

    Parameters
    ----------
    labels:
        The DEPRELs, in the order of the first stage's label ids
        (:attr:`learning.model.LinearModel.labels`).
    options:
        Its :class:`RelabelerOptions`.

    Attributes
    ----------
    weights_:
        ``float32 (2**hash_bits, n_labels)``, the averaged perceptron's weights.
    history_:
        Per epoch, the training words the perceptron labelled wrongly.
    """

    def __init__(self, labels: Sequence[str],
                 options: RelabelerOptions = RelabelerOptions()) -> None:
        self.labels = list(labels)
        self.options = options

    def get_params(self) -> dict:
        return {f.name: getattr(self.options, f.name) for f in fields(RelabelerOptions)}

    def fit(self, sentences: Sequence[Sentence], *, seed: int = 0) -> "Relabeler":
        """Fit on the gold trees of ``sentences`` (their tags those the pipeline will give:
        jackknifed). Words are shuffled before each epoch by a ``numpy`` generator seeded
        with ``seed``: the same data, parameters and seed give the same weights."""
        index = {label: k for k, label in enumerate(self.labels)}
        gold = np.array([index.get(d, -1) for s in sentences for d in s.deprels[1:]],
                        dtype=np.int64)
        if not (gold >= 0).any():
            raise ValueError("no training word has one of the labels")
        ptr, features = _encode(sentences)
        W = np.zeros((1 << self.options.hash_bits, len(self.labels)))
        U = np.zeros_like(W)
        rng = np.random.default_rng(seed)
        step, self.history_ = 1.0, []
        for _ in range(self.options.epochs):
            step, wrong = K.train_epoch(ptr, features, gold, rng.permutation(gold.shape[0]),
                                        W, U, step)
            self.history_.append(int(wrong))
        self.weights_ = (W - U / step).astype(np.float32)
        log.info("relabeler: %d labels; training errors per epoch %s of %d words",
                 len(self.labels), self.history_, gold.shape[0])
        return self

    def scores(self, sentences: Sequence[Sentence]) -> np.ndarray:
        """``float64 (words, n_labels)``: the second stage's score of every label of
        every word of ``sentences``, in order, given their trees and the DEPRELs of the
        other words."""
        ptr, features = _encode(sentences)
        return K.scores(ptr, features, self.weights_)

    def combined_scores(self, parsed: Sentence, first_stage: np.ndarray) -> np.ndarray:
        """``(n, n_labels)``: the sum of both stages' standardized scores of the labels of
        each word of ``parsed`` (a labelled tree), in the first stage's units (times the
        spread of its scores of the arc, plus their mean), so that what was calibrated on
        them (:mod:`learning.confidence`) still applies; ``first_stage`` are the first
        stage's scores of its arcs."""
        second = _standardized(self.scores([parsed]))
        return first_stage + first_stage.std(axis=1, keepdims=True) * second

    # ------------------------------------------------------------------ storage

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata plus the arrays ``rows`` and ``weights`` (the non-zero rows);
        no pickle."""
        rows = np.flatnonzero(self.weights_.any(axis=1))
        meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "params": self.get_params(), "labels": self.labels, "history": self.history_}
        return meta, {"rows": rows, "weights": self.weights_[rows]}

    @classmethod
    def from_arrays(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "Relabeler":
        """The relabeler saved by :meth:`to_arrays`."""
        found = (meta.get("format"), meta.get("format_version"))
        if found != (FORMAT, FORMAT_VERSION):
            raise ValueError(f"not a {FORMAT} model of version {FORMAT_VERSION}: {found}")
        relabeler = cls(meta["labels"], RelabelerOptions(**meta["params"]))
        relabeler.history_ = list(meta["history"])
        relabeler.weights_ = np.zeros((1 << relabeler.options.hash_bits,
                                       len(relabeler.labels)), dtype=np.float32)
        relabeler.weights_[np.asarray(arrays["rows"], dtype=np.int64)] = arrays["weights"]
        return relabeler
