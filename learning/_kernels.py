"""Numba kernels of the parser's weight vector: sparse scaled updates and their average.

Pure functions over numpy arrays (style.md); :mod:`learning.weights` wraps them.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def sparse_add(v, acc, indices, values, step, scale, total_scale):
    """``w += step * delta`` for a sparse ``delta``, where ``w = scale * v``.

    ``acc`` keeps ``sum of the iterates = total_scale * v - acc`` true (``total_scale``
    is the sum of the scales of the finished iterates, ``learning.weights``): a change
    ``d`` of ``v[i]`` adds ``total_scale * d`` to ``acc[i]``. Duplicated indices add
    up. Returns the change of ``||v||^2``.
    """
    dsq = 0.0
    coef = step / scale
    for j in range(indices.shape[0]):
        i = indices[j]
        d = coef * values[j]
        old = v[i]
        new = old + d
        v[i] = new
        acc[i] += total_scale * d
        dsq += new * new - old * old
    return dsq


@numba.njit(cache=True)
def averaged(v, acc, total_scale, count, out):
    """The average of all iterates, ``(total_scale * v - acc) / count``, into ``out``."""
    for i in range(v.shape[0]):
        out[i] = (total_scale * v[i] - acc[i]) / count


@numba.njit(cache=True)
def rescale(v, acc, total_scale, factor):
    """``v <- factor * v`` (the caller divides ``scale`` by ``factor``), keeping
    ``total_scale * v - acc`` (see :func:`sparse_add`)."""
    for i in range(v.shape[0]):
        acc[i] += (factor - 1.0) * total_scale * v[i]
        v[i] *= factor
