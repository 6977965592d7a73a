"""Numba kernels of the lemmatizer: tag features and a multiclass perceptron over edit scripts.

Pure functions over numpy arrays; :mod:`parser.text.lemmatizer` wraps them, and each
has a plain-Python twin in ``tests/test_lemmatizer.py``. Hashing reuses the tagger's
(:func:`parser.text._tagger_kernels.combine`), so the arithmetic wraps modulo 2^64 as there.

A word may take one of the lemma rules (classes) of its candidate list
``cand[cand_ptr[t]:cand_ptr[t + 1]]``, ``t`` its type, each candidate ``k`` with a small
lexicon value ``lexicon[k]`` (does the rule's result look like a known lemma). The score
of candidate ``k`` (rule ``c``, lexicon value ``v``) at word ``i`` is
``sum_f weights[combine(RULE_SEED, features[i, f], c) & (B - 1)]`` plus the weights of
``(v, c)`` and of ``(v, ANY_RULE)`` (:func:`_lexicon_key`). Features and rules are
hashed jointly into one vector of ``B`` weights (Weinberger et al. 2009), so that the
memory does not grow with the number of rules (hundreds to thousands), unlike the
tagger's ``(B, T)`` matrix.
"""

from __future__ import annotations

import numba
import numpy as np

from polyparse.corpora._hashing import GOLDEN, fmix64

from ._tagger_kernels import LOWER, SUFFIX1, combine

N_TAG_HASHES = 3
"""Columns of a tag table: hashes of the UPOS, XPOS and FEATS strings."""
PREFIX2 = 2
"""Type-hash column of the 2-letter prefix (``tagger._type_strings``)."""
TAG_FEATURE_SEED = 1000
"""Template seed of the first column of :func:`tag_features` (past the tagger's seeds)."""
N_TAG_FEATURES = 14
RULE_SEED = np.uint64(0x2545F4914F6CDD1D)
LEXICON_SEED = np.uint64(0x27BB2EE687B0B0FD)
ANY_RULE = np.uint64(0xFFFFFFFFFFFFFFFF)
"""The "rule" of the rule-independent weights of a candidate's lexicon value."""
_ZERO = np.uint64(0)


@numba.njit(cache=True)
def tag_features(features, tag_ids, tag_hashes):
    """``features`` (``uint64 (N, F)``, the tagger's, whose columns ``1..`` are the type
    hashes of each word) with ``N_TAG_FEATURES`` columns appended, on the word's own tags.

    ``tag_ids`` (``int64 (N,)``) names each word's row of ``tag_hashes``
    (``uint64 (n_tags, N_TAG_HASHES)``: ``u`` UPOS, ``x`` XPOS, ``m`` FEATS). With ``w``
    the form, ``l`` the lowercased form, ``s1..s4`` its suffixes and ``p2`` its 2-letter
    prefix, the columns are ``u, x, m, (u x), (u m), (u s1), (u s2), (u s3), (u s4),
    (m s2), (m s3), (x s3), (u l), (u p2)``: the inflection a suffix marks depends on the
    word's tags (UDPipe 1 classifies lemma rules with the tagger's features and tags,
    Straka et al. 2016). Column ``j`` is ``combine(TAG_FEATURE_SEED + j, a, b)``.
    """
    n, f = features.shape
    out = np.empty((n, f + N_TAG_FEATURES), dtype=np.uint64)
    out[:, :f] = features
    for i in range(n):
        u = tag_hashes[tag_ids[i], 0]
        x = tag_hashes[tag_ids[i], 1]
        m = tag_hashes[tag_ids[i], 2]
        s1 = features[i, 1 + SUFFIX1]
        s2 = features[i, 2 + SUFFIX1]
        s3 = features[i, 3 + SUFFIX1]
        atoms = ((u, _ZERO), (x, _ZERO), (m, _ZERO), (u, x), (u, m), (u, s1), (u, s2),
                 (u, s3), (u, features[i, 4 + SUFFIX1]), (m, s2), (m, s3), (x, s3),
                 (u, features[i, 1 + LOWER]), (u, features[i, 1 + PREFIX2]))
        for j in range(len(atoms)):
            out[i, f + j] = combine(np.uint64(TAG_FEATURE_SEED + j), atoms[j][0],
                                    atoms[j][1])
    return out


