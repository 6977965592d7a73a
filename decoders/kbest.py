"""The K best trees of an arc-factored score matrix, in non-increasing score order.

Camerini, Fratta and Maffioli (1980, "The k best spanning arborescences of a network")
in the simplified form of Zmigrod, Vieira and Cotterell (2021, "On Finding the K-best
Non-projective Dependency Trees"; Hall 2007 used Camerini's algorithm for K-best MST
parsing). The trees not yet produced are partitioned into subproblems, each a score
matrix with some arcs forbidden (``-inf``) and some forced (every other head of their
modifier forbidden), Lawler's scheme. A subproblem whose best tree T is already produced
is kept with its *best swap*: the arc e of T whose exclusion costs least, and that cost,
from one contraction pass (:func:`decoders._kernels.mst_swap`, Camerini's NEXT); its next
tree is the best tree without e, and what is left of it splits into "without e" (whose
best tree is that next tree) and "with e" (whose best tree is still T). Each tree
produced costs two passes, O(K n^2) in all for dense scores.

With a single root (Universal Dependencies) the swaps of Camerini's algorithm may give a
tree with two root children. As Zmigrod et al. (2021, section 4) do, a subproblem whose
root child is not yet fixed is solved by the single-root maximum spanning tree
(:func:`decoders._kernels.mst_heads`); when its best tree T, with root child r, is
produced, it splits into "root arc (0, r) forbidden" (solved the same way) and "root arc
(0, r) forced": every tree of the latter has the one root child r, so swaps are exact
there.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from . import _kernels
from .base import ScoredTree
from .mst import check_scores, raise_for_status


def tree_score(S: np.ndarray, heads: np.ndarray) -> float:
    """Sum of ``S[heads[m], m]`` over the words m."""
    return float(S[heads[1:], np.arange(1, heads.shape[0])].sum())


def forbid(S: np.ndarray, h: int, m: int) -> np.ndarray:
    """A copy of ``S`` without the arc h -> m."""
    out = S.copy()
    out[h, m] = -np.inf
    return out


def force(S: np.ndarray, h: int, m: int, single_root: bool) -> np.ndarray:
    """A copy of ``S`` in which m's only head is h; with ``single_root``, forcing a root
    arc also forbids the root's other children."""
    out = S.copy()
    keep = out[h, m]
    out[:, m] = -np.inf
    out[h, m] = keep
    if single_root and h == 0:
        out[0, :] = -np.inf
        out[0, m] = keep
    return out


