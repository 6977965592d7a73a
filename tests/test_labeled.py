"""Labeled ILP and LP (decoders.labeled) against every labeled tree of small sentences."""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pytest

from polyparse.decoders import Budget, PartType
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.labeled import (ChildRule, Contiguous, Infeasible, LabeledProblem,
                                        best_labels, projectivity_violations, solve_labeled)

from brute_force import all_trees, projective_trees

pytestmark = pytest.mark.ilp


def _problem(parts, rng, n_labels, **constraints) -> tuple[np.ndarray, LabeledProblem]:
    """Random label scores over ``parts``' arcs, all labels candidates."""
    label_scores = rng.normal(size=(parts.arcs.shape[0], n_labels))
    base = best_labels(label_scores, k=n_labels)
    return label_scores, LabeledProblem(base.labels, base.offsets, **constraints)


def _brute(parts, scores, label_scores, problem, single_root=True, projective=False):
    """Best (value, heads, labels) over all labeled trees (all projective ones if
    ``projective``) satisfying ``problem``."""
    n = parts.n
    row = {(int(h), int(m)): i for i, (h, m) in enumerate(parts.arcs)}
    best = (-np.inf, None, None)
    top = label_scores.max(axis=1)
    for heads in (projective_trees if projective else all_trees)(n, single_root):
        if any((int(heads[m]), m) not in row for m in range(1, n + 1)):
            continue
        base = float(scores @ parts.from_heads(heads))
        cand = [problem.labels[row[(int(heads[m]), m)]] for m in range(1, n + 1)]
        for labs in itertools.product(*[c[c >= 0] for c in cand]):
            labels = np.array([-1, *labs])
            if not _feasible(heads, labels, problem):
                continue
            value = base + sum(label_scores[row[(int(heads[m]), m)], labels[m]]
                               - top[row[(int(heads[m]), m)]] for m in range(1, n + 1))
            if value > best[0] + 1e-9:
                best = (value, heads, labels)
    return best


def _feasible(heads, labels, problem) -> bool:
    n = heads.size - 1
    for label_set in problem.at_most_one:
        for h in range(n + 1):
            if sum(heads[m] == h and labels[m] in label_set for m in range(1, n + 1)) > 1:
                return False
    for rule in problem.child_rules:
        if labels[rule.m] == rule.label:
            for c in range(1, n + 1):
                if heads[c] == rule.m and not rule.allowed[c, labels[c]]:
                    return False
    for rule in problem.contiguous:
        for c in range(1, n + 1):
            h = heads[c]
            if labels[c] == rule.label and 0 < h < c:
                for j in range(h + 1, c):
                    if not ((heads[j] == h and labels[j] == rule.label)
                            or labels[j] in rule.also):
                        return False
    mask = np.isin(labels, problem.projective) & (np.arange(n + 1) > 0)
    return not projectivity_violations(heads, mask)


def _constraints(n, n_labels, rng):
    allowed = rng.random((n + 1, n_labels)) < 0.5
    return dict(at_most_one=(np.array([0]),),
                child_rules=tuple(ChildRule(m, 1, allowed) for m in range(1, n + 1)),
                contiguous=(Contiguous(2, (1,)),),
                projective=np.array([1]))


@lru_cache(maxsize=None)
def _instance(seed: int):
    """A random labeled problem with constraints, and its optimum by brute force (kept
    for the exact and the relaxed decoding of the same instance)."""
    rng = np.random.default_rng(seed)
    n, n_labels = (5, 2) if seed == 6 else (4, 2) if seed % 2 == 0 else (3, 3)
    parts = build_parts(n, order="2" if seed >= 4 else "1")
    scores = rng.normal(size=len(parts))
    label_scores, problem = _problem(parts, rng, n_labels, **_constraints(n, n_labels, rng))
    value, _, _ = _brute(parts, scores, label_scores, problem)
    return parts, scores, problem, value


@pytest.mark.parametrize("seed", range(7))
@pytest.mark.parametrize("relaxed", [False, True])
def test_labeled_matches_brute_force(seed, relaxed):
    parts, scores, problem, value = _instance(seed)
    got = solve_labeled(parts, scores, problem, single_root=True, relaxed=relaxed)
    if relaxed:         # LP + rounding: a feasible labeled tree, not always the best
        assert got.result.value <= value + 1e-6
    else:
        assert got.result.value == pytest.approx(value, abs=1e-6)
    assert _feasible(got.result.heads, got.labels, problem)


