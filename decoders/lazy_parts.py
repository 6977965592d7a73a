"""Non-projective-arc parts added only where a tree breaks them.

Riedel and Clarke, "Incremental integer linear programming for non-projective dependency
parsing" (EMNLP 2006): solve without the constraints a solution seldom breaks, add those
it breaks, solve again. In the full-order factor graph (:mod:`decoders.full_graph`) the
costly parts are the non-projective-arc ones: each needs the ancestry of its head, a
chain of small factors through which AD3 passes information one factor per iteration
(``eval/results/ancestry_*.md``: a median of 694 iterations against 51 at order 2).

A head is *active* when its non-projective-arc parts are in the graph. A part (h, m),
score s, of an inactive head is left out and the positive part of its score moved onto
its arc: every point of the relaxation has ``0 <= n_hm <= z_hm``, so ``s n_hm <= max(s,
0) z_hm``, and the *optimistic* program's LP (and AD3's dual value on it) bounds the full
program's LP and every tree's score from above. A tree whose score under all parts meets
that bound is optimal for both. A tree that misses it because of an inactive head's part
(an arc scored below 0 that is non-projective in it, or above 0 that is projective) makes
that head active (:func:`broken_parts`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .parts import Parts, PartType


class Optimistic(NamedTuple):
    """The parts and scores of the optimistic program (module docstring)."""

    parts: Parts
    scores: np.ndarray
    rows: np.ndarray
    """``int64``: the row of the whole set of parts each of :attr:`parts`' rows is."""
    left_out: np.ndarray
    """``int64``: the rows of the whole set left out, and ``arc_rows`` their arcs'."""
    arc_rows: np.ndarray
    follows_arc: np.ndarray
    """``bool``, per left-out row: its bound is its arc's value (score above 0), else 0."""

    def lift(self, whole: Parts, output: np.ndarray) -> np.ndarray:
        """A structure ``output`` of :attr:`parts` as one of ``whole``: each left-out
        part at the value its bound gave it."""
        out = np.zeros(len(whole))
        out[self.rows] = output
        out[self.left_out] = np.where(self.follows_arc, out[self.arc_rows], 0.0)
        return out


def optimistic(parts: Parts, scores: np.ndarray, active: np.ndarray) -> Optimistic:
    """The optimistic program of ``parts`` scored ``scores`` with the heads where
    ``active`` (``bool (n + 1,)``) is True active."""
    block = parts.block(PartType.NONPROJ)
    kept = np.ones(len(parts), dtype=bool)
    kept[block] = active[parts.index[block, 1]]
    sub, rows = parts.select(kept)
    left_out = block.start + np.flatnonzero(~kept[block])
    arc_rows = parts.arc_rows_of(left_out)
    follows_arc = scores[left_out] > 0
    moved = np.zeros(len(parts))
    np.add.at(moved, arc_rows, np.where(follows_arc, scores[left_out], 0.0))
    return Optimistic(sub, scores[rows] + moved[rows], rows, left_out, arc_rows,
                      follows_arc)


def broken_parts(parts: Parts, scores: np.ndarray, tree: np.ndarray) -> np.ndarray:
    """``bool`` over the non-projective-arc rows of ``parts``: the parts whose value in
    the tree of structure ``tree`` (:meth:`Parts.from_heads`) is not the optimistic one:
    non-projective there and scored below 0, or an arc of the tree, projective, and
    scored above 0."""
    block = parts.block(PartType.NONPROJ)
    arc_rows = parts.arc_rows_of(block)
    s, n = scores[block], tree[block]
    return ((s < 0) & (n > 0)) | ((s > 0) & (tree[arc_rows] > 0) & (n == 0))
