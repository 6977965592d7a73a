"""Numba kernels of the parser's weight vector: sparse scaled updates, lazy averaging.

Pure functions over numpy arrays (style.md); :mod:`parser.weights` wraps them.
"""

from __future__ import annotations

import numba
import polyparse.corpora.cache  # noqa: F401  (numba's cache folder, set before any kernel)
import numpy as np


@numba.njit(cache=True)
def sparse_add(v, acc, last, indices, values, step, scale, total_scale):
    """``w += step * delta`` for a sparse ``delta``, where ``w = scale * v``.

    Before coordinate i changes, the running sum of the iterates is brought up to date:
    ``acc[i] += v[i] * (total_scale - last[i])`` (lazy averaging; ``total_scale`` is the
    sum of the scale factors of all iterates so far). Duplicated indices add up.
    Returns the change of ``||v||^2``.
    """
    dsq = 0.0
    coef = step / scale
    for j in range(indices.shape[0]):
        i = indices[j]
        if last[i] != total_scale:
            acc[i] += v[i] * (total_scale - last[i])
            last[i] = total_scale
        old = v[i]
        new = old + coef * values[j]
        v[i] = new
        dsq += new * new - old * old
    return dsq


@numba.njit(cache=True)
def sparse_dot(v, indices, values):
    """``v[indices] @ values``."""
    out = 0.0
    for j in range(indices.shape[0]):
        out += v[indices[j]] * values[j]
    return out


@numba.njit(cache=True, parallel=False)
def averaged(v, acc, last, total_scale, count):
    """The average of all iterates, ``(acc + v * (total_scale - last)) / count``."""
    out = np.empty(v.shape[0], dtype=np.float64)
    for i in range(v.shape[0]):
        out[i] = (acc[i] + v[i] * (total_scale - last[i])) / count
    return out


@numba.njit(cache=True)
def flush(v, acc, last, total_scale):
    """Bring the running sum of every coordinate up to date (see :func:`sparse_add`)."""
    for i in range(v.shape[0]):
        if last[i] != total_scale:
            acc[i] += v[i] * (total_scale - last[i])
            last[i] = total_scale
