"""Chu-Liu-Edmonds (``decoders.mst``) against brute force and networkx."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from brute_force import all_trees, tree_scores
from polyparse.decoders import DECODERS, arc_parts
from polyparse.decoders import _kernels
from polyparse.decoders.trees import chu_liu_edmonds, round_to_tree

# Random matrices per n for the exhaustive comparison (n = 7 enumerates 262144 trees).
N_MATRICES = {1: 5, 2: 30, 3: 30, 4: 30, 5: 25, 6: 12, 7: 4}


def as_python(kernel):
    """The plain-Python function of a numba kernel (itself under NUMBA_DISABLE_JIT=1)."""
    return getattr(kernel, "py_func", kernel)


def random_scores(rng: np.random.Generator, n: int, pruned: float = 0.0,
                  keep_tree: bool = False) -> np.ndarray:
    """Gaussian ``(n + 1, n + 1)`` scores; a fraction ``pruned`` of arcs set to -inf.

    With ``keep_tree`` the arcs of a random single-root tree stay finite, so that a tree
    exists whatever is pruned.
    """
    S = rng.normal(size=(n + 1, n + 1))
    S[rng.random(S.shape) < pruned] = -np.inf
    if keep_tree:
        order = rng.permutation(np.arange(1, n + 1))
        S[0, order[0]] = rng.normal()
        for i in range(1, n):
            S[order[rng.integers(i)], order[i]] = rng.normal()
    return S


def is_tree(heads: np.ndarray, single_root: bool) -> bool:
    """``heads`` is an arborescence rooted at 0 (with one root child if required)."""
    n = heads.shape[0] - 1
    if heads[0] != -1 or np.any(heads[1:] < 0) or np.any(heads[1:] > n):
        return False
    if single_root and np.count_nonzero(heads[1:] == 0) != 1:
        return False
    for m in range(1, n + 1):
        node, steps = m, 0
        while node != 0 and steps <= n:
            node, steps = heads[node], steps + 1
        if node != 0:
            return False
    return True


def networkx_mst(S: np.ndarray) -> tuple[np.ndarray, float]:
    """Heads and value of networkx's maximum spanning arborescence over the finite arcs."""
    n = S.shape[0] - 1
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n + 1))
    graph.add_weighted_edges_from((h, m, S[h, m]) for h in range(n + 1)
                                  for m in range(1, n + 1) if h != m and np.isfinite(S[h, m]))
    tree = nx.maximum_spanning_arborescence(graph, preserve_attrs=True)
    heads = np.full(n + 1, -1, dtype=np.int64)
    for h, m in tree.edges:
        heads[m] = h
    return heads, float(sum(S[h, m] for h, m in tree.edges))


def value(S: np.ndarray, heads: np.ndarray) -> float:
    return float(tree_scores(S, heads[None])[0])


@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("n", sorted(N_MATRICES))
def test_matches_brute_force(n, single_root):
    rng = np.random.default_rng(100 * n + single_root)
    trees = all_trees(n, single_root)
    for _ in range(N_MATRICES[n]):
        S = random_scores(rng, n)
        scores = tree_scores(S, trees)
        heads = chu_liu_edmonds(S, single_root)
        assert is_tree(heads, single_root)
        assert value(S, heads) == pytest.approx(scores.max(), abs=1e-9)
        np.testing.assert_array_equal(heads, trees[np.argmax(scores)])


@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_pruned_matches_brute_force(n, single_root):
    """-inf arcs are never used; a ValueError exactly when no finite tree exists."""
    rng = np.random.default_rng(7 * n + single_root)
    trees = all_trees(n, single_root)
    n_raised = 0
    for _ in range(40):
        S = random_scores(rng, n, pruned=0.5)
        best = tree_scores(S, trees).max()
        if np.isneginf(best):
            n_raised += 1
            with pytest.raises(ValueError, match="no spanning tree"):
                chu_liu_edmonds(S, single_root)
            continue
        heads = chu_liu_edmonds(S, single_root)
        assert is_tree(heads, single_root)
        assert value(S, heads) == pytest.approx(best, abs=1e-9)
    assert 0 < n_raised < 40


