"""Training and parsing end to end: the :class:`Parser` facade of the Python API.

A model file holds the parser and, when they were trained with it, the tokenizer
(:class:`corpora.tokenizer.Tokenizer`), the tagger (:class:`parser.tagging.Tagger`) and
the lemmatizer (:class:`parser.tagging.Lemmatizer`), so that one file takes raw text to
trees:

>>> from polyparse.parser.pipeline import Parser             # doctest: +SKIP
>>> parser = Parser.load("model.npz")                        # doctest: +SKIP
>>> for sentence in parser.parse_text("The cat sat. It purred."):  # doctest: +SKIP
...     print(sentence.to_text())
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import numpy as np

from polyparse.corpora.sentence import MAX_SENTENCE_WORDS, ROOT, Sentence
from polyparse.corpora.tokenizer import Tokenizer
from polyparse.decoders import (Budget, Certificate, CertificateCounts, DecodeResult, Decoder,
                                TimeLimitReached, make_decoder)
from polyparse.decoders.labeled import Infeasible, LabeledProblem, LabeledResult, best_labels
from polyparse.decoders.lawler import admits_tree
from polyparse.learning.confidence import (Temperatures, fit_temperatures, head_marginals,
                                           head_model, label_probabilities, masked_scores)
from polyparse.learning.examples import Examples
from polyparse.learning.inference import predict
from polyparse.learning.mixing import ParameterMixing, SerialShards, check_mixable
from polyparse.learning.model import Example, LinearModel
from polyparse.learning.trainers import TrainReport, make_trainer

from . import parser_file, training
from .config import TrainConfig, config_decoder
from .constraints import ConstraintError, Constraints
from .ud_rules import UDRules, check, compile_rules, label_masks, learn_rules
from .evaluate import attachment_scores
from .tagging import Lemmatizer, Tagger
from .training import without_lemmas
from .workers import parse_in_processes

log = logging.getLogger("polyparse.train")

CHUNK = 64
"""Sentences tagged together and sent to a worker process at a time."""

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


class MissingComponentError(ValueError):
    """The model lacks the tokenizer or the tagger that a request needs."""


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


RELAXED_DECODERS = frozenset({"lp", "ad3"})
"""Decoders whose result is the optimum of the LP relaxation (fractional in general) and
its rounding (:meth:`Parser.relax`)."""


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


class Parser:
    """A trained model together with the decoder it parses with, and optionally the
    tokenizer and tagger that take raw text to its input.

    Attributes
    ----------
    model, config, report:
        The parser's :class:`LinearModel`, its :class:`TrainConfig` and training report.
    tokenizer:
        :class:`~corpora.tokenizer.Tokenizer` or None (no ``# text`` in training, or an
        older model file).
    tagger:
        :class:`~parser.tagging.Tagger` or None (trained on gold tags).
    lemmatizer:
        :class:`~parser.tagging.Lemmatizer` or None (no tagger, or an older model file).
    path:
        The file the parser was loaded from (None if trained in this process).
    decoder:
        The decoder it parses with: the one it was trained with, or the one set by
        :meth:`use_decoder`.
    decodings:
        :class:`~decoders.base.CertificateCounts` of the sentences parsed so far (worker
        processes' included): how many per kind of :class:`~decoders.base.Certificate`,
        and how many proven optimal.
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
        the candidate arcs and were dropped for that sentence).
    """

    def __init__(self, model: LinearModel, config: TrainConfig,
                 report: TrainReport | None = None, *, tokenizer: Tokenizer | None = None,
                 tagger: Tagger | None = None, lemmatizer: Lemmatizer | None = None,
                 ud_rules: UDRules | None = None) -> None:
        self.model = model
        self.config = config
        self.report = report
        self.tokenizer = tokenizer
        self.tagger = tagger
        self.lemmatizer = lemmatizer
        self.path: Path | None = None
        self.decoder = config_decoder(config)
        self.decodings = CertificateCounts()
        self.ud_rules = ud_rules or UDRules()
        self.use_ud_rules = True
        self.constrained: Counter = Counter()
        self._warm = False

    @property
    def fallbacks(self) -> int:
        """Sentences whose decoder ran out of its time limit and fell back to a cheaper
        tree (``stats["fallback"]``), counted as sentences are parsed."""
        return self.decodings.kinds["time-limit"]

    def use_decoder(self, name: str | None = None, **options) -> None:
        """Parse with decoder ``name`` (default: the one the model was trained with) and
        ``options``; for the training decoder they are added to its training options.

        Raises ``ValueError`` for an unknown decoder, one that cannot decode the
        model's part types (e.g. ``mst`` for an order-2 model), or options it does not
        take (:class:`~decoders.base.OptionError`).
        """
        name = name or self.config.decoder
        base = self.config.decoder_options if name == self.config.decoder else {}
        self.decoder = config_decoder(replace(self.config, decoder=name,
                                              decoder_options={**base, **options}))

    # -- training -------------------------------------------------------------------

    @classmethod
    def train(cls, train: Sequence[Sentence], config: TrainConfig,
              dev: Sequence[Sentence] | None = None, *, progress: bool = False,
              checkpoint: str | Path | None = None, client=None) -> "Parser":
        """Fit the tokenizer, tagger, lemmatizer, feature map and pruner
        (:func:`parser.training.prepare`), then the weights by ``config.trainer``.

        With ``config.mixing`` (``{"shards": K, "mixing": "uniform"}``) the weights are
        trained by iterative parameter mixing (McDonald, Hall and Mann 2010;
        :mod:`learning.mixing`) on ``K`` shards: on the workers of the Dask ``client``
        (:class:`parser.cluster.DaskShards`) if one is given, else one after the other in
        this process, with the same weights. The rest of training runs here.

        ``dev`` (gold trees) is parsed after every epoch, with the tags the tagger
        predicts for it when there is one. With ``checkpoint``, the parser with the
        weights so far is saved there after every epoch, so that a long run that is
        stopped still leaves a model.
        """
        config_decoder(config)
        trainer = make_trainer(config.trainer, epochs=config.epochs, seed=config.seed,
                               progress=progress, **config.trainer_options)
        trainer.check_parts(config.parts)
        if config.mixing is not None:
            check_mixable(trainer)
            if config.shards < 1:
                raise ValueError(f"shards must be >= 1, not {config.shards}")
        elif client is not None:
            raise ValueError("training on a Dask cluster is by parameter mixing: give the "
                             "number of shards (config.mixing)")
        if config.tagger is not None and not 2 <= config.jackknife <= len(train):
            raise ValueError(f"jackknifing needs between 2 and {len(train)} folds (the number "
                             f"of training sentences), not {config.jackknife}")
        prepared = training.prepare(train, config, dev, progress=progress)
        parser = cls(prepared.model, config, TrainReport(), tokenizer=prepared.tokenizer,
                     tagger=prepared.tagger, lemmatizer=prepared.lemmatizer)
        with contextlib.ExitStack() as stack:
            if config.mixing is None:
                epochs = trainer.run(Examples(prepared.model, prepared.train),
                                     prepared.model, parser.decoder)
            else:
                if client is None:
                    runner = SerialShards(config.trainer, config.trainer_options,
                                          config.seed, prepared.model, parser.decoder,
                                          prepared.train, config.shards)
                else:
                    from .cluster import DaskShards

                    runner = stack.enter_context(DaskShards(client, parser, prepared.train))
                epochs = ParameterMixing(trainer, config.shards, runner).run(prepared.model)
            parser._train_epochs(epochs, prepared, dev, checkpoint)
        parser.ud_rules = learn_rules(train) if config.ud_rules else UDRules()
        if parser.ud_rules.rules:
            log.info("UD rules holding in the training data: %d of %d (%s)",
                     len(parser.ud_rules.rules), len(parser.ud_rules.counts),
                     ", ".join(parser.ud_rules.rules))
            if checkpoint is not None:
                parser.save(checkpoint)
        return parser

    def _train_epochs(self, epochs, prepared, dev, checkpoint) -> None:
        """Run the epochs of :meth:`train`: dev scores and checkpoints after each."""
        for stats in epochs:
            if dev:
                scores = attachment_scores(dev, self.parse(prepared.dev)).all_words
                stats.dev = {"uas": scores["uas"], "las": scores["las"]}
                log.info("epoch %d: dev UAS %.2f, LAS %.2f", stats.epoch, stats.dev["uas"],
                         stats.dev["las"])
            self.report.epochs.append(stats)
            if checkpoint is not None:
                self.save(checkpoint)

    # -- parsing --------------------------------------------------------------------

    def parse_one(self, sentence: Sentence) -> Sentence:
        """``sentence`` with predicted HEAD and DEPREL (its tags as given)."""
        return self.analyze(sentence).sentence

    def analyze(self, sentence: Sentence, confidence: Temperatures | None = None,
                constraints: Constraints | None = None, budget: Budget | None = None
                ) -> Analysis:
        """Parse ``sentence`` (its tags as given) and say how its tree was decoded
        (:meth:`~decoders.base.Decoder.certificate`, counted in :attr:`decodings`); with
        ``confidence``, also each word's head and label probability at those
        temperatures (:mod:`learning.confidence`: matrix-tree marginals of the model's
        arcs at order 1, of its pruner's at higher orders).

        The sentence is decoded as before, each arc with its best label, unless
        ``constraints`` concern it, or the UD rules (:attr:`ud_rules`,
        :attr:`use_ud_rules`) are on and that tree breaks one of them: then it is decoded
        with its labels in the program (:meth:`decode_constrained`). A tree that breaks
        no rule is kept: it is the best tree under the rules too (for an exact decoder,
        the exact constrained optimum; counted as ``rules_held``).
        :class:`~parser.constraints.ConstraintError` when no tree satisfies the
        constraints.

        Every stage shares one ``budget``, by default the decoder's ``time_limit``
        counted from here: when it runs out before a tree that satisfies the rules and ``constraints`` is
        found, the best tree found without them is kept, and its certificate says so
        (``time-limit``, :attr:`~decoders.base.Certificate.unconstrained`)."""
        self.warm_up()
        budget = budget or Budget(self.decoder.time_limit)
        n = len(sentence)
        if n == 0:           # the one empty tree
            self.decodings.add(Certificate("exact", 0.0))
            nothing = None if confidence is None else np.full(1, np.nan)
            return Analysis(sentence, Certificate("exact", 0.0), nothing, nothing)
        seen = self.seen(sentence)
        user = constraints is not None and constraints.applies(sentence)
        plain = found = parsed = None
        if not user:
            rules = self._rules_apply(sentence)
            plain = found = self._plain(seen, confidence, every_label=rules)
            if rules:
                # the unconstrained optimum is the constrained one when it breaks no rule
                parsed = self._labelled(sentence, plain.result.heads, plain.label_ids)
                broken = check(parsed)[1]
                if any(broken[rule] for rule in self.ud_rules.rules):
                    plain = None
                else:
                    self.constrained["rules_held"] += 1
        if plain is None:
            try:
                labeled, certificate = self.decode_constrained(sentence, constraints, found,
                                                               budget)
            except TimeLimitReached as stop:
                return self._unconstrained(sentence, seen, found, confidence, budget, stop)
            self.decodings.add(certificate)
            label_ids = labeled.labels[1:]
            heads = labeled.result.heads
            parsed = self._labelled(sentence, heads, label_ids)
            if constraints is not None and constraints.keep_given:
                parsed = _unknown_given_labels(parsed, sentence, self.model.labels)
            S = None if found is None else found.S
            if confidence is not None and S is None:
                S = head_model(self.model).arc_scores(seen)[0]
            return self._analysis(parsed, certificate, seen, heads, label_ids, S, confidence,
                                  sentence, constraints)
        result, label_ids, S = plain.result, plain.label_ids, plain.S
        heads = result.heads
        certificate = self.decoder.certificate(result)
        self.decodings.add(certificate)
        if parsed is None:      # not labelled yet for the rules' check
            parsed = self._labelled(sentence, heads, label_ids)
        return self._analysis(parsed, certificate, seen, heads, label_ids, S, confidence,
                              sentence, constraints)

    def _unconstrained(self, sentence: Sentence, seen: Sentence, found: "_Plain | None",
                       confidence: Temperatures | None, budget: Budget,
                       stop: TimeLimitReached) -> Analysis:
        """The analysis of a sentence whose time ran out before a tree that satisfies
        its constraints was found (:meth:`analyze`): the tree decoded without them
        (``found``; else decoded now, with what is left of ``budget``), with a
        ``time-limit`` certificate that says the constraints were not enforced."""
        if found is None:
            found = self._plain(seen, confidence, decoder=self.decoder.within(budget))
        certificate = self.decoder.certificate(found.result)
        certificate = Certificate("time-limit", certificate.score,
                                  upper_bound=certificate.upper_bound,
                                  stage=f"{self.decoder.name}:{stop.stage}",
                                  unconstrained=True)
        self.decodings.add(certificate)
        heads = found.result.heads
        parsed = self._labelled(sentence, heads, found.label_ids)
        return self._analysis(parsed, certificate, seen, heads, found.label_ids, found.S,
                              confidence, sentence, None)

    def _analysis(self, parsed: Sentence, certificate, seen: Sentence, heads: np.ndarray,
                  label_ids: np.ndarray, S: np.ndarray | None,
                  confidence: Temperatures | None, sentence: Sentence,
                  constraints: Constraints | None) -> Analysis:
        """The analysis of ``parsed`` (``sentence`` parsed), with each word's head and
        label probabilities (from the arc scores ``S``, under ``constraints``' arcs) when
        ``confidence`` is given."""
        if confidence is None:
            return Analysis(parsed, certificate)
        words = np.arange(1, len(heads))
        marginals, unaccounted = self._head_marginals(sentence, S, confidence.head,
                                                      constraints)
        label_scores = self.model.label_scores(seen, np.stack([heads[1:], words], axis=1))
        return Analysis(parsed, certificate,
                        np.concatenate([[np.nan], marginals[heads[1:], words]]),
                        np.concatenate([[np.nan], label_probabilities(
                            label_scores, label_ids, confidence.label)]), unaccounted)

    def _head_marginals(self, sentence: Sentence, S: np.ndarray, temperature: float,
                        constraints: Constraints | None
                        ) -> tuple[np.ndarray, tuple[str, ...]]:
        """The matrix-tree marginals of the head model's arc scores ``S`` at
        ``temperature`` over the trees with the given arcs of ``constraints`` and
        without their forbidden arcs (:func:`learning.confidence.masked_scores`), and
        what they do not account for (:attr:`Analysis.unaccounted`)."""
        single_root = self.config.single_root
        unaccounted = []
        if not self.model.arc_factored:
            unaccounted.append("higher-order parts")
        if self.rules_in_force(sentence):
            unaccounted.append("UD rules")
        if constraints is not None and constraints.applies(sentence):
            heads, labels = constraints.given(sentence)
            masked = masked_scores(S, heads, constraints.forbidden_arcs(sentence))
            if admits_tree(np.isfinite(masked), single_root):
                S = masked
            else:           # a given arc that the head model's pruner does not keep
                unaccounted.append("given and forbidden arcs")
            if (any(label is not None for label in labels)
                    or constraints.forbidden_labels(sentence, self.model.labels).any()):
                unaccounted.append("label constraints")
        return head_marginals(S, temperature, single_root), tuple(unaccounted)

    def _plain(self, seen: Sentence, confidence: Temperatures | None,
               every_label: bool = False, decoder: Decoder | None = None) -> "_Plain":
        """Decode ``seen`` without constraints by ``decoder`` (the parser's by default),
        each arc with its best label; with ``every_label``, an arc-factored model also
        keeps every label's score of every arc (for :meth:`decode_constrained`, which
        then needs no label features)."""
        decoder = decoder or self.decoder
        n = len(seen)
        words = np.arange(1, n + 1)
        S = example = label_scores = None
        if self.model.arc_factored:
            # O(n^2) memory: no feature rows and no part index for the n^2 arcs
            if every_label:     # every arc's entries are written; the rest are unused
                label_scores = np.empty((n + 1, n + 1, len(self.model.labels)))
            S, labels = self.model.arc_scores(seen, label_scores=label_scores)
            result = decoder.decode_arcs(S)
            label_ids = labels[result.heads[1:], words]
        else:
            result, label_ids, example = self._decode_parts(seen, decoder)
            if confidence is not None:
                S, _ = head_model(self.model).arc_scores(seen)
        return _Plain(result, label_ids, S, example, label_scores)

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
                           plain: "_Plain | None" = None, budget: Budget | None = None,
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
        satisfies the constraints is found. ``explain=False``: the
        :class:`ConstraintError` of an infeasible sentence does not name the conflict,
        which takes a decoding per UD rule (:meth:`kbest`'s subproblems, where no tree is
        no error)."""
        budget = budget or Budget(self.decoder.time_limit)
        rules = frozenset(self.ud_rules.rules) if self.use_ud_rules \
            and len(sentence) <= CONSTRAINED_MAX_WORDS else frozenset()
        user = constraints if constraints is not None and constraints.applies(sentence) \
            else None
        if user is not None:
            self._check_user(sentence, user)
        decoder = self.decoder
        if not decoder.honors_constraints:
            decoder = make_decoder("ilp", self.config.single_root,
                                   time_limit=decoder.time_limit)
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
        if labeled.result.stats.get("fallback") and hint is not None and budget.left() != 0:
            labeled = self._repaired(sentence, rules, user, decoder.within(budget), labeled,
                                     hint)
        stats = labeled.result.stats
        self.constrained["lp_to_ilp"] += bool(stats.get("rule_fallback"))
        value = labeled.result.value
        if stats.get("fallback"):
            kind = "node-limit" if stats.get("limit") == "nodes" else "time-limit"
            certificate = Certificate(kind, value, upper_bound=_upper_bound(stats),
                                      stage=f"{decoder.name}:labeled")
        elif stats.get("upper_bound") is not None:      # a relaxed decoder's search
            certificate = Certificate("rounded", value, upper_bound=stats["upper_bound"])
        elif not stats.get("relaxed") or stats.get("rule_fallback"):
            certificate = Certificate("exact", value)
        elif stats["integral"]:
            certificate = Certificate("lp-integral", value)
        else:
            certificate = Certificate("rounded", value, upper_bound=stats["lp_value"])
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
        stats = dict(repaired.result.stats, fallback=True,
                     upper_bound=_upper_bound(incumbent.result.stats))
        return replace(repaired, result=replace(repaired.result, stats=stats))

    def _decode_labeled(self, sentence: Sentence, rules: frozenset,
                        user: Constraints | None, decoder: Decoder, all_arcs: bool,
                        arcs: np.ndarray | None = None, plain: "_Plain | None" = None
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
            hint = plain.result.heads if plain is not None else make_decoder(
                "mst", self.config.single_root).decode_arcs(S).heads
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
        allowed = label_masks(sentence, labels, parts.arcs, rules) & ~label_ban[parts.arcs[:, 1]]
        base = best_labels(label_scores, allowed, k=LABEL_CANDIDATES)
        problem = LabeledProblem(base.labels, base.offsets,
                                 **compile_rules(sentence, labels, rules, parts.arcs,
                                                 base.labels))
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

    def fit_confidence(self, sentences: Sequence[Sentence]) -> Temperatures:
        """The temperatures of :func:`learning.confidence.fit_temperatures` on gold
        ``sentences`` (held out from training), as this parser's features see them."""
        return fit_temperatures(self.model, [self.seen(s) for s in sentences],
                                self.config.single_root)

    def relax(self, sentence: Sentence) -> Relaxation:
        """The LP relaxation of ``sentence`` (its tags as given) under the model's
        scores: its arc values and the tree they round to (:class:`Relaxation`).

        It is solved by the parser's decoder when that is a relaxation
        (:data:`RELAXED_DECODERS`: ``lp``, ``ad3``), otherwise by ``lp`` with its
        default options (the multi-commodity-flow formulation of
        :mod:`decoders.formulation`, which is tight for a first-order model: its arc
        values are then integral, up to ties). Not counted in :attr:`decodings`.
        """
        decoder = (self.decoder if self.decoder.name in RELAXED_DECODERS
                   else make_decoder("lp", self.config.single_root,
                                     time_limit=self.decoder.time_limit))
        if len(sentence) == 0:
            return Relaxation(Analysis(sentence, Certificate("lp-integral", 0.0)),
                              np.zeros((1, 1)), decoder.name)
        result, label_ids, example = self._decode_parts(self.seen(sentence), decoder)
        parsed = self._labelled(sentence, result.heads, label_ids)
        return Relaxation(Analysis(parsed, decoder.certificate(result)),
                          example.parts.arc_matrix(result.output, fill=0.0), decoder.name)

    def _decode_parts(self, seen: Sentence, decoder: Decoder
                      ) -> tuple[DecodeResult, np.ndarray, Example]:
        """Decode ``seen`` over the model's parts with ``decoder``: the result, the label
        id of each word's arc in its tree, and the example decoded."""
        example = self.model.example(seen)
        result, labels = predict(self.model, example, decoder)
        return result, labels[self.model.arc_rows(result.heads, example)], example

    def _labelled(self, sentence: Sentence, heads: np.ndarray,
                  label_ids: np.ndarray) -> Sentence:
        """``sentence`` with the tree ``heads`` and the labels ``label_ids`` (one per
        word)."""
        return sentence.with_tree(heads, [ROOT] + [self.model.labels[i] for i in label_ids])

    def kbest(self, sentence: Sentence, k: int, constraints: Constraints | None = None
              ) -> list[tuple[Sentence, float]]:
        """The ``k`` best trees of ``sentence`` (fewer when it has fewer) that satisfy the
        UD rules in force (:meth:`rules_in_force`) and ``constraints``, best first: copies
        of it with predicted HEAD and DEPREL, each with the model's score of its labeled
        tree. The first is :meth:`analyze`'s tree (``parse``'s), with every decoder.

        The trees come from Lawler's partition of the tree space with the decoding of
        :meth:`analyze` as its oracle (:mod:`parser.kbest_constrained`): exact for an
        exact decoder (``mst``, ``ilp``, ``ad3-exact``; ``eisner`` among projective
        trees), approximate for a relaxation (``lp``, ``ad3``: each tree its subproblem's
        rounded tree, the first ``parse``'s). When neither rules nor constraints concern
        the sentence and the decoder gives exact k-best trees
        (:attr:`~decoders.base.Decoder.gives_kbest`: ``mst``, ``ilp``), its own k-best
        algorithm gives the same trees faster (:meth:`_kbest_unconstrained`).
        :class:`~parser.constraints.ConstraintError` when the constraints admit no
        tree."""
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        if len(sentence) == 0:
            return [(sentence.with_tree(np.full(1, -1, dtype=np.int64), [ROOT]), 0.0)]
        self.warm_up()                  # before the budget of the partition starts
        user = constraints if constraints is not None and constraints.applies(sentence) \
            else None
        if user is None and self.decoder.gives_kbest and not self.rules_in_force(sentence):
            return self._kbest_unconstrained(sentence, k)
        from .kbest_constrained import partitioned_kbest

        trees = [(ranked.sentence, ranked.score)
                 for ranked in partitioned_kbest(self, sentence, k, user)]
        if user is not None and user.keep_given:
            trees = [(_unknown_given_labels(tree, sentence, self.model.labels), score)
                     for tree, score in trees]
        return trees

    def _kbest_unconstrained(self, sentence: Sentence, k: int
                             ) -> list[tuple[Sentence, float]]:
        """:meth:`kbest` by the decoder's own exact k-best algorithm (``mst``: Camerini,
        Fratta and Maffioli's, :mod:`decoders.kbest`; ``ilp``: no-good cuts), with no UD
        rule or constraint in force: each arc with its best label."""
        if self.model.arc_factored:
            S, labels = self.model.arc_scores(self.seen(sentence))
            trees = self.decoder.kbest_arcs(S, k)
            names = [self._arc_label_names(tree.heads, labels) for tree in trees]
        else:
            example = self.model.example(self.seen(sentence))
            scores = self.model.scores(example)
            trees = self.decoder.kbest(example.parts, scores.parts, k)
            names = [self.model.label_names(tree.heads, example, scores.labels)
                     for tree in trees]
        return [(sentence.with_tree(tree.heads, tree_names), tree.score)
                for tree, tree_names in zip(trees, names)]

    def parse_kbest(self, sentence: Sentence, k: int, constraints: Constraints | None = None
                    ) -> list[Sentence]:
        """The trees of :meth:`kbest` as ``parse --kbest`` writes them
        (:func:`kbest_copies`)."""
        return kbest_copies(self.kbest(sentence, k, constraints))

    def seen(self, sentence: Sentence) -> Sentence:
        """What the parser's features see of ``sentence`` (lemmas only if trained on)."""
        return sentence if self.config.uses_lemmas else without_lemmas(sentence)

    def _arc_label_names(self, heads: np.ndarray, labels: np.ndarray) -> list[str]:
        """Label names of the tree ``heads`` from the ``(n + 1, n + 1)`` best-label ids of
        :meth:`LinearModel.arc_scores`."""
        label_ids = labels[heads[1:], np.arange(1, len(heads))]
        return [ROOT] + [self.model.labels[i] for i in label_ids]

    def parse(self, sentences: Iterable[Sentence], *, retag: bool = False,
              jobs: int = 1, kbest: int | None = None, certify: bool = False,
              confidence: Temperatures | None = None,
              constraints: Constraints | None = None, client=None) -> Iterator[Sentence]:
        """Parse a stream of sentences lazily, in order.

        Parameters
        ----------
        sentences:
            Any iterable, read :data:`CHUNK` sentences at a time.
        retag:
            Replace UPOS, XPOS and FEATS by the tagger's, and LEMMA by the lemmatizer's
            if the model has one (otherwise they are kept as given). Raises
            :class:`MissingComponentError` if the model has no tagger.
        jobs:
            Processes that parse (and tag) chunks of sentences; each gets the model once
            (inherited by ``fork``, or loaded from :attr:`path`). At most ``2 * jobs``
            chunks are in flight, and the output is the same as with ``jobs=1``.
        client:
            A Dask ``distributed.Client``: the chunks are parsed on its workers, each
            sent the model once, at most twice as many chunks in flight as the workers
            have threads, the output the same as with ``jobs=1``
            (:func:`parser.cluster.parse_on_cluster`). Not with ``jobs > 1``.
        kbest:
            Give each sentence's ``kbest`` best trees under the UD rules and
            ``constraints``, in order, the first ``parse``'s tree, as :meth:`parse_kbest`
            does (with any decoder: :meth:`kbest`).
        certify:
            Add the comment ``# decoding = ...`` of each sentence's
            :class:`~decoders.base.Certificate` (:meth:`Analysis.annotated`); every
            sentence's certificate is counted in :attr:`decodings` either way.
        confidence:
            Add ``HeadProb`` and ``DeprelProb`` to MISC, at these temperatures
            (:meth:`analyze`). Neither this nor ``certify`` goes with ``kbest``, whose
            trees carry their rank and score instead (``ValueError`` before any work).
        constraints:
            The user's :class:`~parser.constraints.Constraints` (given arcs kept,
            forbidden arcs and labels), enforced with the UD rules (:meth:`analyze`,
            and on every tree of ``kbest``). A sentence they admit no tree for raises
            :class:`~parser.constraints.ConstraintError` when it is reached.
        """
        if retag:
            self.require("tagger", "tag words")
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1, not {jobs}")
        if kbest is not None:
            if kbest < 1:
                raise ValueError(f"kbest must be >= 1, not {kbest}")
            if certify or confidence is not None:
                raise ValueError("k-best trees carry their rank and score, not a "
                                 "certificate or confidence: drop certify and confidence "
                                 "with kbest")
        if confidence is not None:
            head_model(self.model)           # a higher-order model needs its pruner
        if client is not None and jobs > 1:
            raise ValueError("parse either on a Dask cluster or on local processes (jobs), "
                             "not both")
        chunks = _chunks(sentences, CHUNK)
        if client is not None:
            from .cluster import parse_on_cluster

            return parse_on_cluster(self, chunks, client, retag, kbest, certify, confidence,
                                    constraints)
        if jobs > 1:
            return parse_in_processes(self, chunks, jobs, retag, kbest, certify, confidence,
                                      constraints)
        return (parsed for chunk in chunks
                for parsed in self.parse_chunk(chunk, retag, kbest, certify, confidence,
                                               constraints))

    def tag(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """Copies of ``sentences`` with the tagger's UPOS, XPOS and FEATS, and the
        lemmatizer's LEMMA if the model has one (else LEMMA as given)."""
        self.require("tagger", "tag words")
        tagged = self.tagger.tag(list(sentences))
        if self.lemmatizer is not None:
            tagged = self.lemmatizer.lemmatize(tagged, self.tagger)
        return tagged

    def tokenize(self, text: str, *, id_prefix: str = "",
                 max_words: int | None = MAX_SENTENCE_WORDS) -> list[Sentence]:
        """``text`` cut into sentences of words (``# sent_id = {id_prefix}{k}``,
        ``# text``, multiword-token lines, ``SpaceAfter=No``), not yet tagged; a sentence
        longer than ``max_words`` words is cut (:meth:`Tokenizer.tokenize`; None: never)."""
        self.require("tokenizer", "parse raw text")
        return self.tokenizer.to_sentences(text, id_prefix=id_prefix, max_words=max_words)

    def tag_text(self, text: str, *, id_prefix: str = "",
                 max_words: int | None = MAX_SENTENCE_WORDS) -> Iterator[Sentence]:
        """The sentences of :meth:`tokenize`, lazily, tagged and lemmatized (:meth:`tag`,
        :data:`CHUNK` sentences at a time) but not parsed."""
        self.require("tokenizer", "parse raw text")        # now, not when first asked
        self.require("tagger", "parse raw text")
        chunks = _chunks(self.tokenizer.iter_sentences(text, id_prefix=id_prefix,
                                                       max_words=max_words), CHUNK)
        return (tagged for chunk in chunks for tagged in self.tag(chunk))

    def parse_text(self, text: str, *, id_prefix: str = "", jobs: int = 1,
                   max_words: int | None = MAX_SENTENCE_WORDS, client=None) -> list[Sentence]:
        """Tokenize, tag and parse raw ``text``: a list of sentences ready for
        :meth:`~corpora.sentence.Sentence.to_text`. A sentence longer than ``max_words``
        words (default :data:`~corpora.sentence.MAX_SENTENCE_WORDS`, 300) is cut where
        the sentence model sees the likeliest end (:meth:`Tokenizer.tokenize`; None:
        never), so that text without punctuation is not parsed as one sentence.

        Raises :class:`MissingComponentError` if the model has no tokenizer or tagger.
        """
        return list(self.stream_text(text, id_prefix=id_prefix, jobs=jobs,
                                     max_words=max_words, client=client))

    def stream_text(self, text: str, *, id_prefix: str = "", jobs: int = 1,
                    max_words: int | None = MAX_SENTENCE_WORDS,
                    kbest: int | None = None, certify: bool = False,
                    confidence: Temperatures | None = None,
                    constraints: Constraints | None = None, client=None
                    ) -> Iterator[Sentence]:
        """:meth:`parse_text`, lazily. Tokenizing starts when the first sentence is asked
        for and hands out sentences as it builds them
        (:meth:`~corpora.tokenizer.Tokenizer.iter_sentences`), so that with ``jobs > 1``
        the worker processes start, warm up and parse while this process tokenizes.
        ``kbest``, ``certify``, ``confidence``, ``constraints``, ``client``: as for
        :meth:`parse`."""
        self.require("tokenizer", "parse raw text")
        self.require("tagger", "parse raw text")
        return self.parse(self.tokenizer.iter_sentences(text, id_prefix=id_prefix,
                                                        max_words=max_words),
                          retag=True, jobs=jobs, kbest=kbest, certify=certify,
                          confidence=confidence, constraints=constraints, client=client)

    def parse_tokens(self, sentences: Iterable[Sequence[str]]) -> list[Sentence]:
        """Tag (if the model has a tagger) and parse pre-tokenized sentences, each a
        sequence of word forms, e.g. ``[["The", "cat", "sat", "."]]``."""
        built = []
        for forms in sentences:
            if isinstance(forms, str):
                raise TypeError("each sentence must be a sequence of word forms, not a string "
                                f"({forms!r}); use parse_text for raw text")
            built.append(Sentence.from_words(list(forms)))
        return list(self.parse(built, retag=self.tagger is not None))

    def require(self, component: str, purpose: str) -> None:
        """Raise :class:`MissingComponentError` if the model has no ``component``
        (``"tokenizer"`` or ``"tagger"``), saying it is needed to ``purpose``."""
        if getattr(self, component) is not None:
            return
        detail = {
            "tokenizer": "this model has no tokenizer (its training treebank had no "
                         "'# text' comments, or it was trained by an older polyparse); give "
                         "tokenized CoNLL-U, or retrain on a treebank with '# text'",
            "tagger": "this model has no tagger (it was trained with --no-tagger, or by an "
                      "older polyparse); give tagged CoNLL-U without --retag, or retrain "
                      "without --no-tagger",
        }[component]
        where = f"{self.path}: " if self.path else ""
        raise MissingComponentError(f"{where}cannot {purpose}: {detail}")

    def warm_up(self) -> None:
        """Decode a sentence of three words once, plainly and under the UD rules, without
        a time limit and uncounted, so that loading the decoders' compiled kernels (on a
        cold cache, compiling them: minutes) is not charged to the time limit of the
        first sentence parsed. Once per parser (a forked worker inherits it);
        :meth:`analyze` and :meth:`kbest` call it."""
        if self._warm:
            return
        self._warm = True
        sentence = Sentence.from_words(["Dogs", "bark", "."])
        decoder, counts = self.decoder, self.constrained.copy()
        self.decoder = decoder.with_time_limit(None)
        try:
            self._plain(self.seen(sentence), None)
            if self.use_ud_rules and self.ud_rules.rules:
                self.decode_constrained(sentence)
        finally:
            self.decoder, self.constrained = decoder, counts

    def parse_chunk(self, chunk: list[Sentence], retag: bool, kbest: int | None = None,
                    certify: bool = False, confidence: Temperatures | None = None,
                    constraints: Constraints | None = None) -> list[Sentence]:
        """Tag (with ``retag``) and parse one chunk of sentences (with ``kbest``: the
        copies of :meth:`parse_kbest`, one sentence after another; otherwise annotated
        as ``certify`` and ``confidence`` ask, :meth:`parse`)."""
        if retag:
            chunk = self.tag(chunk)
        if kbest is not None:
            return [copy for s in chunk for copy in self.parse_kbest(s, kbest, constraints)]
        return [self.analyze(s, confidence, constraints).annotated(certify) for s in chunk]

    # -- files ----------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the parser, and its tokenizer, tagger and lemmatizer if any, to one model
        file (:func:`parser.parser_file.write`)."""
        parser_file.write(self, path)

    @classmethod
    def load(cls, path: str | Path) -> "Parser":
        """Read a model file (:func:`parser.parser_file.read`)."""
        stored = parser_file.read(path)
        parser = cls(stored.model, stored.config, stored.report, tokenizer=stored.tokenizer,
                     tagger=stored.tagger, lemmatizer=stored.lemmatizer,
                     ud_rules=stored.ud_rules)
        parser.path = Path(path)
        return parser


def kbest_copies(trees: list[tuple[Sentence, float]]) -> list[Sentence]:
    """The k best ``trees`` (:meth:`Parser.kbest`) as ``parse --kbest`` writes them: each
    copy with the comments ``# kbest_rank = r`` (1, 2, ...) and ``# kbest_score = s`` (the
    model's score of the tree) after the sentence's own comments."""
    return [parsed.with_comments([f"# kbest_rank = {rank}", f"# kbest_score = {score:.6f}"],
                                 first=rank == 1)
            for rank, (parsed, score) in enumerate(trees, 1)]


class _Plain(NamedTuple):
    """A sentence decoded without constraints (:meth:`Parser._plain`): the result,
    each word's label id, the arc scores (an arc-factored model's; else the pruner's for
    confidence, or None), the example decoded (None when arc factored) and, when asked,
    every label's score of every arc (``(n + 1, n + 1, n_labels)``, arc-factored)."""

    result: DecodeResult
    label_ids: np.ndarray
    S: np.ndarray | None
    example: Example | None
    label_scores: np.ndarray | None


def _upper_bound(stats: dict) -> float | None:
    """The upper bound a labeled decoding that fell back reports: its search's bound,
    else its LP's value (None: neither was reached)."""
    bound = stats.get("upper_bound")
    return stats.get("lp_value") if bound is None else bound


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


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk
