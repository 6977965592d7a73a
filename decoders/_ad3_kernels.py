"""Numba kernels of AD3 on the factor graph (:mod:`decoders.ad3`).

AD3 (Martins, Figueiredo, Aguiar, Smith, Xing, JMLR 2015) on the graph of
:mod:`decoders.factor_graph`: binary arc variables ``p_a``, pairwise factors (grandparent,
all-pairs siblings) and one TREE factor. Notation, with ``d_a`` the number of factors at
arc a (its pairwise factors plus the TREE factor) and ``lambda_{alpha,a}`` the price of
factor alpha's copy ``q_{alpha,a}`` of ``p_a``:

- each factor maximizes ``sum_a (theta_a / d_a + lambda_{alpha,a}) q_a + s_alpha r_alpha -
  (eta / 2) ||q_alpha - p||^2`` over its marginal polytope (``r_alpha``: a pairwise
  factor's (1, 1) value), i.e. it projects the point ``p + (theta / d + lambda) / eta``
  (its *target*), tilted by ``s_alpha r_alpha / eta``, onto that polytope;
- ``p_a`` is the average of the copies;
- ``lambda_{alpha,a} -= eta (q_{alpha,a} - p_a)``, so the prices of each variable keep
  summing to zero;
- the dual ``g(lambda) = sum_alpha max_{y_alpha} (theta / d + lambda_alpha) . y_alpha +
  s_alpha y_alpha`` (one MAP per factor) bounds the LP optimum from above.

Our ``eta`` and ``lambda`` are twice the authors' (their factor QPs read ``theta / d +
2 lambda`` and ``2 eta``). The residuals and the adaptation of ``eta`` follow the
authors' ``FactorGraph::RunAD3``. Where they stop on small residuals, we stop on a
duality gap: the dual bound against the value of a feasible point (the TREE factor's
copy of the arc values, a convex combination of trees, with the best pairwise values the
local polytope allows with them), evaluated when the primal residual is small, so that a
reported convergence certifies the LP value (with their rule the value was off by up to
2.6e-5 relative on random order-2 instances at residuals below 1e-6).

The helpers that allocate nothing are compiled with numba's ``_nrt=False``, so that
numba does not count references to the arrays they are passed (an atomic increment and
decrement per array and call: about 5% of AD3's CPU samples on en_ewt dev, ``perf``);
as in :mod:`features._kernels`, and in :mod:`decoders._factor_kernels` and
:mod:`decoders._kernels` for the MST's inner helpers.
"""

import numpy as np
from numba import njit

from ._factor_kernels import arc_mst
from ._kernels import OK

#: Largest active set of the TREE factor's QP (trees kept at once).
MAX_ACTIVE = 64
#: Iterations of ``eta`` adaptation, as the authors.
ADAPT_EVERY = 10
#: Iterations between evaluations of the dual value and of the primal lower bounds
#: (:func:`feasible_value`, :func:`heaviest_tree_value`), from the first on: about a third
#: of an iteration each (one MST, passes over the pairwise factors). Every 10 rather than
#: the authors' 50 (who stop on residuals, not on a gap): on 600 en_ewt dev sentences with
#: an order-2 model, 15% fewer iterations; and in branch and bound
#: (:mod:`decoders.ad3_exact`) a child's inherited multipliers often bound it below the
#: incumbent at once.
DUAL_EVERY = 10
#: Active-set iterations of a factor's QP (the TREE factor's, and the full graph's
#: VALENCY and NOT-ALL factors') per AD3 iteration; the active sets are kept from one AD3
#: iteration to the next, so an inexact QP is continued at the next. The authors' 10 (for
#: ``GenericFactor``) took as many AD3 iterations as 3, at a quarter more time (with
#: ``eval/decoders.py``, 2026-11-28: 600 en_ewt dev sentences, order-2 model, AD3
#: converged on all either way; 300, full model, 2 and 3 equally fast); 1 took more.
QP_ITERATIONS = 3
#: Bounds and factor of the adapted ``eta`` (the authors' 1e-3, 100 and 2, doubled to
#: our convention), and the residual imbalances that trigger it (theirs).
ETA_MIN = 2e-3
ETA_MAX = 200.0
ETA_STEP = 2.0
GAMMA_PRIMAL = 100.0
GAMMA_DUAL = 10.0