@pytest.mark.parametrize("n, pruned", [(10, 0.0), (25, 0.5), (40, 0.0), (40, 0.8)])
def test_matches_networkx(n, pruned):
    rng = np.random.default_rng(n)
    for _ in range(3):
        S = random_scores(rng, n, pruned=pruned, keep_tree=True)
        heads = chu_liu_edmonds(S, single_root=False)
        nx_heads, nx_value = networkx_mst(S)
        assert value(S, heads) == pytest.approx(nx_value, abs=1e-9)
        np.testing.assert_array_equal(heads, nx_heads)


@pytest.mark.parametrize("n, root_bonus", [(8, 0.0), (12, 2.0), (20, 1.0)])
def test_single_root_matches_networkx_per_root_child(n, root_bonus):
    """Single-root MST = the best over r of the MST whose only root arc is 0 -> r.

    ``root_bonus`` raises all root arcs so that the unconstrained tree has many root
    children and the root-arc swaps are exercised.
    """
    rng = np.random.default_rng(n)
    for _ in range(2):
        S = random_scores(rng, n, pruned=0.3, keep_tree=True)
        S[0, 1:] += root_bonus
        candidates = []
        for r in np.flatnonzero(np.isfinite(S[0, 1:])) + 1:
            forced = S.copy()
            forced[0, 1:] = -np.inf
            forced[0, r] = S[0, r]
            try:
                candidates.append(networkx_mst(forced))
            except nx.NetworkXException:  # no tree with r as the only root child
                continue
        nx_heads, nx_value = max(candidates, key=lambda c: c[1])
        heads = chu_liu_edmonds(S, single_root=True)
        assert value(S, heads) == pytest.approx(nx_value, abs=1e-9)
        np.testing.assert_array_equal(heads, nx_heads)
        if root_bonus:
            assert np.count_nonzero(chu_liu_edmonds(S, single_root=False)[1:] == 0) > 1


@pytest.mark.parametrize("single_root", [False, True])
def test_ties_are_deterministic_and_optimal(single_root):
    rng = np.random.default_rng(3)
    trees = all_trees(6, single_root)
    for _ in range(10):
        S = rng.integers(0, 3, size=(7, 7)).astype(np.float64)
        heads = chu_liu_edmonds(S, single_root)
        np.testing.assert_array_equal(chu_liu_edmonds(S.copy(), single_root), heads)
        assert value(S, heads) == tree_scores(S, trees).max()
    assert is_tree(chu_liu_edmonds(np.zeros((30, 30)), single_root), single_root)


@pytest.mark.parametrize("single_root", [False, True])
def test_kernel_runs_as_python(single_root):
    """The kernel's own Python function gives the jitted result (NUMBA_DISABLE_JIT path)."""
    rng = np.random.default_rng(11)
    S = random_scores(rng, 30, pruned=0.5, keep_tree=True)
    jitted = _kernels.mst_heads(S, single_root)
    python = as_python(_kernels.mst_heads)(S, single_root)
    np.testing.assert_array_equal(jitted[0], python[0])
    assert jitted[1] == python[1] == _kernels.OK


