"""Decoding with the labels in the program (:mod:`decoders.labeled`): the UD rules and
the user's constraints enforced on one sentence, by the parser's decoder when it honors
constraints, else by the ILP; the repair of a time-limited incumbent; the message of an
infeasible sentence. :class:`ConstrainedDecoding` is the part of a parser's decoding
(:class:`~parser.decoding.Decoding`) that does it."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace

import numpy as np

from polyparse.corpora.sentence import Sentence
from polyparse.decoders import (Budget, Certificate, Decoder, DecodeStats, TimeLimitReached,
                                make_decoder)
from polyparse.decoders.labeled import Infeasible, LabeledProblem, LabeledResult, best_labels
from polyparse.decoders.parts import arc_parts
from polyparse.decoders.trees import chu_liu_edmonds
from polyparse.learning.model import LinearModel

from .analysis import Plain
from .config import TrainConfig, config_decoder
from .constraints import ConstraintError, Constraints
from .training import without_lemmas
from .ud_rules import UDRules, compile_rules, label_masks

log = logging.getLogger("polyparse.train")

LABEL_CANDIDATES = 3
"""Labels per candidate arc in labeled decoding: the best ones the constraints allow
(:func:`decoders.labeled.best_labels`)."""

CONSTRAINED_MAX_WORDS = 100
"""The UD rules are enforced on sentences of at most this many words (longer ones are
parsed without them, counted in :attr:`Parser.constrained` as ``too_long``): labeled
decoding goes through an integer program. The user's constraints are enforced at any
length."""

CONSTRAINED_HEADS = 8
"""Candidate heads per word in labeled decoding for a model without a pruner (order 1):
the best by arc score, plus the arcs of the unconstrained best tree (so that some tree is
a candidate); when no tree over them satisfies the constraints, every arc is tried. On
en_ewt dev sentences of 20-36 words, an order-1 model's labeled ILP over all arcs took
up to 106 s where its LP was fractional."""


class ConstrainedDecoding:
    """A model, its decoder and its UD rules, and the decoding of a sentence under
    the rules and the user's constraints (:meth:`decode_constrained`).

    Attributes
    ----------
    model, config:
        The parser's :class:`LinearModel` and its :class:`TrainConfig`.
    decoder:
        The decoder it parses with: the one it was trained with, or the one set by
        :meth:`~parser.decoding.Decoding.use_decoder`.
    ud_rules:
        The UD validator rules learned from the training treebank
        (:class:`~parser.ud_rules.UDRules`; none for an older model file or a treebank
        that is not UD), enforced while :attr:`use_ud_rules` is True (the default).
    constrained:
        ``Counter`` of this process's constrained decodings: ``sentences`` decoded with
        labels in the program, ``ilp_for_decoder`` (the decoder cannot honor constraints,
        so the ILP decoded them), ``lp_to_ilp`` (the LP's rounded tree broke a
        constraint, so the ILP decided), ``unpruned`` (infeasible over the pruned arcs,
        decoded over all arcs), ``rules_dropped`` (the UD rules admitted no tree over
        the candidate arcs and were dropped for that sentence), ``rules_held`` (the
        unconstrained tree broke none), ``too_long``, ``repaired``,
        ``relabelled_under_rules`` (the second stage's labels of a tree broke a rule that
        the first stage's keep, and its best labels that keep the rules were found:
        :func:`labels_under_rules`).
    """

    def __init__(self, model: LinearModel, config: TrainConfig,
                 ud_rules: UDRules | None = None) -> None:
        self.model = model
        self.config = config
        self.decoder = config_decoder(config)
        self.ud_rules = ud_rules or UDRules()
        self.use_ud_rules = True
        self.constrained: Counter = Counter()

    def seen(self, sentence: Sentence) -> Sentence:
        """What the parser's features see of ``sentence`` (lemmas only if trained on)."""
        return sentence if self.config.uses_lemmas else without_lemmas(sentence)

    def _rules_apply(self, sentence: Sentence) -> bool:
        """Whether the UD rules are enforced on ``sentence`` (:attr:`use_ud_rules`, the
        model has rules, at most :data:`CONSTRAINED_MAX_WORDS` words; a longer one is
        counted as ``too_long``)."""
        if not (self.use_ud_rules and self.ud_rules.rules):
            return False
        if len(sentence) > CONSTRAINED_MAX_WORDS:
            self.constrained["too_long"] += 1
            return False
        return True

    def rules_in_force(self, sentence: Sentence) -> bool:
        """Whether the UD rules hold on ``sentence`` (:meth:`_rules_apply`, without
        counting a sentence too long for them)."""
        return (self.use_ud_rules and bool(self.ud_rules.rules)
                and len(sentence) <= CONSTRAINED_MAX_WORDS)

    def decode_constrained(self, sentence: Sentence, constraints: Constraints | None = None,
                           plain: "Plain | None" = None, budget: Budget | None = None,
                           *, explain: bool = True
                           ) -> tuple[LabeledResult, Certificate]:
        """Decode ``sentence`` with its labels in the program
        (:mod:`decoders.labeled`): the UD rules (when :attr:`use_ud_rules`) and
        ``constraints`` enforced, each arc's :data:`LABEL_CANDIDATES` best allowed labels
        as candidates. The parser's decoder decodes when it
        :attr:`~decoders.base.Decoder.honors_constraints` (``mst``, ``ilp``, ``lp``),
        otherwise the ILP. When no tree over the pruned candidate arcs satisfies them, all arcs are
        tried; when the UD rules alone still admit none, they are dropped for this
        sentence (counted in :attr:`constrained`); when the user's constraints admit none
        (alone or with the UD rules), :class:`~parser.constraints.ConstraintError` names
        the sentence and the conflict.

        When branch and bound stops at its time limit, its incumbent can be far from the
        optimum (a long sentence's tree can lose most of its arcs). The labeled program
        is then solved again over the arcs of the incumbent and of the unconstrained tree
        (``plain``'s) only: a small program whose optimum is at least the
        incumbent's score (the incumbent is one of its trees) and keeps what the
        unconstrained tree gets right wherever no rule is in the way; the better of the
        two is kept (counted as ``repaired`` when it is the new one).

        ``plain``: the sentence decoded without constraints, when the caller has it (its
        scores are reused). Every stage runs within what is left of ``budget`` (by
        default the decoder's ``time_limit`` from now);
        :class:`~decoders.base.TimeLimitReached` when it runs out before a tree that
        satisfies the constraints is found (at once when it is spent already, rather than
        after building a program it has no time to solve). ``explain=False``: the
        :class:`ConstraintError` of an infeasible sentence does not name the conflict,
        which takes a decoding per UD rule (:meth:`kbest`'s subproblems, where no tree is
        no error)."""
        budget = budget or Budget(self.decoder.time_limit)
        budget.check("labeled")
        rules = frozenset(self.ud_rules.rules) if self.use_ud_rules \
            and len(sentence) <= CONSTRAINED_MAX_WORDS else frozenset()
        user = constraints if constraints is not None and constraints.applies(sentence) \
            else None
        if user is not None:
            self._check_user(sentence, user)
        decoder = self.decoder
        if not decoder.honors_constraints:
            decoder = decoder.for_constraints()
            self.constrained["ilp_for_decoder"] += 1
        self.constrained["sentences"] += 1
        hint = None if plain is None else plain.result.heads
        for all_arcs in (False, True):
            try:
                labeled = self._decode_labeled(sentence, rules, user, decoder.within(budget),
                                               all_arcs, plain=plain)
                break
            except Infeasible:
                if all_arcs:
                    labeled = None
                else:
                    self.constrained["unpruned"] += 1
        if labeled is None:
            if user is not None:
                raise ConstraintError(self._conflict(sentence, rules, user, decoder) if explain
                                      else f"{_where(sentence)}: no tree satisfies the "
                                           "constraints")
            self.constrained["rules_dropped"] += 1
            log.warning("%s: no tree satisfies the UD rules over the candidate arcs; "
                        "decoded without them", _where(sentence))
            rules = frozenset()
            labeled = self._decode_labeled(sentence, rules, None, decoder.within(budget),
                                           True)
        if labeled.result.stats.fallback and hint is not None and budget.left() != 0:
            labeled = self._repaired(sentence, rules, user, decoder.within(budget), labeled,
                                     hint)
        stats = labeled.result.stats
        self.constrained["lp_to_ilp"] += bool(stats.rule_fallback)
        value = labeled.result.value
        if stats.fallback:
            kind = "node-limit" if stats.limit == "nodes" else "time-limit"
            certificate = Certificate(kind, value, upper_bound=_upper_bound(stats),
                                      stage=f"{decoder.name}:labeled")
        elif stats.upper_bound is not None:      # a relaxed decoder's search
            certificate = Certificate("rounded", value, upper_bound=stats.upper_bound)
        elif not stats.relaxed or stats.rule_fallback:
            certificate = Certificate("exact", value)
        elif stats.integral:
            certificate = Certificate("lp-integral", value)
        else:
            certificate = Certificate("rounded", value, upper_bound=stats.lp_value)
        return labeled, certificate

    def _repaired(self, sentence: Sentence, rules: frozenset, user: Constraints | None,
                  decoder: Decoder, incumbent: LabeledResult, hint: np.ndarray
                  ) -> LabeledResult:
        """The best labeled tree over the arcs of ``incumbent`` and ``hint``, if it
        scores above ``incumbent`` (:meth:`decode_constrained`), else ``incumbent``."""
        union = _arc_rows(np.vstack([hint[1:], incumbent.result.heads[1:]]))
        try:
            repaired = self._decode_labeled(sentence, rules, user, decoder, False, union)
        except TimeLimitReached:
            return incumbent
        except Infeasible:          # cannot happen: the incumbent is one of its trees
            return incumbent
        if repaired.result.value <= incumbent.result.value + 1e-9:
            return incumbent
        self.constrained["repaired"] += 1
        # still a time-limit result; its bound is the full program's, not the small one's
        stats = replace(repaired.result.stats, fallback=True,
                        upper_bound=_upper_bound(incumbent.result.stats))
        return replace(repaired, result=replace(repaired.result, stats=stats))

    def _decode_labeled(self, sentence: Sentence, rules: frozenset,
                        user: Constraints | None, decoder: Decoder, all_arcs: bool,
                        arcs: np.ndarray | None = None, plain: "Plain | None" = None
                        ) -> LabeledResult:
        """One labeled decoding over ``arcs`` (``(k, 2)``) if given, else the model's
        candidate arcs (or all arcs), the user's arc constraints applied to them;
        :class:`Infeasible` if none fits. ``plain``: the sentence decoded without
        constraints, if at hand: an arc-factored model's arc scores, label scores and
        tree (its candidates are each word's best heads and that tree's arcs), another's
        example over its candidate arcs (used when no user constraint changes the
        arcs)."""
        n = len(sentence)
        labels = self.model.labels
        seen = self.seen(sentence)
        factored = self.model.arc_factored
        S = plain.S if plain is not None and factored else None
        every = plain.label_scores if plain is not None else None
        example = plain.example if plain is not None and not all_arcs else None
        reuse = example is not None and arcs is None and not all_arcs and user is None
        if reuse:
            arcs = example.parts.arcs
        elif arcs is None and not all_arcs:
            arcs = self.model.candidate_arcs(seen)
        if arcs is None and not all_arcs and factored:
            if S is None:
                S, _ = self.model.arc_scores(seen)
            best = np.argsort(-S[:, 1:], axis=0, kind="stable")[:CONSTRAINED_HEADS]
            hint = plain.result.heads if plain is not None else chu_liu_edmonds(
                S, self.config.single_root)
            arcs = _arc_rows(np.vstack([best, hint[1:]]))
            arcs = arcs[np.isfinite(S[arcs[:, 0], arcs[:, 1]])]
        if arcs is None:
            h, m = np.nonzero(~np.eye(n + 1, dtype=bool))
            keep = m > 0
            arcs = np.stack([h[keep], m[keep]], axis=1)
        label_ban = np.zeros((n + 1, len(labels)), dtype=bool)
        if user is not None:
            given_heads, given_labels = user.given(sentence)
            given = np.flatnonzero(given_heads >= 0)
            arcs = np.unique(np.concatenate([arcs, np.stack([given_heads[given], given],
                                                            axis=1)]), axis=0)
            forced = given_heads[arcs[:, 1]]
            arcs = arcs[(forced < 0) | (forced == arcs[:, 0])]
            arcs = arcs[~user.forbidden_arcs(sentence)[arcs[:, 0], arcs[:, 1]]]
            label_ban |= user.forbidden_labels(sentence, labels)
            index = {label: i for i, label in enumerate(labels)}
            for m, label in enumerate(given_labels):
                if label is not None and label in index:
                    label_ban[m] = True
                    label_ban[m, index[label]] = False
        if S is not None:
            # the arc scores are at hand: the label scores are all that may be missing
            parts = self.model.parts(seen, arcs)
            h, m = parts.arcs[:, 0], parts.arcs[:, 1]
            part_scores = S[h, m]
            label_scores = every[h, m] if every is not None else self.model.label_scores(
                seen, parts.arcs)
        else:
            if not reuse:
                example = self.model.example(seen, parts=self.model.parts(seen, arcs))
            scores = self.model.scores(example)
            parts, part_scores, label_scores = example.parts, scores.parts, scores.label_scores
        problem = labeled_problem(sentence, labels, rules, parts.arcs, label_scores,
                                  ~label_ban[parts.arcs[:, 1]])
        return decoder.decode_labeled(parts, part_scores, problem)

    def _check_user(self, sentence: Sentence, user: Constraints) -> None:
        """Conflicts within the user's constraints that need no solver: a given head
        that is forbidden, a cycle of given heads, several given root children under the
        single-root constraint, a given label that is forbidden."""
        heads, given_labels = user.given(sentence)
        n = len(sentence)
        forbidden = user.forbidden_arcs(sentence)
        where = _where(sentence)
        for m in range(1, n + 1):
            h = int(heads[m])
            if h > n:
                raise ConstraintError(f"{where}: word {m} is given head {h}, but the "
                                      f"sentence has {n} words")
            if h >= 0 and forbidden[h, m]:
                raise ConstraintError(f"{where}: the given arc {h} -> {m} "
                                      f"({_word(sentence, h)} -> {_word(sentence, m)}) is "
                                      "forbidden by the constraints")
            if forbidden[:, m].sum() >= n:
                raise ConstraintError(f"{where}: every head of word {m} "
                                      f"({_word(sentence, m)}) is forbidden")
        roots = [m for m in range(1, n + 1) if heads[m] == 0]
        if self.config.single_root and len(roots) > 1:
            raise ConstraintError(f"{where}: words {roots} are all given head 0, but a tree "
                                  "has one root child (UD)")
        for m in range(1, n + 1):
            seen_path, word = [], m
            while word > 0 and heads[word] >= 0:
                if word in seen_path:
                    raise ConstraintError(f"{where}: the given heads form a cycle: "
                                          f"{' -> '.join(map(str, seen_path))} -> {word}")
                seen_path.append(word)
                word = int(heads[word])
        banned = user.forbidden_labels(sentence, self.model.labels)
        index = {label: i for i, label in enumerate(self.model.labels)}
        for m, label in enumerate(given_labels):
            if label is not None and label in index and banned[m, index[label]]:
                raise ConstraintError(f"{where}: word {m} ({_word(sentence, m)}) is given "
                                      f"relation {label!r}, which the constraints forbid")

    def _conflict(self, sentence: Sentence, rules: frozenset, user: Constraints,
                  decoder: Decoder) -> str:
        """The message of an infeasible sentence: which UD rules conflict with the
        user's constraints (each rule whose removal alone makes it feasible), or that the
        user's constraints alone admit no tree."""
        where = _where(sentence)
        what = _describe(user)
        if rules:
            try:
                self._decode_labeled(sentence, frozenset(), user, decoder, True)
            except Infeasible:
                pass
            else:
                culprits = []
                for rule in sorted(rules):
                    try:
                        self._decode_labeled(sentence, rules - {rule}, user, decoder, True)
                    except Infeasible:
                        continue
                    culprits.append(rule)
                named = (f"UD rule(s) {', '.join(culprits)}" if culprits
                         else "the UD rules together")
                return (f"{where}: the constraints ({what}) conflict with {named} of the "
                        "model; no tree satisfies both (--no-ud-rules drops the UD rules)")
        return f"{where}: no tree satisfies the constraints ({what})"


