"""Numba kernels of the decoders: pure functions over numpy arrays.

Every kernel takes a score matrix ``S``, ``float64 (n + 1, n + 1)`` with ``S[h, m]`` the
score of arc h -> m and ``-inf`` for arcs that are not candidates, and returns
``(heads, status)``: ``heads`` is ``int64 (n + 1,)`` with ``heads[0] == -1`` and
``status`` one of the codes below. Kernels never raise; the calling module turns a
status into an exception with a message. Column 0 and the diagonal of ``S`` are ignored.
"""

import numpy as np
from numba import njit

#: The tree was found.
OK = 0
#: No arborescence rooted at 0 uses only finite arcs.
NO_TREE = 1
#: Trees exist, but none with exactly one child of the root.
NO_SINGLE_ROOT_TREE = 2


@njit(cache=True)
def _preferred(prefer, h, m):
    """Whether the original arc h -> m is in the tree ``prefer`` (empty: no preference)."""
    return prefer.shape[0] > 0 and prefer[m] == h


@njit(cache=True)
def _better(val, best_val, prefer, h, m, best_h, best_m):
    """Whether the arc h -> m of value ``val`` beats the incumbent of ``best_val`` (arc
    best_h -> best_m): a larger value, or an equal finite one that is in ``prefer`` when
    the incumbent is not."""
    if val > best_val:
        return True
    return (val == best_val and val > -np.inf and _preferred(prefer, h, m)
            and not _preferred(prefer, best_h, best_m))


@njit(cache=True, _nrt=False)
def _best_head(W, alive, v, orig_h, orig_m, prefer):
    """Live slot ``u != v`` maximizing ``W[u, v]``; -1 if all -inf. Ties go to the arc of
    ``prefer``, then to the first slot."""
    best = -1
    best_val = -np.inf
    for u in range(W.shape[0]):
        if not alive[u] or u == v:
            continue
        val = W[u, v]
        if val > best_val or (val == best_val and best >= 0 and prefer.shape[0] > 0
                              and _better(val, best_val, prefer, orig_h[u, v], orig_m[u, v],
                                          orig_h[best, v], orig_m[best, v])):
            best_val = val
            best = u
    return best


@njit(cache=True, _nrt=False)
def _find_cycle(best, alive, mark, cycle):
    """Write one cycle of the greedy graph ``v <- best[v]`` into ``cycle``; its length.

    Returns 0 when the greedy graph is a tree (every walk up ``best`` reaches slot 0).
    """
    mark[:] = 0
    for x in range(1, best.shape[0]):
        if not alive[x] or mark[x] != 0:
            continue
        y = x
        while y != 0 and mark[y] == 0:
            mark[y] = x
            y = best[y]
        if y != 0 and mark[y] == x:
            k = 0
            z = y
            while True:
                cycle[k] = z
                k += 1
                z = best[z]
                if z == y:
                    return k
    return 0


