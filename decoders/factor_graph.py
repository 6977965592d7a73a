"""The factor graph of the order-2 model and its factors' oracles.

``docs/algorithms.md`` section 5 ("The factor graph"): one binary variable ``y_a`` per
candidate arc (after pruning) with unary score ``theta_a(1) = s_a``, ``theta_a(0) = 0``;
one pairwise factor per grandparent part ``(g, h, m)`` (variables ``y_gh, y_hm``) and per
all-pairs sibling part ``(h, m, s)`` (variables ``y_hm, y_hs``), scoring ``s_r`` on its
(1, 1) state only; and one TREE factor over all arc variables, 0 on arborescences rooted
at 0 (with exactly one root child if ``single_root``) and ``-inf`` elsewhere. On a tree,
the factor-graph score ``sum_a s_a y_a + sum_c s_c y_i y_j`` is the model's ``s @ z``
(:meth:`FactorGraph.score`, :meth:`FactorGraph.to_parts`).

As in AD3 (Martins et al. 2015), a factor is its oracles and nothing else reads its
insides: the trainers of section 5 (DLPW, Hazan-Urtasun, soft-BCFW, AD3) pass a factor
the scores they add on its variables' state 1 (messages, prices, reparameterizations) and
get back, at temperature ``t`` (``t == 0``: max; ``t > 0``: soft max
``t log sum exp(. / t)``, the local entropies of Hazan and Urtasun 2010):

- the value (MAP score, or ``t`` times the log-partition);
- the (soft) max-marginals of each of its variables (DLPW's ``gamma_ci``; at ``t > 0``
  the soft messages of Hazan and Urtasun);
- the marginals (at ``t == 0``: the indicator of a best state, soft-BCFW's MAP state).

Pairwise factors: closed forms over the four states, all factors in one kernel call
(:func:`decoders._factor_kernels.pair_oracles`). TREE factor: MAP by Chu-Liu-Edmonds
(:mod:`decoders.mst`), max-marginals by one kernel call
(:func:`decoders._factor_kernels.tree_max_marginals`), marginals and log-partition by the
matrix-tree theorem (:mod:`decoders.matrix_tree`, Koo et al. 2007).

Orders supported: 1 (arcs and the TREE factor) and 2 with all-pairs siblings. The other
part types are not pairwise: consecutive siblings and valency depend on the whole
sequence of a head's children on one side (a head-automaton factor, TurboParser's
``FactorHeadAutomaton``), and a non-projective arc on the ancestry of every word it spans;
:meth:`FactorGraph.from_parts` refuses them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import NamedTuple

import numpy as np

from . import _factor_kernels
from .matrix_tree import arc_marginals
from .trees import chu_liu_edmonds, raise_for_status
from .parts import Parts, PartType

#: Part types that become pairwise factors (the ARC parts are the variables).
PAIRWISE_TYPES = (PartType.GRANDPARENT, PartType.SIBLING)

#: What :class:`FactorGraph` computes from its structure alone, once (cached properties).
_STRUCTURAL = ("incidence", "forced_arcs")


class PairOracles(NamedTuple):
    """What :meth:`FactorGraph.pair_oracles` returns (P pairwise factors)."""

    value: np.ndarray
    """``float64 (P,)``: best state's score (``t == 0``) or ``t log Z_c``."""
    max_marginals: np.ndarray
    """``float64 (P, 2, 2)``: ``[c, k, y]`` (soft) max over the states with the factor's
    variable k (0: ``pair_i``, 1: ``pair_j``) in state y."""
    marginals: np.ndarray
    """``float64 (P, 3)``: ``p(y_i = 1), p(y_j = 1), p(y_i = y_j = 1)``; at ``t == 0`` the
    indicators of a best state."""


