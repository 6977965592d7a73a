"""Labeled decoding: arc x label variables, and constraints on labels (issue 14).

Today's decoders choose the tree over arc scores with each arc's best label folded in
(:mod:`learning.model`), and the labels after the tree. A constraint on labels ("at
most one subject per head", "a ``punct`` word is a leaf") needs the label inside the
program: one binary variable y[a, l] per candidate arc a = (h, m) and candidate label l,
with

    sum_l y[a, l] = z_a                                  for every candidate arc a

so that an arc in the tree takes exactly one of its candidate labels. The objective adds
``offsets[a, l]``: the score of label l on a minus the score of a's best label, which
the arc score already holds. With every label allowed and no constraint on labels the
best label of each arc costs 0 and the others less, so the optimum is the unlabeled
optimum with each arc's best label: the same trees and labels as without y.

This module knows no label names. A :class:`LabeledProblem` gives, per candidate arc,
its candidate label ids (pruned by the caller: the few best, plus those a constraint
needs, minus those forbidden on that arc) and constraints as index sets:

* ``at_most_one``: label sets; each head has at most one child labeled in the set:
  ``sum_{m, l in S} y[(h, m), l] <= 1`` for every head h;
* ``child_rules``: :class:`ChildRule` (m, l, allowed): when word m is labeled l, each of
  its children c takes a label l' with ``allowed[c, l']``:
  ``sum_h y[(h, m), l] + sum_{l' not allowed} y[(m, c), l'] <= 1`` for every candidate
  child c;
* ``contiguous``: :class:`Contiguous` (l, also): when h -> c is labeled l (h < c), every
  word j strictly between them is a child of h labeled l, or labeled in ``also``:
  ``y[(h, c), l] <= y[(h, j), l] + sum_{h', l' in also} y[(h', j), l']``;
* ``projective``: label ids whose arcs must be projective, and whose dependents must not
  make other arcs non-projective (UD's validator rules punct-is-nonproj and
  punct-causes-nonproj: :func:`projectivity_violations`). These are linear rows over
  the ancestry that the multi-commodity flows carry (:func:`_projective_rows`; the
  program then uses the multi-commodity flow whatever ``flow`` asks). The solution is
  checked all the same, and a violation (none is expected) would add a cut removing
  every tree that holds the same witness (the labeled arc, the path from the word in
  the gap to the root, and for punct-causes-nonproj the crossing arc) and solve again.
  A first version had only these cuts: on a 19-word en_ewt sentence under random
  weights they took 10 rounds and 46 s without converging, each cut being weak.

Arc-level constraints (given heads, forbidden arcs) are not here: the caller removes the
arcs from the candidate set, and forced labels are candidate-label sets of size one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ._labeled_kernels import IS_NONPROJ, projectivity_witnesses
from .base import MIN_TIME_LIMIT, Budget, DecodeResult, DecodeStats, TimeLimitReached
from .formulation import Formulation, _Rows, build_formulation
from .parts import Parts, PartType
from .trees import INTEGRALITY_TOL, round_to_tree

MAX_ROUNDS = 200
"""Rounds of cuts (re-solves) before :func:`solve_labeled` gives up."""

class Infeasible(ValueError):
    """No tree over the candidate arcs and labels satisfies the constraints."""


@dataclass(frozen=True)
class ChildRule:
    """When word ``m`` is labeled ``label``, its children take only labels ``l`` with
    ``allowed[c, l]`` (``bool (n + 1, n_labels)``, row c for child c)."""

    m: int
    label: int
    allowed: np.ndarray


@dataclass(frozen=True)
class Contiguous:
    """An arc h -> c (h < c) labeled ``label`` spans only children of h labeled ``label``
    or words labeled in ``also`` (UD's goeswith-gap and fixed-gap)."""

    label: int
    also: tuple[int, ...] = ()


@dataclass(frozen=True)
class LabeledProblem:
    """Candidate labels of every candidate arc and the constraints on them.

    Attributes
    ----------
    labels:
        ``int64 (n_arcs, K)``: the candidate label ids of each ARC row (in
        ``parts.arcs`` order), -1 for unused slots. An arc with no candidate label
        cannot be in the tree.
    offsets:
        ``float64 (n_arcs, K)``: each candidate label's score minus the label score that
        the arc's part score already holds (its best label's).
    at_most_one, child_rules, contiguous, projective:
        The constraints of the module docstring.
    """

    labels: np.ndarray
    offsets: np.ndarray
    at_most_one: tuple[np.ndarray, ...] = ()
    child_rules: tuple[ChildRule, ...] = ()
    contiguous: tuple[Contiguous, ...] = ()
    projective: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def constrained(self) -> bool:
        """Whether any constraint couples labels (else each arc's best label is optimal)."""
        return bool(self.at_most_one or self.child_rules or self.contiguous
                    or self.projective.size)


@dataclass
class LabeledResult:
    """A labeled tree: ``result`` (its ``output`` the 0/1 structure over the parts, its
    ``value`` the score with the labels' offsets) and ``labels``, ``int64 (n + 1,)``, the
    label id of each word (entry 0 is -1)."""

    result: DecodeResult
    labels: np.ndarray


@dataclass
class _Program:
    form: Formulation
    c: np.ndarray
    A_ub: sp.csr_array
    b_ub: np.ndarray
    A_eq: sp.csr_array
    b_eq: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    integrality: np.ndarray
    arc_var: np.ndarray          # (n + 1, n + 1) column of z_hm, -1
    label_var: dict              # (h, m, l) -> column of y


def build_labeled(parts: Parts, scores: np.ndarray, problem: LabeledProblem, *,
                  single_root: bool, flow: str = "single",
                  grandparent: str = "pairs") -> _Program:
    """The program of :func:`~decoders.formulation.build_formulation` with the label
    variables and the (non-lazy) constraints of ``problem`` appended."""
    if problem.projective.size:
        flow = "multi"                  # its flows give ancestry (_projective_rows)
    form = build_formulation(parts, scores, single_root=single_root, flow=flow,
                             grandparent=grandparent)
    arcs = parts.arcs
    arc_rows = parts.block(PartType.ARC)
    ah, am = arcs[:, 0], arcs[:, 1]
    arc_var = parts.arc_ids()
    arc_var[ah, am] += arc_rows.start
    a_idx, k_idx = np.nonzero(problem.labels >= 0)
    start = form.n_vars
    n_y = a_idx.size
    cols = start + np.arange(n_y)
    y_h, y_m, y_l = ah[a_idx], am[a_idx], problem.labels[a_idx, k_idx]
    label_var = {(int(h), int(m), int(lab)): int(col)
                 for h, m, lab, col in zip(y_h, y_m, y_l, cols)}
    n_vars = start + n_y
    eq, ub = _Rows(), _Rows()
    # an arc in the tree takes one label; an arc without labels is out
    eq.add(np.zeros(arcs.shape[0]), np.concatenate([a_idx, np.arange(arcs.shape[0])]),
           np.concatenate([cols, arc_var[ah, am]]),
           np.concatenate([np.ones(n_y), -np.ones(arcs.shape[0])]))
    by_head: dict[int, list[int]] = {}
    into: dict[int, list[int]] = {}
    for i in range(n_y):
        by_head.setdefault(int(y_h[i]), []).append(i)
        into.setdefault(int(y_m[i]), []).append(i)
    for label_set in problem.at_most_one:
        member = np.isin(y_l, label_set)
        for h, rows in by_head.items():
            chosen = [cols[i] for i in rows if member[i]]
            if len(chosen) > 1:
                ub.add([1.0], np.zeros(len(chosen)), chosen, 1.0)
    for rule in problem.child_rules:
        own = [cols[i] for i in into.get(rule.m, ()) if y_l[i] == rule.label]
        if not own:
            continue
        for child in sorted({int(y_m[i]) for i in by_head.get(rule.m, ())}):
            bad = [cols[i] for i in by_head[rule.m]
                   if y_m[i] == child and not rule.allowed[child, y_l[i]]]
            if bad:
                ub.add([1.0], np.zeros(len(own) + len(bad)), own + bad, 1.0)
    for rule in problem.contiguous:
        also = np.asarray(rule.also, dtype=np.int64)
        for i in np.flatnonzero(y_l == rule.label):
            h, c = int(y_h[i]), int(y_m[i])
            if h == 0 or c - h < 2:
                continue
            for j in range(h + 1, c):
                support = [cols[t] for t in into.get(j, ())
                           if (y_h[t] == h and y_l[t] == rule.label) or y_l[t] in also]
                ub.add([0.0], np.zeros(1 + len(support)), [cols[i]] + support,
                       [1.0] + [-1.0] * len(support))
    if problem.projective.size:
        _projective_rows(ub, parts, form, problem, y_h, y_m, y_l, cols)
    A_eq_y, b_eq_y = eq.build(n_vars)
    A_ub_y, b_ub_y = ub.build(n_vars)

    def widen(matrix):
        if not matrix.shape[0]:
            return sp.csr_array((0, n_vars))
        return sp.hstack([matrix, sp.csr_array((matrix.shape[0], n_y))], format="csr")
    c = np.concatenate([form.c, problem.offsets[a_idx, k_idx]])
    integrality = np.concatenate([form.integrality, np.ones(n_y, dtype=np.uint8)])
    return _Program(form, c,
                    sp.vstack([widen(form.A_ub), A_ub_y], format="csr"),
                    np.concatenate([form.b_ub, b_ub_y]),
                    sp.vstack([widen(form.A_eq), A_eq_y], format="csr"),
                    np.concatenate([form.b_eq, b_eq_y]),
                    np.concatenate([form.lower, np.zeros(n_y)]),
                    np.concatenate([form.upper, np.ones(n_y)]),
                    integrality, arc_var, label_var)


def _projective_rows(ub: _Rows, parts: Parts, form: Formulation, problem: LabeledProblem,
                     y_h, y_m, y_l, cols) -> None:
    """punct-is-nonproj and punct-causes-nonproj as linear rows over the multi-commodity
    flows, whose ancestry is ``anc(a, j) = sum_{h'} phi^j_{h'a}`` (commodity j passes
    through a: a is an ancestor of j; the root is everyone's):

    * is-nonproj: ``y[(h, p), l] <= anc(h, j)`` for every word j strictly between h >= 1
      and p, l a projective label;
    * causes-nonproj (the validator's ``get_caused_nonprojectivities``): for an arc
      (a, b) over p (L = min(a, b) < p < R = max(a, b)), a >= 1, and the labeled arcs
      (h, p) with h < L or h > R (the arc's endpoint on h's side lies strictly between
      h and p): ``sum_h y[(h, p), l] + z_ab - anc(a, p) <= 1``.

    Both are exact: with integral arcs the flows are the tree's paths."""
    arcs = parts.arcs
    ah, am = arcs[:, 0], arcs[:, 1]
    n_arcs = arcs.shape[0]
    start = form.blocks["flow"].start
    arc_rows = parts.block(PartType.ARC)
    into = [np.flatnonzero(am == a) for a in range(parts.n + 1)]

    def anc(a: int, j: int) -> np.ndarray:
        return start + (j - 1) * n_arcs + into[a]

    chosen = np.flatnonzero(np.isin(y_l, problem.projective))
    by_word: dict[int, list[int]] = {}
    for i in chosen:
        by_word.setdefault(int(y_m[i]), []).append(int(i))
        h, p = int(y_h[i]), int(y_m[i])
        if h == 0:
            continue
        for j in range(min(h, p) + 1, max(h, p)):
            flows = anc(h, j)
            ub.add([0.0], np.zeros(1 + flows.size), np.concatenate([[cols[i]], flows]),
                   np.concatenate([[1.0], -np.ones(flows.size)]))
    for p, ys in by_word.items():
        heads = y_h[ys]
        for a_row in np.flatnonzero((np.minimum(ah, am) < p) & (np.maximum(ah, am) > p)
                                    & (ah > 0)):
            low, high = min(ah[a_row], am[a_row]), max(ah[a_row], am[a_row])
            ours = [cols[i] for i, h in zip(ys, heads) if h < low or h > high]
            if not ours:
                continue
            flows = anc(int(ah[a_row]), p)
            ub.add([1.0], np.zeros(len(ours) + 1 + flows.size),
                   np.concatenate([ours, [arc_rows.start + a_row], flows]),
                   np.concatenate([np.ones(len(ours) + 1), -np.ones(flows.size)]))


def projectivity_violations(heads: np.ndarray, is_projective_label: np.ndarray
                            ) -> list[tuple[str, int, list[tuple[int, int]]]]:
    """Violations of UD's punct-is-nonproj and punct-causes-nonproj (the validator's
    ``utils.get_gap`` and ``utils.get_caused_nonprojectivities``) by the words p with
    ``is_projective_label[p]`` in the tree ``heads``, at most one per word and rule
    (found by :func:`decoders._labeled_kernels.projectivity_witnesses`).

    Returns ``(rule id, p, witness arcs)``: every tree that holds p's labeled arc and the
    witness arcs (h, m) breaks punct-is-nonproj or punct-causes-nonproj at p (the cut of
    the module docstring). Where the tree has one, the witness is a single arc that
    crosses p's arc (p -> head): then with u the word of that arc inside the span of the
    other, either p's head does not dominate u (is-nonproj) or it does and the crossing
    arc's head, not an ancestor of p, spans p (causes-nonproj):

    * is-nonproj, j in the gap not dominated by p's head: u, j's highest ancestor inside
      the gap, hangs from x outside p's span; when x lies beyond p, the arc x -> u;
      otherwise the path from u to the root (it avoids p's head);
    * causes-nonproj, the arc x' -> x over p with x' not an ancestor of p: when p's head
      lies outside that arc's span, the arc alone; otherwise the path from p's head to
      the root and that arc (whose head is not on the path).
    """
    heads = np.asarray(heads, dtype=np.int64)

    def chain(word: int) -> list[tuple[int, int]]:
        path = []
        while word != 0:
            path.append((int(heads[word]), word))
            word = int(heads[word])
        return path

    out = []
    for rule, p, j, x in projectivity_witnesses(heads, np.asarray(is_projective_label,
                                                                  dtype=np.bool_)):
        p = int(p)
        pid = int(heads[p])
        lo, hi = min(p, pid), max(p, pid)
        if rule == IS_NONPROJ:
            u = int(j)
            while lo < heads[u] < hi:
                u = int(heads[u])
            beyond_p = (heads[u] > hi) == (p == hi)
            out.append(("punct-is-nonproj", p,
                        [(int(heads[u]), u)] if beyond_p else chain(u)))
        else:
            x = int(x)
            crossing = (int(heads[x]), x)
            outside = not min(crossing) <= pid <= max(crossing)
            out.append(("punct-causes-nonproj", p,
                        [crossing] if outside else chain(p)[1:] + [crossing]))
    return out


def solve_labeled(parts: Parts, scores: np.ndarray, problem: LabeledProblem, *,
                  single_root: bool, relaxed: bool = False, flow: str = "single",
                  grandparent: str = "pairs", time_limit: float | None = None
                  ) -> LabeledResult:
    """The best labeled tree under ``scores`` (one per part) and ``problem``.

    The LP relaxation of :func:`build_labeled` is solved first (HiGHS); when its arc and
    label variables are integral and the tree breaks nothing, it is the optimum
    (``stats.integral``). Otherwise, exact (``relaxed=False``): HiGHS's branch and
    bound, with the projectivity check (and its cuts) after each solve.
    ``time_limit`` (seconds) bounds the whole call: when it runs out in branch and bound,
    the incumbent, which satisfies every constraint, is returned with
    ``stats.fallback`` True (it may not be optimal). Branch and bound over the whole
    program gets half of the time left after the LP; without an incumbent by then, the
    LP's rounded tree if it breaks nothing, else branch and bound over the arcs of the
    LP's support (a much smaller program) for the rest of the time, its tree returned
    the same way; with none there either, :class:`~decoders.base.TimeLimitReached`
    (``"labeled"``; also when the LP itself is not solved in time).
    ``relaxed=True``: the LP relaxation, rounded to a tree by MST on the arc values and each
    word's label by the largest y; when the rounded labeled tree breaks any constraint
    (:func:`violated`), the exact program decides instead (``stats.rule_fallback``).
    Raises :class:`Infeasible` when no labeled tree satisfies the constraints.
    """
    from scipy.optimize import LinearConstraint, linprog, milp  # 0.4 s: not at start-up

    budget = Budget(time_limit)
    start = time.perf_counter()
    program = build_labeled(parts, scores, problem, single_root=single_root, flow=flow,
                            grandparent=grandparent)
    built = time.perf_counter()
    stats = DecodeStats(time_build=built - start, cut_rounds=0, cuts=0, branched=False,
                        relaxed=relaxed)
    budget.check("labeled")
    res = linprog(-program.c, A_ub=program.A_ub, b_ub=program.b_ub, A_eq=program.A_eq,
                  b_eq=program.b_eq, bounds=np.column_stack([program.lb, program.ub]),
                  method="highs", options=_time_option(budget))
    if res.status == 2:
        raise Infeasible("no labeled tree satisfies the constraints")
    if res.status == 1:                 # HiGHS's time limit
        raise TimeLimitReached("labeled")
    if res.status != 0:
        raise ValueError(f"labeled LP not solved: {res.message}")
    x = lp_x = np.clip(res.x, 0.0, 1.0)
    integral = bool(np.all(np.minimum(x[program.integrality == 1],
                                      1 - x[program.integrality == 1]) <= INTEGRALITY_TOL))
    stats.update(lp_value=-float(res.fun), time_lp=time.perf_counter() - built,
                 integral=integral)
    if relaxed or integral:
        heads = round_to_tree(parts, np.round(x[:program.form.n_parts], 4), single_root)
        labels = _labels_of(program, x, heads)
        if labels is not None and not violated(parts, problem, program, heads, labels):
            return labeled_result(parts, scores, problem, heads, labels, stats)
        stats.rule_fallback = relaxed
    A_ub, b_ub = program.A_ub, program.b_ub
    ub, restricted = program.ub, False
    window = budget.share(0.5)
    cuts: list[np.ndarray] = []
    cut_rhs: list[float] = []
    for rounds in range(MAX_ROUNDS):
        if cuts:
            A_ub = sp.vstack([program.A_ub, sp.csr_array(np.array(cuts))], format="csr")
            b_ub = np.concatenate([program.b_ub, np.array(cut_rhs)])
        res = None
        if window.left() != 0.0:
            res = milp(-program.c, integrality=program.integrality, bounds=(program.lb, ub),
                       constraints=[LinearConstraint(A_ub, -np.inf, b_ub),
                                    LinearConstraint(program.A_eq, program.b_eq, program.b_eq)],
                       options={"mip_rel_gap": 0.0, **_time_option(window)})
            if res.status == 2 and not restricted:
                raise Infeasible("no labeled tree satisfies the constraints")
        if res is None or res.x is None:
            if res is not None and res.status not in (1, 2):    # 1: HiGHS's time limit
                raise ValueError(f"labeled ILP not solved: {res.message}")
            if restricted or budget.left() == 0.0:
                raise TimeLimitReached("labeled")
            # out of time without an incumbent: the LP's rounded tree if it breaks
            # nothing, else the program restricted to the LP's support, for the rest
            heads = round_to_tree(parts, np.round(lp_x[:program.form.n_parts], 4), single_root)
            labels = _labels_of(program, lp_x, heads)
            if labels is not None and not violated(parts, problem, program, heads, labels):
                stats.update(fallback=True, fallback_stage="labeled")
                return labeled_result(parts, scores, problem, heads, labels, stats)
            arcs = program.arc_var[program.arc_var >= 0]
            ub = program.ub.copy()
            ub[arcs[lp_x[arcs] <= INTEGRALITY_TOL]] = 0.0
            restricted, window = True, budget
            continue
        stats.branched = True
        if res.status != 0 or restricted:   # the time limit: the incumbent, not optimal
            stats.update(fallback=True, fallback_stage="labeled")
        x = res.x
        heads = round_to_tree(parts, x[:program.form.n_parts], single_root)
        labels = _labels_of(program, x, heads)
        found = projectivity_violations(heads, np.isin(labels, problem.projective)
                                        & (np.arange(labels.size) > 0))
        if not found:
            stats.update(cut_rounds=rounds, cuts=len(cuts),
                         time_ilp=time.perf_counter() - built)
            return labeled_result(parts, scores, problem, heads, labels, stats)
        for _, p, witness in found:
            cut = np.zeros(program.c.size)
            cut[program.label_var[(int(heads[p]), p, int(labels[p]))]] = 1.0
            for h, m in witness:
                cut[program.arc_var[h, m]] = 1.0
            cuts.append(cut)
            cut_rhs.append(float(cut.sum() - 1.0))
    raise ValueError(f"labeled ILP: still breaking projectivity after {MAX_ROUNDS} rounds "
                     "of cuts")


def _time_option(budget: Budget) -> dict:
    """HiGHS's ``time_limit`` option for what is left of ``budget`` (none without one)."""
    left = budget.left()
    return {} if left is None else {"time_limit": max(left, MIN_TIME_LIMIT)}


def violated(parts: Parts, problem: LabeledProblem, program: _Program, heads: np.ndarray,
             labels: np.ndarray) -> bool:
    """Whether the labeled tree breaks a constraint of ``problem`` (or uses a label that
    is not a candidate of its arc)."""
    x = np.zeros(program.c.size)
    n = heads.shape[0] - 1
    for m in range(1, n + 1):
        h = int(heads[m])
        col = program.label_var.get((h, m, int(labels[m])))
        if col is None:
            return True
        x[col] = 1.0
        x[program.arc_var[h, m]] = 1.0
    rows = program.A_ub[:, program.form.n_vars:] @ x[program.form.n_vars:]
    y_rows = np.flatnonzero(np.diff(program.A_ub[:, :program.form.n_vars].indptr) == 0)
    if np.any(rows[y_rows] > program.b_ub[y_rows] + 1e-9):
        return True
    return bool(projectivity_violations(heads, np.isin(labels, problem.projective)
                                        & (np.arange(labels.size) > 0)))


def _labels_of(program: _Program, x: np.ndarray, heads: np.ndarray) -> np.ndarray | None:
    """Each word's label in ``x``: the candidate label of its arc with the largest y
    (None when an arc of ``heads`` has no candidate label)."""
    n = heads.shape[0] - 1
    best = {}
    for (h, m, lab), col in program.label_var.items():
        if heads[m] == h and (m not in best or x[col] > best[m][0]):
            best[m] = (x[col], lab)
    if len(best) < n:
        return None
    return np.array([-1] + [best[m][1] for m in range(1, n + 1)], dtype=np.int64)


def labeled_result(parts: Parts, scores: np.ndarray, problem: LabeledProblem,
                   heads: np.ndarray, labels: np.ndarray, stats: DecodeStats
                   ) -> LabeledResult:
    """The :class:`LabeledResult` of the labeled tree ``(heads, labels)``: its value is
    the model's score of the tree plus its labels' offsets."""
    output = parts.from_heads(heads)
    rows = parts.arc_ids()[heads[1:], np.arange(1, heads.shape[0])]
    slots = np.argmax(problem.labels[rows] == labels[1:, None], axis=1)
    value = float(scores @ output) + float(problem.offsets[rows, slots].sum())
    return LabeledResult(DecodeResult(output=output, heads=heads, value=value, stats=stats),
                         labels)


def best_labels(label_scores: np.ndarray, allowed: np.ndarray | None = None, k: int = 3,
                needed: np.ndarray | None = None) -> LabeledProblem:
    """The candidate labels of every arc: its ``k`` best under ``label_scores``
    (``(n_arcs, n_labels)``) among the ``allowed`` ones (``bool``, same shape; all by
    default), plus the allowed labels in ``needed`` (``bool``, same shape), with offsets
    from each arc's best label over all labels (the one its part score holds)."""
    n_arcs, n_labels = label_scores.shape
    masked = label_scores if allowed is None else np.where(allowed, label_scores, -np.inf)
    order = np.argsort(-masked, axis=1, kind="stable")[:, :k]
    keep = np.zeros((n_arcs, n_labels), dtype=bool)
    np.put_along_axis(keep, order, True, axis=1)
    if needed is not None:
        keep |= needed
    if allowed is not None:
        keep &= allowed
    width = max(1, int(keep.sum(axis=1).max()) if n_arcs else 1)
    # the kept labels of each arc, best first (ties: the lower id first)
    order = np.argsort(-np.where(keep, label_scores, -np.inf), axis=1,
                       kind="stable")[:, :width]
    kept = np.take_along_axis(keep, order, axis=1)
    top = label_scores.max(axis=1) if n_labels else np.zeros(n_arcs)
    labels = np.where(kept, order, -1).astype(np.int64)
    offsets = np.where(kept, np.take_along_axis(label_scores, order, axis=1) - top[:, None],
                       0.0)
    return LabeledProblem(labels, offsets)
