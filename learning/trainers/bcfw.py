"""Soft-BCFW: block-coordinate Frank-Wolfe on the soft-constrained dual of the relaxed
structured SVM (Meshi, Srebro, Hazan 2015, Algorithm 1; ``docs/algorithms.md`` sections 5
and 5b).

The dual ``f_rho(mu) = mu . l - (lambda/2)||Psi mu||^2 - (rho/2)||A mu||^2`` (their Eq.
5) has one simplex block per arc variable (off, or on with a label), per pairwise factor
(grandparent and sibling parts) and per sentence's TREE factor, whose marginals are kept
as an arc vector (a convex combination of trees). A block's gradient is its
reparameterized score ``theta_hat / M``; its Frank-Wolfe vertex is its best state (for
the TREE, the maximum spanning tree under ``-2 delta_T``); the step is the exact line
search on the block, clipped to ``[0, 1]``. ``w = Psi mu`` and ``delta = A mu`` are kept
current by sparse updates (their Appendix D), so ``w`` is the model at every moment
(with ``average``, the model is a weighted average of the epochs' ``w``). The duality
gap ``g_rho - f_rho`` (the sum of the block gaps, their footnote 6) is reported after
every ``gap_every`` epochs and stops training at ``gap_tolerance``.
For any finite rho the optimum is the soft objective's, above the LP-relaxed one (their
Theorem 4.1); with ``multiplier_every`` the Lagrange multipliers of the agreement
constraints are updated in an outer loop (the augmented Lagrangian of their section 7),
which moves the optimum to the LP-relaxed one at any rho.

Each sentence visited (in a random order per epoch) gets one pass over its blocks in a
random order, in one numba call (:func:`learning._bcfw_kernels.sweep`). Orders 1 and 2
with all-pairs siblings (the factor graph's).
"""

from __future__ import annotations

import logging
import time

import numpy as np

from polyparse.decoders.trees import raise_for_status

from .. import _bcfw_kernels as kernels
from ..inference import LABEL_COST
from ..state import SentenceStates
from .base import EpochStats, OnFactorGraph, Trainer, register

log = logging.getLogger("polyparse.train")


