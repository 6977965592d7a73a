"""Numba kernels of the tagger: feature hashing, first-order Viterbi, perceptron epochs.

Pure functions over numpy arrays (``docs/style.md``); :mod:`parser.text.tagger` wraps
them. Each public kernel has a plain-Python twin in ``tests/test_tagger.py``.

Hashing is 64-bit FNV-1a over UTF-8 bytes (:func:`corpora._hashing.hash_strings`), finished (and combined) with the MurmurHash3
``fmix64`` finalizer, so feature ids are the same on every machine and in every process
(unlike Python's salted ``hash``). The arithmetic wraps modulo 2^64; when the kernels run
as plain Python (``NUMBA_DISABLE_JIT=1``) callers silence numpy's overflow warnings with
``np.errstate(over="ignore")``.

A tag layer with ``T`` tags keeps its emission weights as a ``(B, T)`` matrix (row
``feature_hash & (B - 1)``) and its transition weights as a ``(T + 1, T + 1)`` matrix
whose last row and column stand for the sentence boundary: ``trans[T, t]`` scores
starting with ``t``, ``trans[t, T]`` ending with ``t``.
"""

from __future__ import annotations

import numba
import numpy as np

from polyparse.corpora._hashing import GOLDEN, M1, combine, fmix64


# Columns of the per-word-type hash table (``tagger._type_strings`` lists the strings):
# 0 the word, 1 its lowercased form, 2-5 its prefixes of 1-4 and 6-11 its suffixes of 1-6
# characters (lowercased), 12 its shape, 13 its collapsed shape, 14 its spelling flags.
FORM, LOWER, SUFFIX1, SHORT_SHAPE, FLAGS = 0, 1, 6, 13, 14
N_TYPE_HASHES = 15
CLASS_SEED = N_TYPE_HASHES  # template seed of ambiguity-class strings
CLUSTER_SEED = CLASS_SEED + 1  # template seed of the words of a word-cluster table
STEM_SEED = CLUSTER_SEED + 4  # template seed of the lemmas of the stem table (after the
# lemmatizer's three tag seeds, lemmatizer.TAG_SEEDS)
ENDING_SEED = STEM_SEED + 1  # first template seed of tagger.N_ENDING_FEATURES ending features
N_CONTEXT_FEATURES = 26
N_PAIR_FEATURES = 4
N_FEATURES = 1 + N_TYPE_HASHES + N_CONTEXT_FEATURES + N_PAIR_FEATURES
"""Columns of :func:`context_features`; the last ``N_PAIR_FEATURES`` are pair features."""
N_GROUP_FEATURES = 5
"""Columns that :func:`group_features` adds for the layers decoded after the first."""
CLUSTER_PREFIXES = (4, 6, 10, 14, 64)
"""Bit-string prefix lengths of a word's cluster features (64: the whole path)."""
NEIGHBOUR_PREFIX = 6
N_CLUSTER_FEATURES = len(CLUSTER_PREFIXES) + 2
"""Columns that :func:`cluster_features` adds when the tagger has word clusters."""
OWN_SEED = N_FEATURES + N_GROUP_FEATURES + N_CLUSTER_FEATURES
"""First template seed of the columns of :func:`own_group_features`."""
_ZERO = np.uint64(0)
_NO_CLUSTER = np.uint64(0x5851F42D4C957F2D)


@numba.njit(cache=True)
def _at(type_ids, type_hashes, lo, hi, j, column):
    """Type hash ``column`` of the word at position ``j``, or a padding constant outside
    the sentence ``[lo, hi)`` (one constant before it, another after it)."""
    if j < lo:
        return fmix64(np.uint64(column) + GOLDEN)
    if j >= hi:
        return fmix64(np.uint64(column) + M1)
    return type_hashes[type_ids[j], column]


@numba.njit(cache=True)
def _class_at(classes, lo, hi, j):
    """Ambiguity class of the word at position ``j``, or a padding constant."""
    if j < lo:
        return GOLDEN
    if j >= hi:
        return M1
    return classes[j]


