"""Numba kernels: hashed feature indices of parts, driven by a template table.

A template table (built by :mod:`features.templates`) is an ``int64 (T, TABLE_WIDTH)``
array; row ``t`` reads

    tid, conjoin, n_atoms, between, (anchor, offset, field) * MAX_ATOMS

``tid`` is the template's 63-bit id; ``conjoin`` is 1 when every feature is emitted
twice, plain and conjoined with the direction and binned distance of (h, m); ``between``
is the slot of the atom anchored at the in-between word ``b`` (or -1): such a template
is instantiated once per *distinct* value of that atom over the words strictly between
h and m, in order of first occurrence from left to right.

Word atoms. An atom is the id of word field ``field`` (a row of ``EncodedSentence.ids``)
at position ``anchor + offset``, the anchors being the part's ``h``, ``m``, ``x`` index
columns (each in -1..n+1) and ``b``; positions before 0 read ``BOS``, positions after n
read ``EOS``, and every atom anchored at m reads :data:`START` when ``m == h`` (whatever
its offset): that is the start of a consecutive-sibling chain (``decoders.parts``), and
``x`` in {-1, n + 1} its end, so first-child, last-child and no-child parts have atoms
of their own (McDonald and Pereira 2006's ``STPOS``/``STWRD``).

Part atoms. The pseudo-anchor :data:`ANCHOR_ARC` reads a property of the part:

=================  ==================================================================
:data:`ARC_DIR`    its side: 1 if m > h (right), 0 if m < h; when m == h, 1 if x > h
:data:`ARC_DIST`   :func:`distance_bin` of (h, m), 7 when m == h
:data:`ARC_ORDER`  the relative order of h, m, x: ``4 [m > h] + 2 [x > h] + [x > m]``
                   (for a grandparent part it tells g-h-m chains, g-m-h zig-zags and
                   m-g-h non-projective configurations apart, in both directions)
:data:`ARC_XDIST`  :func:`distance_bin` of (m, x); 7 when m == h or x is not in 0..n
:data:`ARC_K`      valency parts only: their x column, the number of children k
:data:`ARC_LEN`    :func:`length_bin` of (h, m): the exact distance up to 10, then
                   11-20, 21-30, 31-40, >40 (TurboParser's exact and binned arc
                   lengths); 0 when m == h
:data:`ARC_BCOUNT` in a template with an in-between atom only: how many words between
                   h and m have that atom's value, 1, 2, 3 or "4 or more" (TurboParser
                   counts the verbs, punctuation and coordinations between h and m;
                   here every value of the in-between atom is counted)
=================  ==================================================================

Valency parts ``(type, h, side, k)`` (:func:`valency_features`) have no m or x word:
their templates read h-anchored words, ``ARC_DIR`` (then the side column) and ``ARC_K``
only, and are not conjoined.

Hash. ``mix(h, a) = fmix64(h ^ (a * GOLDEN))`` with ``fmix64`` the MurmurHash3
finalizer (a bijection of 64-bit words). The atoms of a template are grouped by anchor;
each group present hashes its atom values in template order,
``g_A = mix(...mix(GROUP_SEED, a_1)..., a_j)``, and the feature is

    H = mix(...mix(mix(mix(SEED, salt), tid), g_H), g_M, g_X, g_B, g_ARC)   (groups present)
    index = H & (2**bits - 1),   conjoined copy: mix(H, CONJ_BASE + 8 * dir + bin) & mask

with ``dir`` and ``bin`` the ``ARC_DIR`` and ``ARC_DIST`` values of the part. Grouping
lets the kernel hash every word-anchored group once per position and a feature then
costs one ``mix`` per group that is not the leading one. All arithmetic is unsigned
64-bit, so indices agree across processes and platforms.

Reference counting. The helpers that allocate nothing (the hashing, queueing and summing
helpers of :func:`arc_scores` and :func:`part_features`, and :func:`part_values`) are
compiled with numba's ``_nrt=False``: numba then counts no references to the arrays they
are passed. Otherwise every call, inlined or not, increments and decrements the count of
each of its arrays atomically; in the pruner's arc scores of en_ewt dev those atomic
operations took 60% of the CPU samples (``perf``), and the kernel ran about twice as fast
without them. :func:`_word_hash` and :func:`_part_hash` are also inlined (passing their
arrays costs more than their work): interleaved in one process on 1,000 en_ewt dev
sentences, arc scores took 1.16 s a pass and the features of the order-2 parts 0.27 s,
against 1.28 and 0.34 s not inlined and 2.53 and 0.30 s inlined with reference counting.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from polyparse.corpora._hashing import GOLDEN, fmix64

ANCHOR_H, ANCHOR_M, ANCHOR_X, ANCHOR_B, ANCHOR_ARC = 0, 1, 2, 3, 4
N_ANCHORS = 5
ARC_DIR, ARC_DIST, ARC_ORDER, ARC_XDIST, ARC_K, ARC_LEN, ARC_BCOUNT = 0, 1, 2, 3, 4, 5, 6
N_ARC_FIELDS = 7
MAX_BCOUNT = 4
MAX_ATOMS = 7
COL_TID, COL_CONJOIN, COL_N_ATOMS, COL_BETWEEN, COL_ATOMS = 0, 1, 2, 3, 4
TABLE_WIDTH = COL_ATOMS + 3 * MAX_ATOMS
N_DISTANCE_BINS = 8
N_LEN_BINS = 15
MEMO_ENTRIES = 1 << 14
"""Most memo entries of one template in :func:`arc_scores` (one row of weights each)."""

SEED = np.uint64(0x243F6A8885A308D3)
GROUP_SEED = np.uint64(0x13198A2E03707344)
CONJ_BASE = 1 << 20
START = 0x7FFFFFFF
"""What m-anchored atoms read when m == h; larger than every vocabulary id (int32)."""

_BOS, _EOS = 2, 3  # vocab.BOS, vocab.EOS (kernels import nothing from the package)


@njit(cache=True)
def mix(h, a):
    """Fold the non-negative integer ``a`` into the running hash ``h`` (uint64)."""
    return fmix64(h ^ (np.uint64(a) * GOLDEN))


@njit(cache=True)
def distance_bin(h, m):
    """|h - m| binned as MSTParser does: 1, 2, 3, 4, 5, 6-10, >10 -> 0..6; 0 -> 7.

    (h == m does not occur for arcs; higher-order parts such as a consecutive sibling
    (h, h, s) get their own bin.)
    """
    d = abs(h - m)
    if d == 0:
        return 7
    if d <= 5:
        return d - 1
    if d <= 10:
        return 5
    return 6


@njit(cache=True)
def length_bin(h, m):
    """|h - m| exactly up to 10, then 11-20, 21-30, 31-40, >40 -> 11..14; 0 -> 0."""
    d = abs(h - m)
    if d <= 10:
        return d
    if d <= 40:
        return 10 + (d + 9) // 10 - 1
    return 14


@njit(cache=True, _nrt=False)
def part_values(h, m, x, n, valency, out):
    """Write the part atoms (module docstring) of part ``(h, m, x)`` into ``out``
    (``int64 (N_ARC_FIELDS,)``); for a valency part ``(h, side, k)`` only ``ARC_DIR``
    and ``ARC_K``. ``ARC_BCOUNT`` depends on the in-between word and is set by the
    caller."""
    if valency:
        out[ARC_DIR] = m
        out[ARC_K] = x
        return
    if m != h:
        out[ARC_DIR] = 1 if m > h else 0
    else:
        out[ARC_DIR] = 1 if x > h else 0
    out[ARC_DIST] = distance_bin(h, m)
    out[ARC_LEN] = length_bin(h, m)
    out[ARC_ORDER] = (4 if m > h else 0) + (2 if x > h else 0) + (1 if x > m else 0)
    if m != h and 0 <= x <= n:
        out[ARC_XDIST] = distance_bin(m, x)
    else:
        out[ARC_XDIST] = N_DISTANCE_BINS - 1


@njit(cache=True)
def _pad(ids):
    """``int64 (F, n + 3)``: ``ids`` between a BOS column (position -1) and an EOS column
    (position n + 1)."""
    f, n1 = ids.shape
    out = np.empty((f, n1 + 2), dtype=np.int64)
    for i in range(f):
        out[i, 0] = _BOS
        out[i, n1 + 1] = _EOS
        for j in range(n1):
            out[i, j + 1] = ids[i, j]
    return out


@njit(cache=True)
def _group_hashes(padded, table, has):
    """``G[t, A, c]``: group hash of word anchor A of template t in column c, which is
    position ``c - 1`` for c in 0..n+2 (positions -1..n+1) and the START marker for
    ``c = n + 3``."""
    n_templates = table.shape[0]
    n_pos = padded.shape[1]  # positions -1..n+1
    last = n_pos - 2  # position n + 1, the EOS column
    groups = np.zeros((n_templates, ANCHOR_ARC, n_pos + 1), dtype=np.uint64)
    for t in range(n_templates):
        for a in range(ANCHOR_ARC):
            if not has[t, a]:
                continue
            for q in range(n_pos + 1):
                g = GROUP_SEED
                for slot in range(table[t, COL_N_ATOMS]):
                    c = COL_ATOMS + 3 * slot
                    if table[t, c] == a:
                        if q == n_pos:
                            g = mix(g, START)
                        else:
                            pos = min(max(q - 1 + table[t, c + 1], -1), last)
                            g = mix(g, padded[table[t, c + 2], pos + 1])
                groups[t, a, q] = g
    return groups


@njit(cache=True)
def _lead_hashes(table, salt, lead, groups):
    """``L[t, c]``: the hash of template t through its leading word group in column c
    (columns as in :func:`_group_hashes`)."""
    n_templates, n_cols = table.shape[0], groups.shape[2]
    seed = mix(SEED, salt)
    lead_hash = np.empty((n_templates, n_cols), dtype=np.uint64)
    for t in range(n_templates):
        tseed = mix(seed, table[t, COL_TID])
        for q in range(n_cols):
            lead_hash[t, q] = tseed if lead[t] < 0 else mix(tseed, groups[t, lead[t], q])
    return lead_hash


@njit(cache=True, inline="always", _nrt=False)
def _word_hash(t, col, lead, lead_hash, rest, n_rest, groups):
    """The hash of template t through its word groups, anchors at columns ``col``."""
    la = lead[t]
    hv = lead_hash[t, 0 if la < 0 else col[la]]
    for i in range(n_rest[t]):
        a = rest[t, i]
        hv = mix(hv, groups[t, a, col[a]])
    return hv


@njit(cache=True, inline="always", _nrt=False)
def _part_hash(t, afield, n_afield, values):
    """The group hash of template t's part atoms, read from ``values``."""
    ga = GROUP_SEED
    for i in range(n_afield[t]):
        ga = mix(ga, values[afield[t, i]])
    return ga


