"""The relaxed decoder: the LP relaxation of the ILP, rounded to a tree by MST.

``docs/algorithms.md`` section 3; Martins, Smith, Xing (ACL 2009: the LP relaxation, used
for learning; ICML 2009: relaxed loss-augmented inference and MST rounding). The
fractional optimum over the parts is what a trainer's subgradient needs; the rounded tree
is what a parser outputs. When the arc values come out integral, every part variable is
forced to its value on that tree (:mod:`decoders.formulation`), so the LP solution is an
optimal ILP solution.
"""

from __future__ import annotations

import time
from typing import Literal

import numpy as np

from .base import (DEFAULT_TIME_LIMIT, Budget, Certificate, DecodeResult, DecodeStats,
                   Decoder, TimeLimitReached, register)
from .formulation import FLOWS, GRANDPARENTS, Formulation, build_formulation
from .labeled import solve_labeled
from .local_search import local_search
from .parts import Parts, PartType
from .trees import INTEGRALITY_TOL, fallback_result, round_to_tree

#: ``method="auto"`` uses HiGHS's interior point method (``"highs-ipm"``, followed by
#: HiGHS's default crossover, so the solution is basic, i.e. a vertex) when a sentence
#: has more than this many higher-order parts, and dual simplex (``"highs-ds"``)
#: otherwise. Measured on random scores: dual simplex is 2-8x faster on arc-factored LPs
#: (unpruned n = 30 included) and on pruned higher-order ones (~1,000 higher-order
#: parts), interior point 4-17x faster on unpruned second-order and full LPs from n = 20
#: (~10,000 higher-order parts and more).
IPM_ABOVE = 4000
TIE_BREAK = 1e-3
"""Weight of the (scaled) arc scores in the second rounding of :func:`relaxed_decode`."""

ROUNDING_DECIMALS = 4
"""Decimals of the arc values that :func:`round_relaxed` rounds by: values agreeing to
this many are ties. HiGHS's vertex and AD3's point (converged to a relative gap of
1e-6) differ by up to ~6e-5 where the LP optimum is a half-half split, enough to
tip the spanning tree either way: on all 2,001 en_ewt dev sentences (order-2 model)
their rounded trees differed on 28 of the first 1,000 and AD3's dev UAS was 0.20
lower; with 4 (or 3) decimals they differ on one sentence and the UAS on 0.01, and
HiGHS's own UAS does not change (85.24)."""


def lp_method(parts: Parts) -> str:
    """The HiGHS method ``method="auto"`` picks for ``parts`` (see :data:`IPM_ABOVE`)."""
    arcs = parts.block(PartType.ARC)
    return "highs-ipm" if len(parts) - (arcs.stop - arcs.start) > IPM_ABOVE else "highs-ds"


def solve_lp(form: Formulation, method: str = "highs-ds", time_limit: float | None = None
             ) -> tuple[np.ndarray, float]:
    """Optimal basic solution and value of the LP relaxation of ``form`` (maximized).

    ``method`` is ``"highs-ds"`` or ``"highs-ipm"``; both return a vertex and are
    deterministic. Raises ``ValueError`` when the LP is infeasible (the candidate arcs
    hold no tree) or HiGHS fails, :class:`~decoders.base.TimeLimitReached` when HiGHS
    stops at ``time_limit`` seconds.
    """
    from scipy.optimize import linprog  # 0.4 s to import: not at start-up

    options = {} if time_limit is None else {"time_limit": float(time_limit)}
    res = linprog(-form.c, A_ub=form.A_ub, b_ub=form.b_ub, A_eq=form.A_eq, b_eq=form.b_eq,
                  bounds=np.column_stack([form.lower, form.upper]), method=method,
                  options=options)
    if res.status == 1 and time_limit is not None:
        raise TimeLimitReached("lp")
    if res.status != 0:
        raise ValueError(f"LP relaxation not solved: {res.message}")
    return res.x, -float(res.fun)


