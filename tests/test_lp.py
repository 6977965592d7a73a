"""The relaxed decoder: LP relaxation bounds, integrality for arc-factored scores, rounding."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

from polyparse.decoders import DECODERS, PartType
from polyparse.decoders.formulation import build_formulation
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.ilp import ILPDecoder
from polyparse.decoders.lp import LPDecoder, solve_lp
from polyparse.decoders.trees import chu_liu_edmonds
from test_ilp import assert_valid_tree, random_scores
from test_parts import CONFIGS, pruned_arcs


@pytest.mark.parametrize("single_root", [True, False])
def test_arc_factored_multicommodity_lp_is_integral(single_root):
    """Magnanti and Wolsey (1994): the multi-commodity flow relaxation is tight for
    arc-factored scores, so the LP optimum is the maximum spanning arborescence."""
    rng = np.random.default_rng(int(single_root))
    decoder = LPDecoder(single_root=single_root)
    for _ in range(200):
        n = int(rng.integers(3, 9))
        parts = build_parts(n)
        scores = rng.normal(size=len(parts))
        result = decoder.decode(parts, scores)
        assert result.stats.integral and result.stats.fractional_arcs == 0
        best = chu_liu_edmonds(parts.arc_matrix(scores), single_root)
        np.testing.assert_array_equal(result.heads, best)
        np.testing.assert_allclose(result.output, parts.from_heads(best), atol=1e-6)
        assert result.value == pytest.approx(result.stats.rounded_value, abs=1e-6)


@pytest.mark.ilp
@pytest.mark.parametrize("order,consecutive", CONFIGS[1:])
@pytest.mark.parametrize("flow", ["multi", "single"])
def test_lp_bounds_ilp_bounds_rounded(order, consecutive, flow):
    """LP value >= ILP value >= value of the rounded tree; without non-projective arcs
    the single-commodity LP relaxes the multi-commodity one, so its value is >=. (With
    them the two define ancestry differently and neither LP contains the other.)"""
    rng = np.random.default_rng([CONFIGS.index((order, consecutive)), flow == "single"])
    for n, pruned in ((5, False), (8, True)):
        for single_root in (True, False):
            arcs = pruned_arcs(n, rng, heads_per_word=3) if pruned else None
            parts = build_parts(n, arcs, order=order, consecutive_siblings=consecutive)
            scores = random_scores(parts, rng, higher_order_scale=0.5)
            lp = LPDecoder(single_root=single_root, flow=flow).decode(parts, scores)
            ilp = ILPDecoder(single_root=single_root, flow=flow).decode(parts, scores)
            assert lp.value >= ilp.value - 1e-6
            assert ilp.value >= lp.stats.rounded_value - 1e-6
            assert lp.stats.lp_value == lp.value
            assert_valid_tree(lp.heads, n, single_root)
            assert lp.stats.rounded_value == pytest.approx(
                scores @ parts.from_heads(lp.heads))
            assert np.all((lp.output >= 0) & (lp.output <= 1))
            if lp.stats.integral:
                assert lp.value == pytest.approx(ilp.value, abs=1e-6)
            if flow == "single" and order != "full":
                multi = LPDecoder(single_root=single_root).decode(parts, scores)
                assert lp.value >= multi.value - 1e-6
            # the grandparent star rows: between the ILP and the pairwise LP
            star = LPDecoder(single_root=single_root, flow=flow,
                             grandparent="star").decode(parts, scores)
            assert ilp.value - 1e-6 <= star.value <= lp.value + 1e-6


def test_fractional_solutions_are_reported_and_rounded():
    """Second-order random scores give fractional LP optima; the stats say so."""
    rng = np.random.default_rng(3)
    parts = build_parts(7, order="2")
    seen_fractional = False
    for _ in range(5):
        scores = random_scores(parts, rng)
        result = LPDecoder().decode(parts, scores)
        arcs = result.output[parts.block(PartType.ARC)]
        count = int(np.sum(np.minimum(arcs, 1 - arcs) > 1e-6))
        assert result.stats.fractional_arcs == count
        assert result.stats.integral == (count == 0)
        seen_fractional |= count > 0
        assert_valid_tree(result.heads, 7, True)
        measured = {name for name, value in asdict(result.stats).items() if value is not None}
        assert measured >= {"time_build", "time_lp", "time_round", "integral",
                            "fractional_arcs", "rounded_value", "lp_value"}
    assert seen_fractional


def test_lp_is_deterministic():
    rng = np.random.default_rng(4)
    parts = build_parts(8, order="full")
    scores = random_scores(parts, rng)
    first, second = (LPDecoder().decode(parts, scores) for _ in range(2))
    np.testing.assert_array_equal(first.output, second.output)
    np.testing.assert_array_equal(first.heads, second.heads)


def test_lp_methods_agree():
    rng = np.random.default_rng(5)
    parts = build_parts(7, order="full", consecutive_siblings=True)
    form = build_formulation(parts, random_scores(parts, rng))
    values = [solve_lp(form, method)[1] for method in ("highs-ipm", "highs-ds")]
    assert values[0] == pytest.approx(values[1], abs=1e-6)


@pytest.mark.ilp
def test_relaxed_loss_augmented_inference():
    """Relaxed LAI: no rounding enters the loss; the slack is >= 0 and >= the exact one."""
    rng = np.random.default_rng(6)
    n = 6
    parts = build_parts(n, order="2")
    scores = random_scores(parts, rng)
    gold = parts.from_heads(chu_liu_edmonds(parts.arc_matrix(rng.normal(size=len(parts))),
                                            True))
    relaxed = DECODERS["lp"]().decode_cost_augmented(parts, scores, gold)
    exact = DECODERS["ilp"]().decode_cost_augmented(parts, scores, gold)
    assert relaxed.loss >= exact.loss - 1e-6 >= -1e-6
    assert relaxed.loss == pytest.approx(relaxed.value - scores @ gold + gold[
        parts.block(PartType.ARC)].sum())


def test_infeasible_lp_raises():
    parts = build_parts(3, np.array([[0, 1], [2, 3], [3, 2]]))
    with pytest.raises(ValueError):
        LPDecoder(single_root=False).decode(parts, np.zeros(len(parts)))