@njit(cache=True)
def mst_history(S, single_root, prefer, work):
    """Maximum spanning arborescence rooted at 0 (Chu & Liu 1965; Edmonds 1967).

    Dense contraction in the manner of Tarjan (1977): every node keeps its best incoming
    arc (the greedy graph); a cycle of the greedy graph is contracted into a new node
    whose incoming arcs are rescored ``W[u, c] - W[best(c), c]``; when the greedy graph
    is a tree, the contractions are undone in reverse order. Unconstrained, a call is
    O(n^2): a contraction costs O(|cycle| n) and a cycle search O(n).

    With ``single_root``, the root constraint is enforced exactly as in Gabow and Tarjan
    (1984) and Zmigrod, Vieira and Cotterell (2020, "Please Mind the Root"): while the
    greedy graph is a tree with several root children, the child that loses least by
    trading its root arc for its best non-root head makes that swap; a cycle the swap
    closes is contracted (its best incoming arc is then a root arc) and the loop goes on.
    A swap costs O(k n) with k root children: O(n^3) at worst, near O(n^2) in practice.

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores, ``-inf`` for non-candidate arcs.
    single_root:
        Require exactly one child of the root.

    prefer:
        ``int64`` heads of a tree whose arcs win ties (Camerini, Fratta, Maffioli 1980
        need the contraction of a known optimal tree, :func:`mst_swap`), or an empty array.
    work:
        :func:`workspace` of ``S``'s size: the scratch arrays, allocated once by a caller
        that runs many passes (:func:`kbest_heads`); the returned arrays are views of it,
        overwritten by the next call.

    Returns
    -------
    heads, status, history:
        ``int64 (n + 1,)`` heads (``heads[0] == -1``) and :data:`OK`, or
        :data:`NO_TREE` / :data:`NO_SINGLE_ROOT_TREE` (``heads`` then meaningless).
        Ties go to ``prefer``'s arcs, then to the lowest slot, so equal inputs give equal
        trees. ``history`` = ``(comp, w_in, pick_h, pick_m, pick_w)`` over node ids (0..n
        the words, n + 1 + j the j-th contracted cycle): the cycle a node was contracted
        into (-1: none), the value of its chosen incoming arc subtracted from the arcs into
        it then, and the original arc it chose with its (reweighted) value at its level
        (-1 for the root, and for cycles of the single-root swaps' choices, which are not
        recorded).
    """
    N = S.shape[0]
    W, orig_h, orig_m, ints, floats = work
    heads, comp, pick_h, pick_m = ints[0, :N], ints[1], ints[2], ints[3]
    heads[:] = -1
    comp[:] = -1
    pick_h[:] = -1
    pick_m[:] = -1
    win_node, pick_w = floats[0], floats[1]
    win_node[:] = 0.0
    pick_w[:] = -np.inf
    if N <= 1:
        return heads, OK, (comp, win_node, pick_h, pick_m, pick_w)
    # The current graph lives in the N slots of W; a contracted cycle takes the slot of
    # its first member. orig_h / orig_m: the original arc that W[u, v] stands for.
    W[:, :] = S
    for u in range(N):
        W[u, u] = -np.inf
        W[u, 0] = -np.inf
        for v in range(N):
            orig_h[u, v] = u
            orig_m[u, v] = v
    # Node ids: 0..N-1 the original nodes, N + j the j-th contracted cycle.
    alive, slot_id, best = ints[4, :N], ints[5, :N], ints[6, :N]
    alive[:] = 1
    for u in range(N):
        slot_id[u] = u
    best[:] = -1
    cyc_h, cyc_m, members = ints[7], ints[8], ints[9]
    cyc_h[:] = -1
    cyc_m[:] = -1
    members_end, mark, cycle, in_cycle = ints[10, :N], ints[11, :N], ints[12, :N], ints[13, :N]
    members_end[:] = 0
    in_cycle[:] = 0
    n_members = 0
    n_contracted = 0
    w_in = floats[2, :N]

    for v in range(1, N):
        best[v] = _best_head(W, alive, v, orig_h, orig_m, prefer)
        if best[v] < 0:
            return heads, NO_TREE, (comp, win_node, pick_h, pick_m, pick_w)
        pick_h[v], pick_m[v], pick_w[v] = best[v], v, W[best[v], v]

    while True:
        k = _find_cycle(best, alive, mark, cycle)
        if k > 0:
            new_id = N + n_contracted
            r = cycle[0]
            for i in range(k):
                c = cycle[i]
                in_cycle[c] = True
                w_in[c] = W[best[c], c]
                node = slot_id[c]
                comp[node] = new_id
                win_node[node] = w_in[c]
                cyc_h[node] = orig_h[best[c], c]
                cyc_m[node] = orig_m[best[c], c]
                members[n_members] = node
                n_members += 1
            members_end[n_contracted] = n_members
            for u in range(N):  # arcs into the cycle
                if not alive[u] or in_cycle[u]:
                    continue
                bv = -np.inf
                bc = -1
                for i in range(k):
                    c = cycle[i]
                    val = W[u, c] - w_in[c]
                    if bc < 0 and val > -np.inf or bc >= 0 and _better(
                            val, bv, prefer, orig_h[u, c], orig_m[u, c], orig_h[u, bc],
                            orig_m[u, bc]):
                        bv = val
                        bc = c
                W[u, r] = bv
                if bc >= 0:
                    orig_h[u, r] = orig_h[u, bc]
                    orig_m[u, r] = orig_m[u, bc]
            for t in range(1, N):  # arcs out of the cycle
                if not alive[t] or in_cycle[t]:
                    continue
                bv = -np.inf
                bc = -1
                if in_cycle[best[t]]:   # t keeps the arc it chose (the max over the cycle)
                    bc = best[t]
                    bv = W[bc, t]
                else:
                    for i in range(k):
                        c = cycle[i]
                        if bc < 0 and W[c, t] > -np.inf or bc >= 0 and _better(
                                W[c, t], bv, prefer, orig_h[c, t], orig_m[c, t],
                                orig_h[bc, t], orig_m[bc, t]):
                            bv = W[c, t]
                            bc = c
                W[r, t] = bv
                if bc >= 0:
                    orig_h[r, t] = orig_h[bc, t]
                    orig_m[r, t] = orig_m[bc, t]
            W[r, r] = -np.inf
            for i in range(1, k):
                alive[cycle[i]] = False
                slot_id[cycle[i]] = -1
            slot_id[r] = new_id
            for t in range(1, N):
                if alive[t] and t != r and in_cycle[best[t]]:
                    best[t] = r  # W[r, t] is the max over the cycle: still the best
            for i in range(k):
                in_cycle[cycle[i]] = False
            n_contracted += 1
            best[r] = _best_head(W, alive, r, orig_h, orig_m, prefer)
            if best[r] < 0:
                return heads, NO_TREE, (comp, win_node, pick_h, pick_m, pick_w)
            pick_h[new_id] = orig_h[best[r], r]
            pick_m[new_id] = orig_m[best[r], r]
            pick_w[new_id] = W[best[r], r]
            continue
        if not single_root:
            break
        # Greedy graph is a tree: make the cheapest root-arc swap while the root has > 1 child.
        n_children = 0
        pick = -1
        pick_alt = -1
        pick_delta = np.inf
        for x in range(1, N):
            if not alive[x] or best[x] != 0:
                continue
            n_children += 1
            alt = -1
            alt_val = -np.inf
            for u in range(1, N):
                if alive[u] and u != x and W[u, x] > alt_val:
                    alt_val = W[u, x]
                    alt = u
            delta = W[0, x] - alt_val if alt >= 0 else np.inf
            if pick < 0 or delta < pick_delta:
                pick = x
                pick_alt = alt
                pick_delta = delta
        if n_children <= 1:
            break
        if pick_alt < 0:
            return heads, NO_SINGLE_ROOT_TREE, (comp, win_node, pick_h, pick_m, pick_w)
        best[pick] = pick_alt

    # Expand: every node gets one incoming original arc, outermost contraction first.
    in_h, in_m = ints[14], ints[15]
    in_h[:] = -1
    in_m[:] = -1
    for x in range(1, N):
        if alive[x]:
            in_h[slot_id[x]] = orig_h[best[x], x]
            in_m[slot_id[x]] = orig_m[best[x], x]
    for j in range(n_contracted - 1, -1, -1):
        new_id = N + j
        entry = in_m[new_id]
        while comp[entry] != new_id:  # the member of the cycle that contains the entry
            entry = comp[entry]
        start = members_end[j - 1] if j > 0 else 0
        for i in range(start, members_end[j]):
            node = members[i]
            if node == entry:
                in_h[node] = in_h[new_id]
                in_m[node] = in_m[new_id]
            else:
                in_h[node] = cyc_h[node]
                in_m[node] = cyc_m[node]
    for m in range(1, N):
        heads[m] = in_h[m]
    return heads, OK, (comp, win_node, pick_h, pick_m, pick_w)