@njit(cache=True)
def _layout(table, valency):
    """Per template t: ``has[t, A]``, whether it has an atom anchored at A; ``lead[t]``,
    its first word anchor among h, m, x (-1 if none); ``rest[t, :n_rest[t]]``, the word
    anchors after the leading one; ``bfield[t]``, the field of its in-between atom;
    ``afield[t, :n_afield[t]]``, the fields of its part atoms in template order;
    ``bcount[t]``, whether one of them is ``ARC_BCOUNT``.

    Raises ``ValueError`` for atoms the part kind does not have (module docstring).
    """
    n_templates = table.shape[0]
    has = np.zeros((n_templates, N_ANCHORS), dtype=np.bool_)
    lead = np.full(n_templates, -1, dtype=np.int64)
    rest = np.zeros((n_templates, ANCHOR_B), dtype=np.int64)
    n_rest = np.zeros(n_templates, dtype=np.int64)
    bfield = np.full(n_templates, -1, dtype=np.int64)
    afield = np.zeros((n_templates, MAX_ATOMS), dtype=np.int64)
    n_afield = np.zeros(n_templates, dtype=np.int64)
    bcount = np.zeros(n_templates, dtype=np.bool_)
    for t in range(n_templates):
        if valency and table[t, COL_CONJOIN]:
            raise ValueError("valency templates are not conjoined")
        for slot in range(table[t, COL_N_ATOMS]):
            c = COL_ATOMS + 3 * slot
            anchor, f = table[t, c], table[t, c + 2]
            has[t, anchor] = True
            if anchor == ANCHOR_ARC:
                if valency and f != ARC_DIR and f != ARC_K:
                    raise ValueError("valency templates read arc.dir and arc.k only")
                if not valency and f == ARC_K:
                    raise ValueError("arc.k is an atom of valency parts only")
                if f == ARC_BCOUNT and table[t, COL_BETWEEN] < 0:
                    raise ValueError("arc.bcount needs an in-between atom")
                afield[t, n_afield[t]] = f
                n_afield[t] += 1
                bcount[t] |= f == ARC_BCOUNT
            elif valency and anchor != ANCHOR_H:
                raise ValueError("valency templates read words at h only")
        for a in range(ANCHOR_B):
            if has[t, a]:
                if lead[t] < 0:
                    lead[t] = a
                else:
                    rest[t, n_rest[t]] = a
                    n_rest[t] += 1
        if table[t, COL_BETWEEN] >= 0:
            bfield[t] = table[t, COL_ATOMS + 3 * table[t, COL_BETWEEN] + 2]
    return has, lead, rest, n_rest, bfield, afield, n_afield, bcount


