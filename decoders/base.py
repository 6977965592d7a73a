"""The decoder contract, its result type, the registry, and loss-augmented inference.

A decoder maximizes ``scores @ z`` over the structures ``z`` of a :class:`Parts` set
(exactly, over trees; or over a relaxation, returning the fractional optimum plus a
rounded tree). Loss-augmented inference (``docs/algorithms.md`` section 4) is the same
problem with the Hamming cost folded into the arc scores, so every decoder gets it for
free from :meth:`Decoder.decode_cost_augmented`.
"""

from __future__ import annotations

import copy
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .declared import Declared, Registry
from .parts import Parts, PartType, arc_parts


@dataclass(slots=True)
class DecodeStats:
    """What a decoder measured while decoding one sentence: one declared field per
    measurement, each filled by the decoders that make it (their ``Notes`` say which).

    A field a decoder does not measure keeps its default: False for what did not happen
    (no fallback, no rule fallback, ...) and None for what was not measured (a value, a
    count, a time). The fields are slots, so that a misspelt name fails when set
    (:meth:`update` too) instead of adding a measurement no reader looks for.
    """

    # what happened
    fallback: bool = False
    """The time limit (or, in a labeled search, the node limit) stopped the decoder
    before it finished: the tree is the best found by then (a decoder's
    :meth:`~Decoder.fallback_certificate`)."""
    fallback_stage: str | None = None
    """With a fallback, the stage it happened in: ``"build"``, ``"lp"``, ``"ilp"``
    (:mod:`decoders.ilp`, :mod:`decoders.lp`), ``"branch"`` (``ad3-exact``),
    ``"labeled"`` (:func:`~decoders.labeled.solve_labeled`), ``"search"``,
    ``"restriction"`` or ``"dive"`` (:func:`~decoders.labeled_search.search_labeled`)."""
    limit: str | None = None
    """What stopped a labeled search before it closed: ``"nodes"`` or ``"time"``."""
    relaxed: bool = False
    """The labeled program's LP relaxation was rounded (``lp``'s labeled decoding),
    rather than the program solved exactly."""
    rule_fallback: bool = False
    """The relaxed labeled program's rounded tree broke a constraint, so the exact
    program decided the sentence."""
    search_gave_up: bool = False
    """A labeled search did not settle the sentence, so the labeled program of HiGHS
    decided it (:func:`~decoders.labeled_search.search_or_program`)."""
    branched: bool | None = None
    """Whether branch and bound ran (the ILP's, or the labeled program's)."""
    converged: bool | None = None
    """Whether AD3 met its tolerance within its iterations."""
    integral: bool | None = None
    """Whether the relaxation's arcs (for ``ad3-exact``: the root's; for the labeled
    program: its arc and label variables) are integral."""
    certified: bool | None = None
    """AD3: whether the tree is proven optimal (the relaxation is tight at it, or, for
    ``ad3-exact``, the search closed)."""

    # bounds and values
    lp_value: float | None = None
    """The relaxation's optimum (for ``ad3``: the value of its best feasible point; for
    ``ad3-exact``: the root's); None when it was not solved."""
    dual_value: float | None = None
    """AD3's least dual value, an upper bound on every tree's score (for ``ad3-exact``:
    the largest bound of a closed or open node)."""
    root_dual_value: float | None = None
    """``ad3-exact``: the root relaxation's dual value."""
    rounded_value: float | None = None
    """The score of the relaxation's rounded tree."""
    upper_bound: float | None = None
    """A labeled search's bound on every feasible labeled tree (None: the search is
    exact), or a fallback's bound."""
    incumbent_value: float | None = None
    """The score of the ILP solver's incumbent at the time limit (None without one)."""

    # counts
    nodes: int | None = None
    """Branch-and-bound nodes solved (``ad3-exact``: after the root; a labeled search:
    relaxations)."""
    ilp_nodes: int | None = None
    """HiGHS's branch-and-bound nodes (0 without branching; None for PuLP solvers, or
    when HiGHS stopped before counting)."""
    arc_splits: int | None = None
    """Nodes of a labeled search split on a fractional arc."""
    iterations: int | None = None
    """AD3 iterations (over all calls and nodes)."""
    rounds: int | None = None
    """AD3 calls at full order, one per round of lazily added parts (over all nodes)."""
    active_heads: int | None = None
    """Heads whose non-projective-arc parts were added at full order (the most in one
    node)."""
    fractional_arcs: int | None = None
    """Arcs whose relaxed value is fractional."""
    search_moves: int | None = None
    """Head changes made by the local search of the rounded tree."""
    cut_rounds: int | None = None
    """Rounds of projectivity cuts of the labeled program."""
    cuts: int | None = None
    """Projectivity cuts added to the labeled program."""

    # times, in seconds
    time_build: float | None = None
    """Building the programs."""
    time_lp: float | None = None
    """Solving the relaxation (for ``ilp``: the LP first, rounding included; for
    ``ad3-exact``: the root, rounding included); None when the time limit stopped the
    decoder before."""
    time_round: float | None = None
    """Rounding the relaxation's solution to a tree (local search included)."""
    time_ilp: float | None = None
    """All solving of the ILP decoder (the LP first and branch and bound), or of the
    labeled program."""
    time_branch: float | None = None
    """``ad3-exact``'s nodes after the root."""
    time_search: float | None = None
    """A labeled search."""
    time_decode: float | None = None
    """The whole decoding (``mst``, ``eisner``, ``ad3-exact``)."""

    def update(self, **fields) -> None:
        """Set the named ``fields`` (a name that is not a field raises AttributeError)."""
        for name, value in fields.items():
            setattr(self, name, value)