@numba.njit(cache=True)
def context_features(sent_ptr, type_ids, type_hashes, classes):
    """Hashed features of every word of a corpus.

    ``sent_ptr`` ``int64 (S + 1,)`` delimits the sentences in the flat word arrays;
    ``type_ids`` ``int64 (N,)`` names each word's row of ``type_hashes``
    ``uint64 (n_types, N_TYPE_HASHES)``; ``classes`` ``uint64 (N,)`` is the hashed
    ambiguity class of each word (the tags a frequent word had in training; one constant
    for the others). Returns ``uint64 (N, N_FEATURES)`` with, for word ``0`` and its
    neighbours ``-2..+2`` (``w`` lowercased word, ``s`` 3-letter suffix, ``h`` collapsed
    shape, ``f`` spelling flags, ``c`` class):

    - a bias and the 15 type hashes of word 0 (Ratnaparkhi 1996, with suffixes up to 6
      characters);
    - ``w-2, w-1, w+1, w+2, s-1, s+1, h-1, h+1, (w-1 w0), (w0 w+1), (w-1 w+1), (s0 w-1),
      (h-1 h0 h+1)`` (Toutanova et al. 2003), and ``(w-2 w-1), (w+1 w+2)``;
    - ``c0, c-1, c+1, c-2, c+2, (c-1 c+1), (c0 c+1), (c+1 c+2), (c0 f0), (c0 c-1),
      (c0 w-1)``: classes generalize over words that can take the same tags (ambiguity
      classes, Daelemans et al. 1996), and tell about the tags further right than the
      one tag a first-order model looks ahead;
    - pair features ``c0, s0, w0, w-1``, scored together with the previous tag by
      :func:`lattice` (the lexicalized transitions of Toutanova et al. 2003).

    After the type hashes, column ``j`` is ``combine(j, a, b)`` of its atoms ``a, b``
    (``b = 0`` for a single atom; ``(h-1 h0 h+1)`` is ``(combine(0, h-1, h0), h+1)``).
    Outside the sentence, type hashes of column ``c`` become ``fmix64(c + GOLDEN)``
    before it and ``fmix64(c + M1)`` after it, classes ``GOLDEN`` and ``M1``.
    """
    n = type_ids.shape[0]
    out = np.empty((n, N_FEATURES), dtype=np.uint64)
    s3 = SUFFIX1 + 2
    k = 1 + N_TYPE_HASHES
    for s in range(sent_ptr.shape[0] - 1):
        lo = sent_ptr[s]
        hi = sent_ptr[s + 1]
        for i in range(lo, hi):
            t = type_ids[i]
            out[i, 0] = GOLDEN
            for c in range(N_TYPE_HASHES):
                out[i, 1 + c] = type_hashes[t, c]
            w0 = type_hashes[t, LOWER]
            w_2 = _at(type_ids, type_hashes, lo, hi, i - 2, LOWER)
            w2 = _at(type_ids, type_hashes, lo, hi, i + 2, LOWER)
            w_1 = _at(type_ids, type_hashes, lo, hi, i - 1, LOWER)
            w1 = _at(type_ids, type_hashes, lo, hi, i + 1, LOWER)
            h_1 = _at(type_ids, type_hashes, lo, hi, i - 1, SHORT_SHAPE)
            h1 = _at(type_ids, type_hashes, lo, hi, i + 1, SHORT_SHAPE)
            c0 = classes[i]
            c_1 = _class_at(classes, lo, hi, i - 1)
            c1 = _class_at(classes, lo, hi, i + 1)
            c2 = _class_at(classes, lo, hi, i + 2)
            atoms = (
                (w_2, _ZERO),
                (w_1, _ZERO),
                (w1, _ZERO),
                (w2, _ZERO),
                (_at(type_ids, type_hashes, lo, hi, i - 1, s3), _ZERO),
                (_at(type_ids, type_hashes, lo, hi, i + 1, s3), _ZERO),
                (h_1, _ZERO),
                (h1, _ZERO),
                (w_1, w0),
                (w0, w1),
                (w_1, w1),
                (type_hashes[t, s3], w_1),
                (combine(_ZERO, h_1, type_hashes[t, SHORT_SHAPE]), h1),
                (c0, _ZERO),
                (c_1, _ZERO),
                (c1, _ZERO),
                (_class_at(classes, lo, hi, i - 2), _ZERO),
                (c2, _ZERO),
                (c_1, c1),
                (c0, c1),
                (c1, c2),
                (c0, type_hashes[t, FLAGS]),
                (c0, c_1),
                (c0, w_1),
                (w_2, w_1),
                (w1, w2),
                # pair features (the last N_PAIR_FEATURES columns)
                (c0, _ZERO),
                (type_hashes[t, s3], _ZERO),
                (w0, _ZERO),
                (w_1, _ZERO),
            )
            for j in range(len(atoms)):
                out[i, k + j] = combine(np.uint64(k + j), atoms[j][0], atoms[j][1])
    return out


