"""The optimistic program of :mod:`decoders.lazy_parts` bounds the full one from above,
tree by tree and LP by LP, and is exact on the trees that break none of its left-out
parts (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest

from brute_force import all_trees
from polyparse.decoders import PartType, make_decoder
from polyparse.decoders.formulation import build_formulation
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.lazy_parts import optimistic
from polyparse.decoders.lp import solve_lp
from test_parts import pruned_arcs

N = 5


def _instance(rng, pruned):
    arcs = pruned_arcs(N, rng, heads_per_word=3) if pruned else None
    parts = build_parts(N, arcs, order="full")
    scores = rng.normal(size=len(parts))
    return parts, scores


@pytest.mark.parametrize("pruned", [False, True])
def test_optimistic_score_bounds_every_tree(pruned):
    """Under any set of active heads, every tree's optimistic score is at least its
    score, with equality exactly when it breaks no left-out part, which includes
    trees with a non-projective arc scored below 0 over its head's head."""
    rng = np.random.default_rng(3)
    trees = all_trees(N, True)
    crossing = 0
    for _ in range(4):
        parts, scores = _instance(rng, pruned)
        arc_set = {tuple(a) for a in parts.arcs}
        trees_here = [h for h in trees if all((h[m], m) in arc_set for m in range(1, N + 1))]
        active = rng.random(N + 1) < 0.4
        program = optimistic(parts, scores, active)
        exact = broken = 0
        for heads in trees_here:
            true = parts.from_heads(heads) @ scores
            bound = program.parts.from_heads(heads) @ program.scores
            if program.broken(parts, scores, parts.from_heads(heads)).any():
                assert bound > true + 1e-12
                broken += 1
            else:
                assert bound == pytest.approx(true, abs=1e-12)
                tree = parts.from_heads(heads)
                block = parts.block(PartType.NONPROJ)
                left_out = ~active[parts.index[block, 1]]
                crossing += bool((left_out & (scores[block] < 0) & (tree[block] > 0)).any())
                np.testing.assert_array_equal(
                    program.lift(parts, program.parts.from_heads(heads)),
                    parts.from_heads(heads))
                exact += 1
        assert exact > 0 and broken > 0
    # trees whose arc crosses its head's head: exact although non-projective
    assert crossing > 0


def test_optimistic_lp_bounds_every_tree():
    """The optimistic program's LP (tree ancestry) is at least the best tree's score
    under every set of active heads, and with every head active it is the full
    program's LP. (It may lie below the full LP's with fewer heads active: the
    grandparent bound is tighter there than the tree recursion of ancestry.)"""
    rng = np.random.default_rng(5)
    trees = all_trees(N, True)
    for _ in range(3):
        parts, scores = _instance(rng, pruned=True)
        scores[parts.block(PartType.NONPROJ)] *= 3.0
        arc_set = {tuple(a) for a in parts.arcs}
        best = max(parts.from_heads(h) @ scores for h in trees
                   if all((h[m], m) in arc_set for m in range(1, N + 1)))
        _, tree = solve_lp(build_formulation(parts, scores, ancestry="tree"))
        for active in (np.zeros(N + 1, bool), rng.random(N + 1) < 0.5, np.ones(N + 1, bool)):
            program = optimistic(parts, scores, active)
            _, value = solve_lp(build_formulation(program.parts, program.scores,
                                                  ancestry="tree"))
            assert value >= best - 1e-7
        assert value == pytest.approx(tree, abs=1e-7)


def test_ad3_full_certifies_only_the_optimum():
    """The ``ad3`` decoder with lazy rounds (``rounds=None``; its default is one round),
    non-projective parts added as trees break them: its dual value bounds
    every tree, and a certified tree is the brute-force optimum, with non-projective
    parts scored both ways (the certificate is met in some instances and not others)."""
    rng = np.random.default_rng(7)
    parts = build_parts(N, order="full")
    Z = np.stack([parts.from_heads(h) for h in all_trees(N, True)])
    decoder = make_decoder("ad3", True, tol=1e-8, max_iter=20000, rounds=None)
    certified = rounds = 0
    for trial in range(8):
        scores = rng.normal(size=len(parts)) * 0.3
        scores[parts.block(PartType.ARC)] = rng.normal(size=parts.arcs.shape[0]) * 2.0
        scores[parts.block(PartType.NONPROJ)] = rng.normal(
            size=scores[parts.block(PartType.NONPROJ)].size)
        result = decoder.decode(parts, scores)
        values = Z @ scores
        stats = result.stats
        assert stats.dual_value >= values.max() - 1e-7
        assert stats.rounded_value == pytest.approx(parts.from_heads(result.heads) @ scores)
        rounds += stats.rounds > 1
        if stats.certified:
            certified += 1
            assert stats.rounded_value == pytest.approx(values.max(), abs=1e-6)
    assert certified > 0 and rounds > 0


def test_one_round_bounds_every_tree_without_ancestry():
    """``rounds=1``: AD3 on the optimistic program alone, no head made active; its dual
    value still bounds every tree, a certified tree is the brute-force optimum, and
    where the lazy decoder needed more rounds the one-round bound is at least its.
    Branch and bound with one round per node still finds the optimum."""
    rng = np.random.default_rng(9)
    parts = build_parts(N, order="full")
    Z = np.stack([parts.from_heads(h) for h in all_trees(N, True)])
    one, lazy = (make_decoder("ad3", True, tol=1e-8, max_iter=20000, rounds=r)
                 for r in (1, None))
    exact = make_decoder("ad3-exact", True, rounds=1, time_limit=None)
    certified = looser = 0
    for _ in range(8):
        scores = rng.normal(size=len(parts)) * 0.3
        scores[parts.block(PartType.ARC)] = rng.normal(size=parts.arcs.shape[0]) * 2.0
        scores[parts.block(PartType.NONPROJ)] = -np.abs(rng.normal(
            size=scores[parts.block(PartType.NONPROJ)].size)) * 2.0
        result, full = one.decode(parts, scores), lazy.decode(parts, scores)
        stats, best = result.stats, (Z @ scores).max()
        assert stats.rounds == 1 and stats.active_heads == 0
        assert stats.dual_value >= best - 1e-7
        assert stats.rounded_value == pytest.approx(parts.from_heads(result.heads) @ scores)
        if stats.certified:
            certified += 1
            assert stats.rounded_value == pytest.approx(best, abs=1e-6)
        assert exact.decode(parts, scores).value == pytest.approx(best, abs=1e-6)
        if full.stats.rounds > 1:
            looser += 1
            assert stats.dual_value >= full.stats.dual_value - 1e-6
    assert certified > 0 and looser > 0
