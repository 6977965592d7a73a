"""Local search after rounding: greedy single-head changes under the full model's scores.

MST rounding of an LP solution (``docs/algorithms.md`` section 3; Martins, Smith, Xing
2009) sees only the arc values, so on a fractional solution it can return a tree whose
grandparent, sibling, valency and non-projective parts score poorly. As in McDonald and
Pereira (EACL 2006, section 3.2: approximate non-projective second-order parsing), the
rounded tree is then improved by hill climbing: make the single head change that raises
``scores @ z`` most while keeping a tree, until none does. The result never scores
less than the rounded tree, and every tree it returns is one the ILP could return, so
LP value >= ILP value >= its score still holds.

The loops are the numba kernels of :mod:`decoders._search_kernels`; this module lays the
part scores out as the dense tables they read.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _search_kernels
from .parts import Parts, PartType


class ScoreTables(NamedTuple):
    """The scores of one sentence's parts, keyed by arc id (see
    :mod:`decoders._search_kernels`); tables of absent part types are empty."""

    arc_id: np.ndarray
    arc: np.ndarray
    grand: np.ndarray
    sib: np.ndarray
    cons: np.ndarray
    val: np.ndarray
    nonproj: np.ndarray


def score_tables(parts: Parts, scores: np.ndarray) -> ScoreTables:
    """Scatter ``scores`` (one per part of ``parts``) into :class:`ScoreTables`."""
    n = parts.n
    arcs = parts.arcs
    n_arcs = arcs.shape[0]
    arc_id = parts.arc_ids()
    scores = np.asarray(scores, dtype=np.float64)

    def rows(part_type: PartType) -> tuple[np.ndarray, np.ndarray]:
        block = parts.block(part_type)
        return parts.index[block], scores[block]

    def table(part_type: PartType, shape: tuple, key) -> np.ndarray:
        index, values = rows(part_type)
        if index.shape[0] == 0:
            return np.zeros((0,) * len(shape))
        out = np.zeros(shape)
        out[key(index)] = values
        return out

    valency = rows(PartType.VALENCY)[0]
    bins = int(valency[:, 3].max()) + 1 if valency.shape[0] else 0
    return ScoreTables(
        arc_id=arc_id,
        arc=np.ascontiguousarray(scores[parts.block(PartType.ARC)]),
        grand=table(PartType.GRANDPARENT, (n_arcs, n + 1),
                    lambda r: (arc_id[r[:, 1], r[:, 2]], r[:, 3])),
        sib=table(PartType.SIBLING, (n_arcs, n + 1),
                  lambda r: (arc_id[r[:, 1], r[:, 2]], r[:, 3])),
        cons=table(PartType.CONSECUTIVE_SIBLING, (n_arcs + n + 1, n + 3),
                   lambda r: (np.where(r[:, 1] == r[:, 2], n_arcs + r[:, 1],
                                       arc_id[r[:, 1], r[:, 2]]), r[:, 3] + 1)),
        val=table(PartType.VALENCY, (n + 1, 2, bins),
                  lambda r: (r[:, 1], r[:, 2], r[:, 3])),
        nonproj=table(PartType.NONPROJ, (n_arcs,), lambda r: arc_id[r[:, 1], r[:, 2]]),
    )


def tree_score(tables: ScoreTables, heads: np.ndarray) -> float:
    """``scores @ parts.from_heads(heads)`` from the tables, in O(n^2)."""
    heads = np.ascontiguousarray(heads, dtype=np.int64)
    size = heads.shape[0]
    return float(_search_kernels.tree_score(
        heads, *tables, np.zeros((size, size), dtype=np.bool_), np.zeros(size, dtype=np.int64)))


def local_search(parts: Parts, scores: np.ndarray, heads: np.ndarray, *,
                 single_root: bool) -> tuple[np.ndarray, float, int]:
    """Hill climbing from the tree ``heads`` over single head changes to candidate arcs.

    Returns ``(heads, value, moves)``: the local optimum, its score ``scores @ z`` and
    the number of head changes made. With ``single_root`` the root keeps its one child
    (a change that would give it zero or two is not tried). Deterministic.
    """
    tables = score_tables(parts, scores)
    start = np.ascontiguousarray(heads, dtype=np.int64)
    out, value, moves = _search_kernels.hill_climb(
        start, np.ascontiguousarray(parts.arcs), single_root, *tables)
    return out, float(value), int(moves)
