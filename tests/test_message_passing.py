"""Dual message passing on the factor graph (``decoders.message_passing``): the dual
bounds the LP optimum for any messages, DLPW star updates never increase it, order 1
reaches the MST value, the smoothed dual bounds the hard one and HU updates never
increase it; the stall of ``docs/algorithms.md`` 5b at order 2 is measured."""

from __future__ import annotations

import numpy as np
import pytest

from polyparse.decoders import message_passing as mp
from polyparse.decoders.factor_graph import FactorGraph
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.lp import LPDecoder
from polyparse.decoders._message_kernels import BIG


def instance(seed, n, pruned, single_root, order="2"):
    rng = np.random.default_rng(seed)
    arcs = None
    if pruned:
        keep = rng.random((n + 1, n + 1)) < 0.5
        perm = rng.permutation(np.arange(1, n + 1))
        keep[0, perm[0]] = True
        for i in range(1, n):
            keep[perm[rng.integers(i)], perm[i]] = True
        keep[:, 0] = False
        np.fill_diagonal(keep, False)
        arcs = np.argwhere(keep)
    parts = build_parts(n, arcs, order=order)
    scores = rng.normal(size=len(parts))
    graph = FactorGraph.from_parts(parts, scores, single_root=single_root)
    lp = LPDecoder(single_root=single_root).decode(parts, scores).value
    return rng, parts, scores, graph, lp


def star_update(graph, state, a, t=0.0):
    """Reference star update at arc a, written from the formulas with full oracles (one
    TREE max-marginal or matrix-tree per update): Eq. 11 of Meshi et al. (2010) at
    ``t == 0``, Hazan and Urtasun's closed form with counting numbers 1 at ``t > 0``."""
    P = graph.n_pairs
    fac_i = np.flatnonzero(graph.pair_i == a)
    fac_j = np.flatnonzero(graph.pair_j == a)
    oth_i, oth_j = state[P + fac_i], state[fac_j]
    s_i, s_j = graph.pair_score[fac_i], graph.pair_score[fac_j]
    g_i = smax(s_i - oth_i, 0.0, t) - smax(-oth_i, 0.0, t)
    g_j = smax(s_j - oth_j, 0.0, t) - smax(-oth_j, 0.0, t)
    theta = -state[2 * P:].copy()
    theta[a] = 0.0
    always, never = graph.forced_arcs
    if always[a]:
        gt = BIG
    elif never[a]:
        gt = -BIG
    elif t == 0.0:
        mm, _ = graph.tree_max_marginals(theta)
        gt = float(np.clip(mm[a, 1] - mm[a, 0], -BIG, BIG))
    else:
        mu, _ = mp._tree_soft(graph, theta, t)
        rest = mu[(graph.arc_m == graph.arc_m[a]) & (np.arange(graph.n_arcs) != a)].sum()
        if mu[a] > 0 and rest > 0:
            gt = t * (np.log(mu[a]) - np.log(rest))
        else:  # beyond float64: the hard max-marginals (the limit t -> 0)
            mm, _ = graph.tree_max_marginals(theta)
            gt = float(np.clip(mm[a, 1] - mm[a, 0], -BIG, BIG))
    share = (graph.unary[a] + g_i.sum() + g_j.sum() + gt) / (2.0 + fac_i.size + fac_j.size)
    state[fac_i] = g_i - share
    state[P + fac_j] = g_j - share
    state[2 * P + a] = gt - share


def smax(x, y, t):
    return np.maximum(x, y) if t == 0.0 else t * np.logaddexp(x / t, y / t)


CASES = [(n, pruned, sr) for n in (1, 2, 4, 6) for pruned in (False, True)
         for sr in (False, True)]


@pytest.mark.parametrize("n, pruned, single_root", CASES)
def test_dual_bounds_the_lp_for_random_messages(n, pruned, single_root):
    rng, parts, scores, graph, lp = instance(n, n, pruned, single_root)
    for _ in range(5):
        state = rng.normal(scale=2.0, size=mp.state_size(graph))
        assert mp.dual_value(graph, state) >= lp - 1e-6
        for t in (0.5, 1.0):
            assert mp.dual_value(graph, state, t) >= mp.dual_value(graph, state) - 1e-9


@pytest.mark.parametrize("n, pruned, single_root", [c for c in CASES if c[0] >= 2])
def test_star_updates_never_increase_the_dual(n, pruned, single_root):
    rng, parts, scores, graph, lp = instance(10 + n, n, pruned, single_root)
    state = rng.normal(size=mp.state_size(graph))
    value = mp.dual_value(graph, state)
    for _ in range(2):
        for a in range(graph.n_arcs):
            star_update(graph, state, a)
            new = mp.dual_value(graph, state)
            assert new <= value + 1e-7
            value = new
    assert value >= lp - 1e-6
    # the numba sweeps do the same updates
    other = np.zeros(mp.state_size(graph))
    a = mp.sweeps(graph, other.copy(), sweeps=3)
    ref = other.copy()
    for _ in range(3):
        for arc in range(graph.n_arcs):
            star_update(graph, ref, arc)
    assert a.value == pytest.approx(mp.dual_value(graph, ref), abs=1e-6)


