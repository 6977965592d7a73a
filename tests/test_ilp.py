"""The exact decoder: ILP optimum == brute force over all trees, for every part type."""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pulp
import pytest
from scipy.optimize import linprog

from brute_force import all_trees
from polyparse.decoders import DECODERS, PartType
from polyparse.decoders.formulation import build_formulation
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.ilp import ILPDecoder, solve_highs
from polyparse.decoders.trees import round_to_tree
from polyparse.decoders.pulp_backend import cbc_path, solve_pulp
from test_parts import CONFIGS, pruned_arcs, slow_from_heads

pytestmark = pytest.mark.ilp


@lru_cache(maxsize=None)
def structures(n, order, consecutive, single_root):
    """Parts and the ``(T, n_parts)`` structure vectors of every tree."""
    parts = build_parts(n, order=order, consecutive_siblings=consecutive)
    trees = all_trees(n, single_root)
    return parts, trees, np.stack([parts.from_heads(h) for h in trees])


def random_scores(parts, rng, higher_order_scale=1.0):
    """N(0, 1) on every part, arcs included; the higher-order parts' scores scaled.

    Random N(0, 1) scores on all-pairs siblings make very frustrated programs (HiGHS
    needs seconds at n = 6); a smaller scale keeps the larger brute-force checks fast.
    """
    scores = rng.normal(size=len(parts))
    scores[parts.block(PartType.ARC).stop:] *= higher_order_scale
    return scores


def assert_valid_tree(heads, n, single_root):
    assert heads[0] == -1 and heads.shape == (n + 1,)
    node = np.arange(n + 1)
    for _ in range(n):
        node = np.where(node > 0, heads[node], node)
    assert np.all(node[1:] == 0)
    if single_root:
        assert np.sum(heads[1:] == 0) == 1


# the default (multi-commodity LP first, branch and bound on the single-commodity ILP),
# the LP first on the single-commodity program, and branch and bound alone on each
DECODER_OPTIONS = [{}, {"flow": "single"}, {"lp_first": False, "branch_flow": "multi"},
                   {"lp_first": False, "branch_flow": "single"}]


@pytest.mark.parametrize("order,consecutive", CONFIGS)
@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("options", DECODER_OPTIONS)
def test_ilp_equals_brute_force(order, consecutive, single_root, options):
    rng = np.random.default_rng([CONFIGS.index((order, consecutive)), single_root,
                                 DECODER_OPTIONS.index(options)])
    decoder = ILPDecoder(single_root=single_root, time_limit=None, **options)
    # n = 6 without single root has 16807 trees: brute force at n = 6 for single root
    # only, for the default options only (the others are the same program solved another
    # way: one instance at n = 5), and not for full with consecutive siblings (seconds of
    # HiGHS; n = 5 has it)
    sizes = ((3, 2, 1.0), (5, 1 if options else 2, 1.0)) + (
        ((6, 1, 0.3),) if single_root and not options
        and (order, consecutive) != ("full", True) else ())
    for n, instances, scale in sizes:
        parts, trees, Z = structures(n, order, consecutive, single_root)
        for _ in range(instances):
            scores = random_scores(parts, rng, scale)
            values = Z @ scores
            result = decoder.decode(parts, scores)
            assert not result.stats.fallback
            assert result.value == pytest.approx(values.max(), abs=1e-6)
            # the returned tree is the argmax (unique with continuous random scores)
            np.testing.assert_array_equal(result.heads, trees[np.argmax(values)])
            np.testing.assert_array_equal(result.output, parts.from_heads(result.heads))


@pytest.mark.parametrize("flow, ancestry, consecutive, presolve",
                         [("multi", None, False, True), ("multi", None, True, True),
                          ("single", None, False, True), ("single", None, True, True),
                          ("single", None, False, False), ("multi", "tree", False, True),
                          ("multi", "product", False, True),
                          ("single", "product", True, True)])
def test_ilp_solution_indicators_match_definitions(flow, ancestry, consecutive, presolve):
    """On the solver's raw solution, with HiGHS's presolve or without, every part
    variable, the non-projective arcs and valency included, equals its definition on the
    tree the arcs form, and the ancestry variables are integral."""
    rng = np.random.default_rng(5)
    for n, single_root in ((6, True), (8, False)):
        arcs = pruned_arcs(n, rng, heads_per_word=4)
        parts = build_parts(n, arcs, order="full", consecutive_siblings=consecutive)
        scores = random_scores(parts, rng)
        # make non-projective arcs likely to be chosen
        scores[parts.block(PartType.NONPROJ)] += 1.0
        form = build_formulation(parts, scores, single_root=single_root, flow=flow,
                                 ancestry=ancestry)
        x, optimal, _ = solve_highs(form, presolve=presolve)
        assert optimal
        heads = round_to_tree(parts, x[:form.n_parts], single_root)
        assert_valid_tree(heads, n, single_root)
        np.testing.assert_allclose(x[:form.n_parts], slow_from_heads(parts, heads),
                                   atol=1e-6)
        # ancestry variables: p_hj = 1 iff h is a proper ancestor of j (and products)
        anc = form.blocks["ancestry"]
        assert anc.stop > anc.start
        assert np.all(np.minimum(x[anc], 1 - x[anc]) < 1e-6)


