"""The full-order factors' MAP oracles and active-set QP against enumeration of their
states (:mod:`decoders._logic_kernels`)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from polyparse.decoders import _logic_kernels as lk


def states(kind, L, data):
    """Every vertex of the factor: ``(S (V, L) 0/1, own scores (V,))``."""
    rows, own = [], []
    for bits in itertools.product((0, 1), repeat=L):
        s = np.array(bits)
        if kind >= lk.GRAND_STAR:
            G = kind - lk.GRAND_STAR
            if s[:G].sum() == 1:
                rows.append(s)
                own.append(data.reshape(G, L - G)[np.argmax(s[:G])] @ s[G:])
        elif kind == lk.VALENCY:
            rows.append(s)
            own.append(data[min(int(s.sum()), data.size - 1)])
        elif kind == lk.NOT_ALL:
            if s[-1] == int(not s[:-1].all()):
                rows.append(s)
                own.append(0.0)
        elif kind == lk.IMPLY and s[0] <= s[1] or kind == lk.NAND and s[0] + s[1] <= 1 \
                or kind == lk.EQUAL_IF and (s[2] == 0 or s[0] == s[1]):
            rows.append(s)
            own.append(0.0)
    return np.array(rows), np.array(own)


CASES = [(lk.VALENCY, L, K) for L in (0, 1, 2, 3, 5) for K in (1, 2, 3)] + \
        [(lk.NOT_ALL, L, 0) for L in (1, 2, 3, 5)] + \
        [(lk.IMPLY, 2, 0), (lk.NAND, 2, 0), (lk.EQUAL_IF, 3, 0)] + \
        [(lk.GRAND_STAR + G, G + M, 0) for G, M in ((1, 0), (1, 2), (2, 1), (3, 3), (2, 5))]


def factor_data(kind, L, K, rng):
    """Random own scores of a factor: VALENCY's bins, GRAND_STAR's products."""
    if kind == lk.VALENCY:
        return rng.normal(size=K + 1)
    if kind >= lk.GRAND_STAR:
        G = kind - lk.GRAND_STAR
        return rng.normal(size=G * (L - G))
    return np.zeros(0)


@pytest.mark.parametrize("kind, L, K", CASES)
def test_map_equals_enumeration(kind, L, K):
    rng = np.random.default_rng([kind, L, K])
    for _ in range(30):
        theta = rng.normal(size=L)
        data = factor_data(kind, L, K, rng)
        S, own = states(kind, L, data)
        values = S @ theta + own
        state = np.empty(L, dtype=np.int64)
        value, e = lk.factor_map(kind, theta, data, 1.0, state)
        assert value == pytest.approx(values.max(), abs=1e-12)
        i = next(i for i in range(len(S)) if np.array_equal(S[i], state))
        assert e == pytest.approx(own[i]) and values[i] == pytest.approx(value)


@pytest.mark.parametrize("kind, L, K", [c for c in CASES if c[1] > 0])
def test_qp_is_optimal_over_every_vertex(kind, L, K):
    """First-order optimality of the projection: no vertex scores more than the active
    ones' combination under the gradient at the returned point (enumerated vertices),
    and the point is that combination; warm starts across calls, as AD3 makes them."""
    rng = np.random.default_rng([kind, L, K, 1])
    cap = L + 2
    act = np.zeros((cap, L), dtype=np.int64)
    own, beta = np.zeros(cap), np.zeros(cap)
    gram, minv = np.zeros((cap, cap)), np.zeros((cap + 1, cap + 1))
    k = 0
    data = factor_data(kind, L, K, rng)
    S, own_all = states(kind, L, data)
    q = np.empty(L)
    for _ in range(25):
        target = rng.normal(0.5, 1.0, size=L)
        inv_eta = float(rng.choice([0.3, 1.0, 3.0]))
        k = lk.factor_qp(kind, data, target, inv_eta, act, own, beta, gram, minv, k, 50, q,
                         np.empty(L, dtype=np.int64), np.empty(5 * cap + 3 + L))
        assert 1 <= k <= cap
        assert np.all(beta[:k] >= -1e-12) and beta[:k].sum() == pytest.approx(1.0)
        np.testing.assert_allclose(q, beta[:k] @ act[:k], atol=1e-12)
        grad = target - q
        here = beta[:k] @ (act[:k] @ grad + own[:k] * inv_eta)
        assert (S @ grad + own_all * inv_eta).max() <= here + 1e-9


@pytest.mark.parametrize("kind, L", [(lk.IMPLY, 2), (lk.NAND, 2), (lk.EQUAL_IF, 3)])
def test_small_qp_equals_active_set(kind, L):
    """The closed-form projection of the small factors is the active-set method's."""
    rng = np.random.default_rng([kind, 2])
    cap = L + 2
    q, r = np.empty(L), np.empty(L)
    for _ in range(200):
        c = rng.normal(0.5, 1.0, size=L)
        act = np.zeros((cap, L), dtype=np.int64)
        k = lk.factor_qp(kind, np.zeros(0), c, 1.0, act, np.zeros(cap), np.zeros(cap),
                         np.zeros((cap, cap)), np.zeros((cap + 1, cap + 1)), 0, 100, q,
                         np.empty(L, dtype=np.int64), np.empty(5 * cap + 3 + L))
        assert k >= 1
        lk.small_qp(kind, c, r, np.empty(9))
        np.testing.assert_allclose(r, q, atol=1e-9)
