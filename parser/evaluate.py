"""Attachment scores (``docs/algorithms.md`` section 7), and the CoNLL 2018 scores of a
parse whose tokenization may differ from the gold one (:func:`conll18_scores`).

UAS, LAS and label accuracy over syntactic words (multiword-token ranges and empty
nodes are not words, as the CoNLL 2018 shared-task script counts), both over all words
and without punctuation (UPOS ``PUNCT``, the CoNLL-X tradition). Labels are compared on
their universal part (``nmod:poss`` counts as ``nmod``) in the CoNLL 2018 way for
``las``; ``las_full`` compares the full label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from polyparse.corpora.alignment import F1, Segmentation, align_words, evaluate_segmentation
from polyparse.corpora.errors import CorpusError
from polyparse.corpora.sentence import Sentence


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


# -- predicted tokenization ---------------------------------------------------------------

def same_tokenization(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> bool:
    """Whether both files hold the same sentences of the same words (then
    :func:`attachment_scores` applies)."""
    return len(gold) == len(pred) and all(g.forms == p.forms for g, p in zip(gold, pred))


@dataclass(frozen=True)
class AlignedScore:
    """One CoNLL 2018 metric over aligned words: ``correct`` of ``gold`` gold words and
    ``system`` system words, of which ``aligned`` were aligned."""

    gold: int
    system: int
    correct: int
    aligned: int

    @property
    def f1(self) -> float:
        return F1(self.gold, self.system, self.correct).f1

    def to_json(self) -> dict:
        score = F1(self.gold, self.system, self.correct)
        return {"gold": self.gold, "system": self.system, "correct": self.correct,
                "aligned": self.aligned, "precision": 100 * score.precision,
                "recall": 100 * score.recall, "f1": 100 * score.f1,
                "aligned_accuracy": 100 * self.correct / self.aligned if self.aligned else 0.0}


METRICS = ("tokens", "sentences", "words", "upos", "xpos", "uas", "las")


@dataclass(frozen=True)
class Conll18Scores:
    """Segmentation F1 (tokens, sentences, words) and, over the aligned words, UPOS,
    XPOS, UAS and LAS F1, as the CoNLL 2018 shared-task script computes them."""

    tokens: AlignedScore
    sentences: AlignedScore
    words: AlignedScore
    upos: AlignedScore
    xpos: AlignedScore
    uas: AlignedScore
    las: AlignedScore

    def to_json(self) -> dict:
        return {name: getattr(self, name).to_json() for name in METRICS}


def conll18_scores(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> Conll18Scores:
    """Score ``pred`` against ``gold`` when their tokenization may differ.

    Both documents must spell the same non-space characters. Words are aligned by
    character offsets (:func:`corpora.alignment.align_words`, the CoNLL 2018 alignment,
    multiword tokens by the longest common subsequence of their words). An aligned word
    has the right head when its system head is aligned to its gold head (or both are the
    root); LAS also needs the universal part of the label to be the same. F1 divides
    twice the correct words by the gold plus the system words; with identical
    tokenization UAS and LAS F1 equal :func:`attachment_scores`' UAS and LAS.

    Raises
    ------
    CorpusError
        If the documents' characters differ, naming the first predicted sentence (file
        and line) where they do.
    """
    gold_seg = Segmentation.from_sentences(gold)
    pred_seg = Segmentation.from_sentences(pred)
    if gold_seg.characters != pred_seg.characters:
        raise _text_differs(gold, pred, gold_seg, pred_seg)
    segmentation = evaluate_segmentation(gold_seg, pred_seg)
    g, p = _Words(gold, len(gold_seg.words)), _Words(pred, len(pred_seg.words))
    pairs = np.array(align_words(gold_seg.words, pred_seg.words), dtype=np.int64).reshape(-1, 2)
    gi, pi = pairs[:, 0], pairs[:, 1]
    aligned_to = np.full(len(g.heads) + 1, -3, dtype=np.int64)   # gold word -> system word
    aligned_to[gi] = pi
    aligned_to[-1] = -1                                         # the root -> the root
    gold_heads = g.heads[gi]
    head_ok = (gold_heads != -2) & (aligned_to[gold_heads] == p.heads[pi])
    label_ok = g.deprels[gi] == p.deprels[pi]

    def score(correct: np.ndarray) -> AlignedScore:
        return AlignedScore(len(g.heads), len(p.heads), int(correct.sum()), len(pairs))

    def spans(f1: F1) -> AlignedScore:
        return AlignedScore(f1.gold, f1.system, f1.correct, f1.correct)

    return Conll18Scores(spans(segmentation.tokens), spans(segmentation.sentences),
                         spans(segmentation.words), score(g.upos[gi] == p.upos[pi]),
                         score(g.xpos[gi] == p.xpos[pi]), score(head_ok),
                         score(head_ok & label_ok))


class _Words:
    """The words of a document, numbered from 0 across sentences: their UPOS, XPOS,
    universal labels and heads (another word's number, -1 for the root, -2 for none)."""

    def __init__(self, sentences: Sequence[Sentence], expected: int) -> None:
        heads, upos, xpos, deprels = [], [], [], []
        base = 0
        for s in sentences:
            h = s.heads[1:]
            heads.append(np.where(h > 0, h - 1 + base, np.where(h == 0, -1, -2)))
            upos.extend(s.upos[1:])
            xpos.extend(s.xpos[1:])
            deprels.extend(s.deprels[1:])
            base += len(s)
        if base != expected:
            raise ValueError(f"{base} words but {expected} words in the token lines")
        self.heads = np.concatenate(heads) if heads else np.zeros(0, dtype=np.int64)
        self.upos = np.array(upos, dtype=object)
        self.xpos = np.array(xpos, dtype=object)
        self.deprels = _universal(deprels)


def _text_differs(gold: Sequence[Sentence], pred: Sequence[Sentence], gold_seg: Segmentation,
                  pred_seg: Segmentation) -> CorpusError:
    """The error for two documents that do not spell the same characters."""
    a, b = gold_seg.characters, pred_seg.characters
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))

    def sentence_at(sentences: Sequence[Sentence], seg: Segmentation) -> Sentence | None:
        if not sentences:
            return None
        k = next((k for k, (_, end) in enumerate(seg.sentences) if i < end), len(sentences) - 1)
        return sentences[k]

    g, p = sentence_at(gold, gold_seg), sentence_at(pred, pred_seg)
    where = f" ({g.source}:{g.first_line})" if g else ""
    return CorpusError(p.source if p else "<predicted>", p.first_line if p else None,
                       f"the text differs from the gold file{where} at its character {i} "
                       f"(spaces not counted): {b[i:i + 20]!r} instead of {a[i:i + 20]!r}; "
                       "both files must spell the same text")