@njit(cache=True)
def _clip01(x):
    return min(1.0, max(0.0, x))


@njit(cache=True)
def pair_qp(c1, c2, s):
    """Projection of a binary pairwise factor: the closed form of the AD3 paper.

    Minimizes ``(z1 - c1)^2 / 2 + (z2 - c2)^2 / 2 - s z12`` over the local polytope
    ``z12 <= z1, z12 <= z2, z12 >= z1 + z2 - 1, z12 >= 0`` (``0 <= z <= 1``); returns
    ``(z1, z2, z12)``. At ``s >= 0`` the optimum has ``z12 = min(z1, z2)``, so the
    objective is the largest of two separable quadratics (one per order of z1 and z2):
    the box minimizer of either one that lies on its own side is the optimum, else it is
    on the diagonal. At ``s < 0``, ``z12 = max(0, z1 + z2 - 1)`` and the same argument
    splits at ``z1 + z2 = 1``.
    """
    if s >= 0.0:
        z1 = _clip01(c1)
        z2 = _clip01(c2 + s)
        if z2 <= z1:
            return z1, z2, z2
        z1 = _clip01(c1 + s)
        z2 = _clip01(c2)
        if z1 <= z2:
            return z1, z2, z1
        z = _clip01(0.5 * (c1 + c2 + s))
        return z, z, z
    z1 = _clip01(c1)
    z2 = _clip01(c2)
    if z1 + z2 <= 1.0:
        return z1, z2, 0.0
    z1 = _clip01(c1 + s)
    z2 = _clip01(c2 + s)
    if z1 + z2 >= 1.0:
        return z1, z2, z1 + z2 - 1.0
    z1 = _clip01(0.5 * (c1 - c2 + 1.0))
    return z1, 1.0 - z1, 0.0


@njit(cache=True)
def pair_map(a, b, s):
    """Best of the four states of a pairwise factor scoring ``a y1 + b y2 + s y1 y2``."""
    return max(0.0, a, b, a + b + s)


@njit(cache=True, _nrt=False)
def _tree_score(heads, arc_of, x):
    total = 0.0
    for m in range(1, heads.shape[0]):
        total += x[arc_of[heads[m], m]]
    return total


@njit(cache=True, _nrt=False)
def _common(u, v):
    """Arcs two trees share (the inner product of their indicator vectors)."""
    count = 0
    for m in range(1, u.shape[0]):
        if u[m] == v[m]:
            count += 1
    return count


@njit(cache=True, _nrt=False)
def _remove(i, k, act, beta, gram, minv):
    """Drop tree i of the ``k`` in the active set (the last one takes its place), and
    downdate ``minv``, the inverse of the active set's KKT matrix (:func:`_kkt_inverse`):
    the inverse of a matrix without row and column p is ``B - b b' / c`` of its inverse
    ``[[B, b], [b', c]]`` (rows and columns in that order)."""
    last = k - 1
    p = i + 1
    c = minv[p, p]
    for u in range(k + 1):
        if u == p:
            continue
        f = minv[u, p] / c
        for v in range(k + 1):
            if v != p:
                minv[u, v] -= f * minv[p, v]
    if i != last:
        for j in range(act.shape[1]):
            act[i, j] = act[last, j]
        beta[i] = beta[last]
        for j in range(k):
            gram[i, j] = gram[last, j]
        for j in range(k):
            gram[j, i] = gram[j, last]
        gram[i, i] = gram[last, last]
        q = last + 1
        for j in range(k + 1):
            minv[p, j] = minv[q, j]
        for j in range(k + 1):
            minv[j, p] = minv[j, q]
    return k - 1