@numba.njit(cache=True)
def _insert_before_pairs(features, n_new):
    """``features`` with ``n_new`` uninitialized columns inserted before its last
    ``N_PAIR_FEATURES`` (pair) columns, and the index of the first new column."""
    n, f = features.shape
    n_emit = f - N_PAIR_FEATURES
    out = np.empty((n, f + n_new), dtype=np.uint64)
    out[:, :n_emit] = features[:, :n_emit]
    out[:, n_emit + n_new:] = features[:, n_emit:]
    return out, n_emit


@numba.njit(cache=True)
def _prefix_atom(path, length, k):
    """Atom of the first ``min(k, length)`` bits of a cluster bit string (``path``, its
    first bit in bit 0), or ``_NO_CLUSTER`` for a word without one (``length < 0``)."""
    if length < 0:
        return _NO_CLUSTER
    m = min(k, length)
    bits = path if m >= 64 else path & ((np.uint64(1) << np.uint64(m)) - np.uint64(1))
    return combine(np.uint64(m), bits, _ZERO)


@numba.njit(cache=True)
def cluster_features(sent_ptr, features, paths, lengths):
    """``features`` (``uint64 (N, F)``, its last ``N_PAIR_FEATURES`` columns pair
    features) with ``N_CLUSTER_FEATURES`` columns inserted before the pair features.

    They are the Brown-cluster features of Koo, Carreras and Collins (2008), as Turian,
    Ratinov and Bengio (2010) use them for tagging: the prefixes of ``CLUSTER_PREFIXES``
    bits of word 0's cluster bit string (the coarser clusters above it in the hierarchy;
    64: the whole string), and the ``NEIGHBOUR_PREFIX``-bit prefixes of the clusters of
    words -1 and +1. ``paths`` (``uint64 (N,)``, first bit in bit 0) and ``lengths``
    (``int64 (N,)``, -1 for a word without a cluster) give each word's bit string. The
    atom of a prefix is ``combine(m, first m bits, 0)`` with ``m = min(k, length)``, a
    constant for a word without a cluster, and ``GOLDEN`` / ``M1`` outside the sentence;
    column ``j`` is ``combine(N_FEATURES + N_GROUP_FEATURES + j, atom, 0)``.
    """
    out, first = _insert_before_pairs(features, N_CLUSTER_FEATURES)
    seed = N_FEATURES + N_GROUP_FEATURES
    for s in range(sent_ptr.shape[0] - 1):
        lo = sent_ptr[s]
        hi = sent_ptr[s + 1]
        for i in range(lo, hi):
            for j in range(len(CLUSTER_PREFIXES)):
                atom = _prefix_atom(paths[i], lengths[i], CLUSTER_PREFIXES[j])
                out[i, first + j] = combine(np.uint64(seed + j), atom, _ZERO)
            j = len(CLUSTER_PREFIXES)
            before = GOLDEN if i == lo else _prefix_atom(paths[i - 1], lengths[i - 1],
                                                          NEIGHBOUR_PREFIX)
            after = M1 if i == hi - 1 else _prefix_atom(paths[i + 1], lengths[i + 1],
                                                         NEIGHBOUR_PREFIX)
            out[i, first + j] = combine(np.uint64(seed + j), before, _ZERO)
            out[i, first + j + 1] = combine(np.uint64(seed + j + 1), after, _ZERO)
    return out


