"""Arc marginals and the log-partition function by the matrix-tree theorem.

For the edge-factored distribution ``p(tree) ∝ exp(sum of its arc scores)`` over
arborescences rooted at 0, the partition function is the determinant of a Laplacian
and the arc marginals come from its inverse (Koo, Globerson, Carreras, Collins 2007,
both for any number of root children and for exactly one). This is the marginal oracle
of the TREE factor and the KL projection of the dual extragradient trainer
(``docs/algorithms.md`` section 5; at temperature eps, pass ``S / eps``), and it drives
arc pruning (section 6, :func:`prune_arcs`).
"""

from __future__ import annotations

import logging

import numpy as np

from . import _matrix_tree_kernels
from .trees import check_scores, chu_liu_edmonds

logger = logging.getLogger(__name__)

# Temperatures 1, 2, 4, ... tried by prune_arcs; at 2^1099 every finite score is below
# 1e-23 in magnitude, leaving the uniform distribution over the candidate trees.
_MAX_DOUBLINGS = 1100


class IllConditionedError(ValueError):
    """The Laplacian is too ill-conditioned in float64 for reliable marginals.

    Trees exist, but the scores span so wide a range (hundreds of nats between
    competing arcs) that the distribution is numerically a point mass; divide the scores
    by a temperature, or use the maximum spanning tree.
    """


def arc_marginals(S: np.ndarray, single_root: bool) -> tuple[np.ndarray, float]:
    """Arc marginals and log-partition of ``p(tree) ∝ exp(sum_{(h, m) in tree} S[h, m])``.

    With ``A[h, m] = exp(S[h, m])`` (``h = 0..n``, ``m = 1..n``), the Laplacian over the
    words is ``L[m, m] = sum_h A[h, m]`` and ``L[h, m] = -A[h, m]`` for ``h != m``. Then
    ``Z = det L`` and ``mu[h, m] = A[h, m] (Linv[m, m] - Linv[m, h])`` (``Linv[m, 0]``
    read as 0). For a single root child (Koo et al. 2007), the root is left out of the
    diagonal and the first row of ``L`` is replaced by the root scores ``A[0, :]``;
    then ``mu[0, m] = A[0, m] Linv[m, 1]`` and ``mu[h, m] = A[h, m] ([m != 1] Linv[m, m]
    - [h != 1] Linv[m, h])``.

    Every tree has one arc into each word, so subtracting ``c[m] = max_h S[h, m]`` from
    column m scales Z by ``exp(-sum c)`` and leaves the marginals alone: this keeps the
    exponentials in ``[0, 1]``. The log-determinant and the inverse come from LAPACK's
    partially pivoted LU. That is accurate to about 1e-12 for scores of standard
    deviation up to ~40 (checked against 80-digit arithmetic); beyond a few hundred
    nats between competing arcs float64 cannot represent the distribution, which the
    checks below detect (every word's marginals must sum to 1 within 1e-6). The loops are
    one numba call, :func:`decoders._matrix_tree_kernels.marginals`.

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores, ``-inf`` for non-candidate arcs; column 0
        and the diagonal are unused. For temperature eps, pass ``S / eps``.
    single_root:
        Distribution over trees with exactly one root child when True.

    Returns
    -------
    marginals, log_partition:
        ``float64 (n + 1, n + 1)`` with ``marginals[h, m] = p((h, m) in tree)`` (0 on
        column 0, the diagonal and ``-inf`` arcs; clipped to ``[0, 1]`` against
        rounding) and ``log Z``.

    Raises
    ------
    ValueError
        If no tree (with one root child, if required) uses only finite arcs.
    IllConditionedError
        (a ``ValueError``) if trees exist but the result is numerically unreliable.
    """
    S = check_scores(S)
    if S.shape[0] == 1:
        return np.zeros((1, 1)), 0.0
    marginals, log_z, error, status = _matrix_tree_kernels.marginals(S, single_root)
    if status == _matrix_tree_kernels.NO_HEAD:
        raise ValueError("no spanning tree rooted at 0: some word has no candidate head")
    if status == _matrix_tree_kernels.SINGULAR:
        chu_liu_edmonds(S, single_root)  # raises ValueError if no tree exists at all
        raise IllConditionedError("the Laplacian is numerically singular: the scores span "
                                  "too wide a range (divide them by a temperature)")
    if status == _matrix_tree_kernels.OFF:
        raise IllConditionedError(f"matrix-tree marginals are off by {error:.1e}: the scores "
                                  "span too wide a range (divide them by a temperature)")
    return marginals, float(log_z)


def prune_arcs(S: np.ndarray, single_root: bool, threshold: float = 1e-4,
               max_heads: int = 10) -> np.ndarray:
    """Candidate arcs after marginal-based pruning (``docs/algorithms.md`` section 6).

    For every word m, keep its head in the maximum spanning tree of ``S``
    (:func:`~decoders.trees.chu_liu_edmonds`, so the kept arcs always contain a tree, with
    one root child if ``single_root``) and the ``max_heads - 1`` other heads of largest
    marginal (:func:`arc_marginals`) among those with marginal above ``threshold``.
    Equal marginals go to the lower head index. Should the scores be too sharp for
    float64 (:class:`IllConditionedError`), the marginals are taken at the smallest
    temperature ``2^k`` that is reliable (logged at debug level): flatter than the model's
    distribution, so the pruning errs towards keeping arcs.

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores of a (first-order) model, ``-inf`` for arcs
        already excluded; those are never kept.
    single_root:
        Use the single-root distribution and tree.
    threshold:
        Minimum marginal probability of a kept non-MST arc.
    max_heads:
        At most this many heads per word (``>= 1``).

    Returns
    -------
    ``int64 (k, 2)`` arcs ``(h, m)`` in row-major order of ``(h, m)`` (the order of
    :func:`~decoders.parts.arc_parts`).
    """
    if max_heads < 1:
        raise ValueError(f"max_heads must be >= 1, got {max_heads}")
    S = check_scores(S)
    heads = chu_liu_edmonds(S, single_root)
    return _matrix_tree_kernels.keep_heads(reliable_marginals(S, single_root), heads,
                                           float(threshold), int(max_heads))


def reliable_marginals(S: np.ndarray, single_root: bool) -> np.ndarray:
    """:func:`arc_marginals` of ``S / 2^k`` for the smallest reliable ``k >= 0`` (the
    marginals of ``S`` themselves when float64 holds them; a hotter, flatter distribution
    only for scores hundreds of nats apart, logged at debug level)."""
    for k in range(_MAX_DOUBLINGS):
        try:
            marginals, _ = arc_marginals(np.ldexp(S, -k), single_root)
        except IllConditionedError:
            continue
        if k:
            logger.debug("arc marginals too sharp for float64; taken at temperature 2^%d", k)
        return marginals
    raise IllConditionedError("arc marginals unreliable even at temperature "
                              f"2^{_MAX_DOUBLINGS - 1}")