@njit(cache=True)
def _kkt_inverse(k, gram, minv):
    """``minv[:k + 1, :k + 1]``: the inverse of the KKT matrix ``[[0, 1'], [1, G]]`` of
    the ``k`` active trees (``G = gram[:k, :k]``), computed afresh; between refreshes it
    is kept by rank-one updates as trees enter (:func:`_insert`) and leave
    (:func:`_remove`), as the authors' ``GenericFactor`` keeps it, so that a solve
    is a product, O(k^2), not a factorization, O(k^3)."""
    M = np.zeros((k + 1, k + 1))
    for i in range(k):
        M[0, i + 1] = 1.0
        M[i + 1, 0] = 1.0
        for j in range(k):
            M[i + 1, j + 1] = gram[i, j]
    minv[:k + 1, :k + 1] = np.linalg.inv(M)


@njit(cache=True, _nrt=False)
def _kkt_residual(k, gram, rhs, x, res):
    """``res[:k + 1] = [1; rhs] - [[0, 1'], [1, G]] x``; returns its largest magnitude."""
    total = 1.0
    for j in range(k):
        total -= x[j + 1]
    res[0] = total
    worst = abs(total)
    for i in range(k):
        total = rhs[i] - x[0]
        for j in range(k):
            total -= gram[i, j] * x[j + 1]
        res[i + 1] = total
        worst = max(worst, abs(total))
    return worst


@njit(cache=True, _nrt=False)
def _kkt_product(k, minv, rhs, out):
    """``out[:k + 1] = minv[:k + 1, :k + 1] @ [1; rhs]``."""
    for i in range(k + 1):
        total = minv[i, 0]
        for j in range(k):
            total += minv[i, j + 1] * rhs[j]
        out[i] = total


@njit(cache=True)
def _kkt_solve(k, gram, minv, rhs, out):
    """``out[:k + 1]`` = the solution ``[tau; z]`` of ``[[0, 1'], [1, G]] [tau; z] =
    [1; rhs]``, as the product of ``minv`` (its inverse, kept by rank-one updates) with
    the right-hand side, O(k^2). The updates drift when trees share most of their arcs
    (the matrix is then nearly singular: weights summing to 0.998 after 40 updates on
    an en_ewt sentence), so the residual is checked: up to two steps of iterative
    refinement (the product of ``minv`` with the residual, added) bring it within
    1e-12 of the system's scale, and when they do not, the inverse is computed afresh
    (:func:`_kkt_inverse`) and the product taken again."""
    scale = float(gram[0, 0])
    for j in range(k):
        scale = max(scale, abs(rhs[j]))
    res = np.empty(k + 1)
    _kkt_product(k, minv, rhs, out)
    for step in range(4):
        if _kkt_residual(k, gram, rhs, out, res) <= 1e-12 * scale or step == 3:
            return
        if step == 2:
            _kkt_inverse(k, gram, minv)
            _kkt_product(k, minv, rhs, out)
        else:
            for i in range(k + 1):
                total = 0.0
                for j in range(k + 1):
                    total += minv[i, j] * res[j]
                out[i] += total


@njit(cache=True)
def _schur(k, n, gram, minv, row, sol):
    """The Schur complement ``n - [1; row] . sol`` of a tree sharing ``row[i]`` arcs with
    active tree i, ``sol`` (filled) the KKT solution for ``[1; row]``: 0 iff the tree is
    an affine combination ``sum c_i act_i`` (``sum c_i = 1``) of the active ones."""
    _kkt_solve(k, gram, minv, row, sol)
    schur = n - sol[0]
    for i in range(k):
        schur -= row[i] * sol[i + 1]
    return schur


@njit(cache=True, _nrt=False)
def _combination(act, beta, k, arc_of, q):
    """``q`` = the arc vector ``sum_i beta[i] act_i`` of the ``k`` active trees."""
    q[:] = 0.0
    for i in range(k):
        for m in range(1, act.shape[1]):
            q[arc_of[act[i, m], m]] += beta[i]


@njit(cache=True, _nrt=False)
def _insert(k, heads, row, sol, schur, n, act, beta, weight, gram, minv):
    """Append tree ``heads`` (``row``: the arcs it shares with each active tree, ``sol``
    the KKT solution for ``[1; row]`` and ``schur`` the Schur complement ``n - [1;
    row] . sol``) with weight ``weight``; updates ``minv`` by the bordered inverse."""
    for j in range(act.shape[1]):
        act[k, j] = heads[j]
    beta[k] = weight
    for i in range(k):
        gram[i, k] = row[i]
        gram[k, i] = row[i]
    gram[k, k] = n
    for u in range(k + 1):
        f = sol[u] / schur
        for v in range(k + 1):
            minv[u, v] += f * sol[v]
        minv[u, k + 1] = -f
        minv[k + 1, u] = -f
    minv[k + 1, k + 1] = 1.0 / schur
    return k + 1


