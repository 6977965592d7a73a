"""Numba kernels of the factor graph's oracles (:mod:`decoders.factor_graph`).

Pure functions over flat arrays, callable from other kernels (the AD3 and message-passing
loops of the trainers). Binary variables only: a variable's score is the one on its
state 1 (state 0 scores 0; for binary variables a message ``delta(0), delta(1)`` is
equivalent to ``delta(1) - delta(0)`` on state 1, as every dual objective of
``docs/algorithms.md`` section 5 is invariant to a common shift of both).

Temperature ``t``: ``t == 0`` is the max (MAP, max-marginals); ``t > 0`` replaces every
max by the soft max ``t log sum exp(. / t)`` (Hazan and Urtasun 2010), so that the value
is ``t`` times the log-partition of ``p(y) ∝ exp(score(y) / t)`` and the max-marginals
become soft max-marginals (what a variable's soft message is made of).
"""

import numpy as np
from numba import njit

from ._kernels import OK, mst_heads, tree_value


@njit(cache=True)
def soft_max2(x, y, t):
    """``max(x, y)`` at ``t == 0``, else ``t log(exp(x / t) + exp(y / t))``, stably."""
    hi = max(x, y)
    if t == 0.0 or hi == -np.inf:
        return hi
    return hi + t * np.log(np.exp((x - hi) / t) + np.exp((y - hi) / t))


@njit(cache=True)
def pair_oracles(score, a, b, t):
    """All oracles of the pairwise factors at once, given their incoming scores.

    Factor c links binary variables ``y_i, y_j`` and scores its four states
    ``00: 0, 10: a[c], 01: b[c], 11: score[c] + a[c] + b[c]`` (its own score on (1, 1),
    plus what the trainer adds on each variable's state 1, e.g. minus the messages).

    Parameters
    ----------
    score, a, b:
        ``float64 (P,)``. ``-inf`` entries are allowed (a state that cannot occur).
    t:
        Temperature ``>= 0``.

    Returns
    -------
    value:
        ``float64 (P,)``: the best state's score at ``t == 0``, else ``t log Z_c``.
    max_marginals:
        ``float64 (P, 2, 2)``: ``[c, k, y]`` the (soft) max over the states with variable
        k (0: i, 1: j) in state y.
    marginals:
        ``float64 (P, 3)``: ``p(y_i = 1), p(y_j = 1), p(y_i = y_j = 1)``; at ``t == 0`` the
        indicators of the best state (ties go to the first of 00, 10, 01, 11).
    """
    P = score.shape[0]
    value = np.empty(P)
    mm = np.empty((P, 2, 2))
    mu = np.zeros((P, 3))
    for c in range(P):
        s00 = 0.0
        s10 = a[c]
        s01 = b[c]
        s11 = score[c] + a[c] + b[c]
        i0 = soft_max2(s00, s01, t)
        i1 = soft_max2(s10, s11, t)
        mm[c, 0, 0] = i0
        mm[c, 0, 1] = i1
        mm[c, 1, 0] = soft_max2(s00, s10, t)
        mm[c, 1, 1] = soft_max2(s01, s11, t)
        v = soft_max2(i0, i1, t)
        value[c] = v
        if t > 0.0:
            mu[c, 0] = np.exp((i1 - v) / t)
            mu[c, 1] = np.exp((mm[c, 1, 1] - v) / t)
            mu[c, 2] = np.exp((s11 - v) / t)
        else:
            best = s00
            yi = 0
            yj = 0
            if s10 > best:
                best = s10
                yi = 1
            if s01 > best:
                best = s01
                yi = 0
                yj = 1
            if s11 > best:
                yi = 1
                yj = 1
            mu[c, 0] = yi
            mu[c, 1] = yj
            mu[c, 2] = yi * yj
    return value, mm, mu


@njit(cache=True)
def arc_matrix(n, arc_h, arc_m, theta):
    """``float64 (n + 1, n + 1)`` matrix with ``theta[a]`` at ``(arc_h[a], arc_m[a])``,
    ``-inf`` elsewhere (the input of :func:`decoders._kernels.mst_heads`)."""
    S = np.full((n + 1, n + 1), -np.inf)
    for a in range(arc_h.shape[0]):
        S[arc_h[a], arc_m[a]] = theta[a]
    return S


