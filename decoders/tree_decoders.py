"""The arc-factored decoders' common part: a tree algorithm over the arc score matrix
(:mod:`decoders.trees`), exact for arc-factored scores, whose certificate is its own
name (``mst``, ``eisner``)."""

from __future__ import annotations

import time
from typing import Callable, ClassVar

import numpy as np

from .base import Certificate, DecodeResult, DecodeStats, Decoder, tree_result
from .parts import Parts


class TreeAlgorithmDecoder(Decoder):
    """Exact arc-factored decoding by :attr:`algorithm`.

    Only the ARC block of ``scores`` steers the search; the returned ``value`` is the
    full ``scores @ output`` of the tree (higher-order parts filled in by
    :meth:`Parts.from_heads`), so on higher-order parts this is the first-order
    approximation, not the optimum.
    """

    algorithm: ClassVar[Callable[[np.ndarray, bool], np.ndarray]]
    """``(S, single_root) -> heads``: the best tree of the class of trees it decodes."""

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = type(self).algorithm(parts.arc_matrix(scores), self.single_root)
        elapsed = time.perf_counter() - start
        output = parts.from_heads(heads)
        return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                            stats=DecodeStats(time_decode=elapsed))

    def certificate(self, result: DecodeResult) -> Certificate:
        """The decoder's own kind (``"mst"``, ``"eisner"``): its tree is optimal for
        arc-factored scores (among projective trees for ``eisner``)."""
        return Certificate(self.name, result.value)

    def decode_arcs(self, S: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = type(self).algorithm(S, self.single_root)
        return tree_result(S, heads, DecodeStats(time_decode=time.perf_counter() - start))
