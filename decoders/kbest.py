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

The whole loop is one numba kernel (:func:`decoders._kernels.kbest_heads`): with a
Python loop per subproblem, K = 10 cost 21 times one best tree on en_ewt dev (mostly the
Python around passes of a few microseconds); in numba it costs 7.7 times
(``eval/results/frozen/kbest_en_ewt.md``), the two O(n^2) passes per tree being the floor of
this scheme.
"""

from __future__ import annotations

import numpy as np

from . import _kernels
from .base import ScoredTree
from .trees import check_scores, raise_for_status


def kbest_arborescences(S: np.ndarray, k: int, single_root: bool) -> list[ScoredTree]:
    """The ``k`` best trees rooted at 0 under the arc scores ``S`` (fewer if fewer exist).

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores, ``-inf`` for non-candidate arcs (as for
        :func:`decoders.trees.chu_liu_edmonds`).
    k:
        How many trees, at least 1.
    single_root:
        Exactly one root child in every tree (exact, module docstring).

    Returns
    -------
    Distinct trees in non-increasing order of score; the first is
    :func:`~decoders.trees.chu_liu_edmonds`'s tree. Equal inputs give equal lists (ties
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
    heads, scores, status = _kernels.kbest_heads(check_scores(S), k, single_root)
    raise_for_status(status, "spanning tree")
    return [ScoredTree(h, float(s)) for h, s in zip(heads, scores)]
