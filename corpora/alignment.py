"""Gold and system segmentations aligned by character offsets, and their F1 scores.

This is the segmentation part of the CoNLL 2018 shared-task evaluation (Zeman et al.,
2018, *CoNLL 2018 Shared Task: Multilingual Parsing from Raw Text to Universal
Dependencies*, section 2; script ``conll18_ud_eval.py`` by Straka and Popel):

* every token's form loses its space characters (Unicode category ``Zs``) and the
  forms of a document are concatenated; gold and system must give the same string;
* a token, and a sentence, is a span ``[start, end)`` of that string; a system span is
  correct when a gold span has the same start and end (:func:`span_f1`);
* words are aligned by span where no multiword token is involved, and by the longest
  common subsequence of their lowercased forms inside each region a multiword token
  covers (:func:`align_words`); the words F1 counts aligned pairs.

Input is a document as sentences of :class:`SurfaceToken` (a surface form and its
syntactic words); :func:`sentence_tokens` reads them from a :class:`Sentence`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from polyparse.corpora.sentence import Sentence

_RANGE_ID = re.compile(r"^(\d+)-(\d+)$")


class SurfaceToken(NamedTuple):
    """One token as written in the text: its form, its syntactic words, its spacing."""

    form: str
    words: tuple[str, ...]
    space_after: bool = True


def sentence_tokens(sentence: Sentence) -> list[SurfaceToken]:
    """The surface tokens of ``sentence``, read from its CoNLL-U lines.

    A multiword-token range line ``i-j`` gives one token whose words are lines
    ``i..j``; any other word line is a token of one word; empty nodes are skipped.
    ``space_after`` is False where MISC of the token's (range) line has ``SpaceAfter=No``.
    """
    tokens: list[SurfaceToken] = []
    lines = [line.split("\t") for line in sentence.lines if line and not line.startswith("#")]
    k = 0
    while k < len(lines):
        cols = lines[k]
        match = _RANGE_ID.match(cols[0])
        if match:
            size = int(match.group(2)) - int(match.group(1)) + 1
            words = tuple(c[1] for c in lines[k + 1:k + 1 + size])
            k += 1 + size
        elif cols[0].isdigit():
            words = (cols[1],)
            k += 1
        else:                                      # an empty node "i.j"
            k += 1
            continue
        misc = cols[9].split("|") if len(cols) > 9 else []
        tokens.append(SurfaceToken(cols[1], words, "SpaceAfter=No" not in misc))
    return tokens


@dataclass(frozen=True)
class F1:
    """Counts of one CoNLL 2018 metric and the precision, recall and F1 they give."""

    gold: int
    system: int
    correct: int

    @property
    def precision(self) -> float:
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        total = self.gold + self.system
        return 2 * self.correct / total if total else 0.0


@dataclass(frozen=True)
class Word:
    """A syntactic word of a :class:`Segmentation`: its form and its token's span.

    ``start, end`` are offsets into :attr:`Segmentation.characters`; the words of a
    multiword token all carry the whole token's span and ``multiword=True``. The form of
    a word that is a token by itself has no space characters, as the token's.
    """

    form: str
    start: int
    end: int
    multiword: bool


@dataclass(frozen=True)
class Segmentation:
    """A document cut into sentences, tokens and words over its non-space characters.

    Attributes
    ----------
    characters:
        The forms of all tokens concatenated, without ``Zs`` characters.
    tokens, sentences:
        ``[start, end)`` spans into :attr:`characters`, in document order.
    words:
        Every syntactic word in order (see :class:`Word`).
    """

    characters: str
    tokens: tuple[tuple[int, int], ...]
    sentences: tuple[tuple[int, int], ...]
    words: tuple[Word, ...]

    @classmethod
    def from_tokens(cls, sentences: Iterable[Sequence[SurfaceToken]]) -> "Segmentation":
        """Build from sentences of tokens (empty sentences are ignored)."""
        chars: list[str] = []
        tokens: list[tuple[int, int]] = []
        spans: list[tuple[int, int]] = []
        words: list[Word] = []
        index = 0
        for sentence in sentences:
            if not sentence:
                continue
            first = index
            for token in sentence:
                form = "".join(c for c in token.form if unicodedata.category(c) != "Zs")
                if not form:
                    raise ValueError(f"token {token.form!r} has no non-space character")
                chars.append(form)
                tokens.append((index, index + len(form)))
                multiword = len(token.words) > 1
                # A one-word token's word has its spaceless form: "New York" aligns with
                # a multiword token's word "NewYork", as in the CoNLL 2018 script.
                words.extend(Word(w if multiword else form, index, index + len(form),
                                  multiword) for w in token.words)
                index += len(form)
            spans.append((first, index))
        return cls("".join(chars), tuple(tokens), tuple(spans), tuple(words))

    @classmethod
    def from_sentences(cls, sentences: Iterable[Sentence]) -> "Segmentation":
        """Build from :class:`Sentence` objects (their tokens by :func:`sentence_tokens`)."""
        return cls.from_tokens(sentence_tokens(s) for s in sentences)


def span_f1(gold: Sequence[tuple[int, int]], system: Sequence[tuple[int, int]]) -> F1:
    """Spans of ``system`` with the same start and end as a span of ``gold``.

    Both sequences are sorted and non-overlapping, as tokens and sentences are.

    Examples
    --------
    >>> span_f1([(0, 2), (2, 5)], [(0, 2), (2, 3), (3, 5)]).correct
    1
    """
    correct = g = s = 0
    while g < len(gold) and s < len(system):
        if system[s][0] < gold[g][0]:
            s += 1
        elif gold[g][0] < system[s][0]:
            g += 1
        else:
            correct += gold[g][1] == system[s][1]
            g += 1
            s += 1
    return F1(len(gold), len(system), correct)


def align_words(gold: Sequence[Word], system: Sequence[Word]) -> list[tuple[int, int]]:
    """Pairs ``(g, s)`` of aligned gold and system word indices, in order.

    Outside multiword tokens a gold and a system word align when their spans are equal.
    Where either side has a multiword token, the smallest region of characters closed
    under both sides' multiword tokens is found (``find_multiword_span`` of the CoNLL
    2018 script) and its words are aligned along a longest common subsequence of their
    lowercased forms.

    Examples
    --------
    >>> gold = [Word("do", 0, 5, True), Word("n't", 0, 5, True)]
    >>> system = [Word("don't", 0, 5, False)]
    >>> align_words(gold, system)
    []
    >>> align_words(gold, [Word("do", 0, 5, True), Word("not", 0, 5, True)])
    [(0, 0)]
    """
    pairs: list[tuple[int, int]] = []
    g = s = 0
    while g < len(gold) and s < len(system):
        if gold[g].multiword or system[s].multiword:
            gs, ss, g, s = _multiword_region(gold, system, g, s)
            pairs.extend((gs + a, ss + b) for a, b in _lcs_pairs(
                [w.form.lower() for w in gold[gs:g]], [w.form.lower() for w in system[ss:s]]))
        elif (gold[g].start, gold[g].end) == (system[s].start, system[s].end):
            pairs.append((g, s))
            g += 1
            s += 1
        elif gold[g].start <= system[s].start:
            g += 1
        else:
            s += 1
    return pairs


def _multiword_region(gold: Sequence[Word], system: Sequence[Word],
                      g: int, s: int) -> tuple[int, int, int, int]:
    """``(gs, ss, ge, se)``: the words ``gold[gs:ge]`` and ``system[ss:se]`` of the
    region that starts with the multiword token at ``gold[g]`` or ``system[s]``."""
    if gold[g].multiword:
        end = gold[g].end
        if not system[s].multiword and system[s].start < gold[g].start:
            s += 1
    else:
        end = system[s].end
        if not gold[g].multiword and gold[g].start < system[s].start:
            g += 1
    gs, ss = g, s
    while not _beyond(gold, g, end) or not _beyond(system, s, end):
        if g < len(gold) and (s >= len(system) or gold[g].start <= system[s].start):
            end = max(end, gold[g].end) if gold[g].multiword else end
            g += 1
        else:
            end = max(end, system[s].end) if system[s].multiword else end
            s += 1
    return gs, ss, g, s


def _beyond(words: Sequence[Word], i: int, end: int) -> bool:
    if i >= len(words):
        return True
    if words[i].multiword:
        return words[i].start >= end
    return words[i].end > end


def _lcs_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of ``a`` and ``b``, taking the
    earliest match as the CoNLL 2018 script does."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in reversed(range(len(a))):
        for j in reversed(range(len(b))):
            table[i][j] = max(table[i + 1][j], table[i][j + 1],
                              1 + table[i + 1][j + 1] if a[i] == b[j] else 0)
    pairs = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif table[i][j] == table[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


@dataclass(frozen=True)
class SegmentationScores:
    """The CoNLL 2018 segmentation metrics of one system document against gold."""

    tokens: F1
    sentences: F1
    words: F1


def evaluate_segmentation(gold: Segmentation, system: Segmentation) -> SegmentationScores:
    """Tokens, sentences and words F1 of ``system`` against ``gold``.

    Raises
    ------
    ValueError
        If the two documents do not have the same non-space characters.
    """
    if gold.characters != system.characters:
        i = next((k for k, (a, b) in enumerate(zip(gold.characters, system.characters))
                  if a != b), min(len(gold.characters), len(system.characters)))
        raise ValueError(f"gold and system text differ at character {i}: "
                         f"{gold.characters[i:i + 20]!r} vs {system.characters[i:i + 20]!r}")
    words = F1(len(gold.words), len(system.words), len(align_words(gold.words, system.words)))
    return SegmentationScores(span_f1(gold.tokens, system.tokens),
                              span_f1(gold.sentences, system.sentences), words)
