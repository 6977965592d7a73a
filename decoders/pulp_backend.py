"""Solve a :class:`Formulation` with any solver PuLP can drive (CBC, GLPK, Gurobi, CPLEX).

The PuLP problem is built row by row from the same sparse matrices HiGHS gets, so both
paths solve the identical program. This is the door to other solvers, not the fast path:
PuLP builds Python objects and writes an LP file (``docs/algorithms.md`` section 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pulp

from .formulation import Formulation

# Short names -> PuLP solver classes; any other name is passed to ``pulp.getSolver``.
SOLVER_NAMES = {"CBC": "PULP_CBC_CMD", "GLPK": "GLPK_CMD", "GUROBI": "GUROBI_CMD",
                "CPLEX": "CPLEX_CMD"}


@dataclass
class PulpSolution:
    """``x``: the solution (None when the solver has none); ``optimal``: PuLP's
    ``sol_status`` is "Optimal Solution Found" (its ``status`` says "Optimal" even after
    a time limit); ``sol_status``: PuLP's code."""

    x: np.ndarray | None
    optimal: bool
    sol_status: int


def solve_pulp(form: Formulation, solver: str, *, relax: bool = False,
               time_limit: float | None = None) -> PulpSolution:
    """Maximize ``form`` with the PuLP solver ``solver`` (a key of :data:`SOLVER_NAMES`
    or a PuLP solver class name); ``relax`` drops integrality."""
    prob = pulp.LpProblem("polyparse", pulp.LpMaximize)
    lb, ub = form.bounds.lb, form.bounds.ub
    integer = form.integrality.astype(bool) & (not relax)
    variables = [prob.add_variable(f"x{i}", lowBound=lb[i], upBound=ub[i],
                                   cat=pulp.LpInteger if integer[i] else pulp.LpContinuous)
                 for i in range(form.n_vars)]
    nonzero = np.flatnonzero(form.c)
    prob += pulp.LpAffineExpression([(variables[i], form.c[i]) for i in nonzero])
    for matrix, rhs, sense in ((form.A_ub, form.b_ub, pulp.LpConstraintLE),
                               (form.A_eq, form.b_eq, pulp.LpConstraintEQ)):
        for r in range(matrix.shape[0]):
            lo, hi = matrix.indptr[r], matrix.indptr[r + 1]
            expr = pulp.LpAffineExpression(
                [(variables[j], v) for j, v in zip(matrix.indices[lo:hi], matrix.data[lo:hi])])
            prob += pulp.LpConstraint(expr, sense, rhs=rhs[r])
    options = {"msg": False}
    if time_limit is not None:
        options["timeLimit"] = time_limit
    prob.solve(pulp.getSolver(SOLVER_NAMES.get(solver.upper(), solver), **options))
    values = [v.varValue for v in variables]
    x = None if any(v is None for v in values) else np.array(values, dtype=np.float64)
    return PulpSolution(x=x, optimal=prob.sol_status == pulp.LpSolutionOptimal,
                        sol_status=int(prob.sol_status))