@njit(cache=True)
def _check_rows(rows, n, valency):
    """Raise ``ValueError`` for index rows outside the documented ranges."""
    for r in range(rows.shape[0]):
        h, m, x = rows[r, 1], rows[r, 2], rows[r, 3]
        if valency:
            if h < 0 or h > n or m < 0 or m > 1 or x < 0:
                raise ValueError("valency part out of range: h in 0..n, side 0/1, k >= 0")
        elif min(h, m, x) < -1 or max(h, m, x) > n + 1:
            raise ValueError("part index out of range -1..n+1")


@njit(cache=True)
def part_features(ids, rows, table, salt, bits):
    """Hashed features of parts whose index columns are words (every type but VALENCY).

    Parameters
    ----------
    ids : int32 (F, n + 1)
        ``EncodedSentence.ids``.
    rows : int64 (k, 4)
        Part index rows ``(type, h, m, x)`` (``decoders.parts``), h, m, x in -1..n+1.
    table : int64 (T, TABLE_WIDTH)
        Template table.
    salt : int
        Non-negative hash salt of the table.
    bits : int
        Indices lie in ``[0, 2**bits)``, ``bits <= 31``.

    Returns
    -------
    indptr : int32 (k + 1,), indices : int32 (indptr[-1],)
        CSR structure. Row r lists the features template by template in table order; a
        plain feature is directly followed by its conjoined copy.

    Raises
    ------
    ValueError
        If a part's h, m or x is outside -1..n+1, or a template reads ``arc.k``, or
        ``arc.bcount`` without an in-between atom.
    """
    return _features(ids, rows, table, salt, bits, False)


