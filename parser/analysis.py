"""What the decoding of one sentence gives (:class:`~parser.decoding.Decoding`): the
parsed sentence and its certificate and confidences (:class:`Analysis`), the LP
relaxation behind a rounded tree (:class:`Relaxation`), a sentence decoded without
constraints (:class:`Plain`), and the k best trees as ``parse --kbest`` writes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from polyparse.corpora.sentence import Sentence
from polyparse.decoders import Certificate, DecodeResult
from polyparse.learning.confidence import Temperatures
from polyparse.learning.model import Example

from .constraints import Constraints


@dataclass(frozen=True)
class Analysis:
    """One parsed sentence and what is known of its tree (:meth:`Parser.analyze`).

    Attributes
    ----------
    sentence:
        The sentence with predicted HEAD and DEPREL (what :meth:`Parser.parse_one`
        returns).
    certificate:
        How the tree was decoded (:class:`~decoders.base.Certificate`).
    head_probs, label_probs:
        ``float64 (n + 1,)`` (entry 0 NaN) with confidence asked for, else None: the
        probability of each word's predicted head and of its label given that arc
        (:mod:`learning.confidence`); the head probabilities are matrix-tree marginals
        under the given and forbidden arcs of the constraints.
    unaccounted:
        With probabilities: what the head probabilities do not account for, among
        ``higher-order parts`` (the marginals are the first-order pruner's), ``UD rules``
        (in force on the sentence), ``label constraints`` (forbidden or given labels) and
        ``given and forbidden arcs`` (when the pruner's arcs admit no tree with them).
    """

    sentence: Sentence
    certificate: Certificate
    head_probs: np.ndarray | None = None
    label_probs: np.ndarray | None = None
    unaccounted: tuple[str, ...] = ()

    def confidence_comment(self) -> str:
        """The CoNLL-U comment saying what the head probabilities do not account for,
        e.g. ``# confidence = matrix-tree marginals; not accounted for: UD rules``
        (``none`` when they are exact)."""
        return ("# confidence = matrix-tree marginals; not accounted for: "
                + (", ".join(self.unaccounted) or "none"))

    def annotated(self, certify: bool) -> Sentence:
        """:attr:`sentence` as ``parse`` writes it: with ``certify`` the comment
        ``# decoding = ...`` (:meth:`Certificate.comment`) after its own comments; with
        probabilities, the comment ``# confidence = ...`` (:meth:`confidence_comment`)
        after those and ``HeadProb=p|DeprelProb=q`` (four decimals) in MISC, the other
        MISC entries kept."""
        sentence = self.sentence
        if certify:
            sentence = sentence.with_comments([self.certificate.comment()])
        if self.head_probs is not None:
            sentence = sentence.with_comments([self.confidence_comment()])
            sentence = sentence.with_misc({
                key: [""] + [f"{p:.4f}" for p in probs[1:]]
                for key, probs in (("HeadProb", self.head_probs),
                                   ("DeprelProb", self.label_probs))})
        return sentence


@dataclass(frozen=True)
class Relaxation:
    """The LP relaxation of one sentence under the model, and the tree it rounds to
    (:meth:`Parser.relax`).

    Attributes
    ----------
    analysis:
        The rounded tree, labelled as :meth:`Parser.analyze` labels trees, with the
        relaxed decoder's :class:`~decoders.base.Certificate`: ``lp-integral`` (the
        relaxation's optimum is a tree, hence optimal), ``rounded`` (with the LP optimum
        as the upper bound and the gap) or ``time-limit``.
    arc_values:
        ``float64 (n + 1, n + 1)``: ``arc_values[h, m]`` is the arc variable
        ``z_hm`` of the relaxation's optimum (``docs/algorithms.md`` section 3), 0 for an
        arc that is not a candidate.
    decoder:
        The decoder that solved it (``lp`` or ``ad3``).
    """

    analysis: Analysis
    arc_values: np.ndarray
    decoder: str


def kbest_copies(trees: list[tuple[Sentence, float]]) -> list[Sentence]:
    """The k best ``trees`` (:meth:`Parser.kbest`) as ``parse --kbest`` writes them: each
    copy with the comments ``# kbest_rank = r`` (1, 2, ...) and ``# kbest_score = s`` (the
    model's score of the tree) after the sentence's own comments."""
    return [parsed.with_comments([f"# kbest_rank = {rank}", f"# kbest_score = {score:.6f}"],
                                 first=rank == 1)
            for rank, (parsed, score) in enumerate(trees, 1)]


class Plain(NamedTuple):
    """A sentence decoded without constraints (:meth:`Decoding.plain <parser.decoding.Decoding.plain>`): the result,
    each word's label id, the arc scores (an arc-factored model's; else the pruner's for
    confidence, or None), the example decoded (None when arc factored) and, when asked,
    every label's score of every arc (``(n + 1, n + 1, n_labels)``, arc-factored)."""

    result: DecodeResult
    label_ids: np.ndarray
    S: np.ndarray | None
    example: Example | None
    label_scores: np.ndarray | None


@dataclass(frozen=True)
class ParseOptions:
    """What parsing does with each sentence of a chunk (:meth:`Parser.parse
    <parser.pipeline.Parser.parse>`, wherever the chunk is parsed: in this process, a
    worker of ``--jobs`` or of a Dask cluster)."""

    retag: bool = False
    """Tag and lemmatize the sentence first."""
    kbest: int | None = None
    """Give its ``kbest`` best trees instead of one."""
    certify: bool = False
    """Add the ``# decoding = ...`` comment of its certificate."""
    confidence: Temperatures | None = None
    """Add head and label probabilities at these temperatures."""
    constraints: Constraints | None = None
    """The user's constraints."""

