"""Numba kernels of :mod:`decoders.local_search`: the score of a tree under score
tables, and greedy single-head changes.

A tree is ``heads``, ``int64 (n + 1,)`` with ``heads[0] == -1``. The tables (built by
:func:`decoders.local_search.score_tables`) hold one score per part, keyed by the arc id
``arc_id[h, m]`` of the part's arc (``-1`` for arcs that are not candidates):

* ``arc[a]``: arc a = (h, m);
* ``grand[a, g]``: grandparent (g, h, m);
* ``sib[a, s]``: all-pairs siblings (h, m, s), m the inner child;
* ``cons[a, s + 1]``: consecutive siblings (h, m, s), with row ``n_arcs + h`` for the
  start (``m == h``) and columns 0 and ``n + 2`` for the ends ``s == -1`` and ``n + 1``;
* ``val[h, side, k]``: h has k children on ``side`` (``k == K`` means K or more);
* ``nonproj[a]``: arc a is non-projective.

Tables of part types the model does not have are empty (size 0) and skipped.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def _ancestors(heads, anc):
    """``anc[i, j]``: i is an ancestor of j or i == j (walks every word to the root)."""
    size = heads.shape[0]
    anc[:, :] = False
    for j in range(size):
        i = j
        while i >= 0:
            anc[i, j] = True
            i = heads[i]


@njit(cache=True)
def tree_score(heads, arc_id, arc, grand, sib, cons, val, nonproj, anc, inner):
    """``scores @ z`` for the structure ``z`` of the tree ``heads`` (O(n^2)).

    ``anc`` (``bool (n + 1, n + 1)``) and ``inner`` (``int64 (n + 1,)``) are work space.
    """
    n = heads.shape[0] - 1
    n_arcs = arc.shape[0]
    total = 0.0
    for m in range(1, n + 1):
        a = arc_id[heads[m], m]
        total += arc[a]
        if grand.size and heads[m] > 0:
            total += grand[a, heads[heads[m]]]
    if sib.size or cons.size or val.size:
        bins = val.shape[2] - 1
        for h in range(n + 1):
            for side in range(2):
                if side == 0 and h == 0:
                    continue
                step = 1 if side == 1 else -1
                stop = n + 1 if side == 1 else 0
                count = 0
                prev = n_arcs + h  # the start row of consecutive siblings
                for s in range(h + step, stop, step):  # outwards from h
                    if heads[s] != h:
                        continue
                    a = arc_id[h, s]
                    if sib.size:
                        for i in range(count):
                            total += sib[arc_id[h, inner[i]], s]
                    if cons.size:
                        total += cons[prev, s + 1]
                        prev = a
                    inner[count] = s
                    count += 1
                if cons.size:
                    total += cons[prev, stop + 1 if side == 1 else 0]
                if val.size:
                    total += val[h, side, min(count, bins)]
    if nonproj.size:
        _ancestors(heads, anc)
        for m in range(1, n + 1):
            h = heads[m]
            a = arc_id[h, m]
            if nonproj[a] == 0.0:
                continue
            for k in range(min(h, m) + 1, max(h, m)):
                if not anc[h, k]:
                    total += nonproj[a]
                    break
    return total


@njit(cache=True)
def hill_climb(heads, arcs, single_root, arc_id, arc, grand, sib, cons, val, nonproj):
    """Greedy ascent from ``heads`` by single head changes that keep a tree.

    Each round tries every candidate arc ``(h, m)`` in ``arcs`` order as m's new head
    (skipping those that would close a cycle, and with ``single_root`` those that would
    change the number of root children), and makes the change that raises the score
    most (the first on ties), until none raises it by more than ``1e-9``. Returns
    ``(heads, value, moves)``; ``heads`` is a new array.
    """
    heads = heads.copy()
    size = heads.shape[0]
    anc = np.zeros((size, size), dtype=np.bool_)
    cur = np.zeros((size, size), dtype=np.bool_)
    inner = np.zeros(size, dtype=np.int64)
    value = tree_score(heads, arc_id, arc, grand, sib, cons, val, nonproj, anc, inner)
    moves = 0
    while True:
        _ancestors(heads, cur)
        best, best_h, best_m = value + 1e-9, -1, -1
        for r in range(arcs.shape[0]):
            h, m = arcs[r, 0], arcs[r, 1]
            old = heads[m]
            if old == h or cur[m, h]:
                continue
            if single_root and (h == 0) != (old == 0):
                continue
            heads[m] = h
            v = tree_score(heads, arc_id, arc, grand, sib, cons, val, nonproj, anc, inner)
            heads[m] = old
            if v > best:
                best, best_h, best_m = v, h, m
        if best_m < 0:
            return heads, value, moves
        heads[best_m] = best_h
        value = best
        moves += 1
