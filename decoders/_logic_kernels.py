"""Numba kernels of the full-order factors of AD3: MAP oracles and the active-set QP.

The full-order factor graph (issue 13) adds to the order-2 graph of
:mod:`decoders.factor_graph` factors whose marginal polytopes have too many vertices to
list and no closed-form projection: VALENCY (a head's children on one side, with the
number of them scored by bins; its polytope is the convex hull of
:mod:`decoders.formulation`'s valency program, Balas 1998) and NOT-ALL (``y = 1`` iff
some input is 0: the "non-projective span" of a non-projective-arc part, ``y = OR_j NOT
p_hj`` over the ancestry variables of the words the arc spans), and small ones whose
states are listed: IMPLY (``x <= y``), NAND (``x + y <= 1``) and EQUAL-IF (``|x - y| <=
1 - z``: the tree recursion of ancestry, ``p_hj = p_hk`` when ``k -> j``), and the
GRANDPARENT STAR of a word h (its one head g, any set of its children M, the
grandparent parts ``(g, h, m)`` scored as products: the grandparent head automaton of
Koo et al. 2010 and TurboParser without the siblings). Every one of
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

from ._ad3_kernels import (DUAL_EVERY, _insert, _kkt_inverse, _kkt_step, _remove, _schur,
                           _swap_weight, adapted_eta, arc_index, arcs_dual_value,
                           center_multipliers, collect_order2, price_order2,
                           project_order2, tree_active_set)
from ._kernels import OK

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
GRAND_STAR = 16
"""Kind ``GRAND_STAR + G``: links the word's ``G`` candidate head arcs ``z_gh`` then its
``M`` candidate child arcs ``z_hm``; exactly one head arc is 1; ``data`` the ``(G, M)``
grandparent scores ``w_gm`` (row-major; 0 where there is no part), scoring ``w_gm`` when
``z_gh = z_hm = 1``. Its polytope is the hull of ``(e_g, s, e_g s^T)``: with the products,
``sum_g u_gm = z_hm`` and ``0 <= u_gm <= z_gh`` (a disjunction over the head, Balas),
which the pairwise factors of the same parts do not imply."""


@njit(cache=True)
def factor_map(kind, theta, data, scale, state):
    """The MAP of a factor: the vertex ``s`` maximizing ``theta . s + scale e(s)``
    (``theta`` ``(L,)`` over the links, ``e`` the own score from ``data``). ``state``
    (``int64 (L,)``) receives ``s``; returns ``(theta . s + scale e(s), e(s))``."""
    L = theta.shape[0]
    state[:] = 0
    if kind >= GRAND_STAR:
        # per head g: its arc and every child whose arc and product gain
        G = kind - GRAND_STAR
        M = L - G
        best, best_g = -np.inf, 0
        for g in range(G):
            value = theta[g]
            for m in range(M):
                value += max(0.0, theta[G + m] + scale * data[g * M + m])
            if value > best:
                best, best_g = value, g
        state[best_g] = 1
        own = 0.0
        for m in range(M):
            w = data[best_g * M + m]
            if theta[G + m] + scale * w > 0.0:
                state[G + m] = 1
                own += w
        return best, own
    if kind == VALENCY:
        # the k best links for k = 0 .. K, found one by one (K is a handful, and a
        # sort of all L links allocated on every call): state[i] = the rank of link i
        K = data.shape[0] - 1
        best, best_k, running, positive = -np.inf, 0, 0.0, 0.0
        for i in range(L):
            positive += max(0.0, theta[i])
        for k in range(min(K, L) + 1):
            if k > 0:
                top = -1
                for i in range(L):
                    if state[i] == 0 and (top < 0 or theta[i] > theta[top]):
                        top = i
                state[top] = k
                running += theta[top]
                positive -= max(0.0, theta[top])
            value = running + scale * data[k] if k < K else \
                running + positive + scale * data[K]
            if value > best:
                best, best_k = value, k
        for i in range(L):
            rank = state[i]
            state[i] = 1 if 0 < rank <= best_k or (
                rank == 0 and best_k == K and theta[i] > 0.0) else 0
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
def factor_qp(kind, data, target, inv_eta, act, own, beta, gram, minv, k, max_iter, q,
              state, work):
    """Projection of ``target`` (``(L,)``) onto the factor's marginal polytope, with its
    own scores weighted by ``inv_eta``, by the active-set method (module docstring).

    ``act[:k]`` (``int64 (cap, L)``) are the active vertices, ``own[:k]`` their own
    scores, ``beta[:k]`` their weights; ``gram`` and ``minv`` as in
    :func:`decoders._ad3_kernels.tree_qp`, all kept from call to call (a warm start).
    ``q`` receives the projection; ``state`` (``int64``, at least ``L``) and ``work``
    (``float64``, at least ``4 cap + 3 + L``) are scratch. Returns the new ``k``."""
    L = target.shape[0]
    cap = act.shape[0]
    state = state[:L]
    scores = work[:cap]
    z = work[cap:2 * cap + 1]
    sol = work[2 * cap + 1:3 * cap + 2]
    row = work[3 * cap + 2:4 * cap + 2]
    grad = work[4 * cap + 2:4 * cap + 2 + L]
    if k == 0:
        _, e = factor_map(kind, target, data, inv_eta, state)
        act[0, :] = state
        own[0] = e
        beta[0] = 1.0
        gram[0, 0] = state.sum()
        k = 1
        _kkt_inverse(k, gram, minv)
    tau = 0.0
    changed = True
    for _ in range(max_iter):
        if changed:
            for i in range(k):
                total = own[i] * inv_eta
                for a in range(L):
                    total += act[i, a] * target[a]
                scores[i] = total
            blocking = _kkt_step(k, gram, minv, scores, z, beta)
            tau = z[0]
            if blocking >= 0:
                own[blocking] = own[k - 1]
                k = _remove(blocking, k, act, beta, gram, minv)
                continue
            changed = False
        _combination(act, beta, k, q)
        for a in range(L):
            grad[a] = target[a] - q[a]
        value, e = factor_map(kind, grad, data, inv_eta, state)
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
            out, new_weight = _swap_weight(k, beta, sol)
            if out < 0:
                return k
            own[out] = own[k - 1]
            k = _remove(out, k, act, beta, gram, minv)
            for i in range(k):
                shared = 0
                for a in range(L):
                    shared += act[i, a] * state[a]
                row[i] = shared
            schur = _schur(k, size, gram, minv, row, sol)
        own[k] = e
        k = _insert(k, state, row, sol, schur, size, act, beta, new_weight, gram, minv)
        changed = True
    _combination(act, beta, k, q)
    return k


@njit(cache=True)
def small_qp(kind, c, q, work):
    """Projection of ``c`` onto the polytope of an IMPLY, NAND or EQUAL-IF factor, in
    closed form (they have no own scores): the box projection when it satisfies the
    factor's inequality; else the projection onto the face where that inequality holds
    with equality (at most one of EQUAL-IF's two can be violated by a point of the box:
    their sum is ``2 z <= 2``), ``clip(c - mu w)`` with ``w`` the inequality's normal and
    ``mu`` the root of the nonincreasing, piecewise linear ``w . clip(c - mu w) - b``
    (Brucker's breakpoint search over the ``2 L`` values of ``mu`` where a coordinate
    reaches a bound). ``q`` receives the projection; ``work`` (``float64``, at least 9) is
    scratch."""
    L = c.shape[0]
    for i in range(L):
        q[i] = _clip(c[i])
    if kind == IMPLY:                    # x - y <= 0
        w0, w1, w2, b = 1.0, -1.0, 0.0, 0.0
    elif kind == NAND:                   # x + y <= 1
        w0, w1, w2, b = 1.0, 1.0, 0.0, 1.0
    elif q[0] - q[1] + q[2] > 1.0:       # EQUAL_IF, x - y + z <= 1 violated
        w0, w1, w2, b = 1.0, -1.0, 1.0, 1.0
    else:                                # EQUAL_IF, y - x + z <= 1
        w0, w1, w2, b = -1.0, 1.0, 1.0, 1.0
    if w0 * q[0] + w1 * q[1] + (w2 * q[2] if L == 3 else 0.0) <= b:
        return
    w = work[:3]
    w[0] = w0
    w[1] = w1
    w[2] = w2
    breaks = work[3:3 + 2 * L]
    for i in range(L):                  # c_i - mu w_i reaches 0 and 1 (w_i = +-1)
        breaks[2 * i] = c[i] / w[i]
        breaks[2 * i + 1] = (c[i] - 1.0) / w[i]
    breaks.sort()
    # phi(mu) = sum_i w_i clip(c_i - mu w_i) - b, nonincreasing; phi(lowest) > 0 here
    lo = breaks[0]
    phi_lo = _phi(c, w, L, lo) - b
    for e in range(1, 2 * L):
        hi = breaks[e]
        phi_hi = _phi(c, w, L, hi) - b
        if phi_hi <= 0.0:
            mu = hi if phi_lo == phi_hi else lo + (hi - lo) * phi_lo / (phi_lo - phi_hi)
            for i in range(L):
                q[i] = _clip(c[i] - mu * w[i])
            return
        lo, phi_lo = hi, phi_hi
    for i in range(L):
        q[i] = _clip(c[i] - lo * w[i])


@njit(cache=True, _nrt=False)
def _clip(v):
    return min(1.0, max(0.0, v))


@njit(cache=True, _nrt=False)
def _phi(c, w, L, mu):
    total = 0.0
    for i in range(L):
        total += w[i] * _clip(c[i] - mu * w[i])
    return total


@njit(cache=True, _nrt=False)
def _combination(act, beta, k, q):
    """``q`` = ``sum_i beta[i] act_i`` over the ``k`` active vertices."""
    q[:] = 0.0
    for i in range(k):
        for a in range(q.shape[0]):
            q[a] += beta[i] * act[i, a]


@njit(cache=True)
def full_dual_value(n, arc_h, arc_m, share, pair_i, pair_j, pair_score, kind, link_start,
                    link_var, data_start, data, lam_tree, lam_pair, lam_link, single_root,
                    price, theta, state):
    """``g(lambda)``: one MAP per factor at its prices plus, per variable, ``max(0,
    -sum of its prices)`` (:func:`decoders._ad3_kernels.dual_value`, with the full
    graph's factors). ``price`` (``(V,)``), ``theta`` and ``state`` (as long as the
    widest factor) are scratch. Returns ``(value, status)``."""
    total, status = arcs_dual_value(n, arc_h, arc_m, share, pair_i, pair_j, pair_score,
                                    lam_tree, lam_pair, single_root, price)
    if status != OK:
        return np.inf, status
    for f in range(kind.shape[0]):
        lo = link_start[f]
        hi = link_start[f + 1]
        for l in range(lo, hi):
            theta[l - lo] = share[link_var[l]] + lam_link[l]
            price[link_var[l]] += lam_link[l]
        value, _ = factor_map(kind[f], theta[:hi - lo], data[data_start[f]:data_start[f + 1]],
                              1.0, state[:hi - lo])
        total += value
    for v in range(share.shape[0]):
        total += max(0.0, -price[v])
    return total, OK


@njit(cache=True)
def valency_bins(f_act, f_beta, f_k, act_start, vec_start, link_start, factors, out):
    """``out[g]``: the bin marginals of VALENCY factor ``factors[g]`` (-1: a group
    without candidate arcs, all in bin 0), the weights of its active vertices summed by
    their bin (their number of children, the last bin taking the rest)."""
    top = out.shape[1] - 1
    out[:] = 0.0
    for g in range(factors.shape[0]):
        f = factors[g]
        if f < 0:
            out[g, 0] = 1.0
            continue
        L = link_start[f + 1] - link_start[f]
        for i in range(f_k[f]):
            children = 0
            for a in range(L):
                children += f_act[act_start[f] + i * L + a]
            out[g, min(children, top)] += f_beta[vec_start[f] + i]


ARC_VAR = 0
ANCESTRY_VAR = 1
SPAN_VAR = 2


@njit(cache=True)
def tree_assignment(heads, var_type, var_h, var_j, x):
    """``x`` (``float64 (V,)``): every variable's value on the tree ``heads``: arcs,
    ancestry (``var_h`` a proper ancestor of ``var_j``) and spans (some word strictly
    between ``var_h`` and ``var_j`` not below ``var_h``)."""
    N = heads.shape[0]
    below = np.zeros((N, N), dtype=np.bool_)       # below[h, j]: h a proper ancestor of j
    for j in range(1, N):
        h = heads[j]
        steps = 0
        while h > 0 and steps < N:
            below[h, j] = True
            h = heads[h]
            steps += 1
    for v in range(var_type.shape[0]):
        h = var_h[v]
        j = var_j[v]
        if var_type[v] == ARC_VAR:
            x[v] = 1.0 if heads[j] == h else 0.0
        elif var_type[v] == ANCESTRY_VAR:
            x[v] = 1.0 if below[h, j] else 0.0
        else:
            x[v] = 0.0
            for w in range(min(h, j) + 1, max(h, j)):
                if not below[h, w]:
                    x[v] = 1.0
                    break


@njit(cache=True)
def tree_value(x, unary, pair_i, pair_j, pair_score, kind, link_start, link_var,
               data_start, data):
    """The graph's score of the assignment ``x`` of a tree (:func:`tree_assignment`):
    unary and pairwise scores, and each VALENCY factor's bin."""
    total = 0.0
    for v in range(x.shape[0]):
        total += unary[v] * x[v]
    for c in range(pair_i.shape[0]):
        total += pair_score[c] * x[pair_i[c]] * x[pair_j[c]]
    for f in range(kind.shape[0]):
        lo = link_start[f]
        if kind[f] == VALENCY:
            count = 0.0
            for l in range(lo, link_start[f + 1]):
                count += x[link_var[l]]
            K = data_start[f + 1] - data_start[f] - 1
            total += data[data_start[f] + min(int(count + 0.5), K)]
        elif kind[f] >= GRAND_STAR:
            G = kind[f] - GRAND_STAR
            M = link_start[f + 1] - lo - G
            for g in range(G):
                if x[link_var[lo + g]] > 0.5:
                    for m in range(M):
                        total += data[data_start[f] + g * M + m] * x[link_var[lo + G + m]]
    return total


