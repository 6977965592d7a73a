"""The tree algorithms: pure functions over a score matrix, which the decoders
(:mod:`decoders.mst`, :mod:`decoders.eisner`, the relaxations' rounding) and the
labeled search build on.

The maximum spanning arborescence: Chu & Liu (1965) and Edmonds (1967), contracted
densely as in Tarjan (1977); the single-root constraint (exactly one word attached to the
root, as Universal Dependencies requires) enforced exactly by the root-arc swaps of
Gabow and Tarjan (1984) as presented by Zmigrod, Vieira and Cotterell (2020); the loops
are the numba kernel :func:`decoders._kernels.mst_heads`. The same routine rounds an LP
solution to a tree (``docs/algorithms.md`` section 3) and is the MAP oracle of the TREE
factor (section 5). The best projective tree: Eisner (1996), O(n^3) dynamic programming
over complete and incomplete spans (:func:`decoders._kernels.eisner_heads`). The k best
arborescences are in :mod:`decoders.kbest`, the matrix-tree theorem's marginals in
:mod:`decoders.matrix_tree`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import _kernels
from .base import DecodeResult, DecodeStats
from .parts import Parts

INTEGRALITY_TOL = 1e-6
"""An arc value of a relaxed structure farther than this from 0 and 1 is fractional."""


def check_scores(S: np.ndarray) -> np.ndarray:
    """``S`` as a C-contiguous ``float64 (n + 1, n + 1)`` array, validated.

    Raises ``ValueError`` when ``S`` is not square or holds NaN or ``+inf`` (``-inf``
    marks a non-candidate arc and is allowed). Column 0 and the diagonal are not read.
    """
    S = np.ascontiguousarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 1:
        raise ValueError(f"score matrix must be (n + 1, n + 1), got shape {S.shape}")
    bad = np.isnan(S) | np.isposinf(S)
    bad[:, 0] = False
    np.fill_diagonal(bad, False)
    if bad.any():
        raise ValueError("score matrix holds NaN or +inf (use -inf for pruned arcs)")
    return S


class NoTree(ValueError):
    """No tree (of the kind asked for) uses only finite (candidate) arcs."""


def raise_for_status(status: int, what: str) -> None:
    """Turn a kernel status code of :mod:`decoders._kernels` into :class:`NoTree`."""
    if status == _kernels.NO_TREE:
        raise NoTree(f"no {what} rooted at 0 uses only finite (candidate) arcs")
    if status == _kernels.NO_SINGLE_ROOT_TREE:
        raise NoTree(f"no {what} with exactly one root child uses only finite "
                     "(candidate) arcs")


def chu_liu_edmonds(S: np.ndarray, single_root: bool) -> np.ndarray:
    """Heads of the maximum spanning arborescence of ``S`` rooted at 0.

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)``, ``S[h, m]`` the score of arc h -> m, ``-inf`` for
        non-candidate arcs; column 0 and the diagonal are unused.
    single_root:
        Exactly one child of the root (exact, Zmigrod et al. 2020) when True; any
        number of root children when False.

    Returns
    -------
    ``int64 (n + 1,)`` heads with ``heads[0] == -1``. Ties are broken deterministically
    (towards lower node indices), so equal inputs give equal trees.

    Raises
    ------
    NoTree
        (a ``ValueError``) if no tree (with one root child, if required) uses only finite
        arcs.

    Examples
    --------
    >>> S = np.array([[0., 5., 1.], [0., 0., 4.], [0., 3., 0.]])
    >>> chu_liu_edmonds(S, single_root=True)
    array([-1,  0,  1])
    """
    heads, status = _kernels.mst_heads(check_scores(S), single_root)
    raise_for_status(status, "spanning tree")
    return heads


def eisner(S: np.ndarray, single_root: bool) -> np.ndarray:
    """Heads of the best projective tree of ``S`` rooted at 0 (Eisner 1996).

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)``, ``S[h, m]`` the score of arc h -> m, ``-inf`` for
        non-candidate arcs; column 0 and the diagonal are unused.
    single_root:
        Exactly one child of the root when True; any number when False.

    Returns
    -------
    ``int64 (n + 1,)`` heads with ``heads[0] == -1``; projective with the root at
    position 0 (no arc crosses another, root arcs included). Ties are broken
    deterministically.

    Raises
    ------
    NoTree
        (a ``ValueError``) if no such projective tree uses only finite arcs.

    Examples
    --------
    >>> S = np.array([[0., 5., 1.], [0., 0., 4.], [0., 3., 0.]])
    >>> eisner(S, single_root=True)
    array([-1,  0,  1])
    """
    heads, status = _kernels.eisner_heads(check_scores(S), single_root)
    raise_for_status(status, "projective tree")
    return heads


def round_to_tree(parts: Parts, arc_values: np.ndarray, single_root: bool) -> np.ndarray:
    """Round a (fractional) structure to the tree maximizing its arc values.

    ``arc_values`` holds one value per part (e.g. an LP solution ``z``); the ARC block is
    used as arc scores, non-candidate arcs are excluded, and :func:`chu_liu_edmonds`
    returns the heads (``docs/algorithms.md`` section 3). Deterministic: equal values
    give equal trees (ties go to lower head indices).
    """
    return chu_liu_edmonds(parts.arc_matrix(arc_values), single_root)


def fallback_result(parts: Parts, scores: np.ndarray, single_root: bool, stage: str,
                    stats: DecodeStats) -> DecodeResult:
    """What a decoder whose time limit ran out in ``stage`` returns: the maximum spanning
    tree under the arc scores (cheap and always a tree), with ``stats`` plus
    ``fallback=True`` and ``fallback_stage``."""
    heads = chu_liu_edmonds(parts.arc_matrix(scores), single_root)
    output = parts.from_heads(heads)
    return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                        stats=replace(stats, fallback=True, fallback_stage=stage))
