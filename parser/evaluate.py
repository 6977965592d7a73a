"""Attachment scores (``docs/algorithms.md`` section 7), and the CoNLL 2018 scores of a
parse whose tokenization may differ from the gold one (:func:`conll18_scores`: every
metric of the shared-task script, Zeman et al., 2018, section 3).

:func:`attachment_scores`: UAS, LAS and label accuracy over syntactic words
(multiword-token ranges and empty nodes are not words, as the CoNLL 2018 script counts),
both over all words and without punctuation (UPOS ``PUNCT``, the CoNLL-X tradition).
``las`` compares the universal part of the labels, as CoNLL 2018 does (``nmod:poss``
counts as ``nmod``); ``las_full`` ("LAS-full" in ``polyparse eval``) compares the full
labels, subtypes included (``nmod:poss`` is then wrong for ``nmod``).
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


# Zeman et al. (2018), *CoNLL 2018 Shared Task: Multilingual Parsing from Raw Text to
# Universal Dependencies*, section 3: the universal relations of content words, the only
# words CLAS, MLAS and BLEX score, and of function words, which MLAS checks with their
# head; the other relations (punct) are neither.
CONTENT_RELATIONS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl",
    "dislocated", "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod",
    "conj", "fixed", "flat", "compound", "list", "parataxis", "orphan", "goeswith",
    "reparandum", "root", "dep"})
FUNCTION_RELATIONS = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})
# The universal features of UD v2 that the same section lets UFeats, AllTags and MLAS
# compare; language-specific and layered features (``Number[psor]``) are left out.
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy",
    "Number", "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice",
    "Evident", "Polarity", "Person", "Polite"})


def universal_features(feats: str) -> str:
    """The universal features of a FEATS value, sorted, joined by ``|`` (``""`` for none).

    Examples
    --------
    >>> universal_features("Number[psor]=Sing|Tense=Past|Case=Nom|Foo=Bar")
    'Case=Nom|Tense=Past'
    >>> universal_features("_")
    ''
    """
    return "|".join(sorted(f for f in feats.split("|")
                           if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


@dataclass(frozen=True)
class AlignedScore:
    """One CoNLL 2018 metric: ``correct`` of ``gold`` gold items (tokens, sentences or
    words) and ``system`` system items; for the metrics over aligned words, ``aligned``
    gold words were aligned to a system word (None for tokens, sentences and words)."""

    gold: int
    system: int
    correct: int
    aligned: int | None = None

    @property
    def f1(self) -> float:
        return F1(self.gold, self.system, self.correct).f1

    def to_json(self) -> dict:
        score = F1(self.gold, self.system, self.correct)
        accuracy = (None if self.aligned is None
                    else 100 * self.correct / self.aligned if self.aligned else 0.0)
        return {"gold": self.gold, "system": self.system, "correct": self.correct,
                "aligned": self.aligned, "precision": 100 * score.precision,
                "recall": 100 * score.recall, "f1": 100 * score.f1,
                "aligned_accuracy": accuracy}


# Field of :class:`Conll18Scores` -> the name the CoNLL 2018 script prints, in its order.
METRICS = {"tokens": "Tokens", "sentences": "Sentences", "words": "Words", "upos": "UPOS",
           "xpos": "XPOS", "ufeats": "UFeats", "alltags": "AllTags", "lemmas": "Lemmas",
           "uas": "UAS", "las": "LAS", "clas": "CLAS", "mlas": "MLAS", "blex": "BLEX"}


@dataclass(frozen=True)
class Conll18Scores:
    """Every metric of the CoNLL 2018 shared-task script (Zeman et al., 2018, section 3).

    ``tokens``, ``sentences``, ``words``: segmentation F1. Over the aligned words:
    ``upos``, ``xpos``; ``ufeats`` (the universal features, :func:`universal_features`);
    ``alltags`` (UPOS, XPOS and universal features together); ``lemmas`` (a gold lemma
    ``_`` counts as right); ``uas``; ``las`` (head and universal part of the label).
    Over content words only (:data:`CONTENT_RELATIONS`, gold words for recall, system
    words for precision): ``clas`` (= LAS); ``mlas`` (+ UPOS, universal features, and the
    function-word children (:data:`FUNCTION_RELATIONS`): the same children, each with
    the right label, UPOS and universal features); ``blex`` (+ lemma).
    """

    tokens: AlignedScore
    sentences: AlignedScore
    words: AlignedScore
    upos: AlignedScore
    xpos: AlignedScore
    ufeats: AlignedScore
    alltags: AlignedScore
    lemmas: AlignedScore
    uas: AlignedScore
    las: AlignedScore
    clas: AlignedScore
    mlas: AlignedScore
    blex: AlignedScore

    def to_json(self) -> dict:
        return {name: getattr(self, name).to_json() for name in METRICS}


def conll18_scores(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> Conll18Scores:
    """Score ``pred`` against ``gold`` when their tokenization may differ.

    Both documents must spell the same non-space characters. Words are aligned by
    character offsets (:func:`corpora.alignment.align_words`, the CoNLL 2018 alignment,
    multiword tokens by the longest common subsequence of their words). An aligned word
    has the right head when its system head is aligned to its gold head (or both are the
    root). Each metric divides twice the correct words by the gold plus the system words
    (F1); see :class:`Conll18Scores` for what each one requires. With identical
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
    las_ok = head_ok & (g.deprels[gi] == p.deprels[pi])
    upos_ok = g.upos[gi] == p.upos[pi]
    xpos_ok = g.xpos[gi] == p.xpos[pi]
    feats_ok = g.ufeats[gi] == p.ufeats[pi]
    lemma_ok = (g.lemmas[gi] == "_") | (g.lemmas[gi] == p.lemmas[pi])
    # A gold function word whose system word has its head, label, UPOS and features is
    # the same child of the same head on both sides; a content word's children are all
    # right when each of its gold ones is and both sides have as many.
    child_ok = g.function[gi] & (gold_heads >= 0) & las_ok & upos_ok & feats_ok
    children_right = np.bincount(gold_heads[child_ok], minlength=len(g.heads))
    children_ok = ((g.function_children[gi] == p.function_children[pi])
                   & (children_right[gi] == g.function_children[gi]))

    def score(correct: np.ndarray) -> AlignedScore:
        return AlignedScore(len(g.heads), len(p.heads), int(correct.sum()), len(pairs))

    content = g.content[gi]

    def content_score(correct: np.ndarray) -> AlignedScore:
        return AlignedScore(int(g.content.sum()), int(p.content.sum()),
                            int((correct & content).sum()), int(content.sum()))

    def spans(f1: F1) -> AlignedScore:
        return AlignedScore(f1.gold, f1.system, f1.correct)

    return Conll18Scores(
        tokens=spans(segmentation.tokens), sentences=spans(segmentation.sentences),
        words=spans(segmentation.words), upos=score(upos_ok), xpos=score(xpos_ok),
        ufeats=score(feats_ok), alltags=score(upos_ok & xpos_ok & feats_ok),
        lemmas=score(lemma_ok), uas=score(head_ok), las=score(las_ok),
        clas=content_score(las_ok),
        mlas=content_score(las_ok & upos_ok & feats_ok & children_ok),
        blex=content_score(las_ok & lemma_ok))


