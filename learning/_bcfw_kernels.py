"""Numba kernels of soft-BCFW (:mod:`learning.trainers.bcfw`; Meshi, Srebro, Hazan 2015,
Algorithm 1 and Appendix D).

Blocks of one sentence: each arc variable a (states: off, or on with label l), each
pairwise factor c (states 00, 10, 01, 11 of its two arcs) and the TREE factor (a
distribution over trees, kept as its arc-marginal vector). Per-sentence state (one flat
``float64`` array, :func:`layout`)::

    mu_arc  (A, L + 1)   the arc variables' marginals: [a, 0] off, [a, 1 + l] on with label l
    mu_pair (P, 4)       the pairwise factors' marginals over 00, 10, 01, 11
    mu_tree (A,)         the TREE factor's arc marginals
    delta_pair (2, P)    delta_ci(1) of factor c to its variable pair_i[c] (row 0), pair_j[c]
    delta_tree (A,)      delta_Ta(1)

The agreement variables ``delta = A mu`` of a binary variable satisfy ``delta(0) =
-delta(1)`` (both marginals sum to 1), so one number per (factor, variable) is kept.

With Lagrange multipliers (the augmented Lagrangian of the paper's section 7), the state
goes on with ``nu`` (``2 P + A`` floats, the layout of ``delta_pair, delta_tree``), and
the delta kept is the primal's ``delta = nu + A mu``: a step changes ``A mu`` and so
``delta`` by the same amount, so the sweep reads and updates it unchanged; only the
certificate and the multiplier update (:func:`update_multipliers`) tell the two apart.

Scores are read from the weights ``w`` at the moment a block is visited (a step changes
``w``, and so every later block that shares a feature). Weight layout (as
:class:`learning.model.LinearModel`): part features in ``w[:part_dim]``, label feature f
of label l at ``w[part_dim + f * L + l]``.
"""

import numpy as np
from numba import njit

from polyparse.decoders._factor_kernels import arc_mst
from polyparse.decoders._kernels import OK


@njit(cache=True)
def layout(A, P, L):
    """Offsets of ``mu_arc, mu_pair, mu_tree, delta_pair, delta_tree`` and the size."""
    o_pair = A * (L + 1)
    o_tree = o_pair + 4 * P
    o_dpair = o_tree + A
    o_dtree = o_dpair + 2 * P
    return o_pair, o_tree, o_dpair, o_dtree, o_dtree + A


@njit(cache=True)
def init_state(state, A, P, L, gold_arc, gold_label, pair_i, pair_j):
    """Every block at the gold structure (Algorithm 1, line 1): ``w = Psi mu`` and
    ``delta = A mu`` are then 0."""
    o_pair, o_tree, o_dpair, o_dtree, size = layout(A, P, L)
    state[:size] = 0.0
    for a in range(A):
        if gold_arc[a] > 0.5:
            state[a * (L + 1) + 1 + gold_label[a]] = 1.0
            state[o_tree + a] = 1.0
        else:
            state[a * (L + 1)] = 1.0
    for c in range(P):
        k = (1 if gold_arc[pair_i[c]] > 0.5 else 0) + (2 if gold_arc[pair_j[c]] > 0.5 else 0)
        state[o_pair + 4 * c + k] = 1.0


@njit(cache=True)
def _dot(w, offset, indptr, indices, data, row):
    total = 0.0
    for k in range(indptr[row], indptr[row + 1]):
        total += w[offset + indices[k]] * data[k]
    return total


@njit(cache=True)
def _sq_norm(indptr, data, row):
    total = 0.0
    for k in range(indptr[row], indptr[row + 1]):
        total += data[k] * data[k]
    return total


@njit(cache=True)
def _arc_scores(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val, row, a, out):
    """``out[0] = 0`` (off), ``out[1 + l] = w . phi(on, l)``; returns nothing."""
    base = _dot(w, 0, p_ptr, p_idx, p_val, row)
    out[0] = 0.0
    for l in range(L):
        out[1 + l] = base
    for k in range(l_ptr[a], l_ptr[a + 1]):
        f = part_dim + l_idx[k] * L
        v = l_val[k]
        for l in range(L):
            out[1 + l] += w[f + l] * v


