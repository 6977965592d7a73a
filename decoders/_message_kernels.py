"""Numba kernels of dual message passing on the factor graph (:mod:`decoders.message_passing`).

State layout (one flat ``float64`` array of message differences ``delta_ci(1) -
delta_ci(0)``): ``state[c]`` factor c to its variable ``pair_i[c]``, ``state[P + c]``
factor c to ``pair_j[c]``, ``state[2P + a]`` the TREE factor to arc variable a.
"""

import numpy as np
from numba import njit

from ._factor_kernels import arc_matrix, soft_max2, tree_max_marginals
from ._kernels import OK

BIG = 1e6
"""Clip of a TREE max-marginal difference when an arc is in every tree or in none."""


@njit(cache=True)
def dlpw_sweeps(n, arc_h, arc_m, unary, pair_score, single_root, adj_ptr, adj_fac, adj_side,
                state, sweeps):
    """``sweeps`` passes of DLPW star updates (Meshi et al. 2010, Eq. 11) over the arc
    variables in order, exact TREE max-marginals (one arc's per update); returns the
    status (0: OK)."""
    A = arc_h.shape[0]
    P = pair_score.shape[0]
    gam = np.empty(adj_fac.shape[0] + 1)
    for _ in range(sweeps):
        for a in range(A):
            total = unary[a] + _gather(a, state, pair_score, adj_ptr, adj_fac, adj_side, 0.0,
                                       gam)
            gt, status = _hard_tree_message(n, arc_h, arc_m, state, a, single_root)
            if status != OK:
                return status
            _scatter(a, state, P, adj_ptr, adj_fac, adj_side, gam, gt, total)
    return OK


@njit(cache=True)
def incoming(unary, pair_i, pair_j, state):
    """``float64 (A,)``: ``theta_a + sum_c delta_ca`` (each arc variable's belief score)."""
    A = unary.shape[0]
    P = pair_i.shape[0]
    out = unary.copy()
    for c in range(P):
        out[pair_i[c]] += state[c]
        out[pair_j[c]] += state[P + c]
    for a in range(A):
        out[a] += state[2 * P + a]
    return out


@njit(cache=True)
def _gather(a, state, pair_score, adj_ptr, adj_fac, adj_side, t, gam):
    """Star update at arc variable a, first half: ``gamma_ca(1) - gamma_ca(0)`` of each
    pairwise factor c at a (the (soft) max over the other variable's state of the
    factor's score minus that variable's message) into ``gam``; returns their sum."""
    P = pair_score.shape[0]
    start = adj_ptr[a]
    total = 0.0
    for e in range(start, adj_ptr[a + 1]):
        c = adj_fac[e]
        other = state[(1 - adj_side[e]) * P + c]
        g = soft_max2(pair_score[c] - other, 0.0, t) - soft_max2(-other, 0.0, t)
        gam[e - start] = g
        total += g
    return total


@njit(cache=True)
def _scatter(a, state, n_pairs, adj_ptr, adj_fac, adj_side, gam, gt, total):
    """Star update, second half (Eq. 11; Hazan and Urtasun's Lemma 3 with counting
    numbers 1): each factor at a, the TREE's included, gets its gamma minus an equal
    share of ``theta_a`` plus all the gammas (``total`` holds ``theta_a`` plus the
    pairwise ones); returns the TREE factor's new message to a."""
    start = adj_ptr[a]
    stop = adj_ptr[a + 1]
    share = (total + gt) / (2.0 + (stop - start))
    for e in range(start, stop):
        state[adj_side[e] * n_pairs + adj_fac[e]] = gam[e - start] - share
    state[2 * n_pairs + a] = gt - share
    return gt - share


@njit(cache=True)
def _clip(x):
    return min(max(x, -BIG), BIG)


@njit(cache=True)
def _hard_tree_message(n, arc_h, arc_m, state, a, single_root):
    """``max tree with a - max tree without a`` under the TREE factor's scores
    ``-state[2P + b]`` for the other arcs (a's own score left out), clipped to
    ``[-BIG, BIG]``; the status of the tree search."""
    A = arc_h.shape[0]
    P = (state.shape[0] - A) // 2
    theta = np.empty(A)
    for b in range(A):
        theta[b] = -state[2 * P + b]
    theta[a] = 0.0
    S = arc_matrix(n, arc_h, arc_m, theta)
    one_h = np.empty(1, dtype=np.int64)
    one_m = np.empty(1, dtype=np.int64)
    one_h[0] = arc_h[a]
    one_m[0] = arc_m[a]
    mm, _, status = tree_max_marginals(S, one_h, one_m, single_root)
    if mm[0, 1] == -np.inf:
        return -BIG, status
    if mm[0, 0] == -np.inf:
        return BIG, status
    return _clip(mm[0, 1] - mm[0, 0]), status