@njit(cache=True)
def valency_features(ids, rows, table, salt, bits):
    """Hashed features of valency parts ``(type, h, side, k)``, h in 0..n, side 0 (left)
    or 1 (right), k >= 0; otherwise as :func:`part_features`.

    Raises ``ValueError`` for rows out of range and for templates with atoms other than
    h-anchored words, ``arc.dir`` and ``arc.k``, or conjoined.
    """
    return _features(ids, rows, table, salt, bits, True)


@njit(cache=True)
def _features(ids, rows, table, salt, bits, valency):
    """:func:`part_features` (``valency`` False) and :func:`valency_features` (True)."""
    padded = _pad(ids)
    n = ids.shape[1] - 1
    k_parts = rows.shape[0]
    n_templates = table.shape[0]
    mask = np.uint64((1 << bits) - 1)
    has, lead, rest, n_rest, bfield, afield, n_afield, bcount = _layout(table, valency)
    _check_rows(rows, n, valency)
    conjoin = table[:, COL_CONJOIN] != 0
    groups = _group_hashes(padded, table, has)

    lead_hash = _lead_hashes(table, salt, lead, groups)
    start_col = lead_hash.shape[1] - 1

    size = 1
    for t in range(n_templates):
        if bfield[t] >= 0:
            for j in range(padded.shape[1]):
                size = max(size, padded[bfield[t], j] + 1)
    mark = np.zeros(size, dtype=np.int64)
    counts = np.zeros(size, dtype=np.int64)  # occurrences between h and m (ARC_BCOUNT)
    stamp = 0

    indptr = np.empty(k_parts + 1, dtype=np.int32)
    indptr[0] = 0
    for r in range(k_parts):
        h, m = rows[r, 1], rows[r, 2]
        count = 0
        for t in range(n_templates):
            per = 2 if conjoin[t] else 1
            if bfield[t] < 0:
                count += per
                continue
            stamp += 1
            for b in range(min(h, m) + 1, max(h, m)):
                v = padded[bfield[t], b + 1]
                if mark[v] != stamp:
                    mark[v] = stamp
                    count += per
        indptr[r + 1] = indptr[r] + count

    out = np.empty(indptr[k_parts], dtype=np.int32)
    col = np.zeros(ANCHOR_B, dtype=np.int64)
    values = np.zeros(N_ARC_FIELDS, dtype=np.int64)
    for r in range(k_parts):
        h, m, x = rows[r, 1], rows[r, 2], rows[r, 3]
        part_values(h, m, x, n, valency, values)
        col[ANCHOR_H] = h + 1
        if not valency:
            col[ANCHOR_M] = start_col if m == h else m + 1
            col[ANCHOR_X] = x + 1
        conj = CONJ_BASE + N_DISTANCE_BINS * values[ARC_DIR] + values[ARC_DIST]
        k = indptr[r]
        for t in range(n_templates):
            hv = _word_hash(t, col, lead, lead_hash, rest, n_rest, groups)
            ga = _part_hash(t, afield, n_afield, values)
            if bfield[t] < 0:
                if has[t, ANCHOR_ARC]:
                    hv = mix(hv, ga)
                out[k] = np.int32(hv & mask)
                k += 1
                if conjoin[t]:
                    out[k] = np.int32(mix(hv, conj) & mask)
                    k += 1
                continue
            if bcount[t]:
                stamp += 1
                for b in range(min(h, m) + 1, max(h, m)):
                    v = padded[bfield[t], b + 1]
                    if mark[v] != stamp:
                        mark[v] = stamp
                        counts[v] = 0
                    counts[v] += 1
            stamp += 1
            for b in range(min(h, m) + 1, max(h, m)):
                v = padded[bfield[t], b + 1]
                if mark[v] == stamp:
                    continue
                mark[v] = stamp
                hb = mix(hv, groups[t, ANCHOR_B, b + 1])
                if bcount[t]:
                    values[ARC_BCOUNT] = min(counts[v], MAX_BCOUNT)
                    ga = _part_hash(t, afield, n_afield, values)
                if has[t, ANCHOR_ARC]:
                    hb = mix(hb, ga)
                out[k] = np.int32(hb & mask)
                k += 1
                if conjoin[t]:
                    out[k] = np.int32(mix(hb, conj) & mask)
                    k += 1
    return indptr, out