@njit(cache=True)
def _arc_theta(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val, row, a, gold_arc,
               gold_label, label_cost, incoming, theta):
    """``theta_hat`` of arc variable a: its scores plus its loss ``Delta(y, y*)`` (1 for a
    gold arc left out or a wrong arc taken, ``label_cost`` for a gold arc with a wrong
    label), plus ``delta(y)`` summed over its factors (``incoming`` on state on, its
    negative on state off)."""
    _arc_scores(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val, row, a, theta)
    gold = gold_arc[a] > 0.5
    theta[0] = (1.0 if gold else 0.0) - incoming
    for l in range(L):
        cost = (0.0 if l == gold_label[a] else label_cost) if gold else 1.0
        theta[1 + l] += cost + incoming


@njit(cache=True)
def _incoming(a, state, o_dpair, o_dtree, P, adj_ptr, adj_fac, adj_side):
    total = state[o_dtree + a]
    for e in range(adj_ptr[a], adj_ptr[a + 1]):
        total += state[o_dpair + adj_side[e] * P + adj_fac[e]]
    return total


@njit(cache=True)
def _pair_theta(c, s_c, state, o_dpair, P, theta):
    """``theta_hat`` of pairwise factor c over 00, 10, 01, 11."""
    di = state[o_dpair + c]
    dj = state[o_dpair + P + c]
    theta[0] = di + dj
    theta[1] = -di + dj
    theta[2] = di - dj
    theta[3] = s_c - di - dj


@njit(cache=True)
def _direction(theta, mu, d, pairwise):
    """A simplex block's step direction into ``d``: ``s - mu`` (Frank-Wolfe, s the best
    state's indicator), or with ``pairwise`` ``s - v``, v the worst state that has mass
    (pairwise Frank-Wolfe, Lacoste-Julien and Jaggi 2015: mass moves between two states,
    which converges linearly where Frank-Wolfe zigzags towards a fractional optimum).
    Returns ``(block gap theta . (s - mu), theta . d, largest step)``."""
    best = _argmax(theta)
    gap = theta[best]
    for y in range(theta.shape[0]):
        gap -= mu[y] * theta[y]
    if not pairwise:
        for y in range(theta.shape[0]):
            d[y] = (1.0 if y == best else 0.0) - mu[y]
        return gap, gap, 1.0
    worst = -1
    for y in range(theta.shape[0]):
        if mu[y] > 0.0 and (worst < 0 or theta[y] < theta[worst]):
            worst = y
    d[:theta.shape[0]] = 0.0
    d[best] += 1.0
    d[worst] -= 1.0
    return gap, theta[best] - theta[worst], mu[worst]


@njit(cache=True)
def _step(slope, curvature):
    """The exact line search ``argmax_{gamma in [0, 1]} gamma slope - gamma^2 curvature /
    2`` for ``slope > 0`` (1 where the block's objective is linear along d)."""
    return 1.0 if curvature <= 0.0 else min(1.0, slope / curvature)


@njit(cache=True)
def _argmax(x):
    best = 0
    for k in range(1, x.shape[0]):
        if x[k] > x[best]:
            best = k
    return best


@njit(cache=True)
def _tree_direction(n, arc_h, arc_m, state, o_tree, o_dtree, single_root, s):
    """The TREE block's Frank-Wolfe vertex: the best tree under ``theta_hat(tree) =
    -sum_a delta_Ta(y_a) = const - 2 sum_{a in tree} delta_Ta`` into ``s`` (0/1 per arc);
    returns ``(theta_hat . (s - mu_T), status)``."""
    A = arc_h.shape[0]
    scores = np.empty(A)
    for a in range(A):
        scores[a] = -2.0 * state[o_dtree + a]
    heads, _, status = arc_mst(n, arc_h, arc_m, scores, single_root)
    dot = 0.0
    for a in range(A):
        s[a] = 1.0 if heads[arc_m[a]] == arc_h[a] else 0.0
        dot += scores[a] * (s[a] - state[o_tree + a])
    return dot, status


