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

from decoders import Decoder

from ..model import Example, LinearModel
from ..weights import AveragedWeights

log = logging.getLogger("polyparse.train")

DevEvaluator = Callable[[np.ndarray], dict]
"""Given weights, returns dev scores such as ``{"uas": 87.1, "las": 85.0}``."""


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


class Trainer(ABC):
    """Fits a model; ``fit`` leaves the learned weights in ``model.weights``."""

    name: ClassVar[str] = ""

    @abstractmethod
    def fit(self, examples: Sequence[Example], model: LinearModel, decoder: Decoder, *,
            dev: DevEvaluator | None = None) -> TrainReport:
        """Train on ``examples``; evaluate ``dev`` after each epoch."""


class OnlineTrainer(Trainer):
    """Epochs over shuffled examples, one update per example, averaged iterates.

    Subclasses implement :meth:`step`. Parameters: ``epochs``, ``seed`` (the shuffling
    order, hence the whole run, is a function of the seed), ``progress`` (a progress bar
    with ETA on stderr).
    """

    def __init__(self, *, epochs: int = 10, seed: int = 0, progress: bool = True) -> None:
        if epochs < 1:
            raise ValueError("epochs must be >= 1")
        self.epochs = epochs
        self.seed = seed
        self.progress = progress

    @abstractmethod
    def step(self, t: int, example: Example, model: LinearModel, decoder: Decoder,
             weights: AveragedWeights) -> float:
        """Update ``weights`` on one example (the t-th, from 1); return its slack."""

    def objective(self, mean_slack: float, weights: AveragedWeights) -> float:
        """The objective reported per epoch (by default the mean slack)."""
        return mean_slack

    def epoch_extra(self) -> dict:
        """Trainer-specific figures of the epoch just finished (then reset)."""
        return {}

    def fit(self, examples, model, decoder, *, dev=None):
        rng = np.random.default_rng(self.seed)
        weights = AveragedWeights(model.dim)
        report = TrainReport()
        t = 0
        for epoch in range(1, self.epochs + 1):
            start = time.perf_counter()
            order = rng.permutation(len(examples))
            slack_sum = 0.0
            bar = tqdm(order, desc=f"epoch {epoch}/{self.epochs}", unit="sent",
                       disable=not self.progress, leave=False)
            for i in bar:
                t += 1
                slack_sum += self.step(t, examples[i], model, decoder, weights)
            mean_slack = slack_sum / len(examples)
            stats = EpochStats(epoch, self.objective(mean_slack, weights), mean_slack,
                               time.perf_counter() - start, extra=self.epoch_extra())
            model.weights = weights.average()
            if dev is not None:
                stats.dev = dev(model.weights)
            report.epochs.append(stats)
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