@njit(cache=True, nogil=True)
def arc_scores(ids, table, salt, bits, W, every):
    """Scores of every arc ``(h, m)``, features hashed and weighed in one pass.

    ``scores[h, m] = max_l sum_f W[f, l]`` over the features f of arc (h, m) (those of
    :func:`part_features` on the row ``(ARC, h, m, -1)``) and ``labels[h, m]`` the first
    l reaching the maximum; with one column (``W`` of shape ``(2**bits, 1)``) that is the
    arc's score ``F(x) w``. No feature row is kept: memory is O(n^2) for the outputs.

    Work per arc is cut in two ways. (1) For each head the modifiers are visited
    outwards from it, so the distinct in-between values (and their counts) grow by one
    word per step: an arc costs O(distinct in-between values) per in-between template
    instead of the O(|h - m|) of :func:`part_features` (O(n^3) over all arcs). (2) A
    template that reads words at h only (or none), or at m only, and of the part atoms
    at most ``arc.dir``, has the same features for every arc of a sweep (h and a side)
    or for every arc into m from one side: its weights are summed once per sweep or per
    (m, side), not per arc (the word templates of h, m and their neighbours, about two
    thirds of the arc templates, would otherwise cost a random read of ``W`` each).
    (3) Within a sweep, any other template without in-between atoms reads m only through
    its m-anchored words and ``arc.dist`` / ``arc.len``: its sum is kept per class of
    those (at most :data:`MEMO_ENTRIES` per template) and reused. (4) The sum of an
    in-between template (of the part, reading ``arc.dir`` and ``arc.bcount`` only) over
    the in-between values is kept per class of m's words too, and changes only when a
    value enters or its count grows: at most one event per word of the sweep, which
    each class applies when one of its m comes. An arc then costs O(1) amortized.
    Diagonal and column 0 are ``-inf`` (not arcs). The kernel releases the GIL, so that
    the arc and the label scores of a long sentence can be computed side by side in two
    threads (:meth:`learning.model.LinearModel.arc_scores`).

    Parameters
    ----------
    ids, table, salt, bits:
        As in :func:`part_features`.
    W : float64 (2**bits, L)
        Weights of each feature for each of L outputs.
    every : float64 (n + 1, n + 1, L), or of size 0
        Receives the sum of every output for every arc (``every[h, m, l]``), when not
        empty; entries of non-arcs are left as they are.

    Returns
    -------
    scores : float64 (n + 1, n + 1), labels : int64 (n + 1, n + 1)
    """
    padded = _pad(ids)
    n = ids.shape[1] - 1
    n_templates = table.shape[0]
    n_out = W.shape[1]
    lay = _layout(table, False)
    has, bfield, afield, n_afield, bcount = lay[0], lay[4], lay[5], lay[6], lay[7]
    groups = _group_hashes(padded, table, has)
    lead_hash = _lead_hashes(table, salt, lead=lay[1], groups=groups)
    size = 1
    for t in range(n_templates):
        if bfield[t] >= 0:
            for j in range(padded.shape[1]):
                size = max(size, padded[bfield[t], j] + 1)
    # per template: the distinct in-between values so far (a position of each), counts
    seen = np.zeros((n_templates, size), dtype=np.int64)
    distinct = np.zeros((n_templates, n + 1), dtype=np.int64)
    n_distinct = np.zeros(n_templates, dtype=np.int64)
    # where a template's features are summed: per arc, per sweep (h), per (m, side)
    where = np.zeros(n_templates, dtype=np.int64)
    for t in range(n_templates):
        only_dir = bfield[t] < 0 and table[t, COL_CONJOIN] == 0 and not has[t, ANCHOR_X]
        for i in range(n_afield[t]):
            only_dir &= afield[t, i] == ARC_DIR
        if only_dir and not has[t, ANCHOR_M]:
            where[t] = 1
        elif only_dir and not has[t, ANCHOR_H]:
            where[t] = 2
    # (3) per sweep, a template summed per arc, without in-between atoms, has the same
    # features for every m with the same m-anchored words and arc.dist / arc.len: memo
    cls = np.zeros((n_templates, n + 2), dtype=np.int64)   # m's class, by column m + 1
    memo_at = np.full(n_templates, -1, dtype=np.int64)
    n_parts = np.ones(n_templates, dtype=np.int64)
    reads_dist = np.zeros(n_templates, dtype=np.bool_)
    reads_len = np.zeros(n_templates, dtype=np.bool_)
    # (4) an in-between template reading of the part only arc.dir and arc.bcount: its sum
    # per class of m changes only when a value enters the in-between words or its count
    # (capped) grows, at most once per word of the sweep: such events are logged, and a
    # class applies those it has not seen yet when one of its m comes (``lazy``)
    lazy = np.zeros(n_templates, dtype=np.bool_)
    total = 0
    for t in range(n_templates):
        if where[t] != 0 or table[t, COL_CONJOIN] or has[t, ANCHOR_X]:
            continue
        other = False
        for i in range(n_afield[t]):
            reads_dist[t] |= afield[t, i] == ARC_DIST
            reads_len[t] |= afield[t, i] == ARC_LEN
            other |= afield[t, i] != ARC_DIR and afield[t, i] != ARC_BCOUNT
        if bfield[t] >= 0 and other:
            continue
        lazy[t] = bfield[t] >= 0
        n_parts[t] = (N_DISTANCE_BINS if reads_dist[t] else 1) * (N_LEN_BINS if reads_len[t]
                                                                 else 1)
        n_cls = _dense_ids(groups[t, ANCHOR_M, 1:n + 2], cls[t, 1:]) if has[t, ANCHOR_M] else 1
        if n_cls * n_parts[t] <= MEMO_ENTRIES:
            memo_at[t] = total
            total += n_cls * n_parts[t]
        else:
            lazy[t] = False
    memo = np.zeros((total, n_out))
    stamp = np.zeros(total, dtype=np.int64)
    synced = np.zeros(total, dtype=np.int64)
    event_at = np.zeros((n_templates, n + 1), dtype=np.int64)   # a word of the value
    event_old = np.zeros((n_templates, n + 1), dtype=np.int64)  # its count before
    n_events = np.zeros(n_templates, dtype=np.int64)
    sweep = 0

    col = np.zeros(ANCHOR_B, dtype=np.int64)
    values = np.zeros(N_ARC_FIELDS, dtype=np.int64)
    # the weight rows to add, queued while hashing and added in one loop (_flush): the
    # reads of W, which mostly miss the cache, are then independent of one another
    capacity = 2 * n_templates * (n + 3)
    q_row = np.zeros(capacity, dtype=np.uint64)
    q_dest = np.zeros(capacity, dtype=np.int64)
    q_sign = np.zeros(capacity)
    q_top = np.zeros(1, dtype=np.int64)
    queue = (q_row, q_dest, q_sign, q_top)
    by_m = np.zeros((2, n + 1, n_out))          # per (side, m): templates at m only
    for side in range(2):
        for m in range(1, n + 1):
            values[ARC_DIR] = side
            col[ANCHOR_M] = m + 1
            for t in range(n_templates):
                if where[t] == 2:
                    _queue_template(queue, -1, t, col, values, 0, table, lay, groups,
                                    lead_hash, bits, padded, distinct, n_distinct, seen)
            _flush(queue, W, by_m[side, m], memo)

    scores = np.full((n + 1, n + 1), -np.inf)
    labels = np.zeros((n + 1, n + 1), dtype=np.int64)
    acc = np.zeros(n_out)
    by_h = np.zeros(n_out)
    used = np.zeros(n_templates, dtype=np.int64)    # the memo entries of an arc
    for h in range(n + 1):
        for step in (1, -1):
            for t in range(n_templates):
                for i in range(n_distinct[t]):
                    seen[t, padded[bfield[t], distinct[t, i] + 1]] = 0
                n_distinct[t] = 0
                n_events[t] = 0
            side = 1 if step == 1 else 0
            sweep += 1
            col[ANCHOR_H] = h + 1
            col[ANCHOR_X] = 0
            values[ARC_DIR] = side
            by_h[:] = 0.0
            for t in range(n_templates):
                if where[t] == 1:
                    _queue_template(queue, -1, t, col, values, 0, table, lay, groups,
                                    lead_hash, bits, padded, distinct, n_distinct, seen)
            _flush(queue, W, by_h, memo)
            m = h + step
            while 1 <= m <= n:
                part_values(h, m, -1, n, False, values)
                col[ANCHOR_M] = m + 1
                conj = CONJ_BASE + N_DISTANCE_BINS * values[ARC_DIR] + values[ARC_DIST]
                for j in range(n_out):
                    acc[j] = by_h[j] + by_m[side, m, j]
                n_used = 0
                for t in range(n_templates):
                    if where[t] != 0:
                        continue
                    if memo_at[t] < 0:
                        _queue_template(queue, -1, t, col, values, conj, table, lay, groups,
                                        lead_hash, bits, padded, distinct, n_distinct, seen)
                        continue
                    if lazy[t]:
                        e = memo_at[t] + cls[t, m + 1]
                        if stamp[e] != sweep:
                            stamp[e] = sweep
                            synced[e] = 0
                            memo[e] = 0.0
                        if synced[e] < n_events[t]:
                            _queue_events(queue, e, t, col, values, lay, groups, lead_hash,
                                          bits, event_at, event_old, synced[e], n_events[t])
                            synced[e] = n_events[t]
                    else:
                        e = values[ARC_DIST] if reads_dist[t] else 0
                        if reads_len[t]:
                            e = e * N_LEN_BINS + values[ARC_LEN]
                        e += memo_at[t] + cls[t, m + 1] * n_parts[t]
                        if stamp[e] != sweep:
                            stamp[e] = sweep
                            memo[e] = 0.0
                            _queue_template(queue, e, t, col, values, conj, table, lay,
                                            groups, lead_hash, bits, padded, distinct,
                                            n_distinct, seen)
                    used[n_used] = e
                    n_used += 1
                _flush(queue, W, acc, memo)
                for u in range(n_used):
                    for j in range(n_out):
                        acc[j] += memo[used[u], j]
                best = 0
                for j in range(1, n_out):
                    if acc[j] > acc[best]:
                        best = j
                scores[h, m] = acc[best]
                labels[h, m] = best
                if every.size:
                    every[h, m] = acc
                # word m is between h and the next modifier of this sweep
                for t in range(n_templates):
                    if bfield[t] >= 0:
                        v = padded[bfield[t], m + 1]
                        c = seen[t, v]
                        if c == 0:
                            distinct[t, n_distinct[t]] = m
                            n_distinct[t] += 1
                        seen[t, v] += 1
                        if c == 0 or (bcount[t] and c < MAX_BCOUNT):
                            event_at[t, n_events[t]] = m
                            event_old[t, n_events[t]] = c
                            n_events[t] += 1
                m += step
    return scores, labels