@dataclass
class DecodeResult:
    """What a decoder returns.

    Attributes
    ----------
    output:
        One value per part in ``[0, 1]``: the 0/1 tree for exact decoders, the fractional
        optimum for relaxed ones (what enters a subgradient).
    heads:
        ``int64 (n + 1,)`` tree, ``heads[0] == -1``: the argmax for exact decoders, the
        rounded tree for relaxed ones.
    value:
        ``scores @ output`` (for a relaxation: the relaxed optimum, an upper bound).
    cost:
        Hamming cost of ``output`` against gold when cost-augmented, else 0.
    loss:
        ``score(output) - score(gold) + cost`` when cost-augmented (the slack r(w) of
        section 4; ``>= 0`` for exact and relaxed decoders alike), else 0.
    stats:
        What the decoder measured (:class:`DecodeStats`).
    """

    output: np.ndarray
    heads: np.ndarray
    value: float
    cost: float = 0.0
    loss: float = 0.0
    stats: DecodeStats = field(default_factory=DecodeStats)

    @property
    def integral(self) -> bool:
        """True when every entry of ``output`` is within 1e-6 of 0 or 1."""
        return bool(np.all(np.minimum(self.output, 1.0 - self.output) <= 1e-6))


CERTIFIED_KINDS = ("exact", "lp-integral", "mst", "eisner")
"""Kinds of :class:`Certificate` whose tree is optimal by proof or by construction."""

CERTIFICATE_KINDS = CERTIFIED_KINDS + ("rounded", "node-limit", "time-limit")
"""Every kind of :class:`Certificate`, in the order summaries list them."""

GAP_TOLERANCE = 1e-6
"""A gap of at most this times ``max(1, |upper_bound|)`` proves a rounded tree optimal
(the LP solvers' own tolerance is of this order)."""


