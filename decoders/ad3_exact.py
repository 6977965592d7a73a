"""Exact decoding by branch and bound on AD3's dual bounds.

Martins, Figueiredo, Aguiar, Smith, Xing, "AD3: Alternating Directions Dual
Decomposition for MAP Inference in Graphical Models" (JMLR 16, 2015), section 7: where
the LP relaxation is not tight, branch on a fractional variable and bound every node by
AD3's dual value; ``docs/algorithms.md`` section 9. A node of the search is the factor
graph of :mod:`decoders.factor_graph` with some arcs fixed; AD3 (:mod:`decoders.ad3`,
one numba call per node) solves its LP relaxation, and the least dual value
``g(lambda)`` it saw (one MAP per factor at its prices, :func:`decoders._ad3_kernels.
dual_value`) bounds the score of every tree of the node from above, converged or not.
Its point, rounded to a tree (:func:`~decoders.lp.round_relaxed`; at the root also improved
by local search), is a candidate incumbent.

Fixing an arc is done by removing arcs (:meth:`FactorGraph.restrict`), so that the TREE
factor's oracle (the maximum spanning arborescence) itself respects it: arc ``h -> m``
fixed to 0 is removed; fixed to 1, every other candidate head of ``m`` is removed (and,
with a single root and ``h == 0``, every other root arc). The trees of the restricted
graph are exactly the trees of the node, and its LP is the node's LP relaxation, so the
bounds are exact. Large negative or positive unary scores instead would leave the
relaxation to trade them against the others (only "large enough" is exact, and the
bound then carries the big constants' rounding error) and would blow up the score
scale on which AD3's penalty is set (:func:`decoders.ad3.score_scale`).
"""

from __future__ import annotations

import heapq
import itertools
import time
from typing import Literal, NamedTuple

import numpy as np

from ._kernels import OK
from .ad3 import AD3Decoder, DualState, full_order, score_scale
from .base import DEFAULT_TIME_LIMIT, Budget, Certificate, DecodeResult, DecodeStats, register
from .branching import arc_stakes, branching_arc, fixed_children
from .factor_graph import FactorGraph, largest_score
from .full_graph import FullState
from .lp import round_relaxed
from .parts import Parts
from .trees import raise_for_status


