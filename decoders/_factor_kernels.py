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

from ._kernels import NO_SINGLE_ROOT_TREE, NO_TREE, OK, _find_cycle, mst_heads, tree_value


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


@njit(cache=True, _nrt=False)
def _find(rep, x):
    """The super-node that node ``x`` is now part of (union-find, path compression)."""
    r = x
    while rep[r] != r:
        r = rep[r]
    while rep[x] != r:
        up = rep[x]
        rep[x] = r
        x = up
    return r


@njit(cache=True)
def _in_arcs(n, arc_h, arc_m, theta):
    """The finite arcs into each word, CSR: arcs ``in_arcs[in_start[m]:in_start[m + 1]]``
    end at word m (arcs into the root, loops and ``-inf`` arcs left out)."""
    N = n + 1
    in_start = np.zeros(N + 1, dtype=np.int64)
    for a in range(arc_h.shape[0]):
        if arc_m[a] != 0 and arc_h[a] != arc_m[a] and theta[a] > -np.inf:
            in_start[arc_m[a] + 1] += 1
    for m in range(N):
        in_start[m + 1] += in_start[m]
    fill = in_start[:N].copy()
    in_arcs = np.empty(in_start[N], dtype=np.int64)
    for a in range(arc_h.shape[0]):
        if arc_m[a] != 0 and arc_h[a] != arc_m[a] and theta[a] > -np.inf:
            in_arcs[fill[arc_m[a]]] = a
            fill[arc_m[a]] += 1
    return in_start, in_arcs


@njit(cache=True, _nrt=False)
def _best_in(v, skip, words, next_word, in_start, in_arcs, arc_h, theta, off, rep):
    """The best arc into super-node ``v`` from outside it and not from super-node
    ``skip`` (-1: none skipped), at the reweighted score ``theta[a] - off[word]``: its
    index and score, (-1, -inf) when there is none. Ties go to the lowest head."""
    best = -1
    best_w = -np.inf
    x = words[v]
    while x >= 0:
        for i in range(in_start[x], in_start[x + 1]):
            a = in_arcs[i]
            u = _find(rep, arc_h[a])
            if u == v or u == skip:
                continue
            w = theta[a] - off[x]
            if best < 0 or w > best_w or (w == best_w and arc_h[a] < arc_h[best]):
                best = a
                best_w = w
        x = next_word[x]
    return best, best_w