@dataclass(frozen=True)
class Certificate:
    """How a tree was decoded and what is proven about it (``parse --certify``).

    Attributes
    ----------
    kind:
        ``"exact"`` (an exact search proved the tree optimal: ILP, AD3 branch and bound),
        ``"lp-integral"`` (the LP relaxation's solution is integral, hence an optimal
        tree), ``"mst"`` / ``"eisner"`` (first-order exact algorithms: optimal over
        non-projective / projective trees by construction), ``"rounded"`` (a fractional
        relaxation rounded to a tree), ``"node-limit"`` (the search under constraints
        stopped at its node limit and kept a tree that satisfies them, with the bound of
        its best open node) or ``"time-limit"`` (the sentence's time limit ran out: the
        best tree found by then).
    score:
        The model's score of the tree (``scores @ parts.from_heads(heads)``).
    upper_bound:
        An upper bound on the score of every tree (the LP optimum, or AD3's least dual
        value), when the decoder has one and the tree is not optimal by its kind; None
        otherwise.
    stage:
        For ``"time-limit"`` and ``"node-limit"``: ``decoder:stage`` where the limit was
        reached (e.g. ``ilp:ilp``, ``lp:build``, ``ad3-exact:branch``, ``mst:labeled``).
    unconstrained:
        The time ran out before any tree that satisfies the hard constraints (the UD
        rules, the user's) was found: the tree is the best found without them.
    """

    kind: str
    score: float
    upper_bound: float | None = None
    stage: str | None = None
    unconstrained: bool = False

    def __post_init__(self) -> None:
        if self.kind not in CERTIFICATE_KINDS:
            raise ValueError(f"unknown certificate kind {self.kind!r}")

    @property
    def gap(self) -> float | None:
        """``upper_bound - score`` (>= 0 up to solver tolerance), or None without a bound."""
        return None if self.upper_bound is None else self.upper_bound - self.score

    @property
    def optimal(self) -> bool:
        """Whether the tree is proven optimal: by its kind, or by a gap within
        :data:`GAP_TOLERANCE` (a rounded tree that reaches the bound)."""
        return self.kind in CERTIFIED_KINDS or (
            self.gap is not None
            and self.gap <= GAP_TOLERANCE * max(1.0, abs(self.upper_bound)))

    def comment(self) -> str:
        """The CoNLL-U comment line, e.g. ``# decoding = exact; score = 12.5``, or
        ``# decoding = rounded; upper_bound = 13; score = 12.5; gap = 0.5``; a
        time-limit fallback also names its ``stage``, and a tree decoded without the
        constraints says ``constraints = not enforced``. Numbers have six decimals."""
        fields = [f"decoding = {self.kind}"]
        if self.stage is not None:
            fields.append(f"stage = {self.stage}")
        if self.unconstrained:
            fields.append("constraints = not enforced")
        if self.upper_bound is not None:
            fields.append(f"upper_bound = {self.upper_bound:.6f}")
        fields.append(f"score = {self.score:.6f}")
        if self.upper_bound is not None:
            fields.append(f"gap = {self.gap:.6f}")
        return "# " + "; ".join(fields)


@dataclass
class CertificateCounts:
    """Running totals of :class:`Certificate` s: sentences per ``kind``, how many were
    proven ``optimal`` (``parse --certify``'s summary) and how many were decoded
    ``unconstrained`` (:attr:`Certificate.unconstrained`)."""

    kinds: dict = field(default_factory=lambda: dict.fromkeys(CERTIFICATE_KINDS, 0))
    optimal: int = 0
    unconstrained: int = 0

    def add(self, certificate: Certificate) -> None:
        self.kinds[certificate.kind] += 1
        self.optimal += certificate.optimal
        self.unconstrained += certificate.unconstrained

    def merge(self, other: "CertificateCounts") -> None:
        """Add ``other``'s totals (a worker process's) to these."""
        for kind, count in other.kinds.items():
            self.kinds[kind] += count
        self.optimal += other.optimal
        self.unconstrained += other.unconstrained

    def since(self, before: "CertificateCounts") -> "CertificateCounts":
        """What was added after ``before`` (an earlier copy of these totals)."""
        return CertificateCounts({kind: count - before.kinds[kind]
                                  for kind, count in self.kinds.items()},
                                 self.optimal - before.optimal,
                                 self.unconstrained - before.unconstrained)

    def copy(self) -> "CertificateCounts":
        return CertificateCounts(dict(self.kinds), self.optimal, self.unconstrained)

    def summary(self) -> str:
        """One line: the share certified optimal and the count of every kind seen, e.g.
        ``decoding: 97.1% of 2002 sentences certified optimal (exact 1944, time-limit
        58)``."""
        total = sum(self.kinds.values())
        share = 100.0 * self.optimal / total if total else 0.0
        kinds = ", ".join(f"{kind} {count}" for kind, count in self.kinds.items() if count)
        return (f"decoding: {share:.1f}% of {total} sentence{'s' * (total != 1)} certified "
                f"optimal ({kinds or 'none'})")