@njit(cache=True)
def star_products(f_act, f_beta, f_k, act_start, vec_start, link_start, data_start,
                  kind, out):
    """``out`` (as long as ``data``): at each GRAND_STAR factor's score ``w_gm``, the
    marginal of its product ``z_gh z_hm``, the weights of its active vertices where both
    are 1 summed; 0 elsewhere."""
    out[:] = 0.0
    for f in range(kind.shape[0]):
        if kind[f] < GRAND_STAR:
            continue
        G = kind[f] - GRAND_STAR
        L = link_start[f + 1] - link_start[f]
        M = L - G
        for i in range(f_k[f]):
            row = act_start[f] + i * L
            weight = f_beta[vec_start[f] + i]
            for g in range(G):
                if f_act[row + g] == 1:
                    for m in range(M):
                        if f_act[row + G + m] == 1:
                            out[data_start[f] + g * M + m] += weight


@njit(cache=True)
def ad3_full(n, arc_h, arc_m, unary, pair_i, pair_j, pair_score, kind, link_start,
             link_var, data_start, data, var_type, var_h, var_j, single_root, eta,
             adapt_eta, tol, max_iter, qp_iter, cutoff, p, lam_tree, lam_pair, lam_link):
    """AD3 on the full-order graph (:class:`decoders.full_graph.FullGraph`), all
    iterations in one call: the loop of :func:`decoders._ad3_kernels.ad3` with the
    graph's other factors projected by :func:`factor_qp`.

    ``p`` (``(V,)`` consensus values), ``lam_tree`` (``(A,)``), ``lam_pair`` (``(P,
    2)``) and ``lam_link`` (``(Lt,)``, the other factors' links) are the starting point,
    updated in place (0.5 and zeros: a cold start; another graph's of the same sentence
    carried over: a warm start, AD3 paper section 7), the multipliers first centred
    at each variable (:func:`~decoders._ad3_kernels.center_multipliers`). The active
    sets of the factors' QPs start empty.

    Every :data:`~decoders._ad3_kernels.DUAL_EVERY` iterations (from the first) and at
    the last, the dual value ``g(lambda)`` (:func:`full_dual_value`) and the score of the
    heaviest tree of the TREE factor's active set (:func:`tree_value`) are computed: AD3
    stops when they meet (within ``tol * max(1, |dual|)``: that tree is optimal and the
    LP tight), or, for a fractional LP, when the primal and dual residuals are both below
    ``tol`` (the authors' rule), or as soon as the least dual value is at most
    ``cutoff`` (``-inf``: never; branch and bound's incumbent).

    Returns ``(p, dual, tree, tree_score, iterations, certified, converged, status,
    f_act, f_beta, f_k, act_start, vec_start)``: the consensus values of all variables,
    the least dual value seen (an upper bound on every tree's score and on the LP
    optimum), the best tree seen and its score, the iterations, whether that tree met
    the dual bound, whether AD3 stopped on either rule, the MST status, and the other
    factors' active sets (flat; factor f's vertices ``f_act[act_start[f]:act_start[f +
    1]]`` as ``(cap_f, L_f)`` rows, weights ``f_beta[vec_start[f]:][:f_k[f]]``).
    """
    A = arc_h.shape[0]
    V = unary.shape[0]
    P = pair_i.shape[0]
    F = kind.shape[0]
    Lt = link_var.shape[0]
    arc_of = arc_index(n, arc_h, arc_m)
    deg = np.zeros(V)
    deg[:A] = 1.0
    for c in range(P):
        deg[pair_i[c]] += 1.0
        deg[pair_j[c]] += 1.0
    for l in range(Lt):
        deg[link_var[l]] += 1.0
    for v in range(V):
        deg[v] = max(deg[v], 1.0)
    share = unary / deg
    links = A + 2 * P + Lt
    center_multipliers(deg, pair_i, pair_j, link_var, lam_tree, lam_pair, lam_link)
    p_new = np.empty(V)
    q_tree = np.empty(A)
    q_pair = np.empty((P, 2))
    r = np.empty(P)
    q_link = np.empty(Lt)
    x = np.empty(V)
    act, beta, gram, minv = tree_active_set(n, A)
    k = 0
    # the other factors' active sets, flat: factor f has room for L_f + 2 vertices
    f_cap = np.empty(F, dtype=np.int64)
    act_start = np.zeros(F + 1, dtype=np.int64)
    vec_start = np.zeros(F + 1, dtype=np.int64)
    mat_start = np.zeros(F + 1, dtype=np.int64)
    inv_start = np.zeros(F + 1, dtype=np.int64)
    widest = 0
    for f in range(F):
        L = link_start[f + 1] - link_start[f]
        widest = max(widest, L)
        f_cap[f] = L + 2
        act_start[f + 1] = act_start[f] + f_cap[f] * L
        vec_start[f + 1] = vec_start[f] + f_cap[f]
        mat_start[f + 1] = mat_start[f] + f_cap[f] * f_cap[f]
        inv_start[f + 1] = inv_start[f] + (f_cap[f] + 1) * (f_cap[f] + 1)
    f_act = np.zeros(act_start[F], dtype=np.int64)
    f_own = np.zeros(vec_start[F])
    f_beta = np.zeros(vec_start[F])
    f_gram = np.zeros(mat_start[F])
    f_minv = np.zeros(inv_start[F])
    f_k = np.zeros(F, dtype=np.int64)
    t = np.empty(widest)
    price = np.empty(V)
    state = np.empty(widest, dtype=np.int64)
    work = np.empty(5 * (widest + 2) + 9)
    dual_best = np.inf
    tree_best = -np.inf
    tree = act[0].copy()
    certified = False
    converged = False
    it = 0
    status = OK
    while it < max_iter:
        it += 1
        k, status = project_order2(n, arc_h, arc_m, arc_of, share, pair_i, pair_j,
                                   pair_score, single_root, eta, qp_iter, p, lam_tree,
                                   lam_pair, act, beta, gram, minv, k, q_tree, q_pair, r)
        if status != OK:
            break
        for f in range(F):
            lo = link_start[f]
            hi = link_start[f + 1]
            L = hi - lo
            fc = f_cap[f]
            for l in range(lo, hi):
                t[l - lo] = p[link_var[l]] + (share[link_var[l]] + lam_link[l]) / eta
            if IMPLY <= kind[f] <= EQUAL_IF:
                small_qp(kind[f], t[:L], q_link[lo:hi], work)
                continue
            f_k[f] = factor_qp(kind[f], data[data_start[f]:data_start[f + 1]], t[:L],
                               1.0 / eta,
                               f_act[act_start[f]:act_start[f + 1]].reshape((fc, L)),
                               f_own[vec_start[f]:vec_start[f + 1]],
                               f_beta[vec_start[f]:vec_start[f + 1]],
                               f_gram[mat_start[f]:mat_start[f + 1]].reshape((fc, fc)),
                               f_minv[inv_start[f]:inv_start[f + 1]].reshape((fc + 1, fc + 1)),
                               f_k[f], qp_iter, q_link[lo:hi], state, work)
        p_new[:] = 0.0
        collect_order2(q_tree, q_pair, pair_i, pair_j, p_new)
        for l in range(Lt):
            p_new[link_var[l]] += q_link[l]
        p_new /= deg
        dual_res = 0.0
        for v in range(V):
            diff = p_new[v] - p[v]
            dual_res += deg[v] * diff * diff
        primal_res = price_order2(eta, q_tree, q_pair, pair_i, pair_j, p_new, lam_tree,
                                  lam_pair)
        for l in range(Lt):
            gap = q_link[l] - p_new[link_var[l]]
            primal_res += gap * gap
            lam_link[l] -= eta * gap
        p[:] = p_new
        primal_res = np.sqrt(primal_res / links)
        dual_res = np.sqrt(dual_res / links)
        converged = primal_res < tol and dual_res < tol
        if it % DUAL_EVERY == 1 or converged or it == max_iter:
            value, status = full_dual_value(n, arc_h, arc_m, share, pair_i, pair_j,
                                            pair_score, kind, link_start, link_var,
                                            data_start, data, lam_tree, lam_pair, lam_link,
                                            single_root, price, t, state)
            if status != OK:
                break
            dual_best = min(dual_best, value)
            heaviest = 0
            for i in range(1, k):
                if beta[i] > beta[heaviest]:
                    heaviest = i
            tree_assignment(act[heaviest], var_type, var_h, var_j, x)
            value = tree_value(x, unary, pair_i, pair_j, pair_score, kind, link_start,
                               link_var, data_start, data)
            if value > tree_best:
                tree_best = value
                tree[:] = act[heaviest]
            certified = dual_best - tree_best <= tol * max(1.0, abs(dual_best))
            converged |= certified
        if converged or dual_best <= cutoff:
            break
        if adapt_eta:
            eta = adapted_eta(eta, it, primal_res, dual_res)
    return (p, dual_best, tree, tree_best, it, certified, converged, status, f_act,
            f_beta, f_k, act_start, vec_start)
