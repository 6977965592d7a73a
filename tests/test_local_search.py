"""Local search after rounding: tree scores from the tables, local optimality, and that
it only ever improves the LP decoder's rounded tree."""

from __future__ import annotations

import numpy as np
import pytest

from brute_force import all_trees
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.lp import LPDecoder
from polyparse.decoders.local_search import local_search, score_tables, tree_score
from test_ilp import assert_valid_tree, random_scores
from test_parts import CONFIGS, pruned_arcs


def candidate_trees(parts, single_root):
    """Every tree of ``parts.n`` words that uses only candidate arcs."""
    trees = all_trees(parts.n, single_root)
    cand = np.isfinite(parts.arc_matrix(np.zeros(len(parts))))
    words = np.arange(1, parts.n + 1)
    return trees[np.all(cand[trees[:, 1:], words], axis=1)]


@pytest.mark.parametrize("order,consecutive", CONFIGS)
@pytest.mark.parametrize("pruned", [False, True])
def test_tree_score_is_the_score_of_the_trees_parts(order, consecutive, pruned):
    """On every (candidate) tree of up to 5 words the tables give ``scores @ z``."""
    rng = np.random.default_rng([CONFIGS.index((order, consecutive)), pruned])
    for n in range(1, 6):
        arcs = pruned_arcs(n, rng, heads_per_word=2) if pruned else None
        parts = build_parts(n, arcs, order=order, consecutive_siblings=consecutive,
                            max_valency=int(rng.integers(1, 4)))
        scores = rng.normal(size=len(parts))
        tables = score_tables(parts, scores)
        for heads in candidate_trees(parts, single_root=False):
            assert tree_score(tables, heads) == pytest.approx(
                scores @ parts.from_heads(heads), abs=1e-9)


def single_head_changes(parts, heads, single_root):
    """Every tree one candidate head change away from ``heads``."""
    for h, m in parts.arcs:
        if heads[m] == h or (single_root and (h == 0) != (heads[m] == 0)):
            continue
        other = heads.copy()
        other[m] = h
        node, steps = h, 0
        while node > 0 and node != m and steps <= parts.n:
            node, steps = other[node], steps + 1
        if node == 0:
            yield other


@pytest.mark.parametrize("order,consecutive", CONFIGS)
@pytest.mark.parametrize("single_root", [True, False])
def test_local_search_reaches_a_local_optimum(order, consecutive, single_root):
    """From a random tree the search returns a valid tree, scoring no less, on which no
    single head change (checked through ``from_heads``) scores higher."""
    rng = np.random.default_rng([CONFIGS.index((order, consecutive)), single_root])
    for n in (4, 7, 10):
        parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=4), order=order,
                            consecutive_siblings=consecutive)
        scores = random_scores(parts, rng)
        trees = candidate_trees(parts, single_root) if n <= 7 else None
        start = (trees[rng.integers(len(trees))] if trees is not None
                 else LPDecoder(single_root=single_root, search=False).decode(parts, scores).heads)
        heads, value, moves = local_search(parts, scores, start, single_root=single_root)
        assert_valid_tree(heads, n, single_root)
        assert value == pytest.approx(scores @ parts.from_heads(heads), abs=1e-9)
        assert value >= scores @ parts.from_heads(start) - 1e-9
        assert (moves == 0) == np.array_equal(heads, start)
        for other in single_head_changes(parts, heads, single_root):
            assert scores @ parts.from_heads(other) <= value + 1e-9
        if trees is not None:
            assert value <= max(scores @ parts.from_heads(t) for t in trees) + 1e-9


def test_search_improves_the_rounded_tree_of_fractional_solutions():
    """With the search the LP decoder's tree scores at least as much as MST rounding
    alone on every instance, and more on some; integral solutions are not searched."""
    rng = np.random.default_rng(11)
    improved = 0
    for _ in range(40):
        n = int(rng.integers(6, 10))
        parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=4), order="full")
        scores = random_scores(parts, rng)
        plain = LPDecoder(search=False).decode(parts, scores)
        searched = LPDecoder().decode(parts, scores)
        np.testing.assert_array_equal(plain.output, searched.output)
        assert searched.stats.rounded_value >= plain.stats.rounded_value - 1e-9
        assert searched.stats.rounded_value == pytest.approx(
            scores @ parts.from_heads(searched.heads))
        assert searched.value >= searched.stats.rounded_value - 1e-6
        if plain.stats.integral:
            assert searched.stats.search_moves == 0
            np.testing.assert_array_equal(plain.heads, searched.heads)
        improved += searched.stats.rounded_value > plain.stats.rounded_value + 1e-9
    assert improved > 0