@njit(cache=True)
def workspace(N):
    """The scratch arrays of :func:`mst_history` and :func:`mst_swap` for ``N`` nodes."""
    return (np.empty((N, N)), np.empty((N, N), dtype=np.int64),
            np.empty((N, N), dtype=np.int64), np.empty((22, 2 * N), dtype=np.int64),
            np.empty((4, 2 * N)))


@njit(cache=True)
def mst_heads(S, single_root):
    """Maximum spanning arborescence rooted at 0: :func:`mst_history` without a
    preferred tree and without the history; returns ``(heads, status)``."""
    heads, status, _ = mst_history(S, single_root, np.empty(0, dtype=np.int64),
                                   workspace(S.shape[0]))
    return heads.copy(), status



@njit(cache=True)
def _subtree_intervals(heads, ints):
    """Preorder intervals of the tree ``heads``: x descends from (or is) m iff
    ``enter[m] <= enter[x] < leave[m]``; written into rows 16.. of the workspace's
    ``ints``."""
    N = heads.shape[0]
    first_child, next_sibling = ints[16, :N], ints[17, :N]
    enter, leave, stack, cursor = ints[18, :N], ints[19, :N], ints[20, :N], ints[21, :N]
    first_child[:] = -1
    next_sibling[:] = -1
    for m in range(N - 1, 0, -1):
        next_sibling[m] = first_child[heads[m]]
        first_child[heads[m]] = m
    enter[:] = 0
    leave[:] = 0
    cursor[:] = first_child             # the next child of each node still to visit
    stack[0] = 0
    top = 1
    clock = 1
    while top > 0:
        x = stack[top - 1]
        child = cursor[x]
        if child >= 0:
            cursor[x] = next_sibling[child]
            enter[child] = clock
            clock += 1
            stack[top] = child
            top += 1
        else:
            leave[x] = clock
            top -= 1
    leave[0] = clock
    return enter, leave