@register("bcfw")
class SoftBCFWTrainer(OnFactorGraph, Trainer):
    """Soft-BCFW (Meshi, Srebro, Hazan 2015): Frank-Wolfe steps on blocks of the
    soft-constrained dual; ``w`` follows the dual. Orders 1 and 2 (all-pairs siblings).

    Parameters
    ----------
    lambda_:
        Regularization constant of ``(lambda/2)||w||^2 + (1/m) sum_t r_t(w)``.
    rho:
        The penalty on disagreement between a factor's and its variables' marginals,
        ``(rho/2)||A mu||^2`` (the paper finds 1 good; smaller is closer to the LP
        relaxation and slower).
    gap_every:
        Epochs between two computations of the duality gap (one pass of oracles at fixed
        ``w``, not counted in the epoch's seconds); 0: never.
    gap_tolerance:
        Stop once the duality gap is at most this (0: run every epoch).
    pairwise:
        Pairwise Frank-Wolfe steps on the arc and pair blocks (Lacoste-Julien and Jaggi
        2015; not in the paper): mass moves from the block's worst state in use to its
        best, which converges linearly where Frank-Wolfe's steps zigzag towards a
        fractional optimum. The TREE block keeps Frank-Wolfe steps.
    multiplier_every:
        Epochs between two updates ``nu <- nu + A mu`` of the multipliers of the
        agreement constraints (the method of multipliers, the paper's section 7: the soft
        dual then gains the term ``- rho nu . A mu`` and its optimum satisfies ``A mu =
        0``, the LP relaxation's); 0: none, Algorithm 1 as published. The duality gap is
        then the current outer step's.
    average:
        Leave in the model the average of the epochs' last iterates weighted by epoch
        number, ``w_bar_k = w_bar_{k-1} + 2 / (k + 1) (w_k - w_bar_{k-1})`` (the weighted
        averaging of BCFW, Lacoste-Julien et al. 2013, section 4, taken per epoch rather
        than per step), as SSG leaves its average; the certificate stays that of ``w``.
    """

    stateful = True

    def __init__(self, *, lambda_: float = 1e-5, rho: float = 1.0, gap_every: int = 1,
                 gap_tolerance: float = 0.0, pairwise: bool = False,
                 multiplier_every: int = 0, average: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        if not (lambda_ > 0 and np.isfinite(lambda_)):
            raise ValueError("lambda must be finite and > 0")
        if not (rho > 0 and np.isfinite(rho)):
            raise ValueError("rho must be finite and > 0")
        if gap_every < 0 or gap_tolerance < 0 or multiplier_every < 0:
            raise ValueError("gap_every, gap_tolerance and multiplier_every must be >= 0")
        self.lambda_ = lambda_
        self.rho = rho
        self.gap_every = gap_every
        self.gap_tolerance = gap_tolerance
        self.pairwise = pairwise
        self.multiplier_every = multiplier_every
        self.average = average
        self.n_labels: int | None = None

    def state_size(self, parts):
        """Floats per sentence: ``A (L + 3) + 6 P`` (:func:`learning._bcfw_kernels.layout`;
        the label count ``L`` is the model's, known once a run starts), and ``A + 2 P``
        more for the multipliers when ``multiplier_every`` is set."""
        graph = self.graph(parts)
        size = int(kernels.layout(graph.n_arcs, graph.n_pairs, self.n_labels or 1)[-1])
        multipliers = graph.n_arcs + 2 * graph.n_pairs if self.multiplier_every else 0
        return size + multipliers

    def run(self, examples, model, decoder):
        self.n_labels = len(model.labels)
        M = len(examples)
        single_root = decoder.single_root
        rng = np.random.default_rng(self.seed)
        states = SentenceStates.allocate(examples, self.state_size)
        w = np.zeros(model.dim)
        w_bar = np.zeros(model.dim) if self.average else None
        blocks = np.empty((M, 2), dtype=np.int64)      # (A, P) per sentence
        for i in range(M):
            example = examples[i]
            graph = self.graph(example.parts, single_root)
            blocks[i] = graph.n_arcs, graph.n_pairs
            gold_arc = example.gold[graph.arc_rows]
            kernels.init_state(states[i], graph.n_arcs, graph.n_pairs, self.n_labels,
                               gold_arc, example.gold_labels, graph.pair_i, graph.pair_j)
        for epoch in range(1, self.epochs + 1):
            start = time.perf_counter()
            seen = 0.0
            for i in rng.permutation(M):
                example = examples[int(i)]
                graph = self.graph(example.parts, single_root)
                order = rng.permutation(graph.n_arcs + graph.n_pairs + 1)
                gaps, status = kernels.sweep(w, *self._common(model, example, graph),
                                             states[int(i)], order, self.lambda_,
                                             self.rho, float(M), self.pairwise)
                raise_for_status(status, "spanning tree")
                seen += gaps
            seconds = time.perf_counter() - start
            if w_bar is None:
                model.weights = w.copy()
            else:
                w_bar += 2.0 / (epoch + 1) * (w - w_bar)
                model.weights = w_bar.copy()
            extra = {"gaps_seen": seen}
            objective = float("nan")
            mean_slack = float("nan")
            if self.gap_every and (epoch % self.gap_every == 0 or epoch == self.epochs):
                cert = self.certificate(examples, model, w, states, single_root)
                extra.update(duality_gap=cert["gap"], dual=cert["dual"],
                             violation=cert["violation"], gap_trees=cert["gap_trees"],
                             certificate_s=cert["seconds"])
                objective = cert["primal"]
                mean_slack = cert["primal"] - 0.5 * self.lambda_ * float(w @ w)
            stats = EpochStats(epoch, objective, mean_slack, seconds, extra=extra)
            log.info("epoch %d: objective %.4f, %.1f s%s", epoch, objective, seconds,
                     "".join(f", {k} {v:.4g}" for k, v in extra.items()))
            yield stats
            if "duality_gap" in extra and extra["duality_gap"] <= self.gap_tolerance:
                break
            if self.multiplier_every and epoch % self.multiplier_every == 0:
                kernels.update_multipliers(states.values, states.offsets, blocks,
                                           self.n_labels)

    def certificate(self, examples, model, w: np.ndarray, states: SentenceStates,
                    single_root: bool) -> dict:
        """The duality gap at ``w = Psi mu`` twice: as the sum of the block gaps
        (``gap``) and as ``primal - dual`` (``g_rho - f_rho``, ``gap_direct``), and the
        disagreement ``violation = ||A mu||`` between factors and variables."""
        start = time.perf_counter()
        M = float(len(examples))
        gaps = np.zeros(3)
        maxes = loss = violation_sq = nu_dot = 0.0
        for i in range(len(examples)):
            example = examples[i]
            graph = self.graph(example.parts, single_root)
            g, mx, ls, vsq, nd, status = kernels.certificate(
                w, *self._common(model, example, graph), states[i], M)
            raise_for_status(status, "spanning tree")
            gaps, maxes, loss = gaps + g, maxes + mx, loss + ls
            violation_sq, nu_dot = violation_sq + vsq, nu_dot + nd
        w_sq = float(w @ w)
        primal = 0.5 * self.lambda_ * w_sq + maxes / M + 0.5 * self.rho * violation_sq
        dual = (loss / M - 0.5 * self.lambda_ * w_sq - 0.5 * self.rho * violation_sq
                - self.rho * nu_dot)
        return {"gap": float(gaps.sum()), "gap_direct": primal - dual, "primal": primal,
                "dual": dual, "violation": float(np.sqrt(violation_sq)),
                "gap_arcs": float(gaps[0]), "gap_pairs": float(gaps[1]),
                "gap_trees": float(gaps[2]), "seconds": time.perf_counter() - start}

    def _common(self, model, example, graph):
        """The kernels' arguments that describe the sentence and the model."""
        pf, lf = example.part_features, example.label_features
        ptr, fac, side = graph.incidence
        return (model.part_dim, self.n_labels, pf.indptr, pf.indices, pf.data, lf.indptr,
                lf.indices, lf.data, graph.n, graph.arc_h, graph.arc_m, graph.arc_rows,
                graph.pair_i, graph.pair_j, graph.pair_rows, ptr, fac, side,
                graph.single_root, example.gold[graph.arc_rows], example.gold_labels,
                LABEL_COST)

