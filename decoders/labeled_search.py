"""Exact labeled decoding by branch and bound on the constraints (issue 14).

The constraints of a :class:`~decoders.labeled.LabeledProblem` are each violated by a
*conjunction* of labeled arcs: two children of one head both labeled subject
(``at_most_one``); a word labeled ``punct`` and a child of it labeled ``nsubj``
(``child_rules``); a ``fixed`` arc and a word in its span that is not part of it
(``contiguous``); a ``punct`` arc, the path from a word in its gap to the root, and for
punct-causes-nonproj the crossing arc (``projective``,
:func:`~decoders.labeled.projectivity_violations`). Call each conjunct an *item*: one
word m and a set of (head, label) choices for it; a tree *holds* the item when m's arc
and label are in the set. A tree breaking the constraint holds all items I_1..I_k of its
witness, so every tree that satisfies it is in exactly one of the k branches

    branch i:  I_1, ..., I_{i-1} held (each forced),  I_i not held (forbidden),

and each branch only removes (arc, label) candidates. Without the constraints, the best
labeled tree over the remaining candidates is a relaxation of each branch: at first
order the maximum spanning tree over the arc scores, each with its best remaining
label (Chu-Liu-Edmonds, :mod:`decoders.mst`), which is also a tree of the branch's
candidates. Best-first search on that bound is exact: a node whose tree breaks nothing is
a feasible tree and the best of its branch; a node whose bound is below the incumbent
is closed; the search ends when no open node's bound beats the incumbent. This is the
classic branch and bound for constrained spanning trees (e.g. Aggarwal, Aneja and Nair
1982 for a knapsack-constrained MST), with the constraint's own witness as the branching
rule; few sentences break more than one or two rules, so few nodes are opened.

Each node costs one maximum spanning tree (numba) and a check of the constraints on one
tree; the program of :func:`~decoders.labeled.solve_labeled` (HiGHS, a multi-commodity
flow when punctuation must be projective) is left for the sentences on which this search
exceeds its node budget.

At second order the labels still only touch the arcs, so the same branching holds, and
a node is decoded by the parser's own decoder over the parts of its available arcs
(:func:`decoder_relaxation`): ``ad3-exact`` gives the node's best tree (the search is
exact, as at first order); ``ad3`` gives a rounded tree and AD3's dual value as the
node's bound, and the search then stops at the first node whose rounded tree breaks
nothing, with that node's bound as an upper bound on every feasible labeled tree (every
open node's bound is lower): LP decoding with rounding that never breaks a constraint,
and a certificate of its gap.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import _kernels
from .base import Budget, Decoder, TimeLimitReached
from .labeled import (Infeasible, LabeledProblem, LabeledResult,
                      labeled_result, projectivity_violations, solve_labeled)
from .parts import Parts, PartType

MAX_NODES = 1000
"""Relaxations :func:`search_labeled` solves before it searches its restriction (or
dives) for a feasible tree (and that search, or each of its :data:`DIVES`, may solve).
On 669 sentences whose tree broke a UD rule (300 dev sentences of each of seven
treebanks, order-1 models of at most 800 sentences), one needed 543 nodes, one more
than 2,000 (its projective fallback was the optimum), the rest at most 149."""

DIVES = ("branch", "bound")
"""The dives tried in turn when the search is out of nodes and has no restriction, or
its restriction finds no tree (``search_labeled``'s ``dive``). Neither finds a tree on
every hard sentence: on a 65-word sv_talbanken sentence (a model of 204 training
sentences) "bound" found none in 5,000 relaxations and "branch" one at once; on a
59-word nl_alpino sentence, the other way round."""

Relaxation = Callable[[np.ndarray], "tuple[float, np.ndarray, bool] | None"]
"""Given one score per candidate arc (``-inf``: not available in this node), a tree of
the available arcs without the label constraints and an upper bound on the score of
every such tree: ``(bound, heads, exact)``, ``exact`` when the tree reaches the bound
(it is then the best); None when the available arcs hold no tree."""


def _first_order(parts: Parts, single_root: bool, kernel) -> Relaxation:
    """The best tree over the arc scores by ``kernel`` (``(S, single_root) -> (heads,
    status)``), exact."""
    arcs = parts.arcs
    n = parts.n

    def relax(arc_scores: np.ndarray):
        S = np.full((n + 1, n + 1), -np.inf)
        S[arcs[:, 0], arcs[:, 1]] = arc_scores
        heads, status = kernel(S, single_root)
        if status != _kernels.OK:
            return None
        return _kernels.tree_value(S, heads), heads, True

    return relax


def mst_relaxation(parts: Parts, single_root: bool) -> Relaxation:
    """The first-order relaxation: the maximum spanning tree over the arc scores."""
    return _first_order(parts, single_root, _kernels.mst_heads)


def projective_restriction(parts: Parts, single_root: bool) -> Relaxation:
    """The first-order problem restricted to projective trees: Eisner's best projective
    tree over the arc scores (:func:`~decoders._kernels.eisner_heads`). Not a relaxation
    but a restriction: the search over it gives the best *projective* tree that satisfies
    the constraints, a feasible tree that never breaks the punctuation rules (no arc of a
    projective tree crosses another), found in few nodes where the non-projective search
    can branch on punctuation for thousands (a 59-word nl_alpino sentence: 45 nodes,
    and the tree was the optimum, which the search over all trees proves in 18,163)."""
    return _first_order(parts, single_root, _kernels.eisner_heads)


def decoder_relaxation(decoder: Decoder, parts: Parts, scores: np.ndarray,
                       budget: Budget) -> Relaxation:
    """Any decoder's relaxation over the parts of the available arcs
    (:meth:`~decoders.parts.Parts.restrict`; higher-order parts keep their scores), each
    node within what is left of ``budget`` (:meth:`~decoders.base.Decoder.within`): its
    tree, and as the bound its certificate's upper bound (AD3's dual value, the LP's
    value, a time-limited search's open bound), or the tree's score when the
    certificate proves it optimal (``ad3-exact``, ``ilp``)."""
    arcs = parts.arcs
    n = parts.n
    arc_block = parts.block(PartType.ARC)

    def relax(arc_scores: np.ndarray):
        keep = np.isfinite(arc_scores)
        reach = np.full((n + 1, n + 1), -np.inf)
        reach[arcs[keep, 0], arcs[keep, 1]] = 0.0
        if _kernels.mst_heads(reach, decoder.single_root)[1] != _kernels.OK:
            return None
        sub, rows = parts.restrict(keep)
        node_scores = scores[rows]
        node_scores[sub.block(PartType.ARC)] = arc_scores[rows[sub.block(PartType.ARC)]
                                                          - arc_block.start]
        bounded = decoder.within(budget)
        result = bounded.decode(sub, node_scores)
        certificate = bounded.certificate(result)
        if certificate.optimal:
            return certificate.score, result.heads, True
        return certificate.upper_bound, result.heads, False

    return relax


@dataclass(frozen=True)
class _Tree:
    """A node's tree with each word's candidate slot (column of ``problem.labels``);
    ``exact`` when it is the node's best tree."""

    heads: np.ndarray
    exact: bool
    rows: np.ndarray        # (n + 1,) arc row of each word (entry 0: -1)
    slots: np.ndarray       # (n + 1,) slot of each word's label (entry 0: -1)
    labels: np.ndarray      # (n + 1,) label id of each word (entry 0: -1)


class _Checker:
    """The constraints of a problem, checked on one labeled tree at a time; a violation
    is returned as its witness items (``bool (n_arcs, K)`` masks of the (arc, slot)
    choices each item holds)."""

    def __init__(self, parts: Parts, problem: LabeledProblem) -> None:
        self.problem = problem
        self.arcs = parts.arcs
        self.n = parts.n
        self.row_of = parts.arc_ids()
        self.valid = problem.labels >= 0
        self.into = [self.arcs[:, 1] == m for m in range(self.n + 1)]
        self.member = [np.isin(problem.labels, s) & self.valid for s in problem.at_most_one]
        self.rule_m = np.array([r.m for r in problem.child_rules], dtype=np.int64)
        self.rule_label = np.array([r.label for r in problem.child_rules], dtype=np.int64)
        # the child rules' allowed (child, label) tables stacked; a word holds at most one
        # active rule (one per word and label)
        self.rule_allowed = (np.stack([r.allowed for r in problem.child_rules])
                             if problem.child_rules else None)
        self.is_projective = np.isin(problem.labels, problem.projective) & self.valid
        # by label id; the last entry, False, for the root's label -1
        self.projective_label = np.zeros(max(problem.labels.max(initial=-1),
                                             problem.projective.max(initial=-1)) + 2,
                                         dtype=bool)
        self.projective_label[problem.projective] = True

    def _arc_item(self, h: int, m: int, slots: np.ndarray | None = None) -> np.ndarray:
        """Arc h -> m with any of ``slots`` (bool (K,); every candidate label if None)."""
        item = np.zeros(self.valid.shape, dtype=bool)
        r = self.row_of[h, m]
        item[r] = self.valid[r] if slots is None else slots
        return item

    def witness(self, tree: _Tree) -> list[np.ndarray] | None:
        """The items of one constraint ``tree`` breaks, or None when it breaks none: of
        the constraints it breaks, one with fewest items (fewest branches)."""
        heads, rows, slots, labels = tree.heads, tree.rows, tree.slots, tree.labels
        words = np.arange(1, self.n + 1)
        for member in self.member:
            chosen = words[member[rows[1:], slots[1:]]]
            if chosen.size > 1:
                h, counts = np.unique(heads[chosen], return_counts=True)
                if counts.max() > 1:
                    two = chosen[heads[chosen] == h[np.argmax(counts)]][:2]
                    return [self._arc_item(int(heads[m]), int(m), member[rows[m]])
                            for m in two]
        if self.rule_m.size:
            active = np.full(self.n + 1, -1, dtype=np.int64)     # each word's active rule
            on = np.flatnonzero(labels[self.rule_m] == self.rule_label)
            active[self.rule_m[on]] = on
            rule_of = active[heads[1:]]
            under = words[rule_of >= 0]
            bad = under[~self.rule_allowed[rule_of[under - 1], under, labels[under]]]
            if bad.size:    # the first rule broken (by index), its first child
                i = int(active[heads[bad]].min())
                rule = self.problem.child_rules[i]
                c = int(bad[heads[bad] == rule.m][0])
                labelled = self.into[rule.m][:, None] & (self.problem.labels == rule.label)
                not_allowed = self.valid[rows[c]] & ~rule.allowed[
                    c, np.maximum(self.problem.labels[rows[c]], 0)]
                return [labelled, self._arc_item(rule.m, c, not_allowed)]
        for rule in self.problem.contiguous:
            also = np.asarray(rule.also, dtype=np.int64)
            for c in np.flatnonzero(labels == rule.label):
                h = int(heads[c])
                if h == 0 or c - h < 2:
                    continue
                for j in range(h + 1, int(c)):
                    if not ((heads[j] == h and labels[j] == rule.label)
                            or labels[j] in also):
                        keep = (np.isin(self.problem.labels, also)
                                | ((self.arcs[:, 0] == h)[:, None]
                                   & (self.problem.labels == rule.label)))
                        outside = self.into[j][:, None] & self.valid & ~keep
                        return [self._arc_item(h, int(c), self.problem.labels[rows[c]]
                                               == rule.label), outside]
        if self.problem.projective.size:
            found = projectivity_violations(heads, self.projective_label[labels])
            if found:
                _, p, path = min(found, key=lambda violation: len(violation[2]))
                own = self._arc_item(int(heads[p]), p, self.is_projective[rows[p]])
                return [own] + [self._arc_item(h, m) for h, m in path]
        return None


def search_labeled(parts: Parts, scores: np.ndarray, problem: LabeledProblem,
                   relax: Relaxation, budget: Budget, *, max_nodes: int = MAX_NODES,
                   restriction: Relaxation | None = None) -> LabeledResult | None:
    """The best labeled tree under ``scores`` (one per part) and ``problem``, by the
    branch and bound of the module docstring with ``relax`` as each node's relaxation
    (:func:`mst_relaxation` for arc-factored scores; :func:`decoder_relaxation`).
    When ``relax`` is exact on the node that ends the search (the MST always), the tree
    is the optimum; otherwise it is a labeled tree that satisfies ``problem`` and
    ``stats["upper_bound"]``, the bound of that node, bounds every such tree's score
    (best first: every open node's bound is lower). After ``max_nodes`` relaxations, or
    half of what was left of ``budget`` at the start, the same search over
    ``restriction`` (a subset of the trees, e.g. :func:`projective_restriction`;
    ``max_nodes`` more), else depth-first dives from the root (:data:`DIVES`,
    ``max_nodes`` relaxations each), within the rest of ``budget``, give a tree that
    breaks nothing, with the best open node's bound (``stats["fallback"]``); None if
    they find none (the caller decides then).
    :class:`~decoders.labeled.Infeasible` when no labeled tree satisfies ``problem``.
    ``stats``: ``nodes`` (relaxations solved), ``upper_bound`` (None: exact),
    ``fallback``, ``fallback_stage`` (``"restriction"``: the restriction's best tree;
    ``"dive"``), ``limit`` (what stopped the search: ``"nodes"`` or ``"time"``),
    ``time_search``."""
    start = time.perf_counter()
    search_budget = budget.share(0.5)
    arc_scores = scores[parts.block(PartType.ARC)]
    checker = _Checker(parts, problem)
    n = parts.n
    words = np.arange(1, n + 1)

    def solve(allowed: np.ndarray):
        masked = np.where(allowed, problem.offsets, -np.inf)    # allowed: only valid slots
        best = masked.max(axis=1)
        found = relax(arc_scores + best)
        if found is None:
            return None
        bound, heads, exact = found
        rows = np.concatenate([[-1], checker.row_of[heads[1:], words]])
        slots = np.concatenate([[-1], np.argmax(masked[rows[1:]], axis=1)])
        labels = np.concatenate([[-1], problem.labels[rows[1:], slots[1:]]])
        return bound, _Tree(heads, exact, rows, slots, labels)

    def branches(allowed: np.ndarray, items: list[np.ndarray]) -> list[np.ndarray]:
        """The allowed (arc, slot) choices of each branch of a node whose tree holds
        ``items``."""
        out = []
        forced = allowed
        for item in items:
            out.append(forced & ~item)
            # the next branches hold this item: its word takes only the item's choices
            m = int(checker.arcs[np.flatnonzero(item.any(axis=1))[0], 1])
            forced = forced & ~(checker.into[m][:, None] & ~item)
        return out

    def children(allowed: np.ndarray, items: list[np.ndarray]):
        """(bound, allowed, tree) of each branch that has a tree."""
        for child in branches(allowed, items):
            found = solve(child)
            if found is not None:
                yield found[0], child, found[1]

    def dive(first: str, most: int) -> tuple[_Tree | None, int]:
        """Depth first from the root to a tree that breaks nothing, within ``most``
        relaxations and what is left of ``budget``: ``first`` ``"branch"``: the
        first branch first (its first item forbidden, nothing forced); ``"bound"``: the
        branch of highest bound first."""
        stack = [(checker.valid, root[1], checker.witness(root[1]))]
        used = 0
        while stack and used < most and budget.left() != 0.0:
            allowed, tree, items = stack.pop()
            if items is None:
                return tree, used
            kids = list(children(allowed, items))
            used += len(items)
            kids = kids[::-1] if first == "branch" else sorted(kids, key=lambda kid: kid[0])
            stack.extend((child, found, checker.witness(found)) for _, child, found in kids)
        return None, used

    root = solve(checker.valid)
    if root is None:
        raise Infeasible("no labeled tree over the candidate arcs and labels")
    # open nodes: (-bound, tie, allowed, tree); a branch is pushed with its parent's
    # bound and no tree, and solved only when it is the best open node (lazily)
    heap = [(-root[0], 0, checker.valid, root[1])]
    incumbent = None
    nodes, tie, dived = 1, 1, False
    stats = {"fallback": False}
    while heap:
        neg_bound, _, allowed, tree = heapq.heappop(heap)
        if tree is None:
            if nodes >= max_nodes or search_budget.left() == 0.0:
                stats["limit"] = "nodes" if nodes >= max_nodes else "time"
                # out of nodes: the restriction's best tree, else a dive from the root,
                # for a tree that breaks nothing; this node's bound (the best open
                # one's) still bounds every tree
                dived = True
                found = None
                if restriction is not None:
                    try:
                        found = search_labeled(parts, scores, problem, restriction,
                                               budget, max_nodes=max_nodes)
                    except Infeasible:
                        pass
                if found is not None:
                    nodes += found.result.stats["nodes"]
                    incumbent = (-neg_bound, found.result.heads, found.labels, False)
                    # the restriction's best tree, or one its own dives found
                    stage = "dive" if found.result.stats["fallback"] else "restriction"
                for first in DIVES if found is None else ():
                    tree, used = dive(first, max_nodes)
                    nodes += used
                    if tree is not None:
                        incumbent = (-neg_bound, tree.heads, tree.labels, False)
                        stage = "dive"
                        break
                if incumbent is not None:
                    stats.update(fallback=True, fallback_stage=stage)
                break
            found = solve(allowed)
            nodes += 1
            if found is not None:       # its own bound, at most its parent's
                heapq.heappush(heap, (max(neg_bound, -found[0]), tie, allowed, found[1]))
                tie += 1
            continue
        items = checker.witness(tree)
        if items is None:       # best first: no open node's bound beats this one
            incumbent = (-neg_bound, tree.heads, tree.labels, tree.exact)
            break
        for child in branches(allowed, items):
            heapq.heappush(heap, (neg_bound, tie, child, None))
            tie += 1
    if incumbent is None:
        if not dived:
            raise Infeasible("no labeled tree satisfies the constraints")
        return None     # the dives found nothing
    bound, heads, labels, exact = incumbent
    stats.update(nodes=nodes, time_search=time.perf_counter() - start,
                 upper_bound=None if exact else bound)
    return labeled_result(parts, scores, problem, heads, labels, stats)


def search_or_program(parts: Parts, scores: np.ndarray, problem: LabeledProblem,
                      relax: Relaxation, budget: Budget, *, single_root: bool,
                      relaxed: bool, max_nodes: int = MAX_NODES,
                      restriction: Relaxation | None = None) -> LabeledResult:
    """:func:`search_labeled`, and for a sentence it does not settle, the labeled program
    of HiGHS (:func:`~decoders.labeled.solve_labeled`, its LP rounded when ``relaxed``,
    else branch and bound; ``stats["search_gave_up"]``), all within ``budget``
    (:class:`~decoders.base.TimeLimitReached` when it runs out before a tree that
    satisfies ``problem`` is found): what the decoders that honor constraints by search
    (``mst``, ``ad3``, ``ad3-exact``) return from ``decode_labeled``."""
    found = search_labeled(parts, scores, problem, relax, budget, max_nodes=max_nodes,
                           restriction=restriction)
    if found is None:
        if budget.left() == 0.0:
            raise TimeLimitReached("labeled")
        found = solve_labeled(parts, scores, problem, single_root=single_root,
                              relaxed=relaxed, time_limit=budget.left())
        found.result.stats["search_gave_up"] = True
    return found
