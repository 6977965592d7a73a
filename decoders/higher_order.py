"""Higher-order parts: which ones a sentence has, and their indicator functions.

The part types are those of the full model of Martins, Smith, Xing (ACL 2009, section 4):
grandparents and all-pairs siblings (second order), valency and non-projective arcs
(``docs/algorithms.md`` section 1), plus consecutive siblings as an alternative to
all-pairs siblings. :func:`build_parts` lays them out in contiguous blocks after the arcs
(``ARC, GRANDPARENT, SIBLING | CONSECUTIVE_SIBLING, VALENCY, NONPROJ``); the index
columns of each type are described in :mod:`decoders.parts`.

Every higher-order candidate is built from the candidate arcs: a part whose arcs were
pruned away cannot be 1 and is left out, and so are parts that are 0 in every tree
(grandparents (g, h, g), non-projective arcs from the root or between adjacent words).
Valency has bins ``0..max_valency`` for every head and side (the root only has a right
side), even those with fewer candidate children than a bin needs.

The indicator functions are registered with :func:`decoders.parts.register_indicator`, so
that :meth:`Parts.from_heads` fills every block; all of them are vectorized over parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .parts import Parts, PartType, arc_parts, register_indicator

ORDERS = ("1", "2", "full")


@dataclass(frozen=True)
class PartsConfig:
    """Which parts a model scores: the options of :func:`build_parts`.

    Attributes
    ----------
    order:
        ``"1"``: arcs only. ``"2"``: arcs, grandparents (g, h, m) for candidate arcs (g, h)
        and (h, m), and sibling pairs (h, m, s) for candidate arcs (h, m), (h, s) on the
        same side. ``"full"``: second order plus valency (h, side, k) and non-projective
        arcs (Martins, Smith, Xing 2009, section 4).
    consecutive_siblings:
        Use consecutive siblings (with first-child and last-child parts) instead of all
        pairs of siblings.
    max_valency:
        ``K``: valency bins ``0, 1, ..., K - 1`` are exact and bin ``K`` means "K or more".
    """

    order: str = "1"
    consecutive_siblings: bool = False
    max_valency: int = 3

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, not {self.order!r}")
        if self.max_valency < 1:
            raise ValueError("max_valency must be at least 1")

    def build(self, n: int, arcs: np.ndarray | None = None) -> Parts:
        """The parts of a sentence of ``n`` words over the candidate ``arcs`` (``(k, 2)``
        arcs ``(h, m)`` after pruning; by default all of them)."""
        base = arc_parts(n, arcs)
        if self.order == "1":
            return base
        arcs = base.arcs
        cand = np.zeros((n + 1, n + 1), dtype=bool)
        cand[arcs[:, 0], arcs[:, 1]] = True
        blocks = [(PartType.ARC, base.index)]
        blocks.append((PartType.GRANDPARENT, _grandparents(cand)))
        if self.consecutive_siblings:
            blocks.append((PartType.CONSECUTIVE_SIBLING, _consecutive_siblings(n, arcs, cand)))
        else:
            blocks.append((PartType.SIBLING, _siblings(cand)))
        if self.order == "full":
            blocks.append((PartType.VALENCY, _valency(n, self.max_valency)))
            blocks.append((PartType.NONPROJ, _nonprojective(arcs)))
        offsets, start = {}, 0
        for part_type, rows in blocks:
            offsets[part_type] = slice(start, start + rows.shape[0])
            start += rows.shape[0]
        return Parts(n=n, index=np.concatenate([rows for _, rows in blocks]), offsets=offsets)

    @property
    def part_types(self) -> frozenset[PartType]:
        """The part types of a model with these parts: those of a three-word sentence,
        which has one of every type the options give."""
        return frozenset(self.build(3).offsets)


def build_parts(n: int, arcs: np.ndarray | None = None, **options) -> Parts:
    """:meth:`PartsConfig.build` of ``PartsConfig(**options)`` (``order``,
    ``consecutive_siblings``, ``max_valency``; a misspelt one is a TypeError).

    Examples
    --------
    >>> parts = build_parts(3, order="2")
    >>> z = parts.from_heads([-1, 0, 1, 1])  # 2 and 3 are right children of 1
    >>> parts.index[parts.block(PartType.SIBLING)][z[parts.block(PartType.SIBLING)] == 1]
    array([[2, 1, 2, 3]])
    """
    return PartsConfig(**options).build(n, arcs)


def _rows(part_type: PartType, h: np.ndarray, m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Stack index columns ``(type, h, m, x)`` into an ``int64 (k, 4)`` block."""
    out = np.empty((len(h), 4), dtype=np.int64)
    out[:, 0] = part_type
    out[:, 1], out[:, 2], out[:, 3] = h, m, x
    return out


