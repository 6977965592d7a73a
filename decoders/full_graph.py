"""The factor graph of the full-order model, for AD3 (issue 13).

Variables (binary): the candidate arcs ``z_a`` (first, in ARC-block order), the ancestry
``p_hj`` (h a proper ancestor of j) for every head h of a non-projective-arc part and
every word ``j != h``, and per non-projective-arc part ``(h, m)`` its span variable
``y_hm`` (some word strictly between h and m is not below h). Factors:

- one TREE over the arcs, and a pairwise factor (scored on its (1, 1) state) per
  all-pairs sibling part, as in :mod:`decoders.factor_graph`;
- per word h with grandparent parts, a GRAND_STAR factor over its head arcs and its
  child arcs that scores them (:data:`decoders._logic_kernels.GRAND_STAR`): tighter
  than a pairwise factor per part, since a word has one head, ``sum_g u_ghm = z_hm``.
  On the hardest en_ewt dev sentences of a full model this closed 70-77% of the flow
  LP's gap to the optimum (probe: 424 to 98 on a 75-word sentence), where branch and
  bound had to split hundreds of nodes;
- per non-projective-arc part, a pairwise factor on ``(z_hm, y_hm)`` scored with the
  part's score (the part is ``z_hm AND y_hm``) and a NOT-ALL factor ``y_hm = 1`` iff
  some ``p_hj = 0``, j in the span;
- per head and side, a VALENCY factor over its candidate arcs, its bins scored;
- the ancestry recursion of :mod:`decoders.formulation` (``ancestry="tree"``), per
  ancestry head h and candidate arc ``k -> j`` (``j != h``): IMPLY ``z_hj <= p_hj`` when
  ``k == h``, NAND ``p_hj + z_0j <= 1`` when ``k == 0``, else EQUAL-IF ``p_hj == p_hk``
  when ``z_kj``.

Its LP is that of the multi-commodity program with ``ancestry="tree"`` and
``grandparent="star"``: the TREE factor's polytope is the projection of the flows on the
arcs; GRAND_STAR's is that program's star rows with the products; NOT-ALL's is the hull of
an OR of negated inputs and the pairwise factor's the linearized product, which
together project onto that program's non-projective-arc constraints; VALENCY's is the
convex hull of one group's program (Balas); the small factors' are their constraints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import _logic_kernels as lk
from ._ad3_kernels import QP_ITERATIONS
from .factor_graph import largest_score
from .parts import Parts, PartType, positions_within


@dataclass(frozen=True)
class FullGraph:
    """The graph as flat arrays (module docstring), for :func:`_logic_kernels.ad3_full`.

    Attributes
    ----------
    n, single_root, arc_h, arc_m:
        As :class:`decoders.factor_graph.FactorGraph`'s (the first ``A`` variables).
    unary:
        ``float64 (V,)``: each variable's score on state 1 (0 but on arcs).
    pair_i, pair_j, pair_score:
        ``(P,)``: pairwise factors on variables ``pair_i, pair_j`` scoring their (1, 1)
        state; ``pair_part`` ``(P,)`` the part row each one is.
    grand_part, grand_cell:
        The row of each grandparent part and where its score lies in ``data`` (its
        word's GRAND_STAR factor).
    kind, link_start, link_var, data_start, data:
        The other factors: factor f of kind ``kind[f]`` (:mod:`decoders._logic_kernels`)
        has links ``link_var[link_start[f]:link_start[f + 1]]`` and data
        ``data[data_start[f]:data_start[f + 1]]``.
    var_type, var_h, var_j:
        ``int64 (V,)``: what variable v is (:data:`~decoders._logic_kernels.ARC_VAR`,
        ``ANCESTRY_VAR`` or ``SPAN_VAR``) and its two words (arc h -> m; h above j;
        the span of the non-projective arc h -> m).
    constant:
        Score of the valency groups without candidate arcs (their bin 0).
    valency_factor, valency_rows:
        Per valency group (head and side): its VALENCY factor (-1 without candidate
        arcs), and ``(G, K + 1)`` the part rows of its bins.
    arc_start:
        The part row of the first arc.
    var_key, pair_key, link_key:
        ``int64``: what each variable, pairwise factor and link of the other factors is
        about, in the words of the sentence (:func:`_keys`), the same in every graph of
        one sentence: the file under which :class:`FullState` carries AD3's point and
        multipliers from one graph to another.
    """

    n: int
    single_root: bool
    arc_h: np.ndarray
    arc_m: np.ndarray
    unary: np.ndarray
    pair_i: np.ndarray
    pair_j: np.ndarray
    pair_score: np.ndarray
    pair_part: np.ndarray
    kind: np.ndarray
    link_start: np.ndarray
    link_var: np.ndarray
    data_start: np.ndarray
    data: np.ndarray
    var_type: np.ndarray
    var_h: np.ndarray
    var_j: np.ndarray
    constant: float
    valency_factor: np.ndarray
    valency_rows: np.ndarray
    grand_part: np.ndarray
    grand_cell: np.ndarray
    arc_start: int
    var_key: np.ndarray
    pair_key: np.ndarray
    link_key: np.ndarray

    @classmethod
    def from_parts(cls, parts: Parts, scores: np.ndarray, *,
                   single_root: bool = True) -> FullGraph:
        """The graph of ``parts`` (arcs, grandparents, all-pairs siblings, valency,
        non-projective arcs) scored by ``scores``."""
        if parts.block(PartType.CONSECUTIVE_SIBLING).stop > \
                parts.block(PartType.CONSECUTIVE_SIBLING).start:
            raise ValueError("consecutive siblings have no factor in the full graph")
        n = parts.n
        arcs = parts.arcs
        ah, am = arcs[:, 0], arcs[:, 1]
        A = ah.size
        arc_of = parts.arc_ids()
        arc_scores = scores[parts.block(PartType.ARC)]
        # ancestry variables
        nonproj = parts.block(PartType.NONPROJ)
        np_h, np_m = parts.index[nonproj, 1], parts.index[nonproj, 2]
        anc_heads = np.unique(np_h)
        anc = np.full((n + 1, n + 1), -1, dtype=np.int64)
        hh, jj = np.meshgrid(anc_heads, np.arange(1, n + 1), indexing="ij")
        keep = hh != jj
        anc[hh[keep], jj[keep]] = A + np.arange(int(keep.sum()))
        y_start = A + int(keep.sum())
        V = y_start + np_h.size
        unary = np.zeros(V)
        unary[:A] = arc_scores
        # pairwise factors: siblings, non-projective arcs
        rows = parts.block(PartType.SIBLING)
        h, m, x = (parts.index[rows, c] for c in (1, 2, 3))
        pi, pj, ps, pp = [arc_of[h, m]], [arc_of[h, x]], [scores[rows]], [np.arange(
            rows.start, rows.stop)]
        pi.append(arc_of[np_h, np_m])
        pj.append(y_start + np.arange(np_h.size))
        ps.append(scores[nonproj])
        pp.append(np.arange(nonproj.start, nonproj.stop))
        # the other factors, one block per kind: (kinds, flat links, links per factor,
        # flat data, data per factor)
        blocks = []
        # valency: bins sorted by group (2 h + side) and bin; arcs by group
        valency = parts.block(PartType.VALENCY)
        v_rows = parts.index[valency]
        v_key = 2 * v_rows[:, 1] + v_rows[:, 2]
        order = np.lexsort((v_rows[:, 3], v_key))
        groups = np.unique(v_key)
        v_part_rows = ((valency.start + order).reshape(groups.size, -1) if groups.size
                       else np.zeros((0, 1), dtype=np.int64))
        bins = scores[v_part_rows]
        arc_key = 2 * ah + (am > ah)
        by_group = np.argsort(arc_key, kind="stable")
        size = (np.searchsorted(arc_key[by_group], groups, side="right")
                - np.searchsorted(arc_key[by_group], groups))
        full = size > 0
        v_factor = np.where(full, np.cumsum(full) - 1, -1)
        constant = float(bins[~full, 0].sum())
        blocks.append((np.full(int(full.sum()), lk.VALENCY), by_group, size[full],
                       bins[full].ravel(), np.full(int(full.sum()), bins.shape[1]),
                       np.stack([groups[full] // 2, groups[full] % 2, 0 * groups[full]], 1)))
        # grandparent stars
        grand = parts.block(PartType.GRANDPARENT)
        star, grand_cell = _grandparent_stars(parts, arc_of, scores[grand])
        grand_cell = grand_cell + sum(block[3].size for block in blocks)
        blocks.append(star)
        # non-projective spans: the ancestry of every word strictly inside, then y
        width = np.abs(np_h - np_m) - 1
        part = np.repeat(np.arange(np_h.size), width)
        offset = positions_within(width)
        first = np.cumsum(width + 1) - (width + 1)
        spans = np.empty(int((width + 1).sum()), dtype=np.int64)
        spans[first[part] + offset] = anc[np_h[part], np.minimum(np_h, np_m)[part] + 1 + offset]
        spans[first + width] = y_start + np.arange(np_h.size)
        blocks.append((np.full(np_h.size, lk.NOT_ALL), spans, width + 1, np.zeros(0),
                       np.zeros(np_h.size, dtype=np.int64),
                       np.stack([np_h, np_m, 0 * np_h], 1)))
        # the ancestry recursion, per ancestry head h and arc k -> j with j != h
        h = np.repeat(anc_heads, A)
        a = np.tile(np.arange(A), anc_heads.size)
        keep_arc = am[a] != h
        h, a = h[keep_arc], a[keep_arc]
        k, p_hj = ah[a], anc[h, am[a]]
        for kind, chosen, columns in (
                (lk.IMPLY, k == h, lambda c: (a[c], p_hj[c])),
                (lk.NAND, k == 0, lambda c: (p_hj[c], a[c])),
                (lk.EQUAL_IF, (k != h) & (k != 0),
                 lambda c: (p_hj[c], anc[h[c], k[c]], a[c]))):
            cols = columns(chosen)
            count = int(chosen.sum())
            blocks.append((np.full(count, kind), np.stack(cols, axis=1).ravel(),
                           np.full(count, len(cols)), np.zeros(0),
                           np.zeros(count, dtype=np.int64),
                           np.stack([h[chosen], k[chosen], am[a[chosen]]], 1)))
        kinds, links, link_len, data, data_len, about = (np.concatenate(c)
                                                         for c in zip(*blocks))
        var_type = np.repeat(np.array([lk.ARC_VAR, lk.ANCESTRY_VAR, lk.SPAN_VAR]),
                             [A, y_start - A, np_h.size])
        var_h = np.concatenate([ah, hh[keep], np_h]).astype(np.int64)
        var_j = np.concatenate([am, jj[keep], np_m]).astype(np.int64)
        pair_part = np.concatenate(pp).astype(np.int64)
        var_key, pair_key, link_key = _keys(n, var_type, var_h, var_j,
                                            parts.index[pair_part],
                                            np.minimum(kinds, lk.GRAND_STAR), about,
                                            link_len, links)
        return cls(n=n, single_root=single_root, arc_h=ah.copy(), arc_m=am.copy(),
                   unary=unary, pair_i=np.concatenate(pi).astype(np.int64),
                   pair_j=np.concatenate(pj).astype(np.int64),
                   pair_score=np.concatenate(ps).astype(np.float64),
                   pair_part=pair_part,
                   kind=kinds.astype(np.int64),
                   link_start=np.concatenate([[0], np.cumsum(link_len)]).astype(np.int64),
                   link_var=links.astype(np.int64),
                   data_start=np.concatenate([[0], np.cumsum(data_len)]).astype(np.int64),
                   data=data.astype(np.float64),
                   var_type=var_type, var_h=var_h, var_j=var_j,
                   constant=float(constant),
                   valency_factor=v_factor.astype(np.int64),
                   valency_rows=v_part_rows.astype(np.int64),
                   grand_part=np.arange(grand.start, grand.stop, dtype=np.int64),
                   grand_cell=grand_cell.astype(np.int64),
                   arc_start=parts.block(PartType.ARC).start,
                   var_key=var_key, pair_key=pair_key, link_key=link_key)

    @property
    def n_vars(self) -> int:
        return int(self.unary.shape[0])

    def ad3(self, *, penalty: float = 0.1, adapt_penalty: bool = True, tol: float = 1e-6,
            max_iter: int = 10000, qp_iter: int = QP_ITERATIONS, cutoff: float = -np.inf,
            start: FullState | None = None) -> FullRelaxation:
        """AD3 on this graph (:func:`decoders._logic_kernels.ad3_full`), the scores
        divided by their largest magnitude (:func:`largest_score`) inside
        and the values multiplied back; the valency constant is added to both bounds.
        It stops early once the dual value is at most ``cutoff``. ``start``: where AD3
        stopped on another graph of the sentence (carried over by
        :meth:`FullState.onto`), else a cold start; the result's ``state`` is where it
        stops here."""
        scale = largest_score(self.unary, self.pair_score, self.data)
        start = FullState.cold(self) if start is None else start.onto(self)
        p, lam_tree, lam_pair, lam_link = (start.p, start.lam_tree / scale,
                                           start.lam_pair / scale, start.lam_link / scale)
        (p, dual, tree, tree_score, iterations, certified, converged, status, f_act,
         f_beta, f_k, act_start, vec_start) = lk.ad3_full(
            self.n, self.arc_h, self.arc_m, self.unary / scale, self.pair_i, self.pair_j,
            self.pair_score / scale, self.kind, self.link_start, self.link_var,
            self.data_start, self.data / scale, self.var_type, self.var_h, self.var_j,
            self.single_root, float(penalty), adapt_penalty, float(tol), int(max_iter),
            int(qp_iter), float((cutoff - self.constant) / scale), p, lam_tree, lam_pair,
            lam_link)
        bins = np.empty(self.valency_rows.shape)
        lk.valency_bins(f_act, f_beta, f_k, act_start, vec_start, self.link_start,
                        self.valency_factor, bins)
        products = np.empty(self.data.size)
        lk.star_products(f_act, f_beta, f_k, act_start, vec_start, self.link_start,
                         self.data_start, self.kind, products)
        return FullRelaxation(p=p, bins=bins, grand=products[self.grand_cell],
                              dual=float(dual * scale + self.constant), heads=tree,
                              tree_score=float(tree_score * scale + self.constant),
                              iterations=int(iterations), certified=bool(certified),
                              converged=bool(converged), status=int(status),
                              state=FullState(self.var_key, p, lam_tree * scale,
                                              self.pair_key, lam_pair * scale,
                                              self.link_key, lam_link * scale))

    def to_parts(self, n_parts: int, relaxed: FullRelaxation) -> np.ndarray:
        """The structure vector of ``relaxed`` over the ``n_parts`` parts: the arcs'
        consensus values, each pairwise part's best value the linearized product allows
        with its two variables' (as :func:`decoders._ad3_kernels.feasible_value`), and
        the valency bins' and grandparent products' marginals from their factors'
        active sets; clipped to [0, 1]."""
        out = np.zeros(n_parts)
        A = self.arc_h.size
        out[self.arc_start:self.arc_start + A] = relaxed.p[:A]
        qi, qj = relaxed.p[self.pair_i], relaxed.p[self.pair_j]
        out[self.pair_part] = np.where(self.pair_score > 0, np.minimum(qi, qj),
                                       np.maximum(0.0, qi + qj - 1.0))
        out[self.valency_rows] = relaxed.bins
        out[self.grand_part] = relaxed.grand
        return np.clip(out, 0.0, 1.0)


class FullRelaxation(NamedTuple):
    """What :meth:`FullGraph.ad3` returns."""

    p: np.ndarray
    """``float64 (V,)``: the consensus value of every variable."""
    bins: np.ndarray
    """``(G, K + 1)``: each valency group's bin marginals (its factor's active set)."""
    grand: np.ndarray
    """Each grandparent part's marginal (its GRAND_STAR factor's active set)."""
    dual: float
    """The least dual value seen: an upper bound on the LP optimum and every tree."""
    heads: np.ndarray
    """The best tree seen among the TREE factor's active trees."""
    tree_score: float
    """Its score under every part."""
    iterations: int
    certified: bool
    """The tree met the dual bound: it is optimal (and the LP tight)."""
    converged: bool
    status: int
    state: FullState
    """Where AD3 stopped: a warm start for another graph of the sentence."""


