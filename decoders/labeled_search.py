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
a node is relaxed by AD3 over the factor graph of its available arcs
(:class:`~decoders.ad3.AD3Relaxation`, warm-started from its parent, stopped at the
incumbent's cutoff), whose dual value bounds the node. For ``ad3-exact`` a node whose
relaxation is not tight is split on a fractional arc (:mod:`decoders.branching`), as
:mod:`decoders.ad3_exact` splits its nodes: one branch and bound over the arcs and the
constraints, exact, where each node of the search had been a whole branch and bound of
its own (a 40-word sv_talbanken sentence of a 500-sentence model: 7 search nodes, 95 AD3
solves; now 20, ``eval/results/defaults.md``). For ``ad3`` the search stops at the first
node whose rounded tree breaks nothing, with that node's bound as an upper bound on every
feasible labeled tree (every open node's bound is lower): LP decoding with rounding that
never breaks a constraint, and a certificate of its gap. At full order a node is the
decoder's own decoding of its arcs (:class:`DecoderRelaxation`).
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass
from typing import Callable, NamedTuple, Protocol

import numpy as np

from . import _kernels
from .base import Budget, DecodeStats, Decoder, TimeLimitReached
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

class NodeTree(NamedTuple):
    """What a relaxation gives for one node of the search."""

    bound: float
    """An upper bound on the score of every tree of the node's available arcs."""
    heads: np.ndarray
    """A tree of them."""
    value: float
    """Its score under the node's arc scores (each arc with its best available label)
    and the other parts' scores."""
    exact: bool
    """``heads`` is the node's best tree (``value`` within the relaxation's
    :meth:`~Relaxation.slack` of ``bound``)."""
    split: tuple[np.ndarray, np.ndarray] | None = None
    """Where the relaxation is not exact and would rather be branched on an arc: the
    available arcs (``bool (n_arcs,)``) of the two children (that arc removed; that arc
    fixed, its word's other heads removed), by :func:`~decoders.branching.
    fixed_children`. None: the search takes ``heads`` as the node's tree (a rounded tree
    with its bound, when not exact)."""
    state: object = None
    """Where the relaxation stopped: the children's warm start."""


class Relaxation(Protocol):
    """A relaxation of the labeled search's nodes."""

    def __call__(self, arc_scores: np.ndarray, cutoff: float = -np.inf,
                 warm: object = None) -> NodeTree | None:
        """The node whose available arcs have the finite entries of ``arc_scores`` (one
        per candidate arc, ``-inf``: not available), or None when they hold no tree.
        ``cutoff``: the search's incumbent (its score plus the slack); a relaxation may
        stop as soon as its bound is at most that. ``warm``: the parent's
        :attr:`NodeTree.state`."""

    def slack(self, incumbent: float) -> float:
        """How far above the incumbent's score a bound may lie and still close a node."""


@dataclass(frozen=True)
class TreeRelaxation:
    """First order: the best tree over the arc scores by ``kernel`` (``(S,
    single_root) -> (heads, status)``), exact."""

    parts: Parts
    single_root: bool
    kernel: Callable

    def __call__(self, arc_scores: np.ndarray, cutoff: float = -np.inf,
                 warm: object = None) -> NodeTree | None:
        arcs, n = self.parts.arcs, self.parts.n
        S = np.full((n + 1, n + 1), -np.inf)
        S[arcs[:, 0], arcs[:, 1]] = arc_scores
        heads, status = self.kernel(S, self.single_root)
        if status != _kernels.OK:
            return None
        value = _kernels.tree_value(S, heads)
        return NodeTree(value, heads, value, True)

    def slack(self, incumbent: float) -> float:
        return 0.0


def mst_relaxation(parts: Parts, single_root: bool) -> Relaxation:
    """The first-order relaxation: the maximum spanning tree over the arc scores."""
    return TreeRelaxation(parts, single_root, _kernels.mst_heads)


def projective_restriction(parts: Parts, single_root: bool) -> Relaxation:
    """The first-order problem restricted to projective trees: Eisner's best projective
    tree over the arc scores (:func:`~decoders._kernels.eisner_heads`). Not a relaxation
    but a restriction: the search over it gives the best *projective* tree that satisfies
    the constraints, a feasible tree that never breaks the punctuation rules (no arc of a
    projective tree crosses another), found in few nodes where the non-projective search
    can branch on punctuation for thousands (a 59-word nl_alpino sentence: 45 nodes,
    and the tree was the optimum, which the search over all trees proves in 18,163)."""
    return TreeRelaxation(parts, single_root, _kernels.eisner_heads)


@dataclass(frozen=True)
class DecoderRelaxation:
    """Any decoder's relaxation over the parts of the available arcs
    (:meth:`~decoders.parts.Parts.restrict`; higher-order parts keep their scores), each
    node within what is left of ``budget`` (:meth:`~decoders.base.Decoder.within`): its
    tree, and as the bound its certificate's upper bound (AD3's dual value, the LP's
    value, a time-limited search's open bound), or the tree's score when the
    certificate proves it optimal (``ad3-exact``, ``ilp``)."""

    decoder: Decoder
    parts: Parts
    scores: np.ndarray
    budget: Budget

    def __call__(self, arc_scores: np.ndarray, cutoff: float = -np.inf,
                 warm: object = None) -> NodeTree | None:
        parts, n = self.parts, self.parts.n
        keep = np.isfinite(arc_scores)
        reach = np.full((n + 1, n + 1), -np.inf)
        reach[parts.arcs[keep, 0], parts.arcs[keep, 1]] = 0.0
        if _kernels.mst_heads(reach, self.decoder.single_root)[1] != _kernels.OK:
            return None
        sub, _, node_scores = node_parts(parts, self.scores, arc_scores)
        bounded = self.decoder.within(self.budget)
        result = bounded.decode(sub, node_scores)
        certificate = bounded.certificate(result)
        if certificate.optimal:
            return NodeTree(certificate.score, result.heads, certificate.score, True)
        bound = np.inf if certificate.upper_bound is None else certificate.upper_bound
        return NodeTree(bound, result.heads, certificate.score, False)

    def slack(self, incumbent: float) -> float:
        return 0.0


def node_parts(parts: Parts, scores: np.ndarray, arc_scores: np.ndarray
               ) -> tuple[Parts, np.ndarray, np.ndarray]:
    """The parts of a node's available arcs (the finite ``arc_scores``), the row of
    ``parts`` each of them is (:meth:`~decoders.parts.Parts.restrict`) and their scores:
    ``scores``' for the higher-order parts, ``arc_scores``' for the arcs."""
    sub, rows = parts.restrict(np.isfinite(arc_scores))
    node_scores = scores[rows]
    arc_rows = sub.block(PartType.ARC)
    node_scores[arc_rows] = arc_scores[rows[arc_rows] - parts.block(PartType.ARC).start]
    return sub, rows, node_scores


@dataclass(frozen=True)
class _Tree:
    """A node's relaxation with its tree's candidate slot (column of
    ``problem.labels``) of each word."""

    node: NodeTree
    rows: np.ndarray        # (n + 1,) arc row of each word (entry 0: -1)
    slots: np.ndarray       # (n + 1,) slot of each word's label (entry 0: -1)
    labels: np.ndarray      # (n + 1,) label id of each word (entry 0: -1)

    @property
    def heads(self) -> np.ndarray:
        return self.node.heads


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
    (:func:`mst_relaxation` for arc-factored scores, :class:`DecoderRelaxation`, AD3's
    :class:`~decoders.ad3.AD3Relaxation`). Best first on the nodes' bounds; the best
    tree found that breaks nothing is the incumbent, and a node whose bound is at most
    the incumbent's score plus ``relax.slack`` is closed. A node whose relaxation is
    exact is branched on the witness of the constraint its tree breaks; one that is not,
    on the arc the relaxation names (:attr:`NodeTree.split`: a branch and bound over both
    the constraints and the fractional arcs, each node one relaxation warm-started from
    its parent's), or, where it names none, on its rounded tree's witness, and the
    search then ends at the first node whose rounded tree breaks nothing, with that
    node's bound as an upper bound on every feasible labeled tree (every open node's
    bound is lower). When the search closes, the tree is the optimum (within the slack).
    After ``max_nodes`` relaxations, or half of what was left of ``budget`` at the start,
    the better of the incumbent and the same search over ``restriction`` (a subset of
    the trees, e.g. :func:`projective_restriction`; ``max_nodes`` more), else
    depth-first dives from the root (:data:`DIVES`, ``max_nodes`` relaxations each),
    within the rest of ``budget``, give a tree that breaks nothing, with the best open
    node's bound (``stats.fallback``); None if they find none (the caller decides
    then). :class:`~decoders.labeled.Infeasible` when no labeled tree satisfies
    ``problem``. ``stats``: ``nodes`` (relaxations solved), ``arc_splits`` (nodes split
    on an arc), ``upper_bound`` (None: exact), ``fallback``, ``fallback_stage`` (``"search"``: the incumbent;
    ``"restriction"``: the restriction's best tree; ``"dive"``), ``limit`` (what stopped
    the search: ``"nodes"`` or ``"time"``), ``time_search``."""
    start = time.perf_counter()
    search_budget = budget.share(0.5)
    arc_scores = scores[parts.block(PartType.ARC)]
    checker = _Checker(parts, problem)
    n = parts.n
    words = np.arange(1, n + 1)

    def solve(allowed: np.ndarray, cutoff: float = -np.inf, warm: object = None
              ) -> _Tree | None:
        masked = np.where(allowed, problem.offsets, -np.inf)    # allowed: only valid slots
        found = relax(arc_scores + masked.max(axis=1), cutoff, warm)
        if found is None:
            return None
        rows = np.concatenate([[-1], checker.row_of[found.heads[1:], words]])
        slots = np.concatenate([[-1], np.argmax(masked[rows[1:]], axis=1)])
        labels = np.concatenate([[-1], problem.labels[rows[1:], slots[1:]]])
        return _Tree(found, rows, slots, labels)

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

    def dive(first: str, most: int) -> tuple[_Tree | None, int]:
        """Depth first from the root to a tree that breaks nothing, within ``most``
        relaxations and what is left of ``budget``: ``first`` ``"branch"``: the
        first branch first (its first item forbidden, nothing forced); ``"bound"``: the
        branch of highest bound first."""
        stack = [(checker.valid, root, checker.witness(root))]
        used = 0
        while stack and used < most and budget.left() != 0.0:
            allowed, tree, items = stack.pop()
            if items is None:
                return tree, used
            kids = [(found, child) for child in branches(allowed, items)
                    if (found := solve(child)) is not None]
            used += len(items)
            if first == "bound":
                kids.sort(key=lambda kid: kid[0].node.bound)
            else:
                kids.reverse()
            stack.extend((child, found, checker.witness(found)) for found, child in kids)
        return None, used

    root = solve(checker.valid)
    if root is None:
        raise Infeasible("no labeled tree over the candidate arcs and labels")
    incumbent: _Tree | None = None     # the best tree found that breaks nothing
    # open nodes: (-bound, tie, allowed, tree, its witness, warm start); a branch is
    # pushed with its parent's bound and no tree, and solved only when it is the best
    # open node (lazily)
    heap: list = []
    tie = itertools.count()

    def cutoff() -> float:
        if incumbent is None:
            return -np.inf
        return incumbent.node.value + relax.slack(incumbent.node.value)

    def add(parent_bound: float, allowed: np.ndarray, tree: _Tree) -> None:
        """A solved node: its tree the incumbent if it breaks nothing and beats it; the
        node open unless its bound is closed or its tree is its feasible optimum."""
        nonlocal incumbent
        items = checker.witness(tree)
        if items is None and (incumbent is None or tree.node.value > incumbent.node.value):
            incumbent = tree
        bound = min(parent_bound, tree.node.bound)      # its own bound, at most its parent's
        if bound > cutoff() and not (items is None and tree.node.exact):
            heapq.heappush(heap, (-bound, next(tie), allowed, tree, items, None))

    add(np.inf, checker.valid, root)
    nodes, arc_splits, dived, upper = 1, 0, False, None
    stats = DecodeStats()
    while heap:
        neg_bound, _, allowed, tree, items, warm = heapq.heappop(heap)
        if -neg_bound <= cutoff():      # best first: no open node beats the incumbent
            break
        if tree is None:
            if nodes >= max_nodes or search_budget.left() == 0.0:
                stats.limit = "nodes" if nodes >= max_nodes else "time"
                # out of nodes: the better of the incumbent and the restriction's best
                # tree, else a dive from the root, for a tree that breaks nothing; this
                # node's bound (the best open one's) still bounds every tree
                dived, upper, stage = True, -neg_bound, "search"
                found = None
                if restriction is not None:
                    try:
                        found = search_labeled(parts, scores, problem, restriction,
                                               budget, max_nodes=max_nodes)
                    except Infeasible:
                        pass
                if found is not None:
                    nodes += found.result.stats.nodes
                    if incumbent is None or found.result.value > incumbent.node.value:
                        incumbent = _Tree(NodeTree(upper, found.result.heads,
                                                   found.result.value, False),
                                          None, None, found.labels)
                        # the restriction's best tree, or one its own dives found
                        stage = "dive" if found.result.stats.fallback else "restriction"
                for first in DIVES if incumbent is None else ():
                    incumbent, used = dive(first, max_nodes)
                    nodes += used
                    if incumbent is not None:
                        stage = "dive"
                        break
                if incumbent is not None:
                    stats.update(fallback=True, fallback_stage=stage)
                break
            found = solve(allowed, cutoff(), warm)
            nodes += 1
            if found is not None:
                add(-neg_bound, allowed, found)
            continue
        if tree.node.split is not None:     # not exact: branch on the relaxation's arc
            arc_splits += 1
            for arcs in tree.node.split:
                heapq.heappush(heap, (neg_bound, next(tie), allowed & arcs[:, None], None,
                                      None, tree.node.state))
        elif items is None:     # a rounded tree that breaks nothing, of the best bound
            upper = -neg_bound
            break
        else:
            for child in branches(allowed, items):
                heapq.heappush(heap, (neg_bound, next(tie), child, None, None,
                                      tree.node.state))
    if incumbent is None:
        if not dived:
            raise Infeasible("no labeled tree satisfies the constraints")
        return None     # the dives found nothing
    stats.update(nodes=nodes, arc_splits=arc_splits, time_search=time.perf_counter() - start,
                 upper_bound=upper)
    return labeled_result(parts, scores, problem, incumbent.heads, incumbent.labels, stats)


def search_or_program(parts: Parts, scores: np.ndarray, problem: LabeledProblem,
                      relax: Relaxation, budget: Budget, *, single_root: bool,
                      relaxed: bool, max_nodes: int = MAX_NODES,
                      restriction: Relaxation | None = None) -> LabeledResult:
    """:func:`search_labeled`, and for a sentence it does not settle, the labeled program
    of HiGHS (:func:`~decoders.labeled.solve_labeled`, its LP rounded when ``relaxed``,
    else branch and bound; ``stats.search_gave_up``), all within ``budget``
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
        found.result.stats.search_gave_up = True
    return found