def test_without_label_constraints_same_tree_and_best_labels():
    from polyparse.decoders import make_decoder

    rng = np.random.default_rng(7)
    for order in ("1", "2", "1", "2"):
        parts = build_parts(4 if order == "2" else 5, order=order)
        scores = rng.normal(size=len(parts))
        label_scores = rng.normal(size=(parts.arcs.shape[0], 4))
        problem = best_labels(label_scores, k=3)
        assert not problem.constrained
        plain = make_decoder("ilp", time_limit=None).decode(parts, scores)
        got = solve_labeled(parts, scores, problem, single_root=True)
        assert np.array_equal(got.result.heads, plain.heads)
        rows = [int(np.flatnonzero((parts.arcs[:, 0] == plain.heads[m])
                                   & (parts.arcs[:, 1] == m))[0]) for m in range(1, parts.n + 1)]
        assert list(got.labels[1:]) == list(label_scores[rows].argmax(axis=1))
        assert got.result.value == pytest.approx(plain.value)


def test_infeasible_raises():
    parts = build_parts(3)
    scores = np.zeros(len(parts))
    problem = best_labels(np.zeros((parts.arcs.shape[0], 1)), k=1)
    # every word is labeled 0, a word labeled 0 has no children, at most one root child
    problem = LabeledProblem(problem.labels, problem.offsets, at_most_one=(np.array([0]),),
                             child_rules=tuple(ChildRule(m, 0, np.zeros((4, 1), bool))
                                               for m in range(1, 4)))
    with pytest.raises(Infeasible):
        solve_labeled(parts, scores, problem, single_root=True)


def test_punct_cuts_remove_nonprojective_punct():
    """punct-is-nonproj: 1 <- 2 <- root, punct 3 wants head 1, over 2 (not below 1)."""
    n = 3
    parts = build_parts(n)
    S = np.full((n + 1, n + 1), -5.0)
    S[0, 2] = S[2, 1] = S[1, 3] = 5.0
    S[2, 3] = 1.0
    scores = S[parts.arcs[:, 0], parts.arcs[:, 1]]
    label_scores = np.zeros((parts.arcs.shape[0], 2))
    label_scores[:, 1] = -1.0
    label_scores[parts.arcs[:, 1] == 3] = [-10.0, 2.0]          # word 3 is punct (label 1)
    base = best_labels(label_scores, k=2)
    free = solve_labeled(parts, scores, base, single_root=True)
    assert list(free.result.heads) == [-1, 2, 0, 1] and free.labels[3] == 1
    assert projectivity_violations(free.result.heads, free.labels == 1)
    problem = LabeledProblem(base.labels, base.offsets, projective=np.array([1]))
    for relaxed in (False, True):
        got = solve_labeled(parts, scores, problem, single_root=True, relaxed=relaxed)
        assert list(got.result.heads) == [-1, 2, 0, 2] and got.labels[3] == 1


@lru_cache(maxsize=None)
def _first_order_instance(seed: int):
    """A random first-order labeled problem with every kind of constraint, and its
    optimum by brute force (-inf when no labeled tree satisfies it)."""
    rng = np.random.default_rng(100 + seed)
    n, n_labels = [(3, 3), (4, 2), (4, 3), (5, 2)][seed % 4] if seed < 8 else (4, seed % 2 + 2)
    parts = build_parts(n, order="1")
    scores = rng.normal(size=len(parts))
    label_scores, problem = _problem(parts, rng, n_labels, **_constraints(n, n_labels, rng))
    return parts, scores, problem, _brute(parts, scores, label_scores, problem)[0]


@pytest.mark.parametrize("seed", range(24))
def test_mst_search_matches_brute_force(seed):
    """decoders.labeled_search: branch and bound on the constraints with the MST as its
    bound finds the best labeled tree that satisfies them, or says there is none."""
    from polyparse.decoders import make_decoder

    parts, scores, problem, value = _first_order_instance(seed)
    decoder = make_decoder("mst", time_limit=None)
    if value == -np.inf:
        with pytest.raises(Infeasible):
            decoder.decode_labeled(parts, scores, problem)
        return
    got = decoder.decode_labeled(parts, scores, problem)
    assert not got.result.stats.search_gave_up
    assert got.result.value == pytest.approx(value, abs=1e-9)
    assert _feasible(got.result.heads, got.labels, problem)


