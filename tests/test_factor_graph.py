"""The order-2 factor graph (``decoders.factor_graph``) against enumeration.

TREE oracles against every tree of n <= 6 words (pruned and unpruned, one or several root
children), pairwise oracles against their four states, and the factor-graph score against
the model's ``scores @ z`` on every tree. The kernels are also run as plain Python (the
``NUMBA_DISABLE_JIT=1`` path).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from brute_force import all_trees
from polyparse.decoders import _factor_kernels
from polyparse.decoders.factor_graph import FactorGraph
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.parts import PartType

TEMPERATURES = (0.3, 1.0, 4.0)


def as_python(kernel):
    """The plain-Python function of a numba kernel (itself under NUMBA_DISABLE_JIT=1)."""
    return getattr(kernel, "py_func", kernel)


def candidate_arcs(rng: np.random.Generator, n: int, pruned: bool) -> np.ndarray:
    """All arcs, or about half of them plus a random single-root tree's arcs."""
    keep = np.ones((n + 1, n + 1), dtype=bool)
    if pruned:
        keep = rng.random(keep.shape) < 0.5
        order = rng.permutation(np.arange(1, n + 1))
        keep[0, order[0]] = True
        for i in range(1, n):
            keep[order[rng.integers(i)], order[i]] = True
    keep[:, 0] = False
    np.fill_diagonal(keep, False)
    h, m = np.nonzero(keep)
    return np.stack([h, m], axis=1)


def instance(seed: int, n: int, pruned: bool, single_root: bool, order: str = "2",
             enumerate_trees: bool = True):
    """``(parts, scores, graph, trees)``: random part scores and the candidate trees
    (None unless ``enumerate_trees``)."""
    rng = np.random.default_rng(seed)
    arcs = candidate_arcs(rng, n, pruned)
    parts = build_parts(n, arcs, order=order)
    scores = rng.normal(size=len(parts))
    graph = FactorGraph.from_parts(parts, scores, single_root=single_root)
    if not enumerate_trees:
        return parts, scores, graph, None
    cand = np.zeros((n + 1, n + 1), dtype=bool)
    cand[arcs[:, 0], arcs[:, 1]] = True
    trees = all_trees(n, single_root)
    trees = trees[cand[trees[:, 1:], np.arange(1, n + 1)].all(axis=1)]
    return parts, scores, graph, trees


def soft_max(values: np.ndarray, t: float, axis: int = 0) -> np.ndarray:
    """max along ``axis`` at ``t == 0``, else ``t logsumexp(values / t)``."""
    return values.max(axis=axis) if t == 0 else t * logsumexp(values / t, axis=axis)


CASES = [(n, pruned, single_root) for n in (1, 2, 3, 4, 5, 6)
         for pruned in (False, True) for single_root in (False, True)]


@pytest.mark.parametrize("order", ["1", "2"])
@pytest.mark.parametrize("n, pruned, single_root", [c for c in CASES if c[0] <= 5])
def test_score_is_the_model_score_on_every_tree(n, pruned, single_root, order):
    parts, scores, graph, trees = instance(n, n, pruned, single_root, order)
    assert graph.n_arcs == parts.block(PartType.ARC).stop
    assert graph.n_arcs + graph.n_pairs == len(parts)
    states = graph.arc_state(trees)
    model = np.array([scores @ parts.from_heads(heads) for heads in trees])
    np.testing.assert_allclose(graph.score(states), model, rtol=0, atol=1e-9)
    for heads, y in zip(trees[::7], states[::7]):
        np.testing.assert_array_equal(graph.to_parts(y, graph.pair_state(y)),
                                      parts.from_heads(heads))