@njit(cache=True)
def _kkt_step(k, gram, minv, scores, z, beta):
    """One step of the active-set method on the ``k`` active vertices, whose linear
    scores are ``scores``: ``z`` receives the KKT solution ``[tau; weights]`` of the QP
    restricted to them. If those weights are feasible they become ``beta`` and -1 is
    returned; else ``beta`` moves towards them until the first weight reaches 0, and
    that vertex's index is returned (for the caller to drop). ``tau`` is ``z[0]``."""
    _kkt_solve(k, gram, minv, scores, z)
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
    else:
        for i in range(k):
            beta[i] = max(0.0, (1.0 - alpha) * beta[i] + alpha * z[i + 1])
    return blocking


@njit(cache=True, _nrt=False)
def _swap_weight(k, beta, sol):
    """A new vertex in the affine hull of the ``k`` active ones (``sol``: its affine
    coefficients, as :func:`_schur` leaves them): move weight onto it at the same point
    until the first active weight reaches 0. Returns ``(that vertex, the weight moved)``,
    ``(-1, 0)`` when no weight can move."""
    out = -1
    t = np.inf
    for i in range(k):
        c = sol[i + 1]
        if c > 1e-12 and beta[i] / c < t:
            t = beta[i] / c
            out = i
    if out < 0:
        return -1, 0.0
    for i in range(k):
        beta[i] = max(0.0, beta[i] - t * sol[i + 1])
    return out, t


@njit(cache=True)
def tree_qp(target, n, arc_h, arc_m, arc_of, single_root, act, beta, gram, minv, k,
            max_iter, q):
    """Projection of ``target`` onto the arborescence polytope by the active-set method
    (AD3 paper, Algorithm 2; the authors' ``GenericFactor::SolveQP``), the MST its only
    oracle.

    The point is kept as a convex combination ``beta`` of the ``k`` trees ``act[:k]``
    (heads, warm-started from the previous call); ``gram[i, j]`` counts the arcs trees i
    and j share, and ``minv`` (``(cap + 1, cap + 1)``) holds the inverse of the KKT
    matrix of the active set, kept from call to call by rank-one updates (computed afresh
    for a new set, and by :func:`_kkt_solve` when it has drifted). Each step solves the
    KKT system of the QP restricted to the active trees
    (``tau``: the multiplier of ``sum beta = 1``). If the solution leaves the simplex the
    step stops at the first weight that reaches 0 and drops that tree; otherwise the
    point is optimal when no tree scores more than ``tau`` under ``target - q`` (the
    MST under it tells), and that MST joins the active set. A tree in the affine hull of
    the active ones would make the system singular: it then replaces, at the same point
    ``q``, the first tree whose weight reaches 0 as weight moves onto it.

    ``q`` (``float64 (A,)``) receives the projection. Returns ``(k, status)``.
    """
    cap = act.shape[0]
    if k == 0:
        heads, _, status = arc_mst(n, arc_h, arc_m, target, single_root)
        if status != OK:
            return 0, status
        act[0, :] = heads
        beta[0] = 1.0
        gram[0, 0] = n
        k = 1
        _kkt_inverse(k, gram, minv)
    scores = np.empty(cap)
    z = np.empty(cap + 1)
    sol = np.empty(cap + 1)
    row = np.empty(cap)
    tau = 0.0
    changed = True
    for _ in range(max_iter):
        if changed:
            for i in range(k):
                scores[i] = _tree_score(act[i], arc_of, target)
            blocking = _kkt_step(k, gram, minv, scores, z, beta)
            tau = z[0]
            if blocking >= 0:
                k = _remove(blocking, k, act, beta, gram, minv)
                continue
            changed = False
        # The point is optimal on its active set: is a tree outside it better?
        _combination(act, beta, k, arc_of, q)
        grad = target - q
        heads, value, status = arc_mst(n, arc_h, arc_m, grad, single_root)
        if status != OK:
            return k, status
        if value <= tau + 1e-12 * max(1.0, abs(tau)):
            return k, OK
        known = False
        for i in range(k):
            row[i] = _common(act[i], heads)
            known |= row[i] == n
        if known or k == cap:           # rounding noise, or no room: stop here
            return k, OK
        schur = _schur(k, n, gram, minv, row, sol)
        new_weight = 0.0
        if schur <= 1e-9 * n:
            out, new_weight = _swap_weight(k, beta, sol)
            if out < 0:
                return k, OK
            k = _remove(out, k, act, beta, gram, minv)
            for i in range(k):
                row[i] = _common(act[i], heads)
            schur = _schur(k, n, gram, minv, row, sol)
        k = _insert(k, heads, row, sol, schur, n, act, beta, new_weight, gram, minv)
        changed = True
    _combination(act, beta, k, arc_of, q)
    return k, OK


