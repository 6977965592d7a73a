"""Dual extragradient with Bregman (KL) projections (Taskar, Lacoste-Julien, Jordan 2006,
Figures 3 and 5; ``docs/algorithms.md`` sections 5 and 5b), for the arc-factored model.

The saddle point ``min_{||w|| <= gamma} max_{z in Z} L(w, z)``, with
``L(w, z) = sum_t (w^T F_t z_t + c_t^T z_t - w^T f_t(y_t))``, ``z_t`` a point of the
labeled-arborescence polytope of sentence ``t`` (``z_t[a, l]``: arc ``a`` with label
``l``), ``c_t`` the labeled Hamming cost (2 per wrong head, :data:`LABEL_COST` per
wrong label; its constant ``q`` included) and ``f_t(y_t)`` the gold tree's features.
``max_z L(w, z)`` is the sum of the structured hinge losses (slacks) of ``w``.

Geometry: Euclidean on ``W`` (centre 0, ``h = ||w||^2 / 2``), KL on each ``Z_t`` (the
negative entropy of the edge-factored distribution over labeled trees, centre the
uniform distribution). The Bregman projection ``T_eta(z, s)`` of a point ``z`` that is
the marginal vector of log-potentials ``theta`` is the marginal vector at
``theta + eta s`` (their Example 2): one matrix-tree (:func:`kl_projection`) on the arc
log-potentials ``logsumexp_l theta[a, l]``, each arc's labels distributed as
``softmax_l theta[a, l]``. Past :data:`MAX_SPREAD` nats of spread the marginals are
numerically a point mass and the MST indicator is taken instead (section 5b).

One epoch is one iteration of their memory-efficient Figure 5: ``v_w = Proj_W(eta
s_w)``; per sentence ``v_z = T(centre, t (F^T w_bar + c))`` and ``u_z = T(v_z, F^T v_w +
c)``; ``r_w = sum_t (f_t - F_t v_z)``, ``s_w += sum_t (f_t - F_t u_z)``;
``w_bar <- (t w_bar + Proj_W(v_w + eta r_w)) / (t + 1)``. The model after an epoch is
``w_bar``. The per-sentence state is ``z_bar`` (the average of the ``u_z``' arc
marginals) and the average of ``c^T u_z``: with ``s_w`` they give the gap function
(their Eq. 17) of the averaged iterate ``(w_bar, z_bar)``, reported per epoch,

``G = sum_t slack_t(w_bar) - sum_t c_t^T z_bar_t + gamma ||sum_t (F_t z_bar_t - f_t)||``,

the first term by loss-augmented MST at ``w_bar``, computed in the next epoch's pass from
the scores at ``w_bar`` that its ``v_z`` needs anyway (an epoch's figures are yielded
once they are known, with ``model.weights`` still that epoch's ``w_bar``; the last
epoch takes one pass of scoring and MSTs more). ``G >= 0``, and Nesterov's bound
(their Eq. 19) makes it ``O(1/t)`` for ``eta <= 1/L``.

Order 1 only: the KL projection onto a polytope with second-order parts has no
matrix-tree form.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from polyparse.decoders import PartType, hamming_cost
from polyparse.decoders.matrix_tree import IllConditionedError, arc_marginals
from polyparse.decoders.trees import chu_liu_edmonds

from .. import _kernels
from ..inference import LABEL_COST
from ..state import SentenceStates
from .base import EpochStats, Trainer, register

log = logging.getLogger("polyparse.train")

_ORDER_1_ONLY = ("the extragradient trainer supports order 1 (the arc-factored model) only, "
                 "not order {}: its KL projection is the matrix-tree marginals of arc scores")

MAX_SPREAD = 300.0
"""Nats of spread of the arc log-potentials past which :func:`kl_projection` takes the
MST indicator (``docs/algorithms.md`` section 5b)."""


def kl_projection(theta: np.ndarray, arcs: np.ndarray, n: int,
                  single_root: bool) -> np.ndarray:
    """Arc marginals of ``p(tree) ∝ exp(sum_{a in tree} theta[a])``: the KL (Bregman)
    projection onto the arborescence polytope (:func:`~decoders.matrix_tree.arc_marginals`).

    Parameters
    ----------
    theta:
        ``float64 (n_arcs,)`` log-potentials of the candidate ``arcs``.
    arcs:
        ``int (n_arcs, 2)`` heads and modifiers.
    n:
        Words of the sentence.
    single_root:
        Trees with exactly one root child.

    Returns
    -------
    ``float64 (n_arcs,)`` marginals; the 0/1 indicator of the maximum spanning tree
    when the finite log-potentials spread over more than :data:`MAX_SPREAD` nats or the
    Laplacian is ill-conditioned.
    """
    S = np.full((n + 1, n + 1), -np.inf)
    S[arcs[:, 0], arcs[:, 1]] = theta
    finite = theta[np.isfinite(theta)]
    if finite.size and finite.max() - finite.min() <= MAX_SPREAD:
        try:
            marginals, _ = arc_marginals(S, single_root)
            return marginals[arcs[:, 0], arcs[:, 1]]
        except IllConditionedError:
            pass
    heads = chu_liu_edmonds(S, single_root)
    return (heads[arcs[:, 1]] == arcs[:, 0]).astype(np.float64)


def _labeled_projection(theta: np.ndarray, arcs: np.ndarray, n: int,
                        single_root: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(mu, pi)``: arc marginals and per-arc label distributions of the labeled-tree
    distribution with log-potentials ``theta`` ``(n_arcs, n_labels)``."""
    top = theta.max(axis=1, keepdims=True)
    weights = np.exp(theta - top)
    total = weights.sum(axis=1, keepdims=True)
    pi = weights / total
    return kl_projection(top[:, 0] + np.log(total[:, 0]), arcs, n, single_root), pi