@njit(cache=True)
def mst_swap(S, prefer, work):
    """Maximum spanning arborescence (any number of root children) and its best swap:
    the NEXT step of Camerini, Fratta and Maffioli (1980, section 3), in the simplified
    form of Zmigrod, Vieira and Cotterell (2021, "On Finding the K-best Non-projective
    Dependency Trees", section 3).

    Every node ``a`` of the contraction (a word, or a contracted cycle) chose an incoming
    arc ``e_a`` of reweighted value ``w_a(e_a)``; for the ``e_a`` that are arcs of the
    tree T, the best alternative is another arc ``(x, y)`` into a member y of ``a`` whose
    tail x does not descend from the head of ``e_a``'s modifier in T, of reweighted
    value ``w_a(x, y) = S[x, y] - off_a(y)`` (``off_a(y)``: what the contractions inside
    ``a`` subtracted from the arcs into y). Swapping costs ``delta_a = w_a(e_a) - w_a(x,
    y)`` and gives a tree without ``e_a``; the second-best tree is the swap of least
    ``delta`` (their Theorem: it is the best tree without that ``e_a``). O(n^2) times the
    depth of the nesting of cycles.

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores, ``-inf`` for non-candidate arcs.
    prefer:
        Heads of a tree that is optimal under ``S``, whose contraction is to be followed
        (its arcs win ties), or an empty array.
    work:
        :func:`workspace` of ``S``'s size (``heads`` is a view of it).

    Returns
    -------
    heads, status, swap_h, swap_m, delta:
        The tree and status of :func:`mst_history`; the arc ``swap_h -> swap_m`` of the
        tree to exclude for the second-best tree and the loss ``delta >= 0`` of that tree
        (-1, -1, ``inf`` when the tree is the only one).
    """
    heads, status, history = mst_history(S, False, prefer, work)
    comp, w_in, pick_h, pick_m, pick_w = history
    N = S.shape[0]
    if status != OK or N <= 1:
        return heads, status, -1, -1, np.inf
    enter, leave = _subtree_intervals(heads, work[3])
    alternative = work[4][3]
    alternative[:] = -np.inf
    for y in range(1, N):
        a = y
        off = 0.0
        while a >= 0:
            h, m = pick_h[a], pick_m[a]
            if h >= 0 and heads[m] == h:
                best = alternative[a]
                for x in range(N):
                    if (x == y or (x == h and y == m)
                            or (enter[m] <= enter[x] and enter[x] < leave[m])):
                        continue
                    val = S[x, y] - off
                    if val > best:
                        best = val
                alternative[a] = best
            off += w_in[a]
            a = comp[a]
    swap_h, swap_m, delta = -1, -1, np.inf
    for a in range(1, 2 * N):
        h = pick_h[a]
        if h >= 0 and heads[pick_m[a]] == h and alternative[a] > -np.inf:
            d = pick_w[a] - alternative[a]
            if d < delta:
                swap_h, swap_m, delta = h, pick_m[a], d
    return heads, status, swap_h, swap_m, delta


