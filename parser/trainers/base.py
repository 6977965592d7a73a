"""The trainer contract, its report, and the registry.

A trainer fits a :class:`~parser.model.LinearModel` to training examples by minimizing
the regularized structured hinge loss (``docs/algorithms.md`` section 5) and reports,
per epoch, the objective it optimizes, the wall time and dev accuracy, so that trainers
can be compared as objective-versus-time curves.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Callable, ClassVar, Sequence

import numpy as np
from tqdm import tqdm

from polyparse.decoders import Decoder

from ..inference import Constraint
from ..model import Example, LinearModel
from ..weights import AveragedWeights
from ._parallel import BatchInference

log = logging.getLogger("polyparse.train")

DevEvaluator = Callable[[np.ndarray, "TrainReport"], dict]
"""Given the averaged weights after an epoch and the report so far (that epoch
included), returns dev scores such as ``{"uas": 87.1, "las": 85.0}``."""


@dataclass
class EpochStats:
    """One epoch: ``objective`` is the trainer's own (see each trainer's docstring)."""

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


class Trainer(ABC):
    """Fits a model; ``fit`` leaves the learned weights in ``model.weights``."""

    name: ClassVar[str] = ""

    @abstractmethod
    def fit(self, examples: Sequence[Example], model: LinearModel, decoder: Decoder, *,
            dev: DevEvaluator | None = None) -> TrainReport:
        """Train on ``examples``; evaluate ``dev`` after each epoch."""


class OnlineTrainer(Trainer):
    """Epochs over shuffled examples in mini-batches, averaged iterates.

    Each step runs loss-augmented inference on a batch of examples at the same weights
    (:meth:`inference`, a pure function of the example and the weights), then one
    update from the batch's constraints (:meth:`update`). With ``jobs > 1`` the batch's
    inferences run on that many processes; the result is the same as with ``jobs = 1``
    for the same ``batch`` and ``seed``.

    Parameters: ``epochs``; ``seed`` (the shuffling order and every random choice, hence
    the whole run, is a function of the seed); ``batch`` (examples per update; 1 is the
    plain online algorithm); ``jobs`` (processes, at most ``batch``: a step's
    inferences are what runs in parallel); ``progress`` (a progress bar with ETA on
    stderr).
    """

    def __init__(self, *, epochs: int = 10, seed: int = 0, batch: int = 1, jobs: int = 1,
                 progress: bool = True) -> None:
        if epochs < 1 or batch < 1 or jobs < 1:
            raise ValueError("epochs, batch and jobs must be >= 1")
        if jobs > batch:
            raise ValueError(f"{jobs} jobs need mini-batches of at least {jobs} sentences "
                             f"(batch is {batch}): the inferences of one step are what "
                             "runs in parallel")
        self.epochs = epochs
        self.seed = seed
        self.batch = batch
        self.jobs = jobs
        self.progress = progress

    def relaxed_draws(self, t: int, k: int) -> list[bool]:
        """Whether each of step ``t``'s ``k`` inferences uses the relaxation (drawn in
        order, in the parent process, so that the run does not depend on ``jobs``)."""
        return [False] * k

    @abstractmethod
    def inference(self, example: Example, model: LinearModel, decoder: Decoder,
                  relaxed: bool, v: np.ndarray, scale: float) -> Constraint:
        """The constraint of one example under ``w = scale * v``."""

    @abstractmethod
    def update(self, t: int, constraints: list[Constraint], weights: AveragedWeights) -> None:
        """Step ``t`` (from 1): update ``weights`` from one batch's constraints."""

    def start(self, examples: Sequence[Example]) -> None:
        """Reset the trainer's state before a run."""

    def objective(self, mean_slack: float, weights: AveragedWeights) -> float:
        """The objective reported per epoch (by default the mean slack)."""
        return mean_slack

    def epoch_extra(self) -> dict:
        """Trainer-specific figures of the epoch just finished (then reset)."""
        return {}

    def fit(self, examples, model, decoder, *, dev=None):
        rng = np.random.default_rng(self.seed)
        weights = AveragedWeights(model.dim, shared=self.jobs > 1)
        self.start(examples)
        report = TrainReport()
        t = 0
        with BatchInference(self, examples, model, decoder, weights, self.jobs) as infer:
            for epoch in range(1, self.epochs + 1):
                start = time.perf_counter()
                order = rng.permutation(len(examples))
                slack_sum = 0.0
                bar = tqdm(total=len(order), desc=f"epoch {epoch}/{self.epochs}", unit="sent",
                           disable=not self.progress, leave=False)
                for first in range(0, len(order), self.batch):
                    t += 1
                    indices = order[first:first + self.batch]
                    constraints = infer(indices, self.relaxed_draws(t, len(indices)))
                    self.update(t, constraints, weights)
                    slack_sum += sum(c.slack for c in constraints)
                    bar.update(len(constraints))
                bar.close()
                mean_slack = slack_sum / len(examples)
                stats = EpochStats(epoch, self.objective(mean_slack, weights), mean_slack,
                                   time.perf_counter() - start, extra=self.epoch_extra())
                model.weights = weights.average(out=model.weights)
                report.epochs.append(stats)
                if dev is not None:
                    stats.dev = dev(model.weights, report)
                log.info("epoch %d: objective %.4f, mean slack %.4f, %.1f s%s%s", epoch,
                         stats.objective, mean_slack, stats.seconds,
                         "".join(f", {k} {v:.1f}%" for k, v in stats.extra.items()),
                         "".join(f", dev {k} {v:.2f}" for k, v in stats.dev.items()))
        return report


TRAINERS: dict[str, type[Trainer]] = {}


def register(name: str):
    """Class decorator: make a trainer available under ``name``."""

    def wrap(cls):
        if name in TRAINERS:
            raise ValueError(f"trainer {name!r} registered twice")
        cls.name = name
        TRAINERS[name] = cls
        return cls

    return wrap