def labeled_problem(sentence: Sentence, labels: list[str], rules: frozenset,
                    arcs: np.ndarray, label_scores: np.ndarray,
                    allowed: np.ndarray | None = None) -> LabeledProblem:
    """The labeled program's labels and constraints (:class:`~decoders.labeled.
    LabeledProblem`) for the candidate ``arcs`` (``(k, 2)``) of ``sentence``: each arc's
    :data:`LABEL_CANDIDATES` best labels under ``label_scores`` (``(k, n_labels)``) among
    those ``rules`` allow on it (:func:`~parser.ud_rules.label_masks`) and ``allowed``
    (``bool``, same shape; all by default), and ``rules`` compiled over them
    (:func:`~parser.ud_rules.compile_rules`)."""
    masks = label_masks(sentence, labels, arcs, rules)
    if allowed is not None:
        masks &= allowed
    base = best_labels(label_scores, masks, k=LABEL_CANDIDATES)
    return LabeledProblem(base.labels, base.offsets,
                          **compile_rules(sentence, labels, rules, arcs, base.labels))


def labels_under_rules(sentence: Sentence, heads: np.ndarray, label_scores: np.ndarray,
                       labels: list[str], rules: frozenset, single_root: bool,
                       budget: Budget) -> np.ndarray | None:
    """The best labels of the tree ``heads`` of ``sentence`` under ``label_scores``
    (``(n, n_labels)``, row m - 1 for word m's arc) that break none of ``rules``: the
    labeled program (:mod:`decoders.labeled`) over that tree's arcs alone, so that only
    its labels are free, each arc's :data:`LABEL_CANDIDATES` best allowed labels as
    candidates, solved exactly within ``budget`` by branch and bound on the rules
    (:meth:`decoders.mst.MSTDecoder.decode_labeled`). The label ids of the words (one
    per word), or None when no labels among the candidates keep the rules or the time
    runs out."""
    n = len(sentence)
    parts = arc_parts(n, np.stack([heads[1:], np.arange(1, n + 1)], axis=1))
    problem = labeled_problem(sentence, labels, rules, parts.arcs, label_scores)
    decoder = make_decoder("mst", single_root).within(budget)
    try:
        return decoder.decode_labeled(parts, np.zeros(n), problem).labels[1:]
    except (Infeasible, TimeLimitReached):
        return None