@register("ad3-exact")
class AD3ExactDecoder(AD3Decoder):
    """Exact decoding: branch and bound with AD3's dual value as the bound.

    Parameters
    ----------
    single_root:
        Exactly one root child (see :class:`Decoder`).
    node_order:
        ``"best"``: the open node of highest bound first; ``"depth"``: depth first, into
        the child the LP leans to (fix the branching arc to 1 when its value is at least
        0.5). Best first solved fewer nodes on random order-2 instances (up to a quarter
        fewer on the hard ones) and was as fast or slightly faster on trained models
        (``eval/results/decoders_*.md``).
    time_limit:
        Seconds per sentence, or None (no limit), checked before each node: the root's
        AD3 always runs to its end (at most ``max_iter`` iterations); out of time the
        incumbent (the best tree rounded so far) is kept, with a ``time-limit``
        certificate.

    Notes
    -----
    Orders 1, 2 (all-pairs siblings) and full, as :class:`~decoders.ad3.AD3Decoder`,
    whose options (``penalty``, ``adapt_penalty``, ``tol``, ``max_iter``, ``rounds``:
    a node's bound holds after any number of rounds, and with fewer a node whose tree
    breaks a part on a fixed arc is split on other arcs instead; its default is None,
    lazy rounds until the tree breaks no part: with one round per node the search took
    107 nodes a sentence against 1.9 on 300 en_ewt dev sentences of a full model, 87
    tokens/s against 987, ``eval/results/frozen/decoders_en_ewt_full_order_rounds.md``) it
    runs every node with, and ``search`` the root's (the other nodes' rounded trees are
    taken as they are: on the 30 slowest en_ewt dev sentences local search at every
    node found no better incumbent, the same nodes were solved, and it cost a fifth of
    the time); ``max_iter``
    defaults to 100 here, since a node's bound is valid whether AD3 converged or not and
    splitting a slow node was cheaper than finishing it
    (en_ewt, 500 dev sentences: 955 tokens/s at 100 iterations, 870 at 300, 366 at
    1,000, all certified). A child node starts from where AD3 stopped on its parent
    (:class:`~decoders.ad3.DualState`; at full order :class:`~decoders.full_graph.
    FullState`; as the AD3 paper's section 7 suggests), which nearly doubled the speed
    over cold starts at both orders (at full order 108 to 215 tokens/s on 300 en_ewt
    dev sentences, by ``eval/decoders.py``). The root is AD3's relaxation; a node
    whose bound is at most the incumbent's score plus ``tol * max(scale, |score|)`` (the
    AD3 certificate's slack, ``scale`` the largest absolute part score) is closed, and
    AD3 stops on a node as soon as its dual value gets there (the kernel's ``cutoff``,
    checked every :data:`~decoders._ad3_kernels.DUAL_EVERY` iterations); any other is
    split on :func:`branching_arc`, the free arc whose value is most fractional weighted
    by the scores at stake on it. At full order (:class:`FullNodes`) a node is relaxed
    on the optimistic program, split on an arc whose non-projective part its tree
    breaks, and made exact for a head only where that arc is fixed. ``heads`` is the
    best tree found, ``output`` its structure and ``value`` its score. ``stats``:
    ``nodes`` (nodes solved after the root: 0 when the root settles it),
    ``iterations`` (AD3 iterations over all nodes), ``certified`` (the search closed: ``value`` is optimal within the slack),
    ``dual_value`` (an upper bound on every tree's score: the largest bound of a closed or
    open node),
    ``root_dual_value``, ``lp_value`` and ``rounded_value`` (the root relaxation's value
    and its rounded tree's score), ``integral`` (the root's arcs), ``time_lp`` (the root,
    rounding included), ``time_branch`` (the other nodes), ``time_decode`` (all of it),
    ``fallback`` and, with a fallback, ``fallback_stage``: ``"lp"`` when the limit was
    spent by the end of the root, ``"branch"`` when it ran out during the search; at full
    order also ``rounds`` (AD3 calls over all nodes) and ``active_heads``.
    """

    exact = True
    preference = 1

    def __init__(self, *, single_root: bool = True, penalty: float = 0.1,
                 adapt_penalty: bool = True, tol: float = 1e-6, max_iter: int = 100,
                 search: bool = True, rounds: int | None = None,
                 node_order: Literal["best", "depth"] = "best",
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
        super().__init__(single_root=single_root, penalty=penalty,
                         adapt_penalty=adapt_penalty, tol=tol, max_iter=max_iter,
                         search=search, rounds=rounds, time_limit=time_limit)
        if node_order not in ("best", "depth"):
            raise ValueError(f"node_order must be 'best' or 'depth', not {node_order!r}")
        self.node_order = node_order

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        budget = Budget(self.time_limit)
        nodes_of = FullNodes if full_order(parts) else OrderTwoNodes
        graph = nodes_of(self, parts, scores)
        stakes = arc_stakes(parts, scores)
        order = itertools.count()
        # (priority, tie-break, bound inherited from the parent, depth, arcs kept,
        #  the parent's warm start)
        queue = [(0.0, next(order), np.inf, 0, np.ones(graph.n_arcs, dtype=bool), None)]
        best_heads, best = None, -np.inf
        closed = -np.inf            # largest bound of a node closed without branching
        nodes = iterations = 0
        stats = DecodeStats()
        while queue:
            _, _, bound, depth, keep, warm = heapq.heappop(queue)
            cutoff = best + self._slack(graph.scale, best)
            if bound <= cutoff:
                closed = max(closed, bound)
                continue
            if depth > 0 and budget.left() == 0.0:
                open_bound = max([bound] + [node[2] for node in queue])
                closed = max(closed, open_bound)
                stats.update(fallback=True, fallback_stage="lp" if nodes == 0 else "branch")
                break
            relaxed = graph.solve(keep, cutoff, warm)
            iterations += relaxed.iterations
            if depth == 0:
                raise_for_status(relaxed.status, "spanning tree")
            elif relaxed.status != OK:          # the fixed arcs leave no tree
                continue
            else:
                nodes += 1
            bound = min(bound, relaxed.dual)
            heads, value, fractional, _ = round_relaxed(
                parts, scores, relaxed.output, single_root=self.single_root,
                search=self.search and depth == 0)
            if relaxed.tree is not None and relaxed.tree_score > value:
                heads, value = relaxed.tree, relaxed.tree_score
            if value > best:
                best_heads, best = heads, value
                cutoff = best + self._slack(graph.scale, best)
            if depth == 0:
                stats.update(root_dual_value=bound, lp_value=float(scores @ relaxed.output),
                             rounded_value=value, integral=fractional == 0,
                             time_lp=time.perf_counter() - start)
            if bound <= cutoff:
                closed = max(closed, bound)
                continue
            a = (relaxed.split if relaxed.split >= 0
                 else branching_arc(graph, keep, relaxed.arcs, stakes))
            if a < 0:       # one candidate head per word: the node's one tree was rounded
                continue
            fix0, fix1 = fixed_children(graph, keep, a)
            for child, lean in ((fix0, relaxed.arcs[a] < 0.5), (fix1, relaxed.arcs[a] >= 0.5)):
                priority = -bound if self.node_order == "best" else -(depth + 1) - 0.5 * lean
                heapq.heappush(queue, (priority, next(order), bound, depth + 1, child,
                                       relaxed.state))
        dual = max(closed, best)
        stats.update(nodes=nodes, iterations=iterations, dual_value=float(dual),
                     certified=not stats.fallback,
                     time_branch=time.perf_counter() - start - stats.time_lp,
                     time_decode=time.perf_counter() - start)
        graph.count(stats)
        output = parts.from_heads(best_heads)
        return DecodeResult(output=output, heads=best_heads, value=float(scores @ output),
                            stats=stats)

    def relaxed_twin(self) -> AD3Decoder:
        """AD3's relaxation of the same factor graph, with this decoder's ``rounds`` (at
        full order lazy rounds by default, as this decoder's root relaxation)."""
        return AD3Decoder(single_root=self.single_root, rounds=self.rounds)

    def certificate(self, result: DecodeResult) -> Certificate:
        """``"exact"`` when the search closed (optimal within the slack), or
        ``"time-limit"`` with the largest open or closed bound as the upper bound."""
        return self.fallback_certificate(result) or Certificate("exact", result.value)

    def _slack(self, scale: float, incumbent: float) -> float:
        """How far above the incumbent's score a bound may lie and still close its
        node."""
        return self.tol * max(scale, abs(incumbent)) if np.isfinite(incumbent) else 0.0


class NodeRelaxation(NamedTuple):
    """A node's relaxation, as the search reads it."""

    dual: float
    """An upper bound on the score of every tree of the node."""
    output: np.ndarray
    """The relaxation's point as a structure of all the parts (0 on removed arcs)."""
    arcs: np.ndarray
    """``(A,)``: its value on each arc of the whole graph (0 on removed arcs)."""
    iterations: int
    status: int
    state: object
    """The children's warm start (None where there is none)."""
    tree: np.ndarray | None = None
    """A tree the relaxation met on its way, and ``tree_score`` its score."""
    tree_score: float = -np.inf
    split: int = -1
    """The arc to branch on, if the relaxation chose one (else :func:`branching_arc`)."""


class OrderTwoNodes:
    """The nodes of an order-2 sentence: the factor graph of
    :mod:`decoders.factor_graph` restricted to the kept arcs (:meth:`FactorGraph.
    restrict`), AD3 (:meth:`AD3Decoder.relax`) warm-started from the parent's state and
    stopped at the cutoff."""

    def __init__(self, decoder: AD3Decoder, parts: Parts, scores: np.ndarray) -> None:
        self.decoder = decoder
        self.graph = FactorGraph.from_parts(parts, scores, single_root=decoder.single_root)
        self.n, self.arc_h, self.arc_m = self.graph.n, self.graph.arc_h, self.graph.arc_m
        self.single_root, self.n_arcs = decoder.single_root, self.graph.n_arcs
        self.scale = score_scale(self.graph)

    def solve(self, keep: np.ndarray, cutoff: float, warm: DualState | None
              ) -> NodeRelaxation:
        arcs, pairs = self.graph.kept(keep)
        relaxed = self.decoder.relax(self.graph.restrict(keep), self.scale, cutoff,
                                     None if warm is None else warm.restrict(arcs, pairs))
        values = np.zeros(self.n_arcs)
        values[keep] = relaxed.arcs
        return NodeRelaxation(relaxed.dual, relaxed.output, values, relaxed.iterations,
                              relaxed.status, relaxed.state.embed(arcs, pairs, self.graph))

    def count(self, stats: DecodeStats) -> None:
        """Set this kind of node's counts over the search in ``stats``: none at order 2."""


class FullNodes:
    """The nodes of a full-order sentence: the parts of the kept arcs
    (:meth:`Parts.restrict`), relaxed by :meth:`AD3Decoder.relax_full` on the optimistic
    program (:mod:`decoders.lazy_parts`) with the heads active in the parent node (the
    node's warm start; its bound is valid whichever heads are active). When the
    relaxation's tree breaks a left-out part on an arc that is not fixed, the node is
    split on that arc (``split``) rather than made exact by the head's ancestry
    factors, which cost AD3 hundreds to thousands of iterations (on 300 en_ewt dev
    sentences, 70 whose search made a head active took 141 of its 144 s); a head is
    made active only when its broken arc is fixed (in that node and the nodes below
    it). A child node starts AD3 where its parent's last round stopped
    (:class:`~decoders.full_graph.FullState`), with its parent's active heads."""

    def __init__(self, decoder: AD3Decoder, parts: Parts, scores: np.ndarray) -> None:
        self.decoder, self.parts, self.scores = decoder, parts, scores
        arcs = parts.arcs
        self.n, self.arc_h, self.arc_m = parts.n, arcs[:, 0], arcs[:, 1]
        self.single_root, self.n_arcs = decoder.single_root, arcs.shape[0]
        self.scale = largest_score(scores)
        self.rounds = self.most_active = 0

    def solve(self, keep: np.ndarray, cutoff: float,
              warm: tuple[np.ndarray, FullState] | None) -> NodeRelaxation:
        sub, rows = self.parts.restrict(keep)
        active, start = ((np.zeros(self.n + 1, dtype=bool), None) if warm is None
                         else (warm[0].copy(), warm[1]))
        heads_of_word = np.bincount(self.arc_m[keep], minlength=self.n + 1)
        lazy = self.decoder.relax_full(sub, self.scores[rows], active, cutoff,
                                       branchable=heads_of_word[self.arc_m[keep]] > 1,
                                       start=start)
        self.rounds += lazy.rounds
        self.most_active = max(self.most_active, int(active.sum()))
        output = np.zeros(len(self.parts))
        output[rows] = lazy.output
        kept = np.flatnonzero(keep)
        values = np.zeros(self.n_arcs)
        values[kept] = lazy.relaxed.p[:kept.size]
        return NodeRelaxation(lazy.relaxed.dual, output, values, lazy.iterations,
                              lazy.relaxed.status, (active, lazy.relaxed.state),
                              lazy.relaxed.heads,
                              lazy.tree_score,
                              int(kept[lazy.broken_arc]) if lazy.broken_arc >= 0 else -1)

    def count(self, stats: DecodeStats) -> None:
        """Set ``stats.rounds`` (AD3 calls over all nodes) and ``stats.active_heads``
        (the most heads active in one node)."""
        stats.update(rounds=self.rounds, active_heads=self.most_active)