class _Words:
    """The words of a document, numbered from 0 across sentences: their heads (another
    word's number, -1 for the root, -2 for none), UPOS, XPOS, universal features, lemmas
    and universal labels, whether the label is a content or a function relation, and
    how many function-word children each word has."""

    def __init__(self, sentences: Sequence[Sentence], expected: int) -> None:
        heads, upos, xpos, feats, lemmas, deprels = [], [], [], [], [], []
        base = 0
        for s in sentences:
            h = s.heads[1:]
            heads.append(np.where(h > 0, h - 1 + base, np.where(h == 0, -1, -2)))
            upos.extend(s.upos[1:])
            xpos.extend(s.xpos[1:])
            feats.extend(universal_features(f) for f in s.feats[1:])
            lemmas.extend(s.lemmas[1:])
            deprels.extend(s.deprels[1:])
            base += len(s)
        if base != expected:
            raise ValueError(f"{base} words but {expected} words in the token lines")
        self.heads = np.concatenate(heads) if heads else np.zeros(0, dtype=np.int64)
        self.upos = np.array(upos, dtype=object)
        self.xpos = np.array(xpos, dtype=object)
        self.ufeats = np.array(feats, dtype=object)
        self.lemmas = np.array(lemmas, dtype=object)
        self.deprels = _universal(deprels)
        self.content = np.isin(self.deprels, list(CONTENT_RELATIONS))
        self.function = np.isin(self.deprels, list(FUNCTION_RELATIONS))
        attached = self.function & (self.heads >= 0)
        self.function_children = np.bincount(self.heads[attached], minlength=base)


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
