"""A weight vector for stochastic subgradient methods on sparse gradients.

``w = scale * v``: the shrinkage ``w <- (1 - eta lambda) w`` of Pegasos (Shalev-Shwartz
et al. 2007) and the projection on the ball are O(1) changes of ``scale``; a subgradient
step touches only the features that fire. The average of the iterates (returned by
ICML 2009's Algorithm 1) is kept with one more dense vector, ``acc``, updated sparsely
(``docs/algorithms.md`` section 5: "implement the updates sparsely"): with ``S`` the sum
of the scales of the finished iterates, ``sum_t w_t = S v - acc`` at all times, so a
step that adds ``d`` to ``v[i]`` adds ``S d`` to ``acc[i]`` (the averaged perceptron's
bookkeeping, Daume III 2006, section 2.1.1, with Pegasos' scale folded into ``S``).
"""

from __future__ import annotations

import mmap

import numpy as np

from . import _kernels

SANE_SCALE = 1e-6
"""Below this ``scale`` is folded into ``v`` (a dense but rare O(dim) step): ``S v`` and
``acc`` grow like ``1 / scale`` while their difference does not, so a small floor keeps
the average's rounding error below ``1e-16 / SANE_SCALE`` of its size."""


class AveragedWeights:
    """``w_t = scale * v`` and the running sum of ``w_1 .. w_t``: two dense float64
    vectors, ``v`` and ``acc``."""

    def __init__(self, dim: int, *, shared: bool = False) -> None:
        # ``shared``: ``v`` lives in an anonymous shared mapping, so processes forked
        # later read the current weights (parallel loss-augmented inference).
        if shared:
            self._buffer = mmap.mmap(-1, max(dim, 1) * 8)
            self.v = np.frombuffer(self._buffer, dtype=np.float64, count=dim)
        else:
            self.v = np.zeros(dim, dtype=np.float64)
        self._acc = np.zeros(dim, dtype=np.float64)
        self.scale = 1.0
        self._sq_norm_v = 0.0
        self._total_scale = 0.0   # S: the sum of the scales of the finished iterates
        self.count = 0            # number of finished iterates

    @classmethod
    def starting_at(cls, w: np.ndarray) -> "AveragedWeights":
        """Weights whose current iterate is a copy of ``w`` (dense float64) and that have
        no finished iterate yet: where each shard of iterative parameter mixing starts an
        epoch (:mod:`learning.mixing`)."""
        weights = cls(len(w))
        weights.v[:] = w
        weights._sq_norm_v = float(np.dot(weights.v, weights.v))
        return weights

    @property
    def norm(self) -> float:
        """``||w||``."""
        return self.scale * float(np.sqrt(max(self._sq_norm_v, 0.0)))

    def shrink(self, factor: float) -> None:
        """``w <- factor * w``."""
        if factor == 0.0:
            # Only Pegasos' first step (1 - 1/t at t = 1), when v is still zero.
            if self._sq_norm_v != 0.0:
                _kernels.rescale(self.v, self._acc, self._total_scale, 0.0)
                self._sq_norm_v = 0.0
            self.scale = 1.0
        else:
            self.scale *= factor
            self._keep_scale_sane()

    def add(self, indices: np.ndarray, values: np.ndarray, step: float) -> None:
        """``w <- w + step * delta`` with ``delta[indices] += values``."""
        if indices.size:
            self._sq_norm_v += _kernels.sparse_add(
                self.v, self._acc, indices.astype(np.int64, copy=False),
                values.astype(np.float64, copy=False), step, self.scale, self._total_scale)

    def project(self, radius: float) -> None:
        """Project ``w`` on the ball of the given radius."""
        norm = self.norm
        if norm > radius:
            self.scale *= radius / norm
            self._keep_scale_sane()

    def finish_iterate(self) -> None:
        """Count the current ``w`` as one more iterate of the average."""
        self._total_scale += self.scale
        self.count += 1

    def restart_average(self) -> None:
        """Forget the finished iterates: the average is of those finished from now on
        (suffix averaging)."""
        self._acc[:] = 0.0
        self._total_scale = 0.0
        self.count = 0

    def current(self) -> np.ndarray:
        """Dense copy of ``w``."""
        return self.scale * self.v

    def average(self, out: np.ndarray | None = None) -> np.ndarray:
        """Dense average of the finished iterates (``w`` itself before any), written
        into ``out`` (float64, of the dimension) when given, so that no third dense
        vector is allocated per epoch."""
        if out is None:
            out = np.empty_like(self.v)
        if self.count == 0:
            return np.multiply(self.v, self.scale, out=out)
        _kernels.averaged(self.v, self._acc, self._total_scale, float(self.count), out)
        return out

    def _keep_scale_sane(self) -> None:
        """Fold a small ``scale`` into ``v`` (see :data:`SANE_SCALE`)."""
        if self.scale < SANE_SCALE:
            _kernels.rescale(self.v, self._acc, self._total_scale, self.scale)
            self._sq_norm_v *= self.scale ** 2
            self.scale = 1.0