@register("extragradient")
class ExtragradientTrainer(Trainer):
    """Dual extragradient, KL projections on trees (Taskar et al. 2006); order 1 only.

    One epoch is one batch iteration (one step of ``w``); after a run, ``eta_`` and
    ``gamma_`` hold the step size and radius used. No ``--jobs``: sentences run in turn.

    Parameters
    ----------
    eta:
        The step size eta of Figure 5; None takes ``1 / L`` with ``L = sqrt(sum_t
        ||f_t(y_t)||^2)``, the Lipschitz constant of the gradient operator between the
        Euclidean norm on ``w`` and the norms of the tree distributions' variation,
        estimated with each gold tree's feature norm.
    radius:
        gamma, the radius of the ball ``W``; None derives it from ``lambda_``.
    lambda_:
        For ``radius`` None: ``gamma = sqrt(2 mean_t(2 n_t) / lambda)``, the ball that
        holds the minimizer of ``(lambda/2)||w||^2 + mean slack`` (see
        :mod:`~learning.trainers.pegasos`).
    """

    stateful = True

    def __init__(self, *, eta: float | None = None, radius: float | None = None,
                 lambda_: float = 1e-5, **kwargs) -> None:
        super().__init__(**kwargs)
        if eta is not None and not (eta > 0 and np.isfinite(eta)):
            raise ValueError("eta must be finite and > 0")
        if radius is not None and not radius > 0:
            raise ValueError("radius must be > 0")
        if lambda_ <= 0:
            raise ValueError("lambda must be > 0")
        self.eta = eta
        self.radius = radius
        self.lambda_ = lambda_

    def state_size(self, parts):
        """``z_bar`` over the arcs, then the average of ``c^T u_z``."""
        return parts.block(PartType.ARC).stop - parts.block(PartType.ARC).start + 1

    def check_parts(self, parts):
        """Order 1 only: arcs are the only parts."""
        if parts.part_types != {PartType.ARC}:
            raise ValueError(_ORDER_1_ONLY.format(parts.order))

    # -- the pieces -----------------------------------------------------------------

    @staticmethod
    def _labeled_scores(model, example, w, p):
        """``s[a, l] = (F^T w + c)[a, l]`` without the constant ``q``, and the model's
        :class:`~learning.model.Scores` (cost-augmented labels)."""
        scores = model.scores(example, w, label_cost=LABEL_COST)
        rows = np.arange(scores.labels.size)
        part_only = scores.parts - scores.label_scores[rows, scores.labels]
        return scores.label_scores + (part_only + p)[:, None], scores

    def _add_features(self, out, model, example, mu, pi, sign):
        pf, lf = example.part_features, example.label_features
        _kernels.add_expected_features(out, model.part_dim, len(model.labels), pf.indptr,
                                       pf.indices, pf.data, lf.indptr, lf.indices, lf.data,
                                       mu, pi, float(sign))

    @staticmethod
    def _cost(example, p, q, mu, pi):
        """``c^T z`` (with ``q``) of the labeled arc vector ``(mu, pi)``."""
        rows = np.flatnonzero(example.gold_labels >= 0)
        wrong = 1.0 - pi[rows, example.gold_labels[rows]]
        return float(p @ mu + q + LABEL_COST * (mu[rows] @ wrong))

    def _project_w(self, w):
        norm = np.linalg.norm(w)
        return w if norm <= self.gamma_ else w * (self.gamma_ / norm)

    # -- the run ----------------------------------------------------------------------

    def run(self, examples, model, decoder):
        self.check_parts(model.part_config)
        single_root = decoder.single_root
        m = len(examples)
        states = SentenceStates.allocate(examples, self.state_size)

        # f = sum_t f_t(y_t), the gold trees' norms and lengths
        f_total = np.zeros(model.dim)
        gold_sq = 0.0
        max_cost = 0.0
        for i in range(m):
            example = examples[i]
            # -f_t(y_t), sparse: the feature difference of the empty structure
            indices, values = model.feature_difference(example, np.zeros(len(example.gold)),
                                                       np.zeros(len(example.gold), np.int64))
            indices, inverse = np.unique(indices, return_inverse=True)
            values = np.bincount(inverse, weights=values)
            gold_sq += float(values @ values)
            f_total[indices] -= values
            max_cost += 2.0 * example.parts.n
        self.gamma_ = (self.radius if self.radius is not None
                       else float(np.sqrt(2.0 * (max_cost / m) / self.lambda_)))
        self.eta_ = self.eta if self.eta is not None else 1.0 / np.sqrt(max(gold_sq, 1e-12))
        eta = self.eta_
        log.info("extragradient: eta %.4g, radius %.4g", eta, self.gamma_)

        s_w = np.zeros(model.dim)
        w_bar = np.zeros(model.dim)
        done = None     # the last iteration's figures, until its slack sum is known
        for t in range(self.epochs):
            start = time.perf_counter()
            v_w = self._project_w(eta * s_w)
            r_w = f_total.copy()
            s_w += f_total
            slack = 0.0     # at w_bar of iteration t - 1: the slack term of its G
            for i in range(m):
                example = examples[i]
                parts = example.parts
                arcs, n = parts.arcs, parts.n
                p, q = hamming_cost(parts, example.gold)
                s_bar, scores = self._labeled_scores(model, example, w_bar, p)
                if t:
                    slack += _slack(parts, s_bar.max(axis=1), q, scores.gold, single_root)
                theta = (eta * t) * s_bar
                mu_v, pi_v = _labeled_projection(theta, arcs, n, single_root)
                self._add_features(r_w, model, example, mu_v, pi_v, -1.0)
                s_v, _ = self._labeled_scores(model, example, v_w, p)
                theta += eta * s_v
                mu_u, pi_u = _labeled_projection(theta, arcs, n, single_root)
                self._add_features(s_w, model, example, mu_u, pi_u, -1.0)
                state = states[i]
                state[:-1] += (mu_u - state[:-1]) / (t + 1)
                state[-1] += (self._cost(example, p, q, mu_u, pi_u) - state[-1]) / (t + 1)
            if done is not None:    # model.weights is still iteration t - 1's w_bar
                yield self._stats(*done, slack, m)
            u_w = self._project_w(v_w + eta * r_w)
            w_bar += (u_w - w_bar) / (t + 1)
            model.weights = w_bar.copy()
            # sum_t c_t^T z_bar_t, ||sum_t (F_t z_bar_t - f_t)||, seconds
            done = (t + 1, float(sum(states[i][-1] for i in range(m))),
                    float(np.linalg.norm(s_w)) / (t + 1), time.perf_counter() - start)
        start = time.perf_counter()
        slack = 0.0
        for i in range(m):
            example = examples[i]
            p, q = hamming_cost(example.parts, example.gold)
            s_bar, scores = self._labeled_scores(model, example, w_bar, p)
            slack += _slack(example.parts, s_bar.max(axis=1), q, scores.gold, single_root)
        epoch, cost_z, g_norm, seconds = done
        yield self._stats(epoch, cost_z, g_norm, seconds + time.perf_counter() - start, slack, m)

    def _stats(self, epoch, cost_z, g_norm, seconds, slack, m):
        """The epoch's figures: ``G = primal - dual`` with ``primal = max_z L(w_bar, z)``
        (``slack``, the sum of the slacks) and ``dual = min_{w in W} L(w, z_bar) =
        sum_t c_t^T z_bar_t - gamma ||sum_t (F_t z_bar_t - f_t)||``."""
        dual = cost_z - self.gamma_ * g_norm
        gap = slack - dual
        stats = EpochStats(epoch, slack / m, slack / m, seconds,
                           extra={"G": gap, "primal": slack, "dual": dual})
        log.info("epoch %d: G %.4g (primal %.4f, dual %.4f), %.1f s", epoch, gap, slack,
                 dual, seconds)
        return stats


def _slack(parts, arc_scores, q, gold, single_root):
    """The slack ``max_z (s + p)^T z + q - s(z*)`` of one sentence by loss-augmented MST;
    ``arc_scores`` are ``s + p`` per arc, each with its best (cost-augmented) label."""
    S = parts.arc_matrix(arc_scores)
    heads = chu_liu_edmonds(S, single_root)
    return float(S[heads[1:], np.arange(1, parts.n + 1)].sum()) + q - gold