class FullState(NamedTuple):
    """Where AD3 stands on a :class:`FullGraph`: the consensus values ``p`` of its
    variables, the TREE factor's multipliers ``lam_tree`` (one per arc, the first
    variables), the pairwise factors' ``lam_pair`` ``(P, 2)`` and the other factors'
    ``lam_link`` (one per link), in the scores' units (not divided by the graph's
    scale), each filed under its graph's ``var_key``, ``pair_key`` or ``link_key``.

    Carried to another graph of the same sentence (:meth:`onto`: a branch-and-bound
    child's, with fewer arcs; a lazy round's, with more heads active), what both graphs
    have keeps its value and the rest starts cold (0.5, 0); the kernel then centres the
    multipliers at each variable, so that the dual value stays an upper bound."""

    var_key: np.ndarray
    p: np.ndarray
    lam_tree: np.ndarray
    pair_key: np.ndarray
    lam_pair: np.ndarray
    link_key: np.ndarray
    lam_link: np.ndarray

    @classmethod
    def cold(cls, graph: FullGraph) -> FullState:
        """AD3's start: every variable at 0.5, every multiplier 0."""
        return cls(graph.var_key, np.full(graph.n_vars, 0.5), np.zeros(graph.arc_h.size),
                   graph.pair_key, np.zeros((graph.pair_key.size, 2)), graph.link_key,
                   np.zeros(graph.link_key.size))

    def onto(self, graph: FullGraph) -> FullState:
        """This state as a start on ``graph`` (a new state; this one is unchanged)."""
        A = graph.arc_h.size
        return FullState(graph.var_key, _carried(self.var_key, self.p, graph.var_key, 0.5),
                         _carried(self.var_key[:self.lam_tree.size], self.lam_tree,
                                  graph.var_key[:A], 0.0),
                         graph.pair_key,
                         _carried(self.pair_key, self.lam_pair, graph.pair_key, 0.0),
                         graph.link_key,
                         _carried(self.link_key, self.lam_link, graph.link_key, 0.0))


