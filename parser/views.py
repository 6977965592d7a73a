"""What ``polyparse draw`` and ``polyparse serve`` show of a sentence, computed by the
parser: its tree and how it was decoded, the k best trees, the LP relaxation's arcs and
the tree they round to, the probability of each arc, and the comparison with a gold
tree. :mod:`parser.drawing` turns the result into pictures; this module runs the parser.
"""

from __future__ import annotations

from dataclasses import dataclass

from polyparse.corpora.errors import CorpusError
from polyparse.corpora.sentence import Sentence
from polyparse.learning.confidence import Temperatures, head_model

from .drawing.figure import (Arc, Figure, Panel, against_best, lp_arcs, title_of,
                             tree_arcs, with_gold, words_of)
from .analysis import kbest_copies
from .pipeline import Parser


DEFAULT_LP_MAX_WORDS = 50
"""The default of :attr:`Views.lp_max_words` (``--lp-max-words``)."""


@dataclass(frozen=True)
class Views:
    """What is drawn of a parsed sentence besides its tree.

    Attributes
    ----------
    lp:
        The arcs of the LP relaxation's solution, with opacity by value, and the tree it
        rounds to, with its certificate and gap (:meth:`Parser.relax`).
    kbest:
        The ``kbest`` best trees side by side instead of the tree (the first is the
        tree), the arcs where each differs from the first highlighted
        (:meth:`Parser.kbest`).
    confidence:
        Colour the tree's arcs and labels by their probability at these temperatures
        (:meth:`Parser.analyze`).
    lp_max_words:
        The LP of a longer sentence is not solved (a note says so), or None: no cap.
        Unpruned first-order LPs grow as n^3 (multi-commodity flow): on one core, 0.2 s
        and 0.3 GB at 20 words, 5 s and 0.8 GB at 60, 40 s and 1.6 GB at 80.
    """

    lp: bool = False
    kbest: int | None = None
    confidence: Temperatures | None = None
    lp_max_words: int | None = DEFAULT_LP_MAX_WORDS

    def check(self, parser: Parser) -> None:
        """Raise ``ValueError`` saying why ``parser`` cannot draw these views, before any
        work (the same refusals as ``polyparse parse``)."""
        if self.kbest is not None:
            if self.kbest < 1:
                raise ValueError(f"k-best: K must be at least 1, not {self.kbest}")
            if self.confidence is not None:
                raise ValueError("k-best trees carry no confidence: ask for one or the "
                                 "other")
        if self.confidence is not None:
            head_model(parser.model)          # a higher-order model needs its pruner


@dataclass(frozen=True)
class Drawn:
    """A parsed sentence's :class:`~parser.drawing.figure.Figure`, and the sentences
    ``polyparse parse`` writes for it with the same options: its k best trees, or its
    tree with the ``# decoding`` comment (and the probabilities in MISC)."""

    figure: Figure
    parsed: list[Sentence]


def parsed_figure(parser: Parser, sentence: Sentence, views: Views,
                  gold: Sentence | None = None, *, second_pass: bool = False) -> Drawn:
    """Parse ``sentence`` (its tags as given) and draw it as ``views`` ask; with
    ``gold`` (:func:`check_gold`), mark the heads and labels that differ from it. With
    ``second_pass`` (for a sentence the model tagged itself), the parsed sentences and
    the UPOS drawn under the words are the model's second pass's
    (:meth:`Parser.retag_parsed`), as ``polyparse parse`` writes them."""
    if views.kbest is not None:
        best = parser.kbest(sentence, views.kbest)
        first = tree_arcs(best[0][0])
        trees = tuple(Panel(f"tree {rank} of {len(best)}: score {score:.4f}",
                            _marked(against_best(tree_arcs(tree), first), gold), rank=rank)
                      for rank, (tree, score) in enumerate(best, 1))
        parsed = kbest_copies(best)
        rows = [trees]
    else:
        analysis = parser.analyze(sentence, views.confidence)
        tree = Panel(f"tree ({parser.decoder.name})",
                     _marked(tree_arcs(analysis.sentence, analysis.head_probs,
                                       analysis.label_probs), gold),
                     caption=_certificate_text(analysis.certificate.comment()))
        parsed = [analysis.annotated(certify=True)]
        rows = [(tree,)]
    if second_pass:
        parsed = parser.retag_parsed(parsed)
    notes = []
    if views.lp and views.lp_max_words is not None and len(sentence) > views.lp_max_words:
        notes.append(f"LP relaxation not solved: {len(sentence)} words, more than "
                     f"{views.lp_max_words} (--lp-max-words)")
    elif views.lp:
        relaxation = parser.relax(sentence)
        rounded = relaxation.analysis
        arcs = lp_arcs(relaxation.arc_values, rounded.sentence)
        fractional = sum(1 for arc in arcs if 1e-6 < arc.value < 1 - 1e-6)
        rows.append((Panel(f"LP relaxation ({relaxation.decoder}): {fractional} fractional "
                           f"arc{'s' * (fractional != 1)}; dashed: the rounded tree",
                           _marked(arcs, gold),
                           caption=_certificate_text(rounded.certificate.comment()),
                           kind="lp"),))
    return Drawn(Figure(title_of(sentence), words_of(parsed[0] if second_pass else sentence),
                        tuple(rows), tuple(notes)), parsed)


def given_figure(sentence: Sentence, gold: Sentence | None = None) -> Figure:
    """The tree ``sentence`` has (read from a file), marked against ``gold``."""
    if not sentence.has_tree():
        raise CorpusError(sentence.source, sentence.first_line,
                          "a word of this sentence has no head (HEAD '_'): there is no "
                          "tree to draw; give --model to parse it")
    return Figure(title_of(sentence), words_of(sentence),
                  ((Panel("", _marked(tree_arcs(sentence), gold)),),))


def check_gold(sentence: Sentence, gold: Sentence) -> None:
    """Raise :class:`CorpusError` (at the gold sentence) unless ``gold`` has the words
    of ``sentence``, so that their trees can be compared word by word."""
    if gold.forms[1:] == sentence.forms[1:]:
        return
    at = next((i for i, (a, b) in enumerate(zip(gold.forms[1:], sentence.forms[1:]), 1)
               if a != b), min(len(gold), len(sentence)) + 1)
    gold_word, word = (repr(s.forms[at]) if at <= len(s) else "no word"
                       for s in (gold, sentence))
    raise CorpusError(gold.source, gold.first_line,
                      f"the gold sentence does not have the words of the sentence at "
                      f"{sentence.source}:{sentence.first_line} ({len(gold)} words "
                      f"against {len(sentence)}; word {at}: {gold_word} against {word}): "
                      "the gold file must be tokenized as the input")


def _marked(arcs: tuple[Arc, ...], gold: Sentence | None) -> tuple[Arc, ...]:
    return arcs if gold is None else with_gold(arcs, gold)


def _certificate_text(comment: str) -> str:
    """A certificate's comment line without its ``# ``."""
    return comment.removeprefix("# ")