def kbest_arborescences(S: np.ndarray, k: int, single_root: bool) -> list[ScoredTree]:
    """The ``k`` best trees rooted at 0 under the arc scores ``S`` (fewer if fewer exist).

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores, ``-inf`` for non-candidate arcs (as for
        :func:`decoders.mst.chu_liu_edmonds`).
    k:
        How many trees, at least 1.
    single_root:
        Exactly one root child in every tree (exact, module docstring).

    Returns
    -------
    Distinct trees in non-increasing order of score; the first is
    :func:`~decoders.mst.chu_liu_edmonds`'s tree. Equal inputs give equal lists (ties
    are broken by the order in which subproblems were made).

    Raises
    ------
    ValueError
        If ``k < 1`` or no tree uses only finite arcs (see :func:`chu_liu_edmonds`).

    Examples
    --------
    >>> S = np.array([[0., 5., 1.], [0., 0., 4.], [0., 3., 0.]])
    >>> [(t.heads.tolist(), t.score) for t in kbest_arborescences(S, 3, single_root=True)]
    [([-1, 0, 1], 9.0), ([-1, 2, 0], 4.0)]
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    return _KBest(check_scores(S), k, single_root).run()


class _KBest:
    """The state of one :func:`kbest_arborescences` call: the trees produced and a heap
    of subproblems, keyed by the score of their next tree (then by creation order).

    Heap entries ``(-key, order, kind, Q, T, e)``:

    * ``"tree"``: the subproblem ``Q``'s best tree ``T`` (key: its score) is still to be
      produced; ``Q``'s root child is free (single root only, solved by the
      single-root MST);
    * ``"tree_swap"``: the same for a subproblem whose trees all have one root child (or
      any number allowed), with its best swap ``e = (h, m, delta)`` already found;
    * ``"swap"``: ``Q``'s best tree ``T`` was produced; its next one is the best tree
      without the arc ``e = (h, m)``, of score ``key`` (every tree of ``Q`` has one root
      child, or any number is allowed).
    """

    def __init__(self, S: np.ndarray, k: int, single_root: bool) -> None:
        self.S = S
        self.k = k
        self.single_root = single_root
        self.heap: list = []
        self.order = itertools.count()
        self.trees: list[ScoredTree] = []

    def run(self) -> list[ScoredTree]:
        if self.single_root:
            heads, status = _kernels.mst_heads(self.S, True)
            raise_for_status(status, "spanning tree")
            self._push(tree_score(self.S, heads), "tree", self.S, heads, None)
        else:
            heads, status, h, m, delta = _kernels.mst_swap(self.S, _NO_PREFERENCE)
            raise_for_status(status, "spanning tree")
            self._produce(heads)
            self._push_swap(self.S, heads, h, m, delta)
        while self.heap and len(self.trees) < self.k:
            _, _, kind, Q, T, arc = heapq.heappop(self.heap)
            if kind == "tree":
                self._produce(T)
                if len(self.trees) < self.k:
                    self._split_root(Q, T)
            elif kind == "tree_swap":
                self._produce(T)
                if len(self.trees) < self.k:
                    self._push_swap(Q, T, *arc)
            else:
                h, m = arc
                without = forbid(Q, h, m)
                heads, status, h2, m2, delta = _kernels.mst_swap(without, _NO_PREFERENCE)
                raise_for_status(status, "spanning tree")
                self._produce(heads)
                if len(self.trees) < self.k:
                    self._push_swap(without, heads, h2, m2, delta)
                    self._rest(force(Q, h, m, self.single_root), T)
        self.trees.sort(key=lambda tree: -tree.score)      # stable: float noise only
        return self.trees

    def _produce(self, heads: np.ndarray) -> None:
        self.trees.append(ScoredTree(heads, tree_score(self.S, heads)))

    def _push(self, key: float, kind: str, Q: np.ndarray, T: np.ndarray, arc) -> None:
        heapq.heappush(self.heap, (-key, next(self.order), kind, Q, T, arc))

    def _push_swap(self, Q: np.ndarray, T: np.ndarray, h: int, m: int, delta: float) -> None:
        """Queue ``Q``'s next tree after its (produced) best tree ``T``, if any."""
        if h >= 0:
            self._push(tree_score(self.S, T) - delta, "swap", Q, T, (h, m))

    def _split_root(self, Q: np.ndarray, T: np.ndarray) -> None:
        """``Q`` minus its produced single-root best tree ``T``, with root child r: the
        trees without (0, r), and those with it other than ``T``."""
        if T.shape[0] == 1:             # no words: the empty tree is the only one
            return
        r = int(np.flatnonzero(T == 0)[0])
        without = forbid(Q, 0, r)
        heads, status = _kernels.mst_heads(without, True)
        if status == _kernels.OK:
            self._push(tree_score(self.S, heads), "tree", without, heads, None)
        self._rest(force(Q, 0, r, True), T)

    def _rest(self, Q: np.ndarray, T: np.ndarray) -> None:
        """Queue what is left of ``Q`` (every tree of which has one root child, or any
        number allowed) once its best tree ``T`` is produced.

        The pass that finds ``Q``'s best swap must contract along ``T``: ``T``'s arcs win
        ties. Should the pass still end in another tree ``T2`` of the same score (ties
        that floating point made unequal), ``Q`` is split on an arc d of ``T`` missing
        from ``T2``: the trees without d (a new subproblem, ``T2`` among them) and those
        with it, where the pass is tried again; once every arc of ``T`` is forced, ``T``
        is the only tree.
        """
        heads, status, h, m, delta = _kernels.mst_swap(Q, T)
        raise_for_status(status, "spanning tree")
        if np.array_equal(heads, T):
            self._push_swap(Q, T, h, m, delta)
            return
        d = int(np.flatnonzero(heads != T)[0])
        without = forbid(Q, int(T[d]), d)
        heads, status, h, m, delta = _kernels.mst_swap(without, _NO_PREFERENCE)
        raise_for_status(status, "spanning tree")
        self._push(tree_score(self.S, heads), "tree_swap", without, heads, (h, m, delta))
        self._rest(force(Q, int(T[d]), d, self.single_root), T)


_NO_PREFERENCE = np.empty(0, dtype=np.int64)
