"""Parsing on a pool of worker processes (``--jobs``): each worker holds the parser once
(inherited by ``fork``, or loaded from its model file), chunks of sentences go out and
come back in input order, at most ``2 * jobs`` in flight."""

from __future__ import annotations

import copy
import multiprocessing
from collections import deque
from pathlib import Path
from typing import Iterator, Protocol

from polyparse.corpora.sentence import Sentence
from polyparse.corpora.signals import end_pool, in_worker, stops_to_main_thread
from polyparse.decoders import CertificateCounts

from .analysis import ParseOptions


class ChunkParser(Protocol):
    """What the executors (``--jobs``, Dask) need of a parser
    (:class:`~parser.pipeline.Parser`): to parse a chunk, count certificates, and be
    loaded from its model file in another process."""

    path: Path | None
    tagger: object
    decodings: CertificateCounts

    def parse_chunk(self, chunk: list[Sentence], options: ParseOptions) -> list[Sentence]: ...

    def save(self, path: str | Path) -> None: ...

    @classmethod
    def load(cls, path: str | Path) -> "ChunkParser": ...


def parse_in_processes(parser: ChunkParser, chunks: Iterator[list[Sentence]], jobs: int,
                       options: ParseOptions) -> Iterator[Sentence]:
    """The parsed sentences of ``chunks``, in order, as :meth:`Parser.parse_chunk` gives
    them for ``options``; the workers' certificate counts are added to
    ``parser.decodings``."""
    global _WORKER
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    if context.get_start_method() != "fork" and parser.path is None:
        raise ValueError("parsing on several processes without fork needs a parser "
                         "loaded from a file (Parser.load)")
    _WORKER = parser        # inherited by forked workers; spawned ones load parser.path
    try:
        with stops_to_main_thread():          # the pool's threads never take a Ctrl-C
            pool = context.Pool(jobs, initializer=_init_worker,
                                initargs=(type(parser),
                                          str(parser.path) if parser.path else None))
    finally:
        _WORKER = None
    try:
        pending: deque = deque()
        for chunk in chunks:
            pending.append(pool.apply_async(_parse_in_worker, (chunk, options)))
            if len(pending) >= 2 * jobs:
                yield from collect(parser, pending.popleft().get())
        while pending:
            yield from collect(parser, pending.popleft().get())
    finally:
        end_pool(pool)


def in_child(function, *args):
    """``function(*args)`` run in a child process (forked where possible), its result
    sent back; an exception in it is raised here. Memory the work takes and keeps (numba's
    compiled modules) goes back to the system when it ends. A stop signal ends the child
    with the parent (:func:`~corpora.signals.end_pool`)."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with stops_to_main_thread():
        pool = context.Pool(1, initializer=in_worker)
    try:
        return pool.apply(function, args)
    finally:
        end_pool(pool)


def parse_counted(parser: ChunkParser, chunk: list[Sentence], options: ParseOptions
                  ) -> tuple[list[Sentence], CertificateCounts]:
    """What a worker (a process of ``--jobs``, or a Dask worker of ``--dask``) does with
    one chunk: :meth:`Parser.parse_chunk` for ``options``, and the certificates of the
    chunk alone, counted on a shallow copy of ``parser`` so that tasks running side by
    side in threads of one worker count apart. Pure: the same chunk gives the same
    result wherever it runs, so a chunk whose worker died is parsed again elsewhere."""
    worker = copy.copy(parser)
    worker.decodings = CertificateCounts()
    return worker.parse_chunk(chunk, options), worker.decodings


def collect(parser: ChunkParser, done: tuple[list[Sentence], CertificateCounts]
            ) -> list[Sentence]:
    """The sentences of a chunk :func:`parse_counted` parsed, its counts added to
    ``parser.decodings``."""
    parsed, counts = done
    parser.decodings.merge(counts)
    return parsed


_WORKER: "ChunkParser | None" = None
"""The parser of a worker process (set in the parent just before forking)."""


def _init_worker(cls: type, path: str | None) -> None:
    global _WORKER
    in_worker()     # the parent handles Ctrl-C; SIGTERM from the pool ends it at once
    if _WORKER is None:             # spawned, not forked: load the model once
        _WORKER = cls.load(path)
    # load the compiled tagging and parsing kernels now, while the parent reads input
    _WORKER.parse_chunk([Sentence.from_words(["Go", "."])],
                        ParseOptions(retag=_WORKER.tagger is not None))


def _parse_in_worker(chunk: list[Sentence], options: ParseOptions
                     ) -> tuple[list[Sentence], CertificateCounts]:
    return parse_counted(_WORKER, chunk, options)