def round_relaxed(parts: Parts, scores: np.ndarray, output: np.ndarray, *,
                  single_root: bool, search: bool = True) -> tuple[np.ndarray, float, int, int]:
    """Round a relaxed solution ``output`` (one value per part) to a tree.

    The maximum spanning arborescence under the arc values, rounded to
    :data:`ROUNDING_DECIMALS` decimals (so that two solvers' optima break ties alike).
    When some arc value is
    fractional (farther than :data:`INTEGRALITY_TOL` from 0 and 1), a second one under
    the arc values plus :data:`TIE_BREAK` times the arc scores (scaled to at most 1),
    which only breaks near-ties, and the tree that scores higher under ``scores`` is
    kept; with ``search`` that tree is then improved by
    :func:`~decoders.local_search.local_search` under every part's score. Returns
    ``(heads, score of heads, number of fractional arc values, search moves)``. Shared by
    the relaxed decoders (:func:`relaxed_decode`, :mod:`decoders.ad3`).
    """
    arc_rows = parts.block(PartType.ARC)
    arcs = output[arc_rows]
    fractional = int(np.count_nonzero(np.minimum(arcs, 1.0 - arcs) > INTEGRALITY_TOL))
    output = np.round(output, ROUNDING_DECIMALS)
    heads = round_to_tree(parts, output, single_root)
    rounded_value = float(scores @ parts.from_heads(heads))
    if fractional:
        tied = output.copy()
        arc_scores = scores[arc_rows]
        tied[arc_rows] += TIE_BREAK * arc_scores / max(float(np.abs(arc_scores).max()), 1e-300)
        other = round_to_tree(parts, tied, single_root)
        other_value = float(scores @ parts.from_heads(other))
        if other_value > rounded_value:
            heads, rounded_value = other, other_value
    moves = 0
    if fractional and search:
        heads, rounded_value, moves = local_search(parts, scores, heads, single_root=single_root)
    return heads, rounded_value, fractional, moves


def relaxed_decode(parts: Parts, scores: np.ndarray, form: Formulation, *,
                   single_root: bool, method: str = "auto",
                   search: bool = True, budget: Budget | None = None) -> DecodeResult:
    """Solve the LP relaxation of ``form`` (whose objective is ``scores``) and round it.

    ``output`` is the LP solution over the parts (clipped to [0, 1]), ``value`` the LP
    objective, ``heads`` the maximum spanning arborescence under the LP arc values (the
    LP's own tree when those are integral). A fractional solution is rounded twice, on
    the arc values and on the arc values plus :data:`TIE_BREAK` times the arc scores
    (scaled to at most 1), which only breaks near-ties; the tree that scores higher
    under ``scores`` is kept. On an order-2 en_ewt model this took LP+rounding from 89.39
    to 89.50 dev UAS (the ILP: 89.64). With ``search``, that tree is then improved by
    :func:`~decoders.local_search.local_search` under every part's score (full-order
    en_ewt model, 6 epochs: 89.61 to 89.75, the ILP 89.82).

    With a ``budget``, HiGHS stops when it is spent (raising
    :class:`~decoders.base.TimeLimitReached`), and the local search is skipped when
    nothing is left after the LP (the MST-rounded tree is returned).
    """
    budget = budget or Budget(None)
    budget.check("lp")
    start = time.perf_counter()
    x, value = solve_lp(form, lp_method(parts) if method == "auto" else method, budget.left())
    solved = time.perf_counter()
    output = np.clip(x[:form.n_parts], 0.0, 1.0)
    heads, rounded_value, fractional, moves = round_relaxed(
        parts, scores, output, single_root=single_root,
        search=search and budget.left() != 0.0)
    stats = DecodeStats(time_lp=solved - start, time_round=time.perf_counter() - solved,
                        integral=fractional == 0, fractional_arcs=fractional,
                        lp_value=value, rounded_value=rounded_value, search_moves=moves)
    return DecodeResult(output=output, heads=heads, value=value, stats=stats)


