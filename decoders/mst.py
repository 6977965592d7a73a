"""Maximum spanning arborescence: the exact arc-factored non-projective decoder.

Chu & Liu (1965) and Edmonds (1967), contracted densely as in Tarjan (1977); the
single-root constraint (exactly one word attached to the root, as Universal
Dependencies requires) is enforced exactly by the root-arc swaps of Gabow and Tarjan
(1984) as presented by Zmigrod, Vieira and Cotterell (2020). The loops are the numba kernel
:func:`decoders._kernels.mst_heads`. The same routine rounds an LP solution to a tree
(``docs/algorithms.md`` section 3) and is the MAP oracle of the TREE factor (section 5).
"""

from __future__ import annotations

import time

import numpy as np

from . import _kernels
from .base import Budget, Certificate, DecodeResult, Decoder, ScoredTree, register, tree_result
from .parts import Parts


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


def round_to_tree(parts: Parts, arc_values: np.ndarray, single_root: bool) -> np.ndarray:
    """Round a (fractional) structure to the tree maximizing its arc values.

    ``arc_values`` holds one value per part (e.g. an LP solution ``z``); the ARC block is
    used as arc scores, non-candidate arcs are excluded, and :func:`chu_liu_edmonds`
    returns the heads (``docs/algorithms.md`` section 3). Deterministic: equal values
    give equal trees (ties go to lower head indices).
    """
    return chu_liu_edmonds(parts.arc_matrix(arc_values), single_root)


@register("mst")
class MSTDecoder(Decoder):
    """Exact arc-factored non-projective decoding by maximum spanning arborescence.

    Only the ARC block of ``scores`` steers the search; the returned ``value`` is the
    full ``scores @ output`` of the tree (higher-order parts filled in by
    :meth:`Parts.from_heads`), so on higher-order parts this is the first-order
    approximation, not the optimum.
    """

    gives_kbest = True
    honors_constraints = True

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = chu_liu_edmonds(parts.arc_matrix(scores), self.single_root)
        elapsed = time.perf_counter() - start
        output = parts.from_heads(heads)
        return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                            stats={"time_decode": elapsed})

    def certificate(self, result: DecodeResult) -> Certificate:
        """``"mst"``: the maximum spanning tree is optimal for arc-factored scores."""
        return Certificate("mst", result.value)

    def decode_arcs(self, S: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = chu_liu_edmonds(S, self.single_root)
        return tree_result(S, heads, {"time_decode": time.perf_counter() - start})

    def decode_labeled(self, parts: Parts, scores: np.ndarray, problem):
        """Exact labeled decoding under the ARC block of ``scores``: branch and bound on
        the constraints with the maximum spanning tree as its bound
        (:mod:`decoders.labeled_search`). Out of nodes, the best projective tree that
        satisfies the constraints (the same search over Eisner's trees) with the best
        open bound (``stats["fallback"]``); a sentence neither settles goes to the
        labeled ILP (:func:`~decoders.labeled.solve_labeled`;
        ``stats["search_gave_up"]``); all within :attr:`time_limit`."""
        from .labeled_search import (mst_relaxation, projective_restriction,
                                     search_or_program)

        return search_or_program(parts, scores, problem,
                                 mst_relaxation(parts, self.single_root),
                                 Budget(self.time_limit), single_root=self.single_root, relaxed=False,
                                 restriction=projective_restriction(parts,
                                                                    self.single_root))

    def kbest(self, parts: Parts, scores: np.ndarray, k: int) -> list[ScoredTree]:
        """The ``k`` best trees under the ARC block of ``scores``
        (:func:`decoders.kbest.kbest_arborescences`); their scores count the arcs only,
        which is the model's score for arc-factored parts."""
        return self.kbest_arcs(parts.arc_matrix(scores), k)

    def kbest_arcs(self, S: np.ndarray, k: int) -> list[ScoredTree]:
        from .kbest import kbest_arborescences      # kbest builds on this module

        return kbest_arborescences(S, k, self.single_root)


def fallback_result(parts: Parts, scores: np.ndarray, single_root: bool, stage: str,
                    stats: dict) -> DecodeResult:
    """What a decoder whose time limit ran out in ``stage`` returns: the maximum spanning
    tree under the arc scores (cheap and always a tree), with ``stats`` plus
    ``fallback=True`` and ``fallback_stage``."""
    result = MSTDecoder(single_root=single_root).decode(parts, scores)
    result.stats = {**stats, "fallback": True, "fallback_stage": stage}
    return result
