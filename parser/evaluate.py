"""Attachment scores (``docs/algorithms.md`` section 7).

UAS, LAS and label accuracy over syntactic words (multiword-token ranges and empty
nodes are not words, as the CoNLL 2018 shared-task script counts), both over all words
and without punctuation (UPOS ``PUNCT``, the CoNLL-X tradition). Labels are compared on
their universal part (``nmod:poss`` counts as ``nmod``) in the CoNLL 2018 way for
``las``; ``las_full`` compares the full label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from corpora.errors import CorpusError
from corpora.sentence import Sentence


@dataclass
class _Counts:
    words: int = 0
    heads: int = 0
    labeled: int = 0
    labeled_full: int = 0
    labels: int = 0

    def add(self, mask: np.ndarray, head_ok: np.ndarray, label_ok: np.ndarray,
            full_ok: np.ndarray) -> None:
        self.words += int(mask.sum())
        self.heads += int((head_ok & mask).sum())
        self.labeled += int((head_ok & label_ok & mask).sum())
        self.labeled_full += int((head_ok & full_ok & mask).sum())
        self.labels += int((label_ok & mask).sum())

    def scores(self) -> dict:
        pct = (lambda k: 100.0 * k / self.words) if self.words else (lambda k: 0.0)
        return {"words": self.words, "uas": pct(self.heads), "las": pct(self.labeled),
                "las_full": pct(self.labeled_full), "label_acc": pct(self.labels)}


@dataclass
class AttachmentScores:
    all_words: dict = field(default_factory=dict)
    no_punct: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"all_words": self.all_words, "no_punct": self.no_punct}


def _universal(labels: Iterable[str]) -> np.ndarray:
    return np.array([label.split(":", 1)[0] for label in labels], dtype=object)


def attachment_scores(gold: Iterable[Sentence], pred: Iterable[Sentence]) -> AttachmentScores:
    """Compare two parses of the same words, sentence by sentence.

    Raises :class:`CorpusError` (naming the predicted file and line) when the files do
    not hold the same sentences and words.
    """
    every, no_punct = _Counts(), _Counts()
    pred_iter = iter(pred)
    for g in gold:
        p = next(pred_iter, None)
        if p is None:
            raise CorpusError(g.source, g.first_line,
                              "the predicted file ends before this gold sentence")
        if p.forms != g.forms:
            where = next((i for i, (a, b) in enumerate(zip(g.forms, p.forms)) if a != b),
                         min(len(g.forms), len(p.forms)))
            raise CorpusError(p.source, p.first_line,
                              f"words differ from the gold file ({g.source}:{g.first_line}) "
                              f"at word {where}: tokenization must be identical")
        head_ok = p.heads[1:] == g.heads[1:]
        full_ok = np.array(p.deprels[1:], dtype=object) == np.array(g.deprels[1:], dtype=object)
        label_ok = _universal(p.deprels[1:]) == _universal(g.deprels[1:])
        words = np.ones(len(g), dtype=bool)
        every.add(words, head_ok, label_ok, full_ok)
        no_punct.add(np.array(g.upos[1:]) != "PUNCT", head_ok, label_ok, full_ok)
    extra = next(pred_iter, None)
    if extra is not None:
        raise CorpusError(extra.source, extra.first_line,
                          "the predicted file has more sentences than the gold file")
    return AttachmentScores(every.scores(), no_punct.scores())