def test_infeasible_and_invalid_input():
    S = np.zeros((4, 4))
    S[:, 2] = -np.inf  # word 2 has no candidate head
    with pytest.raises(ValueError, match="no spanning tree rooted at 0"):
        chu_liu_edmonds(S, single_root=False)
    S = np.full((4, 4), -np.inf)
    S[0, 1] = S[0, 2] = S[1, 3] = 0.0  # words 1 and 2 can only attach to the root
    assert chu_liu_edmonds(S, single_root=False).tolist() == [-1, 0, 0, 1]
    with pytest.raises(ValueError, match="exactly one root child"):
        chu_liu_edmonds(S, single_root=True)
    S = np.zeros((3, 3))
    S[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        chu_liu_edmonds(S, single_root=True)
    with pytest.raises(ValueError, match="shape"):
        chu_liu_edmonds(np.zeros((3, 4)), single_root=True)
    assert chu_liu_edmonds(np.zeros((1, 1)), single_root=True).tolist() == [-1]


@pytest.mark.parametrize("single_root", [False, True])
def test_decoder_on_full_and_pruned_parts(single_root):
    rng = np.random.default_rng(5)
    n = 5
    trees = all_trees(n, single_root)
    full = random_scores(rng, n)
    pruned = full.copy()
    pruned[rng.random(full.shape) < 0.4] = -np.inf
    pruned[np.arange(n + 1), np.arange(n + 1)] = -np.inf
    pruned[:, 0] = -np.inf
    decoder = DECODERS["mst"](single_root=single_root)
    pruned_parts = arc_parts(n, np.argwhere(np.isfinite(pruned)))
    for S, parts in ((full, arc_parts(n)), (pruned, pruned_parts)):
        if np.isneginf(tree_scores(S, trees).max()):
            continue
        scores = S[parts.arcs[:, 0], parts.arcs[:, 1]]
        result = decoder.decode(parts, scores)
        assert result.value == pytest.approx(tree_scores(S, trees).max())
        np.testing.assert_array_equal(result.output, parts.from_heads(result.heads))
        assert result.integral and result.stats.time_decode >= 0.0
        feasible = trees[np.isfinite(tree_scores(S, trees))]
        gold_heads = feasible[rng.integers(len(feasible))]
        augmented = decoder.decode_cost_augmented(parts, scores, parts.from_heads(gold_heads))
        assert augmented.loss >= -1e-9
        # Each wrong head switches one arc on and one gold arc off.
        assert augmented.cost == 2 * np.count_nonzero(augmented.heads != gold_heads)


@pytest.mark.parametrize("single_root", [False, True])
def test_round_to_tree(single_root):
    rng = np.random.default_rng(9)
    n = 6
    parts = arc_parts(n)
    tree_a = chu_liu_edmonds(random_scores(rng, n), single_root)
    tree_b = chu_liu_edmonds(random_scores(rng, n), single_root)
    z_a, z_b = parts.from_heads(tree_a), parts.from_heads(tree_b)
    np.testing.assert_array_equal(round_to_tree(parts, z_a, single_root), tree_a)
    half = 0.5 * (z_a + z_b)
    rounded = round_to_tree(parts, half, single_root)
    assert is_tree(rounded, single_root)
    best = tree_scores(parts.arc_matrix(half), all_trees(n, single_root)).max()
    assert parts.from_heads(rounded) @ half == pytest.approx(best)
    np.testing.assert_array_equal(round_to_tree(parts, half.copy(), single_root), rounded)


@pytest.mark.parametrize("single_root", [False, True])
def test_arc_list_mst_is_the_dense_one(single_root):
    """``arc_mst`` (Chu-Liu-Edmonds contracting over the arc list) returns the status of
    ``mst_heads`` on the dense matrix, a tree of the same score, and the same tree
    unless scores tie: on random pruned arc lists in random order, with ties (integer
    scores), with a strong root (greedy graph a tree with one root child: nothing
    contracted), and with words left headless."""
    from polyparse.decoders._factor_kernels import arc_matrix, arc_mst

    rng = np.random.default_rng(11)
    fast = 0
    for trial in range(400):
        n = int(rng.integers(1, 13))
        S = random_scores(rng, n, pruned=rng.choice([0.0, 0.4, 0.8]),
                          keep_tree=trial % 4 != 0)
        ties = trial % 3 == 0
        if ties:
            S = np.round(S)
        if trial % 5 == 0:
            S[0, 1:] -= 5.0                                   # greedy graphs that are trees
        h, m = np.nonzero(np.isfinite(S))
        keep = (h != m) & (m > 0)
        order = rng.permutation(int(keep.sum()))
        arc_h, arc_m = h[keep][order], m[keep][order]
        theta = S[arc_h, arc_m]
        heads, value, status = arc_mst(n, arc_h, arc_m, theta, single_root)
        dense = arc_matrix(n, arc_h, arc_m, theta)
        want, want_status = _kernels.mst_heads(dense, single_root)
        assert status == want_status
        if status == _kernels.OK:
            assert is_tree(heads, single_root)
            assert value == pytest.approx(_kernels.tree_value(dense, heads), abs=1e-12)
            assert value == pytest.approx(_kernels.tree_value(dense, want), abs=1e-9)
            if not ties:
                np.testing.assert_array_equal(heads, want)
            best = np.max(dense[:, 1:], axis=0)
            fast += bool(np.all(dense[heads[1:], np.arange(1, n + 1)] == best))
    assert fast > 100
