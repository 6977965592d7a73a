"""Numba kernels: hashed feature indices of parts, driven by a template table.

A template table (built by :mod:`features.templates`) is an ``int64 (T, TABLE_WIDTH)``
array; row ``t`` reads

    tid, conjoin, n_atoms, between, (anchor, offset, field) * MAX_ATOMS

``tid`` is the template's 63-bit id; ``conjoin`` is 1 when every feature is emitted
twice, plain and conjoined with the direction and binned distance of (h, m); ``between``
is the slot of the atom anchored at the in-between word ``b`` (or -1): such a template
is instantiated once per *distinct* value of that atom over the words strictly between
h and m, in order of first occurrence from left to right. An atom is the id of word
field ``field`` (a row of ``EncodedSentence.ids``) at position ``anchor + offset``, the
anchors being the part's ``h``, ``m``, ``x`` index columns (each in -1..n+1) and ``b``;
positions before 0 read ``BOS``, positions after n read ``EOS``. The pseudo-anchor
:data:`ANCHOR_ARC` reads the direction (field :data:`ARC_DIR`: 0 left, 1 right) or the
distance bin (:data:`ARC_DIST`, :func:`distance_bin`) of (h, m).

Hash. ``mix(h, a) = fmix64(h ^ (a * GOLDEN))`` with ``fmix64`` the MurmurHash3
finalizer (a bijection of 64-bit words). The atoms of a template are grouped by anchor;
each group present hashes its atom values in template order,
``g_A = mix(...mix(GROUP_SEED, a_1)..., a_j)``, and the feature is

    H = mix(...mix(mix(mix(SEED, salt), tid), g_H), g_M, g_X, g_B, g_ARC)   (groups present)
    index = H & (2**bits - 1),   conjoined copy: mix(H, CONJ_BASE + 8 * dir + bin) & mask

Grouping lets the kernel hash every word-anchored group once per position and a feature
then costs one ``mix`` per group that is not the leading one. All arithmetic is unsigned
64-bit, so indices agree across processes and platforms.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ANCHOR_H, ANCHOR_M, ANCHOR_X, ANCHOR_B, ANCHOR_ARC = 0, 1, 2, 3, 4
N_ANCHORS = 5
ARC_DIR, ARC_DIST = 0, 1
MAX_ATOMS = 4
COL_TID, COL_CONJOIN, COL_N_ATOMS, COL_BETWEEN, COL_ATOMS = 0, 1, 2, 3, 4
TABLE_WIDTH = COL_ATOMS + 3 * MAX_ATOMS
N_DISTANCE_BINS = 8
N_ARC_CODES = 2 * N_DISTANCE_BINS

SEED = np.uint64(0x243F6A8885A308D3)
GROUP_SEED = np.uint64(0x13198A2E03707344)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
CONJ_BASE = 1 << 20
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)

_BOS, _EOS = 2, 3  # vocab.BOS, vocab.EOS (kernels import nothing from the package)


@njit(cache=True)
def fmix64(k):
    """MurmurHash3's 64-bit finalizer (uint64 -> uint64, a bijection)."""
    k ^= k >> _S33
    k *= _C1
    k ^= k >> _S33
    k *= _C2
    k ^= k >> _S33
    return k


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
    """``G[t, A, p + 1]``: group hash of anchor A of template t at position p in -1..n+1,
    and ``ARC[t, code]``: the ARC group's hash for each direction/distance code."""
    n_templates = table.shape[0]
    n_pos = padded.shape[1]  # positions -1..n+1
    last = n_pos - 2  # position n + 1, the EOS column
    groups = np.zeros((n_templates, ANCHOR_ARC, n_pos), dtype=np.uint64)
    arc = np.zeros((n_templates, N_ARC_CODES), dtype=np.uint64)
    for t in range(n_templates):
        for a in range(ANCHOR_ARC):
            if not has[t, a]:
                continue
            for q in range(n_pos):
                g = GROUP_SEED
                for slot in range(table[t, COL_N_ATOMS]):
                    c = COL_ATOMS + 3 * slot
                    if table[t, c] == a:
                        pos = min(max(q - 1 + table[t, c + 1], -1), last)
                        g = mix(g, padded[table[t, c + 2], pos + 1])
                groups[t, a, q] = g
        for code in range(N_ARC_CODES):
            g = GROUP_SEED
            for slot in range(table[t, COL_N_ATOMS]):
                c = COL_ATOMS + 3 * slot
                if table[t, c] == ANCHOR_ARC:
                    if table[t, c + 2] == ARC_DIR:
                        g = mix(g, code // N_DISTANCE_BINS)
                    else:
                        g = mix(g, code % N_DISTANCE_BINS)
            arc[t, code] = g
    return groups, arc


@njit(cache=True)
def _layout(table):
    """Per template t: ``has[t, A]``, whether it has an atom anchored at A; ``lead[t]``,
    its first word anchor among h, m, x (-1 if none); ``rest[t, :n_rest[t]]``, the word
    anchors after the leading one; ``bfield[t]``, the field of its in-between atom."""
    n_templates = table.shape[0]
    has = np.zeros((n_templates, N_ANCHORS), dtype=np.bool_)
    lead = np.full(n_templates, -1, dtype=np.int64)
    rest = np.zeros((n_templates, ANCHOR_B), dtype=np.int64)
    n_rest = np.zeros(n_templates, dtype=np.int64)
    bfield = np.full(n_templates, -1, dtype=np.int64)
    for t in range(n_templates):
        for slot in range(table[t, COL_N_ATOMS]):
            has[t, table[t, COL_ATOMS + 3 * slot]] = True
        for a in range(ANCHOR_B):
            if has[t, a]:
                if lead[t] < 0:
                    lead[t] = a
                else:
                    rest[t, n_rest[t]] = a
                    n_rest[t] += 1
        if table[t, COL_BETWEEN] >= 0:
            bfield[t] = table[t, COL_ATOMS + 3 * table[t, COL_BETWEEN] + 2]
    return has, lead, rest, n_rest, bfield


@njit(cache=True)
def part_features(ids, rows, table, salt, bits):
    """Hashed features of parts.

    Parameters
    ----------
    ids : int32 (F, n + 1)
        ``EncodedSentence.ids``.
    rows : int64 (k, 4)
        Part index rows ``(type, h, m, x)`` (``decoders.parts``), h, m, x in -1..n+1;
        direction and distance are those of (h, m).
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
        If a part's h, m or x is outside -1..n+1.
    """
    padded = _pad(ids)
    k_parts = rows.shape[0]
    n_templates = table.shape[0]
    mask = np.uint64((1 << bits) - 1)
    has, lead, rest, n_rest, bfield = _layout(table)
    conjoin = table[:, COL_CONJOIN] != 0
    groups, arc = _group_hashes(padded, table, has)

    seed = mix(SEED, salt)
    n_pos = padded.shape[1]
    # lead_hash[t, p + 1]: the hash through template t's leading word group at position p
    lead_hash = np.empty((n_templates, n_pos), dtype=np.uint64)
    for t in range(n_templates):
        tseed = mix(seed, table[t, COL_TID])
        for q in range(n_pos):
            lead_hash[t, q] = tseed if lead[t] < 0 else mix(tseed, groups[t, lead[t], q])

    size = 1
    for t in range(n_templates):
        if bfield[t] >= 0:
            for j in range(padded.shape[1]):
                size = max(size, padded[bfield[t], j] + 1)
    mark = np.zeros(size, dtype=np.int64)
    stamp = 0

    indptr = np.empty(k_parts + 1, dtype=np.int32)
    indptr[0] = 0
    for r in range(k_parts):
        h, m = rows[r, 1], rows[r, 2]
        for c in range(1, 4):
            if rows[r, c] < -1 or rows[r, c] > n_pos - 2:
                raise ValueError("part index out of range -1..n+1")
        count = 0
        for t in range(n_templates):
            per = 2 if table[t, COL_CONJOIN] else 1
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
    pos = np.empty(ANCHOR_B, dtype=np.int64)
    for r in range(k_parts):
        pos[ANCHOR_H], pos[ANCHOR_M], pos[ANCHOR_X] = rows[r, 1], rows[r, 2], rows[r, 3]
        h, m = pos[ANCHOR_H], pos[ANCHOR_M]
        code = N_DISTANCE_BINS * (1 if m > h else 0) + distance_bin(h, m)
        conj = CONJ_BASE + code
        k = indptr[r]
        for t in range(n_templates):
            la = lead[t]
            hv = lead_hash[t, 0 if la < 0 else pos[la] + 1]
            for i in range(n_rest[t]):
                a = rest[t, i]
                hv = mix(hv, groups[t, a, pos[a] + 1])
            if bfield[t] < 0:
                if has[t, ANCHOR_ARC]:
                    hv = mix(hv, arc[t, code])
                out[k] = np.int32(hv & mask)
                k += 1
                if conjoin[t]:
                    out[k] = np.int32(mix(hv, conj) & mask)
                    k += 1
                continue
            stamp += 1
            for b in range(min(h, m) + 1, max(h, m)):
                v = padded[bfield[t], b + 1]
                if mark[v] == stamp:
                    continue
                mark[v] = stamp
                hb = mix(hv, groups[t, ANCHOR_B, b + 1])
                if has[t, ANCHOR_ARC]:
                    hb = mix(hb, arc[t, code])
                out[k] = np.int32(hb & mask)
                k += 1
                if conjoin[t]:
                    out[k] = np.int32(mix(hb, conj) & mask)
                    k += 1
    return indptr, out