@numba.njit(cache=True)
def word_features(features, atoms):
    """``features`` (``uint64 (N, F)``, its last ``N_PAIR_FEATURES`` columns pair
    features) with the columns of ``atoms`` (``uint64 (N, E)``: hashes of each word's
    own feature strings, each column under its own seed) inserted before the pair
    features."""
    out, first = _insert_before_pairs(features, atoms.shape[1])
    out[:, first:first + atoms.shape[1]] = atoms
    return out


@numba.njit(cache=True)
def group_features(sent_ptr, features, groups):
    """``features`` (``uint64 (N, F)``, its last ``N_PAIR_FEATURES`` columns pair
    features) with ``N_GROUP_FEATURES`` columns inserted before the pair features.

    They tell the layers decoded after the first about the first layer's tags
    (``groups``, ``int64 (N,)``: UPOS ids, gold in training, predicted when tagging) of
    the neighbours, ``u-1, u+1, (u-1 u+1), (u-2 u-1), (u+1 u+2)``: an XPOS or FEATS
    value depends on the words around being, say, an AUX or a DET. Column ``j`` of them
    is ``combine(N_FEATURES + j, a, b)`` of atoms ``fmix64(u + 1)``; outside the
    sentence the atoms are ``GOLDEN`` and ``M1``.
    """
    out, first = _insert_before_pairs(features, N_GROUP_FEATURES)
    g = np.empty(groups.shape[0], dtype=np.uint64)
    for i in range(groups.shape[0]):
        g[i] = fmix64(np.uint64(groups[i] + 1))
    for s in range(sent_ptr.shape[0] - 1):
        lo = sent_ptr[s]
        hi = sent_ptr[s + 1]
        for i in range(lo, hi):
            u_2 = _class_at(g, lo, hi, i - 2)
            u_1 = _class_at(g, lo, hi, i - 1)
            u1 = _class_at(g, lo, hi, i + 1)
            u2 = _class_at(g, lo, hi, i + 2)
            atoms = ((u_1, _ZERO), (u1, _ZERO), (u_1, u1), (u_2, u_1), (u1, u2))
            for j in range(len(atoms)):
                out[i, first + j] = combine(np.uint64(N_FEATURES + j), atoms[j][0],
                                            atoms[j][1])
    return out


@numba.njit(cache=True)
def own_group_features(features, groups, columns):
    """``features`` (``uint64 (N, F)``, its last ``N_PAIR_FEATURES`` columns pair
    features) with ``columns.shape[0]`` columns inserted before the pair features: column
    ``j`` is ``combine(OWN_SEED + j, fmix64(u + 1), features[:, columns[j]])``, the word's
    own first-layer tag ``u`` (``groups``, ``int64 (N,)``) conjoined with its feature
    ``columns[j]``."""
    out, first = _insert_before_pairs(features, columns.shape[0])
    for i in range(groups.shape[0]):
        u = fmix64(np.uint64(groups[i] + 1))
        for j in range(columns.shape[0]):
            out[i, first + j] = combine(np.uint64(OWN_SEED + j), u, features[i, columns[j]])
    return out


TREE_SEED = OWN_SEED + 32
"""First template seed of the columns of :func:`tree_features` (after the own-group ones)."""
N_TREE_FEATURES = 20
"""Columns that :func:`tree_features` adds."""
SUBJECT, AUXILIARY, MARKER = 1, 2, 3
"""Kinds of dependents that :func:`tree_features` reads: a subject (``nsubj``, ``csubj``,
``expl``), an auxiliary or copula, a marker or case marker."""


@numba.njit(cache=True)
def _fold(acc, x):
    return fmix64(acc * GOLDEN ^ x)


