"""Iterative parameter mixing (McDonald, Hall and Mann, NAACL 2010): training an online
trainer on shards of the data side by side.

The training set is cut into ``K`` shards (sentence ``i`` goes to shard ``i mod K``).
Each epoch, every shard runs one epoch of the online trainer (:class:`~.trainers.base.
OnlineTrainer`: SSG, the perceptron) on its own sentences, starting from the mixed
weights ``w^(n)``; the driver then mixes the shards' last iterates uniformly,
``w^(n+1) = (1/K) sum_k w_k^(n)`` (McDonald et al.'s ``mu_k = 1/K``, their Figure 3).
The model returned after each epoch is the average of every iterate of every shard so
far, as the averaged perceptron and SSG average theirs.

A shard's epoch (:func:`shard_epoch`) is a pure function of (shard, epoch, mixed
weights, trainer settings): its order of examples and random draws come from a seed
derived from the run's seed, the epoch and the shard, and its step counter continues
as if the shard trained alone. So a run is determined by the seed and ``K``, whichever
machine or process runs a shard, and a shard whose process died is simply run again.
The shards run in this process one after the other (:class:`SerialShards`) or on a Dask
cluster (:class:`parser.cluster.DaskShards`), with the same weights to the last bit.

Trainers that keep per-sentence dual state (BCFW, DLPW, Hazan-Urtasun,
extragradient) are refused (:func:`check_mixable`): their state would have to stay with
its shard's worker across epochs.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import numpy as np

from polyparse.decoders import Decoder

from .examples import Examples
from .model import LinearModel
from .state import SentenceStates
from .trainers import EpochStats, OnlineTrainer, Trainer, make_trainer
from .trainers._parallel import BatchInference
from .weights import AveragedWeights

log = logging.getLogger("polyparse.train")

MIXING = "uniform"
"""How the shards' weights are mixed (McDonald et al. 2010's ``mu_k = 1/K``)."""


@dataclass(frozen=True)
class SparseWeights:
    """A weight vector as its nonzero entries: ``int64`` indices and ``float64`` values,
    exact (a hashed feature space is mostly zeros: on 2,000 en_ewt sentences a few
    percent of the weights are nonzero). How weights travel between the driver and the
    shards."""

    dim: int
    indices: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, dense: np.ndarray) -> "SparseWeights":
        indices = np.flatnonzero(dense)
        return cls(len(dense), indices, dense[indices])

    def dense(self) -> np.ndarray:
        out = np.zeros(self.dim)
        out[self.indices] = self.values
        return out

    def add_to(self, out: np.ndarray, factor: float = 1.0) -> None:
        """``out += factor * self``."""
        out[self.indices] += factor * self.values

    @property
    def nbytes(self) -> int:
        return self.indices.nbytes + self.values.nbytes


@dataclass
class ShardEpoch:
    """What one shard sends back after one epoch (two weight vectors, sparse, and a few
    figures).

    Attributes
    ----------
    last:
        The shard's last iterate, which the driver mixes.
    average:
        The mean of the shard's iterates in this epoch.
    iterates:
        How many iterates ``average`` is the mean of (the shard's steps).
    slack_sum:
        The sum of the slacks (losses) met during the epoch.
    sentences:
        The shard's sentences.
    extra:
        The trainer's own figures of the epoch (:meth:`OnlineTrainer.epoch_extra`).
    seconds:
        Wall time of the shard's epoch where it ran.
    """

    last: SparseWeights
    average: SparseWeights
    iterates: int
    slack_sum: float
    sentences: int
    extra: dict = field(default_factory=dict)
    seconds: float = 0.0


def check_mixable(trainer: Trainer) -> None:
    """``ValueError`` (one line) unless ``trainer`` can be trained by parameter mixing:
    an online trainer without per-sentence state, on one process per shard."""
    name = getattr(trainer, "name", type(trainer).__name__)
    if not isinstance(trainer, OnlineTrainer) or trainer.stateful:
        raise ValueError(f"the {name} trainer keeps per-sentence dual state and cannot be "
                         "trained on shards (--shards/--dask); use ssg or perceptron")
    if trainer.average_from > 1:
        raise ValueError("average_from and shards do not go together: parameter mixing "
                         "averages each shard's epoch on its own")
    if trainer.jobs > 1:
        raise ValueError("--jobs and shards do not go together: each shard runs on one "
                         "process (use --shards K, with --dask to run them side by side)")


def shard_members(n: int, shards: int, shard: int) -> np.ndarray:
    """The indices of the sentences of ``shard`` among ``n``: every ``shards``-th from
    ``shard`` (so that sorted corpora give shards of alike lengths)."""
    return np.arange(shard, n, shards)


def shard_seed(seed: int, epoch: int, shard: int) -> int:
    """The seed of ``shard``'s epoch ``epoch`` in a run seeded ``seed``."""
    return int(np.random.SeedSequence([seed, epoch, shard]).generate_state(1)[0])


def shard_epoch(trainer: str, options: dict, seed: int, examples: Sequence,
                model: LinearModel, decoder: Decoder, start: SparseWeights, epoch: int,
                shard: int) -> ShardEpoch:
    """One epoch of trainer ``trainer`` (with ``options``) on one shard's ``examples``,
    from the mixed weights ``start``: McDonald et al. (2010)'s ``OneEpoch`` of Figure 3.

    Pure: the result depends only on the arguments (the seed of the shard's epoch is
    :func:`shard_seed`), so a shard can be run again anywhere. The steps are numbered as
    if the shard trained alone, from ``(epoch - 1) * steps_per_epoch + 1`` (SSG's step
    sizes decrease over the run, not within each epoch).
    """
    began = time.perf_counter()
    online = make_trainer(trainer, epochs=1, seed=shard_seed(seed, epoch, shard), **options)
    check_mixable(online)
    steps_per_epoch = -(-len(examples) // online.batch)
    weights = AveragedWeights.starting_at(start.dense())
    online.start(examples, decoder)
    states = SentenceStates.allocate(examples, None)
    with BatchInference(online, examples, model, decoder, weights, states, 1) as infer:
        order = np.random.default_rng(online.seed).permutation(len(examples))
        slack_sum, _ = online.train_epoch(order, infer, weights,
                                          (epoch - 1) * steps_per_epoch,
                                          f"epoch {epoch}, shard {shard}")
    return ShardEpoch(SparseWeights.of(weights.current()), SparseWeights.of(weights.average()),
                      weights.count, slack_sum, len(examples), online.epoch_extra(),
                      time.perf_counter() - began)


ShardRunner = Callable[[int, SparseWeights], list[ShardEpoch]]
"""``runner(epoch, start)``: every shard's :func:`shard_epoch` from the mixed weights
``start``, in shard order."""


class SerialShards:
    """The shards of a run, one after the other in this process (no cluster needed):
    the same weights as on a cluster."""

    def __init__(self, trainer: str, options: dict, seed: int, model: LinearModel,
                 decoder: Decoder, sentences: Sequence, shards: int) -> None:
        self.settings = (trainer, options, seed)
        self.model = model
        self.decoder = decoder
        self.examples = [Examples(model, [sentences[i] for i in
                                          shard_members(len(sentences), shards, k)])
                         for k in range(shards)]

    def __call__(self, epoch: int, start: SparseWeights) -> list[ShardEpoch]:
        return [shard_epoch(*self.settings, examples, self.model, self.decoder, start, epoch,
                            k)
                for k, examples in enumerate(self.examples)]


class ParameterMixing:
    """The driver of iterative parameter mixing (McDonald, Hall and Mann 2010, Figure 3,
    uniform ``mu``): ``epochs`` rounds of :func:`shard_epoch` on every shard, run by
    ``runner``, each followed by mixing.

    Parameters
    ----------
    trainer:
        The online trainer of the run (its ``epochs`` and its objective are used here;
        the shards make their own from the same settings).
    shards:
        ``K``, the number of shards.
    runner:
        Runs one epoch of every shard (:data:`ShardRunner`).
    """

    def __init__(self, trainer: OnlineTrainer, shards: int, runner: ShardRunner) -> None:
        check_mixable(trainer)
        if shards < 1:
            raise ValueError(f"shards must be >= 1, not {shards}")
        self.trainer = trainer
        self.shards = shards
        self.runner = runner

    def run(self, model: LinearModel) -> Iterator[EpochStats]:
        """Train, yielding after each epoch with ``model.weights`` the average of every
        iterate so far."""
        mixed = np.zeros(model.dim)
        total = np.zeros(model.dim)
        iterates = 0
        for epoch in range(1, self.trainer.epochs + 1):
            began = time.perf_counter()
            results = self.runner(epoch, SparseWeights.of(mixed))
            mixed = np.zeros(model.dim)
            for result in results:                      # in shard order: deterministic
                result.last.add_to(mixed)
                result.average.add_to(total, float(result.iterates))
                iterates += result.iterates
            mixed /= len(results)
            model.weights = total / max(iterates, 1)
            sentences = sum(r.sentences for r in results)
            mean_slack = sum(r.slack_sum for r in results) / max(sentences, 1)
            keys = sorted(set().union(*(r.extra for r in results)))
            extra = {key: sum(r.extra.get(key, 0.0) * r.sentences for r in results)
                     / max(sentences, 1) for key in keys}     # shares weighted by sentences
            extra["slowest_shard_seconds"] = max(r.seconds for r in results)
            stats = EpochStats(epoch, self.trainer.objective(
                mean_slack, AveragedWeights.starting_at(mixed)), mean_slack,
                time.perf_counter() - began, extra=extra)
            log.info("epoch %d (%d shards mixed): objective %.4f, mean slack %.4f, %.1f s",
                     epoch, len(results), stats.objective, mean_slack, stats.seconds)
            yield stats