@njit(cache=True, _nrt=False)
def _queue_events(queue, dest, t, col, values, lay, groups, lead_hash, bits, event_at,
                  event_old, first, stop):
    """Queue (:func:`_flush`) for ``dest`` the change of the features of in-between
    template t (anchors at ``col``) made by events ``first..stop-1`` of
    :func:`arc_scores`: a value enters the words between h and m (old count 0) or, for
    ``arc.bcount``, its count grows by one (its old feature leaves, the new one enters)."""
    has, lead, rest, n_rest, bfield, afield, n_afield, bcount = lay
    mask = np.uint64((1 << bits) - 1)
    hv = _word_hash(t, col, lead, lead_hash, rest, n_rest, groups)
    for k in range(first, stop):
        hb = mix(hv, groups[t, ANCHOR_B, event_at[t, k] + 1])
        old = event_old[t, k]
        if not has[t, ANCHOR_ARC]:
            _queue_row(queue, hb & mask, dest, 1.0)
            continue
        values[ARC_BCOUNT] = old + 1
        _queue_row(queue, mix(hb, _part_hash(t, afield, n_afield, values)) & mask, dest, 1.0)
        if bcount[t] and old > 0:
            values[ARC_BCOUNT] = old
            _queue_row(queue, mix(hb, _part_hash(t, afield, n_afield, values)) & mask, dest,
                       -1.0)


