"""Per-sentence work for a batch of examples, in this process or on a pool of forked
processes that read the weights and the per-sentence states from shared memory
(``--jobs``)."""

from __future__ import annotations

import multiprocessing

import numpy as np

from polyparse.corpora.signals import end_pool, in_worker, stops_to_main_thread

# What forked workers inherit: (trainer, examples, model, decoder, weights, states).
_WORKER: tuple = ()


def _infer(task: tuple[int, bool, float]):
    trainer, examples, model, decoder, weights, states = _WORKER
    i, relaxed, scale = task
    return trainer.inference(examples[i], model, decoder, relaxed, weights.v, scale, states[i])


class BatchInference:
    """``infer(indices, relaxed) -> constraints`` at the current weights, in order;
    ``relaxed[j]`` says whether example ``indices[j]`` uses the relaxed decoder."""

    def __init__(self, trainer, examples, model, decoder, weights, states, jobs: int) -> None:
        self.state = (trainer, examples, model, decoder, weights, states)
        self.jobs = jobs
        self.pool = None

    def __enter__(self) -> "BatchInference":
        if self.jobs > 1:
            global _WORKER
            _WORKER = self.state
            with stops_to_main_thread():      # the pool's threads never take a Ctrl-C
                self.pool = multiprocessing.get_context("fork").Pool(self.jobs,
                                                                     initializer=in_worker)
        return self

    def __exit__(self, *exc) -> None:
        global _WORKER
        if self.pool is not None:
            end_pool(self.pool)
            _WORKER = ()

    def __call__(self, indices: np.ndarray, relaxed: list[bool]) -> list:
        trainer, examples, model, decoder, weights, states = self.state
        if self.pool is None or len(indices) == 1:
            return [trainer.inference(examples[i], model, decoder, r, weights.v, weights.scale,
                                      states[i])
                    for i, r in zip(indices, relaxed)]
        return self.pool.map(_infer, [(int(i), r, weights.scale)
                                      for i, r in zip(indices, relaxed)], chunksize=1)