@njit(cache=True)
def arcs_dual_value(n, arc_h, arc_m, share, pair_i, pair_j, pair_score, lam_tree, lam_pair,
                    single_root, price):
    """The TREE and pairwise factors' share of ``g(lambda)``: one MAP each at its
    prices (``share``: per variable, the arcs first). ``price`` receives, per variable,
    the sum of its prices over these factors. Returns ``(value, status)``."""
    A = arc_h.shape[0]
    heads, total, status = arc_mst(n, arc_h, arc_m, share[:A] + lam_tree, single_root)
    if status != OK:
        return np.inf, status
    price[:A] = lam_tree
    price[A:] = 0.0
    for c in range(pair_i.shape[0]):
        i = pair_i[c]
        j = pair_j[c]
        total += pair_map(share[i] + lam_pair[c, 0], share[j] + lam_pair[c, 1], pair_score[c])
        price[i] += lam_pair[c, 0]
        price[j] += lam_pair[c, 1]
    return total, OK


@njit(cache=True)
def dual_value(n, arc_h, arc_m, share, pair_i, pair_j, pair_score, lam_tree, lam_pair,
               single_root):
    """``g(lambda)``: one MAP per factor at the current prices (:func:`arcs_dual_value`),
    plus, per variable, ``max(0, -sum of its prices)`` (0 when the prices sum to zero,
    as AD3 keeps them; this keeps the bound valid under rounding). Returns ``(value,
    status)``."""
    price = np.empty(arc_h.shape[0])
    total, status = arcs_dual_value(n, arc_h, arc_m, share, pair_i, pair_j, pair_score,
                                    lam_tree, lam_pair, single_root, price)
    if status != OK:
        return np.inf, status
    for a in range(price.shape[0]):
        total += max(0.0, -price[a])
    return total, OK


@njit(cache=True, _nrt=False)
def feasible_value(unary, pair_i, pair_j, pair_score, q):
    """Objective of the feasible point whose arc values are ``q`` (a point of the
    arborescence polytope: the TREE factor's copy) and whose pairwise values are the best
    the local polytope allows with them (``min(q_i, q_j)`` on a positive score,
    ``max(0, q_i + q_j - 1)`` on a negative one): a lower bound on the LP optimum."""
    total = unary @ q
    for c in range(pair_i.shape[0]):
        qi = q[pair_i[c]]
        qj = q[pair_j[c]]
        if pair_score[c] > 0.0:
            total += pair_score[c] * min(qi, qj)
        else:
            total += pair_score[c] * max(0.0, qi + qj - 1.0)
    return total