RESCALE = 30.0
"""An arc's log-weight this far above its word's column shift rebuilds the inverse
(instead of a rank-one update that would lose the column's other weights)."""


@njit(cache=True)
def _rebuild(n, arc_h, arc_m, logw, always, never, single_root, shift, weight):
    """The inverse of the (single-root) Laplacian of Koo et al. (2007) over the free arcs'
    weights ``exp(logw[a] - shift[m])`` (``shift[m]``: the largest ``logw`` into m; an arc
    in every tree weighs 1, one in no tree 0: neither changes the other arcs' marginals),
    written to ``weight``; whether it is reliable (every word's marginals sum to 1)."""
    A = arc_h.shape[0]
    shift[:] = -np.inf
    for a in range(A):
        if not (always[a] or never[a]):
            shift[arc_m[a]] = max(shift[arc_m[a]], logw[a])
    L = np.zeros((n, n))
    for a in range(A):
        m = arc_m[a]
        if always[a]:
            weight[a] = 1.0
        elif never[a]:
            weight[a] = 0.0
        else:
            weight[a] = np.exp(logw[a] - shift[m])
        _add_arc(L, arc_h[a], m, weight[a], single_root)
    Linv, ok = _inverse(L)
    if not ok:
        return Linv, False
    total = np.zeros(n + 1)
    for a in range(A):
        total[arc_m[a]] += _marginal(Linv, arc_h[a], arc_m[a], weight[a], single_root)
    for m in range(1, n + 1):
        if not abs(total[m] - 1.0) <= 1e-6:
            return Linv, False
    return Linv, True


@njit(cache=True)
def _inverse(L):
    """Gauss-Jordan inverse with partial pivoting; whether L was invertible (numba's
    ``np.linalg.inv`` raises instead, from inside the kernel)."""
    n = L.shape[0]
    M = L.copy()
    Linv = np.eye(n)
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(M[i, k]) > abs(M[p, k]):
                p = i
        if not abs(M[p, k]) > 0.0:
            return Linv, False
        if p != k:
            for j in range(n):
                M[k, j], M[p, j] = M[p, j], M[k, j]
                Linv[k, j], Linv[p, j] = Linv[p, j], Linv[k, j]
        f = 1.0 / M[k, k]
        for j in range(n):
            M[k, j] *= f
            Linv[k, j] *= f
        for i in range(n):
            if i != k and M[i, k] != 0.0:
                g = M[i, k]
                for j in range(n):
                    M[i, j] -= g * M[k, j]
                    Linv[i, j] -= g * Linv[k, j]
    return Linv, True


@njit(cache=True)
def _entries(h, m, single_root):
    """The rows of the Laplacian's column ``m - 1`` that arc (h, m)'s weight enters with
    sign + and with sign - (-1: none). Single root: row 0 holds the root arcs' weights
    in place of word 1's in-weights (Koo et al. 2007)."""
    j = m - 1
    if h == 0:
        return (0 if single_root else j), -1
    return (-1 if single_root and j == 0 else j), (-1 if single_root and h == 1 else h - 1)


@njit(cache=True)
def _add_arc(L, h, m, w, single_root):
    plus, minus = _entries(h, m, single_root)
    if plus >= 0:
        L[plus, m - 1] += w
    if minus >= 0:
        L[minus, m - 1] -= w


@njit(cache=True)
def _marginal(Linv, h, m, w, single_root):
    """``p((h, m) in tree) = w d log det L / d w`` from the Laplacian's inverse."""
    plus, minus = _entries(h, m, single_root)
    out = 0.0
    if plus >= 0:
        out += Linv[m - 1, plus]
    if minus >= 0:
        out -= Linv[m - 1, minus]
    return w * out


ROUNDING = 1e-15
"""Assumed relative rounding of an entry of the Laplacian's inverse."""

RELIABLE = 1e-6
"""Largest relative error (from that rounding, through the cancellation in
``Linv[m, h'] - Linv[m, h]``) of a marginal whose log is used."""


