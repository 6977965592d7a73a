"""A first run compiles numba's kernels in a child process that then ends.

Numba keeps, for the life of a process, everything it compiled: the LLVM modules of
176 functions, some 230 MB, when the README's training command runs on a cold cache
(``eval/results/frozen/footprint.md``; trimming the C heap after each compilation gives back
nothing). The same kernels loaded from numba's on-disk cache take a fraction of that.
So when the cache has not yet seen this polyparse with this training setup,
``polyparse train`` first rehearses the run on its first few sentences in two child
processes, one after the other: the tokenizer, tagger and lemmatizer, then the parser
(features, pruner, one epoch of the trainer, the dev parse). That compiles and caches
the kernels the run will call; each child's memory goes back to the system when it
ends, and the run itself loads them. A stamp in
numba's cache folder, named by a digest of polyparse's sources and of the setup, marks
a setup as rehearsed. The rehearsal costs the compilation the run would have done
anyway, plus a few seconds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Sequence

import numba

from polyparse.corpora.cache import source_digest
from polyparse.corpora.sentence import Sentence

from . import training
from .config import TrainConfig
from .pipeline import Parser
from .workers import in_child

log = logging.getLogger("polyparse.train")

REHEARSAL_SENTENCES = 24
"""Training sentences of the rehearsal (more when jackknifing needs more folds)."""

def warm_kernels(train: Sequence[Sentence], config: TrainConfig,
                 dev: Sequence[Sentence] | None) -> None:
    """Rehearse the training run in a child process unless numba's cache already holds
    its kernels (by this module's stamp). ``POLYPARSE_REHEARSE=0`` turns it off."""
    if os.environ.get("POLYPARSE_REHEARSE", "1") == "0" or numba.config.DISABLE_JIT:
        return
    stamp = Path(numba.config.CACHE_DIR) / "polyparse-rehearsed" / _digest(config)
    if stamp.exists():
        return
    size = min(len(train), max(REHEARSAL_SENTENCES, config.jackknife))
    log.info("numba: compiling the kernels of this setup in a child process (first run)")
    _rehearse(list(train[:size]), config, list(dev[:4]) if dev else None)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()


def _rehearse(train: list[Sentence], config: TrainConfig,
              dev: list[Sentence] | None) -> None:
    """The run on ``train`` in two child processes, one after the other, so that
    neither holds the compiled code of both: the tokenizer, tagger and lemmatizer
    (:func:`~parser.training.fit_text_models`), then the parser alone for one epoch
    (the kernels of features, pruner, trainer, decoder and dev parse; one process, as a
    pool's worker cannot start one of its own)."""
    # one process and one epoch: --jobs and --average-from, which the run takes, would
    # not fit it ("average_from must be an epoch of the run, 1 to 1")
    options = {**config.trainer_options,
               **{name: 1 for name in ("jobs", "average_from") if name in config.trainer_options}}
    parser_only = dataclasses.replace(config, epochs=1, trainer_options=options,
                                      tokenizer=None, tagger=None, lemmatizer=None)
    if config.tagger is not None or config.tokenizer is not None:
        in_child(_quietly, training.fit_text_models, train, config, dev)
    in_child(_quietly, Parser.train, train, parser_only, dev)


def _quietly(function, *args) -> None:
    logging.getLogger("polyparse").setLevel(logging.WARNING)
    function(*args)


def _digest(config: TrainConfig) -> str:
    """Names the sources (as numba's cache folder does, also where ``NUMBA_CACHE_DIR``
    chooses another folder) and the setup, apart from what does not choose a kernel
    (epochs, seed)."""
    hasher = hashlib.sha256(source_digest(Path(__file__).resolve().parent.parent).encode())
    setup = {k: v for k, v in config.to_json().items()
             if k not in ("epochs", "seed")}
    hasher.update(json.dumps(setup, sort_keys=True, default=str).encode())
    return hasher.hexdigest()[:32]
