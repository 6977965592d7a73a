"""The ``eisner`` decoder: exact arc-factored projective decoding by Eisner's algorithm
(:func:`decoders.trees.eisner`, Eisner 1996). The single-root variant lets the root
take exactly one child; the unconstrained one lets it take any number."""

from __future__ import annotations

import time

import numpy as np

from .base import Certificate, DecodeResult, Decoder, register, tree_result
from .parts import Parts
from .trees import eisner


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