def test_mst_search_gives_up_to_the_ilp(monkeypatch):
    """A sentence the search does not settle within its node budget goes to the labeled
    ILP, which finds the same optimum."""
    from polyparse.decoders import make_decoder
    import polyparse.decoders.labeled_search as labeled_search

    parts, scores, problem, value = _first_order_instance(1)
    assert value > -np.inf
    assert labeled_search.search_labeled(parts, scores, problem,
                                         labeled_search.mst_relaxation(parts, True),
                                         Budget(None), max_nodes=1) is None
    monkeypatch.setattr(labeled_search, "search_labeled", lambda *a, **k: None)
    got = make_decoder("mst", time_limit=None).decode_labeled(parts, scores, problem)
    assert got.result.stats.search_gave_up
    assert got.result.value == pytest.approx(value, abs=1e-6)
    assert _feasible(got.result.heads, got.labels, problem)


def test_out_of_nodes_the_mst_search_takes_the_best_projective_tree():
    """Out of nodes, the first-order search takes the best projective labeled tree that
    satisfies the constraints (brute force over projective trees) when the search over
    projective trees ends within its nodes, with an upper bound on the best of all
    trees."""
    from polyparse.decoders.labeled_search import (mst_relaxation, projective_restriction,
                                                   search_labeled)

    restricted = 0
    for seed in range(10):
        rng = np.random.default_rng(300 + seed)
        parts = build_parts(4, order="1")
        scores = rng.normal(size=len(parts))
        label_scores, problem = _problem(parts, rng, 2, **_constraints(4, 2, rng))
        got = search_labeled(parts, scores, problem, mst_relaxation(parts, True), Budget(None),
                             max_nodes=3, restriction=projective_restriction(parts, True))
        if got is None or not got.result.stats.fallback:
            continue
        assert _feasible(got.result.heads, got.labels, problem)
        value = _brute(parts, scores, label_scores, problem)[0]
        assert value - 1e-9 <= got.result.stats.upper_bound
        if got.result.stats.fallback_stage == "restriction":
            restricted += 1
            assert got.result.value == pytest.approx(
                _brute(parts, scores, label_scores, problem, projective=True)[0], abs=1e-9)
    assert restricted >= 3


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_ad3_search_matches_brute_force(seed):
    """At order 2 each node of the search is decoded by AD3 over its available arcs:
    ad3-exact finds the best labeled tree that satisfies the constraints; ad3 a tree
    that satisfies them, with an upper bound on the best one."""
    from polyparse.decoders import make_decoder

    parts, scores, problem, value = _instance(seed)
    exact = make_decoder("ad3-exact", time_limit=None).decode_labeled(parts, scores, problem)
    assert not exact.result.stats.search_gave_up
    assert exact.result.value == pytest.approx(value, abs=1e-6)
    assert _feasible(exact.result.heads, exact.labels, problem)
    relaxed = make_decoder("ad3", time_limit=None).decode_labeled(parts, scores, problem)
    assert _feasible(relaxed.result.heads, relaxed.labels, problem)
    assert relaxed.result.value <= value + 1e-6
    bound = relaxed.result.stats.upper_bound
    assert bound is None and relaxed.result.value == pytest.approx(value, abs=1e-6) \
        or bound >= value - 1e-6


def test_ad3_exact_search_branches_on_arcs_and_constraints_to_the_optimum():
    """ad3-exact's labeled search at order 2 splits a node whose AD3 relaxation is not
    tight on a fractional arc, and a node whose tree breaks a constraint on its witness,
    in one branch and bound: on random five-word instances (random scores leave many
    relaxations fractional) its tree is the brute-force optimum, and the arc splits
    happen."""
    from polyparse.decoders import make_decoder

    decoder = make_decoder("ad3-exact", time_limit=None)
    splits = 0
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        parts = build_parts(5, order="2")
        scores = 2.0 * rng.normal(size=len(parts))
        label_scores, problem = _problem(parts, rng, 2, **_constraints(5, 2, rng))
        value = _brute(parts, scores, label_scores, problem)[0]
        got = decoder.decode_labeled(parts, scores, problem)
        assert not got.result.stats.search_gave_up
        assert got.result.stats.upper_bound is None
        assert got.result.value == pytest.approx(value, abs=1e-6)
        assert _feasible(got.result.heads, got.labels, problem)
        splits += got.result.stats.arc_splits
    assert splits > 0