@pytest.mark.parametrize("n, pruned, single_root", CASES)
def test_tree_oracles_match_enumeration(n, pruned, single_root):
    _, _, graph, trees = instance(100 + n, n, pruned, single_root)
    rng = np.random.default_rng(n)
    Y = graph.arc_state(trees).astype(bool)
    for trial in range(4):
        theta = rng.normal(scale=2.0, size=graph.n_arcs)
        if trial == 2:  # integer scores: many ties
            theta = rng.integers(-1, 2, size=graph.n_arcs).astype(np.float64)
        temperatures = TEMPERATURES
        if trial == 3:  # cycles 1 <-> 2, 3 <-> 4 in the greedy graph: the kernel's MST path
            for i, j in ((1, 2), (2, 1), (3, 4), (4, 3)):
                theta[(graph.arc_h == i) & (graph.arc_m == j)] += 6.0
            temperatures = ()  # a Laplacian too ill-conditioned for 1e-9 at t = 0.3
        values = Y @ theta
        heads, best = graph.tree_map(theta)
        assert best == pytest.approx(values.max(), abs=1e-9)
        assert any((heads == t).all() for t in trees)
        with_arc = np.where(Y, values[:, None], -np.inf)
        without = np.where(~Y, values[:, None], -np.inf)
        for t in (0.0,) + temperatures:
            mm, value = graph.tree_max_marginals(theta, t)
            expected = np.stack([soft_max(without, t), soft_max(with_arc, t)], axis=1)
            assert value == pytest.approx(soft_max(values, t), abs=1e-9)
            impossible = np.isneginf(expected)
            if t == 0.0:
                np.testing.assert_array_equal(np.isneginf(mm), impossible)
                np.testing.assert_allclose(mm[~impossible], expected[~impossible], atol=1e-9)
                continue
            # t log mu, with mu accurate to ~1e-10 absolutely (the docstring's bound): an
            # impossible state may come out finite, but far below the value
            assert np.all(mm[impossible] <= value + t * np.log(1e-10))
            p = np.exp((expected[~impossible] - value) / t)
            error = np.abs(mm[~impossible] - expected[~impossible])
            assert np.all(error <= 1e-9 + t * 1e-10 / p)
        for t in temperatures:
            mu, value = graph.tree_marginals(theta, t)
            p = np.exp(values / t - logsumexp(values / t))
            assert value == pytest.approx(soft_max(values, t), abs=1e-9)
            np.testing.assert_allclose(mu, p @ Y, rtol=0, atol=1e-9)
        mu, value = graph.tree_marginals(theta, 0.0)
        assert value == best
        np.testing.assert_array_equal(mu, graph.arc_state(heads))


@pytest.mark.parametrize("t", (0.0,) + TEMPERATURES)
def test_pair_oracles_match_their_four_states(t):
    rng = np.random.default_rng(int(10 * t))
    parts = build_parts(6, order="2")
    draw = (lambda size: rng.integers(-1, 2, size).astype(np.float64)) if t == 0.0 else (
        lambda size: rng.normal(size=size))  # at t == 0 integers, with ties between states
    graph = FactorGraph.from_parts(parts, draw(len(parts)))
    P = graph.n_pairs
    a, b = draw(P), draw(P)
    a[:5], b[3:8] = -np.inf, -np.inf  # a variable that cannot be 1
    states = np.array([[0, 0], [1, 0], [0, 1], [1, 1]])
    table = np.stack([np.zeros(P), a, b, graph.pair_score + a + b], axis=1)
    oracles = graph.pair_oracles(a, b, t)
    np.testing.assert_allclose(oracles.value, soft_max(table, t, axis=1), rtol=0, atol=1e-12)
    for k in (0, 1):
        for y in (0, 1):
            cols = states[:, k] == y
            np.testing.assert_allclose(oracles.max_marginals[:, k, y],
                                       soft_max(table[:, cols], t, axis=1), rtol=0, atol=1e-12)
    if t == 0.0:
        p = np.eye(4)[np.argmax(table, axis=1)]  # the first best state
    else:
        p = np.exp(table / t - logsumexp(table / t, axis=1, keepdims=True))
    expected = np.stack([p @ states[:, 0], p @ states[:, 1], p[:, 3]], axis=1)
    np.testing.assert_allclose(oracles.marginals, expected, rtol=0, atol=1e-12)