@njit(cache=True)
def eisner_heads(S, single_root):
    """Best projective tree rooted at 0 (Eisner 1996), O(n^3) time, O(n^2) space.

    Charts over spans ``s < t``: complete ``CL[s, t]`` (headed by t, covering s..t) and
    ``CR[s, t]`` (headed by s), incomplete ``IL[s, t]`` (arc t -> s) and ``IR[s, t]``
    (arc s -> t); an incomplete span is ``CR[s, r] + CL[r + 1, t]`` plus its arc.
    Unconstrained, the answer is ``CR[0, n]``. With ``single_root`` the charts cover
    words 1..n only and the root takes exactly one child r:
    ``max_r S[0, r] + CL[1, r] + CR[r, n]``.

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)`` arc scores, ``-inf`` for non-candidate arcs.
    single_root:
        Require exactly one child of the root.

    Returns
    -------
    heads, status:
        ``int64 (n + 1,)`` heads and :data:`OK`, or :data:`NO_TREE` when no projective
        tree (with one root child if ``single_root``) uses only finite arcs. Ties go to
        the leftmost split point.
    """
    N = S.shape[0]
    heads = np.full(N, -1, dtype=np.int64)
    if N <= 1:
        return heads, OK
    # Inner loops run along rows: CL and CR are also kept transposed (CL_t[t, s] is
    # CL[s, t]), and IL only transposed.
    CL = np.full((N, N), -np.inf)
    CL_t = np.full((N, N), -np.inf)
    CR = np.full((N, N), -np.inf)
    CR_t = np.full((N, N), -np.inf)
    IL_t = np.full((N, N), -np.inf)
    IR = np.full((N, N), -np.inf)
    split_i = np.zeros((N, N), dtype=np.int64)
    split_cl = np.zeros((N, N), dtype=np.int64)
    split_cr = np.zeros((N, N), dtype=np.int64)
    for s in range(N):
        CL[s, s] = CL_t[s, s] = 0.0
        CR[s, s] = CR_t[s, s] = 0.0
    lo = 1 if single_root else 0
    for width in range(1, N):
        for s in range(lo, N - width):
            t = s + width
            bv = -np.inf
            br = s
            for r in range(s, t):
                val = CR[s, r] + CL_t[t, r + 1]
                if val > bv:
                    bv = val
                    br = r
            split_i[s, t] = br
            IL_t[t, s] = bv + S[t, s] if s > 0 else -np.inf
            IR[s, t] = bv + S[s, t]
            bv = -np.inf
            br = s
            for r in range(s, t):
                val = CL[s, r] + IL_t[t, r]
                if val > bv:
                    bv = val
                    br = r
            CL[s, t] = CL_t[t, s] = bv
            split_cl[s, t] = br
            bv = -np.inf
            br = t
            for r in range(s + 1, t + 1):
                val = IR[s, r] + CR_t[t, r]
                if val > bv:
                    bv = val
                    br = r
            CR[s, t] = CR_t[t, s] = bv
            split_cr[s, t] = br

    # Backtrack with an explicit stack of (s, t, kind): 0 = CL, 1 = CR, 2 = IL, 3 = IR.
    stack = np.empty((2 * N + 2, 3), dtype=np.int64)
    top = 0
    if single_root:
        best = -np.inf
        root_child = -1
        for r in range(1, N):
            val = S[0, r] + CL[1, r] + CR[r, N - 1]
            if val > best:
                best = val
                root_child = r
        if root_child < 0:
            return heads, NO_TREE
        heads[root_child] = 0
        stack[0, 0], stack[0, 1], stack[0, 2] = 1, root_child, 0
        stack[1, 0], stack[1, 1], stack[1, 2] = root_child, N - 1, 1
        top = 2
    else:
        if CR[0, N - 1] == -np.inf:
            return heads, NO_TREE
        stack[0, 0], stack[0, 1], stack[0, 2] = 0, N - 1, 1
        top = 1
    while top > 0:
        top -= 1
        s, t, kind = stack[top, 0], stack[top, 1], stack[top, 2]
        if s == t:
            continue
        if kind == 0:
            r = split_cl[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 0
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 2
            top += 2
        elif kind == 1:
            r = split_cr[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 3
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 1
            top += 2
        else:
            if kind == 2:
                heads[s] = t
            else:
                heads[t] = s
            r = split_i[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 1
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r + 1, t, 0
            top += 2
    return heads, OK


# -- K best trees (decoders.kbest) ---------------------------------------------------

FORBID = 0
FORCE = 1
# Kinds of queued subproblems (columns of ``items`` in :func:`kbest_heads`).
ROOT_FREE = 0       # best tree known, not produced; root child free (single-root MST)
FRESH = 1           # best tree known, not produced; its best swap known
PRODUCED = 2        # best tree produced; its next tree is the best without arc (h, m)
KEY, KIND, SUB, TREE, ARC_H, ARC_M, DELTA, ALIVE = range(8)
NO_PREFERENCE = np.empty(0, dtype=np.int64)


@njit(cache=True)
def _room(rows, n):
    """``rows`` with room for row ``n`` (doubled when full)."""
    if n < rows.shape[0]:
        return rows
    return np.concatenate((rows, np.empty_like(rows)))


@njit(cache=True)
def tree_value(S, heads):
    """Score ``sum_m S[heads[m], m]`` of the tree ``heads``."""
    total = 0.0
    for m in range(1, heads.shape[0]):
        total += S[heads[m], m]
    return total


@njit(cache=True)
def _subproblem(S, Q, sub, mods, single_root, undo):
    """Turn ``Q`` (equal to ``S``) into the scores of subproblem ``sub`` (-1: ``S``
    itself): ``S`` with the arcs its chain of modifications forbids or forces (forcing
    h -> m forbids m's other heads, and with ``single_root`` forcing 0 -> m forbids the
    root's other arcs); with ``undo``, turn it back into ``S``. O(n) per modification,
    where a copy of ``S`` would cost O(n^2) per subproblem."""
    while sub >= 0:
        kind, h, m = mods[sub, 1], mods[sub, 2], mods[sub, 3]
        if kind == FORBID:
            Q[h, m] = S[h, m] if undo else -np.inf
        else:
            if undo:
                Q[:, m] = S[:, m]
            else:
                Q[:, m] = -np.inf
                Q[h, m] = S[h, m]
            if single_root and h == 0:
                if undo:
                    Q[0, :] = S[0, :]
                else:
                    Q[0, :] = -np.inf
                    Q[0, m] = S[0, m]
        sub = mods[sub, 0]


@njit(cache=True)
def _modify(mods, n_mods, sub, kind, h, m):
    mods = _room(mods, n_mods)
    mods[n_mods, 0], mods[n_mods, 1], mods[n_mods, 2], mods[n_mods, 3] = sub, kind, h, m
    return mods, n_mods + 1


@njit(cache=True)
def _keep_tree(trees, n_trees, heads):
    trees = _room(trees, n_trees)
    trees[n_trees] = heads
    return trees, n_trees + 1


@njit(cache=True)
def _queue(items, n_items, key, kind, sub, tree, h, m, delta):
    items = _room(items, n_items)
    items[n_items, KEY], items[n_items, KIND], items[n_items, SUB] = key, kind, sub
    items[n_items, TREE], items[n_items, ARC_H], items[n_items, ARC_M] = tree, h, m
    items[n_items, DELTA], items[n_items, ALIVE] = delta, 1.0
    return items, n_items + 1


@njit(cache=True)
def _rest(S, Q, sub, tree, single_root, mods, n_mods, trees, n_trees, items, n_items,
          work):
    """Queue what is left of subproblem ``sub`` once its best tree ``trees[tree]`` is
    produced (every tree of ``sub`` has one root child, or any number is allowed).

    The pass that finds the best swap follows the produced tree T (its arcs win ties).
    Should it still end in another tree of the same score (ties made unequal by floating
    point), the subproblem is split on an arc d of T missing from it: without d (queued
    as a fresh subproblem) and with d (tried again); with all of T forced, T is the only
    tree, so this ends."""
    T = trees[tree]
    score = tree_value(S, T)
    while True:
        _subproblem(S, Q, sub, mods, single_root, False)
        heads, status, h, m, delta = mst_swap(Q, T, work)
        _subproblem(S, Q, sub, mods, single_root, True)
        d = 1
        while d < T.shape[0] and heads[d] == T[d]:
            d += 1
        if d == T.shape[0]:
            if h >= 0:
                items, n_items = _queue(items, n_items, score - delta, PRODUCED, sub, tree,
                                        h, m, 0.0)
            return mods, n_mods, trees, n_trees, items, n_items
        mods, n_mods = _modify(mods, n_mods, sub, FORBID, T[d], d)
        _subproblem(S, Q, n_mods - 1, mods, single_root, False)
        other, status, h, m, delta = mst_swap(Q, NO_PREFERENCE, work)
        _subproblem(S, Q, n_mods - 1, mods, single_root, True)
        trees, n_trees = _keep_tree(trees, n_trees, other)
        T = trees[tree]
        items, n_items = _queue(items, n_items, tree_value(S, other), FRESH, n_mods - 1,
                                n_trees - 1, h, m, delta)
        mods, n_mods = _modify(mods, n_mods, sub, FORCE, T[d], d)
        sub = n_mods - 1


@njit(cache=True)
def kbest_heads(S, k, single_root):
    """The ``k`` best trees of ``S`` (fewer if fewer exist); see :mod:`decoders.kbest`.

    Subproblems are chains of modifications (forbid or force an arc) of ``S``, kept as
    rows ``(parent, kind, h, m)`` and applied to (then undone in) one copy of ``S`` when
    solved;
    the queue is a table of rows ``(key, kind, subproblem, tree, h, m, delta, alive)``
    searched for its largest key (the earliest row on ties: deterministic).

    Returns
    -------
    heads, scores, status:
        ``int64 (t, n + 1)`` trees in non-increasing order of score (the order produced,
        up to rounding), their ``float64 (t,)`` scores, and :data:`OK` or the status of the
        first tree's :func:`mst_heads` (then ``t == 0``).
    """
    N = S.shape[0]
    out_heads = np.empty((k, N), dtype=np.int64)
    out_scores = np.empty(k)
    n_out = 0
    mods = np.empty((8, 4), dtype=np.int64)
    trees = np.empty((8, N), dtype=np.int64)
    items = np.empty((8, 8))
    n_mods, n_trees, n_items = 0, 0, 0
    Q = S.copy()                    # a subproblem's scores, then S again (_subproblem)
    work = workspace(N)
    if single_root:
        heads, status, _ = mst_history(S, True, NO_PREFERENCE, work)
        if status != OK:
            return out_heads[:0], out_scores[:0], status
        trees, n_trees = _keep_tree(trees, n_trees, heads)
        items, n_items = _queue(items, n_items, tree_value(S, heads), ROOT_FREE, -1, 0,
                                -1, -1, 0.0)
    else:
        heads, status, h, m, delta = mst_swap(S, NO_PREFERENCE, work)
        if status != OK:
            return out_heads[:0], out_scores[:0], status
        trees, n_trees = _keep_tree(trees, n_trees, heads)
        items, n_items = _queue(items, n_items, tree_value(S, heads), FRESH, -1, 0,
                                h, m, delta)
    while n_out < k:
        top = -1
        for i in range(n_items):
            if items[i, ALIVE] > 0 and (top < 0 or items[i, KEY] > items[top, KEY]):
                top = i
        if top < 0:
            break
        items[top, ALIVE] = 0.0
        kind, sub, tree = int(items[top, KIND]), int(items[top, SUB]), int(items[top, TREE])
        h, m = int(items[top, ARC_H]), int(items[top, ARC_M])
        without, h2, m2, delta = -1, -1, -1, 0.0
        if kind == PRODUCED:        # produce the best tree without h -> m
            mods, n_mods = _modify(mods, n_mods, sub, FORBID, h, m)
            without = n_mods - 1
            _subproblem(S, Q, without, mods, single_root, False)
            heads, status, h2, m2, delta = mst_swap(Q, NO_PREFERENCE, work)
            _subproblem(S, Q, without, mods, single_root, True)
            trees, n_trees = _keep_tree(trees, n_trees, heads)
            produced = n_trees - 1
        else:
            produced = tree
        out_heads[n_out] = trees[produced]
        out_scores[n_out] = tree_value(S, trees[produced])
        n_out += 1
        if n_out == k:
            break
        if kind == PRODUCED:
            if h2 >= 0:
                items, n_items = _queue(items, n_items, out_scores[n_out - 1] - delta,
                                        PRODUCED, without, produced, h2, m2, 0.0)
            mods, n_mods = _modify(mods, n_mods, sub, FORCE, h, m)
            mods, n_mods, trees, n_trees, items, n_items = _rest(
                S, Q, n_mods - 1, tree, single_root, mods, n_mods, trees, n_trees, items,
                n_items, work)
        elif kind == FRESH:
            if h >= 0:
                items, n_items = _queue(items, n_items, out_scores[n_out - 1]
                                        - items[top, DELTA], PRODUCED, sub, tree, h, m, 0.0)
        elif N > 1:                 # ROOT_FREE: split on the root child r
            r = 1
            while trees[tree, r] != 0:
                r += 1
            mods, n_mods = _modify(mods, n_mods, sub, FORBID, 0, r)
            _subproblem(S, Q, n_mods - 1, mods, single_root, False)
            heads, status, _ = mst_history(Q, True, NO_PREFERENCE, work)
            _subproblem(S, Q, n_mods - 1, mods, single_root, True)
            if status == OK:
                trees, n_trees = _keep_tree(trees, n_trees, heads)
                items, n_items = _queue(items, n_items, tree_value(S, heads), ROOT_FREE,
                                        n_mods - 1, n_trees - 1, -1, -1, 0.0)
            mods, n_mods = _modify(mods, n_mods, sub, FORCE, 0, r)
            mods, n_mods, trees, n_trees, items, n_items = _rest(
                S, Q, n_mods - 1, tree, single_root, mods, n_mods, trees, n_trees, items,
                n_items, work)
    for i in range(1, n_out):       # rounding may swap neighbours: keep the order stable
        j = i
        while j > 0 and out_scores[j] > out_scores[j - 1]:
            out_scores[j], out_scores[j - 1] = out_scores[j - 1], out_scores[j]
            row = out_heads[j].copy()
            out_heads[j] = out_heads[j - 1]
            out_heads[j - 1] = row
            j -= 1
    return out_heads[:n_out], out_scores[:n_out], OK