@njit(cache=True)
def arc_mst(n, arc_h, arc_m, theta, single_root):
    """Maximum spanning arborescence over the arc list ``arc_h, arc_m`` scored ``theta``
    (``-inf``: no arc), with one root child if ``single_root``. Returns ``(heads, value,
    status)``: the status of :func:`decoders._kernels.mst_heads` on :func:`arc_matrix`,
    and a tree of its value (the same tree unless scores tie).

    Chu-Liu-Edmonds on the arc list, contracting as Tarjan (1977) does: every super-node
    keeps its best incoming arc; a cycle of that greedy graph becomes a super-node whose
    incoming arcs are rescored by subtracting, per word, the score of the chosen arc of
    the member holding it (``off``); a union-find maps words to super-nodes; once the
    greedy graph is a tree the contractions are undone outermost first. The root
    constraint is :func:`decoders._kernels.mst_history`'s (Gabow and Tarjan 1984;
    Zmigrod, Vieira and Cotterell 2020): while the root has several children, the one
    that loses least by trading its root arc for its best other arc makes that swap. A
    contraction scans the arcs into the cycle, not a dense ``(n + 1)^2`` matrix: the
    oracle of the TREE factor's QP in AD3 (:mod:`decoders._ad3_kernels`) calls this
    1-4 times per iteration on about 5 candidate arcs per word, and the dense algorithm
    took 38% of AD3's time on en_ewt dev. When the greedy graph of the words is already
    a tree (with one root child under ``single_root``) nothing is contracted: O(A + n).
    """
    N = n + 1
    best_arc = np.full(2 * N, -1, dtype=np.int64)   # super-nodes: words, then cycles
    best_w = np.full(2 * N, -np.inf)
    for a in range(arc_h.shape[0]):
        h = arc_h[a]
        m = arc_m[a]
        if m == 0 or h == m or theta[a] == -np.inf:
            continue
        b = best_arc[m]
        if b < 0 or theta[a] > best_w[m] or (theta[a] == best_w[m] and h < arc_h[b]):
            best_arc[m] = a
            best_w[m] = theta[a]
    heads = np.full(N, -1, dtype=np.int64)
    for m in range(1, N):
        if best_arc[m] < 0:
            return heads, -np.inf, NO_TREE
    rep = np.arange(2 * N)
    words = np.full(2 * N, -1, dtype=np.int64)      # a super-node's words: a linked list
    last_word = np.full(2 * N, -1, dtype=np.int64)
    next_word = np.full(N, -1, dtype=np.int64)
    words[:N] = np.arange(N)
    last_word[:N] = np.arange(N)
    off = np.zeros(N)
    parent = np.full(2 * N, -1, dtype=np.int64)      # the cycle a super-node went into
    alive = np.zeros(2 * N, dtype=np.bool_)          # the super-nodes of the words
    pred = np.zeros(2 * N, dtype=np.int64)           # the super-node its best arc is from
    mark = np.zeros(2 * N, dtype=np.int64)
    cycle = np.empty(N, dtype=np.int64)
    in_start = np.empty(0, dtype=np.int64)
    in_arcs = np.empty(0, dtype=np.int64)
    n_cycles = 0
    while True:
        alive[:] = False
        for x in range(1, N):
            v = _find(rep, x)
            alive[v] = True
            pred[v] = _find(rep, arc_h[best_arc[v]])
        k = _find_cycle(pred, alive, mark, cycle)
        if k == 0:
            children = 0
            for x in range(1, N):
                v = _find(rep, x)
                if x == words[v] and arc_h[best_arc[v]] == 0:
                    children += 1
            if children <= 1 or not single_root:
                break
        if in_start.shape[0] == 0:
            in_start, in_arcs = _in_arcs(n, arc_h, arc_m, theta)
        if k > 0:
            new = N + n_cycles
            n_cycles += 1
            for i in range(k):
                c = cycle[i]
                x = words[c]
                while x >= 0:
                    off[x] += best_w[c]
                    x = next_word[x]
                parent[c] = new
                rep[c] = new
                if words[new] < 0:
                    words[new] = words[c]
                else:
                    next_word[last_word[new]] = words[c]
                last_word[new] = last_word[c]
            best_arc[new], best_w[new] = _best_in(new, -1, words, next_word, in_start,
                                                  in_arcs, arc_h, theta, off, rep)
            if best_arc[new] < 0:
                return heads, -np.inf, NO_TREE
            continue
        pick = -1
        pick_arc = -1
        pick_w = -np.inf
        pick_loss = np.inf
        for x in range(1, N):
            v = _find(rep, x)
            if x != words[v] or arc_h[best_arc[v]] != 0:
                continue
            b, w = _best_in(v, 0, words, next_word, in_start, in_arcs, arc_h, theta, off,
                            rep)
            loss = best_w[v] - w if b >= 0 else np.inf
            if pick < 0 or loss < pick_loss:
                pick, pick_arc, pick_w, pick_loss = v, b, w, loss
        if pick_arc < 0:
            return heads, -np.inf, NO_SINGLE_ROOT_TREE
        best_arc[pick] = pick_arc
        best_w[pick] = pick_w
    for j in range(n_cycles - 1, -1, -1):   # the member holding the entering arc's word
        c = N + j                            # takes it; the others keep their cycle arcs
        inner = arc_m[best_arc[c]]
        while parent[inner] != c:
            inner = parent[inner]
        best_arc[inner] = best_arc[c]
    value = 0.0
    for m in range(1, N):
        heads[m] = arc_h[best_arc[m]]
        value += theta[best_arc[m]]
    return heads, value, OK


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
    Cost per sentence: see ``eval/results/frozen/factor_oracles.md``.

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
