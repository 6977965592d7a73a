"""numba kernels of the second-stage labeler (:mod:`learning.relabeler`): the hashed
features of each word's arc in its tree, and the averaged perceptron over them.

A feature is a 64-bit hash of a template and its atoms (:func:`corpora._hashing.combine`);
its weights are row ``feature & (R - 1)`` of an ``(R, n_labels)`` matrix, one weight per
label (Weinberger et al. 2009), as the tagger's.
"""

from __future__ import annotations

import numba
import numpy as np

from polyparse.corpora._hashing import GOLDEN, combine, fmix64

SEED = np.uint64(0x6A09E667F3BCC908)
N_VALUES = 6
"""Columns of ``values``: lowercased form, UPOS, XPOS, FEATS, 3-letter suffix, DEPREL."""
LOWER, UPOS, XPOS, FEATS, SUFFIX, DEPREL = range(N_VALUES)
N_FIXED = 25
"""Features every word has; each child adds up to 4 and each sibling up to 3."""
PER_CHILD = 4
PER_SIBLING = 3
_ZERO = np.uint64(0)


@numba.njit(cache=True)
def _c(j, a, b):
    return combine(SEED + np.uint64(j), a, b)


@numba.njit(cache=True)
def _c4(j, a, b, c, d):
    return combine(SEED + np.uint64(j), combine(_ZERO, a, b), combine(_ZERO, c, d))


@numba.njit(cache=True)
def _set_hash(xs):
    """Hash of the set of ``xs`` (``uint64``), whatever their order and repeats."""
    h = GOLDEN
    u = np.unique(xs)
    for k in range(u.shape[0]):
        h = fmix64(h * GOLDEN ^ u[k])
    return h


