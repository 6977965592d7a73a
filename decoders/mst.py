"""The ``mst`` decoder: exact arc-factored non-projective decoding by the maximum
spanning arborescence (:func:`decoders.trees.chu_liu_edmonds`), its k best trees
(:mod:`decoders.kbest`) and its labeled search (:mod:`decoders.labeled_search`)."""

from __future__ import annotations

import numpy as np

from .base import Budget, ScoredTree, register
from .kbest import kbest_arborescences
from .labeled_search import mst_relaxation, projective_restriction, search_or_program
from .parts import Parts
from .tree_decoders import TreeAlgorithmDecoder
from .trees import chu_liu_edmonds


@register("mst")
class MSTDecoder(TreeAlgorithmDecoder):
    """Exact arc-factored non-projective decoding by maximum spanning arborescence
    (:class:`~decoders.tree_decoders.TreeAlgorithmDecoder`)."""

    gives_kbest = True
    honors_constraints = True
    preference = 0
    algorithm = staticmethod(chu_liu_edmonds)

    def decode_labeled(self, parts: Parts, scores: np.ndarray, problem):
        """Exact labeled decoding under the ARC block of ``scores``: branch and bound on
        the constraints with the maximum spanning tree as its bound
        (:mod:`decoders.labeled_search`). Out of nodes, the best projective tree that
        satisfies the constraints (the same search over Eisner's trees) with the best
        open bound (``stats.fallback``); a sentence neither settles goes to the
        labeled ILP (:func:`~decoders.labeled.solve_labeled`;
        ``stats.search_gave_up``); all within :attr:`time_limit`."""
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