def test_kernels_run_as_python():
    """The kernels' own Python functions give the jitted results."""
    _, _, graph, _ = instance(3, 12, pruned=True, single_root=True,
                               enumerate_trees=False)
    rng = np.random.default_rng(3)
    theta = rng.normal(size=graph.n_arcs)
    S = _factor_kernels.arc_matrix(graph.n, graph.arc_h, graph.arc_m, theta)
    np.testing.assert_array_equal(
        S, as_python(_factor_kernels.arc_matrix)(graph.n, graph.arc_h, graph.arc_m, theta))
    for single_root in (False, True):
        jitted = _factor_kernels.tree_max_marginals(S, graph.arc_h, graph.arc_m, single_root)
        python = as_python(_factor_kernels.tree_max_marginals)(S, graph.arc_h, graph.arc_m,
                                                               single_root)
        for x, y in zip(jitted, python):
            np.testing.assert_array_equal(x, y)
    a, b = rng.normal(size=graph.n_pairs), rng.normal(size=graph.n_pairs)
    for t in (0.0, 0.5):
        jitted = _factor_kernels.pair_oracles(graph.pair_score, a, b, t)
        python = as_python(_factor_kernels.pair_oracles)(graph.pair_score, a, b, t)
        for x, y in zip(jitted, python):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)


def test_degrees_count_the_factors_at_each_arc():
    parts, _, graph, _ = instance(5, 5, pruned=True, single_root=True)
    expected = np.ones(graph.n_arcs, dtype=np.int64)  # the TREE factor
    arcs = [tuple(a) for a in parts.arcs]
    for part_type, h, m, x in parts.index[len(arcs):]:
        pair = [(x, h), (h, m)] if part_type == PartType.GRANDPARENT else [(h, m), (h, x)]
        for arc in pair:
            expected[arcs.index(arc)] += 1
    np.testing.assert_array_equal(graph.degrees, expected)


@pytest.mark.parametrize("single_root", [True, False])
def test_rescored_graph_is_the_graph_of_those_scores(single_root):
    """``with_scores`` equals building the graph anew with the new scores, and keeps
    what was computed from the structure (the same objects, not recomputed)."""
    parts, scores, graph, _ = instance(3, 5, pruned=True, single_root=single_root)
    other = np.random.default_rng(4).normal(size=len(parts))
    rescored = graph.with_scores(other)
    forced, incidence = graph.with_scores(scores).forced_arcs, graph.incidence
    fresh = FactorGraph.from_parts(parts, other, single_root=single_root)
    for name in ("unary", "pair_score", "arc_h", "arc_m", "pair_i", "pair_j", "arc_rows",
                 "pair_rows"):
        np.testing.assert_array_equal(getattr(rescored, name), getattr(fresh, name))
    assert rescored.forced_arcs is forced and rescored.incidence is incidence
    for got, want in zip(rescored.forced_arcs + rescored.incidence,
                         fresh.forced_arcs + fresh.incidence):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(graph.unary, scores[graph.arc_rows])  # unchanged
    other[0] = np.inf
    with pytest.raises(ValueError, match="scores"):
        graph.with_scores(other)


def test_refuses_what_it_cannot_represent():
    for options in ({"order": "2", "consecutive_siblings": True}, {"order": "full"}):
        parts = build_parts(4, **options)
        with pytest.raises(ValueError, match="no pairwise factor"):
            FactorGraph.from_parts(parts, np.zeros(len(parts)))
    parts = build_parts(4, order="2")
    with pytest.raises(ValueError, match="shape"):
        FactorGraph.from_parts(parts, np.zeros(len(parts) - 1))
    scores = np.zeros(len(parts))
    scores[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FactorGraph.from_parts(parts, scores)
    graph = FactorGraph.from_parts(parts, np.zeros(len(parts)), single_root=True)
    with pytest.raises(ValueError, match="temperature"):
        graph.tree_marginals(graph.unary, -1.0)
    theta = np.zeros(graph.n_arcs)
    theta[graph.arc_m == 2] = -np.inf  # word 2 has no head left
    with pytest.raises(ValueError, match="no spanning tree"):
        graph.tree_max_marginals(theta)
    with pytest.raises(ValueError, match="no spanning tree"):
        graph.tree_map(theta)
    theta = np.where(graph.arc_h == 0, 0.0, -np.inf)  # only root arcs: no single-root tree
    with pytest.raises(ValueError, match="exactly one root child"):
        graph.tree_max_marginals(theta)