@numba.njit(cache=True)
def relabel_features(sent_ptr, heads, values, nominal, function):
    """CSR ``(ptr int64 (N + 1,), features uint64)`` of each word's arc in its tree.

    ``heads`` (``int64 (N,)``) are positions within the sentence (0 the root);
    ``values`` (``uint64 (N, N_VALUES)``) the hashes of each word's atoms; ``nominal``
    and ``function`` (``bool (N,)``) whether its UPOS is nominal or a function word's.
    The features of word ``m`` with head ``h`` (McDonald, Lerman and Pereira 2006's
    second stage, plus what the tree shows): the forms, tags and FEATS of ``m`` and
    ``h`` alone and in pairs, with the side and distance of the arc; the grandparent's
    UPOS; ``h``'s DEPREL; the set of ``m``'s children's UPOS, whether one is a nominal
    left of ``m``; each child's UPOS and side, its form if a function word's, its
    DEPREL; each sibling's UPOS, side, form if a function word's, DEPREL; the number
    of nominal siblings between ``h`` and ``m``; the set of UPOS between them.
    """
    n_words = heads.shape[0]
    root = np.full(N_VALUES, fmix64(GOLDEN), dtype=np.uint64)
    none = fmix64(GOLDEN + GOLDEN)
    # children of each word, as CSR over the global positions
    n_children = np.zeros(n_words, dtype=np.int64)
    head_at = np.full(n_words, -1, dtype=np.int64)
    for s in range(sent_ptr.shape[0] - 1):
        lo = sent_ptr[s]
        for i in range(lo, sent_ptr[s + 1]):
            if heads[i] > 0:
                head_at[i] = lo + heads[i] - 1
                n_children[head_at[i]] += 1
    child_ptr = np.zeros(n_words + 1, dtype=np.int64)
    child_ptr[1:] = np.cumsum(n_children)
    children = np.empty(child_ptr[-1], dtype=np.int64)
    filled = child_ptr[:-1].copy()
    for i in range(n_words):        # in order: each word's children left to right
        if head_at[i] >= 0:
            children[filled[head_at[i]]] = i
            filled[head_at[i]] += 1
    n_root = np.zeros(sent_ptr.shape[0] - 1, dtype=np.int64)
    cap = 0
    for s in range(sent_ptr.shape[0] - 1):
        for i in range(sent_ptr[s], sent_ptr[s + 1]):
            if heads[i] == 0:
                n_root[s] += 1
    for s in range(sent_ptr.shape[0] - 1):
        for i in range(sent_ptr[s], sent_ptr[s + 1]):
            siblings = n_root[s] if head_at[i] < 0 else n_children[head_at[i]]
            cap += N_FIXED + PER_CHILD * n_children[i] + PER_SIBLING * (siblings - 1)
    out = np.empty(cap, dtype=np.uint64)
    ptr = np.zeros(n_words + 1, dtype=np.int64)
    f = 0
    for s in range(sent_ptr.shape[0] - 1):
        lo = sent_ptr[s]
        hi = sent_ptr[s + 1]
        for i in range(lo, hi):
            m = i - lo + 1
            h = heads[i]
            hv = root if h == 0 else values[lo + h - 1]
            g = -1 if h == 0 else heads[lo + h - 1]
            gu = none if g < 0 else (root[UPOS] if g == 0 else values[lo + g - 1, UPOS])
            mv = values[i]
            side = np.uint64(1) if h < m else np.uint64(2)
            dist = abs(h - m)
            bucket = np.uint64(dist if dist < 5 else (5 if dist < 10 else 10))
            pair = combine(_ZERO, hv[UPOS], mv[UPOS])
            out[f] = _c(0, _ZERO, _ZERO)
            out[f + 1] = _c(1, mv[UPOS], _ZERO)
            out[f + 2] = _c(2, mv[XPOS], _ZERO)
            out[f + 3] = _c(3, mv[LOWER], _ZERO)
            out[f + 4] = _c(4, hv[UPOS], _ZERO)
            out[f + 5] = _c(5, hv[XPOS], _ZERO)
            out[f + 6] = _c(6, hv[LOWER], _ZERO)
            out[f + 7] = _c(7, hv[UPOS], mv[UPOS])
            out[f + 8] = _c(8, hv[XPOS], mv[XPOS])
            out[f + 9] = _c(9, hv[LOWER], mv[UPOS])
            out[f + 10] = _c(10, hv[UPOS], mv[LOWER])
            out[f + 11] = _c(11, side, _ZERO)
            out[f + 12] = _c(12, side, pair)
            out[f + 13] = _c4(13, side, hv[XPOS], mv[XPOS], _ZERO)
            out[f + 14] = _c4(14, bucket, side, hv[UPOS], mv[UPOS])
            out[f + 15] = _c(15, mv[SUFFIX], mv[UPOS])
            out[f + 16] = _c4(16, gu, hv[UPOS], mv[UPOS], side)
            out[f + 17] = _c(17, mv[FEATS], _ZERO)
            out[f + 18] = _c(18, hv[FEATS], mv[UPOS])
            out[f + 19] = _c(19, hv[DEPREL], combine(_ZERO, mv[UPOS], side))
            out[f + 20] = _c4(20, hv[DEPREL], hv[UPOS], mv[UPOS], side)
            f += 21
            # the children of m
            a, b = child_ptr[i], child_ptr[i + 1]
            kids = np.empty(b - a, dtype=np.uint64)
            nominal_left = np.uint64(0)
            for q in range(a, b):
                k = children[q]
                kside = np.uint64(1) if k < i else np.uint64(2)
                kids[q - a] = values[k, UPOS]
                if nominal[k] and k < i:
                    nominal_left = np.uint64(1)
                out[f] = _c4(21, values[k, UPOS], kside, mv[UPOS], _ZERO)
                out[f + 1] = _c4(22, values[k, DEPREL], kside, mv[UPOS], _ZERO)
                f += 2
                if function[k]:
                    out[f] = _c4(23, values[k, LOWER], kside, mv[XPOS], _ZERO)
                    out[f + 1] = _c4(24, values[k, LOWER], kside, hv[UPOS], mv[UPOS])
                    f += 2
            out[f] = _c(25, _set_hash(kids), mv[UPOS])
            out[f + 1] = _c4(26, nominal_left, mv[UPOS], side, _ZERO)
            f += 2
            # the siblings of m (the other children of h)
            between = np.uint64(0)
            if h == 0:
                for k in range(lo, hi):
                    if heads[k] == 0 and k != i:
                        kside = np.uint64(1) if k < i else np.uint64(2)
                        out[f] = _c4(27, values[k, UPOS], kside, mv[UPOS], side)
                        out[f + 1] = _c4(28, values[k, DEPREL], kside, mv[UPOS], _ZERO)
                        f += 2
            else:
                p = lo + h - 1
                for q in range(child_ptr[p], child_ptr[p + 1]):
                    k = children[q]
                    if k == i:
                        continue
                    kside = np.uint64(1) if k < i else np.uint64(2)
                    out[f] = _c4(27, values[k, UPOS], kside, mv[UPOS], side)
                    out[f + 1] = _c4(28, values[k, DEPREL], kside, mv[UPOS], _ZERO)
                    f += 2
                    if function[k]:
                        out[f] = _c4(29, values[k, LOWER], kside, mv[UPOS], mv[XPOS])
                        f += 1
                    if nominal[k] and min(p, i) < k < max(p, i):
                        between += np.uint64(1)
            out[f] = _c4(30, between, side, mv[UPOS], hv[UPOS])
            if dist > 1:
                inner = values[lo + min(h, m):lo + max(h, m) - 1, UPOS]
                out[f + 1] = _c(31, _set_hash(inner), pair)
            else:
                out[f + 1] = _c(31, none, pair)
            f += 2
            ptr[i + 1] = f
    return ptr, out[:f]


@numba.njit(cache=True)
def _scores(W, rows, lo, hi, mask):
    s = np.zeros(W.shape[1])
    for k in range(lo, hi):
        s += W[rows[k] & mask]
    return s


@numba.njit(cache=True)
def scores(ptr, features, W):
    """``float64 (N, n_labels)``: every label's score at each word."""
    mask = np.uint64(W.shape[0] - 1)
    out = np.empty((ptr.shape[0] - 1, W.shape[1]))
    for i in range(ptr.shape[0] - 1):
        out[i] = _scores(W, features, ptr[i], ptr[i + 1], mask)
    return out


@numba.njit(cache=True)
def train_epoch(ptr, features, gold, order, W, U, step):
    """One epoch of the averaged multiclass perceptron (Collins 2002) over the words
    ``order`` whose ``gold`` label is known (>= 0): ``W`` the weights, ``U`` the
    step-weighted sum of the updates (the average is ``W - U / step``, Daume 2006).
    Returns ``(step, mistakes)``."""
    mask = np.uint64(W.shape[0] - 1)
    wrong = 0
    for i in order:
        y = gold[i]
        if y < 0:
            continue
        p = np.argmax(_scores(W, features, ptr[i], ptr[i + 1], mask))
        if p != y:
            wrong += 1
            for k in range(ptr[i], ptr[i + 1]):
                r = features[k] & mask
                W[r, y] += 1.0
                W[r, p] -= 1.0
                U[r, y] += step
                U[r, p] -= step
        step += 1
    return step, wrong