@dataclass(frozen=True)
class FactorGraph:
    """Binary arc variables, pairwise factors and one TREE factor, as flat arrays.

    Attributes
    ----------
    n:
        Number of words.
    single_root:
        The TREE factor allows exactly one root child (Universal Dependencies) when True,
        any number when False.
    arc_h, arc_m:
        ``int64 (A,)``: variable a is arc ``arc_h[a] -> arc_m[a]``.
    unary:
        ``float64 (A,)``: score of ``y_a = 1`` (the arc part's score).
    pair_i, pair_j:
        ``int64 (P,)``: the two arc variables of pairwise factor c (grandparent
        ``(g, h, m)``: ``(g, h), (h, m)``; siblings ``(h, m, s)``: ``(h, m), (h, s)``).
    pair_score:
        ``float64 (P,)``: score of factor c's (1, 1) state (the part's score).
    arc_rows, pair_rows:
        ``int64 (A,)``, ``(P,)``: the rows of the :class:`Parts` the graph was built from.
    n_parts:
        Number of parts of that :class:`Parts`.
    """

    n: int
    single_root: bool
    arc_h: np.ndarray
    arc_m: np.ndarray
    unary: np.ndarray
    pair_i: np.ndarray
    pair_j: np.ndarray
    pair_score: np.ndarray
    arc_rows: np.ndarray
    pair_rows: np.ndarray
    n_parts: int

    @classmethod
    def from_parts(cls, parts: Parts, scores: np.ndarray, *,
                   single_root: bool = True) -> FactorGraph:
        """The factor graph of ``parts`` (order 1, or 2 with all-pairs siblings).

        Parameters
        ----------
        parts:
            Candidate parts (e.g. :func:`decoders.higher_order.build_parts`).
        scores:
            ``float64 (len(parts),)`` part scores ``s``; NaN and ``+inf`` are refused.
        single_root:
            The TREE factor's variant.

        Raises
        ------
        ValueError
            On a part type that has no pairwise factor (consecutive siblings, valency,
            non-projective arcs), a pairwise part whose arcs are not candidates, or bad
            scores.

        Examples
        --------
        >>> from polyparse.decoders.higher_order import build_parts
        >>> parts = build_parts(2, order="2")  # 4 arcs, grandparents 0-1-2, 0-2-1, siblings 0:1,2
        >>> graph = FactorGraph.from_parts(parts, np.ones(len(parts)))
        >>> graph.n_arcs, graph.n_pairs
        (4, 3)
        >>> y = graph.arc_state([-1, 0, 1])  # arcs 0 -> 1 and 1 -> 2, grandparent 0-1-2
        >>> float(graph.score(y)) == float(np.ones(len(parts)) @ parts.from_heads([-1, 0, 1]))
        True
        """
        scores = _checked(scores, len(parts), "scores")
        others = [t.name for t, rows in parts.offsets.items() if rows.stop > rows.start
                  and t != PartType.ARC and t not in PAIRWISE_TYPES]
        if others:
            raise ValueError(f"no pairwise factor for part types {', '.join(others)}: the "
                             "factor graph supports order 1 and order 2 with all-pairs "
                             "siblings")
        arc_rows = np.arange(parts.block(PartType.ARC).start,
                             parts.block(PartType.ARC).stop, dtype=np.int64)
        arc_h = np.ascontiguousarray(parts.index[arc_rows, 1])
        arc_m = np.ascontiguousarray(parts.index[arc_rows, 2])
        variable = parts.arc_ids()
        pair_rows, pair_i, pair_j = [], [], []
        for part_type in PAIRWISE_TYPES:
            block = parts.block(part_type)
            rows = np.arange(block.start, block.stop, dtype=np.int64)
            h, m, x = parts.index[rows, 1], parts.index[rows, 2], parts.index[rows, 3]
            if part_type == PartType.GRANDPARENT:  # rows (h, m, g): arcs (g, h), (h, m)
                pair_i.append(variable[x, h])
                pair_j.append(variable[h, m])
            else:  # rows (h, m, s): arcs (h, m), (h, s)
                pair_i.append(variable[h, m])
                pair_j.append(variable[h, x])
            pair_rows.append(rows)
        pair_rows = np.concatenate(pair_rows)
        pair_i, pair_j = np.concatenate(pair_i), np.concatenate(pair_j)
        if (pair_i < 0).any() or (pair_j < 0).any():
            raise ValueError("a pairwise part's arcs are not all candidate arcs")
        return cls(n=parts.n, single_root=single_root, arc_h=arc_h, arc_m=arc_m,
                   unary=scores[arc_rows], pair_i=pair_i, pair_j=pair_j,
                   pair_score=scores[pair_rows], arc_rows=arc_rows, pair_rows=pair_rows,
                   n_parts=len(parts))

    def with_scores(self, scores: np.ndarray) -> FactorGraph:
        """This graph under other part scores ``scores`` (``float64 (n_parts,)``, checked
        as :meth:`from_parts` checks them), sharing the structure and what is computed
        from it alone (:attr:`incidence`, :attr:`forced_arcs`, computed on this graph at
        the first rescoring): a trainer keeps a sentence's graph across epochs and
        rescores it at each visit."""
        scores = _checked(scores, self.n_parts, "scores")
        graph = replace(self, unary=scores[self.arc_rows], pair_score=scores[self.pair_rows])
        for name in _STRUCTURAL:      # cached here once, shared by every rescoring
            graph.__dict__[name] = getattr(self, name)
        return graph

    def restrict(self, keep: np.ndarray) -> FactorGraph:
        """The graph on the arc variables where ``keep`` (``bool (A,)``) is True.

        A dropped arc is fixed to 0: the TREE factor keeps the trees made of kept arcs
        only, and a pairwise factor on a dropped arc, whose (1, 1) state no such tree
        reaches, goes too. ``arc_rows`` and ``pair_rows`` keep pointing into the original
        :class:`Parts`, so :meth:`to_parts` of the restricted graph is a structure of the
        original parts (0 on what was dropped). Branch and bound
        (:mod:`decoders.ad3_exact`) fixes arcs this way.
        """
        arcs, pairs = self.kept(keep)
        renumber = np.full(self.n_arcs, -1, dtype=np.int64)
        renumber[arcs] = np.arange(arcs.shape[0])
        return FactorGraph(n=self.n, single_root=self.single_root, arc_h=self.arc_h[arcs],
                           arc_m=self.arc_m[arcs], unary=self.unary[arcs],
                           pair_i=renumber[self.pair_i[pairs]],
                           pair_j=renumber[self.pair_j[pairs]],
                           pair_score=self.pair_score[pairs], arc_rows=self.arc_rows[arcs],
                           pair_rows=self.pair_rows[pairs], n_parts=self.n_parts)

    def kept(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(arcs, pairs)``: the indices of the arc variables and pairwise factors that
        :meth:`restrict` keeps, in order (the restricted graph's ``i``-th arc is this
        graph's ``arcs[i]``)."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_arcs,):
            raise ValueError(f"keep must have shape ({self.n_arcs},), got {keep.shape}")
        return np.flatnonzero(keep), np.flatnonzero(keep[self.pair_i] & keep[self.pair_j])

    @property
    def n_arcs(self) -> int:
        return int(self.arc_h.shape[0])

    @property
    def n_pairs(self) -> int:
        return int(self.pair_i.shape[0])

    @property
    def degrees(self) -> np.ndarray:
        """``int64 (A,)``: number of factors at each arc variable (its pairwise factors
        plus the TREE factor), DLPW's ``d_i``."""
        return np.bincount(np.concatenate([self.pair_i, self.pair_j]),
                           minlength=self.n_arcs) + 1

    @cached_property
    def incidence(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ptr, factor, side)``: the pairwise factors at arc variable a are
        ``factor[ptr[a]:ptr[a + 1]]``, a being their variable ``side`` (0: ``pair_i``,
        1: ``pair_j``); what the numba kernels of the trainers walk for a star update or a
        variable's block. Computed once per graph."""
        ends = np.concatenate([self.pair_i, self.pair_j])
        sides = np.repeat(np.array([0, 1], dtype=np.int64), self.n_pairs)
        factors = np.concatenate([np.arange(self.n_pairs, dtype=np.int64)] * 2)
        order = np.argsort(ends, kind="stable")
        ptr = np.zeros(self.n_arcs + 1, dtype=np.int64)
        ptr[1:] = np.cumsum(np.bincount(ends, minlength=self.n_arcs))
        return ptr, np.ascontiguousarray(factors[order]), np.ascontiguousarray(sides[order])

    # -- states and scores ---------------------------------------------------------------

    def arc_state(self, heads: np.ndarray) -> np.ndarray:
        """``float64 (..., A)`` 0/1 arc variables of the tree(s) ``heads`` ``(..., n + 1)``."""
        heads = np.asarray(heads, dtype=np.int64)
        return (heads[..., self.arc_m] == self.arc_h).astype(np.float64)

    def pair_state(self, arc_values: np.ndarray) -> np.ndarray:
        """``(..., P)`` value of each pairwise factor's (1, 1) state, ``y_i y_j``, for 0/1
        arc variables ``(..., A)``."""
        return arc_values[..., self.pair_i] * arc_values[..., self.pair_j]

    def score(self, arc_values: np.ndarray) -> np.ndarray:
        """Factor-graph score ``sum_a s_a y_a + sum_c s_c y_i y_j`` of 0/1 arc variables
        ``(..., A)`` (the TREE factor's 0: ``y`` is taken to be a tree)."""
        return arc_values @ self.unary + self.pair_state(arc_values) @ self.pair_score

    def to_parts(self, arc_values: np.ndarray, pair_values: np.ndarray) -> np.ndarray:
        """The structure vector ``z`` (one entry per part) of arc-variable values ``(A,)``
        and pairwise (1, 1) values ``(P,)``: integral states or marginals alike."""
        z = np.zeros(self.n_parts, dtype=np.float64)
        z[self.arc_rows] = arc_values
        z[self.pair_rows] = pair_values
        return z

    # -- pairwise factors -------------------------------------------------------------------

    def pair_oracles(self, a: np.ndarray, b: np.ndarray,
                     temperature: float = 0.0) -> PairOracles:
        """Value, max-marginals and marginals of every pairwise factor at once.

        Factor c scores ``y_i y_j pair_score[c] + a[c] y_i + b[c] y_j``: ``a``, ``b``
        ``(P,)`` are what the caller adds on its variables' state 1 (e.g. minus DLPW's
        messages ``delta_ci(1) - delta_ci(0)``). See
        :func:`decoders._factor_kernels.pair_oracles`.
        """
        t = _checked_temperature(temperature)
        return PairOracles(*_factor_kernels.pair_oracles(
            self.pair_score, _checked(a, self.n_pairs, "a", allow_neginf=True),
            _checked(b, self.n_pairs, "b", allow_neginf=True), t))

    # -- the TREE factor --------------------------------------------------------------------

    def tree_map(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """Heads and score of the best tree under arc scores ``theta`` ``(A,)``: the
        maximum spanning arborescence (Chu-Liu-Edmonds)."""
        S = self._arc_matrix(theta)
        heads = chu_liu_edmonds(S, self.single_root)
        return heads, float(_factor_kernels.tree_value(S, heads))

    @cached_property
    def forced_arcs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(in_every_tree, in_no_tree)``: boolean masks over the arcs, from the TREE
        max-marginals at zero scores; computed once per graph (the candidate arcs fix
        them)."""
        mm, _ = self.tree_max_marginals(np.zeros(self.n_arcs))
        return np.isneginf(mm[:, 0]), np.isneginf(mm[:, 1])

    def tree_max_marginals(self, theta: np.ndarray,
                           temperature: float = 0.0) -> tuple[np.ndarray, float]:
        """``(max_marginals, value)`` of the TREE factor under arc scores ``theta``.

        ``max_marginals[a, 1]`` is the (soft) max of ``theta @ y`` over the trees that
        contain arc a, ``[a, 0]`` over those that do not (``-inf`` if there are none);
        ``value`` the (soft) max over all trees. At ``t == 0``: exact constrained trees,
        ``|A|`` of them in one numba call (:func:`decoders._factor_kernels.
        tree_max_marginals`; per-sentence cost in ``eval/results/frozen/factor_oracles.md``).
        At ``t > 0``: from the matrix-tree marginals, ``value + t log mu_a`` and
        ``value + t log(1 - mu_a)`` (Hazan and Urtasun's TREE messages). ``mu_a`` carries
        the absolute error of the matrix-tree inverse (1e-16 to 1e-11 in the tests, more
        as ``theta / t`` spreads), so these are accurate to about ``t err / mu_a`` (and
        ``t err / (1 - mu_a)``): a state that no tree has may get a finite value, some
        ``t log(1 / err)`` below ``value``, in place of ``-inf`` (exact at ``t == 0``).
        """
        t = _checked_temperature(temperature)
        if t > 0.0:
            mu, value = self.tree_marginals(theta, t)
            mm = np.empty((self.n_arcs, 2))
            with np.errstate(divide="ignore"):
                mm[:, 0] = value + t * np.log1p(-mu)
                mm[:, 1] = value + t * np.log(mu)
            return mm, value
        S = self._arc_matrix(theta)
        mm, heads, status = _factor_kernels.tree_max_marginals(
            S, self.arc_h, self.arc_m, self.single_root)
        raise_for_status(status, "spanning tree")
        return mm, float(_factor_kernels.tree_value(S, heads))

    def tree_marginals(self, theta: np.ndarray,
                       temperature: float) -> tuple[np.ndarray, float]:
        """``(marginals (A,), value)`` of ``p(tree) ∝ exp(theta @ y / t)``.

        ``value = t log Z``; matrix-tree theorem (:func:`decoders.matrix_tree.
        arc_marginals`, which raises ``IllConditionedError`` when ``theta / t`` spans too
        wide a range for float64). At ``t == 0``: the best tree's indicator and score.
        """
        t = _checked_temperature(temperature)
        if t == 0.0:
            heads, value = self.tree_map(theta)
            return self.arc_state(heads), value
        marginals, log_z = arc_marginals(self._arc_matrix(theta) / t, self.single_root)
        return marginals[self.arc_h, self.arc_m], t * log_z

    def _arc_matrix(self, theta: np.ndarray) -> np.ndarray:
        return _factor_kernels.arc_matrix(
            self.n, self.arc_h, self.arc_m,
            _checked(theta, self.n_arcs, "theta", allow_neginf=True))


def largest_score(*scores: np.ndarray) -> float:
    """The largest absolute value in ``scores`` (1 if all are 0 or empty): the scale AD3
    divides a graph's scores by (:func:`decoders.ad3.score_scale`)."""
    top = max(float(np.abs(x).max(initial=0.0)) for x in scores)
    return top if top > 0.0 else 1.0


def _checked(values: np.ndarray, size: int, name: str, allow_neginf: bool = False) -> np.ndarray:
    """``values`` as a C-contiguous ``float64 (size,)`` array without NaN or +inf (nor
    -inf unless ``allow_neginf``)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {values.shape}")
    bad = np.isnan(values) | np.isposinf(values)
    if not allow_neginf:
        bad |= np.isneginf(values)
    if bad.any():
        raise ValueError(f"{name} holds NaN or {'+inf' if allow_neginf else 'infinite'} "
                         "values")
    return values


def _checked_temperature(temperature: float) -> float:
    t = float(temperature)
    if not (t >= 0.0 and np.isfinite(t)):
        raise ValueError(f"temperature must be finite and >= 0, got {temperature}")
    return t
