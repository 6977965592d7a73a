"""The decoding of one sentence (:meth:`Decoding.analyze`): the model's scores, the
parser's decoder, the UD rules and the user's constraints within one time budget, the
certificate of the tree and, when asked, each word's head and label probabilities;
also the LP relaxation of a sentence (:meth:`Decoding.relax`). The executors
(one process, ``--jobs``, Dask) and the k-best partition (:mod:`parser.kbest_constrained`)
decode through it."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from polyparse.corpora.sentence import ROOT, Sentence
from polyparse.decoders import (Budget, Certificate, CertificateCounts, DecodeResult, Decoder,
                                TimeLimitReached)
from polyparse.decoders.lawler import admits_tree
from polyparse.learning.confidence import (Temperatures, fit_temperatures, head_marginals,
                                           head_model, label_probabilities, masked_scores)
from polyparse.learning.inference import predict
from polyparse.learning.model import Example, LinearModel
from polyparse.learning.relabeler import Relabeler

from .analysis import Analysis, Plain, Relaxation
from .config import TrainConfig, config_decoder
from .constrained import ConstrainedDecoding, _unknown_given_labels, labels_under_rules
from .constraints import Constraints
from .ud_rules import UDRules, check


class Decoding(ConstrainedDecoding):
    """A model and the decoder it parses with, decoding one sentence at a time
    (:meth:`analyze`), the UD rules and the user's constraints enforced
    (:class:`~parser.constrained.ConstrainedDecoding`).

    Attributes
    ----------
    decodings:
        :class:`~decoders.base.CertificateCounts` of the sentences parsed so far (worker
        processes' included): how many per kind of :class:`~decoders.base.Certificate`,
        and how many proven optimal.
    relabeler:
        The second-stage :class:`~learning.relabeler.Relabeler` that labels the arcs of
        each tree decoded again (:meth:`_relabelled`; not those of a sentence under the
        user's constraints), or None (the first stage's labels).
    """

    def __init__(self, model: LinearModel, config: TrainConfig,
                 ud_rules: UDRules | None = None, relabeler: Relabeler | None = None
                 ) -> None:
        super().__init__(model, config, ud_rules)
        self.relabeler = relabeler
        self.decodings = CertificateCounts()
        self._warm = False

    @property
    def fallbacks(self) -> int:
        """Sentences whose decoder ran out of its time limit and fell back to a cheaper
        tree (``stats.fallback``), counted as sentences are parsed."""
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
            plain = found = self._plain(seen, confidence, every_label=rules, budget=budget)
            if rules:
                # the unconstrained optimum is the constrained one when it breaks no rule
                parsed = self._labelled(sentence, plain.result.heads, plain.label_ids)
                if self._breaks_rules(parsed):
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
            if self.relabeler is not None and not user:
                label_ids = self._relabelled(seen, heads, label_ids, budget)
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

    def _unconstrained(self, sentence: Sentence, seen: Sentence, found: "Plain | None",
                       confidence: Temperatures | None, budget: Budget,
                       stop: TimeLimitReached) -> Analysis:
        """The analysis of a sentence whose time ran out before a tree that satisfies
        its constraints was found (:meth:`analyze`): the tree decoded without them
        (``found``; else decoded now, with what is left of ``budget``), with a
        ``time-limit`` certificate that says the constraints were not enforced."""
        if found is None:
            found = self._plain(seen, confidence, budget=budget)
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
        if self.relabeler is not None:
            label_scores = self.relabeler.combined_scores(parsed, label_scores)
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
               every_label: bool = False, budget: Budget | None = None) -> "Plain":
        """Decode ``seen`` without constraints by the parser's decoder, within what is
        left of ``budget`` once the parts are scored, each arc with its best label, or
        with the best label of both stages when the parser has a :attr:`relabeler`
        (:meth:`_relabelled`, within ``budget`` too); with ``every_label``, an
        arc-factored model also keeps every label's score of every arc (for
        :meth:`decode_constrained`, which then needs no label features)."""
        n = len(seen)
        words = np.arange(1, n + 1)
        S = example = label_scores = None
        if self.model.arc_factored:
            # O(n^2) memory: no feature rows and no part index for the n^2 arcs
            if every_label:     # every arc's entries are written; the rest are unused
                label_scores = np.empty((n + 1, n + 1, len(self.model.labels)))
            S, labels = self.model.arc_scores(seen, label_scores=label_scores)
            result = self.decoder.within(budget).decode_arcs(S)
            label_ids = labels[result.heads[1:], words]
        else:
            result, label_ids, example = self._decode_parts(seen, self.decoder, budget)
            if confidence is not None:
                S, _ = head_model(self.model).arc_scores(seen)
        if self.relabeler is not None and n:
            label_ids = self._relabelled(seen, result.heads, label_ids, budget)
        return Plain(result, label_ids, S, example, label_scores)

    def _relabelled(self, seen: Sentence, heads: np.ndarray, label_ids: np.ndarray,
                    budget: Budget | None = None) -> np.ndarray:
        """The label ids of the tree ``heads`` of ``seen`` (first labelled ``label_ids``)
        under both stages' scores (:meth:`~learning.relabeler.Relabeler.combined_scores`).
        Where their best labels break a UD rule in force that the first stage's keep,
        the best labels under both stages' scores that keep the rules
        (:func:`~parser.constrained.labels_under_rules`, within ``budget``, by default
        the decoder's time limit), else the first stage's: a tree that breaks no rule
        needs no constrained decoding, and one decoded under the rules keeps them."""
        words = np.arange(1, len(heads))
        first = self.model.label_scores(seen, np.stack([heads[1:], words], axis=1))
        labelled = self._labelled(seen, heads, label_ids)
        combined = self.relabeler.combined_scores(labelled, first)
        relabelled = np.argmax(combined, axis=1)
        if (self.rules_in_force(seen)
                and self._breaks_rules(self._labelled(seen, heads, relabelled))
                and not self._breaks_rules(labelled)):
            kept = labels_under_rules(seen, heads, combined, self.model.labels,
                                      frozenset(self.ud_rules.rules), self.config.single_root,
                                      budget or Budget(self.decoder.time_limit))
            self.constrained["relabelled_under_rules"] += kept is not None
            return label_ids if kept is None else kept
        return relabelled

    def _breaks_rules(self, parsed: Sentence) -> bool:
        """Whether the tree of ``parsed`` breaks one of the model's UD rules."""
        broken = check(parsed)[1]
        return any(broken[rule] for rule in self.ud_rules.rules)

    def fit_confidence(self, sentences: Sequence[Sentence]) -> Temperatures:
        """The temperatures of :func:`learning.confidence.fit_temperatures` on gold
        ``sentences`` (held out from training), as this parser's features see them."""
        return fit_temperatures(self.model, [self.seen(s) for s in sentences],
                                self.config.single_root)

    def relax(self, sentence: Sentence) -> Relaxation:
        """The LP relaxation of ``sentence`` (its tags as given) under the model's
        scores: its arc values and the tree they round to (:class:`Relaxation`).

        It is solved by the decoder's relaxation (:meth:`~decoders.base.Decoder.
        relaxation`): the parser's decoder when it is one (``lp``, ``ad3``), else
        HiGHS's LP with its default options (the multi-commodity-flow formulation of
        :mod:`decoders.formulation`, which is tight for a first-order model: its arc
        values are then integral, up to ties). Not counted in :attr:`decodings`.
        """
        decoder = self.decoder.relaxation()
        if len(sentence) == 0:
            return Relaxation(Analysis(sentence, Certificate("lp-integral", 0.0)),
                              np.zeros((1, 1)), decoder.name)
        result, label_ids, example = self._decode_parts(self.seen(sentence), decoder)
        parsed = self._labelled(sentence, result.heads, label_ids)
        return Relaxation(Analysis(parsed, decoder.certificate(result)),
                          example.parts.arc_matrix(result.output, fill=0.0), decoder.name)

    def _decode_parts(self, seen: Sentence, decoder: Decoder, budget: Budget | None = None
                      ) -> tuple[DecodeResult, np.ndarray, Example]:
        """Decode ``seen`` over the model's parts with ``decoder`` (within what is left of
        ``budget`` once the parts are scored): the result, the label id of each word's
        arc in its tree, and the example decoded."""
        example = self.model.example(seen)
        result, labels = predict(self.model, example, decoder.within(budget))
        return result, labels[self.model.arc_rows(result.heads, example)], example

    def _labelled(self, sentence: Sentence, heads: np.ndarray,
                  label_ids: np.ndarray) -> Sentence:
        """``sentence`` with the tree ``heads`` and the labels ``label_ids`` (one per
        word)."""
        return sentence.with_tree(heads, [ROOT] + [self.model.labels[i] for i in label_ids])

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
