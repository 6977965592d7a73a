"""Numba kernels of dual message passing on the factor graph (:mod:`decoders.message_passing`).

State layout (one flat ``float64`` array of message differences ``delta_ci(1) -
delta_ci(0)``): ``state[c]`` factor c to its variable ``pair_i[c]``, ``state[P + c]``
factor c to ``pair_j[c]``, ``state[2P + a]`` the TREE factor to arc variable a.
"""

import numpy as np
from numba import njit

from ._factor_kernels import arc_matrix, tree_max_marginals

BIG = 1e6
"""Clip of a TREE max-marginal difference when an arc is in every tree or in none."""


@njit(cache=True)
def dlpw_sweeps(n, arc_h, arc_m, unary, pair_i, pair_j, pair_score, single_root,
                adj_ptr, adj_fac, adj_side, state, sweeps):
    """``sweeps`` passes of DLPW star updates (Meshi et al. 2010, Eq. 11) over the arc
    variables in order, exact TREE max-marginals (one arc's per update); returns the
    status (0: OK)."""
    A = arc_h.shape[0]
    P = pair_i.shape[0]
    gam = np.empty(adj_fac.shape[0] + 1)
    theta_t = np.empty(A)
    one_h = np.empty(1, dtype=np.int64)
    one_m = np.empty(1, dtype=np.int64)
    for _ in range(sweeps):
        for a in range(A):
            total = unary[a]
            start = adj_ptr[a]
            stop = adj_ptr[a + 1]
            for e in range(start, stop):
                c = adj_fac[e]
                k = adj_side[e]
                other = state[(1 - k) * P + c]
                g = max(pair_score[c] - other, 0.0) - max(-other, 0.0)
                gam[e - start] = g
                total += g
            for b in range(A):
                theta_t[b] = -state[2 * P + b]
            theta_t[a] = 0.0
            S = arc_matrix(n, arc_h, arc_m, theta_t)
            one_h[0] = arc_h[a]
            one_m[0] = arc_m[a]
            mm, heads, status = tree_max_marginals(S, one_h, one_m, single_root)
            if status != 0:
                return status
            if mm[0, 1] == -np.inf:
                gt = -BIG
            elif mm[0, 0] == -np.inf:
                gt = BIG
            else:
                gt = min(max(mm[0, 1] - mm[0, 0], -BIG), BIG)
            total += gt
            share = total / (1.0 + (stop - start) + 1.0)
            for e in range(start, stop):
                state[adj_side[e] * P + adj_fac[e]] = gam[e - start] - share
            state[2 * P + a] = gt - share
    return 0


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
