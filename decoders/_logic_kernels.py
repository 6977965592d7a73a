"""Numba kernels of the full-order factors of AD3: MAP oracles and the active-set QP.

The full-order factor graph (issue 13) adds to the order-2 graph of
:mod:`decoders.factor_graph` factors whose marginal polytopes have too many vertices to
list and no closed-form projection: VALENCY (a head's children on one side, with the
number of them scored by bins; its polytope is the convex hull of
:mod:`decoders.formulation`'s valency program, Balas 1998) and NOT-ALL (``y = 1`` iff
some input is 0: the "non-projective span" of a non-projective-arc part, ``y = OR_j NOT
p_hj`` over the ancestry variables of the words the arc spans), and small ones whose
states are listed: IMPLY (``x <= y``), NAND (``x + y <= 1``) and EQUAL-IF (``|x - y| <=
1 - z``: the tree recursion of ancestry, ``p_hj = p_hk`` when ``k -> j``). Every one of
them is touched only through its MAP oracle (:func:`factor_map`), as AD3's generic
factors are (Martins et al., JMLR 2015, section 5.2, Algorithm 2).

A factor has ``L`` links (the binary variables it shares with other factors) and may
score its own, unshared variables (VALENCY's bins): a vertex of its polytope is a 0/1
vector ``s`` over the links plus that own score ``e(s)``. The QP of an AD3 iteration,
``max sum_i beta_i (target . s_i + e(s_i) / eta) - ||sum_i beta_i s_i - target||^2 / 2``
over the simplex of vertex weights, is solved by the active-set method of
:func:`decoders._ad3_kernels.tree_qp` with the same KKT helpers; the own scores only add
``e(s_i) / eta`` to each vertex's linear term (the own variables are not shared, so they
carry no quadratic penalty, as a pairwise factor's product in ``pair_qp``).
"""

import numpy as np
from numba import njit

from ._ad3_kernels import _insert, _kkt_inverse, _kkt_solve, _remove, _schur

VALENCY = 0
"""``data``: the bin scores ``t_0 .. t_K`` (bin K: K or more children)."""
NOT_ALL = 1
"""Links: the inputs ``x_1 .. x_J`` then the output ``y``; ``y = 1`` iff some ``x_j = 0``."""
IMPLY = 2
"""Links ``(x, y)``: ``x <= y``."""
NAND = 3
"""Links ``(x, y)``: ``x + y <= 1``."""
EQUAL_IF = 4
"""Links ``(x, y, z)``: ``x == y`` when ``z == 1``."""


@njit(cache=True)
def factor_map(kind, theta, data, state):
    """The MAP of a factor: the vertex ``s`` maximizing ``theta . s + e(s)`` (``theta``
    ``(L,)`` over the links, ``e`` the own score from ``data``). ``state`` (``int64
    (L,)``) receives ``s``; returns ``(theta . s + e(s), e(s))``."""
    L = theta.shape[0]
    state[:] = 0
    if kind == VALENCY:
        order = np.argsort(-theta)
        K = data.shape[0] - 1
        best, best_k, running, positive = -np.inf, 0, 0.0, 0.0
        for i in range(L):
            positive += max(0.0, theta[i])
        for k in range(min(K, L) + 1):
            if k > 0:
                running += theta[order[k - 1]]
                positive -= max(0.0, theta[order[k - 1]])
            value = running + data[k] if k < K else running + positive + data[K]
            if value > best:
                best, best_k = value, k
        for i in range(best_k):
            state[order[i]] = 1
        if best_k == K:
            for i in range(K, L):
                if theta[order[i]] > 0.0:
                    state[order[i]] = 1
        return best, data[best_k]
    if kind == NOT_ALL:
        J = L - 1
        all_ones = 0.0
        positive, least, worst = 0.0, np.inf, -1
        for j in range(J):
            all_ones += theta[j]
            positive += max(0.0, theta[j])
            if theta[j] < least:
                least, worst = theta[j], j
        some_zero = theta[J] + positive - max(0.0, least)
        if J > 0 and some_zero > all_ones:
            for j in range(J):
                state[j] = 1 if theta[j] > 0.0 else 0
            state[worst] = 0
            state[J] = 1
            return some_zero, 0.0
        for j in range(J):
            state[j] = 1
        return all_ones, 0.0
    # the small factors: their states listed
    best = -np.inf
    chosen = 0
    for code in range(1 << L):
        if not _allowed(kind, code):
            continue
        value = 0.0
        for i in range(L):
            if code >> i & 1:
                value += theta[i]
        if value > best:
            best, chosen = value, code
    for i in range(L):
        state[i] = chosen >> i & 1
    return best, 0.0