@numba.njit(cache=True)
def _keys(features, i):
    """The first half of ``combine(RULE_SEED, features[i, f], rule)`` for every ``f``,
    which does not depend on the rule (computed once per word)."""
    keys = np.empty(features.shape[1], dtype=np.uint64)
    for f in range(features.shape[1]):
        keys[f] = fmix64(RULE_SEED ^ features[i, f]) * GOLDEN
    return keys


@numba.njit(cache=True)
def _lexicon_key(lexicon):
    """The first half of the hash of a candidate's lexicon value, which is combined with
    its rule and with ``ANY_RULE`` (a weight of the value whatever the rule)."""
    return fmix64(LEXICON_SEED + np.uint64(lexicon)) * GOLDEN


@numba.njit(cache=True)
def _candidate_score(keys, rule, lexicon, weights, mask):
    """Score of candidate ``rule`` with lexicon value ``lexicon`` at a word of ``keys``."""
    s = 0.0
    for f in range(keys.shape[0]):
        s += weights[fmix64(keys[f] ^ rule) & mask]
    lex = _lexicon_key(lexicon)
    return s + weights[fmix64(lex ^ rule) & mask] + weights[fmix64(lex ^ ANY_RULE) & mask]


@numba.njit(cache=True)
def _best(keys, lo, hi, cand, lexicon, weights, mask):
    """The position in ``lo..hi-1`` of the candidate of highest score (the first on
    ties), or -1 for none."""
    best = -np.inf
    arg = -1
    for k in range(lo, hi):
        s = _candidate_score(keys, np.uint64(cand[k]), lexicon[k], weights, mask)
        if s > best:
            best = s
            arg = k
    return arg


@numba.njit(cache=True)
def classify(features, words, word_types, cand_ptr, cand, lexicon, weights):
    """The best candidate rule (``int64``; -1 for a word without candidates) of each word
    ``i`` of ``words``; ``word_types`` (``int64 (N,)``) names its candidate list."""
    mask = np.uint64(weights.shape[0] - 1)
    out = np.empty(words.shape[0], dtype=np.int64)
    for j in range(words.shape[0]):
        i = words[j]
        t = word_types[i]
        k = _best(_keys(features, i), cand_ptr[t], cand_ptr[t + 1], cand, lexicon, weights,
                  mask)
        out[j] = cand[k] if k >= 0 else -1
    return out


@numba.njit(cache=True)
def _update(keys, rule, lexicon, weights, weights_sum, mask, delta, step):
    """Add ``delta`` to the weights of candidate ``rule`` (``delta * step`` to the sums)."""
    for f in range(keys.shape[0]):
        r = fmix64(keys[f] ^ rule) & mask
        weights[r] += delta
        weights_sum[r] += delta * step
    lex = _lexicon_key(lexicon)
    for r in (fmix64(lex ^ rule) & mask, fmix64(lex ^ ANY_RULE) & mask):
        weights[r] += delta
        weights_sum[r] += delta * step


@numba.njit(cache=True)
def train_epoch(features, word_types, cand_ptr, cand, lexicon, gold, order, weights,
                weights_sum, step):
    """One epoch of the multiclass perceptron (Collins 2002), averaged lazily, in place.

    Words are visited in ``order``; each is classified among its candidates as by
    :func:`classify` and, when wrong, the weights of the gold rule ``gold[i]`` (if it
    is a candidate) gain 1 and those of the predicted one lose 1; ``weights_sum``
    gets the same update times ``step``, which grows by one per word, so that
    ``weights - weights_sum / step`` is the averaged perceptron (Daume III 2006, sec.
    2.1.1). Returns ``(step, words classified wrongly)``.
    """
    mask = np.uint64(weights.shape[0] - 1)
    n_wrong = 0
    for i in order:
        t = word_types[i]
        keys = _keys(features, i)
        p = _best(keys, cand_ptr[t], cand_ptr[t + 1], cand, lexicon, weights, mask)
        g = cand_ptr[t]
        while g < cand_ptr[t + 1] and cand[g] != gold[i]:
            g += 1
        if g < cand_ptr[t + 1] and p != g:
            n_wrong += 1
            _update(keys, np.uint64(cand[g]), lexicon[g], weights, weights_sum, mask, 1.0,
                    step)
            _update(keys, np.uint64(cand[p]), lexicon[p], weights, weights_sum, mask, -1.0,
                    step)
        step += 1
    return step, n_wrong
