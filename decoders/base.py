"""The decoder contract, its result type, the registry, and loss-augmented inference.

A decoder maximizes ``scores @ z`` over the structures ``z`` of a :class:`Parts` set
(exactly, over trees; or over a relaxation, returning the fractional optimum plus a
rounded tree). Loss-augmented inference (``docs/algorithms.md`` section 4) is the same
problem with the Hamming cost folded into the arc scores, so every decoder gets it for
free from :meth:`Decoder.decode_cost_augmented`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, ClassVar

import numpy as np

from .declared import Declared
from .parts import Parts, PartType, arc_parts


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
        Decoder-specific measurements (times in seconds, node counts, flags).
    """

    output: np.ndarray
    heads: np.ndarray
    value: float
    cost: float = 0.0
    loss: float = 0.0
    stats: dict = field(default_factory=dict)

    @property
    def integral(self) -> bool:
        """True when every entry of ``output`` is within 1e-6 of 0 or 1."""
        return bool(np.all(np.minimum(self.output, 1.0 - self.output) <= 1e-6))


@dataclass(frozen=True)
class ScoredTree:
    """One of the K best trees: ``heads`` (``int64 (n + 1,)``, ``heads[0] == -1``) and
    ``score``, the model's score of that tree (``scores @ parts.from_heads(heads)``)."""

    heads: np.ndarray
    score: float


class Decoder(Declared, ABC):
    """Maximize ``scores @ z`` over the structures of ``parts``.

    Parameters
    ----------
    single_root:
        Exactly one word attached to the root (Universal Dependencies); when False any
        number of root children is allowed (CoNLL-X).
    """

    kind: ClassVar[str] = "decoder"
    fixed: ClassVar[frozenset] = frozenset({"single_root"})
    part_types: ClassVar[frozenset] = frozenset({PartType.ARC})
    """The part types whose scores the decoder takes into account."""
    gives_kbest: ClassVar[bool] = False
    """Whether :meth:`kbest` gives the exact K best trees (else it raises)."""

    def __init__(self, *, single_root: bool = True) -> None:
        self.single_root = single_root

    @abstractmethod
    def decode(self, parts: Parts, scores: np.ndarray) -> DecodeResult:
        """The best structure under ``scores`` (one score per part)."""

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


def tree_result(S: np.ndarray, heads: np.ndarray, stats: dict) -> DecodeResult:
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

    def check(self, stage: str) -> None:
        """Raise :class:`TimeLimitReached` when no time is left."""
        if self.limit is not None and self.left() <= 0.0:
            raise TimeLimitReached(stage)


DECODERS: dict[str, type[Decoder]] = {}


def register(name: str) -> Callable[[type[Decoder]], type[Decoder]]:
    """Class decorator: make a decoder available under ``name``."""

    def wrap(cls: type[Decoder]) -> type[Decoder]:
        if name in DECODERS:
            raise ValueError(f"decoder {name!r} registered twice")
        cls.name = name
        DECODERS[name] = cls
        return cls

    return wrap


def decoder_class(name: str) -> type[Decoder]:
    """The registered decoder ``name``; ``ValueError`` naming the choices if none."""
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose from {', '.join(sorted(DECODERS))}")
    return DECODERS[name]


def make_decoder(name: str, single_root: bool = True, **options) -> Decoder:
    """Decoder ``name`` with ``options``, checked against the options it declares
    (:meth:`~decoders.declared.Declared.check_options`: an
    :class:`~decoders.declared.OptionError` for one it does not take or a value of the
    wrong type)."""
    cls = decoder_class(name)
    cls.check_options(options)
    return cls(single_root=single_root, **options)