@numba.njit(cache=True)
def tree_features(sent_ptr, heads, values, kinds):
    """``uint64 (N, N_TREE_FEATURES)``: each word's place in its dependency tree.

    ``heads`` (``int64 (N,)``) are positions within the sentence (0 the root, ``i`` its
    ``i``-th word); ``values`` (``uint64 (N, 7)``) the hashes of each word's DEPREL, UPOS,
    XPOS, lowercased form, suffixes of 2 and 3 letters and FEATS; ``kinds`` (``int64
    (N,)``) the kind of dependent its DEPREL makes it (:data:`SUBJECT`,
    :data:`AUXILIARY`, :data:`MARKER`, else 0). Column ``j`` is ``combine(TREE_SEED + j,
    a, b)`` of the atoms: its DEPREL ``d``; ``d`` with the head's UPOS, with the side of
    its head, with its own form, with the head's form and with the head's DEPREL; the
    set of its dependents' DEPRELs, alone and with its 3-letter suffix; the forms of its
    auxiliaries (alone and with that suffix) and of its markers; the form of its subject
    (its first) and its XPOS; ``d`` with the head's XPOS and that suffix; the subject's
    form with ``d`` and its 2-letter suffix; ``d`` with the head's FEATS and with the
    form of the head's subject; and the word's own UPOS, XPOS and FEATS (those of the
    first pass when a parsed sentence is tagged again: stacking). These are what the
    tree says of a word's morphology that its neighbours do not: a verb with an
    auxiliary ``to`` is infinitive, a pronoun that is an object is accusative, a verb
    agrees with its subject, an auxiliary with its head's, a conjunct takes its head's
    mood.
    """
    n_words = heads.shape[0]
    out = np.empty((n_words, N_TREE_FEATURES), dtype=np.uint64)
    none = fmix64(M1 + GOLDEN)
    root = np.full(values.shape[1], fmix64(GOLDEN), dtype=np.uint64)
    children = np.empty(n_words, dtype=np.uint64)
    subject = np.full(n_words, -1, dtype=np.int64)      # each word's first subject
    for s in range(sent_ptr.shape[0] - 1):
        lo = sent_ptr[s]
        hi = sent_ptr[s + 1]
        for j in range(lo, hi):
            if kinds[j] == SUBJECT and heads[j] > 0 and subject[lo + heads[j] - 1] < 0:
                subject[lo + heads[j] - 1] = j
        for i in range(lo, hi):
            h = heads[i]
            head = root if h == 0 else values[lo + h - 1]
            head_subj = none if h == 0 or subject[lo + h - 1] < 0 \
                else values[subject[lo + h - 1], 3]
            d = values[i, 0]
            m = 0
            aux = GOLDEN
            mark = GOLDEN
            for j in range(lo, hi):
                if heads[j] != i - lo + 1:
                    continue
                children[m] = values[j, 0]
                m += 1
                if kinds[j] == AUXILIARY:
                    aux = _fold(aux, values[j, 3])
                elif kinds[j] == MARKER:
                    mark = _fold(mark, values[j, 3])
            subj = none if subject[i] < 0 else values[subject[i], 3]
            subj_xpos = none if subject[i] < 0 else values[subject[i], 2]
            dependents = GOLDEN
            if m:
                labels = np.unique(children[:m])
                for k in range(labels.shape[0]):
                    dependents = _fold(dependents, labels[k])
            side = np.uint64(1) if h < i - lo + 1 else np.uint64(2)
            atoms = ((d, _ZERO), (head[1], d), (side, d), (dependents, _ZERO), (aux, _ZERO),
                     (mark, _ZERO), (subj, _ZERO), (d, values[i, 3]), (head[3], d),
                     (head[0], d), (subj_xpos, _ZERO), (dependents, values[i, 5]),
                     (combine(_ZERO, head[2], d), values[i, 5]), (aux, values[i, 5]),
                     (combine(_ZERO, subj, d), values[i, 4]), (head[6], d), (head_subj, d),
                     (values[i, 1], _ZERO), (values[i, 2], _ZERO), (values[i, 6], _ZERO))
            for j in range(N_TREE_FEATURES):
                out[i, j] = combine(np.uint64(TREE_SEED + j), atoms[j][0], atoms[j][1])
    return out


@numba.njit(cache=True)
def unseen_bundles(ids, groups, bundle_ptr, bundle_tags):
    """``bool (N,)``: whether the tags ``ids[i]`` (``int64 (N, L)``, one per FEATS layer)
    of word ``i`` are none of the bundles ``bundle_tags[bundle_ptr[g]:bundle_ptr[g + 1]]``
    (``int64 (n_bundles, L)``) seen in training with its first-layer tag
    ``g = groups[i]``."""
    out = np.ones(ids.shape[0], dtype=np.bool_)
    for i in range(ids.shape[0]):
        g = groups[i]
        for b in range(bundle_ptr[g], bundle_ptr[g + 1]):
            same = True
            for l in range(ids.shape[1]):
                if bundle_tags[b, l] != ids[i, l]:
                    same = False
                    break
            if same:
                out[i] = False
                break
    return out


