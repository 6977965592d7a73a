"""Branch and bound on AD3's bounds (``decoders.ad3_exact``): the optimum of brute force
over all trees on fractional instances, the ILP's optimum on larger ones, exactness
whatever AD3's iteration budget, the restricted factor graph, and the time limit.

The searches that must close run without a time limit: with a cold numba cache the
root's AD3 call compiles its kernel (20-30 s on a loaded machine), which would spend a
10-s limit before the first branch."""

from __future__ import annotations

import numpy as np
import pytest

from polyparse.decoders import DECODERS, PartType, make_decoder
from polyparse.decoders.ad3 import AD3Decoder
from polyparse.decoders.ad3_exact import AD3ExactDecoder
from polyparse.decoders.branching import fixed_children
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.ilp import ILPDecoder

from brute_force import all_trees
from test_ilp import assert_valid_tree
from test_message_passing import instance
from test_parts import pruned_arcs


def brute_force(graph, n, single_root):
    """Every tree made of the graph's arcs and its factor-graph score."""
    trees = all_trees(n, single_root)
    arcs = graph.arc_state(trees)
    inside = arcs.sum(axis=1) == n          # all its arcs are candidates
    return trees[inside], graph.score(arcs[inside])


def assert_optimal(result, parts, scores, trees, values, where):
    best = int(np.argmax(values))
    assert result.value == pytest.approx(values[best], abs=1e-7), where
    # continuous random scores: the argmax is unique
    np.testing.assert_array_equal(result.heads, trees[best], err_msg=where)
    np.testing.assert_array_equal(result.output, parts.from_heads(result.heads))
    assert result.stats.certified and not result.stats.fallback, where
    assert result.stats.dual_value >= result.value - 1e-9, where
    assert result.stats.dual_value <= result.value + 1e-6 * max(1.0, abs(result.value))


@pytest.mark.parametrize("pruned", [False, True])
@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("node_order", ["depth", "best"])
def test_order_2_equals_brute_force_where_the_lp_is_fractional(pruned, single_root,
                                                               node_order):
    """N(0, 1) scores on every part (frustrated all-pairs siblings) make fractional LPs
    at n = 4 to 6: the root's AD3 does not settle them, the search does."""
    branched = 0
    for n in (4, 5, 6):
        for seed in range(3):
            _, parts, scores, graph, _ = instance(1000 * seed + n, n, pruned, single_root)
            trees, values = brute_force(graph, n, single_root)
            result = AD3ExactDecoder(single_root=single_root, node_order=node_order,
                                     time_limit=None).decode(parts, scores)
            assert_optimal(result, parts, scores, trees, values,
                           f"n={n} seed={seed} {result.stats}")
            root = AD3Decoder(single_root=single_root, time_limit=None).decode(parts, scores)
            if not root.stats.certified:
                assert result.stats.nodes > 0
                branched += 1
    # measured: 3 to 6 of the 9 instances per case need branching
    assert branched >= 3


@pytest.mark.parametrize("single_root", [False, True])
def test_exact_whatever_ad3s_iteration_budget(single_root):
    """With AD3 cut to a few iterations the bounds are loose and the search goes deeper
    than the LP would need; the result is still the optimum. (Not on order 1: there the
    TREE factor is alone, its prices stay 0, and the first dual value is the MST's.)"""
    branched = 0
    for n, pruned in ((4, False), (5, True), (6, True)):
        _, parts, scores, graph, _ = instance(50 + n, n, pruned, single_root)
        trees, values = brute_force(graph, n, single_root)
        result = AD3ExactDecoder(single_root=single_root, max_iter=3,
                                 time_limit=None).decode(parts, scores)
        assert_optimal(result, parts, scores, trees, values, f"n={n} {result.stats}")
        branched += result.stats.nodes > 0
    assert branched == 3


@pytest.mark.parametrize("single_root", [False, True])
def test_order_1_settles_at_the_root(single_root):
    for n in (3, 5, 6):
        _, parts, scores, graph, _ = instance(300 + n, n, True, single_root, order="1")
        trees, values = brute_force(graph, n, single_root)
        result = AD3ExactDecoder(single_root=single_root, time_limit=None).decode(parts, scores)
        assert_optimal(result, parts, scores, trees, values, f"n={n}")
        assert result.stats.nodes == 0


def random_order_2(rng, n, heads_per_word, higher_order_scale):
    parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=heads_per_word), order="2")
    scores = rng.normal(size=len(parts))
    scores[parts.block(PartType.ARC).stop:] *= higher_order_scale
    return parts, scores


def test_agrees_with_the_ilp_on_larger_order_2_instances():
    rng = np.random.default_rng(13)
    branched = 0
    for i in range(8):
        n = int(rng.integers(10, 16))
        single_root = bool(i % 2)
        parts, scores = random_order_2(rng, n, 3, 0.5)
        exact = AD3ExactDecoder(single_root=single_root, time_limit=None).decode(parts, scores)
        ilp = ILPDecoder(single_root=single_root, time_limit=None).decode(parts, scores)
        assert exact.value == pytest.approx(ilp.value, rel=1e-6, abs=1e-6)
        assert exact.stats.certified
        assert_valid_tree(exact.heads, n, single_root)
        branched += exact.stats.nodes > 0
    assert branched >= 3        # measured: 5 of 8