def _grandparent_stars(parts: Parts, arc_of: np.ndarray, grand_scores: np.ndarray):
    """The GRAND_STAR factors of ``parts``, one per word with grandparent parts, as a
    block of :meth:`FullGraph.from_parts` (kinds, links, links per factor, data, data
    per factor, the words ``about`` them), and each grandparent part's place in the
    block's data."""
    arcs = parts.arcs
    ah, am = arcs[:, 0], arcs[:, 1]
    grand = parts.block(PartType.GRANDPARENT)
    gh, gm, gg = (parts.index[grand, c] for c in (1, 2, 3))
    words = np.unique(gh)
    G = np.bincount(am, minlength=parts.n + 1)[words]
    M = np.bincount(ah, minlength=parts.n + 1)[words]
    into = np.argsort(am, kind="stable")
    into = into[np.isin(am[into], words)]
    out_of = np.argsort(ah, kind="stable")
    out_of = out_of[np.isin(ah[out_of], words)]
    # each arc's position among its word's head arcs, and among its head's child arcs
    in_rank, out_rank = np.empty((2, ah.size), dtype=np.int64)
    in_rank[into] = positions_within(G)
    out_rank[out_of] = positions_within(M)
    width = G + M
    first = np.cumsum(width) - width
    links = np.empty(int(width.sum()), dtype=np.int64)
    links[np.repeat(first, G) + in_rank[into]] = into
    links[np.repeat(first + G, M) + out_rank[out_of]] = out_of
    factor = np.full(parts.n + 1, -1, dtype=np.int64)
    factor[words] = np.arange(words.size)
    q = factor[gh]
    cell = ((np.cumsum(G * M) - G * M)[q] + in_rank[arc_of[gg, gh]] * M[q]
            + out_rank[arc_of[gh, gm]])
    data = np.zeros(int((G * M).sum()))
    data[cell] = grand_scores
    return ((lk.GRAND_STAR + G, links, width, data, G * M,
             np.stack([words, 0 * words, 0 * words], 1)), cell)


