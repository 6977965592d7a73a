"""Integer ids for the word-level atoms that feature templates combine.

A :class:`Vocabulary` is fit once on training sentences and frozen afterwards. It maps
each word to one id per *field* (:data:`FIELDS`): lowercased form, lemma, UPOS, XPOS,
5-character prefix and 3-character suffix of the lowercased form, and a coarse word
shape. Ids ``0..3`` of every field are reserved (:data:`UNK`, :data:`ROOT_ID`,
:data:`BOS`, :data:`EOS`); known strings start at :data:`N_SPECIAL`. The root (index 0
of a :class:`~corpora.sentence.Sentence`) gets :data:`ROOT_ID` in every field, and
positions before the root / after the last word (the padding of surrounding-word
templates) get :data:`BOS` / :data:`EOS` inside the kernels.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

import numpy as np

from polyparse.corpora._hashing import GOLDEN, M1
from polyparse.corpora.sentence import Sentence

FIELDS = ("form", "lemma", "upos", "xpos", "prefix", "suffix", "shape")
"""Rows of :attr:`EncodedSentence.ids`, in this order: the string fields of a
:class:`Vocabulary`."""

CLUSTER_FIELDS = ("cluster4", "cluster6", "cluster")
"""Rows after :data:`FIELDS` when the feature extractor has Brown word clusters
(:func:`cluster_rows`): the 4- and 6-bit prefixes of a word's bit string and the whole
string, Koo, Carreras and Collins (2008)'s ``c4``, ``c6`` and ``c*``."""
CLUSTER_PREFIXES = (4, 6)

FIELD_INDEX = {name: i for i, name in enumerate(FIELDS + CLUSTER_FIELDS)}

UNK, ROOT_ID, BOS, EOS = 0, 1, 2, 3
N_SPECIAL = 4

PREFIX_LENGTH = 5
SUFFIX_LENGTH = 3


@lru_cache(maxsize=1 << 16)
def word_shape(form: str) -> str:
    """Coarse shape: ``X`` upper, ``x`` lower, ``d`` digit, ``p`` other; runs collapsed.

    >>> word_shape("McDonald"), word_shape("1,000"), word_shape("U.S.")
    ('XxXx', 'dpd', 'XpXp')
    """
    out = []
    for ch in form:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else "p"
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def word_strings(sentence: Sentence, morphology: bool = False) -> tuple[list[str], ...]:
    """The strings of every field (:data:`FIELDS` order) of words ``1..n``, root excluded.

    With ``morphology`` the ``xpos`` field holds the fine tag refined by the
    morphological features, ``XPOS|FEATS`` (CoNLL-X's FEATS column, as the fine tags
    of MSTParser and TurboParser carry them; ``FeatureConfig.morphology``)."""
    lower = [f.lower() for f in sentence.forms[1:]]
    xpos = list(sentence.xpos[1:])
    if morphology:
        xpos = [f"{x}|{feats}" for x, feats in zip(xpos, sentence.feats[1:])]
    return (
        lower,
        list(sentence.lemmas[1:]),
        list(sentence.upos[1:]),
        xpos,
        [w[:PREFIX_LENGTH] for w in lower],
        [w[-SUFFIX_LENGTH:] for w in lower],
        [word_shape(f) for f in sentence.forms[1:]],
    )