@register("lp")
class LPDecoder(Decoder):
    """LP relaxation of the ILP of :mod:`decoders.formulation`, plus MST rounding.

    Parameters
    ----------
    single_root:
        Exactly one root child (see :class:`Decoder`).
    flow:
        ``"multi"`` (tight for arc-factored scores) or ``"single"`` commodity flow.
    grandparent:
        ``"pairs"``: each grandparent part's product rows; ``"star"``: also each word's
        star rows (:func:`build_formulation`), those of AD3's full-order graph (whose
        ancestry is the tree recursion, not this program's flows), tighter where a
        word's head is split.
    method:
        ``"auto"`` (:func:`lp_method`), ``"highs-ds"`` or ``"highs-ipm"``.
    search:
        Improve the rounded tree of a fractional solution by local search under all
        part scores (:mod:`decoders.local_search`); False rounds by MST alone, as in
        Martins, Smith, Xing (2009).
    time_limit:
        Seconds per sentence for all of it (building the LP, solving, rounding), or
        None. When they run out before the LP is solved the result is the maximum
        spanning tree under the arc scores (:func:`~decoders.trees.fallback_result`),
        with ``stats.fallback`` True; when they run out after, the MST-rounded tree
        without local search.

    Notes
    -----
    ``output`` is fractional in general and ``value`` (the LP optimum) upper-bounds the
    score of every tree; ``stats`` (:class:`~decoders.base.DecodeStats`) has
    ``time_build, time_lp, time_round, integral, fractional_arcs, lp_value,
    rounded_value`` (the score of ``heads``) and ``search_moves`` (head changes made by
    the local search; in ``time_round``), ``fallback`` and, with a fallback,
    ``fallback_stage`` (``"build"`` or ``"lp"``).
    """

    part_types = frozenset(PartType)
    honors_constraints = True
    exact = False

    def __init__(self, *, single_root: bool = True, flow: str = "multi",
                 grandparent: Literal["pairs", "star"] = "pairs",
                 method: str = "auto", search: bool = True,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
        super().__init__(single_root=single_root, time_limit=time_limit)
        if flow not in FLOWS:
            raise ValueError(f"flow must be one of {FLOWS}, not {flow!r}")
        if grandparent not in GRANDPARENTS:
            raise ValueError(f"grandparent must be one of {GRANDPARENTS}, not {grandparent!r}")
        self.flow = flow
        self.grandparent = grandparent
        self.method = method
        self.search = search

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        return self.decode_within(parts, scores, Budget(self.time_limit))

    def decode_labeled(self, parts: Parts, scores: np.ndarray, problem):
        """The labeled LP relaxation on ``flow``, rounded (MST on the arc values, each
        word's label by its largest label variable); when the rounded labeled tree
        breaks a constraint, the exact program decides that sentence instead
        (``stats.rule_fallback``), so no hard constraint is ever broken
        (:func:`~decoders.labeled.solve_labeled`). ``time_limit`` bounds that branch and
        bound (its incumbent, which satisfies every constraint, is then kept)."""
        return solve_labeled(parts, scores, problem, single_root=self.single_root,
                             relaxed=True, flow=self.flow, grandparent=self.grandparent,
                             time_limit=self.time_limit)

    def certificate(self, result: DecodeResult) -> Certificate:
        """``"time-limit"`` after a fallback; ``"lp-integral"`` when the LP's arcs are
        integral (its tree is then optimal, :mod:`decoders.formulation`); else
        ``"rounded"`` with the LP optimum as the upper bound."""
        fallen = self.fallback_certificate(result)
        if fallen is not None:
            return fallen
        stats = result.stats
        if stats.integral:
            return Certificate("lp-integral", stats.rounded_value)
        return Certificate("rounded", stats.rounded_value, upper_bound=stats.lp_value)

    def decode_within(self, parts: Parts, scores: np.ndarray, budget: Budget
                      ) -> DecodeResult:
        """:meth:`decode` within ``budget`` (the :class:`ILPDecoder`'s, whose LP this is)."""
        start = time.perf_counter()
        try:
            form = build_formulation(parts, scores, single_root=self.single_root,
                                     flow=self.flow, grandparent=self.grandparent,
                                     budget=budget)
            built = time.perf_counter()
            result = relaxed_decode(parts, scores, form, single_root=self.single_root,
                                    method=self.method, search=self.search, budget=budget)
        except TimeLimitReached as stop:
            return fallback_result(parts, scores, self.single_root, stop.stage,
                                   DecodeStats(time_build=time.perf_counter() - start))
        result.stats.time_build = built - start
        return result
