"""Dual message passing on the factor graph (``docs/algorithms.md`` section 5):
DLPW (Meshi et al. 2010, star updates, Eq. 11) at temperature 0 and Hazan and Urtasun
(2010) block coordinate descent on the smoothed dual at temperature ``t > 0``.

The per-sentence dual state is one flat ``float64`` array of message differences
``delta_ci(1) - delta_ci(0)`` (the dual is invariant to a common shift of both):
``state[c]`` pairwise factor c to its variable ``pair_i[c]``, ``state[P + c]`` to
``pair_j[c]``, ``state[2P + a]`` the TREE factor to arc variable a (:func:`state_size`).

Dual (t = 0)::

    g(delta) = sum_a max(0, theta_a + sum_c delta_ca)
             + sum_c max_{y_i, y_j} (s_c y_i y_j - delta_ci y_i - delta_cj y_j)
             + max_tree (- sum_a delta_Ta y_a)

At ``t > 0`` each max becomes ``t log sum exp(. / t)`` (all counting numbers 1: variables,
pairwise factors and the TREE factor; the TREE soft max is ``t log Z`` by the
matrix-tree theorem). The smoothed dual upper-bounds the hard one.

Both run as numba kernels (:mod:`decoders._message_kernels`); the Hazan-Urtasun TREE
messages come from the inverse of the matrix-tree Laplacian, kept current by
Sherman-Morrison rank-one updates (``docs/algorithms.md`` section 5b).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _message_kernels
from .factor_graph import FactorGraph
from .matrix_tree import IllConditionedError
from .trees import raise_for_status


class DualResult(NamedTuple):
    value: float
    """The dual value ``g(delta)`` after the sweeps (smoothed at ``t > 0``)."""
    arc_beliefs: np.ndarray
    """``float64 (A,)``: per arc the local maximizer of its variable term (0/1), or its
    soft belief ``sigmoid(b_a / t)`` at ``t > 0``."""
    pair_beliefs: np.ndarray
    """``float64 (P,)``: per pairwise factor the (soft) belief of its (1, 1) state."""


def state_size(graph: FactorGraph) -> int:
    """Floats of dual state: 2 per pairwise factor plus 1 per arc."""
    return 2 * graph.n_pairs + graph.n_arcs


def _split(graph: FactorGraph, state: np.ndarray):
    P = graph.n_pairs
    if state.shape != (state_size(graph),):
        raise ValueError(f"state must have shape ({state_size(graph)},), got {state.shape}")
    return state[:P], state[P:2 * P], state[2 * P:]


def _softplus(x: np.ndarray, t: float) -> np.ndarray:
    """``t log(1 + exp(x / t))`` (``max(0, x)`` at ``t == 0``)."""
    if t == 0.0:
        return np.maximum(x, 0.0)
    return t * np.logaddexp(0.0, x / t)


def _beliefs(graph: FactorGraph, state: np.ndarray) -> np.ndarray:
    return _message_kernels.incoming(graph.unary, graph.pair_i, graph.pair_j, state)


def _tree_soft(graph: FactorGraph, theta: np.ndarray, t: float) -> tuple[np.ndarray, float]:
    """TREE marginals and ``t log Z`` at ``t > 0``, with the arcs in every tree taken out
    of the matrix-tree (their scores are a constant) and those in no tree removed
    (:attr:`FactorGraph.forced_arcs`), so that their (clipped, huge) messages do not
    break the conditioning."""
    always, never = graph.forced_arcs
    work = theta.copy()
    constant = float(work[always].sum())
    work[always] = 0.0
    work[never] = -np.inf
    try:
        with np.errstate(divide="ignore"):
            mu, value = graph.tree_marginals(work, t)
    except IllConditionedError:  # scores / t span too wide a range: the max (section 5b)
        mu, value = graph.tree_marginals(work, 0.0)
    mu = mu.copy()
    mu[always] = 1.0
    mu[never] = 0.0
    return mu, value + constant


def dual_value(graph: FactorGraph, state: np.ndarray, temperature: float = 0.0) -> float:
    """``g(delta)`` (section 5 of ``docs/algorithms.md``), smoothed at ``t > 0``."""
    di, dj, _ = _split(graph, state)
    t = float(temperature)
    return _dual_value(graph, state, t, graph.pair_oracles(-di, -dj, t))


def _dual_value(graph: FactorGraph, state: np.ndarray, t: float, pairs) -> float:
    """``g(delta)`` with the pairwise factors' oracles ``pairs`` at ``-delta`` given."""
    _, _, dt = _split(graph, state)
    value = float(_softplus(_beliefs(graph, state), t).sum()) + float(pairs.value.sum())
    if t > 0:
        value += _tree_soft(graph, -dt, t)[1]
    else:
        value += graph.tree_map(-dt)[1]
    return value


def sweeps(graph: FactorGraph, state: np.ndarray, *, sweeps: int,
           temperature: float = 0.0) -> DualResult:
    """``sweeps`` passes of star updates over all arc variables, in place on ``state``,
    in one numba call: DLPW at ``t == 0`` (exact TREE max-marginals per update),
    Hazan-Urtasun at ``t > 0`` (TREE marginals kept current by rank-one updates of the
    Laplacian's inverse, :func:`decoders._message_kernels.hu_sweeps`)."""
    t = float(temperature)
    if t < 0 or not np.isfinite(t):
        raise ValueError(f"temperature must be finite and >= 0, got {temperature}")
    _split(graph, state)
    if sweeps > 0 and graph.n_arcs:
        common = (graph.n, graph.arc_h, graph.arc_m, graph.unary, graph.pair_score,
                  graph.single_root, *graph.incidence)
        if t == 0.0:
            status = _message_kernels.dlpw_sweeps(*common, state, int(sweeps))
        else:
            always, never = graph.forced_arcs
            status = _message_kernels.hu_sweeps(*common, always, never, state, int(sweeps), t)
        raise_for_status(status, "spanning tree")
    return result_of(graph, state, t)


def result_of(graph: FactorGraph, state: np.ndarray, temperature: float = 0.0) -> DualResult:
    """Value and beliefs at the current ``state``."""
    t = float(temperature)
    di, dj, _ = _split(graph, state)
    b = _beliefs(graph, state)
    if t == 0.0:
        arc = (b > 0).astype(np.float64)
    else:
        arc = 0.5 * (1.0 + np.tanh(b / (2.0 * t)))
    pairs = graph.pair_oracles(-di, -dj, t)
    return DualResult(_dual_value(graph, state, t, pairs), arc,
                      np.ascontiguousarray(pairs.marginals[:, 2]))


def belief_scores(graph: FactorGraph, state: np.ndarray) -> np.ndarray:
    """``theta_a + sum_c delta_ca`` per arc (rounding: the MST of these)."""
    return _beliefs(graph, state)


def parts_output(graph: FactorGraph, result: DualResult) -> np.ndarray:
    """The beliefs as a vector over the graph's parts (:meth:`FactorGraph.to_parts`)."""
    return graph.to_parts(result.arc_beliefs, result.pair_beliefs)