def test_parts_restrict_keeps_the_parts_of_kept_arcs():
    """Parts.restrict: a tree of the kept arcs has the same structure (part by part) in
    the restricted parts as in the whole set."""
    rng = np.random.default_rng(3)
    heads = np.array([-1, 2, 0, 2, 3, 1])      # 1 -> 5 is non-projective
    for order in ("2", "full"):
        parts = build_parts(5, order=order)
        keep = rng.random(parts.arcs.shape[0]) < 0.6
        keep |= parts.arcs[:, 0] == heads[parts.arcs[:, 1]]
        sub, rows = parts.restrict(keep)
        tree = parts.from_heads(heads)
        assert np.array_equal(sub.from_heads(heads), tree[rows])
        assert tree[rows].sum() == tree.sum()
        assert np.array_equal(sub.arcs, parts.arcs[keep])
        for part_type, block in sub.offsets.items():
            assert (sub.index[block, 0] == part_type).all()
    assert tree[parts.block(PartType.NONPROJ)].sum() == 1


def _reference_projectivity(heads, is_punct):
    """UD's validator's get_gap and get_caused_nonprojectivities, word by word as it
    writes them: the (rule, p) pairs broken."""
    n = heads.size - 1
    out = set()

    def ancestors(word):
        seen = []
        while word != 0:
            word = int(heads[word])
            seen.append(word)
        return seen

    for p in range(1, n + 1):
        if not is_punct[p]:
            continue
        pid = int(heads[p])
        if pid != 0 and any(pid not in ancestors(j) for j in range(min(p, pid) + 1, max(p, pid))):
            out.add(("punct-is-nonproj", p))
        ups = set(ancestors(p))
        left = range(pid + 1, p) if pid < p else range(1, p)
        right = range(p + 1, n + 1) if pid < p else range(p + 1, pid)
        for x in [*left, *right]:
            xp = int(heads[x])
            if xp in ups:
                continue
            if (x < p and xp > p and (pid < p or xp < pid)) or \
                    (x > p and xp < p and (pid > p or xp > pid)):
                out.add(("punct-causes-nonproj", p))
    return out


def test_projectivity_violations_against_the_validators_definitions():
    """The numba kernel finds exactly the (rule, word) pairs of the validator's
    definitions on every tree of up to 6 words, and each witness is in the tree."""
    rng = np.random.default_rng(5)
    for n in (3, 4, 5, 6):
        for heads in all_trees(n, False):
            heads = np.asarray(heads)
            mask = np.concatenate([[False], rng.random(n) < 0.5])
            found = projectivity_violations(heads, mask)
            assert {(rule, p) for rule, p, _ in found} == _reference_projectivity(heads, mask)
            for _, p, witness in found:
                assert all(heads[m] == h for h, m in witness)


def test_every_tree_holding_a_projectivity_witness_breaks_a_rule_at_its_word():
    """The cut of each witness is valid: on every tree of up to 5 words, every tree that
    holds p's arc and the witness arcs breaks punct-is-nonproj or punct-causes-nonproj at
    p; and some witnesses are the single crossing arc."""
    single = 0
    for n in (3, 4, 5):
        trees = np.array([np.asarray(h) for h in all_trees(n, False)])
        everyone = np.concatenate([[False], np.ones(n, dtype=bool)])
        # breaks[t, p]: tree t breaks a punctuation rule at p (the rules at p read only
        # the tree and whether p is punctuation)
        breaks = np.zeros((len(trees), n + 1), dtype=bool)
        for t, heads in enumerate(trees):
            for _, p in _reference_projectivity(heads, everyone):
                breaks[t, p] = True
        for heads in trees:
            for _, p, witness in projectivity_violations(heads, everyone):
                holds = trees[:, p] == heads[p]
                for h, m in witness:
                    holds &= trees[:, m] == h
                assert breaks[holds, p].all()
                single += len(witness) == 1
    assert single > 100


def test_search_out_of_nodes_dives_to_a_feasible_tree_with_a_bound():
    """Out of nodes, the search dives to a labeled tree that breaks nothing, with an
    upper bound on the optimum (a time-limit result)."""
    from polyparse.decoders.labeled_search import mst_relaxation, search_labeled

    dived = 0
    for seed in (4, 5, 6, 8, 20):       # 6 and 20 dive within 4 nodes
        parts, scores, problem, value = _first_order_instance(seed)
        if value == -np.inf:
            continue
        got = search_labeled(parts, scores, problem, mst_relaxation(parts, True), Budget(None),
                             max_nodes=4)
        if got is None:
            continue
        assert _feasible(got.result.heads, got.labels, problem)
        assert got.result.value <= value + 1e-9
        if got.result.stats.fallback:
            dived += 1
            assert got.result.stats.upper_bound >= value - 1e-9
    assert dived >= 2