@njit(cache=True)
def arc_mst(n, arc_h, arc_m, theta, single_root):
    """Maximum spanning arborescence over the arc list ``arc_h, arc_m`` scored ``theta``:
    :func:`decoders._kernels.mst_heads` of :func:`arc_matrix`, the same tree and status,
    with its score. Returns ``(heads, value, status)``.

    When every word's best head (ties to the lowest head, as ``mst_heads``) already
    forms a tree, with one root child under ``single_root``, that is the maximum
    spanning arborescence (Chu-Liu-Edmonds stops at its first greedy graph), found in
    O(A + n) without the dense O(n^2) matrix; otherwise the dense algorithm runs. The
    oracle of the TREE factor's QP in AD3 (:mod:`decoders._ad3_kernels`) calls this ten
    times per iteration, mostly at points whose greedy graph is a tree.
    """
    N = n + 1
    heads = np.full(N, -1, dtype=np.int64)
    best = np.full(N, -np.inf)
    for a in range(arc_h.shape[0]):
        h = arc_h[a]
        m = arc_m[a]
        if theta[a] > best[m] or (theta[a] == best[m] and h < heads[m]):
            best[m] = theta[a]
            heads[m] = h
    greedy = True
    root_children = 0
    mark = np.zeros(N, dtype=np.int64)      # 0 unseen, m walking up from m, -1 reaches 0
    mark[0] = -1
    for m in range(1, N):
        if heads[m] < 0:                     # no finite arc into m
            greedy = False
            break
        if heads[m] == 0:
            root_children += 1
        x = m
        while mark[x] == 0:
            mark[x] = m
            x = heads[x]
        if mark[x] == m:                     # the walk closed a cycle
            greedy = False
            break
        y = m                                # the walk reached the root: so does its path
        while mark[y] == m:
            mark[y] = -1
            y = heads[y]
    if greedy and (root_children == 1 or not single_root):
        heads[0] = -1
        value = 0.0
        for m in range(1, N):
            value += best[m]
        return heads, value, OK
    S = arc_matrix(n, arc_h, arc_m, theta)
    heads, status = mst_heads(S, single_root)
    if status != OK:
        return heads, -np.inf, status
    return heads, tree_value(S, heads), status


@njit(cache=True)
def _descendants(heads):
    """``bool (N, N)``: ``D[u, v]`` iff v is u or below u in the tree ``heads``."""
    N = heads.shape[0]
    D = np.zeros((N, N), dtype=np.bool_)
    for v in range(N):
        u = v
        for _ in range(N):
            D[u, v] = True
            if u == 0:
                break
            u = heads[u]
    return D


@njit(cache=True)
def tree_max_marginals(S, arc_h, arc_m, single_root):
    """Max-marginals of the TREE factor: best tree with and without each candidate arc.

    One maximum spanning tree ``T*`` (:func:`decoders._kernels.mst_heads`), then per arc
    a = (h, m) one constrained tree: an arc of ``T*`` is in the best tree "with" it
    (``T*``) and needs the best tree without it (its score set to -inf); an arc outside
    ``T*`` has ``T*`` as best tree "without" it and needs the best tree with it (the other
    heads of m set to -inf). That is ``|A|`` trees, each O(n^2) unconstrained (up to
    O(n^3) with ``single_root``), in one call, reusing one copy of ``S``.

    Exact shortcut: the greedy graph (every word's best head) bounds every tree from
    above, arc by arc. If every word but m has its best head in ``T*``, moving m in
    ``T*`` to the required head h (for "with"), or to m's best head other than h (for
    "without"), reaches that bound whenever the result is a tree (the new head is not
    below m, and with ``single_root`` the root keeps one child), so no MST is needed.
    That happens for most arcs when ``T*`` is (nearly) the greedy graph, as with a
    trained model's scores; with random scores it rarely does.
    Cost per sentence: see ``eval/results/factor_oracles.md``.

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores, ``-inf`` for non-candidate arcs.
    arc_h, arc_m:
        ``int64 (A,)`` the arcs whose max-marginals are wanted.
    single_root:
        Trees with exactly one root child.

    Returns
    -------
    max_marginals, heads, status:
        ``float64 (A, 2)``: ``[a, 0]`` the best score of a tree without arc a, ``[a, 1]``
        with it (``-inf`` when no such tree exists); the heads of ``T*``; the status of
        ``T*``'s search (when not :data:`OK`, every entry is -inf).
    """
    A = arc_h.shape[0]
    N = S.shape[0]
    mm = np.full((A, 2), -np.inf)
    heads, status = mst_heads(S, single_root)
    if status != OK:
        return mm, heads, status
    best = tree_value(S, heads)
    # Words whose head in T* is not their best head: the shortcut applies to arcs into
    # m when there is none, or m is the only one.
    n_off = 0
    off = -1
    for v in range(1, N):
        for u in range(N):
            if u != v and S[u, v] > S[heads[v], v]:
                n_off += 1
                off = v
                break
    below = _descendants(heads)
    W = S.copy()
    column = np.empty(N)
    for a in range(A):
        h = arc_h[a]
        m = arc_m[a]
        in_tree = heads[m] == h
        if not in_tree and S[h, m] == -np.inf:
            mm[a, 0] = best
            continue
        if n_off == 0 or (n_off == 1 and off == m):
            # the new head of m: h itself, or m's best head other than h
            new = h
            if in_tree:
                new = -1
                top = -np.inf
                for u in range(N):
                    if u != h and u != m and S[u, m] > top:
                        top = S[u, m]
                        new = u
            if new >= 0 and not below[m, new] and not (
                    single_root and (new == 0) != (heads[m] == 0)):
                value = best - S[heads[m], m] + S[new, m]
                mm[a, 0] = value if in_tree else best
                mm[a, 1] = best if in_tree else value
                continue
        if in_tree:
            mm[a, 1] = best
            W[h, m] = -np.inf
            other, st = mst_heads(W, single_root)
            if st == OK:
                mm[a, 0] = tree_value(W, other)
            W[h, m] = S[h, m]
        else:
            mm[a, 0] = best
            column[:] = W[:, m]
            W[:, m] = -np.inf
            W[h, m] = S[h, m]
            other, st = mst_heads(W, single_root)
            if st == OK:
                mm[a, 1] = tree_value(W, other)
            W[:, m] = column
    return mm, heads, status
