"""Parts: the index set R of a sentence's structure (``docs/algorithms.md`` section 1).

A structure is a flat float vector with one entry per part: 0/1 for a tree, fractional
for a point of the LP relaxation (Martins, Smith, Xing 2009, "polyhedral outer
approximations"). :class:`Parts` says what each entry means; parts of one type occupy a
contiguous block (TurboParser's ``GetOffsetArc``).

Index columns ``(type, h, m, x)`` per part type:

===================  ===  ====  ===================================================
type                 h    m     x
===================  ===  ====  ===================================================
ARC                  h    m     -1
GRANDPARENT          h    m     g, the head of h (part (g, h, m))
SIBLING              h    m     s, another child of h on the same side as m (m < s
                                on the right, m > s on the left: each pair once)
CONSECUTIVE_SIBLING  h    m     s, the next child of h after m going outwards on the
                                same side; ``m == h`` makes s the first (innermost)
                                child, ``s == n + 1`` (right) or ``s == -1`` (left)
                                makes m the last (outermost) one, and (h, h, n + 1)
                                or (h, h, -1) says h has no child on that side
VALENCY              h    side  k: h has exactly k children on ``side`` (0 = left,
                                1 = right); the last bin, the block's largest k,
                                means "k or more"
NONPROJ              h    m     -1: arc (h, m) is non-projective
===================  ===  ====  ===================================================

:func:`decoders.higher_order.build_parts` builds the higher-order blocks and registers
their indicator functions (:func:`register_indicator`); ``Parts.from_heads`` uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Callable

import numpy as np


class PartType(IntEnum):
    ARC = 0
    GRANDPARENT = 1
    SIBLING = 2
    VALENCY = 3
    NONPROJ = 4
    CONSECUTIVE_SIBLING = 5


@dataclass(frozen=True)
class Parts:
    """Candidate parts of one sentence of ``n`` words; row r is entry r of every output.

    Attributes
    ----------
    n:
        Number of words (the root, 0, excluded).
    index:
        ``int64 (n_parts, 4)``: ``type, h, m, x`` (see the module docstring).
    offsets:
        ``{PartType: slice}``, the contiguous block of each type present.
    """

    n: int
    index: np.ndarray
    offsets: dict

    def __len__(self) -> int:
        return int(self.index.shape[0])

    def block(self, part_type: PartType) -> slice:
        """Rows of ``part_type`` (an empty slice when the type is absent)."""
        return self.offsets.get(part_type, slice(0, 0))

    @property
    def arcs(self) -> np.ndarray:
        """``(n_arcs, 2)`` heads and modifiers of the ARC block."""
        return self.index[self.block(PartType.ARC), 1:3]

    def arc_ids(self) -> np.ndarray:
        """``int64 (n + 1, n + 1)``: ``A[h, m]`` the position of arc h -> m in
        :attr:`arcs` (its row of the parts is ``block(ARC).start`` plus that), -1 where
        h -> m is not a candidate."""
        arcs = self.arcs
        ids = np.full((self.n + 1, self.n + 1), -1, dtype=np.int64)
        ids[arcs[:, 0], arcs[:, 1]] = np.arange(arcs.shape[0])
        return ids

    def arc_rows_of(self, rows: np.ndarray | slice) -> np.ndarray:
        """``int64``: the row of each part ``rows``' own arc ``index[r, 1] -> index[r,
        2]`` (a non-projective-arc part's, an arc's own), which must be a candidate."""
        return self.block(PartType.ARC).start + self.arc_ids()[self.index[rows, 1],
                                                               self.index[rows, 2]]

    def arc_matrix(self, values: np.ndarray, fill: float = -np.inf) -> np.ndarray:
        """``(n + 1, n + 1)`` matrix ``M[h, m]`` of the ARC entries of ``values``.

        Arcs that are not candidates get ``fill``.
        """
        out = np.full((self.n + 1, self.n + 1), fill, dtype=np.float64)
        arcs = self.arcs
        out[arcs[:, 0], arcs[:, 1]] = values[self.block(PartType.ARC)]
        return out

    def restrict(self, keep: np.ndarray) -> tuple["Parts", np.ndarray]:
        """The parts of the trees made of the arcs where ``keep`` (``bool (n_arcs,)``,
        in ARC-block order) is True: those arcs, the grandparent, sibling and
        non-projective-arc parts whose arcs are all kept, and every valency part (a
        head's number of children does not name its arcs). Returns the restricted parts
        and ``rows``, the row of this set each of their rows is (``scores[rows]`` are
        their scores). ``ValueError`` for consecutive siblings, whose parts may say
        that a head has no other child."""
        arcs = self.arcs
        cand = np.zeros((self.n + 1, self.n + 1), dtype=bool)
        cand[arcs[keep, 0], arcs[keep, 1]] = True
        kept = np.zeros(len(self), dtype=bool)
        for part_type, block in self.offsets.items():
            index = self.index[block]
            h, m, x = index[:, 1], index[:, 2], index[:, 3]
            if part_type == PartType.ARC:
                kept[block] = keep
            elif part_type == PartType.GRANDPARENT:
                kept[block] = cand[x, h] & cand[h, m]
            elif part_type == PartType.SIBLING:
                kept[block] = cand[h, m] & cand[h, x]
            elif part_type == PartType.NONPROJ:
                kept[block] = cand[h, m]
            elif part_type == PartType.VALENCY:
                kept[block] = True
            else:
                raise ValueError(f"cannot restrict {part_type.name} parts to a set of arcs")
        return self.select(kept)

    def select(self, kept: np.ndarray) -> tuple["Parts", np.ndarray]:
        """The parts of the rows where ``kept`` (``bool (n_parts,)``) is True, each type
        still one block; returns them and ``rows``, the row of this set each of theirs
        is."""
        rows = np.flatnonzero(kept)
        blocks = sorted(self.offsets.items(), key=lambda item: item[1].start)
        sizes = {t: int(kept[block].sum()) for t, block in blocks}
        stops = np.cumsum(list(sizes.values()))
        offsets = {t: slice(int(stop) - size, int(stop))
                   for (t, size), stop in zip(sizes.items(), stops)}
        return Parts(n=self.n, index=self.index[rows], offsets=offsets), rows

    def from_heads(self, heads: np.ndarray) -> np.ndarray:
        """The 0/1 structure vector of the tree ``heads`` (``heads[0] == -1``).

        Higher-order indicators are filled from their definitions (section 1 of
        ``docs/algorithms.md``), so this is also how a rounded tree gets its parts.
        """
        heads = np.asarray(heads, dtype=np.int64)
        z = np.zeros(len(self), dtype=np.float64)
        arc = self.block(PartType.ARC)
        h, m = self.index[arc, 1], self.index[arc, 2]
        z[arc] = heads[m] == h
        for part_type, rows in self.offsets.items():
            if part_type != PartType.ARC and rows.stop > rows.start:
                if part_type not in _HIGHER_ORDER_INDICATORS:
                    raise KeyError(f"no indicator function registered for {part_type.name}")
                z[rows] = _HIGHER_ORDER_INDICATORS[part_type](self.index[rows], heads)
        return z


def positions_within(sizes: np.ndarray) -> np.ndarray:
    """``int64``: each element's position in its group, for consecutive groups of
    ``sizes`` elements (``[2, 3]`` -> ``[0, 1, 0, 1, 2]``)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def arc_parts(n: int, arcs: np.ndarray | None = None) -> Parts:
    """Parts of an arc-factored model.

    ``arcs`` is an ``(k, 2)`` array of candidate ``(h, m)``; by default every
    ``h in 0..n, m in 1..n, h != m``, in row-major order of ``(h, m)``.
    """
    if arcs is None:
        h, m = np.meshgrid(np.arange(n + 1), np.arange(1, n + 1), indexing="ij")
        keep = h != m
        arcs = np.stack([h[keep], m[keep]], axis=1)
    arcs = np.asarray(arcs, dtype=np.int64).reshape(-1, 2)
    index = np.empty((arcs.shape[0], 4), dtype=np.int64)
    index[:, 0] = PartType.ARC
    index[:, 1:3] = arcs
    index[:, 3] = -1
    return Parts(n=n, index=index, offsets={PartType.ARC: slice(0, arcs.shape[0])})


IndicatorFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]

# Indicator functions of the higher-order part types (see :func:`register_indicator`).
_HIGHER_ORDER_INDICATORS: dict[PartType, IndicatorFunction] = {}


def register_indicator(part_type: PartType) -> Callable[[IndicatorFunction], IndicatorFunction]:
    """Decorator: ``fn(rows, heads) -> 0/1 array`` is the indicator of ``part_type``.

    ``rows`` is the whole ``(k, 4)`` index block of that type and ``heads`` a tree
    (``heads[0] == -1``); ``fn`` returns one value per row.
    """

    def wrap(fn: IndicatorFunction) -> IndicatorFunction:
        if part_type in _HIGHER_ORDER_INDICATORS:
            raise ValueError(f"indicator of {part_type.name} registered twice")
        _HIGHER_ORDER_INDICATORS[part_type] = fn
        return fn

    return wrap