@pytest.mark.parametrize("flow, ancestry", [("multi", "tree"), ("multi", "product"),
                                            ("single", "product")])
def test_ancestry_variants_are_exact(flow, ancestry):
    """Every way of tying ancestry to the arcs gives the program whose optimum is the
    best tree (brute force, full order, n = 5; ``"flow"``, the default, is
    :func:`test_ilp_equals_brute_force`'s)."""
    rng = np.random.default_rng(["tree", "product"].index(ancestry))
    parts, trees, Z = structures(5, "full", False, True)
    for _ in range(2):
        scores = random_scores(parts, rng)
        scores[parts.block(PartType.NONPROJ)] += 1.0
        form = build_formulation(parts, scores, flow=flow, ancestry=ancestry)
        x, optimal, _ = solve_highs(form)
        assert optimal
        assert form.c @ x == pytest.approx((Z @ scores).max(), abs=1e-6)


def test_product_ancestry_is_at_least_as_tight_as_tree():
    """Each ``"tree"`` ancestry constraint is implied by the ``"product"`` ones (see
    :mod:`decoders.formulation`), so the product LP's value is never above the tree
    LP's; both are relaxations of the same program, so neither is below the best tree."""
    rng = np.random.default_rng(8)
    for n in (6, 7):
        for _ in range(2):
            parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=4), order="full")
            scores = random_scores(parts, rng)
            scores[parts.block(PartType.NONPROJ)] += 2.0
            value = {}
            for ancestry in ("tree", "product"):
                form = build_formulation(parts, scores, ancestry=ancestry)
                result = linprog(-form.c, form.A_ub, form.b_ub, form.A_eq, form.b_eq,
                                 np.stack([form.lower, form.upper], axis=1), method="highs")
                assert result.status == 0
                value[ancestry] = -result.fun
            x, optimal, _ = solve_highs(form)
            assert optimal
            assert form.c @ x - 1e-7 <= value["product"] <= value["tree"] + 1e-7


def test_grandparent_star_is_exact_and_tighter():
    """The grandparent star rows (:mod:`decoders.formulation`) keep the best tree the
    program's optimum (brute force, pruned and not) and never loosen the LP; on these
    instances they tighten it, as the pairwise rows alone admit two half heads of a
    word each paired with a whole child."""
    rng = np.random.default_rng(12)
    tighter = 0
    for pruned in (False, True):
        parts, trees, Z = structures(5, "full", False, True)
        if pruned:
            parts = build_parts(5, pruned_arcs(5, rng, heads_per_word=3), order="full")
            Z = np.stack([parts.from_heads(h) for h in trees
                          if all(h[m] in parts.arcs[parts.arcs[:, 1] == m, 0]
                                 for m in range(1, 6))])
        for _ in range(3):
            scores = random_scores(parts, rng)
            value = {}
            for grandparent in ("pairs", "star"):
                form = build_formulation(parts, scores, grandparent=grandparent)
                value[grandparent] = linprog(
                    -form.c, form.A_ub, form.b_ub, form.A_eq, form.b_eq,
                    np.stack([form.lower, form.upper], axis=1), method="highs").fun * -1
            x, optimal, _ = solve_highs(form)
            assert optimal
            assert form.c @ x == pytest.approx((Z @ scores).max(), abs=1e-6)
            assert form.c @ x - 1e-7 <= value["star"] <= value["pairs"] + 1e-7
            tighter += value["star"] < value["pairs"] - 1e-6
    assert tighter > 0


def test_ancestry_flow_needs_multi_commodity():
    parts = build_parts(4, order="full")
    with pytest.raises(ValueError, match="multi-commodity"):
        build_formulation(parts, flow="single", ancestry="flow")
    with pytest.raises(ValueError, match="ancestry must be"):
        build_formulation(parts, ancestry="paths")


def test_nonprojective_solutions_reached():
    """A score favouring one non-projective arc makes the ILP pick it (the non-projective
    constraints do not cut off non-projective trees)."""
    n = 4
    parts = build_parts(n, order="full")
    # arcs 0 -> 2, 2 -> 1, 1 -> 3, 2 -> 4: only (1, 3) is non-projective (2 is not below 1)
    target = np.array([-1, 2, 0, 1, 2])
    scores = 2.0 * parts.from_heads(target) - 1.0
    result = ILPDecoder(single_root=True, time_limit=None).decode(parts, scores)
    np.testing.assert_array_equal(result.heads, target)
    block = parts.block(PartType.NONPROJ)
    assert result.output[block].sum() == 1  # arc (1, 3) skips word 2