def test_fixing_an_arc_restricts_the_trees():
    """The children of a split hold exactly the parent's trees without, and with, the
    arc (the single-root case drops the other root arcs with a root arc)."""
    for single_root in (False, True):
        _, parts, scores, graph, _ = instance(7, 4, False, single_root)
        trees = all_trees(4, single_root)
        keep = np.ones(graph.n_arcs, dtype=bool)
        for a in range(graph.n_arcs):
            without, with_a = fixed_children(graph, keep, a)
            has_a = trees[:, graph.arc_m[a]] == graph.arc_h[a]
            for child, expected in ((without, ~has_a), (with_a, has_a)):
                sub = graph.restrict(child)
                inside = sub.arc_state(trees).sum(axis=1) == 4
                np.testing.assert_array_equal(inside, expected)
                # the restricted graph scores its trees as the whole graph does
                np.testing.assert_allclose(sub.score(sub.arc_state(trees[inside])),
                                           graph.score(graph.arc_state(trees[inside])))


def test_time_limit_falls_back_to_the_incumbent():
    """An instance that needs branching; with a tiny limit the search stops after the
    root: the rounded root tree, counted as a fallback, with a valid upper bound."""
    rng = np.random.default_rng(2)
    parts, scores = random_order_2(rng, 12, 4, 1.0)
    full = AD3ExactDecoder().decode(parts, scores)
    assert full.stats.nodes > 0 and full.stats.certified
    result = AD3ExactDecoder(time_limit=1e-9).decode(parts, scores)
    stats = result.stats
    assert stats.fallback and stats.fallback_stage == "lp"
    assert not stats.certified and stats.nodes == 0
    assert_valid_tree(result.heads, 12, True)
    np.testing.assert_array_equal(result.output, parts.from_heads(result.heads))
    assert result.value == pytest.approx(scores @ result.output)
    assert result.value == pytest.approx(stats.rounded_value)
    assert result.value <= full.value + 1e-9
    assert stats.dual_value >= full.value - 1e-9


def test_options():
    assert {"node_order", "time_limit", "tol", "max_iter"} <= set(
        DECODERS["ad3-exact"].settable())
    decoder = make_decoder("ad3-exact", False, node_order="best", time_limit=2.0)
    assert decoder.node_order == "best" and decoder.time_limit == 2.0
    with pytest.raises(ValueError, match="node_order"):
        AD3ExactDecoder(node_order="breadth")
    with pytest.raises(ValueError, match="time_limit"):
        AD3ExactDecoder(time_limit=0.0)
    with pytest.raises(ValueError):        # the candidate arcs hold no tree
        parts = build_parts(3, np.array([[0, 1], [2, 3], [3, 2]]), order="2")
        AD3ExactDecoder(single_root=False).decode(parts, np.zeros(len(parts)))


@pytest.mark.parametrize("pruned", [False, True])
@pytest.mark.parametrize("single_root", [False, True])
def test_full_order_equals_brute_force(pruned, single_root):
    """Full order (valency and non-projective-arc parts too), N(0, 1) scores on every
    part: the search, its nodes relaxed with non-projective parts added lazily, finds
    the brute-force optimum; some instances need branching, some a second round."""
    rng = np.random.default_rng(17)
    branched = rounds = 0
    for n in (4, 5, 6) if pruned else (4, 5):
        trees = all_trees(n, single_root)
        structures = None
        for _ in range(2):
            arcs = pruned_arcs(n, rng, heads_per_word=3) if pruned else None
            parts = build_parts(n, arcs, order="full")
            scores = rng.normal(size=len(parts))
            if pruned or structures is None:
                candidate = parts.arc_matrix(np.zeros(len(parts))) == 0
                mine = candidate[trees[:, 1:], np.arange(1, n + 1)].all(axis=1)
                structures = np.stack([parts.from_heads(h) for h in trees[mine]])
            result = AD3ExactDecoder(single_root=single_root,
                                     time_limit=None).decode(parts, scores)
            assert_optimal(result, parts, scores, trees[mine], structures @ scores,
                           f"n={n} {result.stats}")
            branched += result.stats.nodes > 0
            rounds += result.stats.rounds > result.stats.nodes + 1
    assert branched >= 2 and rounds >= 1


def test_agrees_with_the_ilp_at_full_order():
    rng = np.random.default_rng(19)
    for i in range(3):
        n = int(rng.integers(8, 11))
        parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=3), order="full")
        scores = rng.normal(size=len(parts))
        scores[parts.block(PartType.ARC).stop:] *= 0.5
        exact = AD3ExactDecoder(single_root=True, time_limit=None).decode(parts, scores)
        ilp = ILPDecoder(single_root=True, time_limit=None).decode(parts, scores)
        assert exact.value == pytest.approx(ilp.value, rel=1e-6, abs=1e-6)
        assert exact.stats.certified