@njit(cache=True, _nrt=False)
def heaviest_tree_value(act, beta, k, arc_of, unary, pair_i, pair_j, pair_score, in_tree):
    """Score, under all parts, of the tree of largest weight among the ``k`` active trees
    of the TREE factor (``act``, ``beta``: :func:`tree_qp`'s active set): an integral
    point of the LP, so a lower bound on its optimum that meets the dual bound as soon as
    that tree is optimal, often long before the fractional copy's value does. ``in_tree``
    (``bool (A,)``) receives the tree's arcs. Returns ``(value, i)``, ``i`` the tree."""
    best = 0
    for i in range(1, k):
        if beta[i] > beta[best]:
            best = i
    in_tree[:] = False
    value = 0.0
    for m in range(1, act.shape[1]):
        a = arc_of[act[best, m], m]
        in_tree[a] = True
        value += unary[a]
    for c in range(pair_i.shape[0]):
        if in_tree[pair_i[c]] and in_tree[pair_j[c]]:
            value += pair_score[c]
    return value, best


@njit(cache=True)
def arc_index(n, arc_h, arc_m):
    """``int64 (n + 1, n + 1)``: the variable of arc ``h -> m``, -1 for no candidate."""
    arc_of = np.full((n + 1, n + 1), -1, dtype=np.int64)
    for a in range(arc_h.shape[0]):
        arc_of[arc_h[a], arc_m[a]] = a
    return arc_of


@njit(cache=True)
def tree_active_set(n, A):
    """Empty storage of the TREE factor's active set for :func:`tree_qp` over ``A``
    arcs: ``(act, beta, gram, minv)``, room for ``min(MAX_ACTIVE, A + 1)`` trees."""
    cap = min(MAX_ACTIVE, A + 1)
    return (np.zeros((cap, n + 1), dtype=np.int64), np.zeros(cap), np.zeros((cap, cap)),
            np.zeros((cap + 1, cap + 1)))


@njit(cache=True)
def project_order2(n, arc_h, arc_m, arc_of, share, pair_i, pair_j, pair_score, single_root,
                   eta, qp_iter, p, lam_tree, lam_pair, act, beta, gram, minv, k, q_tree,
                   q_pair, r):
    """The factor QPs of one AD3 iteration on the arcs' factors: each pairwise factor's
    (:func:`pair_qp`; copies into ``q_pair``, (1, 1) values into ``r``) and the TREE
    factor's (:func:`tree_qp` into ``q_tree``, its active set kept). ``p``, ``share``:
    per variable, the arcs first. Returns ``(k, status)``."""
    A = arc_h.shape[0]
    for c in range(pair_i.shape[0]):
        i = pair_i[c]
        j = pair_j[c]
        z1, z2, z12 = pair_qp(p[i] + (share[i] + lam_pair[c, 0]) / eta,
                              p[j] + (share[j] + lam_pair[c, 1]) / eta,
                              pair_score[c] / eta)
        q_pair[c, 0] = z1
        q_pair[c, 1] = z2
        r[c] = z12
    target = p[:A] + (share[:A] + lam_tree) / eta
    return tree_qp(target, n, arc_h, arc_m, arc_of, single_root, act, beta, gram, minv, k,
                   qp_iter, q_tree)


@njit(cache=True, _nrt=False)
def collect_order2(q_tree, q_pair, pair_i, pair_j, p_new):
    """``p_new``: the arcs' TREE copies, plus every pairwise factor's copies added at
    its two variables (the sums AD3 averages)."""
    for a in range(q_tree.shape[0]):
        p_new[a] = q_tree[a]
    for c in range(pair_i.shape[0]):
        p_new[pair_i[c]] += q_pair[c, 0]
        p_new[pair_j[c]] += q_pair[c, 1]


@njit(cache=True, _nrt=False)
def price_order2(eta, q_tree, q_pair, pair_i, pair_j, p, lam_tree, lam_pair):
    """The multipliers' step ``lambda -= eta (q - p)`` of the TREE and pairwise factors,
    at the new consensus ``p``; returns the sum of the squared disagreements (the
    primal residual's share of these links)."""
    primal = 0.0
    for a in range(q_tree.shape[0]):
        gap = q_tree[a] - p[a]
        primal += gap * gap
        lam_tree[a] -= eta * gap
    for c in range(pair_i.shape[0]):
        for side in range(2):
            v = pair_i[c] if side == 0 else pair_j[c]
            gap = q_pair[c, side] - p[v]
            primal += gap * gap
            lam_pair[c, side] -= eta * gap
    return primal


