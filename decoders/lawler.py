"""The K best trees by partitioning the tree space, for any decoder that can decode a
subproblem: arcs forced in and arcs forbidden.

Lawler (1972, "A procedure for computing the K best solutions to discrete optimization
problems and its application to the shortest path problem"), for spanning arborescences
Camerini, Fratta and Maffioli (1980, "The k best spanning arborescences of a network").
A :class:`Subproblem` is the set of trees that contain its forced arcs (a given head for
some words) and none of its forbidden arcs. Its best tree T splits the rest of it into
disjoint subproblems, one per word m_1 < ... < m_j that it leaves free: subproblem i
forces T's arcs into m_1 .. m_(i-1) and forbids T's arc into m_i
(:meth:`Subproblem.split`). A tree of the subproblem other than T is in exactly one of
them, the one of the first free word whose head differs from T's, so no tree is produced
twice. :func:`lawler_kbest` pops the best solved subproblem, splits it and solves the
parts, K - 1 times: with an exact oracle the trees come out as the exact K best, best
first. With a relaxation (a rounded LP) as the oracle the same partition gives K
distinct trees, each the oracle's tree of its part, in the order of their scores after
the first; they approximate the K best.

:mod:`decoders.kbest` does the same for arc-factored scores in one kernel, by
Camerini's swaps; this module is for oracles that are whole decoders (higher-order
parts, labels under constraints, :meth:`parser.pipeline.Parser.kbest`).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, TypeVar

import numpy as np

from .trees import NoTree, chu_liu_edmonds


class Solved(Protocol):
    """What the oracle of :func:`lawler_kbest` returns for a subproblem: its tree
    (``heads``, ``int64 (n + 1,)``, ``heads[0] == -1``) and that tree's ``score``."""

    heads: np.ndarray
    score: float


T = TypeVar("T", bound=Solved)


@dataclass(frozen=True)
class Subproblem:
    """The trees of a sentence of ``n`` words with the arcs ``forced`` in and none of
    the arcs ``forbidden``.

    Attributes
    ----------
    forced:
        ``int64 (n + 1,)``: the head forced on each word, -1 where it is free (entry 0 is
        -1).
    forbidden:
        ``bool (n + 1, n + 1)``: ``[h, m]`` True where arc h -> m is forbidden.
    """

    forced: np.ndarray
    forbidden: np.ndarray

    @classmethod
    def whole(cls, n: int) -> "Subproblem":
        """Every tree of ``n`` words."""
        return cls(np.full(n + 1, -1, dtype=np.int64), np.zeros((n + 1, n + 1), dtype=bool))

    @property
    def n(self) -> int:
        return len(self.forced) - 1

    def allowed(self) -> np.ndarray:
        """``bool (n + 1, n + 1)``: the arcs ``[h, m]`` its trees may have: not forbidden,
        no arc into 0 nor loop, and only the forced head of a word that has one."""
        n = self.n
        out = ~self.forbidden
        out[:, 0] = False
        out[np.arange(n + 1), np.arange(n + 1)] = False
        given = np.flatnonzero(self.forced >= 0)
        out[:, given] = False
        out[self.forced[given], given] = True
        return out

    def split(self, heads: np.ndarray) -> Iterator["Subproblem"]:
        """The subproblems that partition its trees other than ``heads`` (one of its
        trees), one per free word in increasing order (module docstring)."""
        forced = self.forced.copy()
        for m in np.flatnonzero(self.forced[1:] < 0) + 1:
            forbidden = self.forbidden.copy()
            forbidden[heads[m], m] = True
            yield Subproblem(forced.copy(), forbidden)
            forced[m] = heads[m]


def admits_tree(allowed: np.ndarray, single_root: bool) -> bool:
    """Whether some tree rooted at 0 (with one root child if ``single_root``) has only
    arcs where ``allowed`` (``bool (n + 1, n + 1)``) is True: the maximum spanning tree
    of 0 and ``-inf`` scores exists (:func:`~decoders.trees.chu_liu_edmonds`, O(n^2))."""
    try:
        chu_liu_edmonds(np.where(allowed, 0.0, -np.inf), single_root)
    except NoTree:
        return False
    return True


def lawler_kbest(first: T, solve: Callable[[Subproblem], T | None], k: int,
                 whole: Subproblem) -> list[T]:
    """The ``k`` best trees of ``whole`` (fewer when it has fewer) by Lawler's partition
    (module docstring).

    Parameters
    ----------
    first:
        The oracle's tree of ``whole`` itself (the caller's one-best tree, decoded as it
        always is).
    solve:
        The oracle: the best tree of a :class:`Subproblem` (a part of ``whole``), or None
        when it has none.
    k:
        How many trees, at least 1.
    whole:
        The subproblem that ``first`` is the tree of: every tree, or those with the arcs
        the caller forces in and forbids anyway (they are then never split on).

    Returns
    -------
    ``first``, then the trees of the best solved subproblems in order of their scores
    (ties in the order the subproblems were made); distinct trees.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    found = [first]
    queue: list = []
    made = itertools.count()

    def split(sub: Subproblem, tree: T) -> None:
        for part in sub.split(tree.heads):
            solved = solve(part)
            if solved is not None:
                heapq.heappush(queue, (-solved.score, next(made), part, solved))

    if k > 1:
        split(whole, first)
    while len(found) < k and queue:
        _, _, sub, tree = heapq.heappop(queue)
        found.append(tree)
        if len(found) < k:
            split(sub, tree)
    return found
