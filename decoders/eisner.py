"""Eisner's algorithm: the exact arc-factored projective decoder.

Eisner (1996), O(n^3) dynamic programming over complete and incomplete spans, with the
root at position 0. The single-root variant lets the root take exactly one child; the
unconstrained one lets it take any number. The loops are the numba kernel
:func:`decoders._kernels.eisner_heads`.
"""

from __future__ import annotations

import time

import numpy as np

from . import _kernels
from .base import Certificate, DecodeResult, Decoder, register, tree_result
from .mst import check_scores, raise_for_status
from .parts import Parts


def eisner(S: np.ndarray, single_root: bool) -> np.ndarray:
    """Heads of the best projective tree of ``S`` rooted at 0 (Eisner 1996).

    Parameters
    ----------
    S:
        ``float64 (n + 1, n + 1)``, ``S[h, m]`` the score of arc h -> m, ``-inf`` for
        non-candidate arcs; column 0 and the diagonal are unused.
    single_root:
        Exactly one child of the root when True; any number when False.

    Returns
    -------
    ``int64 (n + 1,)`` heads with ``heads[0] == -1``; projective with the root at
    position 0 (no arc crosses another, root arcs included). Ties are broken
    deterministically.

    Raises
    ------
    NoTree
        (a ``ValueError``) if no such projective tree uses only finite arcs.

    Examples
    --------
    >>> S = np.array([[0., 5., 1.], [0., 0., 4.], [0., 3., 0.]])
    >>> eisner(S, single_root=True)
    array([-1,  0,  1])
    """
    heads, status = _kernels.eisner_heads(check_scores(S), single_root)
    raise_for_status(status, "projective tree")
    return heads


@register("eisner")
class EisnerDecoder(Decoder):
    """Exact arc-factored projective decoding (Eisner 1996).

    Only the ARC block of ``scores`` steers the search; ``value`` is the full
    ``scores @ output`` of the returned tree.
    """

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = eisner(parts.arc_matrix(scores), self.single_root)
        elapsed = time.perf_counter() - start
        output = parts.from_heads(heads)
        return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                            stats={"time_decode": elapsed})

    def certificate(self, result: DecodeResult) -> Certificate:
        """``"eisner"``: optimal among projective trees for arc-factored scores."""
        return Certificate("eisner", result.value)

    def decode_arcs(self, S: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = eisner(S, self.single_root)
        return tree_result(S, heads, {"time_decode": time.perf_counter() - start})