@njit(cache=True)
def sweep(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val, n, arc_h, arc_m,
          arc_rows, pair_i, pair_j, pair_rows, adj_ptr, adj_fac, adj_side, single_root,
          gold_arc, gold_label, label_cost, state, order, lam, rho, M, pairwise):
    """One pass over the sentence's blocks in ``order`` (ids: arcs ``0..A-1``, pairwise
    factors ``A..A+P-1``, the TREE ``A+P``), each a Frank-Wolfe step of Algorithm 1 with
    the analytic step ``gamma = clip(M theta_hat . d / (||Phi d||^2 / lambda +
    sum ||A d||^2 / rho), 0, 1)``, ``d = s - mu`` (``docs/algorithms.md`` 5b), updating
    ``w = Psi mu``, ``delta = A mu`` and ``mu`` in place. With ``pairwise``, the arc and
    pair blocks take pairwise steps instead (:func:`_direction`). Returns ``(sum of the
    block gaps theta_hat . (s - mu) / M seen before each step, status)``."""
    A = arc_h.shape[0]
    P = pair_i.shape[0]
    o_pair, o_tree, o_dpair, o_dtree, _ = layout(A, P, L)
    theta = np.empty(L + 1)
    d = np.empty(L + 1)
    pth = np.empty(4)
    s_tree = np.empty(A)
    wstep = 1.0 / (lam * M)
    dstep = 1.0 / (rho * M)
    gaps = 0.0
    for b in order:
        if b < A:                                       # an arc variable
            a = b
            row = arc_rows[a]
            incoming = _incoming(a, state, o_dpair, o_dtree, P, adj_ptr, adj_fac, adj_side)
            _arc_theta(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val, row, a,
                       gold_arc, gold_label, label_cost, incoming, theta)
            mu = state[a * (L + 1):(a + 1) * (L + 1)]
            gap, dot, reach = _direction(theta, mu, d, pairwise)
            gaps += gap / M
            if dot <= 0.0:
                continue
            d_on = -d[0]
            phi = d_on * d_on * _sq_norm(p_ptr, p_val, row)
            label_sq = _sq_norm(l_ptr, l_val, a)
            for l in range(L):
                phi += d[1 + l] * d[1 + l] * label_sq
            agree = 2.0 * (adj_ptr[a + 1] - adj_ptr[a] + 1) * d_on * d_on
            gamma = min(reach, _step(M * dot, phi / lam + agree / rho))
            for k in range(p_ptr[row], p_ptr[row + 1]):
                w[p_idx[k]] -= gamma * wstep * d_on * p_val[k]
            for k in range(l_ptr[a], l_ptr[a + 1]):
                f = part_dim + l_idx[k] * L
                for l in range(L):
                    if d[1 + l] != 0.0:
                        w[f + l] -= gamma * wstep * d[1 + l] * l_val[k]
            for e in range(adj_ptr[a], adj_ptr[a + 1]):
                state[o_dpair + adj_side[e] * P + adj_fac[e]] -= gamma * dstep * d_on
            state[o_dtree + a] -= gamma * dstep * d_on
            for y in range(L + 1):
                mu[y] += gamma * d[y]
        elif b < A + P:                                 # a pairwise factor
            c = b - A
            row = pair_rows[c]
            _pair_theta(c, _dot(w, 0, p_ptr, p_idx, p_val, row), state, o_dpair, P, pth)
            mu = state[o_pair + 4 * c:o_pair + 4 * c + 4]
            gap, dot, reach = _direction(pth, mu, d, pairwise)
            gaps += gap / M
            if dot <= 0.0:
                continue
            d_i = d[1] + d[3]
            d_j = d[2] + d[3]
            phi = d[3] * d[3] * _sq_norm(p_ptr, p_val, row)
            agree = 2.0 * (d_i * d_i + d_j * d_j)
            gamma = min(reach, _step(M * dot, phi / lam + agree / rho))
            for k in range(p_ptr[row], p_ptr[row + 1]):
                w[p_idx[k]] -= gamma * wstep * d[3] * p_val[k]
            state[o_dpair + c] += gamma * dstep * d_i
            state[o_dpair + P + c] += gamma * dstep * d_j
            for y in range(4):
                mu[y] += gamma * d[y]
        else:                                           # the TREE factor
            dot, status = _tree_direction(n, arc_h, arc_m, state, o_tree, o_dtree,
                                          single_root, s_tree)
            if status != OK:
                return gaps, status
            gaps += dot / M
            if dot <= 0.0:
                continue
            agree = 0.0
            for a in range(A):
                diff = s_tree[a] - state[o_tree + a]
                agree += 2.0 * diff * diff
            gamma = _step(M * dot, agree / rho)
            for a in range(A):
                diff = s_tree[a] - state[o_tree + a]
                state[o_dtree + a] += gamma * dstep * diff
                state[o_tree + a] += gamma * diff
    return gaps, OK


