"""Numba kernels of the parser's weight vector: sparse scaled updates and their average,
and its products with feature rows.

Pure functions over numpy arrays (style.md); :mod:`learning.weights` wraps them.
"""

from __future__ import annotations

import numba
import numpy as np


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


@numba.njit(cache=True)
def add_expected_features(out, part_dim, n_labels, part_indptr, part_indices, part_data,
                          label_indptr, label_indices, label_data, mu, pi, sign):
    """``out += sign * F z`` for a labeled arc vector ``z``: arc row ``a`` has marginal
    ``mu[a]`` and label distribution ``pi[a]`` (``z[a, l] = mu[a] pi[a, l]``).

    Row ``a`` of the part features (CSR ``part_*``) is weighed by ``mu[a]``; its label
    features (CSR ``label_*``, hashed index ``f``) go to ``out[part_dim + f * n_labels +
    l]`` weighed by ``mu[a] pi[a, l]`` (the layout of :class:`learning.model.LinearModel`).
    """
    for a in range(mu.shape[0]):
        m = sign * mu[a]
        if m == 0.0:
            continue
        for j in range(part_indptr[a], part_indptr[a + 1]):
            out[part_indices[j]] += m * part_data[j]
        for j in range(label_indptr[a], label_indptr[a + 1]):
            base = part_dim + label_indices[j] * n_labels
            c = m * label_data[j]
            for lab in range(n_labels):
                p = pi[a, lab]
                if p != 0.0:
                    out[base + lab] += c * p


@numba.njit(cache=True)
def rows_dot(indptr, indices, data, W):
    """``F @ W`` for the CSR matrix ``F`` (``indptr``, ``indices``, ``data``) and ``W``
    (2-D, a row per column of ``F``; float32 or float64): float64 sums in scipy's order
    (row by row, each row's entries as stored), so the same to the last bit as scipy's
    product with ``W`` in float64, without widening ``W`` first."""
    n_rows = indptr.shape[0] - 1
    out = np.zeros((n_rows, W.shape[1]))
    for i in range(n_rows):
        for jj in range(indptr[i], indptr[i + 1]):
            j = indices[jj]
            d = data[jj]
            for k in range(W.shape[1]):
                out[i, k] += d * W[j, k]
    return out


@numba.njit(cache=True)
def feature_difference(part_indptr, part_indices, part_data, diff, label_indptr,
                       label_indices, label_data, arc_start, output, labels, gold_labels,
                       part_dim, n_labels):
    """Sparse ``Phi(output, labels) - Phi(gold)`` as ``(indices, values)``, duplicates
    allowed, for :meth:`learning.model.LinearModel.feature_difference`: first the part
    features of each row with ``diff = output - gold`` nonzero (weighed by it), then the
    label features of each ARC row with ``output`` nonzero on its ``labels`` label
    (weighed by ``output``), then those of each gold arc on its gold label (weighed by
    -1); ARC row ``a`` of the label features is part row ``arc_start + a``."""
    n_arcs = label_indptr.shape[0] - 1
    predicted = output[arc_start:arc_start + n_arcs]
    gold = np.where(gold_labels >= 0, -1.0, 0.0)
    size = (_row_lengths(part_indptr, diff) + _row_lengths(label_indptr, predicted)
            + _row_lengths(label_indptr, gold))
    indices = np.empty(size, dtype=np.int64)
    values = np.empty(size, dtype=np.float64)
    k = 0
    for r in range(diff.shape[0]):
        d = diff[r]
        if d != 0.0:
            for j in range(part_indptr[r], part_indptr[r + 1]):
                indices[k] = part_indices[j]
                values[k] = d * part_data[j]
                k += 1
    k = _label_rows(label_indptr, label_indices, label_data, predicted, labels, part_dim,
                    n_labels, indices, values, k)
    _label_rows(label_indptr, label_indices, label_data, gold, gold_labels, part_dim,
                n_labels, indices, values, k)
    return indices, values


@numba.njit(cache=True)
def _row_lengths(indptr, coefs):
    """Number of stored entries in the rows ``r`` of a CSR matrix with ``coefs[r] != 0``."""
    size = 0
    for r in range(coefs.shape[0]):
        if coefs[r] != 0.0:
            size += indptr[r + 1] - indptr[r]
    return size


@numba.njit(cache=True)
def _label_rows(indptr, indices, data, coefs, labels, part_dim, n_labels, out_indices,
                out_values, k):
    """Write, from position ``k`` on, the label features of each ARC row ``a`` with
    ``coefs[a] != 0`` on label ``labels[a]`` (flat index ``part_dim + feature * n_labels +
    label``), weighed by ``coefs[a]``; return the next free position."""
    for a in range(coefs.shape[0]):
        coef = coefs[a]
        if coef != 0.0:
            for j in range(indptr[a], indptr[a + 1]):
                out_indices[k] = part_dim + np.int64(indices[j]) * n_labels + labels[a]
                out_values[k] = coef * data[j]
                k += 1
    return k