@dataclass(frozen=True)
class ScoredTree:
    """One of the K best trees: ``heads`` (``int64 (n + 1,)``, ``heads[0] == -1``) and
    ``score``, the model's score of that tree (``scores @ parts.from_heads(heads)``)."""

    heads: np.ndarray
    score: float


DEFAULT_TIME_LIMIT = 1.0
"""Seconds a sentence's decoding may take by default, every stage included."""


class Decoder(Declared, ABC):
    """Maximize ``scores @ z`` over the structures of ``parts``.

    Parameters
    ----------
    single_root:
        Exactly one word attached to the root (Universal Dependencies); when False any
        number of root children is allowed (CoNLL-X).
    time_limit:
        Seconds a sentence's decoding may take, every stage included (under UD rules or
        constraints too); at the limit the best tree found so far is kept, with a
        time-limit certificate. None: no limit.
    """

    kind: ClassVar[str] = "decoder"
    fixed: ClassVar[frozenset] = frozenset({"single_root"})
    part_types: ClassVar[frozenset] = frozenset({PartType.ARC})
    """The part types whose scores the decoder takes into account."""
    gives_kbest: ClassVar[bool] = False
    """Whether :meth:`kbest` gives the exact K best trees (else it raises)."""
    honors_constraints: ClassVar[bool] = False
    """Whether :meth:`decode_labeled` decodes under label constraints; a constrained
    sentence is decoded by :meth:`for_constraints` when it does not."""
    exact: ClassVar[bool] = True
    """Whether :meth:`decode` gives the best tree (within its time limit), else the
    optimum of a relaxation and the tree it rounds to."""
    preference: ClassVar[int | None] = None
    """The rank of an exact decoder among the defaults of a model whose parts it
    decodes (lower first: :func:`preferred_decoder`); None: never a default."""

    def __init__(self, *, single_root: bool = True,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
        if time_limit is not None and not time_limit > 0:
            raise ValueError(f"time_limit must be positive, not {time_limit}")
        self.single_root = single_root
        self.time_limit = time_limit

    def within(self, budget: "Budget | None") -> "Decoder":
        """This decoder with what is left of ``budget`` as its time limit (the stages
        of a sentence share one budget); ``self`` when neither limits the other (or
        there is no ``budget``)."""
        left = None if budget is None else budget.left()
        if left is None:
            return self
        limit = max(left, MIN_TIME_LIMIT)
        if self.time_limit is not None and self.time_limit <= limit:
            return self
        return self.with_time_limit(limit)

    def with_time_limit(self, seconds: float | None) -> "Decoder":
        """A copy of this decoder with the time limit ``seconds`` (None: none)."""
        return self.with_options(time_limit=seconds)

    def with_options(self, **options) -> "Decoder":
        """A copy of this decoder with other values of its declared ``options`` (each
        declared option is the attribute of its name), checked as :func:`make_decoder`
        checks them."""
        self.check_options(options)
        other = copy.copy(self)
        for name, value in options.items():
            setattr(other, name, value)
        return other

    def relaxation(self) -> "Decoder":
        """The decoder of this decoder's LP relaxation, whose result is the relaxation's
        optimum (fractional in general) and the tree it rounds to: itself for a
        relaxation; for an exact decoder the relaxation its search bounds with
        (``ad3-exact``: ``ad3``), by default HiGHS's LP (``lp``: :mod:`decoders.lp`,
        the multi-commodity-flow formulation, tight at first order)."""
        if not self.exact:
            return self
        return make_decoder("lp", self.single_root, time_limit=self.time_limit)

    def relaxed_twin(self) -> "Decoder":
        """The decoder of relaxed loss-augmented inference for this one (SSG-eta's
        relaxed steps, Martins, Smith, Xing 2009): itself when it is a relaxation or
        decodes arcs alone (the LP relaxation of an arc-factored problem is tight: its
        optimum is the best tree), else :meth:`relaxation`."""
        if not self.exact or self.part_types <= {PartType.ARC}:
            return self
        return self.relaxation()

    def for_constraints(self) -> "Decoder":
        """The decoder of a sentence under label constraints: itself when it
        :attr:`honors_constraints`, else the ILP (:mod:`decoders.ilp`), which takes
        every part type, with this decoder's time limit."""
        if self.honors_constraints:
            return self
        return make_decoder("ilp", self.single_root, time_limit=self.time_limit)

    @abstractmethod
    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        """The best structure under ``scores`` (one score per part)."""

    @abstractmethod
    def certificate(self, result: DecodeResult) -> Certificate:
        """What :meth:`decode`'s ``result`` proves about its tree (:class:`Certificate`),
        read from its ``value`` and ``stats``."""

    def fallback_certificate(self, result: DecodeResult) -> Certificate | None:
        """The ``"time-limit"`` certificate of a ``result`` that fell back
        (:attr:`DecodeStats.fallback`; its ``value`` is then the score of its tree, and
        the bound is AD3's dual value or the LP's value when the decoder got that far),
        or None."""
        stats = result.stats
        if not stats.fallback:
            return None
        bound = stats.lp_value if stats.dual_value is None else stats.dual_value
        return Certificate("time-limit", result.value,
                           upper_bound=None if bound is None else float(bound),
                           stage=f"{self.name}:{stats.fallback_stage}")

    def decode_arcs(self, S: np.ndarray) -> DecodeResult:
        """Arc-factored decoding from the score matrix alone.

        ``S`` is ``float64 (n + 1, n + 1)``, ``S[h, m]`` the score of arc h -> m and
        ``-inf`` where (h, m) is not a candidate (the diagonal and column 0 included).
        ``output`` is over the candidate arcs in row-major order of (h, m) (the parts
        :func:`~decoders.parts.arc_parts` makes of them). This builds those parts and
        calls :meth:`decode`; the decoders that need only ``S`` (MST, Eisner) skip that,
        so that a sentence of n words costs them O(n^2) and no index of its arcs.
        """
        h, m = np.nonzero(np.isfinite(S))
        parts = arc_parts(S.shape[0] - 1, np.stack([h, m], axis=1))
        return self.decode(parts, S[h, m])

    def decode_labeled(self, parts: Parts, scores: np.ndarray, problem):
        """The best labeled tree under ``scores`` and the candidate labels and label
        constraints of ``problem`` (a :class:`~decoders.labeled.LabeledProblem`): a
        :class:`~decoders.labeled.LabeledResult`. Only the decoders that
        :attr:`honors_constraints` have it; :class:`~decoders.labeled.Infeasible` when
        no labeled tree satisfies the constraints."""
        raise ValueError(f"decoder {self.name!r} cannot decode under label constraints "
                         "(mst, ilp and lp can)")

    def kbest(self, parts: Parts, scores: np.ndarray, k: int) -> list[ScoredTree]:
        """The ``k`` best trees under ``scores`` (fewer when fewer exist), distinct, in
        non-increasing order of score, the first one :meth:`decode`'s; ties are broken
        deterministically. Only exact decoders (:attr:`gives_kbest`) have them."""
        raise ValueError(f"decoder {self.name!r} cannot give the k best trees (mst for "
                         "first-order models and ilp for any order can)")

    def kbest_arcs(self, S: np.ndarray, k: int) -> list[ScoredTree]:
        """:meth:`kbest` from the arc score matrix alone (as :meth:`decode_arcs`)."""
        h, m = np.nonzero(np.isfinite(S))
        parts = arc_parts(S.shape[0] - 1, np.stack([h, m], axis=1))
        return self.kbest(parts, S[h, m], k)

    def decode_cost_augmented(self, parts: Parts, scores: np.ndarray,
                              gold: np.ndarray) -> DecodeResult:
        """Loss-augmented inference: ``max_z (scores + p) @ z`` with Hamming cost.

        ``gold`` is the 0/1 gold structure. With ``p = 1 - 2 z*`` on the arc parts and
        ``q`` the number of gold arcs, the cost of ``z`` is ``p @ z + q`` (section 4).
        The returned ``cost`` and ``loss`` are those of the returned ``output``.
        """
        p, q = hamming_cost(parts, gold)
        result = self.decode(parts, scores + p)
        result.cost = float(p @ result.output + q)
        result.loss = float(scores @ (result.output - gold) + result.cost)
        return result


def hamming_cost(parts: Parts, gold: np.ndarray) -> tuple[np.ndarray, float]:
    """``(p, q)`` with Hamming cost ``p @ z + q`` over the arc parts (section 4)."""
    p = np.zeros(len(parts), dtype=np.float64)
    arcs = parts.block(PartType.ARC)
    p[arcs] = 1.0 - 2.0 * gold[arcs]
    return p, float(gold[arcs].sum())


def tree_result(S: np.ndarray, heads: np.ndarray, stats: DecodeStats) -> DecodeResult:
    """The :meth:`Decoder.decode_arcs` result of the tree ``heads`` under ``S``."""
    n = S.shape[0] - 1
    chosen = np.zeros(S.shape, dtype=bool)
    chosen[heads[1:], np.arange(1, n + 1)] = True
    output = chosen[np.isfinite(S)].astype(np.float64)
    value = float(S[heads[1:], np.arange(1, n + 1)].sum())
    return DecodeResult(output=output, heads=heads, value=value, stats=stats)


class TimeLimitReached(Exception):
    """A decoder's time budget ran out in ``stage`` (``"build"``, ``"lp"``, ``"ilp"``)."""

    def __init__(self, stage: str) -> None:
        super().__init__(f"time limit reached in {stage}")
        self.stage = stage


MIN_TIME_LIMIT = 1e-3
"""The time limit :meth:`Decoder.within` gives a stage when its budget is spent: the
stage then stops at its first check and returns its cheapest tree."""


class Budget:
    """What is left of a per-sentence time limit (``limit`` seconds, None: no limit),
    counted from the budget's creation."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.start = time.perf_counter()

    def left(self) -> float | None:
        """Seconds left (at least 0), or None without a limit."""
        if self.limit is None:
            return None
        return max(0.0, self.limit - (time.perf_counter() - self.start))

    def share(self, fraction: float) -> "Budget":
        """A budget of ``fraction`` of what is left of this one, from now (no limit
        without one)."""
        left = self.left()
        return Budget(None if left is None else fraction * left)

    def check(self, stage: str) -> None:
        """Raise :class:`TimeLimitReached` when no time is left."""
        if self.limit is not None and self.left() <= 0.0:
            raise TimeLimitReached(stage)


DECODERS = Registry("decoder")
"""The decoders by name."""
register = DECODERS.register
decoder_class = DECODERS.get_class


def preferred_decoder(part_types: frozenset) -> str:
    """The decoder a model whose parts are of ``part_types`` parses with unless one is
    chosen: the exact decoder of lowest :attr:`~Decoder.preference` that takes them all
    into account."""
    ranked = sorted((cls.preference, name) for name, cls in DECODERS.items()
                    if cls.exact and cls.preference is not None
                    and part_types <= cls.part_types)
    if not ranked:
        raise ValueError(f"no decoder takes part types {sorted(t.name for t in part_types)}")
    return ranked[0][1]


def make_decoder(name: str, single_root: bool = True, **options) -> Decoder:
    """Decoder ``name`` with ``options``, checked against the options it declares
    (:meth:`~decoders.declared.Registry.make`)."""
    return DECODERS.make(name, single_root=single_root, **options)