@njit(cache=True)
def certificate(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val, n, arc_h, arc_m,
                arc_rows, pair_i, pair_j, pair_rows, adj_ptr, adj_fac, adj_side,
                single_root, gold_arc, gold_label, label_cost, state, M):
    """At fixed ``w`` and state, the sentence's terms of the certificate:
    ``(its block gaps summed by kind: arc variables, pairwise factors, TREE; sum over
    blocks of max theta_hat - w . Phi(gold), mu . Delta, ||A mu||^2, nu . A mu,
    status)``; the middle four give the primal ``g_rho`` and the dual ``f_rho``, so that
    the duality gap is computed twice: as the sum of block gaps and as ``g_rho - f_rho``
    (Meshi et al. 2015, footnote 6). A state longer than :func:`layout`'s size holds
    multipliers ``nu`` after it."""
    A = arc_h.shape[0]
    P = pair_i.shape[0]
    o_pair, o_tree, o_dpair, o_dtree, size = layout(A, P, L)
    theta = np.empty(L + 1)
    pth = np.empty(4)
    s_tree = np.empty(A)
    gaps = np.zeros(3)                  # arc variables, pairwise factors, TREE
    maxes = 0.0
    loss = 0.0
    for a in range(A):
        if gold_arc[a] > 0.5:             # theta's - w . phi(gold) of the arc's block
            _arc_scores(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val,
                        arc_rows[a], a, theta)
            maxes -= theta[1 + gold_label[a]]
        incoming = _incoming(a, state, o_dpair, o_dtree, P, adj_ptr, adj_fac, adj_side)
        _arc_theta(w, part_dim, L, p_ptr, p_idx, p_val, l_ptr, l_idx, l_val, arc_rows[a],
                   a, gold_arc, gold_label, label_cost, incoming, theta)
        best = theta[_argmax(theta)]
        mean = 0.0
        for y in range(L + 1):
            mu = state[a * (L + 1) + y]
            mean += mu * theta[y]
            if y == 0:
                loss += mu * (1.0 if gold_arc[a] > 0.5 else 0.0)
            elif gold_arc[a] > 0.5:
                loss += mu * (0.0 if y - 1 == gold_label[a] else label_cost)
            else:
                loss += mu
        gaps[0] += (best - mean) / M
        maxes += best
    for c in range(P):
        s_c = _dot(w, 0, p_ptr, p_idx, p_val, pair_rows[c])
        if gold_arc[pair_i[c]] > 0.5 and gold_arc[pair_j[c]] > 0.5:
            maxes -= s_c
        _pair_theta(c, s_c, state, o_dpair, P, pth)
        best = pth[_argmax(pth)]
        mean = 0.0
        for y in range(4):
            mean += state[o_pair + 4 * c + y] * pth[y]
        gaps[1] += (best - mean) / M
        maxes += best
    dot, status = _tree_direction(n, arc_h, arc_m, state, o_tree, o_dtree, single_root,
                                  s_tree)
    gaps[2] += dot / M
    total = 0.0
    for a in range(A):
        total += state[o_dtree + a]
    # theta_hat(tree) = sum_a delta_Ta(1) (1 - 2 y_a): its max at the best tree s
    tree_max = total
    for a in range(A):
        tree_max -= 2.0 * state[o_dtree + a] * s_tree[a]
    maxes += tree_max
    violation_sq, nu_dot = _agreement(state[o_dpair:size], state[size:])
    return gaps, maxes, loss, violation_sq, nu_dot, status


@njit(cache=True)
def _agreement(delta, nu):
    """``(||A mu||^2, nu . A mu)`` over both states of every (factor, variable) pair,
    ``A mu = delta - nu`` (``nu`` empty: no multipliers, ``A mu = delta``)."""
    violation_sq = 0.0
    nu_dot = 0.0
    for k in range(delta.shape[0]):
        multiplier = nu[k] if nu.shape[0] else 0.0
        v = delta[k] - multiplier
        violation_sq += 2.0 * v * v
        nu_dot += 2.0 * multiplier * v
    return violation_sq, nu_dot


@njit(cache=True)
def update_multipliers(values, offsets, blocks, L):
    """The method of multipliers' outer step ``nu <- nu + A mu`` (Meshi et al. 2015,
    section 7) on every sentence's state (sentence i at ``values[offsets[i]:offsets[i +
    1]]``, laid out with ``nu`` after ``delta``; ``blocks[i] = (A, P)``): ``mu`` is kept,
    so the primal's ``delta = nu + A mu`` moves by ``A mu`` as well."""
    for i in range(blocks.shape[0]):
        state = values[offsets[i]:offsets[i + 1]]
        _, _, o_dpair, _, size = layout(blocks[i, 0], blocks[i, 1], L)
        for k in range(size - o_dpair):
            violation = state[o_dpair + k] - state[size + k]
            state[size + k] = state[o_dpair + k]
            state[o_dpair + k] += violation