@pytest.mark.parametrize("order,consecutive", [("2", False), ("full", True)])
def test_cost_augmented_ilp_is_exact(order, consecutive):
    rng = np.random.default_rng(6)
    n, single_root = 5, True
    parts, trees, Z = structures(n, order, consecutive, single_root)
    decoder = DECODERS["ilp"](single_root=single_root, time_limit=None)
    for _ in range(3):
        scores = random_scores(parts, rng)
        gold = Z[rng.integers(len(Z))]
        arcs = parts.block(PartType.ARC)
        cost = np.abs(Z[:, arcs] - gold[arcs]).sum(axis=1)
        slack = Z @ scores - gold @ scores + cost
        result = decoder.decode_cost_augmented(parts, scores, gold)
        assert result.loss == pytest.approx(slack.max(), abs=1e-6)
        assert result.cost == pytest.approx(cost[np.argmax(slack)])


@pytest.mark.parametrize("order,consecutive", [("2", False), ("full", True), ("full", False)])
def test_pulp_cbc_equals_highs(order, consecutive):
    rng = np.random.default_rng(7)
    n = 5
    parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=3), order=order,
                        consecutive_siblings=consecutive)
    scores = random_scores(parts, rng)
    highs = ILPDecoder(single_root=True, lp_first=False, time_limit=None).decode(parts, scores)
    cbc = ILPDecoder(single_root=True, solver="CBC", lp_first=False,
                     time_limit=None).decode(parts, scores)
    assert not cbc.stats.fallback and cbc.stats.ilp_nodes is None
    assert cbc.value == pytest.approx(highs.value, abs=1e-6)
    np.testing.assert_array_equal(cbc.heads, highs.heads)
    # and the LP relaxations agree too
    form = build_formulation(parts, scores, single_root=True)
    relaxed = solve_pulp(form, "CBC", relax=True)
    lp = DECODERS["lp"](single_root=True).decode(parts, scores)
    assert relaxed.optimal
    assert form.c @ relaxed.x == pytest.approx(lp.value, abs=1e-6)


def test_cbc_runs_from_the_path_or_from_pulp_without_deprecation(tmp_path, monkeypatch):
    """CBC through COIN_CMD: a ``cbc`` on the PATH first (as ``pulp[cbc]`` installs
    one), else the binary PuLP 3 ships; never the deprecated PULP_CBC_CMD."""
    rng = np.random.default_rng(8)
    parts = build_parts(4, pruned_arcs(4, rng, heads_per_word=3), order="2")
    scores = random_scores(parts, rng)
    form = build_formulation(parts, scores, single_root=True)
    highs = ILPDecoder(single_root=True, lp_first=False, time_limit=None).decode(parts, scores)
    bundled = pulp.PULP_CBC_CMD.pulp_cbc_path
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cbc_path() == bundled
    wrapper = tmp_path / "cbc"             # a "system" CBC that leaves a trace when run
    wrapper.write_text(f'#!/bin/sh\necho ran > "{tmp_path}/ran"\nexec "{bundled}" "$@"\n')
    wrapper.chmod(0o755)
    assert cbc_path() == str(wrapper)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        solution = solve_pulp(form, "CBC")
    assert (tmp_path / "ran").exists()
    assert solution.optimal and form.c @ solution.x == pytest.approx(highs.value, abs=1e-6)


def test_integral_lp_skips_branch_and_bound():
    """Arc-factored LPs are integral (test_lp), so the LP first settles them: same tree
    as branch and bound, without branching."""
    rng = np.random.default_rng(9)
    n = 8
    parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=4), order="1")
    scores = random_scores(parts, rng)
    first = ILPDecoder(single_root=True, time_limit=None).decode(parts, scores)
    branched = ILPDecoder(single_root=True, lp_first=False, time_limit=None).decode(parts, scores)
    assert not first.stats.branched and first.stats.ilp_nodes == 0
    assert branched.stats.branched
    np.testing.assert_array_equal(first.heads, branched.heads)
    assert first.value == pytest.approx(branched.value, abs=1e-6)


@pytest.mark.parametrize("lp_first", [True, False])
def test_time_limit_falls_back_to_a_tree(lp_first):
    """The limit bounds every stage (here the LP first or the build runs out): the
    result is a valid, re-scored tree, and the fallback is said, with its stage."""
    rng = np.random.default_rng(8)
    n = 14
    parts = build_parts(n, order="full")
    scores = random_scores(parts, rng)
    result = ILPDecoder(single_root=True, time_limit=0.05, lp_first=lp_first).decode(
        parts, scores)
    assert result.stats.fallback
    assert result.stats.fallback_stage in ("build", "lp", "ilp")
    assert_valid_tree(result.heads, n, True)
    np.testing.assert_array_equal(result.output, parts.from_heads(result.heads))
    assert result.value == pytest.approx(scores @ result.output)
    if result.stats.fallback_stage == "ilp":
        assert result.value >= result.stats.rounded_value - 1e-9


def test_no_tree_in_candidate_arcs_raises():
    parts = build_parts(3, np.array([[0, 1], [2, 3], [3, 2]]), order="2")
    with pytest.raises(ValueError):
        ILPDecoder(single_root=False).decode(parts, np.zeros(len(parts)))


def test_bad_flow_rejected():
    with pytest.raises(ValueError):
        ILPDecoder(flow="triple")
    with pytest.raises(ValueError):
        ILPDecoder(branch_flow="triple")