@numba.njit(cache=True)
def best_bundles(scores, groups, bundle_ptr, bundle_tags):
    """``int64 (n,)``: for each word ``i``, the row ``b`` of ``bundle_tags`` among those of
    its first-layer tag ``groups[i]`` with the highest ``sum_l scores[i, l,
    bundle_tags[b, l]]`` (``scores`` ``(n, L, T)``: the emission score of each tag of
    each FEATS layer; the first of equals), or -1 for a group without bundles."""
    out = np.full(scores.shape[0], -1, dtype=np.int64)
    for i in range(scores.shape[0]):
        g = groups[i]
        best = -np.inf
        for b in range(bundle_ptr[g], bundle_ptr[g + 1]):
            total = 0.0
            for l in range(scores.shape[1]):
                total += scores[i, l, bundle_tags[b, l]]
            if total > best:
                best = total
                out[i] = b
    return out


@numba.njit(cache=True)
def _pair_row(h, prev_tag, mask):
    """Weight row of pair feature ``h`` (a word hash) conjoined with the previous tag."""
    return fmix64(h + np.uint64(prev_tag + 1) * GOLDEN) & mask


@numba.njit(cache=True)
def viterbi(em, edge, cand_ptr, cand):
    """Best tag sequence of one sentence under a first-order model (Viterbi 1967).

    Word ``i`` may take the tags ``cand[cand_ptr[i]:cand_ptr[i + 1]]``, with scores
    ``em`` aligned with ``cand``. ``edge`` holds, for ``i = 1..n-1`` in turn, the
    ``C_{i-1} x C_i`` row-major scores of each candidate of word ``i - 1`` followed by
    each candidate of word ``i``. Maximizes ``sum_i em(y_i) + sum_i edge(y_i-1, y_i)``;
    returns ``int64 (n,)`` tags (ties go to the first candidate).
    """
    n = cand_ptr.shape[0] - 1
    path = np.empty(n, dtype=np.int64)
    if n == 0:
        return path
    delta = em.copy()
    back = np.full(em.shape[0], -1, dtype=np.int64)
    base = 0
    for i in range(1, n):
        width = cand_ptr[i + 1] - cand_ptr[i]
        for k in range(cand_ptr[i], cand_ptr[i + 1]):
            best = -np.inf
            arg = -1
            q = base + k - cand_ptr[i]
            for j in range(cand_ptr[i - 1], cand_ptr[i]):
                v = delta[j] + edge[q]
                if v > best:
                    best = v
                    arg = j
                q += width
            delta[k] += best
            back[k] = arg
        base += (cand_ptr[i] - cand_ptr[i - 1]) * width
    arg = cand_ptr[n - 1]
    for k in range(cand_ptr[n - 1] + 1, cand_ptr[n]):
        if delta[k] > delta[arg]:
            arg = k
    for i in range(n - 1, -1, -1):
        path[i] = cand[arg]
        arg = back[arg]
    return path


@numba.njit(cache=True)
def _add_candidates(features, i, weights, mask, n_emit, tags, width, cand, em, m):
    """Append to ``cand``/``em`` (from ``m``) the tags ``tags`` of word ``i`` with their
    emission scores, keeping only the ``width`` best (stable order); returns the new end."""
    for y in tags:
        cand[m] = y
        em[m] = 0.0
        m += 1
    start = m - tags.shape[0]
    for f in range(n_emit):
        r = features[i, f] & mask
        for k in range(start, m):
            em[k] += weights[r, cand[k]]
    if m - start > width:
        best = np.argsort(-em[start:m], kind="mergesort")[:width] + start
        kept_cand = cand[best]
        kept_em = em[best]
        m = start + width
        cand[start:m] = kept_cand
        em[start:m] = kept_em
    return m


