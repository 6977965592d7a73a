"""Eisner's algorithm (``decoders.eisner``) against brute force over projective trees."""

from __future__ import annotations


import numpy as np
import pytest

from brute_force import projective_trees, tree_scores
from polyparse.decoders import DECODERS, arc_parts
from polyparse.decoders import _kernels
from polyparse.decoders.trees import chu_liu_edmonds, eisner

N_MATRICES = {1: 5, 2: 30, 3: 30, 4: 30, 5: 25, 6: 12, 7: 4}


def as_python(kernel):
    """The plain-Python function of a numba kernel (itself under NUMBA_DISABLE_JIT=1)."""
    return getattr(kernel, "py_func", kernel)


def eisner_value_twin(S: np.ndarray, single_root: bool) -> float:
    """Plain-Python twin of ``_kernels.eisner_heads``: the best projective tree's score."""
    N = S.shape[0]
    inf = float("inf")
    complete_l = [[0.0 if s == t else -inf for t in range(N)] for s in range(N)]
    complete_r = [row[:] for row in complete_l]
    incomplete_l = [[-inf] * N for _ in range(N)]
    incomplete_r = [[-inf] * N for _ in range(N)]
    first = 1 if single_root else 0
    for width in range(1, N):
        for s in range(first, N - width):
            t = s + width
            split = max(complete_r[s][r] + complete_l[r + 1][t] for r in range(s, t))
            incomplete_l[s][t] = split + S[t, s] if s > 0 else -inf
            incomplete_r[s][t] = split + S[s, t]
            complete_l[s][t] = max(complete_l[s][r] + incomplete_l[r][t] for r in range(s, t))
            complete_r[s][t] = max(incomplete_r[s][r] + complete_r[r][t]
                                   for r in range(s + 1, t + 1))
    if single_root:
        return max(S[0, r] + complete_l[1][r] + complete_r[r][N - 1] for r in range(1, N))
    return complete_r[0][N - 1]


def is_projective_tree(heads: np.ndarray, single_root: bool) -> bool:
    n = heads.shape[0] - 1
    return any(np.array_equal(heads, t) for t in projective_trees(n, single_root))


@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("n", sorted(N_MATRICES))
def test_matches_brute_force(n, single_root):
    rng = np.random.default_rng(100 * n + single_root)
    trees = projective_trees(n, single_root)
    for _ in range(N_MATRICES[n]):
        S = rng.normal(size=(n + 1, n + 1))
        scores = tree_scores(S, trees)
        heads = eisner(S, single_root)
        np.testing.assert_array_equal(heads, trees[np.argmax(scores)])
        assert tree_scores(S, heads[None])[0] == pytest.approx(scores.max(), abs=1e-9)


@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("n", [3, 5])
def test_pruned_and_ties_match_brute_force(n, single_root):
    """-inf arcs and integer (tied) scores: the best projective value, deterministically."""
    rng = np.random.default_rng(n + 10 * single_root)
    trees = projective_trees(n, single_root)
    for _ in range(40):
        S = rng.integers(0, 3, size=(n + 1, n + 1)).astype(np.float64)
        S[rng.random(S.shape) < 0.4] = -np.inf
        best = tree_scores(S, trees).max()
        if np.isneginf(best):
            with pytest.raises(ValueError, match="no projective tree"):
                eisner(S, single_root)
            continue
        heads = eisner(S, single_root)
        assert is_projective_tree(heads, single_root)
        assert tree_scores(S, heads[None])[0] == best
        np.testing.assert_array_equal(eisner(S.copy(), single_root), heads)


@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("n", [12, 30])
def test_matches_python_twin(n, single_root):
    rng = np.random.default_rng(n)
    for pruned in (0.0, 0.5):
        S = rng.normal(size=(n + 1, n + 1))
        S[rng.random(S.shape) < pruned] = -np.inf
        S[np.arange(n), np.arange(1, n + 1)] = 0.0  # the chain 0 -> 1 -> ... -> n
        heads = eisner(S, single_root)
        assert tree_scores(S, heads[None])[0] == pytest.approx(
            eisner_value_twin(S, single_root), abs=1e-9)
        python_heads, status = as_python(_kernels.eisner_heads)(S, single_root)
        np.testing.assert_array_equal(python_heads, heads)
        assert status == _kernels.OK
        if single_root:
            assert np.count_nonzero(heads[1:] == 0) == 1


def test_projective_only_input_raises_but_mst_does_not():
    S = np.full((4, 4), -np.inf)
    S[0, 2] = S[2, 3] = S[3, 1] = 0.0  # the only tree; arc 3 -> 1 crosses 0 -> 2
    assert chu_liu_edmonds(S, single_root=True).tolist() == [-1, 3, 0, 2]
    for single_root in (False, True):
        with pytest.raises(ValueError, match="no projective tree"):
            eisner(S, single_root)
    assert eisner(np.zeros((1, 1)), single_root=True).tolist() == [-1]


@pytest.mark.parametrize("single_root", [False, True])
def test_decoder(single_root):
    rng = np.random.default_rng(2)
    n = 6
    parts = arc_parts(n)
    scores = rng.normal(size=len(parts))
    result = DECODERS["eisner"](single_root=single_root).decode(parts, scores)
    S = parts.arc_matrix(scores)
    assert result.value == pytest.approx(tree_scores(S, projective_trees(n, single_root)).max())
    np.testing.assert_array_equal(result.output, parts.from_heads(result.heads))
    assert result.stats.time_decode >= 0.0
