"""What a drawing shows: the words of a sentence and panels of arcs over them.

A :class:`Figure` is one sentence: its :class:`Words` (forms, UPOS, multiword tokens)
and rows of :class:`Panel` s, the panels of a row side by side (the k best trees), the
rows one under the other (the tree, then the LP relaxation). A panel is a list of
:class:`Arc` s, each carrying what colours or marks it: its LP value, its
probabilities, the gold head and label it is compared with, whether it differs from the
best tree. The functions below build them from :class:`~corpora.sentence.Sentence` s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from polyparse.corpora.alignment import sentence_tokens
from polyparse.corpora.sentence import Sentence
from polyparse.decoders import PartType
from polyparse.decoders.higher_order import nonprojective_indicator

LP_EPSILON = 1e-6
"""LP arc values up to this are zero: such arcs are not drawn (unless in the tree)."""


@dataclass(frozen=True)
class Token:
    """A multiword token: its surface ``form``, over the words ``first..last``
    (1-based, inclusive)."""

    form: str
    first: int
    last: int


@dataclass(frozen=True)
class Words:
    """The ``n`` syntactic words of a sentence (word ``i`` is ``forms[i - 1]``), their
    UPOS, and the multiword tokens that group some of them."""

    forms: tuple[str, ...]
    upos: tuple[str, ...]
    tokens: tuple[Token, ...] = ()

    def __len__(self) -> int:
        return len(self.forms)


@dataclass(frozen=True)
class Arc:
    """One arc ``head -> dep`` (head 0: the root) with label ``label``.

    Attributes
    ----------
    value:
        Its value in the LP relaxation's solution (drawn as its opacity); 1 in a tree.
    in_tree:
        Whether it is an arc of the panel's tree (False: an arc of the LP solution
        that the rounded tree does not have).
    nonprojective:
        Some word between head and dep does not descend from head (in the panel's
        tree).
    head_prob, label_prob:
        The probability of the arc, and of its label given the arc, or None.
    gold_head, gold_label:
        The gold head and label of ``dep`` when compared with a gold tree, else None.
    differs:
        The arc's head or label differs from the best tree's (k-best).
    """

    head: int
    dep: int
    label: str
    value: float = 1.0
    in_tree: bool = True
    nonprojective: bool = False
    head_prob: float | None = None
    label_prob: float | None = None
    gold_head: int | None = None
    gold_label: str | None = None
    differs: bool = False

    @property
    def wrong_head(self) -> bool:
        return self.gold_head is not None and self.gold_head != self.head

    @property
    def wrong_label(self) -> bool:
        return self.gold_label is not None and self.gold_label != self.label


@dataclass(frozen=True)
class Panel:
    """Arcs drawn over the words: ``kind`` ``"tree"`` (a tree, the arc of every word)
    or ``"lp"`` (an LP solution's arcs and the tree it rounds to); ``rank`` the rank of
    a k-best tree; ``caption`` a line under the words (how the tree was decoded)."""

    title: str
    arcs: tuple[Arc, ...]
    caption: str = ""
    kind: str = "tree"
    rank: int | None = None


@dataclass(frozen=True)
class Figure:
    """One sentence: a ``title`` (its id and text), its words, rows of panels, and
    ``notes`` under the title (what was not drawn, and why)."""

    title: str
    words: Words
    rows: tuple[tuple[Panel, ...], ...]
    notes: tuple[str, ...] = ()


def words_of(sentence: Sentence) -> Words:
    """The words of ``sentence`` with their UPOS, and its multiword tokens (read from
    its range lines, :func:`~corpora.alignment.sentence_tokens`)."""
    tokens = []
    word = 1
    for token in sentence_tokens(sentence):
        if len(token.words) > 1:
            tokens.append(Token(token.form, word, word + len(token.words) - 1))
        word += len(token.words)
    return Words(tuple(sentence.forms[1:]), tuple(sentence.upos[1:]), tuple(tokens))


def title_of(sentence: Sentence) -> str:
    """``sent_id: text`` of a sentence (its forms when it has no ``# text``)."""
    text = sentence.text or " ".join(sentence.forms[1:])
    return f"{sentence.sent_id}: {text}" if sentence.sent_id else text


def nonprojective(heads: np.ndarray) -> np.ndarray:
    """``bool (n + 1,)``: whether the arc of word ``m`` in the tree ``heads`` is
    non-projective (:func:`~decoders.higher_order.nonprojective_indicator`)."""
    n = len(heads) - 1
    rows = np.column_stack([np.full(n, int(PartType.NONPROJ)), heads[1:],
                            np.arange(1, n + 1), np.full(n, -1)]).astype(np.int64)
    return np.concatenate([[False], nonprojective_indicator(rows, heads)])


def tree_arcs(sentence: Sentence, head_probs: np.ndarray | None = None,
              label_probs: np.ndarray | None = None) -> tuple[Arc, ...]:
    """The arcs of the tree of ``sentence``, one per word in order; with the arrays of
    :class:`~parser.analysis.Analysis` (``n + 1`` entries, 0 unused), their
    probabilities. Every word must have a head."""
    heads = sentence.heads
    crossing = nonprojective(heads)
    return tuple(Arc(int(heads[m]), m, sentence.deprels[m], nonprojective=bool(crossing[m]),
                     head_prob=None if head_probs is None else float(head_probs[m]),
                     label_prob=None if label_probs is None else float(label_probs[m]))
                 for m in range(1, len(sentence) + 1))


def lp_arcs(arc_values: np.ndarray, rounded: Sentence) -> tuple[Arc, ...]:
    """The arcs of an LP solution (``arc_values[h, m]``, :class:`~parser.pipeline.
    Relaxation`) with a value above :data:`LP_EPSILON` that the rounded tree
    ``rounded`` does not have, then the rounded tree's arcs with their values: drawn in
    this order, the tree lies on top."""
    heads = rounded.heads
    h, m = np.nonzero(arc_values > LP_EPSILON)
    others = tuple(Arc(int(a), int(b), "", value=float(arc_values[a, b]), in_tree=False)
                   for a, b in zip(h, m) if heads[b] != a)
    return others + tuple(replace(arc, value=float(arc_values[arc.head, arc.dep]))
                          for arc in tree_arcs(rounded))


def with_gold(arcs: tuple[Arc, ...], gold: Sentence) -> tuple[Arc, ...]:
    """``arcs`` with the gold head and label of each tree arc's word (from ``gold``, a
    sentence of the same words)."""
    return tuple(replace(arc, gold_head=int(gold.heads[arc.dep]),
                         gold_label=gold.deprels[arc.dep]) if arc.in_tree else arc
                 for arc in arcs)


def against_best(arcs: tuple[Arc, ...], best: tuple[Arc, ...]) -> tuple[Arc, ...]:
    """``arcs`` (a k-best tree) with :attr:`Arc.differs` set where the word's head or
    label is not the one of ``best`` (the first tree)."""
    first = {arc.dep: (arc.head, arc.label) for arc in best if arc.in_tree}
    return tuple(replace(arc, differs=first.get(arc.dep) != (arc.head, arc.label))
                 for arc in arcs)
