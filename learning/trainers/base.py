"""The trainer contract, its report, and the registry.

A trainer fits a :class:`~learning.model.LinearModel` to training examples by minimizing
the regularized structured hinge loss (``docs/algorithms.md`` section 5), exactly, through
a relaxation, or through the dual of the relaxation on the factor graph. :meth:`Trainer.run`
yields one :class:`EpochStats` per epoch, with the model's weights then set to those the
trainer returns so far: the objective it optimizes (and its certificate, a dual value or a
duality gap, where it has one) and the wall time, so that trainers can be compared as
objective-versus-time curves. What happens with the weights between epochs (dev scores,
checkpoints) is the caller's business: data flow one way, out of the trainer.

A trainer declares its options once, as the keyword-only parameters of ``__init__``
described in its class docstring (:class:`~decoders.declared.Declared`); the command
line's flags, the model file's training settings and the checks of values come from that
declaration.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import ClassVar, Iterator, Sequence

import numpy as np
from tqdm import tqdm

from polyparse.decoders import Decoder, Declared, Parts
from polyparse.decoders.declared import Registry
from polyparse.decoders.factor_graph import FactorGraph
from polyparse.decoders.higher_order import PartsConfig

from ..inference import Constraint
from ..model import Example, LinearModel
from ..state import SentenceStates
from ..weights import AveragedWeights
from ._parallel import BatchInference

log = logging.getLogger("polyparse.train")


@dataclass
class EpochStats:
    """One epoch: ``objective`` is the trainer's own (see each trainer's docstring);
    ``extra`` its other figures (certificates, shares of relaxed inferences); ``dev``
    is filled in by whoever evaluates the weights after the epoch."""

    epoch: int
    objective: float
    mean_slack: float
    seconds: float
    dev: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


@dataclass
class TrainReport:
    epochs: list[EpochStats] = field(default_factory=list)

    def to_json(self) -> list[dict]:
        return [asdict(e) for e in self.epochs]

    @classmethod
    def from_json(cls, epochs: list[dict]) -> "TrainReport":
        return cls([EpochStats(**e) for e in epochs])


class Trainer(Declared, ABC):
    """Fits a model; :meth:`run` leaves the weights learned so far in ``model.weights``
    after each epoch it yields.

    Parameters
    ----------
    epochs:
        Passes over the training data.
    seed:
        The order of the examples and every random choice, hence the whole run, is a
        function of the seed.
    progress:
        A progress bar with ETA on standard error.
    """

    kind: ClassVar[str] = "trainer"
    fixed: ClassVar[frozenset] = frozenset({"epochs", "seed", "progress"})
    stateful: ClassVar[bool] = False
    """Whether the trainer keeps per-sentence state (:meth:`state_size`)."""

    def __init__(self, *, epochs: int = 10, seed: int = 0, progress: bool = False) -> None:
        if epochs < 1:
            raise ValueError("epochs must be >= 1")
        self.epochs = epochs
        self.seed = seed
        self.progress = progress

    @abstractmethod
    def run(self, examples: Sequence[Example], model: LinearModel,
            decoder: Decoder) -> Iterator[EpochStats]:
        """Train on ``examples``, yielding after each epoch (``model.weights`` set)."""

    def fit(self, examples: Sequence[Example], model: LinearModel,
            decoder: Decoder) -> TrainReport:
        """:meth:`run` to the end."""
        return TrainReport(list(self.run(examples, model, decoder)))

    def state_size(self, parts: Parts) -> int:
        """Floats of per-sentence state the trainer keeps across epochs for a sentence
        with these candidate ``parts`` (0: none)."""
        return 0

    def check_parts(self, parts: PartsConfig) -> None:
        """``ValueError`` before any work when the trainer cannot fit a model whose parts
        are ``parts``; by default it fits every order."""


class OnFactorGraph:
    """Mixin of the trainers that work on the factor graph of a sentence's parts
    (:mod:`decoders.factor_graph`): orders 1 and 2 with all-pairs siblings."""

    name: ClassVar[str]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._graphs: dict[tuple[int, bool], tuple[Parts, FactorGraph]] = {}

    def start(self, examples: Sequence[Example], decoder: Decoder) -> None:
        self._graphs.clear()
        super().start(examples, decoder)

    def check_parts(self, parts: PartsConfig) -> None:
        """Refuse, before any work, parts that have no pairwise factor."""
        self._build(parts.build(3), True)

    def graph(self, parts: Parts, single_root: bool = True) -> FactorGraph:
        """The factor graph of ``parts`` (structure only, zero scores; rescore it with
        :meth:`FactorGraph.with_scores`), or the refusal naming the trainer. Kept for
        the run per ``parts`` object, with what is computed from its structure alone
        (forced arcs, incidence): :class:`learning.examples.Examples` gives a sentence
        the same parts at every visit."""
        key = (id(parts), single_root)
        entry = self._graphs.get(key)
        if entry is None or entry[0] is not parts:
            entry = self._graphs[key] = parts, self._build(parts, single_root)
        return entry[1]

    def _build(self, parts: Parts, single_root: bool) -> FactorGraph:
        try:
            return FactorGraph.from_parts(parts, np.zeros(len(parts)), single_root=single_root)
        except ValueError as error:
            raise ValueError(f"the {self.name} trainer supports orders 1 and 2 (all-pairs "
                             f"siblings), not this model's parts: {error}") from None


class OnlineTrainer(Trainer):
    """Epochs over shuffled examples in mini-batches, averaged iterates.

    Each step runs the trainer's per-sentence work on a batch of examples at the same
    weights (:meth:`inference`: loss-augmented inference, or a dual method's message
    updates, each reading and updating that sentence's state), then one update from the
    batch's constraints (:meth:`update`). With ``jobs > 1`` the batch's inferences run on
    that many processes, the per-sentence state in shared memory; the result is the same
    as with ``jobs = 1`` for the same ``batch`` and ``seed``.

    Parameters
    ----------
    batch:
        Sentences per update (default: ``jobs``); 1 is the plain online algorithm.
    jobs:
        Processes that run a mini-batch's per-sentence work side by side (at most
        ``batch``); the model is the same as with one process and the same ``batch``.
    average_from:
        The epoch whose iterates are the first the model averages (1: all of them).
        Uniform averaging of stochastic subgradient iterates on a strongly convex
        objective is slowed by its early iterates; averaging a suffix of them restores
        the O(1/T) rate (Rakhlin, Shamir and Sridharan, ICML 2012, section 3). A dual
        method's early iterates come from cold messages: Hazan-Urtasun's averaged
        weights parse tr_imst dev 2.4 points better after 10 epochs when the first 5
        are left out (``eval/results/frozen/trainers.md``).
    """

    def __init__(self, *, batch: int | None = None, jobs: int = 1, average_from: int = 1,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        batch = jobs if batch is None else batch
        if batch < 1 or jobs < 1:
            raise ValueError("batch and jobs must be >= 1")
        if not 1 <= average_from <= self.epochs:
            raise ValueError(f"average_from must be an epoch of the run, 1 to {self.epochs}, "
                             f"not {average_from}")
        self.average_from = average_from
        if jobs > batch:
            raise ValueError(f"{jobs} jobs need mini-batches of at least {jobs} sentences "
                             f"(batch is {batch}): the inferences of one step are what "
                             "runs in parallel")
        self.batch = batch
        self.jobs = jobs

    def relaxed_draws(self, t: int, k: int) -> list[bool]:
        """Whether each of step ``t``'s ``k`` inferences uses the relaxation (drawn in
        order, in the parent process, so that the run does not depend on ``jobs``)."""
        return [False] * k

    @abstractmethod
    def inference(self, example: Example, model: LinearModel, decoder: Decoder,
                  relaxed: bool, v: np.ndarray, scale: float,
                  state: np.ndarray) -> Constraint:
        """The constraint of one example under ``w = scale * v``; ``state`` is the
        example's slice of the per-sentence state (:meth:`state_size` floats), to read
        and update in place."""

    @abstractmethod
    def update(self, t: int, constraints: list[Constraint], weights: AveragedWeights) -> None:
        """Step ``t`` (from 1): update ``weights`` from one batch's constraints."""

    def start(self, examples: Sequence[Example], decoder: Decoder) -> None:
        """Reset the trainer's state before a run."""

    def objective(self, mean_slack: float, weights: AveragedWeights) -> float:
        """The objective reported per epoch (by default the mean slack)."""
        return mean_slack

    def epoch_extra(self) -> dict:
        """Trainer-specific figures of the epoch just finished (then reset)."""
        return {}

    def run(self, examples, model, decoder):
        rng = np.random.default_rng(self.seed)
        weights = AveragedWeights(model.dim, shared=self.jobs > 1)
        self.start(examples, decoder)
        states = SentenceStates.allocate(examples, self.state_size if self.stateful else None,
                                         shared=self.jobs > 1)
        t = 0
        with BatchInference(self, examples, model, decoder, weights, states,
                            self.jobs) as infer:
            for epoch in range(1, self.epochs + 1):
                start = time.perf_counter()
                if epoch == self.average_from > 1:      # at 1 there is nothing to forget
                    weights.restart_average()
                slack_sum, t = self.train_epoch(rng.permutation(len(examples)), infer,
                                                weights, t, f"epoch {epoch}/{self.epochs}")
                mean_slack = slack_sum / len(examples)
                stats = EpochStats(epoch, self.objective(mean_slack, weights), mean_slack,
                                   time.perf_counter() - start, extra=self.epoch_extra())
                model.weights = weights.average(out=model.weights)
                log.info("epoch %d: objective %.4f, mean slack %.4f, %.1f s%s", epoch,
                         stats.objective, mean_slack, stats.seconds,
                         "".join(f", {k} {v:.4g}" for k, v in stats.extra.items()))
                yield stats

    def train_epoch(self, order: np.ndarray, infer: BatchInference, weights: AveragedWeights,
                    t: int, desc: str) -> tuple[float, int]:
        """One pass over the examples in ``order``, in mini-batches of :attr:`batch`, the
        steps numbered from ``t + 1``: the sum of the slacks met, and the last step's
        number. :meth:`run` makes its epochs of it, and so does iterative parameter mixing
        (:func:`learning.mixing.shard_epoch`) on each shard."""
        slack_sum = 0.0
        bar = tqdm(total=len(order), desc=desc, unit="sent", disable=not self.progress,
                   leave=False)
        for first in range(0, len(order), self.batch):
            t += 1
            indices = order[first:first + self.batch]
            constraints = infer(indices, self.relaxed_draws(t, len(indices)))
            self.update(t, constraints, weights)
            slack_sum += sum(c.slack for c in constraints)
            bar.update(len(constraints))
        bar.close()
        return slack_sum, t


TRAINERS = Registry("trainer")
"""The trainers by name."""
register = TRAINERS.register
trainer_class = TRAINERS.get_class
make_trainer = TRAINERS.make
