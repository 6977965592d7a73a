"""Numba kernel of :mod:`decoders.labeled`: UD's projectivity rules for punctuation on
one tree (``heads``, ``int64 (n + 1,)``, ``heads[0] == -1``)."""

import numpy as np
from numba import njit

#: punct-is-nonproj: a word between p and its head is not dominated by the head.
IS_NONPROJ = 0
#: punct-causes-nonproj: an arc over p whose head is not an ancestor of p.
CAUSES_NONPROJ = 1


@njit(cache=True)
def _is_ancestor(heads, a, u):
    """Whether ``a`` is a proper ancestor of ``u`` (0 is everyone's)."""
    while u != 0:
        u = heads[u]
        if u == a:
            return True
    return False


@njit(cache=True)
def projectivity_witnesses(heads, is_projective):
    """``int64 (k, 4)`` rows ``(rule, p, j, x)``, at most one per word p with
    ``is_projective[p]`` and rule: for :data:`IS_NONPROJ`, ``j`` the first word of the
    gap between p and its head that the head does not dominate (``x = -1``); for
    :data:`CAUSES_NONPROJ`, ``x`` the first word whose arc crosses over p from a head
    that is not an ancestor of p (``j = -1``). The order and the first-found word are
    those of the validator's ``get_gap`` and ``get_caused_nonprojectivities``."""
    n = heads.shape[0] - 1
    out = np.full((2 * n, 4), -1, dtype=np.int64)
    k = 0
    for p in range(1, n + 1):
        if not is_projective[p]:
            continue
        pid = heads[p]
        if pid != 0:
            for j in range(min(p, pid) + 1, max(p, pid)):
                if not _is_ancestor(heads, pid, j):
                    out[k, 0], out[k, 1], out[k, 2] = IS_NONPROJ, p, j
                    k += 1
                    break
        if pid < p:
            l0, l1, r0, r1 = pid + 1, p, p + 1, n + 1
        else:
            l0, l1, r0, r1 = 1, p, p + 1, pid
        for x in range(l0, r1):
            if l1 <= x < r0:
                continue
            xp = heads[x]
            if _is_ancestor(heads, xp, p):
                continue
            if x < l1:      # left of p
                crosses = xp > p and (pid < p or xp < pid)
            else:           # right of p
                crosses = xp < p and (pid > p or xp > pid)
            if crosses:
                out[k, 0], out[k, 1], out[k, 3] = CAUSES_NONPROJ, p, x
                k += 1
                break
    return out[:k]
