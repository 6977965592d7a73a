"""Dual message-passing trainers: DLPW (Meshi et al. 2010) and Hazan and Urtasun (2010)
(``docs/algorithms.md`` sections 5 and 5b).

Per sampled sentence: ``R`` sweeps of block coordinate descent on that sentence's
messages (kept across epochs: the warm start is the point of the method) on the
factor graph of its parts (:mod:`decoders.factor_graph`) under the cost-augmented scores
``s + p``, then a Pegasos step on ``w`` with the subgradient of the dual at the current
messages: the feature difference of the beliefs (the local maximizers) against gold. The
slack reported is the dual bound ``g(delta) + q - s(z*)``, an upper bound on the relaxed
slack at every ``delta``.

Orders 1 and 2 with all-pairs siblings (the factor graph's); the known stall of DLPW with
a TREE factor (section 5b) applies.
"""

from __future__ import annotations

import numpy as np

from polyparse.decoders import DecodeResult, hamming_cost
from polyparse.decoders import message_passing as mp

from ..inference import LABEL_COST, constraint_of
from .base import OnFactorGraph, register
from .pegasos import PegasosTrainer


@register("dlpw")
class DLPWTrainer(OnFactorGraph, PegasosTrainer):
    """DLPW: dual loss primal weights (Meshi et al. 2010), Pegasos steps on ``w``.

    Parameters
    ----------
    sweeps:
        R, the passes of star updates over a sentence's arc variables per visit (the
        paper's R = 10).
    """

    stateful = True
    temperature = 0.0

    def __init__(self, *, sweeps: int = 10, **kwargs) -> None:
        super().__init__(**kwargs)
        if sweeps < 1:
            raise ValueError("sweeps must be >= 1")
        self.sweeps = sweeps

    def state_size(self, parts):
        return mp.state_size(self.graph(parts))

    def start(self, examples, decoder):
        super().start(examples, decoder)
        if len(examples):
            self.graph(examples[0].parts)
        self._dual_sum = 0.0
        self._count = 0

    def inference(self, example, model, decoder, relaxed, v, scale, state):
        scores = model.scores(example, v, scale, label_cost=LABEL_COST)
        p, q = hamming_cost(example.parts, example.gold)
        graph = self.graph(example.parts, decoder.single_root).with_scores(scores.parts + p)
        result = mp.sweeps(graph, state, sweeps=self.sweeps, temperature=self.temperature)
        heads, _ = graph.tree_map(mp.belief_scores(graph, state))
        output = mp.parts_output(graph, result)
        decoded = DecodeResult(output=output, heads=heads, value=result.value)
        self._dual_sum += result.value + q - scores.gold
        self._count += 1
        return constraint_of(model, example, scores, decoded, bound=result.value)

    def epoch_extra(self):
        """``dual_value``: mean over the epoch of ``g(delta) + q - s(z*)`` (the slack
        bound at the messages after each visit)."""
        extra = {"dual_value": self._dual_sum / max(self._count, 1)}
        self._dual_sum = 0.0
        self._count = 0
        return extra


@register("hu")
class HazanUrtasunTrainer(DLPWTrainer):
    """Hazan and Urtasun (2010): block coordinate descent on the smoothed dual
    (counting numbers 1 for variables, pairwise factors and the TREE factor), then a
    Pegasos step with the soft beliefs' feature difference. The TREE factor's messages
    come from the inverse of the matrix-tree Laplacian, kept current by rank-one
    (Sherman-Morrison) updates: O(n^2) per arc update.

    Parameters
    ----------
    sweeps:
        R, the passes of updates over a sentence's arc variables per visit.
    epsilon:
        The temperature; 0 is DLPW.
    """

    def __init__(self, *, sweeps: int = 2, epsilon: float = 0.1, **kwargs) -> None:
        super().__init__(sweeps=sweeps, **kwargs)
        if not (epsilon >= 0.0 and np.isfinite(epsilon)):
            raise ValueError("epsilon must be finite and >= 0")
        self.epsilon = epsilon
        self.temperature = float(epsilon)