@pytest.mark.parametrize("n, pruned, single_root", [c for c in CASES if c[0] >= 2])
def test_order_1_reaches_the_mst_value(n, pruned, single_root):
    rng, parts, scores, graph, lp = instance(20 + n, n, pruned, single_root, order="1")
    state = np.zeros(mp.state_size(graph))
    result = mp.sweeps(graph, state, sweeps=30)
    _, best = graph.tree_map(graph.unary)
    assert result.value == pytest.approx(best, abs=1e-6)
    assert lp == pytest.approx(best, abs=1e-5)
    heads, _ = graph.tree_map(mp.belief_scores(graph, state))
    assert graph.score(graph.arc_state(heads)) == pytest.approx(best, abs=1e-6)


@pytest.mark.parametrize("n, pruned, single_root", [(4, False, True), (5, True, True),
                                                    (5, False, False)])
def test_hu_updates_never_increase_the_smoothed_dual(n, pruned, single_root):
    rng, parts, scores, graph, lp = instance(30 + n, n, pruned, single_root)
    state = rng.normal(size=mp.state_size(graph))
    t = 0.5
    value = mp.dual_value(graph, state, t)
    for _ in range(2):
        for a in range(graph.n_arcs):
            star_update(graph, state, a, t)
            new = mp.dual_value(graph, state, t)
            assert new <= value + 1e-7
            assert new >= mp.dual_value(graph, state) - 1e-9
            value = new
    result = mp.sweeps(graph, state, sweeps=1, temperature=t)
    assert result.value <= value + 1e-7
    assert np.all((result.arc_beliefs >= 0) & (result.arc_beliefs <= 1))
    out = mp.parts_output(graph, result)
    assert out.shape == (len(parts),)


@pytest.mark.parametrize("n, pruned, single_root, t", [
    (4, False, True, 0.5), (5, True, True, 0.1), (5, False, False, 1.0),
    (9, True, False, 0.2), (12, False, True, 0.5)])
def test_hu_kernel_does_the_reference_updates(n, pruned, single_root, t):
    """The numba sweeps (rank-one updates of the Laplacian's inverse) give the messages
    of the reference updates (a fresh matrix-tree per update)."""
    rng, parts, scores, graph, lp = instance(40 + n, n, pruned, single_root)
    start = rng.normal(scale=3.0, size=mp.state_size(graph))
    ref = start.copy()
    for _ in range(2):
        for a in range(graph.n_arcs):
            star_update(graph, ref, a, t)
    state = start.copy()
    result = mp.sweeps(graph, state, sweeps=2, temperature=t)
    np.testing.assert_allclose(state, ref, rtol=1e-6, atol=1e-6)
    assert result.value == pytest.approx(mp.dual_value(graph, ref, t), abs=1e-6)


@pytest.mark.parametrize("single_root", [False, True])
def test_hu_sweeps_never_increase_the_dual_where_marginals_underflow(single_root):
    """At a low temperature the scores / t span hundreds of nats: the kernel mixes
    rank-one updates, rebuilds and hard max-marginals, and each sweep still lowers the
    smoothed dual."""
    rng, parts, scores, graph, lp = instance(7, 12, False, single_root)
    t = 0.02
    state = rng.normal(scale=3.0, size=mp.state_size(graph))
    values = [mp.dual_value(graph, state, t)]
    for _ in range(6):
        values.append(mp.sweeps(graph, state, sweeps=1, temperature=t).value)
    assert all(b <= a + 1e-6 * abs(a) for a, b in zip(values, values[1:]))
    assert values[-1] >= lp - 1e-6


def test_dlpw_stall_at_order_2_is_measured(capsys):
    """Section 5b: with a TREE factor, DLPW can stop above the LP value. The numbers are
    printed (``pytest -s``); the test checks only the bound and monotonicity."""
    rng, parts, scores, graph, lp = instance(0, 6, False, True)
    state = np.zeros(mp.state_size(graph))
    values = [mp.sweeps(graph, state, sweeps=1).value for _ in range(40)]
    assert all(b <= a + 1e-7 for a, b in zip(values, values[1:]))
    assert values[-1] >= lp - 1e-6
    print(f"order 2, n 6, {graph.n_arcs} arcs, {graph.n_pairs} pairs: LP {lp:.3f}, "
          f"dual after 1/5/10/40 sweeps {values[0]:.3f}/{values[4]:.3f}/{values[9]:.3f}/"
          f"{values[-1]:.3f}")
