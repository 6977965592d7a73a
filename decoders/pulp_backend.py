"""Solve a :class:`Formulation` with any solver PuLP can drive (CBC, GLPK, Gurobi, CPLEX).

The PuLP problem is built row by row from the same sparse matrices HiGHS gets, so both
paths solve the identical program. This is the door to other solvers, not the fast path:
PuLP builds Python objects and writes an LP file (``docs/algorithms.md`` section 8).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import numpy as np
import pulp

from .formulation import Formulation

# Short names -> PuLP solver classes; any other name is passed to ``pulp.getSolver``.
# CBC runs through COIN_CMD (:func:`cbc_path`): PULP_CBC_CMD is deprecated in PuLP 3.3
# and gone in PuLP 4.
SOLVER_NAMES = {"CBC": "COIN_CMD", "GLPK": "GLPK_CMD", "GUROBI": "GUROBI_CMD",
                "CPLEX": "CPLEX_CMD"}


def cbc_path() -> str:
    """The CBC executable for ``COIN_CMD``: ``cbc`` on the PATH (a system CBC, or the one
    ``pip install 'pulp[cbc]'`` adds), else the binary PuLP 3 ships inside its package
    (the deprecated ``PULP_CBC_CMD`` ran that one; PuLP 4 drops it, hence ``pulp<4``)."""
    return shutil.which("cbc") or pulp.PULP_CBC_CMD.pulp_cbc_path


def pulp_solver(name: str, **options) -> pulp.LpSolver:
    """The PuLP solver called ``name`` (a key of :data:`SOLVER_NAMES` or a PuLP solver
    class name) with PuLP's ``options`` (``msg``, ``timeLimit``, ...)."""
    name = SOLVER_NAMES.get(name.upper(), name)
    if name in ("COIN_CMD", "PULP_CBC_CMD"):
        return pulp.COIN_CMD(path=cbc_path(), **options)
    return pulp.getSolver(name, **options)


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
    lb, ub = form.lower, form.upper
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
    prob.solve(pulp_solver(solver, **options))
    values = [v.varValue for v in variables]
    x = None if any(v is None for v in values) else np.array(values, dtype=np.float64)
    return PulpSolution(x=x, optimal=prob.sol_status == pulp.LpSolutionOptimal,
                        sol_status=int(prob.sol_status))