@njit(cache=True, _nrt=False)
def adapted_eta(eta, it, primal_res, dual_res):
    """The penalty after iteration ``it``: every :data:`ADAPT_EVERY` iterations doubled
    when the primal residual exceeds :data:`GAMMA_PRIMAL` times the dual one, halved
    when the dual one exceeds :data:`GAMMA_DUAL` times the primal one (the authors'
    rule), within :data:`ETA_MIN` and :data:`ETA_MAX`."""
    if it % ADAPT_EVERY == 0:
        if primal_res > GAMMA_PRIMAL * dual_res and eta < ETA_MAX:
            return eta * ETA_STEP
        if dual_res > GAMMA_DUAL * primal_res and eta > ETA_MIN:
            return eta / ETA_STEP
    return eta


@njit(cache=True)
def center_multipliers(deg, pair_i, pair_j, link_var, lam_tree, lam_pair, lam_link):
    """Shift the multipliers at every variable, in place, by the same amount on each of
    its ``deg`` links so that they sum to zero there, as AD3's updates keep them: only
    then is ``g(lambda)`` an upper bound on the graph's LP (a warm start from another
    graph's multipliers, with links dropped or added, does not sum to zero). Links: the
    TREE factor's at the arcs (``lam_tree``, the first variables), the pairwise
    factors' (``lam_pair``, at ``pair_i`` and ``pair_j``), the other factors'
    (``lam_link`` at ``link_var``)."""
    excess = np.zeros(deg.shape[0])
    for a in range(lam_tree.shape[0]):
        excess[a] = lam_tree[a]
    for c in range(pair_i.shape[0]):
        excess[pair_i[c]] += lam_pair[c, 0]
        excess[pair_j[c]] += lam_pair[c, 1]
    for l in range(link_var.shape[0]):
        excess[link_var[l]] += lam_link[l]
    for v in range(deg.shape[0]):
        excess[v] /= deg[v]
    for a in range(lam_tree.shape[0]):
        lam_tree[a] -= excess[a]
    for c in range(pair_i.shape[0]):
        lam_pair[c, 0] -= excess[pair_i[c]]
        lam_pair[c, 1] -= excess[pair_j[c]]
    for l in range(link_var.shape[0]):
        lam_link[l] -= excess[link_var[l]]


