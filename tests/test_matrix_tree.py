"""Matrix-tree marginals and pruning (``decoders.matrix_tree``) against enumeration."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from scipy.special import logsumexp

from brute_force import all_trees, tree_scores
from polyparse.decoders import arc_parts
from polyparse.decoders.matrix_tree import IllConditionedError, arc_marginals, prune_arcs
from polyparse.decoders.trees import chu_liu_edmonds


def brute_force_marginals(S: np.ndarray, single_root: bool) -> tuple[np.ndarray, float]:
    """Marginals and log Z by summing ``exp(score)`` over every tree."""
    n = S.shape[0] - 1
    trees = all_trees(n, single_root)
    scores = tree_scores(S, trees)
    log_z = logsumexp(scores)
    p = np.exp(scores - log_z)
    marginals = np.zeros((n + 1, n + 1))
    for m in range(1, n + 1):
        np.add.at(marginals[:, m], trees[:, m], p)
    return marginals, float(log_z)


@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_matches_brute_force(n, single_root):
    rng = np.random.default_rng(10 * n + single_root)
    for trial in range(12):
        S = rng.normal(scale=3.0, size=(n + 1, n + 1))
        if trial % 2:
            S[rng.random(S.shape) < 0.3] = -np.inf
        if np.isneginf(tree_scores(S, all_trees(n, single_root)).max()):
            with pytest.raises(ValueError):
                arc_marginals(S, single_root)
            continue
        marginals, log_z = arc_marginals(S, single_root)
        expected, expected_log_z = brute_force_marginals(S, single_root)
        np.testing.assert_allclose(marginals, expected, atol=1e-10)
        assert log_z == pytest.approx(expected_log_z, abs=1e-10)
        assert np.all(marginals[np.isneginf(S)] == 0.0)


@pytest.mark.parametrize("single_root", [False, True])
def test_stable_on_long_sentences_and_large_scores(single_root):
    rng = np.random.default_rng(4)
    n = 120
    S = rng.normal(scale=30.0, size=(n + 1, n + 1)) + 500.0
    marginals, log_z = arc_marginals(S, single_root)
    assert np.isfinite(log_z)
    np.testing.assert_allclose(marginals[:, 1:].sum(axis=0), 1.0, atol=1e-8)
    assert marginals[:, 0].sum() == 0.0 and np.trace(marginals) == 0.0
    if single_root:
        assert marginals[0].sum() == pytest.approx(1.0, abs=1e-8)



@pytest.mark.parametrize("single_root", [False, True])
def test_too_sharp_scores_are_detected_and_pruning_tempers(single_root, caplog):
    rng = np.random.default_rng(12)
    n = 40
    S = rng.normal(scale=3000.0, size=(n + 1, n + 1))
    with pytest.raises(IllConditionedError):
        arc_marginals(S, single_root)
    with caplog.at_level(logging.DEBUG, logger="polyparse.decoders.matrix_tree"):
        arcs = prune_arcs(S, single_root)
    assert "temperature" in caplog.text
    kept = np.zeros_like(S, dtype=bool)
    kept[arcs[:, 0], arcs[:, 1]] = True
    heads = chu_liu_edmonds(S, single_root)
    assert kept[heads[1:], np.arange(1, n + 1)].all()


def test_infeasible_raises():
    S = np.zeros((4, 4))
    S[:, 3] = -np.inf
    with pytest.raises(ValueError, match="no candidate head"):
        arc_marginals(S, single_root=False)
    S = np.full((4, 4), -np.inf)
    S[0, 1] = S[0, 2] = S[1, 3] = 0.0  # trees exist, but only with two root children
    assert arc_marginals(S, single_root=False)[1] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="exactly one root child"):
        arc_marginals(S, single_root=True)
    marginals, log_z = arc_marginals(np.zeros((1, 1)), single_root=True)
    assert marginals.shape == (1, 1) and log_z == 0.0


@pytest.mark.parametrize("single_root", [False, True])
def test_prune_arcs_keeps_the_mst_and_a_tree(single_root):
    rng = np.random.default_rng(8)
    n = 25
    for threshold, max_heads in ((1e-4, 10), (0.05, 3), (1.0, 10), (0.0, 1)):
        S = rng.normal(scale=2.0, size=(n + 1, n + 1))
        S[rng.random(S.shape) < 0.3] = -np.inf
        S[np.arange(n), np.arange(1, n + 1)] = 0.0  # the chain 0 -> 1 -> ... -> n
        arcs = prune_arcs(S, single_root, threshold=threshold, max_heads=max_heads)
        heads = chu_liu_edmonds(S, single_root)
        kept = np.zeros_like(S, dtype=bool)
        kept[arcs[:, 0], arcs[:, 1]] = True
        assert kept[heads[1:], np.arange(1, n + 1)].all()
        assert np.isfinite(S[kept]).all()
        assert np.bincount(arcs[:, 1], minlength=n + 1)[1:].max() <= max_heads
        np.testing.assert_array_equal(arcs, np.argwhere(kept))  # row-major (h, m)
        marginals, _ = arc_marginals(S, single_root)
        if max_heads >= n:
            np.testing.assert_array_equal(kept | (marginals <= threshold),
                                          np.ones_like(kept))
        if threshold >= 1.0 or max_heads == 1:
            assert arcs.shape[0] == n  # exactly the tree
        parts = arc_parts(n, arcs)
        pruned_S = parts.arc_matrix(S[arcs[:, 0], arcs[:, 1]])
        np.testing.assert_array_equal(chu_liu_edmonds(pruned_S, single_root), heads)


def test_prune_arcs_keeps_every_likely_head():
    rng = np.random.default_rng(6)
    n = 8
    S = rng.normal(scale=2.0, size=(n + 1, n + 1))
    marginals, _ = arc_marginals(S, single_root=True)
    arcs = prune_arcs(S, single_root=True, threshold=1e-3, max_heads=n)
    kept = np.zeros_like(S, dtype=bool)
    kept[arcs[:, 0], arcs[:, 1]] = True
    likely = marginals > 1e-3
    assert np.all(kept[likely]) and kept.sum() < n * n
    with pytest.raises(ValueError, match="max_heads"):
        prune_arcs(S, single_root=True, max_heads=0)