@numba.njit(cache=True)
def lattice(features, lo, hi, constraints, weights, trans, max_candidates):
    """Candidate tags and their scores for the words ``lo..hi-1``, for :func:`viterbi`.

    ``constraints = (tok_dict, dict_ptr, dict_tags, tok_group, group_ptr, group_tags)``,
    all ``int64``. A word with a tag-dictionary entry ``d = tok_dict[i] >= 0`` may take
    only the tags ``dict_tags[dict_ptr[d]:dict_ptr[d + 1]]`` seen with it in training
    (Ratnaparkhi 1996). A word in group ``g = tok_group[i] >= 0`` (its UPOS, for the
    layers decoded after UPOS) may take only the tags ``group_tags[group_ptr[g]:
    group_ptr[g + 1]]`` seen with that group in training. Both restrictions apply
    together when their intersection is not empty; else the group's alone. Finally only
    the ``max_candidates`` tags of highest emission score are kept.

    ``weights`` is ``(B, T)``, ``B`` a power of two. The emission score of tag ``y`` at
    word ``i`` is ``sum_f weights[features[i, f] & (B - 1), y]`` over all but the last
    ``N_PAIR_FEATURES`` columns of ``features`` (``uint64 (N, F)``: the columns of
    :func:`context_features`, or of :func:`group_features`); the edge score of tags
    ``(y', y)`` at words ``(i - 1, i)`` is ``trans[y', y]`` plus ``weights[r, y]``
    summed over the last ``N_PAIR_FEATURES`` columns ``h`` of word ``i``, with ``r`` the
    row of ``h`` conjoined with ``y'`` (``y' = T`` before the first word, which also scores
    ``trans[T, y]``; the last word scores ``trans[y, T]``).
    Returns ``(em, edge, cand_ptr, cand)``.
    """
    tok_dict, dict_ptr, dict_tags, tok_group, group_ptr, group_tags = constraints
    n_tags = weights.shape[1]
    mask = np.uint64(weights.shape[0] - 1)
    n_feat = features.shape[1]
    n_emit = n_feat - N_PAIR_FEATURES
    width = max(min(n_tags, max_candidates), 1)
    all_tags = np.arange(n_tags)
    allowed = np.zeros(n_tags, dtype=np.bool_)
    chosen = np.empty(n_tags, dtype=np.int64)
    cand_ptr = np.zeros(hi - lo + 1, dtype=np.int64)
    cand = np.empty((hi - lo) * n_tags, dtype=np.int64)
    em = np.empty(cand.shape[0])
    m = 0
    for i in range(lo, hi):
        g = tok_group[i]
        group = group_tags[group_ptr[g]:group_ptr[g + 1]] if g >= 0 else all_tags
        allowed[group] = True
        d = tok_dict[i]
        n_chosen = 0
        if d >= 0:
            for y in dict_tags[dict_ptr[d]:dict_ptr[d + 1]]:
                if allowed[y]:
                    chosen[n_chosen] = y
                    n_chosen += 1
        allowed[group] = False
        if n_chosen > 0:
            m = _add_candidates(features, i, weights, mask, n_emit, chosen[:n_chosen],
                                width, cand, em, m)
        else:
            m = _add_candidates(features, i, weights, mask, n_emit, group, width, cand, em, m)
        cand_ptr[i - lo + 1] = m
    n = hi - lo
    if n == 0:
        return em[:0], em[:0], cand_ptr, cand[:0]
    for k in range(cand_ptr[0], cand_ptr[1]):
        y = cand[k]
        em[k] += trans[n_tags, y]
        for f in range(n_emit, n_feat):
            em[k] += weights[_pair_row(features[lo, f], n_tags, mask), y]
    for k in range(cand_ptr[n - 1], cand_ptr[n]):
        em[k] += trans[cand[k], n_tags]
    size = 0
    for i in range(1, n):
        size += (cand_ptr[i] - cand_ptr[i - 1]) * (cand_ptr[i + 1] - cand_ptr[i])
    edge = np.empty(size)
    rows = np.empty(N_PAIR_FEATURES, dtype=np.uint64)
    q = 0
    for i in range(1, n):
        for j in range(cand_ptr[i - 1], cand_ptr[i]):
            for f in range(N_PAIR_FEATURES):
                rows[f] = _pair_row(features[lo + i, n_emit + f], cand[j], mask)
            for k in range(cand_ptr[i], cand_ptr[i + 1]):
                y = cand[k]
                s = trans[cand[j], y]
                for f in range(N_PAIR_FEATURES):
                    s += weights[rows[f], y]
                edge[q] = s
                q += 1
    return em[:m], edge, cand_ptr, cand[:m]