def cluster_rows(paths: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``int32 (len(CLUSTER_FIELDS), n + 1)``: the :data:`CLUSTER_FIELDS` ids of words
    ``1..n`` whose clusters are ``paths``, ``lengths`` (``corpora.word_clusters.
    ClusterTable.lookup``), column 0 the root's :data:`ROOT_ID`.

    A ``k``-bit prefix is the id ``N_SPECIAL + (2**l | path & (2**l - 1))``, ``l =
    min(k, length)``: the leading 1 tells a short string ``01`` from the prefix ``0100``
    of a longer one. The whole string, up to 64 bits, is hashed (Fibonacci hashing of
    the path plus its length, then the first two xor-shift and multiply rounds of
    MurmurHash3's finalizer, as numpy arrays) into ``N_SPECIAL .. 2**31 - 2``, the ids
    that model files since the cluster features hold: a treebank's words fall into a few
    thousand clusters, which two share a hash by chance about once in a thousand
    clusterings. A word without a cluster is :data:`UNK` in every row.
    """
    n = paths.shape[0]
    rows = np.empty((len(CLUSTER_FIELDS), n + 1), dtype=np.int32)
    rows[:, 0] = ROOT_ID
    found = lengths >= 0
    for row, k in zip(rows, CLUSTER_PREFIXES):
        bits = np.minimum(lengths, k).clip(0).astype(np.uint64)
        code = (np.uint64(1) << bits) | (paths & ((np.uint64(1) << bits) - np.uint64(1)))
        row[1:] = np.where(found, N_SPECIAL + code.astype(np.int64), UNK)
    with np.errstate(over="ignore"):
        h = paths * GOLDEN + lengths.astype(np.uint64)
        h ^= h >> np.uint64(33)
        h *= M1
        h ^= h >> np.uint64(33)
    whole = N_SPECIAL + (h % np.uint64(2**31 - 1 - N_SPECIAL)).astype(np.int64)
    rows[-1, 1:] = np.where(found, whole, UNK)
    return rows


@dataclass(frozen=True)
class EncodedSentence:
    """A sentence as integer ids: ``ids[f, i]`` is the id of field ``FIELDS[f]`` of word ``i``.

    ``ids`` is ``int32 (len(FIELDS), n + 1)``, C-contiguous, column 0 the root; with word
    clusters, the :data:`CLUSTER_FIELDS` rows follow (:func:`cluster_rows`).
    Each field is also available as an ``int32 (n + 1,)`` row view (``.form``, ``.upos``, ...).
    """

    ids: np.ndarray

    def __len__(self) -> int:
        """Number of words ``n`` (the root excluded)."""
        return self.ids.shape[1] - 1

    @property
    def form(self) -> np.ndarray:
        return self.ids[0]

    @property
    def lemma(self) -> np.ndarray:
        return self.ids[1]

    @property
    def upos(self) -> np.ndarray:
        return self.ids[2]

    @property
    def xpos(self) -> np.ndarray:
        return self.ids[3]

    @property
    def prefix(self) -> np.ndarray:
        return self.ids[4]

    @property
    def suffix(self) -> np.ndarray:
        return self.ids[5]

    @property
    def shape(self) -> np.ndarray:
        return self.ids[6]


class Vocabulary:
    """Frozen string-to-id maps, one per field of :data:`FIELDS`.

    Parameters
    ----------
    strings:
        ``{field: [known strings]}`` for every field; the string at position ``j`` gets id
        ``N_SPECIAL + j``. Build it with :meth:`fit` or :meth:`from_json`.
    """

    def __init__(self, strings: dict[str, list[str]]):
        missing = set(FIELDS) - set(strings)
        if missing:
            raise ValueError(f"vocabulary lacks fields {sorted(missing)}")
        self._strings = {f: tuple(strings[f]) for f in FIELDS}
        self._ids = []
        for f in FIELDS:
            ids = {s: N_SPECIAL + j for j, s in enumerate(self._strings[f])}
            if len(ids) != len(self._strings[f]):
                raise ValueError(f"duplicate strings in field {f!r}")
            self._ids.append(ids)

    @classmethod
    def fit(cls, sentences: Iterable[Sentence], min_count: int = 1,
            morphology: bool = False) -> "Vocabulary":
        """Collect the strings of ``sentences``; forms seen fewer than ``min_count`` times
        stay UNK; ``morphology``: as in :func:`word_strings`.

        Ids are assigned by decreasing frequency (ties: first occurrence), so the result
        is deterministic for a given corpus.
        """
        if min_count < 1:
            raise ValueError("min_count must be >= 1")
        counts = [Counter() for _ in FIELDS]
        for sentence in sentences:
            for counter, values in zip(counts, word_strings(sentence, morphology)):
                counter.update(values)
        strings = {}
        for f, counter in zip(FIELDS, counts):
            threshold = min_count if f == "form" else 1
            strings[f] = [s for s, c in counter.most_common() if c >= threshold]
        return cls(strings)

    def size(self, field: str) -> int:
        """Number of ids of ``field``, the reserved ones included."""
        return N_SPECIAL + len(self._strings[field])

    def id(self, field: str, string: str) -> int:
        """The id of ``string`` in ``field`` (:data:`UNK` when unseen)."""
        return self._ids[FIELD_INDEX[field]].get(string, UNK)

    def string(self, field: str, id_: int) -> str:
        """Inverse of :meth:`id` for known strings; reserved ids give ``"<unk>"`` etc."""
        if id_ < N_SPECIAL:
            return ("<unk>", "<root>", "<bos>", "<eos>")[id_]
        return self._strings[field][id_ - N_SPECIAL]

    def encode(self, sentence: Sentence, morphology: bool = False) -> EncodedSentence:
        """Ids of every field of every word; column 0 (the root) is :data:`ROOT_ID`;
        ``morphology``: as in :func:`word_strings` (as the vocabulary was fit)."""
        n = len(sentence)
        ids = np.empty((len(FIELDS), n + 1), dtype=np.int32)
        ids[:, 0] = ROOT_ID
        for row, table, values in zip(ids, self._ids, word_strings(sentence, morphology)):
            get = table.get
            row[1:] = [get(s, UNK) for s in values]
        return EncodedSentence(ids)

    def to_json(self) -> dict:
        """``{"fields": [...], "strings": {field: [str, ...]}}``: plain JSON, no pickle."""
        return {"fields": list(FIELDS), "strings": {f: list(self._strings[f]) for f in FIELDS}}

    @classmethod
    def from_json(cls, d: dict) -> "Vocabulary":
        if list(d["fields"]) != list(FIELDS):
            raise ValueError(f"vocabulary fields {d['fields']} differ from {list(FIELDS)}")
        return cls({f: list(d["strings"][f]) for f in FIELDS})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self._strings == other._strings

    def __repr__(self) -> str:
        sizes = ", ".join(f"{f}={self.size(f)}" for f in FIELDS)
        return f"Vocabulary({sizes})"
