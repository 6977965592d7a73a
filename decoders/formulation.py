"""The exact decoder's integer linear program, as sparse matrices.

Martins, Smith, Xing (ACL 2009, "Concise integer linear programming formulations for
dependency parsing"), restated in ``docs/algorithms.md`` section 2. The paper's text is
not among ``../shared/papers``, so constraints are labelled here by what they say rather
than by the paper's equation numbers.

Variables, in this order (so a solution's prefix is the structure vector):

* one per part, in :class:`Parts` order (arcs z, grandparents, siblings, valency v,
  non-projective arcs n), in [0, 1]; only the arcs are declared integer, because
  integral arcs force every other variable to its value on their tree (see
  "integral arcs" below), and branching on arcs alone measured 10-45% faster with HiGHS
  than declaring every part integer;
* flows: ``flow="multi"``: phi^k_a for each word k = 1..n (commodity-major) and candidate
  arc a, in [0, 1]; ``flow="single"``: one flow phi_a per arc, in [0, n];
* valency copies w^k_a, bin-major (k = 1..K) and arc-minor, in [0, 1] (only with
  valency parts);
* ancestry p_hj (h is a proper ancestor of j), in [0, 1], for every head h of a
  non-projective-arc part and every word j != h (only when such parts exist).
  With ``ancestry="product"`` they are followed by the products w_hkj (below), one per
  such h and candidate arc k -> j with k not in {0, h} and j != h.

Constraints (``A_ub x <= b_ub``, ``A_eq x = b_eq``):

* one head per word: ``sum_h z_hm = 1``; single root (optional): ``sum_m z_0m = 1``;
* multi-commodity flow: ``sum_m phi^k_0m = 1``; ``sum_h phi^k_hj - sum_m phi^k_jm =
  [j == k]`` for every word j; ``phi^k_a <= z_a``. Single-commodity flow: ``sum_m phi_0m
  = n``; ``sum_h phi_hj - sum_m phi_jm = 1``; ``phi_a <= n z_a``;
* grandparents and all-pairs siblings, ``u = z_a AND z_b``: ``u <= z_a``, ``u <= z_b``,
  ``u >= z_a + z_b - 1``; with ``grandparent="star"`` also, per child arc h -> m of a
  word with grandparent parts, ``sum_g u_ghm <= z_hm`` and ``z_hm - sum_g (u_ghm - z_gh)
  <= 1`` over its parts (g, h, m): since h has one head, the projection of ``sum over
  every head g of h of u_ghm = z_hm``, the hull of h's grandparent star (Balas), which
  the pairwise rows do not imply (``decoders._logic_kernels.GRAND_STAR``);
* consecutive siblings: per head and side, the parts are the arcs of a path graph
  START -> children (outwards) -> END, and are constrained as a unit flow through it that
  enters and leaves child m exactly ``z_hm`` times (``sum_s u_hhs = 1``;
  ``sum_x u_hxm = z_hm``; ``sum_y u_hmy = z_hm``). With binary z the only feasible u is
  the chain of consecutive children, so no product linearization (and no constraint
  with more than O(n) nonzeros) is needed;
* valency, per head h and side (a group g with candidate children C_g), as the
  disjunction "the children are one of the bins' sets" (Balas 1998, "Disjunctive
  programming: properties of the convex hull of feasible points"): copies w^k_a of the
  arcs a of g for the bins k = 1..K with ``z_a = sum_k w^k_a``, ``0 <= w^k_a <= v_gk``,
  ``sum_{a in g} w^k_a = k v_gk`` (k < K), ``sum_{a in g} w^K_a >= K v_gK``, and
  ``sum_k v_gk = 1``. Summing gives section 2's ``sum_{k<K} k v_gk + K v_gK <= c_g <=
  sum_{k<K} k v_gk + |C_g| v_gK`` (c_g the number of children), so integer solutions
  are the same; but this is the convex hull of one group's (z, v), whereas those two
  inequalities alone admit fractional v over integral arcs (one child: v_0 = v_2 =
  1/2), which made LP optima with integral arcs score above every tree;
* non-projective arcs, J = words strictly between h and m: ``n_hm <= z_hm``;
  ``n_hm >= z_hm - p_hj`` for j in J; ``n_hm <= |J| - sum_{j in J} p_hj``.
  The shared notes (``../shared/docs/algorithms.md``) write the last one ``n_hm <= |J|
  z_hm - sum_j p_hj``, which is wrong: with ``z_hm = 0`` it forces ``p_hj = 0`` for all j
  in J, i.e. forbids every tree where h has a descendant between h and m without being
  m's head. The version here is slack when ``z_hm = 0`` and, when ``z_hm = 1``, caps n_hm
  at the number of non-descendants of h in J (0 forces a projective arc);
* ancestry, three ways (``ancestry``). ``"flow"`` (multi-commodity only, its default):
  ``p_hj = sum_h' phi^j_h'h`` (commodity j passes through h). ``"tree"`` (the default of
  the single-commodity flow, which carries no ancestry): ``p_hj = [head(j) == h] OR
  p_h,head(j)``, linearized over the candidate heads k of j: ``p_hj >= z_hj``;
  ``p_hj <= 1 - z_0j``; ``p_hj <= p_hk + 1 - z_kj`` and ``p_hj >= p_hk + z_kj - 1`` for
  k not in {0, h} (our addition: with binary z, exactly one z_kj is 1, which pins p_hj
  to p_hk or to 0/1, by induction on the depth of j). ``"product"``: the same recursion
  as a sum over j's candidate heads, ``p_hj = z_hj + sum_k w_hkj`` with ``w_hkj = z_kj
  AND p_hk`` linearized as a product (k not in {0, h}); with binary z one term is the
  head's, which pins p_hj the same way. The last two need no flow variables and are
  made of constraints on two or three variables and one sum per (h, j): the factors an
  AD3 factor graph can hold beside its TREE factor (``eval/ancestry.py`` measures how
  much each loosens the LP against ``"flow"``).

Integral arcs: with every z_a in {0, 1} the constraints force every other variable to its
value on the tree z: flows follow the tree's unique paths, products and non-projective
arcs are then pinned by their inequalities, the consecutive-sibling flow is the chain of
children, and the valency hull leaves one bin. Hence an LP optimum with integral arcs
is an ILP optimum (``docs/algorithms.md`` section 3), and the ILP only branches on arcs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .base import Budget
from .parts import Parts, PartType, positions_within

FLOWS = ("multi", "single")
ANCESTRIES = ("flow", "tree", "product")
GRANDPARENTS = ("pairs", "star")
COMMODITIES_AT_ONCE = 16
"""Commodities of the multi-commodity flow whose rows are made between two checks of
the time budget."""


@dataclass(frozen=True)
class Formulation:
    """``maximize c @ x  s.t.  A_ub x <= b_ub, A_eq x == b_eq, lower <= x <= upper``, x integral where
    ``integrality == 1``.

    Attributes
    ----------
    c:
        Objective (to *maximize*): the part scores, 0 on auxiliary variables.
    A_ub, b_ub, A_eq, b_eq:
        CSR constraint matrices and right-hand sides.
    lower, upper:
        Variable bounds.
    integrality:
        ``uint8``: 1 on the arc variables, 0 elsewhere (integral arcs determine the
        rest).
    n_parts:
        The first ``n_parts`` variables are the structure vector.
    blocks:
        Variable layout: ``{"parts", "flow", "valency", "ancestry"}`` -> slice.
    """

    c: np.ndarray
    A_ub: sp.csr_array
    b_ub: np.ndarray
    A_eq: sp.csr_array
    b_eq: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    integrality: np.ndarray
    n_parts: int
    blocks: dict

    @property
    def n_vars(self) -> int:
        return int(self.c.shape[0])


class _Rows:
    """Accumulates a block of constraint rows as COO triplets."""

    def __init__(self) -> None:
        self._r: list[np.ndarray] = []
        self._c: list[np.ndarray] = []
        self._v: list[np.ndarray] = []
        self._rhs: list[np.ndarray] = []
        self.count = 0

    def add(self, rhs, rows, cols, vals) -> None:
        """Append ``len(rhs)`` rows; entry i (value ``vals[i]``, or the scalar ``vals``)
        goes to local row ``rows[i]``, column ``cols[i]``."""
        rhs = np.asarray(rhs, dtype=np.float64).ravel()
        rows = np.asarray(rows, dtype=np.int64).ravel()
        cols = np.asarray(cols, dtype=np.int64).ravel()
        self._r.append(rows + self.count)
        self._c.append(cols)
        vals = np.asarray(vals, dtype=np.float64)
        self._v.append(np.full(cols.size, vals) if vals.ndim == 0 else vals.ravel())
        self._rhs.append(rhs)
        self.count += rhs.shape[0]

    def add_dense(self, rhs, cols, vals) -> None:
        """Append one row per line of the ``(k, w)`` arrays ``cols`` and ``vals``."""
        cols = np.asarray(cols, dtype=np.int64)
        k, w = cols.shape
        vals = np.broadcast_to(np.asarray(vals, dtype=np.float64), (k, w))
        self.add(np.broadcast_to(np.asarray(rhs, dtype=np.float64), (k,)),
                 np.repeat(np.arange(k), w), cols, vals)

    def build(self, n_vars: int) -> tuple[sp.csr_array, np.ndarray]:
        if not self._r:
            return sp.csr_array((0, n_vars)), np.zeros(0)
        matrix = sp.coo_array((np.concatenate(self._v),
                               (np.concatenate(self._r), np.concatenate(self._c))),
                              shape=(self.count, n_vars))
        return matrix.tocsr(), np.concatenate(self._rhs)


def build_formulation(parts: Parts, scores: np.ndarray | None = None, *,
                      single_root: bool = True, flow: str = "multi",
                      ancestry: str | None = None, grandparent: str = "pairs",
                      budget: Budget | None = None) -> Formulation:
    """The ILP of ``parts`` (module docstring) with objective ``scores`` (default 0).

    Parameters
    ----------
    parts:
        Any combination of the part types of :mod:`decoders.higher_order`.
    scores:
        One score per part.
    single_root:
        Add ``sum_m z_0m = 1``.
    flow:
        ``"multi"`` (default; its LP relaxation is tight for arc-factored scores) or
        ``"single"`` (O(|A|) flow variables instead of O(n |A|), looser relaxation).
    ancestry:
        How the ancestry of non-projective-arc parts is tied to the arcs: ``"flow"``,
        ``"tree"`` or ``"product"`` (module docstring); by default ``"flow"`` on the
        multi-commodity flow and ``"tree"`` on the single one (which has no ``"flow"``).
    grandparent:
        ``"pairs"`` (the product rows) or ``"star"`` (those and the star rows; module
        docstring); with ``ancestry="tree"``, the LP of AD3's full-order graph
        (:mod:`decoders.full_graph`).
    budget:
        A time budget, checked between the families of constraints (raising
        :class:`~decoders.base.TimeLimitReached` with stage ``"build"`` when spent).
    """
    budget = budget or Budget(None)
    budget.check("build")
    if flow not in FLOWS:
        raise ValueError(f"flow must be one of {FLOWS}, not {flow!r}")
    if ancestry is None:
        ancestry = "flow" if flow == "multi" else "tree"
    if ancestry not in ANCESTRIES:
        raise ValueError(f"ancestry must be one of {ANCESTRIES}, not {ancestry!r}")
    if grandparent not in GRANDPARENTS:
        raise ValueError(f"grandparent must be one of {GRANDPARENTS}, not {grandparent!r}")
    if ancestry == "flow" and flow != "multi":
        raise ValueError("ancestry 'flow' needs the multi-commodity flow")
    n = parts.n
    n_parts = len(parts)
    arc_rows = parts.block(PartType.ARC)
    arcs = parts.arcs
    ah, am = arcs[:, 0], arcs[:, 1]
    n_arcs = arcs.shape[0]
    arc_var = parts.arc_ids()
    arc_var[ah, am] += arc_rows.start
    z = arc_var[ah, am]

    # variable layout
    flow_start = n_parts
    n_flow = n * n_arcs if flow == "multi" else n_arcs
    np_rows = parts.index[parts.block(PartType.NONPROJ)]
    anc_heads = np.unique(np_rows[:, 1])
    val_start = flow_start + n_flow
    n_bins = (int(parts.index[parts.block(PartType.VALENCY), 3].max())
              if _has(parts, PartType.VALENCY) else 0)
    anc_start = val_start + n_bins * n_arcs
    anc_var = np.full((n + 1, n + 1), -1, dtype=np.int64)
    if anc_heads.size:
        hh, jj = np.meshgrid(anc_heads, np.arange(1, n + 1), indexing="ij")
        keep = hh != jj
        anc_var[hh[keep], jj[keep]] = anc_start + np.arange(int(keep.sum()))
    prod_start = anc_start + int((anc_var >= 0).sum())
    products = (_products(anc_heads, ah, am) if ancestry == "product"
                else np.zeros((0, 2), dtype=np.int64))
    n_vars = prod_start + products.shape[0]

    eq, ub = _Rows(), _Rows()

    # one head per word; single root
    eq.add(np.ones(n), am - 1, z, 1.0)
    if single_root:
        root = z[ah == 0]
        eq.add([1.0], np.zeros(root.size), root, 1.0)

    # connectivity by flows
    budget.check("build")
    if flow == "multi":
        _multi_commodity(eq, ub, n, ah, am, z, flow_start, budget)
    else:
        _single_commodity(eq, ub, n, ah, am, z, flow_start)

    # linearized products
    for part_type in (PartType.GRANDPARENT, PartType.SIBLING):
        budget.check("build")
        if _has(parts, part_type):
            rows = parts.block(part_type)
            h, m, x = parts.index[rows, 1], parts.index[rows, 2], parts.index[rows, 3]
            a = arc_var[h, m]
            b = arc_var[x, h] if part_type == PartType.GRANDPARENT else arc_var[h, x]
            _product(ub, np.arange(rows.start, rows.stop), a, b)
    if grandparent == "star" and _has(parts, PartType.GRANDPARENT):
        _grandparent_stars(ub, parts, arc_var)

    if _has(parts, PartType.CONSECUTIVE_SIBLING):
        _consecutive_siblings(eq, parts, ah, am, z)
    if _has(parts, PartType.VALENCY):
        _valency(eq, ub, parts, ah, am, z, val_start)
    if np_rows.shape[0]:
        _nonprojective(ub, parts, arc_var, anc_var)
        if ancestry == "flow":
            _ancestry_from_flows(eq, n, anc_var, ah, am, flow_start)
        elif ancestry == "tree":
            _ancestry_from_tree(ub, anc_heads, anc_var, ah, am, z)
        else:
            _ancestry_from_products(eq, ub, products, anc_var, ah, am, z, prod_start)

    budget.check("build")
    c = np.zeros(n_vars)
    if scores is not None:
        c[:n_parts] = scores
    lb = np.zeros(n_vars)
    ubound = np.ones(n_vars)
    if flow == "single":
        ubound[flow_start:val_start] = n
    integrality = np.zeros(n_vars, dtype=np.uint8)
    integrality[arc_rows] = 1
    A_ub, b_ub = ub.build(n_vars)
    A_eq, b_eq = eq.build(n_vars)
    return Formulation(c=c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                       lower=lb, upper=ubound, integrality=integrality, n_parts=n_parts,
                       blocks={"parts": slice(0, n_parts),
                               "flow": slice(flow_start, val_start),
                               "valency": slice(val_start, anc_start),
                               "ancestry": slice(anc_start, n_vars)})


def _has(parts: Parts, part_type: PartType) -> bool:
    rows = parts.block(part_type)
    return rows.stop > rows.start


def _multi_commodity(eq: _Rows, ub: _Rows, n: int, ah, am, z, start: int,
                     budget: Budget) -> None:
    """Root sends one unit of each commodity k, word j keeps it iff j == k, phi^k <= z.

    The O(n |A|) rows are made :data:`COMMODITIES_AT_ONCE` commodities at a time, with
    ``budget`` checked in between (on long sentences this is most of the build)."""
    n_arcs = ah.shape[0]
    from_root = ah == 0
    word = ~from_root
    into_rows, into_cols, out_rows, out_cols = [], [], [], []
    for first in range(0, n, COMMODITIES_AT_ONCE):
        budget.check("build")
        k = np.arange(first, min(n, first + COMMODITIES_AT_ONCE))[:, None]  # commodity k + 1
        phi = start + k * n_arcs + np.arange(n_arcs)[None, :]  # (commodities, n_arcs)
        eq.add(np.ones(k.shape[0]), np.broadcast_to(k - first, phi.shape)[:, from_root],
               phi[:, from_root], 1.0)
        # conservation row (j, k) -> (j - 1) * n + k: +phi into j, -phi out of j
        into_rows.append(((am[None, :] - 1) * n + k).ravel())
        into_cols.append(phi.ravel())
        out_rows.append(((ah[None, :] - 1) * n + k)[:, word].ravel())
        out_cols.append(phi[:, word].ravel())
        zz = np.broadcast_to(z[None, :], phi.shape)
        ub.add_dense(np.zeros(phi.size), np.stack([phi.ravel(), zz.ravel()], axis=1),
                     [1.0, -1.0])
    budget.check("build")
    into, out = np.concatenate(into_rows), np.concatenate(out_rows)
    eq.add(np.eye(n).ravel(), np.concatenate([into, out]),
           np.concatenate(into_cols + out_cols),
           np.concatenate([np.ones(into.size), -np.ones(out.size)]))


def _single_commodity(eq: _Rows, ub: _Rows, n: int, ah, am, z, start: int) -> None:
    """Root sends n units, every word keeps one, phi <= n z."""
    n_arcs = ah.shape[0]
    phi = start + np.arange(n_arcs)
    from_root = ah == 0
    eq.add([float(n)], np.zeros(int(from_root.sum())), phi[from_root], 1.0)
    eq.add(np.ones(n), np.concatenate([am - 1, ah[~from_root] - 1]),
           np.concatenate([phi, phi[~from_root]]),
           np.concatenate([np.ones(n_arcs), -np.ones(int((~from_root).sum()))]))
    ub.add_dense(np.zeros(n_arcs), np.stack([phi, z], axis=1), [1.0, -float(n)])


def _product(ub: _Rows, u, a, b) -> None:
    """``u = a AND b``: u <= a, u <= b, a + b - u <= 1."""
    k = u.shape[0]
    ub.add_dense(np.zeros(k), np.stack([u, a], axis=1), [1.0, -1.0])
    ub.add_dense(np.zeros(k), np.stack([u, b], axis=1), [1.0, -1.0])
    ub.add_dense(np.ones(k), np.stack([a, b, u], axis=1), [1.0, 1.0, -1.0])


def _grandparent_stars(ub: _Rows, parts: Parts, arc_var) -> None:
    """The star rows of every child arc of a word with grandparent parts (module
    docstring)."""
    rows = parts.block(PartType.GRANDPARENT)
    h, m, g = (parts.index[rows, c] for c in (1, 2, 3))
    arcs = parts.arcs
    child = np.flatnonzero(np.isin(arcs[:, 0], np.unique(h)))
    row_of = np.full(arcs.shape[0], -1, dtype=np.int64)
    row_of[child] = np.arange(child.size)
    r = row_of[parts.arc_ids()[h, m]]
    own = np.arange(child.size)
    z_hm = arc_var[arcs[child, 0], arcs[child, 1]]
    u = np.arange(rows.start, rows.stop)
    ub.add(np.zeros(child.size), np.concatenate([r, own]), np.concatenate([u, z_hm]),
           np.concatenate([np.ones(u.size), -np.ones(child.size)]))
    ub.add(np.ones(child.size), np.concatenate([own, r, r]),
           np.concatenate([z_hm, u, arc_var[g, h]]),
           np.concatenate([np.ones(child.size), -np.ones(u.size), np.ones(u.size)]))


def _consecutive_siblings(eq: _Rows, parts: Parts, ah, am, z) -> None:
    """Unit flow START -> children -> END per head and side (module docstring)."""
    n = parts.n
    rows = parts.block(PartType.CONSECUTIVE_SIBLING)
    u = np.arange(rows.start, rows.stop)
    h, m, s = parts.index[rows, 1], parts.index[rows, 2], parts.index[rows, 3]
    side = (s > h).astype(np.int64)
    n_arcs = ah.shape[0]
    # rows: [0, n_arcs) flow into the child of arc a; [n_arcs, 2 n_arcs) flow out of it;
    # then one START row per (head, side), numbered 2 * h + side (left of 0 unused)
    arc_pos = np.full((n + 1, n + 1), -1, dtype=np.int64)  # (h, child) -> arc position
    arc_pos[ah, am] = np.arange(n_arcs)
    is_end = (s < 0) | (s > n)
    start = m == h
    in_rows = arc_pos[h[~is_end], s[~is_end]]
    out_rows = n_arcs + arc_pos[h[~start], m[~start]]
    start_rows = 2 * n_arcs + 2 * h[start] + side[start]
    n_rows = 2 * n_arcs + 2 * (n + 1)
    rhs = np.zeros(n_rows)
    rhs[2 * n_arcs:] = 1.0
    present = np.zeros(n_rows, dtype=bool)
    present[:2 * n_arcs] = True
    present[start_rows] = True
    renumber = np.cumsum(present) - 1
    local = np.concatenate([in_rows, out_rows, start_rows,
                            np.arange(n_arcs), n_arcs + np.arange(n_arcs)])
    cols = np.concatenate([u[~is_end], u[~start], u[start], z, z])
    vals = np.concatenate([np.ones(in_rows.size + out_rows.size + start_rows.size),
                           -np.ones(2 * n_arcs)])
    eq.add(rhs[present], renumber[local], cols, vals)


def _valency(eq: _Rows, ub: _Rows, parts: Parts, ah, am, z, start: int) -> None:
    """Each (head, side) group's children form one bin's set (module docstring)."""
    rows = parts.block(PartType.VALENCY)
    h, side, k = parts.index[rows, 1], parts.index[rows, 2], parts.index[rows, 3]
    top = int(k.max())
    n_arcs = ah.shape[0]
    groups, group = np.unique(2 * h + side, return_inverse=True)
    g = groups.size
    arc_group = np.searchsorted(groups, 2 * ah + (am > ah))
    v = np.full((g, top + 1), -1, dtype=np.int64)  # (group, bin) -> variable
    v[group, k] = np.arange(rows.start, rows.stop)
    if np.any(v < 0):
        raise ValueError("valency parts need bins 0..K for every (head, side) they cover")
    eq.add(np.ones(g), group, np.arange(rows.start, rows.stop), 1.0)
    # w[k - 1, a]: the copy of arc a in bin k = 1..top
    w = start + np.arange(top * n_arcs).reshape(top, n_arcs)
    arc = np.arange(n_arcs)
    eq.add(np.zeros(n_arcs), np.concatenate([arc, np.tile(arc, top)]),
           np.concatenate([z, w.ravel()]), np.concatenate([np.ones(n_arcs), -np.ones(w.size)]))
    v_arc = v[arc_group, 1:].T  # (top, n_arcs): v_{group of a, k}
    ub.add_dense(np.zeros(w.size), np.stack([w.ravel(), v_arc.ravel()], axis=1), [1.0, -1.0])
    # sum_{a in g} w^k_a = k v_gk for the exact bins k = 1..top - 1 (row (k - 1) * g + g)
    exact = np.arange(1, top)[:, None]
    eq.add(np.zeros((top - 1) * g),
           np.concatenate([((exact - 1) * g + arc_group).ravel(),
                           ((exact - 1) * g + np.arange(g)).ravel()]),
           np.concatenate([w[:-1].ravel(), v[:, 1:top].T.ravel()]),
           np.concatenate([np.ones((top - 1) * n_arcs), -np.repeat(exact[:, 0], g)]))
    # top v_g,top <= sum_{a in g} w^top_a
    ub.add(np.zeros(g), np.concatenate([arc_group, np.arange(g)]),
           np.concatenate([w[-1], v[:, top]]),
           np.concatenate([-np.ones(n_arcs), np.full(g, float(top))]))


def _nonprojective(ub: _Rows, parts: Parts, arc_var, anc_var) -> None:
    """n <= z; n >= z - p_hj (j in J); n + sum_J p_hj <= |J|."""
    rows = parts.block(PartType.NONPROJ)
    u = np.arange(rows.start, rows.stop)
    h, m = parts.index[rows, 1], parts.index[rows, 2]
    a = arc_var[h, m]
    k = u.shape[0]
    ub.add_dense(np.zeros(k), np.stack([u, a], axis=1), [1.0, -1.0])
    lo = np.minimum(h, m)
    width = np.abs(h - m) - 1
    part = np.repeat(np.arange(k), width)
    j = lo[part] + 1 + positions_within(width)
    p = anc_var[h[part], j]
    ub.add_dense(np.zeros(part.size), np.stack([a[part], u[part], p], axis=1),
                 [1.0, -1.0, -1.0])
    ub.add(width.astype(np.float64), np.concatenate([np.arange(k), part]),
           np.concatenate([u, p]), 1.0)


def _ancestry_from_flows(eq: _Rows, n: int, anc_var, ah, am, start: int) -> None:
    """``p_hj = sum_h' phi^j_h'h``: the flow of commodity j into h."""
    n_arcs = ah.shape[0]
    hh, jj = np.nonzero(anc_var >= 0)
    pairs = hh.size
    order = np.argsort(am, kind="stable")
    first = np.searchsorted(am[order], hh)
    indeg = np.searchsorted(am[order], hh, side="right") - first
    pair = np.repeat(np.arange(pairs), indeg)
    arc = order[first[pair] + positions_within(indeg)]
    phi = start + (jj[pair] - 1) * n_arcs + arc
    eq.add(np.zeros(pairs), np.concatenate([np.arange(pairs), pair]),
           np.concatenate([anc_var[hh, jj], phi]),
           np.concatenate([np.ones(pairs), -np.ones(pair.size)]))


def _products(anc_heads, ah, am) -> np.ndarray:
    """``(k, 2)`` ``(h, a)``: the products w_hkj of ``ancestry="product"``, one per
    ancestry head h and candidate arc a = k -> j with k not in {0, h} and j != h."""
    h = np.repeat(anc_heads, ah.shape[0])
    arc = np.tile(np.arange(ah.shape[0]), anc_heads.size)
    keep = (ah[arc] != 0) & (ah[arc] != h) & (am[arc] != h)
    return np.stack([h[keep], arc[keep]], axis=1)


def _ancestry_from_products(eq: _Rows, ub: _Rows, products, anc_var, ah, am, z,
                            start: int) -> None:
    """``p_hj = z_hj + sum_k w_hkj``, ``w_hkj = z_kj AND p_hk`` (module docstring)."""
    h, arc = products[:, 0], products[:, 1]
    w = start + np.arange(h.size)
    _product(ub, w, z[arc], anc_var[h, ah[arc]])
    hh, jj = np.nonzero(anc_var >= 0)
    row = np.full(anc_var.shape, -1, dtype=np.int64)
    row[hh, jj] = np.arange(hh.size)
    own = row[ah, am] >= 0              # arcs h -> j whose head has ancestry rows
    eq.add(np.zeros(hh.size),
           np.concatenate([np.arange(hh.size), row[ah[own], am[own]], row[h, am[arc]]]),
           np.concatenate([anc_var[hh, jj], z[own], w]),
           np.concatenate([np.ones(hh.size), -np.ones(int(own.sum()) + w.size)]))


def _ancestry_from_tree(ub: _Rows, anc_heads, anc_var, ah, am, z) -> None:
    """``p_hj = [head(j) == h] OR p_h,head(j)``, linearized (module docstring)."""
    n_arcs = ah.shape[0]
    h = np.repeat(anc_heads, n_arcs)
    arc = np.tile(np.arange(n_arcs), anc_heads.size)
    k, j = ah[arc], am[arc]
    keep = j != h
    h, arc, k, j = h[keep], arc[keep], k[keep], j[keep]
    p = anc_var[h, j]
    za = z[arc]
    own = k == h
    ub.add_dense(np.zeros(int(own.sum())), np.stack([za[own], p[own]], axis=1), [1.0, -1.0])
    root = k == 0
    ub.add_dense(np.ones(int(root.sum())), np.stack([p[root], za[root]], axis=1), 1.0)
    other = ~own & ~root
    pk = anc_var[h[other], k[other]]
    cols = np.stack([p[other], pk, za[other]], axis=1)
    ub.add_dense(np.ones(int(other.sum())), cols, [1.0, -1.0, 1.0])
    ub.add_dense(np.ones(int(other.sum())), cols, [-1.0, 1.0, 1.0])