@numba.njit(cache=True)
def decode(features, sent_ptr, constraints, weights, trans, max_candidates):
    """Viterbi tags (``int64 (N,)``) of every sentence of a corpus; see :func:`lattice`."""
    out = np.empty(features.shape[0], dtype=np.int64)
    for s in range(sent_ptr.shape[0] - 1):
        lo = sent_ptr[s]
        hi = sent_ptr[s + 1]
        em, edge, cand_ptr, cand = lattice(features, lo, hi, constraints, weights, trans,
                                           max_candidates)
        out[lo:hi] = viterbi(em, edge, cand_ptr, cand)
    return out


@numba.njit(cache=True)
def train_epoch(features, sent_ptr, order, constraints, gold, weights, weights_sum, trans,
                trans_sum, max_candidates, margin, step):
    """One epoch of the structured perceptron (Collins 2002, fig. 1), in place.

    Sentences are visited in ``order``. Each is decoded with the current ``weights`` and
    ``trans`` (:func:`decode`); the features of the gold tags ``gold`` (``int64 (N,)``)
    are added and those of the prediction subtracted, wherever the two differ: emission
    features at the words, transition and pair features at the tag bigrams. For
    averaging, the same update times ``step`` goes into ``weights_sum`` / ``trans_sum``,
    and ``step`` grows by one per sentence, so that after the last epoch
    ``weights - weights_sum / step`` is the mean of all the weight vectors visited (the
    averaged perceptron, computed lazily: Daume III 2006, sec. 2.1.1).

    Decoding in training is cost-augmented: every candidate tag but the gold one gets
    ``margin`` added to its emission score, so the sentence is updated until its gold
    tags beat every other sequence by ``margin`` times their Hamming distance (the
    loss-augmented inference of max-margin training, Taskar et al. 2004, Tsochantaridis
    et al. 2005, inside the perceptron); ``margin = 0`` is Collins' perceptron. The
    words it counts as wrong are those of the cost-augmented prediction.
    Returns ``(step, number of words tagged wrongly)``.
    """
    mask = np.uint64(weights.shape[0] - 1)
    end = trans.shape[0] - 1
    n_feat = features.shape[1]
    n_emit = n_feat - N_PAIR_FEATURES
    n_wrong = 0
    for s in order:
        lo = sent_ptr[s]
        hi = sent_ptr[s + 1]
        em, edge, cand_ptr, cand = lattice(features, lo, hi, constraints, weights, trans,
                                           max_candidates)
        for i in range(lo, hi):
            for k in range(cand_ptr[i - lo], cand_ptr[i - lo + 1]):
                if cand[k] != gold[i]:
                    em[k] += margin
        path = viterbi(em, edge, cand_ptr, cand)
        for i in range(lo, hi):
            g = gold[i]
            p = path[i - lo]
            if g != p:
                n_wrong += 1
                for f in range(n_emit):
                    r = features[i, f] & mask
                    weights[r, g] += 1.0
                    weights_sum[r, g] += step
                    weights[r, p] -= 1.0
                    weights_sum[r, p] -= step
        for i in range(lo, hi + 1):
            g0 = gold[i - 1] if i > lo else end
            g1 = gold[i] if i < hi else end
            p0 = path[i - 1 - lo] if i > lo else end
            p1 = path[i - lo] if i < hi else end
            if g0 != p0 or g1 != p1:
                trans[g0, g1] += 1.0
                trans_sum[g0, g1] += step
                trans[p0, p1] -= 1.0
                trans_sum[p0, p1] -= step
                if i < hi:
                    for f in range(n_emit, n_feat):
                        r = _pair_row(features[i, f], g0, mask)
                        weights[r, g1] += 1.0
                        weights_sum[r, g1] += step
                        r = _pair_row(features[i, f], p0, mask)
                        weights[r, p1] -= 1.0
                        weights_sum[r, p1] -= step
        step += 1
    return step, n_wrong