@njit(cache=True)
def _log_odds(Linv, arc_h, arc_m, weight, col_ptr, col_arc, a, single_root):
    """``log(mu_a / (1 - mu_a))``, with ``1 - mu_a`` summed over the other arcs into a's
    word (no cancellation near ``mu_a = 1``); NaN when either side is not reliable to
    :data:`RELIABLE` given the inverse's rounding."""
    m = arc_m[a]
    mu = 0.0
    rest = 0.0
    err_mu = 0.0
    err_rest = 0.0
    for e in range(col_ptr[m], col_ptr[m + 1]):
        b = col_arc[e]
        plus, minus = _entries(arc_h[b], m, single_root)
        value = 0.0
        size = 0.0
        if plus >= 0:
            value += Linv[m - 1, plus]
            size += abs(Linv[m - 1, plus])
        if minus >= 0:
            value -= Linv[m - 1, minus]
            size += abs(Linv[m - 1, minus])
        if b == a:
            mu = weight[b] * value
            err_mu = weight[b] * size * ROUNDING
        else:
            rest += weight[b] * value
            err_rest += weight[b] * size * ROUNDING
    if mu > err_mu / RELIABLE and rest > err_rest / RELIABLE:
        return np.log(mu) - np.log(rest)
    return np.nan


@njit(cache=True)
def hu_sweeps(n, arc_h, arc_m, unary, pair_score, single_root, adj_ptr, adj_fac, adj_side,
              always, never, state, sweeps, t):
    """``sweeps`` passes of Hazan and Urtasun's (2010) block updates at temperature
    ``t > 0`` over the arc variables in order (counting numbers 1, Lemma 3 in the
    form of the star update). The TREE factor's message to arc a is
    ``t logit(mu_a) - theta_Ta`` (``docs/algorithms.md`` 5b): the log-odds of a in the
    tree distribution without a's own TREE score, read from the Laplacian's inverse,
    which each update keeps current by a Sherman-Morrison rank-one update (one weight
    changes: O(n^2)), rebuilt once per sweep against drift, when a weight leaves its
    column's scale, or when the update is ill-conditioned. Where the inverse is unreliable
    (scores spread over hundreds of nats) the hard max-marginals stand in (the limit
    ``t -> 0``). Returns the status (0: OK)."""
    A = arc_h.shape[0]
    P = pair_score.shape[0]
    gam = np.empty(adj_fac.shape[0] + 1)
    logw = np.empty(A)
    weight = np.empty(A)
    shift = np.empty(n + 1)
    x = np.empty(n)
    col_ptr = np.zeros(n + 2, dtype=np.int64)  # the arcs into each word
    for b in range(A):
        col_ptr[arc_m[b] + 1] += 1
    col_ptr = np.cumsum(col_ptr)
    col_arc = np.argsort(arc_m, kind="mergesort")
    for _ in range(sweeps):
        for b in range(A):
            logw[b] = -state[2 * P + b] / t
        Linv, valid = _rebuild(n, arc_h, arc_m, logw, always, never, single_root, shift,
                               weight)
        for a in range(A):
            total = unary[a] + _gather(a, state, pair_score, adj_ptr, adj_fac, adj_side, t,
                                       gam)
            if always[a]:
                gt = BIG
            elif never[a]:
                gt = -BIG
            else:
                odds = _log_odds(Linv, arc_h, arc_m, weight, col_ptr, col_arc, a,
                                 single_root) if valid else np.nan
                if np.isfinite(odds):
                    gt = _clip(t * odds + state[2 * P + a])
                else:
                    gt, status = _hard_tree_message(n, arc_h, arc_m, state, a, single_root)
                    if status != OK:
                        return status
            gt = _scatter(a, state, P, adj_ptr, adj_fac, adj_side, gam, gt, total)
            if always[a] or never[a]:
                continue
            logw[a] = -gt / t
            h = arc_h[a]
            m = arc_m[a]
            if not valid or logw[a] - shift[m] > RESCALE:
                Linv, valid = _rebuild(n, arc_h, arc_m, logw, always, never, single_root,
                                       shift, weight)
                continue
            change = np.exp(logw[a] - shift[m]) - weight[a]
            # L' = L + u e_j^T, u = change (e_plus - e_minus); x = Linv u
            plus, minus = _entries(h, m, single_root)
            j = m - 1
            for i in range(n):
                x[i] = change * ((Linv[i, plus] if plus >= 0 else 0.0)
                                 - (Linv[i, minus] if minus >= 0 else 0.0))
            denom = 1.0 + x[j]
            if not (1e-6 < abs(denom) < 1e6):
                Linv, valid = _rebuild(n, arc_h, arc_m, logw, always, never, single_root,
                                       shift, weight)
                continue
            row = Linv[j].copy()
            for i in range(n):
                f = x[i] / denom
                for k in range(n):
                    Linv[i, k] -= f * row[k]
            weight[a] += change
    return OK
