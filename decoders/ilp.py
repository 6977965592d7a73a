"""The exact decoder: the integer linear program of :mod:`decoders.formulation`.

Martins, Smith, Xing (ACL 2009); ``docs/algorithms.md`` section 2. HiGHS (through
``scipy.optimize.milp``) is the default solver; any PuLP solver can be used on the same
matrices (:mod:`decoders.pulp_backend`).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from .base import (DEFAULT_TIME_LIMIT, Budget, Certificate, DecodeResult, DecodeStats, Decoder,
                   ScoredTree, TimeLimitReached, register)
from .formulation import FLOWS, Formulation, build_formulation
from .labeled import solve_labeled
from .lp import LPDecoder
from .mst import MSTDecoder
from .parts import Parts, PartType
from .pulp_backend import solve_pulp
from .trees import fallback_result, round_to_tree


def solve_highs(form: Formulation, time_limit: float | None = None, *, presolve: bool = True
                ) -> tuple[np.ndarray | None, bool, int | None]:
    """Maximize ``form`` with HiGHS's branch and bound (``presolve``: HiGHS's own).

    Returns ``(x, optimal, nodes)``: the best solution found (None if none), whether it
    is proven optimal (relative gap 0), and the number of branch-and-bound nodes (None
    when HiGHS stopped before reporting it).
    Raises ``ValueError`` when the program is infeasible (the candidate arcs hold no
    tree) or unbounded.
    """
    from scipy.optimize import LinearConstraint, milp  # 0.4 s to import: not at start-up

    options = {"mip_rel_gap": 0.0, "presolve": presolve}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = milp(-form.c, integrality=form.integrality, bounds=(form.lower, form.upper),
               constraints=[LinearConstraint(form.A_ub, -np.inf, form.b_ub),
                            LinearConstraint(form.A_eq, form.b_eq, form.b_eq)],
               options=options)
    if res.status in (2, 3):
        raise ValueError(f"ILP not solved: {res.message}")
    nodes = res.mip_node_count
    return res.x, res.status == 0, None if nodes is None else int(nodes)


@register("ilp")
class ILPDecoder(Decoder):
    """Exact decoding by integer linear programming.

    The LP relaxation of the multi-commodity formulation is solved first: when its arcs
    come out integral (at :data:`decoders.trees.INTEGRALITY_TOL`), every part is pinned to
    that tree and the LP optimum is an ILP optimum (:mod:`decoders.formulation`,
    "integral arcs"), so no branch and bound is needed. Only a fractional LP goes on to
    branch and bound, by default on the single-commodity formulation: both formulations
    have the same integer solutions, and HiGHS's branch and bound, which solves its own
    LP at the root anyway, is 3x faster on the smaller one. On an order-2 en_ewt model
    (first epoch, 150 dev sentences, pruned to 5 heads) 82% of the LPs were integral,
    and the median sentence took 0.024 s instead of 0.25 s with branch and bound on the
    multi-commodity ILP alone (p90 0.35 s instead of 1.07 s); after 10 epochs, on the
    whole dev set, 91% are integral and the median is 0.009 s (p90 0.09 s, p99 1.1 s;
    ``eval/results/gap_en_ewt_order2.txt``).

    Parameters
    ----------
    single_root:
        Exactly one root child (see :class:`Decoder`).
    solver:
        Branch and bound by ``"highs"`` (``scipy.optimize.milp``) or a PuLP solver:
        ``"CBC"``, ``"GLPK"``, ``"GUROBI"``, ``"CPLEX"`` or any PuLP solver class name.
    flow:
        ``"multi"`` or ``"single"`` commodity flow (:func:`build_formulation`) of the
        LP solved first.
    branch_flow:
        The flow of the program branch and bound runs on.
    lp_first:
        Solve the LP relaxation first (HiGHS, whatever ``solver``); False runs branch and
        bound on every sentence.
    time_limit:
        Seconds per sentence for all stages (building the programs, the LP first,
        branch and bound), or None.

    Notes
    -----
    When the time limit runs out the decoder falls back (``stats.fallback`` True,
    ``stats.fallback_stage`` the stage: ``"build"``, ``"lp"`` or ``"ilp"``): before
    the LP first is solved, to the maximum spanning tree under the arc scores; after it,
    to its MST-rounded tree; in branch and bound, to whichever of that tree (or, without
    the LP first, the maximum spanning tree) and the solver's incumbent (if any) scores
    higher. The returned tree is always
    re-scored: ``output = parts.from_heads(heads)`` and ``value = scores @ output``.
    ``stats``: ``time_build`` (both programs), ``time_lp`` (the LP first, rounding
    included), ``time_ilp`` (all solving: the LP first and branch and bound),
    ``branched`` (whether branch and bound ran), ``ilp_nodes`` (0 without branching;
    None for PuLP solvers, or when HiGHS stopped before counting), ``fallback``, and
    with a fallback the LP's ``lp_value`` and ``rounded_value`` and the solver's
    ``incumbent_value`` (None without an incumbent).
    """

    part_types = frozenset(PartType)
    gives_kbest = True
    honors_constraints = True
    preference = 2

    def __init__(self, *, single_root: bool = True, solver: str = "highs",
                 flow: str = "multi", branch_flow: str = "single", lp_first: bool = True,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
        super().__init__(single_root=single_root, time_limit=time_limit)
        for value in (flow, branch_flow):
            if value not in FLOWS:
                raise ValueError(f"flow must be one of {FLOWS}, not {value!r}")
        self.solver = solver
        self.flow = flow
        self.branch_flow = branch_flow
        self.lp_first = lp_first

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        stats = DecodeStats(time_build=0.0, time_lp=0.0, time_ilp=0.0, branched=False,
                            ilp_nodes=0)
        budget = Budget(self.time_limit)
        relaxed = None
        if self.lp_first:
            relaxed = self._relaxed(parts, scores, self.flow, stats, budget)
            if relaxed.stats.fallback:
                stats.update(fallback=True, fallback_stage=relaxed.stats.fallback_stage)
                return self._result(parts, scores, relaxed.heads, stats)
            if relaxed.stats.integral:
                return self._result(parts, scores, relaxed.heads, stats)
        start = time.perf_counter()
        try:
            form = build_formulation(parts, scores, single_root=self.single_root,
                                     flow=self.branch_flow, budget=budget)
            budget.check("build")
        except TimeLimitReached:
            stats.time_build += time.perf_counter() - start
            if relaxed is None:
                return fallback_result(parts, scores, self.single_root, "build", stats)
            stats.update(fallback=True, fallback_stage="build")
            return self._result(parts, scores, relaxed.heads, stats)
        built = time.perf_counter()
        if self.solver.lower() == "highs":
            x, optimal, nodes = solve_highs(form, budget.left())
        else:
            solution = solve_pulp(form, self.solver, time_limit=budget.left())
            x, optimal, nodes = solution.x, solution.optimal, None
        stats.time_build += built - start
        stats.time_ilp += time.perf_counter() - built
        stats.update(branched=True, ilp_nodes=nodes, fallback=not optimal)
        heads = None if x is None else round_to_tree(parts, x[:form.n_parts], self.single_root)
        if not optimal:
            stats.fallback_stage = "ilp"
            if relaxed is None:             # no time for an LP now: the arc scores' MST
                relaxed = MSTDecoder(single_root=self.single_root).decode(parts, scores)
                relaxed.stats.update(lp_value=None, rounded_value=relaxed.value)
            incumbent = None if heads is None else float(scores @ parts.from_heads(heads))
            stats.update(lp_value=relaxed.stats.lp_value,
                         rounded_value=relaxed.stats.rounded_value,
                         incumbent_value=incumbent)
            if incumbent is None or relaxed.stats.rounded_value > incumbent:
                heads = relaxed.heads
        return self._result(parts, scores, heads, stats)

    def decode_labeled(self, parts: Parts, scores: np.ndarray, problem):
        """Exact labeled decoding (:func:`~decoders.labeled.solve_labeled`): branch and
        bound by HiGHS (the ``branch_flow`` program, or the multi-commodity one when
        punctuation must be projective), after the LP relaxation when that is not
        integral. ``solver`` and ``lp_first`` do not apply. With ``time_limit`` the
        incumbent at the limit is returned (``stats.fallback``): it satisfies every
        constraint but may not be optimal."""
        return solve_labeled(parts, scores, problem, single_root=self.single_root,
                             flow=self.branch_flow, time_limit=self.time_limit)

    def certificate(self, result: DecodeResult) -> Certificate:
        """``"exact"`` (an integral LP first or branch and bound to a zero gap), or
        ``"time-limit"`` with the LP's value as the bound when it was solved."""
        return self.fallback_certificate(result) or Certificate("exact", result.value)

    def kbest(self, parts: Parts, scores: np.ndarray, k: int) -> list[ScoredTree]:
        """The ``k`` best trees by no-good cuts: the first is :meth:`decode`'s; each next
        one is the optimum of the ``branch_flow`` program plus, for every tree y found so
        far, ``sum_{a in y} z_a <= n - 1`` (branch and bound by HiGHS).

        Every tree has exactly n arcs, so a cut removes its own tree and no other: after
        k - 1 cuts the program's optimum is exactly the next best tree, one solve per
        tree. (Lawler's partition with the ILP as its oracle would need up to n solves per
        tree, one per subproblem, and its forced and forbidden arcs do not shrink the
        program either.) A cut makes the LP relaxation fractional at the tree it removes,
        so the LP-first shortcut of :meth:`decode` is not tried after the first tree.
        The list stops early when the cuts leave no tree, or when the time limit (per
        solve) stops branch and bound before proving a tree optimal. ``solver`` is not
        used after the first tree: the cuts are added to HiGHS's program.
        """
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        first = self.decode(parts, scores)
        trees = [ScoredTree(first.heads, first.value)]
        arc_rows = parts.block(PartType.ARC)
        form = build_formulation(parts, scores, single_root=self.single_root,
                                 flow=self.branch_flow)
        cuts = []
        while len(trees) < k:
            tree = parts.from_heads(trees[-1].heads)[arc_rows]
            cut = np.zeros(form.n_vars)
            cut[arc_rows.start + np.flatnonzero(tree)] = 1.0
            cuts.append(cut)
            cut_form = replace(form, A_ub=sp.vstack([form.A_ub, sp.csr_array(np.array(cuts))],
                                                    format="csr"),
                               b_ub=np.concatenate([form.b_ub, np.full(len(cuts), parts.n - 1.0)]))
            try:
                x, optimal, _ = solve_highs(cut_form, self.time_limit)
            except ValueError:                      # infeasible: no tree is left
                break
            if x is None or not optimal:
                break
            heads = round_to_tree(parts, x[:form.n_parts], self.single_root)
            trees.append(ScoredTree(heads, float(scores @ parts.from_heads(heads))))
        trees.sort(key=lambda tree: -tree.score)    # stable: solver tolerance only
        return trees

    def _relaxed(self, parts: Parts, scores: np.ndarray, flow: str, stats: DecodeStats,
                 budget: Budget) -> DecodeResult:
        """:class:`LPDecoder` on ``flow`` within what is left of ``budget``; its times
        are added to ``stats``."""
        relaxed = LPDecoder(single_root=self.single_root, flow=flow).decode_within(
            parts, scores, budget)
        solving = (relaxed.stats.time_lp or 0.0) + (relaxed.stats.time_round or 0.0)
        stats.time_build += relaxed.stats.time_build
        stats.time_lp += solving
        stats.time_ilp += solving
        return relaxed

    @staticmethod
    def _result(parts: Parts, scores: np.ndarray, heads: np.ndarray, stats: DecodeStats
                ) -> DecodeResult:
        output = parts.from_heads(heads)
        return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                            stats=stats)