def _carried(keys: np.ndarray, values: np.ndarray, onto: np.ndarray,
             default: float) -> np.ndarray:
    """``values`` (one row per key of ``keys``) at the keys ``onto``; ``default`` where
    ``keys`` has no such key."""
    out = np.full((onto.size,) + values.shape[1:], default)
    if keys.size:
        order = np.argsort(keys)
        pos = order[np.minimum(np.searchsorted(keys, onto, sorter=order), keys.size - 1)]
        found = keys[pos] == onto
        out[found] = values[pos[found]]
    return out


def _keys(n: int, var_type: np.ndarray, var_h: np.ndarray, var_j: np.ndarray,
          pair_index: np.ndarray, kind: np.ndarray, about: np.ndarray,
          link_len: np.ndarray, link_var: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keys of a graph's variables (their type and two words), pairwise factors (their
    part's row of ``Parts.index``: type, h, m, x) and links (the factor's kind and the
    three words ``about`` it, ``(F, 3)``: a VALENCY factor's head and side, a NOT-ALL
    factor's non-projective arc, a small factor's ancestry head and arc; then the
    linked variable's key): integers unique within the graph, equal across graphs of
    one sentence for the same thing."""
    N = n + 2
    var_key = (var_type * N + var_h) * N + var_j
    pair_key = ((pair_index[:, 0] * N + pair_index[:, 1]) * N + pair_index[:, 2]) * N \
        + pair_index[:, 3] + 1
    factor_key = ((kind * N + about[:, 0]) * N + about[:, 1]) * N + about[:, 2]
    link_key = np.repeat(factor_key, link_len) * (3 * N * N) + var_key[link_var]
    return (var_key.astype(np.int64), pair_key.astype(np.int64),
            link_key.astype(np.int64))
