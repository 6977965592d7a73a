"""Numba kernels of :mod:`decoders.matrix_tree`: arc marginals by the matrix-tree theorem
and the choice of candidate heads for pruning, one call per sentence (the numpy version
cost about 0.3 ms a sentence in calls, most of the pruner's time after its arc scores).
"""

import numpy as np
from numba import njit

from ._kernels import OK

NO_HEAD = 1
"""Some word has no finite candidate head."""
SINGULAR = 2
"""The Laplacian's determinant is not positive and finite in float64."""
OFF = 3
"""The marginals of some word do not sum to 1 within :data:`SUM_TOLERANCE`."""
SUM_TOLERANCE = 1e-6


@njit(cache=True)
def marginals(S, single_root):
    """``(mu, log_z, error, status)`` for ``p(tree) ∝ exp(sum S[h, m])``
    (:func:`decoders.matrix_tree.arc_marginals` states the method); ``error`` is the
    largest deviation of a word's marginals (and, with ``single_root``, of the root's)
    from summing to 1, and ``status`` :data:`~decoders._kernels.OK`, :data:`NO_HEAD`,
    :data:`SINGULAR` or :data:`OFF` (``mu`` clipped to [0, 1] only when OK)."""
    N = S.shape[0]
    n = N - 1
    mu = np.zeros((N, N))
    shift = np.full(n, -np.inf)
    for m in range(1, N):
        for h in range(N):
            if h != m and S[h, m] > shift[m - 1]:
                shift[m - 1] = S[h, m]
        if shift[m - 1] == -np.inf:
            return mu, 0.0, 0.0, NO_HEAD
    A = np.zeros((N, n))      # A[h, m - 1] = exp(S[h, m] - shift[m - 1])
    for m in range(1, N):
        for h in range(N):
            if h != m:
                A[h, m - 1] = np.exp(S[h, m] - shift[m - 1])
    L = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            L[i, j] = -A[i + 1, j]
    for j in range(n):
        column = 0.0
        for i in range(1, N):
            column += A[i, j]
        L[j, j] = column if single_root else column + A[0, j]
    if single_root:
        for j in range(n):
            L[0, j] = A[0, j]
    sign, logdet = np.linalg.slogdet(L)
    if not (sign > 0.0 and np.isfinite(logdet)):
        return mu, 0.0, 0.0, SINGULAR
    Linv = np.linalg.inv(L)
    for m in range(1, N):
        diag = 0.0 if single_root and m == 1 else Linv[m - 1, m - 1]
        mu[0, m] = A[0, m - 1] * (Linv[m - 1, 0] if single_root else diag)
        for h in range(1, N):
            cross = 0.0 if single_root and h == 1 else Linv[m - 1, h - 1]
            mu[h, m] = A[h, m - 1] * (diag - cross)
    error = 0.0
    lowest = 0.0
    for m in range(1, N):
        total = 0.0
        for h in range(N):
            total += mu[h, m]
            lowest = min(lowest, mu[h, m])
        if not abs(total - 1.0) <= error:     # NaN too
            error = abs(total - 1.0)
    if single_root:
        total = 0.0
        for m in range(1, N):
            total += mu[0, m]
        if not abs(total - 1.0) <= error:
            error = abs(total - 1.0)
    if not (error <= SUM_TOLERANCE) or lowest < -SUM_TOLERANCE:
        return mu, 0.0, error, OFF
    for h in range(N):
        for m in range(N):
            mu[h, m] = min(1.0, max(0.0, mu[h, m]))
    return mu, logdet + shift.sum(), error, OK


@njit(cache=True)
def keep_heads(mu, heads, threshold, max_heads):
    """``int64 (k, 2)`` arcs ``(h, m)`` in row-major order: for every word m its head in
    the tree ``heads`` and the ``max_heads - 1`` other heads of largest marginal ``mu[h,
    m]`` above ``threshold`` (equal marginals: the lower head first)."""
    N = mu.shape[0]
    keep = np.zeros((N, N), dtype=np.bool_)
    count = 0
    for m in range(1, N):
        keep[heads[m], m] = True
        count += 1
        for _ in range(max_heads - 1):
            best = -1
            for h in range(N):
                if (not keep[h, m] and mu[h, m] > max(threshold, 0.0)
                        and (best < 0 or mu[h, m] > mu[best, m])):
                    best = h
            if best < 0:
                break
            keep[best, m] = True
            count += 1
    arcs = np.empty((count, 2), dtype=np.int64)
    k = 0
    for h in range(N):
        for m in range(1, N):
            if keep[h, m]:
                arcs[k, 0] = h
                arcs[k, 1] = m
                k += 1
    return arcs
