"""AD3: the LP relaxation solved by alternating directions dual decomposition.

Martins, Figueiredo, Aguiar, Smith, Xing, "AD3: Alternating Directions Dual Decomposition
for MAP Inference in Graphical Models" (JMLR 16, 2015), TurboParser's decoder;
``docs/algorithms.md`` section 9. It solves the LP relaxation of the factor graph of
:mod:`decoders.factor_graph` (arc variables, a pairwise factor per grandparent and
all-pairs sibling part, one TREE factor): the same LP as the ``lp`` decoder's HiGHS
program, since the TREE factor's marginal polytope is the arborescence polytope (the
projection of the multi-commodity flow; with ``single_root``, its face with one root
arc) and a pairwise factor's local polytope is the linearization of section 2. The whole
loop is one numba call (:func:`decoders._ad3_kernels.ad3`): pairwise factors by their
closed-form projection, the TREE factor by the active-set method with the maximum
spanning arborescence as its only oracle, warm-started across iterations.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import ClassVar, NamedTuple

import numpy as np

from . import _ad3_kernels
from ._ad3_kernels import QP_ITERATIONS
from .base import (DEFAULT_TIME_LIMIT, Budget, Certificate, DecodeResult, DecodeStats, Decoder,
                   register)
from .branching import arc_stakes, branching_arc, fixed_children
from .factor_graph import FactorGraph, largest_score
from ._kernels import OK
from .full_graph import FullGraph, FullRelaxation, FullState
from .labeled_search import DecoderRelaxation, NodeTree, node_parts, search_or_program
from .lazy_parts import optimistic
from .lp import round_relaxed
from .parts import Parts, PartType
from .trees import raise_for_status

LABELED_NODES = 200
"""Nodes of :meth:`AD3Decoder.decode_labeled`'s search (one AD3 solve, or one branch and
bound, each) before it dives (:mod:`decoders.labeled_search`)."""

LABELED_ITERATIONS = 100
"""AD3 iterations per node of ``ad3``'s labeled search (at most its ``max_iter``): a
node's dual value bounds it however early AD3 stops, and a node is a tree to check, not
the final LP; as ``ad3-exact``'s nodes. With 10,000, a constrained en_ewt sentence
cost 5.4 s of AD3 on a model of 400 sentences (0.46 s a node)."""


@register("ad3")
class AD3Decoder(Decoder):
    """LP relaxation by AD3 on the factor graph, plus the ``lp`` decoder's rounding.

    Parameters
    ----------
    single_root:
        Exactly one root child (see :class:`Decoder`).
    penalty:
        Initial penalty ``eta`` of the augmented Lagrangian, for the scores divided by
        the largest absolute part score (:func:`score_scale`). 0.1 is the authors'
        TurboParser setting (0.05 in their convention, where eta is halved); of 0.03 to
        3 it converged most often on an order-2 en_ewt model (93% within 1000
        iterations; 0.3 did as well on the sample's model and on random scores).
    adapt_penalty:
        Adapt the penalty every 10 iterations to the balance of the primal and dual
        residuals (doubled when the primal one is 100 times the dual one, halved when
        the dual one is 10 times the primal one), as the authors do.
    tol:
        Whenever the primal residual (root mean square over the links between factors
        and variables) is below it, the dual bound and the value of a feasible point are
        computed, and AD3 stops when their gap is at most ``tol * max(scale, |dual|)``
        (``scale``: :func:`score_scale`): the LP value is then certified to that
        precision. The same gap certifies an integral solution.
    max_iter:
        Most AD3 iterations per sentence. The fractional LPs are the slow ones: on an
        order-2 en_ewt model (3,000 training sentences, all 2,001 dev sentences) 4.5% of
        them were still open after 1,000 iterations and one after 10,000; with 10,000 the
        dev set decodes at 2,239 tokens/s, p99 85 ms (``eval/results/frozen/decoders_en_ewt.md``).
    search:
        Improve the rounded tree of a fractional solution by local search under all part
        scores, as the ``lp`` decoder does.
    rounds:
        At full order, the most AD3 calls per sentence (:meth:`relax_full`), each on
        the optimistic program with the heads whose parts the last call's tree broke
        made active; None: until its tree breaks none (``ad3-exact``'s default, its root
        relaxation). 1 (``ad3``'s default) solves the optimistic program alone, without
        ancestry factors: still an upper bound on every tree. Neither is HiGHS's LP
        (``lp``: flow ancestry, pairwise grandparent rows). On 300 en_ewt dev sentences
        of a three-epoch full model one round parsed 3,739 tokens/s against 389,
        converged on all against 98%, UAS 88.35 against 88.26 (HiGHS's LP: 88.24;
        ``eval/results/frozen/decoders_en_ewt_full_order_rounds.md``); on tr_imst dev with a
        full model 70.39 against 70.51. SSG's relaxed inference does not follow this
        default but the exact decoder's rounds (lazy): trained with one round the tr_imst
        model parsed 0.15 UAS worse (``eval/results/orders_tr_imst_full_relaxed_*.md``).

    Notes
    -----
    Orders 1 and 2 with all-pairs siblings (the part types of the factor graph), and
    ``full`` through the full-order graph of :mod:`decoders.full_graph`, its
    non-projective-arc parts added as trees break them (:meth:`relax_full`,
    :mod:`decoders.lazy_parts`); consecutive siblings have no factor here
    (use ``lp`` or ``ilp``). ``output`` is the best feasible point AD3 saw (its arc values: the TREE
    factor's copy or the heaviest tree of that copy's combination; the pairwise values
    that go best with them), ``value`` its objective (the LP optimum when converged;
    before, a lower bound on it). ``heads``:
    the maximum spanning tree under ``p`` (:func:`~decoders.lp.round_relaxed`, with
    local search when ``p`` is fractional). ``stats``: ``lp_value`` (= ``value``),
    ``dual_value`` (the least dual value seen, an upper bound on the LP optimum and on
    every tree's score), ``iterations``, ``converged``, ``integral`` (every arc value
    within :data:`~decoders.trees.INTEGRALITY_TOL` of 0 or 1), ``certified`` (integral and
    ``dual_value - rounded_value <= tol * max(scale, |dual_value|)``: ``heads`` is then an
    optimal tree), ``fractional_arcs``, ``rounded_value`` (the score of ``heads``),
    ``search_moves``, ``time_lp`` (AD3), ``time_round``.
    """

    part_types = frozenset({PartType.ARC, PartType.GRANDPARENT, PartType.SIBLING,
                            PartType.VALENCY, PartType.NONPROJ})
    honors_constraints = True
    exact: ClassVar[bool] = False
    """Whether :meth:`decode` is exact (``ad3-exact``), else the LP relaxation rounded."""

    def __init__(self, *, single_root: bool = True, penalty: float = 0.1,
                 adapt_penalty: bool = True, tol: float = 1e-6, max_iter: int = 10000,
                 search: bool = True, rounds: int | None = 1,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
        super().__init__(single_root=single_root, time_limit=time_limit)
        if not penalty > 0:
            raise ValueError(f"penalty must be positive, not {penalty}")
        if not tol > 0:
            raise ValueError(f"tol must be positive, not {tol}")
        if max_iter < 1:
            raise ValueError(f"max_iter must be at least 1, not {max_iter}")
        if rounds is not None and rounds < 1:
            raise ValueError(f"rounds must be at least 1, not {rounds}")
        self.rounds = rounds
        self.penalty = penalty
        self.adapt_penalty = adapt_penalty
        self.tol = tol
        self.max_iter = max_iter
        self.search = search

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        if full_order(parts):
            return self._decode_full(parts, scores)
        start = time.perf_counter()
        graph = FactorGraph.from_parts(parts, scores, single_root=self.single_root)
        scale = score_scale(graph)
        relaxed = self.relax(graph, scale)
        raise_for_status(relaxed.status, "spanning tree")
        solved = time.perf_counter()
        value = float(scores @ relaxed.output)
        heads, rounded_value, fractional, moves = round_relaxed(
            parts, scores, relaxed.output, single_root=self.single_root, search=self.search)
        integral = fractional == 0
        certified = bool(integral and relaxed.dual - rounded_value
                         <= self.tol * max(scale, abs(relaxed.dual)))
        stats = DecodeStats(time_lp=solved - start, time_round=time.perf_counter() - solved,
                            lp_value=value, dual_value=relaxed.dual,
                            iterations=relaxed.iterations, converged=relaxed.converged,
                            integral=integral, certified=certified,
                            fractional_arcs=fractional, rounded_value=rounded_value,
                            search_moves=moves)
        return DecodeResult(output=relaxed.output, heads=heads, value=value, stats=stats)

    def _decode_full(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        """:meth:`relax_full`, then the certified tree as the ``output`` (an optimum of
        the full program), else the last program's consensus point rounded as
        :meth:`decode` rounds, and the best tree AD3 saw kept when it scores higher.
        ``stats`` adds ``rounds`` (AD3 calls) and ``active_heads``."""
        start = time.perf_counter()
        active = np.zeros(parts.n + 1, dtype=bool)
        lazy = self.relax_full(parts, scores, active)
        relaxed = lazy.relaxed
        raise_for_status(relaxed.status, "spanning tree")
        solved = time.perf_counter()
        # the graph's certificate is the whole program's where the tree breaks no
        # left-out part (its score is then the graph's score of it)
        optimal = relaxed.certified and lazy.tree_score >= relaxed.tree_score - \
            self.tol * max(1.0, abs(relaxed.dual))
        output = lazy.tree if optimal else lazy.output
        heads, rounded_value, fractional, moves = round_relaxed(
            parts, scores, output, single_root=self.single_root,
            search=self.search and not optimal)
        if lazy.tree_score > rounded_value:
            heads, rounded_value = relaxed.heads.copy(), lazy.tree_score
        certified = bool(relaxed.dual - rounded_value
                         <= self.tol * max(1.0, abs(relaxed.dual)))
        stats = DecodeStats(time_lp=solved - start, time_round=time.perf_counter() - solved,
                            lp_value=float(scores @ output), dual_value=relaxed.dual,
                            iterations=lazy.iterations, converged=relaxed.converged,
                            integral=fractional == 0, certified=certified,
                            fractional_arcs=fractional, rounded_value=rounded_value,
                            search_moves=moves, rounds=lazy.rounds,
                            active_heads=int(active.sum()))
        return DecodeResult(output=output, heads=heads, value=stats.lp_value, stats=stats)

    def relax_full(self, parts: Parts, scores: np.ndarray, active: np.ndarray,
                   cutoff: float = -np.inf, branchable: np.ndarray | None = None,
                   start: FullState | None = None) -> LazyRelaxation:
        """AD3 (:meth:`FullGraph.ad3`, at most ``max_iter`` iterations a call) on the
        full-order factor graph of ``parts`` with the non-projective-arc parts added as
        trees break them (:mod:`decoders.lazy_parts`): on the optimistic program with
        the heads where ``active`` is True active, and again with the heads its best
        tree broke made active (in ``active``, in place), until that tree breaks none.
        That tree's score is then its score under every part, and the dual value bounds
        every tree of ``parts`` from above; when they meet, the tree is optimal
        (``relaxed.certified``). AD3 stops, and no head is made active, once the dual
        value is at most ``cutoff``. ``branchable`` (``bool (n_arcs,)``): arcs on which
        the caller would rather branch than make a head active; when the tree breaks a
        part on one, that arc (of the part of largest absolute score) is returned as
        ``broken_arc`` instead. At most :attr:`rounds` calls. ``start``: where AD3
        stopped on another graph of the sentence (a branch-and-bound parent's), else a
        cold start; each round starts
        where the one before stopped (the new heads' variables and links cold)."""
        iterations = rounds = 0
        broken_arc = -1
        part_heads = parts.index[parts.block(PartType.NONPROJ), 1]
        while True:
            program = optimistic(parts, scores, active)
            graph = FullGraph.from_parts(program.parts, program.scores,
                                         single_root=self.single_root)
            relaxed = graph.ad3(penalty=self.penalty, adapt_penalty=self.adapt_penalty,
                                tol=self.tol, max_iter=self.max_iter, cutoff=cutoff,
                                start=start)
            start = relaxed.state
            iterations += relaxed.iterations
            rounds += 1
            if relaxed.status != OK:
                return LazyRelaxation(relaxed, np.zeros(len(parts)), iterations, rounds,
                                      -np.inf, broken_arc)
            tree = parts.from_heads(relaxed.heads)
            if relaxed.dual <= cutoff:
                break
            broken = program.broken(parts, scores, tree)
            if not broken.any():
                break
            if branchable is not None:
                broken_arc = _arc_to_branch(parts, scores, broken, branchable)
                if broken_arc >= 0:
                    break
            if rounds == self.rounds:
                break
            active[part_heads[broken]] = True
        output = program.lift(parts, graph.to_parts(len(program.parts), relaxed))
        return LazyRelaxation(relaxed, output, iterations, rounds, float(scores @ tree),
                              broken_arc, tree)

    def decode_labeled(self, parts: Parts, scores: np.ndarray, problem):
        """Labeled decoding by branch and bound on the constraints
        (:mod:`decoders.labeled_search`). At order 2 each node is one AD3 solve
        (:class:`AD3Relaxation`, at most :data:`LABELED_ITERATIONS` iterations,
        warm-started from its parent): for ``ad3-exact`` a node whose relaxation is not
        tight is split on a fractional arc, so that one search branches on both the
        constraints and the arcs and is exact (up to the time limit); for ``ad3`` the
        search ends at the first rounded tree that breaks no constraint, with its node's
        bound (``stats.upper_bound``). At full order each node is this decoder's own
        decoding of its arcs (:class:`~decoders.labeled_search.DecoderRelaxation`). A
        sentence not settled within :data:`LABELED_NODES` nodes and the dives after them
        goes to the labeled program of HiGHS (:func:`~decoders.labeled.solve_labeled`:
        its LP rounded for ``ad3``, branch and bound for ``ad3-exact``;
        ``stats.search_gave_up``); all within :attr:`time_limit`."""
        budget = Budget(self.time_limit)
        node = AD3Decoder(single_root=self.single_root, penalty=self.penalty,
                          adapt_penalty=self.adapt_penalty, tol=self.tol,
                          max_iter=min(self.max_iter, LABELED_ITERATIONS),
                          search=self.search, rounds=self.rounds)
        if full_order(parts):
            relax = DecoderRelaxation(self if self.exact else node, parts, scores, budget)
        else:
            relax = AD3Relaxation(node, parts, scores, branch=self.exact)
        return search_or_program(parts, scores, problem, relax, budget,
                                 single_root=self.single_root, relaxed=not self.exact,
                                 max_nodes=LABELED_NODES)

    def certificate(self, result: DecodeResult) -> Certificate:
        """``"lp-integral"`` when ``stats.certified`` (integral, and the dual value
        meets the tree's score); else ``"rounded"`` with the dual value as the bound."""
        stats = result.stats
        if stats.certified:
            return Certificate("lp-integral", stats.rounded_value)
        return Certificate("rounded", stats.rounded_value, upper_bound=stats.dual_value)

    def relax(self, graph: FactorGraph, scale: float, cutoff: float = -np.inf,
              start: DualState | None = None) -> Relaxation:
        """AD3 (one kernel call, :func:`decoders._ad3_kernels.ad3`) on ``graph``, whose
        scores are divided by ``scale`` inside and the dual value multiplied back; it
        stops early once the dual value is at most ``cutoff``. ``start``: where to
        begin (a cold start without it); the result's ``state`` is where it ended."""
        if start is None:
            start = DualState.cold(graph)
        state = DualState(start.p.copy(), start.lam_tree.copy(), start.lam_pair.copy())
        p, r, _, dual, iterations, converged, status = _ad3_kernels.ad3(
            graph.n, graph.arc_h, graph.arc_m, graph.unary / scale, graph.pair_i,
            graph.pair_j, graph.pair_score / scale, self.single_root, float(self.penalty),
            self.adapt_penalty, float(self.tol), int(self.max_iter), QP_ITERATIONS,
            float(cutoff / scale), state.p, state.lam_tree, state.lam_pair)
        return Relaxation(output=np.clip(graph.to_parts(p, r), 0.0, 1.0), arcs=p,
                          dual=float(dual * scale), iterations=int(iterations),
                          converged=bool(converged), status=int(status), state=state)


class DualState(NamedTuple):
    """Where AD3 stands on a graph: the consensus arc values ``p`` ``(A,)``, the TREE
    factor's multipliers ``lam_tree`` ``(A,)`` and the pairwise factors' ``lam_pair``
    ``(P, 2)`` (for the scores divided by :func:`score_scale`)."""

    p: np.ndarray
    lam_tree: np.ndarray
    lam_pair: np.ndarray

    @classmethod
    def cold(cls, graph: FactorGraph) -> DualState:
        """AD3's start: every arc at 0.5, every multiplier 0."""
        return cls(np.full(graph.n_arcs, 0.5), np.zeros(graph.n_arcs),
                   np.zeros((graph.n_pairs, 2)))

    def restrict(self, arcs: np.ndarray, pairs: np.ndarray) -> DualState:
        """The state on a restricted graph (:meth:`FactorGraph.kept`'s ``arcs`` and
        ``pairs`` of this state's graph)."""
        return DualState(self.p[arcs], self.lam_tree[arcs], self.lam_pair[pairs])

    def embed(self, arcs: np.ndarray, pairs: np.ndarray, graph: FactorGraph) -> DualState:
        """This state of a restricted graph (``arcs`` and ``pairs`` of ``graph``, as
        :meth:`FactorGraph.kept` gives them) as a state of ``graph``, 0 elsewhere."""
        state = DualState(np.zeros(graph.n_arcs), np.zeros(graph.n_arcs),
                          np.zeros((graph.n_pairs, 2)))
        state.p[arcs] = self.p
        state.lam_tree[arcs] = self.lam_tree
        state.lam_pair[pairs] = self.lam_pair
        return state


class AD3Relaxation:
    """The order-2 nodes of the labeled search (:mod:`decoders.labeled_search`): the
    factor graph of the sentence restricted to a node's available arcs, whose arc scores
    carry each arc's best available label (:meth:`FactorGraph.restrict`), one AD3 solve
    per node (:meth:`AD3Decoder.relax` of ``decoder``) started where its parent's
    stopped and stopped once its dual value is at most the search's cutoff (as
    :mod:`decoders.ad3_exact`'s nodes, Martins et al. 2015 section 7), and the point
    rounded to a tree of the node (:func:`~decoders.lp.round_relaxed`, its local search
    at the root only when ``branch``, at every node otherwise). The bound is the dual
    value; a node is exact when its tree's score is within :meth:`slack` of it (or the
    node holds one tree). With ``branch``, a node that is not is split on
    :func:`~decoders.branching.branching_arc` (``ad3-exact``); without, it is taken
    as rounded (``ad3``)."""

    def __init__(self, decoder: AD3Decoder, parts: Parts, scores: np.ndarray, *,
                 branch: bool) -> None:
        self.decoder, self.parts, self.scores, self.branch = decoder, parts, scores, branch
        self.graph = FactorGraph.from_parts(parts, scores, single_root=decoder.single_root)
        self.stakes = arc_stakes(parts, scores) if branch else None
        self.scale: float | None = None

    def __call__(self, arc_scores: np.ndarray, cutoff: float = -np.inf,
                 warm: DualState | None = None) -> NodeTree | None:
        keep = np.isfinite(arc_scores)
        if self.scale is None:      # the root's scores, as AD3's decoders scale them
            self.scale = largest_score(arc_scores[keep], self.graph.pair_score)
        arcs, pairs = self.graph.kept(keep)
        graph = replace(self.graph.restrict(keep), unary=arc_scores[arcs])
        relaxed = self.decoder.relax(graph, self.scale, cutoff,
                                     None if warm is None else warm.restrict(arcs, pairs))
        if relaxed.status != OK:
            return None
        sub, rows, node_scores = node_parts(self.parts, self.scores, arc_scores)
        heads, value, _, _ = round_relaxed(
            sub, node_scores, relaxed.output[rows], single_root=self.decoder.single_root,
            search=self.decoder.search and (warm is None or not self.branch))
        bound = relaxed.dual
        exact = bound - value <= self.slack(value)
        split = None
        if not exact and self.branch:
            values = np.zeros(self.graph.n_arcs)
            values[keep] = relaxed.arcs
            a = branching_arc(self.graph, keep, values, self.stakes)
            if a < 0:       # one candidate head per word: the node's one tree
                bound, exact = value, True
            else:
                split = fixed_children(self.graph, keep, a)
        return NodeTree(bound, heads, value, exact, split,
                        relaxed.state.embed(arcs, pairs, self.graph))

    def slack(self, incumbent: float) -> float:
        """AD3's certificate's slack, ``tol * max(scale, |incumbent|)``."""
        return self.decoder.tol * max(self.scale or 0.0, abs(incumbent))


class LazyRelaxation(NamedTuple):
    """What :meth:`AD3Decoder.relax_full` returns."""

    relaxed: FullRelaxation
    """The last AD3 call's result (its dual value, best tree, status)."""
    output: np.ndarray
    """Its consensus point as a structure of all the parts (the left-out ones at their
    bound's values, :meth:`~decoders.lazy_parts.Optimistic.lift`)."""
    iterations: int
    """AD3 iterations over all calls."""
    rounds: int
    tree_score: float
    """The score of ``relaxed.heads`` under every part."""
    broken_arc: int
    """The arc (ARC-block position) on which that tree breaks a part the caller would
    rather branch on (``branchable``), or -1."""
    tree: np.ndarray | None = None
    """That tree's structure (:meth:`Parts.from_heads`); None when AD3 found no tree."""


class Relaxation(NamedTuple):
    """What :meth:`AD3Decoder.relax` returns."""

    output: np.ndarray
    """``float64 (n_parts,)``: the feasible point as a structure of the graph's parts
    (:meth:`~decoders.factor_graph.FactorGraph.to_parts`), clipped to [0, 1]."""
    arcs: np.ndarray
    """``float64 (A,)``: its arc values, one per arc variable of the graph."""
    dual: float
    """The least dual value seen: an upper bound on the graph's LP optimum and on the
    score of every tree of its arcs."""
    iterations: int
    converged: bool
    status: int
    """:data:`decoders._kernels.OK`, or why the graph's arcs hold no tree."""
    state: DualState
    """Where AD3 stopped: a warm start for a graph of fewer arcs."""


def _arc_to_branch(parts: Parts, scores: np.ndarray, broken: np.ndarray,
                   branchable: np.ndarray) -> int:
    """The ``branchable`` arc of the ``broken`` non-projective-arc part (a mask over
    their block) of largest absolute score, or -1. (Branching instead on the arcs by
    which the words inside a span escape it, where the part's own arc is fixed, made
    more nodes than the head's ancestry factors saved: on 300 en_ewt dev sentences 64 s
    of search against 51.)"""
    block = parts.block(PartType.NONPROJ)
    rows = block.start + np.flatnonzero(broken)
    own = parts.arc_rows_of(rows) - parts.block(PartType.ARC).start
    weight = np.where(branchable[own], np.abs(scores[rows]), -1.0)
    return int(own[np.argmax(weight)]) if weight.max(initial=-1.0) >= 0 else -1


def full_order(parts: Parts) -> bool:
    """Whether ``parts`` has valency or non-projective-arc parts (the full graph's)."""
    return any(parts.block(t).stop > parts.block(t).start
               for t in (PartType.VALENCY, PartType.NONPROJ))


def score_scale(graph: FactorGraph) -> float:
    """The largest absolute score of an arc or pairwise part (1 if all are 0).

    AD3 runs on the scores divided by it: the LP's solution does not change, and the
    penalty, whose useful range scales with the scores, is then relative to them (a
    trained model's scores run to 1e4; with the penalty fixed AD3 needed hundreds of
    iterations there and converged in tens once scaled, ``eval/results/frozen/ad3_speed.md``).
    """
    return largest_score(graph.unary, graph.pair_score)
