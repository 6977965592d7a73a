"""AD3 on the full-order factor graph (:mod:`decoders.full_graph`) solves the LP of the
multi-commodity program with ``ancestry="tree"`` and ``grandparent="star"`` (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest

from polyparse.decoders import PartType
from polyparse.decoders.formulation import build_formulation
from polyparse.decoders.full_graph import FullGraph
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.lp import solve_lp
from test_parts import pruned_arcs


@pytest.mark.parametrize("n", [4, 5, 6, 8])
def test_ad3_full_value_equals_highs_lp(n):
    """The least dual value is an upper bound on the LP optimum at any iteration, and
    equals it (1e-6 relative) where the residuals converged."""
    rng = np.random.default_rng(n)
    for _ in range(2):
        parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=3), order="full")
        scores = rng.normal(size=len(parts))
        scores[parts.block(PartType.NONPROJ)] += 1.0
        g = FullGraph.from_parts(parts, scores)
        relaxed = g.ad3(tol=1e-8, max_iter=20000)
        assert relaxed.status == 0
        _, lp = solve_lp(build_formulation(parts, scores, ancestry="tree", grandparent="star"))
        assert relaxed.dual >= lp - 1e-7 * max(1.0, abs(lp))
        if relaxed.converged:
            assert relaxed.dual == pytest.approx(lp, rel=1e-6, abs=1e-6)
        # the tree's score is the model's, and no tree beats the bound
        assert relaxed.tree_score == pytest.approx(parts.from_heads(relaxed.heads) @ scores)
        assert relaxed.tree_score <= relaxed.dual + 1e-7



@pytest.mark.parametrize("n", [5, 7])
def test_warm_start_keeps_the_bound_and_the_optimum(n):
    """AD3 started where it stopped on another graph of the sentence (a branch-and-bound
    child with an arc removed; a lazy round with every head made active) bounds that
    graph's LP from above from its first iteration on (the carried multipliers are
    centred), and converges to it; a state carried onto its own graph is unchanged."""
    from polyparse.decoders.lazy_parts import optimistic

    rng = np.random.default_rng(10 + n)
    for _ in range(3):
        parts = build_parts(n, pruned_arcs(n, rng, heads_per_word=3), order="full")
        scores = rng.normal(size=len(parts))
        scores[parts.block(PartType.NONPROJ)] += 1.0
        # a lazy round: the optimistic program, then every head active
        lazy = optimistic(parts, scores, np.zeros(n + 1, dtype=bool))
        first = FullGraph.from_parts(lazy.parts, lazy.scores).ad3(max_iter=40)
        state = first.state
        same = state.onto(FullGraph.from_parts(lazy.parts, lazy.scores))
        for mine, carried in zip(state, same):
            np.testing.assert_array_equal(mine, carried)
        whole = FullGraph.from_parts(parts, scores)
        assert np.count_nonzero(state.onto(whole).lam_link) > 0
        # a child: an arc off the tree the relaxation leans to removed
        arcs = parts.arcs
        free = np.flatnonzero(np.bincount(arcs[:, 1])[arcs[:, 1]] > 1)
        keep = np.ones(arcs.shape[0], dtype=bool)
        keep[free[np.argmin(first.p[free])]] = False
        sub, rows = parts.restrict(keep)
        child = FullGraph.from_parts(sub, scores[rows])
        for graph, program in ((whole, (parts, scores)), (child, (sub, scores[rows]))):
            _, lp = solve_lp(build_formulation(*program, ancestry="tree", grandparent="star"))
            for max_iter in (1, 3, 20000):
                relaxed = graph.ad3(tol=1e-8, max_iter=max_iter, start=state)
                assert relaxed.dual >= lp - 1e-7 * max(1.0, abs(lp))
            if relaxed.converged:
                assert relaxed.dual == pytest.approx(lp, rel=1e-6, abs=1e-6)
