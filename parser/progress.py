"""Progress of a long command on standard error, and the line that sums it up.

On a terminal, :func:`tracked` shows a tqdm bar: with a total when the input's size is
known up front (:func:`count_sentences` of a CoNLL-U file, the characters of raw text),
hence a rate and an ETA. Off a terminal (a log file, a pipe) it logs a line every
:data:`PROGRESS_EVERY` sentences or :data:`PROGRESS_SECONDS` seconds, whichever comes
first. Either way the :class:`Tally` it keeps gives the summary line a command prints at
its end: sentences, words, seconds and words per second.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("polyparse")

PROGRESS_EVERY = 1000
"""Sentences between two progress lines when standard error is not a terminal."""

PROGRESS_SECONDS = 60.0
"""Seconds between two progress lines when standard error is not a terminal (for slow
commands such as ``gap``, whose sentences take seconds each)."""


@dataclass
class Tally:
    """What a command has ``done`` (``"parsed"``, ``"measured"``) since it started:
    sentences and words."""

    done: str
    sentences: int = 0
    words: int = 0
    start: float = field(default_factory=time.perf_counter)

    def add(self, sentences: int, words: int) -> None:
        self.sentences += sentences
        self.words += words

    def line(self) -> str:
        """``parsed 2,001 sentences (25,148 words) in 12.3 s: 2,045 words/s``."""
        seconds = time.perf_counter() - self.start
        rate = self.words / seconds if seconds > 0 else 0.0
        return (f"{self.done} {self.sentences:,} sentence{'s' * (self.sentences != 1)} "
                f"({self.words:,} words) in {seconds:.1f} s: {rate:,.0f} words/s")


def showing_bar() -> bool:
    """Whether progress is a bar: standard error is a terminal and not silenced (-q)."""
    return sys.stderr.isatty() and log.isEnabledFor(logging.INFO)


def tracked(items: Iterable, tally: Tally, *, counts: Callable = lambda s: (1, len(s)),
            total: int | None = None, unit: str = "sentences",
            size: Callable | None = None) -> Iterator:
    """``items`` passed through, each added to ``tally`` as its ``counts(item)``
    (sentences, words), with progress on standard error (see the module's docstring).
    The bar counts sentences out of ``total``, or with ``size`` each item's size out of
    ``total`` in ``unit`` (the characters of raw text)."""
    if showing_bar():
        yield from _bar(items, tally, counts, total, unit, size)
        return
    lines = _Lines(tally)
    for item in items:
        tally.add(*counts(item))
        yield item
        lines.maybe()


def _bar(items, tally, counts, total, unit, size) -> Iterator:
    from tqdm import tqdm

    with tqdm(total=total, unit=" " + unit, file=sys.stderr, leave=False,
              dynamic_ncols=True, desc=tally.done) as bar:
        for item in items:
            sentences, words = counts(item)
            tally.add(sentences, words)
            yield item
            bar.update(size(item) if size is not None else sentences)


class _Lines:
    """A log line of a :class:`Tally` every :data:`PROGRESS_EVERY` sentences or
    :data:`PROGRESS_SECONDS` seconds."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.sentences = 0
        self.time = tally.start

    def maybe(self) -> None:
        now = time.perf_counter()
        if (self.tally.sentences - self.sentences >= PROGRESS_EVERY
                or now - self.time >= PROGRESS_SECONDS):
            log.info("%s so far", self.tally.line())
            self.sentences, self.time = self.tally.sentences, now


def count_sentences(path: str | Path | None) -> int | None:
    """The sentences of a CoNLL-U (or CoNLL-X) file, counted cheaply (blocks of lines
    with a word line, ended by a blank line or the end of the file), for the total of a
    progress bar; None for standard input or a file that cannot be read (the reader
    says why when it gets there)."""
    if path is None:
        return None
    count, words = 0, False
    try:
        with open(path, "rb") as file:
            for line in file:
                body = line.strip()
                if not body:
                    count += words
                    words = False
                elif not body.startswith(b"#"):
                    words = True
    except OSError:
        return None
    return count + words


def visible_characters(text: str) -> int:
    """The characters of ``text`` that are not whitespace: the size of raw text for a
    progress bar, as a sentence's ``# text`` keeps them all."""
    return len("".join(text.split()))
