"""AveragedWeights against a dense reference that stores every iterate."""

import numpy as np
import pytest

from polyparse.learning import _kernels
from polyparse.learning.weights import AveragedWeights


def _sparse_add_twin(v, acc, indices, values, step, scale, total_scale):
    """Plain-Python twin of ``_kernels.sparse_add``."""
    dsq = 0.0
    for i, value in zip(indices, values):
        old = v[i]
        v[i] = old + step / scale * value
        acc[i] += total_scale * (v[i] - old)
        dsq += v[i] ** 2 - old ** 2
    return dsq


@pytest.mark.parametrize("kernel", [_kernels.sparse_add, _sparse_add_twin])
def test_sparse_add_kernel_and_twin_agree_with_numpy(kernel):
    rng = np.random.default_rng(0)
    v, acc = rng.normal(size=20), rng.normal(size=20)
    indices = rng.integers(0, 20, size=30)            # with duplicates
    values = rng.normal(size=30)
    original_v = v.copy()
    expected_v = v.copy()
    np.add.at(expected_v, indices, 0.5 / 2.0 * values)
    expected_acc = acc + 3.0 * (expected_v - v)
    dsq = kernel(v, acc, indices, values, 0.5, 2.0, 3.0)
    assert np.allclose(v, expected_v)
    assert np.allclose(acc, expected_acc)
    assert dsq == pytest.approx((expected_v ** 2).sum() - (original_v ** 2).sum(), rel=1e-9)


@pytest.mark.parametrize("radius", [0.8, 1e-5])   # 1e-5: scale collapses, renormalized
def test_average_and_norm_match_dense_reference(radius):
    rng = np.random.default_rng(1)
    dim = 50
    weights = AveragedWeights(dim)
    dense = np.zeros(dim)
    iterates = []
    for t in range(1, 200):
        factor = 0.0 if t == 1 else 1.0 - 1.0 / t
        weights.shrink(factor)
        dense *= factor
        indices = rng.integers(0, dim, size=7)
        values = rng.normal(size=7)
        step = -1.0 / t
        weights.add(indices, values, step)
        np.add.at(dense, indices, step * values)
        weights.project(radius)
        norm = np.linalg.norm(dense)
        if norm > radius:
            dense *= radius / norm
        weights.finish_iterate()
        iterates.append(dense.copy())
        assert weights.norm == pytest.approx(np.linalg.norm(dense), rel=1e-8, abs=1e-14)
    assert np.allclose(weights.current(), dense)
    assert np.allclose(weights.average(), np.mean(iterates, axis=0))
    out = np.full(dim, np.nan)
    assert weights.average(out) is out and np.array_equal(out, weights.average())


def test_restarted_average_is_the_mean_of_the_iterates_after_the_restart():
    rng = np.random.default_rng(3)
    weights = AveragedWeights(6)
    later = []
    for t in range(7):
        if t == 3:
            weights.restart_average()
        weights.shrink(0.8)
        weights.add(rng.integers(0, 6, 4), rng.normal(size=4), 0.5)
        weights.finish_iterate()
        if t >= 3:
            later.append(weights.current())
    np.testing.assert_allclose(weights.average(), np.mean(later, axis=0), rtol=1e-12,
                               atol=1e-12)