@njit(cache=True)
def ad3(n, arc_h, arc_m, unary, pair_i, pair_j, pair_score, single_root, eta, adapt_eta,
        tol, max_iter, qp_iter, cutoff, p, lam_tree, lam_pair):
    """AD3 on the factor graph, all iterations in one call.

    Parameters
    ----------
    n, arc_h, arc_m, unary, pair_i, pair_j, pair_score, single_root:
        The graph (:class:`decoders.factor_graph.FactorGraph`'s fields).
    eta:
        Initial penalty (our convention: twice the authors').
    adapt_eta:
        Every 10 iterations, double ``eta`` when the primal residual exceeds 100 times
        the dual one, halve it when the dual residual exceeds 10 times the primal one.
    tol:
        The residuals are root mean squares over the factor-variable links (``q - p``
        for the primal, ``sqrt(d_a)`` times the change of ``p`` for the dual, which with
        the primal one steers ``eta``). Whenever the primal residual is below ``tol``
        (and at iterations 1, 11, 21, ...: :data:`DUAL_EVERY`; and at the last) the dual
        value and two feasible values are computed, of the TREE factor's current point
        (:func:`feasible_value`) and of its heaviest tree (:func:`heaviest_tree_value`);
        AD3 stops as soon as the least dual value is within ``tol * max(1, |dual|)`` of
        the best feasible value, which brackets the LP optimum that closely.
    max_iter, qp_iter:
        Iterations of AD3, and of the TREE factor's active-set method per AD3 iteration.
    cutoff:
        Stop as soon as the least dual value is at most ``cutoff`` (``-inf``: never):
        branch and bound (:mod:`decoders.ad3_exact`) then knows that no tree of the
        graph beats its incumbent, and needs neither convergence nor the point.
    p, lam_tree, lam_pair:
        The starting point, updated in place: ``float64 (A,)`` consensus arc values,
        ``(A,)`` the TREE factor's multipliers and ``(P, 2)`` the pairwise factors'
        (0.5 and zeros for a cold start; a parent node's for a warm start in branch and
        bound, AD3 paper section 7; the penalty starts at ``eta`` all the same: a
        parent's, often driven to its floor, stalled children of random instances).
        The multipliers at each variable are first shifted
        to sum to zero, as AD3 keeps them: only then is ``g(lambda)`` the dual of this
        graph's LP (a parent's do not, once arcs and factors are dropped).

    Returns
    -------
    arcs, r, primal, dual, iterations, converged, status:
        The best feasible point seen: ``float64 (A,)`` arc values (the TREE factor's
        copy, a convex combination of trees, or the heaviest of those trees) and
        ``float64 (P,)`` the pairwise factors' (1, 1) values that go best with them; its
        value ``primal`` (a lower bound on the LP optimum); the least dual value seen (an
        upper bound); both evaluated as ``tol`` says. Then the iterations run, whether
        the gap met ``tol``, and the MST status (:data:`decoders._kernels.OK` or why no
        tree exists).
    """
    A = arc_h.shape[0]
    P = pair_i.shape[0]
    arc_of = arc_index(n, arc_h, arc_m)
    deg = np.ones(A)
    for c in range(P):
        deg[pair_i[c]] += 1.0
        deg[pair_j[c]] += 1.0
    share = unary / deg
    links = A + 2 * P
    center_multipliers(deg, pair_i, pair_j, np.zeros(0, dtype=np.int64), lam_tree,
                       lam_pair, np.zeros(0))
    p_new = np.empty(A)
    q_tree = np.empty(A)
    q_pair = np.empty((P, 2))
    r = np.zeros(P)
    act, beta, gram, minv = tree_active_set(n, A)
    k = 0
    dual_best = np.inf
    primal_best = -np.inf
    q_best = np.zeros(A)
    in_tree = np.zeros(A, dtype=np.bool_)
    converged = False
    it = 0
    status = OK
    while it < max_iter:
        it += 1
        k, status = project_order2(n, arc_h, arc_m, arc_of, share, pair_i, pair_j,
                                   pair_score, single_root, eta, qp_iter, p, lam_tree,
                                   lam_pair, act, beta, gram, minv, k, q_tree, q_pair, r)
        if status != OK:
            return p, r, -np.inf, dual_best, it, False, status
        collect_order2(q_tree, q_pair, pair_i, pair_j, p_new)
        p_new /= deg
        dual_res = 0.0
        for a in range(A):
            diff = p_new[a] - p[a]
            dual_res += deg[a] * diff * diff
        primal_res = price_order2(eta, q_tree, q_pair, pair_i, pair_j, p_new, lam_tree,
                                  lam_pair)
        p[:] = p_new
        primal_res = np.sqrt(primal_res / links)
        dual_res = np.sqrt(dual_res / links)
        if it % DUAL_EVERY == 1 or primal_res < tol or it == max_iter:
            value, status = dual_value(n, arc_h, arc_m, share, pair_i, pair_j, pair_score,
                                       lam_tree, lam_pair, single_root)
            if status != OK:
                return p, r, -np.inf, dual_best, it, False, status
            dual_best = min(dual_best, value)
            value = feasible_value(unary, pair_i, pair_j, pair_score, q_tree)
            if value > primal_best:
                primal_best = value
                q_best[:] = q_tree
            value, _ = heaviest_tree_value(act, beta, k, arc_of, unary, pair_i, pair_j,
                                           pair_score, in_tree)
            if value > primal_best:
                primal_best = value
                for a in range(A):
                    q_best[a] = 1.0 if in_tree[a] else 0.0
            converged = dual_best - primal_best <= tol * max(1.0, abs(dual_best))
        if converged or dual_best <= cutoff:
            break
        if adapt_eta:
            eta = adapted_eta(eta, it, primal_res, dual_res)
    for c in range(P):
        qi = q_best[pair_i[c]]
        qj = q_best[pair_j[c]]
        r[c] = min(qi, qj) if pair_score[c] > 0.0 else max(0.0, qi + qj - 1.0)
    return q_best, r, primal_best, dual_best, it, converged, status