@njit(cache=True)
def _allowed(kind, code):
    """Whether the 0/1 vector with bits ``code`` (link i: bit i) is a state of ``kind``."""
    x = code & 1
    y = code >> 1 & 1
    if kind == IMPLY:
        return x <= y
    if kind == NAND:
        return x + y <= 1
    return (code >> 2 & 1) == 0 or x == y       # EQUAL_IF


@njit(cache=True)
def factor_qp(kind, data, target, inv_eta, act, own, beta, gram, minv, k, max_iter, q):
    """Projection of ``target`` (``(L,)``) onto the factor's marginal polytope, with its
    own scores weighted by ``inv_eta``, by the active-set method (module docstring).

    ``act[:k]`` (``int64 (cap, L)``) are the active vertices, ``own[:k]`` their own
    scores, ``beta[:k]`` their weights; ``gram`` and ``minv`` as in
    :func:`decoders._ad3_kernels.tree_qp`, all kept from call to call (a warm start).
    ``q`` receives the projection. Returns the new ``k``."""
    L = target.shape[0]
    cap = act.shape[0]
    state = np.empty(L, dtype=np.int64)
    if k == 0:
        _, e = factor_map(kind, target, data * inv_eta, state)
        act[0, :] = state
        own[0] = e / inv_eta if inv_eta > 0.0 else 0.0
        beta[0] = 1.0
        gram[0, 0] = state.sum()
        k = 1
        _kkt_inverse(k, gram, minv)
    scores = np.empty(cap)
    z = np.empty(cap + 1)
    sol = np.empty(cap + 1)
    row = np.empty(cap)
    grad = np.empty(L)
    tau = 0.0
    changed = True
    for _ in range(max_iter):
        if changed:
            for i in range(k):
                total = own[i] * inv_eta
                for a in range(L):
                    total += act[i, a] * target[a]
                scores[i] = total
            _kkt_solve(k, gram, minv, scores, z)
            tau = z[0]
            blocking = -1
            alpha = 1.0
            for i in range(k):
                if z[i + 1] < 0.0:
                    step = beta[i] / (beta[i] - z[i + 1])
                    if step < alpha:
                        alpha = step
                        blocking = i
            if blocking < 0:
                for i in range(k):
                    beta[i] = z[i + 1]
                changed = False
            else:
                for i in range(k):
                    beta[i] = max(0.0, (1.0 - alpha) * beta[i] + alpha * z[i + 1])
                own[blocking] = own[k - 1]
                k = _remove(blocking, k, act, beta, gram, minv)
                continue
        _combination(act, beta, k, q)
        for a in range(L):
            grad[a] = target[a] - q[a]
        value, e = factor_map(kind, grad, data * inv_eta, state)
        if value <= tau + 1e-12 * max(1.0, abs(tau)):
            return k
        size = 0
        known = False
        for i in range(k):
            shared = 0
            same = True
            for a in range(L):
                shared += act[i, a] * state[a]
                same &= act[i, a] == state[a]
            row[i] = shared
            known |= same
        for a in range(L):
            size += state[a]
        if known or k == cap:
            return k
        schur = _schur(k, size, gram, minv, row, sol)
        new_weight = 0.0
        if schur <= 1e-9 * max(1, size):
            out = -1
            t = np.inf
            for i in range(k):
                c = sol[i + 1]
                if c > 1e-12 and beta[i] / c < t:
                    t = beta[i] / c
                    out = i
            if out < 0:
                return k
            for i in range(k):
                beta[i] = max(0.0, beta[i] - t * sol[i + 1])
            new_weight = t
            own[out] = own[k - 1]
            k = _remove(out, k, act, beta, gram, minv)
            for i in range(k):
                shared = 0
                for a in range(L):
                    shared += act[i, a] * state[a]
                row[i] = shared
            schur = _schur(k, size, gram, minv, row, sol)
        own[k] = e / inv_eta if inv_eta > 0.0 else 0.0
        k = _insert(k, state, row, sol, schur, size, act, beta, new_weight, gram, minv)
        changed = True
    _combination(act, beta, k, q)
    return k


@njit(cache=True, _nrt=False)
def _combination(act, beta, k, q):
    """``q`` = ``sum_i beta[i] act_i`` over the ``k`` active vertices."""
    q[:] = 0.0
    for i in range(k):
        for a in range(q.shape[0]):
            q[a] += beta[i] * act[i, a]
