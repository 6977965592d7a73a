"""Non-projective-arc parts added only where a tree breaks them.

Riedel and Clarke, "Incremental integer linear programming for non-projective dependency
parsing" (EMNLP 2006): solve without the constraints a solution seldom breaks, add those
it breaks, solve again. In the full-order factor graph (:mod:`decoders.full_graph`) the
costly parts are the non-projective-arc ones: each needs the ancestry of its head, a
chain of small factors through which AD3 passes information one factor per iteration
(``eval/results/ancestry_*.md``: a median of 694 iterations against 51 at order 2).

A head is *active* when its non-projective-arc parts are in the graph. A part (h, m),
score s, of an inactive head is left out and its score moved onto parts that bound it
on every tree. Above 0, onto its arc: ``n_hm <= z_hm``. Below 0, onto the grandparent
parts (g, h, m) whose g lies strictly between h and m: when h's head is such a g, that
word is not below h and the arc is non-projective, so ``n_hm >= sum_g z_gh z_hm`` on
every tree (a word has one head). Either way ``s n_hm`` is at most the moved score on
every tree, and the *optimistic* program's optimum (and AD3's dual value on it) bounds
every tree's score from above. A tree whose score under all parts meets that bound is
optimal. A tree misses it exactly where a left-out part's value differs from its bound's
(:meth:`Optimistic.broken`: an arc scored below 0 that is non-projective in it without
its head's head inside the span, or one scored above 0 that is projective), and that
part's head is made active.
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
    """``int64``: the rows of the whole set left out."""
    bound_of: np.ndarray
    """``int64``, with :attr:`bound_row`: left-out part ``left_out[bound_of[i]]`` is
    bounded by (its score moved onto) the part of row ``bound_row[i]`` of the whole set
    (its arc, or its grandparent parts with h's head inside the span)."""
    bound_row: np.ndarray

    def lift(self, whole: Parts, output: np.ndarray) -> np.ndarray:
        """A structure ``output`` of :attr:`parts` as one of ``whole``: each left-out
        part at the value of its bound (the sum of the parts its score moved onto)."""
        out = np.zeros(len(whole))
        out[self.rows] = output
        out[self.left_out] = np.bincount(self.bound_of, out[self.bound_row],
                                         minlength=self.left_out.size)
        return out

    def broken(self, whole: Parts, scores: np.ndarray, tree: np.ndarray) -> np.ndarray:
        """``bool`` over the non-projective-arc rows of ``whole``: the left-out parts
        scored other than 0 whose value in the tree of structure ``tree``
        (:meth:`Parts.from_heads` of ``whole``) is not their bound's, where the tree's
        optimistic score exceeds its score."""
        block = whole.block(PartType.NONPROJ)
        lifted = self.lift(whole, tree[self.rows])
        return (lifted[block] != tree[block]) & (scores[block] != 0)


def optimistic(parts: Parts, scores: np.ndarray, active: np.ndarray) -> Optimistic:
    """The optimistic program of ``parts`` scored ``scores`` with the heads where
    ``active`` (``bool (n + 1,)``) is True active."""
    block = parts.block(PartType.NONPROJ)
    kept = np.ones(len(parts), dtype=bool)
    kept[block] = active[parts.index[block, 1]]
    sub, rows = parts.select(kept)
    left_out = block.start + np.flatnonzero(~kept[block])
    s = scores[left_out]
    # below 0: the grandparent parts (g, h, m) with g strictly inside the span of h -> m
    position = np.full((parts.n + 1, parts.n + 1), -1, dtype=np.int64)
    negative = np.flatnonzero(s < 0)
    position[parts.index[left_out[negative], 1], parts.index[left_out[negative], 2]] = negative
    grand = parts.block(PartType.GRANDPARENT)
    h, m, g = (parts.index[grand, c] for c in (1, 2, 3))
    target = position[h, m]
    inside = (target >= 0) & (np.minimum(h, m) < g) & (g < np.maximum(h, m))
    positive = np.flatnonzero(s > 0)
    bound_of = np.concatenate([positive, target[inside]])
    bound_row = np.concatenate([parts.arc_rows_of(left_out[positive]),
                                grand.start + np.flatnonzero(inside)])
    moved = np.bincount(bound_row, s[bound_of], minlength=len(parts))
    return Optimistic(sub, scores[rows] + moved[rows], rows, left_out, bound_of, bound_row)