def _same_side_pairs(cand: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(h, m, s)`` with (h, m), (h, s) candidates and s farther out than m, same side."""
    k = np.arange(cand.shape[0])
    h, m, s = k[:, None, None], k[None, :, None], k[None, None, :]
    outward = ((h < m) & (m < s)) | ((s < m) & (m < h))
    return np.nonzero(cand[:, :, None] & cand[:, None, :] & outward)


def _grandparents(cand: np.ndarray) -> np.ndarray:
    """Grandparent parts (g, h, m), stored as rows ``(h, m, g)``, sorted by (h, m, g)."""
    # axes (h, m, g): cand[g, h] is cand.T[h, g]
    k = np.arange(cand.shape[0])
    h, m, g = np.nonzero(cand[:, :, None] & cand.T[:, None, :]
                         & (k[None, :, None] != k[None, None, :]))
    return _rows(PartType.GRANDPARENT, h, m, g)


def _siblings(cand: np.ndarray) -> np.ndarray:
    """All-pairs sibling parts (h, m, s), m the inner one; sorted by (h, m, s)."""
    return _rows(PartType.SIBLING, *_same_side_pairs(cand))


def _consecutive_siblings(n: int, arcs: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Consecutive sibling parts with first/last-child ends; sorted by (h, m, s).

    Per head and side (the root only has a right side) these are the arcs of a path
    graph START -> children in outward order -> END: START is ``m == h`` and END is
    ``s == n + 1`` on the right, ``s == -1`` on the left.
    """
    heads = np.arange(n + 1)
    end = np.where(arcs[:, 1] > arcs[:, 0], n + 1, -1)
    h = np.concatenate([arcs[:, 0], arcs[:, 0], heads, heads[1:]])
    m = np.concatenate([arcs[:, 0], arcs[:, 1], heads, heads[1:]])
    s = np.concatenate([arcs[:, 1], end, np.full(n + 1, n + 1), np.full(n, -1)])
    ph, pm, ps = _same_side_pairs(cand)
    h, m, s = np.concatenate([h, ph]), np.concatenate([m, pm]), np.concatenate([s, ps])
    order = np.lexsort((s, m, h))
    return _rows(PartType.CONSECUTIVE_SIBLING, h[order], m[order], s[order])


def _valency(n: int, max_valency: int) -> np.ndarray:
    """Valency parts (h, side, k), k = 0..max_valency; the root only has a right side."""
    h = np.repeat(np.arange(n + 1), 2)[1:]
    side = np.tile([0, 1], n + 1)[1:]
    bins = max_valency + 1
    return _rows(PartType.VALENCY, np.repeat(h, bins), np.repeat(side, bins),
                 np.tile(np.arange(bins), len(h)))


def _nonprojective(arcs: np.ndarray) -> np.ndarray:
    """Non-projective arc parts: candidate arcs that can be non-projective.

    Arcs from the root (every word descends from it) and between adjacent words (no word
    lies between them) are projective in every tree.
    """
    h, m = arcs[:, 0], arcs[:, 1]
    keep = (h > 0) & (np.abs(h - m) > 1)
    return _rows(PartType.NONPROJ, h[keep], m[keep], np.full(int(keep.sum()), -1))


def ancestor_matrix(heads: np.ndarray) -> np.ndarray:
    """``bool (n + 1, n + 1)``: ``A[i, j]`` iff i is an ancestor of j or i == j.

    Walks every word up to the root at once, one level per step (at most n + 1 steps).
    """
    heads = np.asarray(heads, dtype=np.int64)
    size = heads.shape[0]
    anc = np.eye(size, dtype=bool)
    words = np.arange(size)
    node = heads.copy()
    node[0] = -1
    for _ in range(size):
        live = node >= 0
        anc[node[live], words[live]] = True
        node[live] = heads[node[live]]
    return anc


@register_indicator(PartType.GRANDPARENT)
def grandparent_indicator(rows: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """``z_ghm = z_gh AND z_hm`` for rows ``(h, m, g)``."""
    h, m, g = rows[:, 1], rows[:, 2], rows[:, 3]
    return (heads[m] == h) & (heads[h] == g)


@register_indicator(PartType.SIBLING)
def sibling_indicator(rows: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """``z_hms = z_hm AND z_hs`` for rows ``(h, m, s)``."""
    h, m, s = rows[:, 1], rows[:, 2], rows[:, 3]
    return (heads[m] == h) & (heads[s] == h)


@register_indicator(PartType.CONSECUTIVE_SIBLING)
def consecutive_sibling_indicator(rows: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """1 for rows ``(h, m, s)`` where s follows m among h's children on one side, outwards.

    ``m == h`` stands for the start (s is the innermost child) and ``s`` in
    ``{-1, n + 1}`` for the end (m is the outermost child) of the left and right sides.
    """
    n = heads.shape[0] - 1
    words = np.arange(1, n + 1)
    head = heads[1:]
    right = words > head
    # children grouped by (head, side), innermost first
    order = np.lexsort((np.abs(words - head), right, head))
    w, gh, gr = words[order], head[order], right[order]
    same_group = (gh[1:] == gh[:-1]) & (gr[1:] == gr[:-1])
    end = np.where(gr, n + 1, -1)
    # following[w]: next sibling outwards of word w; first[h, side]: innermost child
    following = np.empty(n + 1, dtype=np.int64)
    following[w] = end
    following[w[:-1][same_group]] = w[1:][same_group]
    first = np.empty((n + 1, 2), dtype=np.int64)
    first[:, 0], first[:, 1] = -1, n + 1
    starts = np.ones(n, dtype=bool)
    starts[1:] = ~same_group
    first[gh[starts], gr[starts].astype(np.int64)] = w[starts]
    h, m, s = rows[:, 1], rows[:, 2], rows[:, 3]
    side = (s > h).astype(np.int64)
    # m is h itself on start rows, so heads[m] and following[m] are always defined
    return np.where(m == h, first[h, side] == s, (heads[m] == h) & (following[m] == s))


@register_indicator(PartType.VALENCY)
def valency_indicator(rows: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """``v_hk`` for rows ``(h, side, k)``: h has k children on ``side`` (the block's
    largest k means "k or more")."""
    n = heads.shape[0] - 1
    words = np.arange(1, n + 1)
    counts = np.bincount(2 * heads[1:] + (words > heads[1:]), minlength=2 * (n + 1))
    h, side, k = rows[:, 1], rows[:, 2], rows[:, 3]
    c = counts[2 * h + side]
    return np.where(k == k.max(), c >= k, c == k)


@register_indicator(PartType.NONPROJ)
def nonprojective_indicator(rows: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """``n_hm``: (h, m) is an arc and some word strictly between h and m does not
    descend from h."""
    h, m = rows[:, 1], rows[:, 2]
    anc = ancestor_matrix(heads)
    below = np.zeros((anc.shape[0], anc.shape[0] + 1), dtype=np.int64)
    np.cumsum(anc, axis=1, out=below[:, 1:])  # below[i, j] = descendants of i among 0..j-1
    lo, hi = np.minimum(h, m), np.maximum(h, m)
    inside = below[h, hi] - below[h, lo + 1]
    return (heads[m] == h) & (inside < hi - lo - 1)
