"""The ``mst`` decoder: exact arc-factored non-projective decoding by the maximum
spanning arborescence (:func:`decoders.trees.chu_liu_edmonds`), its k best trees
(:mod:`decoders.kbest`) and its labeled search (:mod:`decoders.labeled_search`)."""

from __future__ import annotations

import time

import numpy as np

from .base import Budget, Certificate, DecodeResult, Decoder, ScoredTree, register, tree_result
from .kbest import kbest_arborescences
from .labeled_search import mst_relaxation, projective_restriction, search_or_program
from .parts import Parts
from .trees import chu_liu_edmonds


@register("mst")
class MSTDecoder(Decoder):
    """Exact arc-factored non-projective decoding by maximum spanning arborescence.

    Only the ARC block of ``scores`` steers the search; the returned ``value`` is the
    full ``scores @ output`` of the tree (higher-order parts filled in by
    :meth:`Parts.from_heads`), so on higher-order parts this is the first-order
    approximation, not the optimum.
    """

    gives_kbest = True
    honors_constraints = True
    preference = 0

    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = chu_liu_edmonds(parts.arc_matrix(scores), self.single_root)
        elapsed = time.perf_counter() - start
        output = parts.from_heads(heads)
        return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                            stats={"time_decode": elapsed})

    def certificate(self, result: DecodeResult) -> Certificate:
        """``"mst"``: the maximum spanning tree is optimal for arc-factored scores."""
        return Certificate("mst", result.value)

    def decode_arcs(self, S: np.ndarray) -> DecodeResult:
        start = time.perf_counter()
        heads = chu_liu_edmonds(S, self.single_root)
        return tree_result(S, heads, {"time_decode": time.perf_counter() - start})

    def decode_labeled(self, parts: Parts, scores: np.ndarray, problem):
        """Exact labeled decoding under the ARC block of ``scores``: branch and bound on
        the constraints with the maximum spanning tree as its bound
        (:mod:`decoders.labeled_search`). Out of nodes, the best projective tree that
        satisfies the constraints (the same search over Eisner's trees) with the best
        open bound (``stats["fallback"]``); a sentence neither settles goes to the
        labeled ILP (:func:`~decoders.labeled.solve_labeled`;
        ``stats["search_gave_up"]``); all within :attr:`time_limit`."""
        return search_or_program(parts, scores, problem,
                                 mst_relaxation(parts, self.single_root),
                                 Budget(self.time_limit), single_root=self.single_root, relaxed=False,
                                 restriction=projective_restriction(parts,
                                                                    self.single_root))

    def kbest(self, parts: Parts, scores: np.ndarray, k: int) -> list[ScoredTree]:
        """The ``k`` best trees under the ARC block of ``scores``
        (:func:`decoders.kbest.kbest_arborescences`); their scores count the arcs only,
        which is the model's score for arc-factored parts."""
        return self.kbest_arcs(parts.arc_matrix(scores), k)

    def kbest_arcs(self, S: np.ndarray, k: int) -> list[ScoredTree]:
        return kbest_arborescences(S, k, self.single_root)
