"""The k best trees of a sentence as ``parse`` decodes it: under the UD rules and the
user's constraints in force, with the parser's decoder (:func:`kbest`).

Lawler's partition of the tree space (:mod:`decoders.lawler`; Camerini, Fratta and
Maffioli 1980 for arborescences) with, as its oracle, the decoding of
:meth:`~parser.decoding.Decoding.analyze` restricted to a subproblem's arcs
(:class:`SubproblemOracle`): the parser's decoder over the arcs the subproblem allows,
each arc with its best label; when that tree breaks a UD rule, or the user's constraints
concern the sentence, the constrained decoding with labels in the program
(:meth:`~parser.constrained.ConstrainedDecoding.decode_constrained`), a forced arc given as a head and a
forbidden arc removed from the candidates as the user's are. The first tree is
``analyze``'s own, so ``parse --kbest``'s first tree is ``parse``'s.

For an exact decoder (``mst``, ``ilp``, ``ad3-exact``; ``eisner`` among projective
trees) every subproblem's tree is its best under the rules and constraints, so the list
is the exact K best of them (over the candidate arcs and labels ``parse`` decodes over).
The whole list shares one budget, the decoder's ``time_limit``: the subproblems not
decoded when it runs out are left out (the list may then be shorter than K, or not the
exact K best). For a relaxation (``lp``, ``ad3``) each tree is
its subproblem's rounded tree: K distinct trees that approximate the K best, the first
``parse``'s, the others in order of score.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from polyparse.corpora.sentence import ROOT, Sentence
from polyparse.decoders import Budget, DecodeResult, TimeLimitReached
from polyparse.decoders.lawler import Subproblem, admits_tree, lawler_kbest
from polyparse.decoders.trees import NoTree
from polyparse.learning.inference import predict

from .analysis import Plain
from .constrained import _unknown_given_labels
from .constraints import ArcConstraints, ConstraintError, Constraints
from .decoding import Decoding
from .ud_rules import check


def kbest(parser: Decoding, sentence: Sentence, k: int,
          constraints: Constraints | None = None) -> list[tuple[Sentence, float]]:
    """The ``k`` best trees of ``sentence`` (fewer when it has fewer) that satisfy the
    UD rules in force (:meth:`~parser.constrained.ConstrainedDecoding.rules_in_force`) and ``constraints``, best first: copies
    of it with predicted HEAD and DEPREL, each with the model's score of its labeled
    tree. The first is :meth:`~parser.decoding.Decoding.analyze`'s tree (``parse``'s), with every decoder.

    The trees come from Lawler's partition of the tree space with the decoding of
    :meth:`~parser.decoding.Decoding.analyze` as its oracle (:func:`partitioned_kbest`): exact for an
    exact decoder (``mst``, ``ilp``, ``ad3-exact``; ``eisner`` among projective
    trees), approximate for a relaxation (``lp``, ``ad3``: each tree its subproblem's
    rounded tree, the first ``parse``'s). When neither rules nor constraints concern
    the sentence and the decoder gives exact k-best trees
    (:attr:`~decoders.base.Decoder.gives_kbest`: ``mst``, ``ilp``), its own k-best
    algorithm gives the same trees faster (:func:`_kbest_unconstrained`).
    :class:`~parser.constraints.ConstraintError` when the constraints admit no
    tree."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if len(sentence) == 0:
        return [(sentence.with_tree(np.full(1, -1, dtype=np.int64), [ROOT]), 0.0)]
    parser.warm_up()                  # before the budget of the partition starts
    user = constraints if constraints is not None and constraints.applies(sentence) \
        else None
    if user is None and parser.decoder.gives_kbest and not parser.rules_in_force(sentence):
        return _kbest_unconstrained(parser, sentence, k)
    trees = [(ranked.sentence, ranked.score)
             for ranked in partitioned_kbest(parser, sentence, k, user)]
    if user is not None and user.keep_given:
        trees = [(_unknown_given_labels(tree, sentence, parser.model.labels), score)
                 for tree, score in trees]
    return trees


def _kbest_unconstrained(parser: Decoding, sentence: Sentence, k: int
                         ) -> list[tuple[Sentence, float]]:
    """:func:`kbest` by the decoder's own exact k-best algorithm (``mst``: Camerini,
    Fratta and Maffioli's, :mod:`decoders.kbest`; ``ilp``: no-good cuts), with no UD
    rule or constraint in force: each arc with its best label, or both stages' best with
    a :attr:`~parser.decoding.Decoding.relabeler`, as ``parse`` labels (each tree's score
    is the first stage's)."""
    seen = parser.seen(sentence)
    if parser.model.arc_factored:
        S, labels = parser.model.arc_scores(seen)
        trees = parser.decoder.kbest_arcs(S, k)
        label_ids = [labels[tree.heads[1:], np.arange(1, len(tree.heads))] for tree in trees]
    else:
        example = parser.model.example(seen)
        scores = parser.model.scores(example)
        trees = parser.decoder.kbest(example.parts, scores.parts, k)
        label_ids = [scores.labels[parser.model.arc_rows(tree.heads, example)]
                     for tree in trees]
    if parser.relabeler is not None:
        label_ids = [parser._relabelled(seen, tree.heads, ids)
                     for tree, ids in zip(trees, label_ids)]
    return [(parser._labelled(sentence, tree.heads, ids), tree.score)
            for tree, ids in zip(trees, label_ids)]


class Ranked(NamedTuple):
    """One of the k best trees: its ``heads``, the model's ``score`` of the labeled tree
    and the labeled copy of the sentence."""

    heads: np.ndarray
    score: float
    sentence: Sentence


def partitioned_kbest(parser: Decoding, sentence: Sentence, k: int,
                      user: Constraints | None) -> list[Ranked]:
    """The ``k`` best trees of ``sentence`` (at least one word) under the UD rules in
    force and ``user``'s constraints (None: none concern it), by Lawler's partition
    (module docstring); the first is :meth:`~parser.decoding.Decoding.analyze`'s tree.
    :class:`~parser.constraints.ConstraintError` when ``user``'s constraints admit no
    tree."""
    budget = Budget(parser.decoder.time_limit)
    first = parser.analyze(sentence, constraints=user, budget=budget)
    ranked = Ranked(first.sentence.heads, first.certificate.score, first.sentence)
    if k == 1:
        return [ranked]
    oracle = SubproblemOracle(parser, sentence, user, first.sentence, budget)
    return lawler_kbest(ranked, oracle.solve, k, oracle.whole)


class SubproblemOracle:
    """Decode the subproblems of one sentence as :meth:`Parser.analyze
    <parser.decoding.Decoding.analyze>` decodes the sentence (module docstring).

    Parameters
    ----------
    parser, sentence:
        The parser and the sentence (its tags as given).
    user:
        The user's constraints, when they concern the sentence: every subproblem is then
        decoded under them by the constrained decoding.
    first:
        ``analyze``'s tree of the sentence: the UD rules hold on the subproblems unless
        it breaks one (``analyze`` dropped them, no tree over the candidate arcs keeping
        them).
    budget:
        What is left of the sentence's time limit: a subproblem reached after it ran
        out, or whose decoding it stops before a tree that keeps the constraints, has
        no tree.
    """

    def __init__(self, parser: Decoding, sentence: Sentence, user: Constraints | None,
                 first: Sentence, budget: Budget) -> None:
        self.parser = parser
        self.budget = budget
        self.sentence = sentence
        self.user = user
        self.rules = parser.rules_in_force(sentence) and not _breaks(parser, first)
        n = len(sentence)
        self.whole = Subproblem.whole(n)
        if user is not None:
            given, _ = user.given(sentence)
            self.whole = Subproblem(given, user.forbidden_arcs(sentence))
            return
        model, seen = parser.model, parser.seen(sentence)
        self.S = self.every = None
        if model.arc_factored:        # every label's score too, as analyze keeps them
            if self.rules:
                self.every = np.empty((n + 1, n + 1, len(model.labels)))
            self.S, self.labels = model.arc_scores(seen, label_scores=self.every)
            self.candidates = np.isfinite(self.S)
        else:
            arcs = model.candidate_arcs(seen)
            self.candidates = self.whole.allowed()
            if arcs is not None:
                self.candidates = np.zeros((n + 1, n + 1), dtype=bool)
                self.candidates[arcs[:, 0], arcs[:, 1]] = True

    def solve(self, sub: Subproblem) -> Ranked | None:
        """The tree of ``sub`` (None: it has none, or none the rules and constraints
        allow)."""
        if self.budget.left() == 0.0:
            return None
        if self.user is not None:
            return self._constrained(sub)
        allowed = self.candidates & sub.allowed()
        if not admits_tree(allowed, self.parser.config.single_root):
            return None
        try:
            result, label_ids = self._decoded(allowed)
        except NoTree:                 # eisner: no projective tree over these arcs
            return None
        tree = _labelled(self.sentence, result.heads, label_ids, self.parser.model.labels)
        if self.rules and _breaks(self.parser, tree):
            # as analyze hands its unconstrained tree and scores on
            return self._constrained(sub, Plain(result, label_ids, self.S, None, self.every))
        return Ranked(result.heads, self.parser.decoder.certificate(result).score, tree)

    def _decoder(self):
        """The parser's decoder within what is left of the budget."""
        return self.parser.decoder.within(self.budget)

    def _decoded(self, allowed: np.ndarray) -> tuple[DecodeResult, np.ndarray]:
        """The parser's decoder's tree over the arcs ``allowed`` and the best label id of
        each word's arc; the result's certificate has the tree's score (the rounded
        tree's for a relaxation)."""
        parser, model = self.parser, self.parser.model
        if model.arc_factored:
            result = self._decoder().decode_arcs(np.where(allowed, self.S, -np.inf))
            return result, self.labels[result.heads[1:], np.arange(1, len(result.heads))]
        seen = parser.seen(self.sentence)
        example = model.example(seen, parts=model.parts(seen, np.argwhere(allowed)))
        result, labels = predict(model, example, self._decoder())
        return result, labels[model.arc_rows(result.heads, example)]

    def _constrained(self, sub: Subproblem, plain=None) -> Ranked | None:
        """The tree of ``sub`` by the constrained decoding (labels in the program), under
        the UD rules in force and the user's constraints; None when they admit none.
        ``plain``: ``sub`` decoded without them (:class:`~parser.analysis.Plain`), when at hand."""
        constraints = ArcConstraints.of(self.user, sub.forced, sub.forbidden)
        try:
            labeled, certificate = self.parser.decode_constrained(
                self.sentence, constraints, plain, self.budget, explain=False)
        except (ConstraintError, TimeLimitReached):
            return None
        heads = labeled.result.heads
        return Ranked(heads, certificate.score,
                      _labelled(self.sentence, heads, labeled.labels[1:],
                                self.parser.model.labels))


def _breaks(parser: Decoding, tree: Sentence) -> bool:
    """Whether the labeled ``tree`` breaks one of the parser's UD rules."""
    broken = check(tree)[1]
    return any(broken[rule] for rule in parser.ud_rules.rules)


def _labelled(sentence: Sentence, heads: np.ndarray, label_ids: np.ndarray,
              labels: list[str]) -> Sentence:
    return sentence.with_tree(heads, [ROOT] + [labels[i] for i in label_ids])
