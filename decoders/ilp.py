"""The exact decoder: the integer linear program of :mod:`decoders.formulation`.

Martins, Smith, Xing (ACL 2009); ``docs/algorithms.md`` section 2. HiGHS (through
``scipy.optimize.milp``) is the default solver; any PuLP solver can be used on the same
matrices (:mod:`decoders.pulp_backend`).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import LinearConstraint, milp

from .base import DecodeResult, Decoder, register
from .formulation import FLOWS, Formulation, build_formulation
from .lp import relaxed_decode
from .mst import round_to_tree
from .parts import Parts, PartType
from .pulp_backend import solve_pulp


def solve_highs(form: Formulation, time_limit: float | None = None
                ) -> tuple[np.ndarray | None, bool, int | None]:
    """Maximize ``form`` with HiGHS's branch and bound.

    Returns ``(x, optimal, nodes)``: the best solution found (None if none), whether it
    is proven optimal (relative gap 0), and the number of branch-and-bound nodes (None
    when HiGHS stopped before reporting it).
    Raises ``ValueError`` when the program is infeasible (the candidate arcs hold no
    tree) or unbounded.
    """
    options = {"mip_rel_gap": 0.0}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = milp(-form.c, integrality=form.integrality, bounds=form.bounds,
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

    Parameters
    ----------
    single_root:
        Exactly one root child (see :class:`Decoder`).
    solver:
        ``"highs"`` (``scipy.optimize.milp``) or a PuLP solver: ``"CBC"``, ``"GLPK"``,
        ``"GUROBI"``, ``"CPLEX"`` or any PuLP solver class name.
    flow:
        ``"multi"`` or ``"single"`` commodity flow (:func:`build_formulation`).
    time_limit:
        Seconds per sentence, or None.

    Notes
    -----
    Without a proven optimum (time limit) the decoder falls back to the LP relaxation
    plus MST rounding, and returns whichever of that tree and the solver's incumbent (if
    any) scores higher; ``stats["fallback"]`` is then True. The returned tree is always
    re-scored: ``output = parts.from_heads(heads)`` and ``value = scores @ output``.
    ``stats``: ``time_build, time_ilp, ilp_nodes`` (None for PuLP solvers, or when
    HiGHS stopped before counting), ``fallback``, and with a fallback the LP's
    ``lp_value`` and ``rounded_value`` and the solver's ``incumbent_value`` (None
    without an incumbent).
    """

    part_types = frozenset(PartType)

    def __init__(self, *, single_root: bool = True, solver: str = "highs",
                 flow: str = "multi", time_limit: float | None = None) -> None:
        super().__init__(single_root=single_root)
        if flow not in FLOWS:
            raise ValueError(f"flow must be one of {FLOWS}, not {flow!r}")
        self.solver = solver
        self.flow = flow
        self.time_limit = time_limit

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        form = build_formulation(parts, scores, single_root=self.single_root, flow=self.flow)
        built = time.perf_counter()
        if self.solver.lower() == "highs":
            x, optimal, nodes = solve_highs(form, self.time_limit)
        else:
            solution = solve_pulp(form, self.solver, time_limit=self.time_limit)
            x, optimal, nodes = solution.x, solution.optimal, None
        solved = time.perf_counter()
        stats = {"time_build": built - start, "time_ilp": solved - built, "ilp_nodes": nodes,
                 "fallback": not optimal}
        heads = None if x is None else round_to_tree(parts, x[:form.n_parts], self.single_root)
        if not optimal:
            relaxed = relaxed_decode(parts, scores, form, single_root=self.single_root)
            incumbent = None if heads is None else float(scores @ parts.from_heads(heads))
            stats.update(lp_value=relaxed.stats["lp_value"],
                         rounded_value=relaxed.stats["rounded_value"],
                         incumbent_value=incumbent)
            if incumbent is None or relaxed.stats["rounded_value"] > incumbent:
                heads = relaxed.heads
        output = parts.from_heads(heads)
        return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                            stats=stats)