def _upper_bound(stats: DecodeStats) -> float | None:
    """The upper bound a labeled decoding that fell back reports: its search's bound,
    else its LP's value (None: neither was reached)."""
    return stats.lp_value if stats.upper_bound is None else stats.upper_bound


def _arc_rows(heads: np.ndarray) -> np.ndarray:
    """The distinct arcs ``(h, m)`` (rows, sorted) of ``heads``, ``(k, n)``: row ``r``
    gives a head to each word ``1..n`` (a tree, or each word's r-th best head)."""
    n = heads.shape[1]
    present = np.zeros((n + 1, n + 1), dtype=bool)
    present[heads, np.arange(1, n + 1)] = True
    return np.argwhere(present)


def _where(sentence: Sentence) -> str:
    """``FILE:LINE: sentence sent_id`` (or without the id) for messages."""
    ident = sentence.sent_id
    name = f"sentence {ident!r}" if ident else "sentence"
    return f"{sentence.source}:{sentence.first_line}: {name}"


def _word(sentence: Sentence, i: int) -> str:
    return "ROOT" if i == 0 else repr(sentence.forms[i])


def _describe(user: Constraints) -> str:
    parts = []
    if user.keep_given:
        parts.append("the given HEAD/DEPREL")
    parts += [f"forbid {head} -> {dep}" for head, dep in user.forbid_arcs]
    parts += [f"forbid-label {label} {dep}" for label, dep in user.forbid_labels]
    return "; ".join(parts) or "none"


def _unknown_given_labels(parsed: Sentence, sentence: Sentence, labels: list[str]
                          ) -> Sentence:
    """``parsed`` with the given relations the model does not know written back (their
    heads were kept; the model could not choose them)."""
    known = set(labels)
    deprels = list(parsed.deprels)
    changed = False
    for m in range(1, len(sentence) + 1):
        given = sentence.deprels[m]
        if given not in ("_", "") and given not in known:
            deprels[m] = given
            changed = True
    return parsed.with_tree(parsed.heads, deprels) if changed else parsed