@njit(cache=True)
def _dense_ids(values, out):
    """``out[i]``: the rank of ``values[i]`` among the distinct values; their number."""
    order = np.argsort(values)
    k = -1
    for i in range(order.shape[0]):
        if i == 0 or values[order[i]] != values[order[i - 1]]:
            k += 1
        out[order[i]] = k
    return k + 1


@njit(cache=True, _nrt=False)
def _queue_template(queue, dest, t, col, values, conj, table, lay, groups, lead_hash,
                    bits, padded, distinct, n_distinct, seen):
    """Queue (:func:`_flush`) for ``dest`` the features f of template t on the part whose
    word columns are ``col`` and part atoms ``values`` (:func:`arc_scores`; in-between
    values from ``distinct`` and their counts from ``seen``)."""
    has, lead, rest, n_rest, bfield, afield, n_afield, bcount = lay
    mask = np.uint64((1 << bits) - 1)
    conjoin = table[t, COL_CONJOIN] != 0
    hv = _word_hash(t, col, lead, lead_hash, rest, n_rest, groups)
    ga = _part_hash(t, afield, n_afield, values)
    if bfield[t] < 0:
        if has[t, ANCHOR_ARC]:
            hv = mix(hv, ga)
        _queue_row(queue, hv & mask, dest, 1.0)
        if conjoin:
            _queue_row(queue, mix(hv, conj) & mask, dest, 1.0)
        return
    for i in range(n_distinct[t]):
        b = distinct[t, i]
        hb = mix(hv, groups[t, ANCHOR_B, b + 1])
        if has[t, ANCHOR_ARC]:
            if bcount[t]:
                values[ARC_BCOUNT] = min(seen[t, padded[bfield[t], b + 1]], MAX_BCOUNT)
                ga = _part_hash(t, afield, n_afield, values)
            hb = mix(hb, ga)
        _queue_row(queue, hb & mask, dest, 1.0)
        if conjoin:
            _queue_row(queue, mix(hb, conj) & mask, dest, 1.0)


@njit(cache=True, _nrt=False)
def _queue_row(queue, index, dest, sign):
    """Queue ``sign * W[index]`` for ``dest`` (:func:`_flush`)."""
    q_row, q_dest, q_sign, q_top = queue
    k = q_top[0]
    q_row[k] = index
    q_dest[k] = dest
    q_sign[k] = sign
    q_top[0] = k + 1


@njit(cache=True, _nrt=False)
def _flush(queue, W, acc, memo):
    """Add the queued rows of ``W`` (times their signs, +-1: exact) to ``acc`` (destination
    -1) or to the memo entry they name, in the order queued, and empty the queue. One
    tight loop of independent loads, which the processor overlaps: with the loads
    interleaved with the hashing, the arc scores of 600 en_ewt dev sentences took 1.4x
    as long (median 12.8 against 9.1 us per arc), their 51 label scores 1.15x."""
    q_row, q_dest, q_sign, q_top = queue
    for k in range(q_top[0]):
        index = q_row[k]
        sign = q_sign[k]
        if q_dest[k] < 0:
            for j in range(acc.shape[0]):
                acc[j] += sign * W[index, j]
        else:
            d = q_dest[k]
            for j in range(acc.shape[0]):
                memo[d, j] += sign * W[index, j]
    q_top[0] = 0
