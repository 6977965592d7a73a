"""A lemmatizer: a (form, UPOS) dictionary backed by a classifier of edit scripts.

Lemmas are predicted as in UDPipe 1 (Straka, Hajic and Strakova 2016) and UDPipe 2
(Straka 2018): a *lemma rule* turns a form into its lemma, and a linear classifier picks
the rule of each word among the rules seen in training. A rule (:class:`LemmaRule`) is

- an *edit* of the lowercased form: remove a prefix and a suffix, then prepend and
  append a string. The part kept is the longest common substring of the lowercased form
  and lemma (Ratcliff and Obershelp's matching, as in UDPipe 2's rules); the removed
  prefix and suffix are stored as strings, as in the suffix rules of MorphoDiTa, UDPipe
  1's tagger (Strakova et al. 2014), so that a rule applies only to the words it can
  edit (``-ies -> -y`` to words ending in ``ies``), which keeps the candidates of a word
  few. A form with nothing in common with its lemma (``went -> go``) gets a *whole* rule
  that writes the lemma; it is a candidate only for the forms it was seen with.
- a *casing script* (UDPipe 2): the runs of upper and lower case of the lemma, each
  starting at an offset counted from the start of the lemma in its first half and from
  its end in the second, so that ``John -> John`` and ``The -> the`` are the same edit
  with two casings, and proper nouns keep their capitals while other words lose them.

Every (form, lemma) of the training data gives a rule that maps the form back to the
lemma (:func:`lemma_rule`, checked on every word of en_ewt by the tests); where Unicode
casing would not give the lemma back (a few letters change length or do not round-trip),
the rule writes the lemma as it is. Rules seen at least ``min_rule_count`` times are the
classes (en_ewt: 352), scored by an averaged perceptron (:mod:`._lemma_kernels`) on the
tagger's features of the word (:meth:`Tagger._encode`: the word, its prefixes, suffixes,
shape and flags, its neighbours, its word cluster if the tagger has clusters) plus
features of its own UPOS, XPOS and FEATS and their conjunctions with suffixes. A
word's candidates are the rules that apply to it, with the casing of the lowercase or of
the form itself (other casings, such as ``PRESIDENT -> President``, are left to the
dictionary), and each candidate also has a lexicon value: whether its edit gives a lemma
that training had with another form, or with this form and another UPOS. On en_ewt dev
(predicted tags; classifier trained on gold tags), the casing restriction and the
lexicon value together take the lemmas of unseen words from 78.8% to 80.2% right.

Most words of running text were seen in training with their tag, and for them the lemma
they had most often with that UPOS is best: that dictionary alone (the form itself for
the other words) gives 95.7% on en_ewt dev with predicted tags. Where a (form, UPOS, FEATS)
triple had most often another lemma than its (form, UPOS) pair, the triple's wins, as in
UDPipe 1, whose dictionary is keyed by the whole tag: en_ewt's possessive ``her``
(``Poss=Yes``) is its own lemma, the object ``her`` is ``she`` (+0.07 lemma accuracy on
en_ewt dev). The classifier decides
only the (form, UPOS) pairs that training did not have, and is trained on the words seen
fewer than ``rare_count`` times, which resemble those (Ratnaparkhi 1996 treats rare
words the same way): with ``rare_count=10`` it fits in a third of the time, as accurate
as on all words. Both are fitted on the tags the pipeline predicts (jackknifed,
:func:`parser.text.jackknife`), so that they see tagging errors of test-time quality,
and lemmatize after the tagger.

References
----------
- M. Straka, J. Hajic, J. Strakova. UDPipe: trainable pipeline for processing CoNLL-U
  files performing tokenization, morphological analysis, POS tagging and parsing.
  LREC 2016.
- M. Straka. UDPipe 2.0 prototype at CoNLL 2018 UD shared task. CoNLL 2018 (lemma rules
  with casing scripts).
- J. Strakova, M. Straka, J. Hajic. Open-source tools for morphology, lemmatization, POS
  tagging and named entity recognition. ACL 2014 (MorphoDiTa).
- J. Ratcliff, D. Metzener. Pattern matching: the Gestalt approach. Dr. Dobb's Journal,
  1988.
- M. Collins. Discriminative training methods for hidden Markov models. EMNLP 2002.
- A. Ratnaparkhi. A maximum entropy model for part-of-speech tagging. EMNLP 1996.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, fields, replace
from typing import Sequence

import numpy as np

from polyparse.corpora._hashing import string_hashes
from polyparse.corpora.sentence import ROOT, Sentence

from . import _tagger_kernels as TK
from . import _lemma_kernels as K
from .tagger import FORMAT_VERSION as TAGGER_FORMAT_VERSION
from .tagger import Tagger

log = logging.getLogger(__name__)

FORMAT = "polyparse-lemmatizer"
FORMAT_VERSION = 1
LEMMA_COLUMN = 2
"""CoNLL-U column (0-based) of the lemma in :attr:`~corpora.sentence.Sentence.lines`."""
TAG_SEEDS = (TK.CLUSTER_SEED + 1, TK.CLUSTER_SEED + 2, TK.CLUSTER_SEED + 3)
"""Template seeds of the UPOS, XPOS and FEATS strings of :func:`_lemma_kernels.tag_features`."""


# ---------------------------------------------------------------------- lemma rules

@dataclass(frozen=True)
class LemmaRule:
    """A casing script plus an edit of the lowercased form (see the module docstring).

    ``casing`` holds ``(offset, upper)`` runs in order (an offset ``< 0`` counts from
    the end); empty: the edit's result is the lemma as it is. A *whole* rule ignores the
    form and its result is ``add_suffix``.
    """

    casing: tuple[tuple[int, int], ...]
    cut_prefix: str = ""
    add_prefix: str = ""
    cut_suffix: str = ""
    add_suffix: str = ""
    whole: bool = False

    def applies(self, lower: str) -> bool:
        """Whether the edit can remove its prefix and suffix from ``lower`` and keep at
        least one character (always for a whole rule)."""
        return self.whole or (len(lower) > len(self.cut_prefix) + len(self.cut_suffix)
                              and lower.startswith(self.cut_prefix)
                              and lower.endswith(self.cut_suffix))

    def apply(self, form: str) -> str | None:
        """The lemma of ``form`` under this rule, or None if it does not apply."""
        lower = _lower(form)
        if not self.applies(lower):
            return None
        if self.whole:
            return _recase(self.add_suffix, self.casing)
        kept = lower[len(self.cut_prefix):len(lower) - len(self.cut_suffix)]
        return _recase(self.add_prefix + kept + self.add_suffix, self.casing)

    def to_json(self) -> list:
        return [[list(run) for run in self.casing], self.cut_prefix, self.add_prefix,
                self.cut_suffix, self.add_suffix, int(self.whole)]

    @classmethod
    def from_json(cls, data: list) -> "LemmaRule":
        casing, cut_prefix, add_prefix, cut_suffix, add_suffix, whole = data
        return cls(tuple((int(p), int(u)) for p, u in casing), str(cut_prefix),
                   str(add_prefix), str(cut_suffix), str(add_suffix), bool(whole))


def lemma_rule(form: str, lemma: str) -> LemmaRule:
    """The rule that takes ``form`` to ``lemma``: ``lemma_rule(f, l).apply(f) == l``."""
    casing = _casing(lemma)
    x, y = _lower(form), _lower(lemma)
    size, i, j = _longest_common_substring(x, y)
    if size == 0:
        rule = LemmaRule(casing, add_suffix=y, whole=True)
    else:
        rule = LemmaRule(casing, x[:i], y[:j], x[i + size:], y[j + size:])
    if rule.apply(form) == lemma:
        return rule
    return LemmaRule((), add_suffix=lemma, whole=True)


def _lower(text: str) -> str:
    """``text`` lowercased character by character (a character whose lowercase has
    another length, like ``İ``, is kept), so that positions do not move."""
    lower = text.lower()
    if len(lower) == len(text):
        return lower
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _casing(lemma: str) -> tuple[tuple[int, int], ...]:
    """The runs of ``lemma``'s case: ``(offset, upper)`` where the case changes (from
    0), the offset counted from the end in the second half of the lemma (UDPipe 2)."""
    flags = [int(c != lower) for c, lower in zip(lemma, _lower(lemma))]
    runs = []
    for k, flag in enumerate(flags):
        if k == 0 or flag != flags[k - 1]:
            runs.append((k if 2 * k < len(lemma) else k - len(lemma), flag))
    return tuple(runs) or ((0, 0),)


def _recase(text: str, casing: tuple[tuple[int, int], ...]) -> str:
    """``text`` with the case runs of ``casing`` (nothing changes if it is empty)."""
    if not casing:
        return text
    n = len(text)
    starts = [min(max(p if p >= 0 else n + p, 0), n) for p, _ in casing] + [n]
    out = []
    for (_, upper), lo, hi in zip(casing, starts, starts[1:]):
        for c in text[max(lo, len(out)):hi]:
            changed = c.upper() if upper else c.lower()
            out.append(changed if len(changed) == 1 else c)
    out.extend(text[len(out):])
    return "".join(out)


def _longest_common_substring(a: str, b: str) -> tuple[int, int, int]:
    """``(size, i, j)`` with ``a[i:i + size] == b[j:j + size]`` longest (the first such
    ``i``, then ``j``), by dynamic programming over the pairs of positions."""
    best = (0, 0, 0)
    previous = [0] * (len(b) + 1)
    for i in range(len(a)):
        current = [0] * (len(b) + 1)
        for j in range(len(b)):
            if a[i] == b[j]:
                current[j + 1] = previous[j] + 1
                if current[j + 1] > best[0]:
                    best = (current[j + 1], i + 1 - current[j + 1], j + 1 - current[j + 1])
        previous = current
    return best


# ---------------------------------------------------------------------- the lemmatizer

@dataclass(frozen=True)
class LemmatizerOptions:
    """The settings of a :class:`Lemmatizer` (stored with it in a model file).

    Attributes
    ----------
    hash_bits:
        The classifier hashes (feature, rule) pairs into ``2**hash_bits`` weights.
    min_rule_count:
        Rules seen at least this often in training are the classifier's classes (a rule
        seen once is mostly one irregular word, which the dictionary knows).
    rare_count:
        The classifier is trained on the words seen fewer times than this in training
        (the others the dictionary knows).
    """

    hash_bits: int = 20
    min_rule_count: int = 2
    rare_count: int = 10

    def __post_init__(self) -> None:
        for f in fields(LemmatizerOptions):
            value = getattr(self, f.name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{f.name} must be a positive integer, not {value!r}")


class Lemmatizer:
    """Predicts the LEMMA of each word of tagged sentences; fit with :meth:`fit`.

    Parameters
    ----------
    options:
        Its :class:`LemmatizerOptions`.

    Attributes
    ----------
    rules_:
        The classes, most frequent first.
    dictionary_:
        ``{(form, UPOS): lemma}``: the lemma each pair had most often in training.
    feats_dictionary_:
        ``{(form, UPOS, FEATS): lemma}``: the lemma each triple had most often in
        training, where it is not its pair's.
    whole_:
        ``{lowercased form: [class ids]}``: the whole rules seen with each form.
    weights_:
        ``float32 (2**hash_bits,)``, the averaged perceptron's weights.
    history_:
        Per epoch, the number of training words the perceptron classified wrongly.
    """

    def __init__(self, options: LemmatizerOptions = LemmatizerOptions()) -> None:
        self.options = options

    def get_params(self) -> dict:
        """Its :class:`LemmatizerOptions` as JSON (those of a subclass, such as a training
        run's :class:`~parser.config.LemmatizerConfig`, left out)."""
        return {f.name: getattr(self.options, f.name) for f in fields(LemmatizerOptions)}

    def fit(self, sentences: Sequence[Sentence], tagger: Tagger, *, epochs: int = 5,
            seed: int = 0) -> "Lemmatizer":
        """Fit on ``sentences`` (their lemmas gold, their tags those the pipeline will
        give: predicted by ``tagger``, or jackknifed) with ``tagger``'s features.

        Words are shuffled before each epoch by a ``numpy`` generator seeded with
        ``seed``: the same data, parameters and seed give the same model.
        """
        if epochs < 1:
            raise ValueError(f"epochs must be >= 1, not {epochs}")
        tagged = [(form, upos, feats, lemma) for s in sentences for form, upos, feats, lemma
                  in zip(s.forms[1:], s.upos[1:], s.feats[1:], s.lemmas[1:])]
        if not tagged:
            raise ValueError("no training words")
        words = [(form, upos, lemma) for form, upos, _, lemma in tagged]
        pairs: dict[tuple[str, str], Counter] = {}
        triples: dict[tuple[str, str, str], Counter] = {}
        for form, upos, feats, lemma in tagged:
            pairs.setdefault((form, upos), Counter())[lemma] += 1
            triples.setdefault((form, upos, feats), Counter())[lemma] += 1
        self.dictionary_ = {key: counts.most_common(1)[0][0] for key, counts in pairs.items()}
        self.feats_dictionary_ = {
            key: lemma for key, counts in triples.items()
            if (lemma := counts.most_common(1)[0][0]) != self.dictionary_[key[:2]]}
        rule_of = {(form, lemma): lemma_rule(form, lemma) for form, _, lemma in words}
        counts = Counter(rule_of[form, lemma] for form, _, lemma in words)
        self.rules_ = sorted((r for r, c in counts.items() if c >= self.options.min_rule_count),
                             key=lambda r: (-counts[r], repr(r.to_json())))
        index = {rule: k for k, rule in enumerate(self.rules_)}
        self.whole_ = {}
        for form, lemma in rule_of:
            k = index.get(rule_of[form, lemma], -1)
            if k >= 0 and self.rules_[k].whole:
                self.whole_.setdefault(_lower(form), set()).add(k)
        self.whole_ = {form: sorted(ids) for form, ids in self.whole_.items()}
        self._index_rules()
        # the class of each word, -1 where its rule is not a candidate of its form: too
        # rare, or of a casing other than lowercase and the form's own
        usable = {(form, lemma): index.get(rule, -1) if rule.whole or rule.casing in (
            ((0, 0),), _casing(form)) else -1 for (form, lemma), rule in rule_of.items()}
        gold = np.array([usable[form, lemma] for form, _, lemma in words], dtype=np.int64)
        form_counts = Counter(form for form, _, _ in words)
        rare = np.fromiter((form_counts[form] < self.options.rare_count for form, _, _ in words),
                           dtype=bool, count=len(words))
        features, word_types, cand_ptr, cand, lexicon = self._encode(sentences, tagger, rare)
        trained = np.flatnonzero((gold >= 0) & rare)
        weights = np.zeros(1 << self.options.hash_bits)
        weights_sum = np.zeros_like(weights)
        rng = np.random.default_rng(seed)
        step, self.history_ = 1, []
        for _ in range(epochs):
            with np.errstate(over="ignore"):
                step, wrong = K.train_epoch(features, word_types, cand_ptr, cand, lexicon,
                                            gold, rng.permutation(trained), weights,
                                            weights_sum, step)
            self.history_.append(int(wrong))
        self.weights_ = (weights - weights_sum / step).astype(np.float32)
        log.info("lemmatizer: %d rules, %d (form, UPOS) pairs; training errors per epoch %s "
                 "of %d words", len(self.rules_), len(self.dictionary_), self.history_,
                 trained.shape[0])
        return self

    def _index_rules(self) -> None:
        """Index the edit rules by the prefix and suffix they remove, and the lemmas of
        the dictionary (lowercased), for :meth:`_candidates`."""
        self._by_cut: dict[tuple[str, str], list[int]] = {}
        for k, rule in enumerate(self.rules_):
            if not rule.whole:
                self._by_cut.setdefault((rule.cut_prefix, rule.cut_suffix), []).append(k)
        self._cut_prefixes = {p for p, _ in self._by_cut}
        self._cut_suffixes = {s for _, s in self._by_cut}
        self._longest_cut = (max(map(len, self._cut_prefixes), default=0),
                             max(map(len, self._cut_suffixes), default=0))
        self._lexicon: dict[str, set[str]] = {}
        self._form_tags: dict[str, list[str]] = {}
        for (form, upos), lemma in self.dictionary_.items():
            self._lexicon.setdefault(_lower(lemma), set()).add(_lower(form))
            self._form_tags.setdefault(form, []).append(upos)

    def _candidates(self, pairs: Sequence[tuple[str, str] | None]) -> tuple[np.ndarray, ...]:
        """CSR ``(ptr, cand, lexicon)``: the classes that apply to each of ``forms`` (None:
        none), sorted, and whether each one's edit gives a lemma that the dictionary has
        with another form than this one (so that a training word does not find its own
        lemma there, which an unseen word would not).

        An edit rule applies when the lowercased form has its prefix and suffix, and its
        casing script is all lowercase or the form's own (``Israelians -> Israelian``); a
        whole rule applies to the forms it was seen with. The lexicon value lets the
        classifier prefer edits that give a known lemma (``bombed -> bomb``, not ``bom``).
        """
        ptr = np.zeros(len(pairs) + 1, dtype=np.int64)
        cand: list[int] = []
        lexicon: list[int] = []
        lower_case = ((0, 0),)
        for t, pair in enumerate(pairs):
            if pair is not None:
                form, upos = pair
                x = _lower(form)
                other_tags = {_lower(self.dictionary_[form, u])
                              for u in self._form_tags.get(form, ()) if u != upos}
                n = len(x)
                casings = (lower_case, _casing(form))
                prefixes = [x[:k] for k in range(min(n, self._longest_cut[0]) + 1)
                            if x[:k] in self._cut_prefixes]
                suffixes = [x[n - k:] for k in range(min(n, self._longest_cut[1]) + 1)
                            if x[n - k:] in self._cut_suffixes]
                found = sorted([k for p in prefixes for s in suffixes if len(p) + len(s) < n
                                for k in self._by_cut.get((p, s), ())
                                if self.rules_[k].casing in casings]
                               + self.whole_.get(x, []))
                for k in found:
                    rule = self.rules_[k]
                    edited = rule.add_suffix if rule.whole else (
                        rule.add_prefix + x[len(rule.cut_prefix):n - len(rule.cut_suffix)]
                        + rule.add_suffix)
                    edited = _lower(edited)
                    seen = self._lexicon.get(edited, ())
                    lexicon.append(2 if edited in other_tags else
                                   int(len(seen) > 1 or (len(seen) == 1 and x not in seen)))
                cand.extend(found)
            ptr[t + 1] = len(cand)
        return ptr, np.array(cand, dtype=np.int64), np.array(lexicon, dtype=np.int64)

    def _encode(self, sentences: Sequence[Sentence], tagger: Tagger, needed: np.ndarray
                ) -> tuple[np.ndarray, ...]:
        """``(features uint64 (N, F), word_types int64 (N,), cand_ptr, cand, lexicon)``:
        the tagger's features plus the tag features of each word, and the candidate rules
        of each word type (form) of a word where ``needed`` (``bool (N,)``)."""
        features = tagger._encode(sentences)[0]
        tags: dict[tuple[str, str, str], int] = {}
        tag_ids = np.fromiter((tags.setdefault(t, len(tags)) for s in sentences
                               for t in zip(s.upos[1:], s.xpos[1:], s.feats[1:])),
                              dtype=np.int64, count=features.shape[0])
        strings = [x for t in tags for x in t]
        seeds = np.tile(np.array(TAG_SEEDS, dtype=np.uint64), len(tags))
        tag_hashes = string_hashes(strings, seeds).reshape(len(tags), K.N_TAG_HASHES)
        types: dict[str, int] = {}
        word_types = np.fromiter((types.setdefault(pair, len(types)) for s in sentences
                                  for pair in zip(s.forms[1:], s.upos[1:])),
                                 dtype=np.int64, count=features.shape[0])
        wanted = np.zeros(len(types), dtype=bool)
        wanted[word_types[needed]] = True
        candidates = self._candidates([pair if w else None for pair, w in zip(types, wanted)])
        with np.errstate(over="ignore"):
            features = K.tag_features(features, tag_ids, tag_hashes)
        return (features, word_types, *candidates)

    # ------------------------------------------------------------------ lemmatizing

    def predict(self, sentences: Sequence[Sentence], tagger: Tagger
                ) -> list[tuple[str, ...]]:
        """The lemmas of each of ``sentences`` (tagged as ``tagger`` tags), a tuple of
        length ``n + 1`` whose entry 0 is :data:`~corpora.sentence.ROOT`: the dictionary's
        lemma of the (form, UPOS, FEATS) triple or else of the (form, UPOS) pair, else the
        classifier's rule applied to the form (the form itself for a word no rule applies
        to)."""
        if not sentences:
            return []
        lemmas = [self.feats_dictionary_.get((form, upos, feats))
                  or self.dictionary_.get((form, upos)) for s in sentences
                  for form, upos, feats in zip(s.forms[1:], s.upos[1:], s.feats[1:])]
        unknown = np.array([i for i, lemma in enumerate(lemmas) if lemma is None],
                           dtype=np.int64)
        if unknown.shape[0]:
            needed = np.zeros(len(lemmas), dtype=bool)
            needed[unknown] = True
            features, word_types, *candidates = self._encode(sentences, tagger, needed)
            with np.errstate(over="ignore"):
                best = K.classify(features, unknown, word_types, *candidates, self.weights_)
            forms = [form for s in sentences for form in s.forms[1:]]
            for i, k in zip(unknown.tolist(), best.tolist()):
                lemma = self.rules_[k].apply(forms[i]) if k >= 0 else None
                lemmas[i] = forms[i] if lemma is None else lemma
        out, lo = [], 0
        for s in sentences:
            out.append((ROOT, *lemmas[lo:lo + len(s)]))
            lo += len(s)
        return out

    def lemmatize(self, sentences: Sequence[Sentence], tagger: Tagger) -> list[Sentence]:
        """Copies of ``sentences`` whose LEMMA (field and column) is the predicted one."""
        return [with_lemmas(s, lemmas)
                for s, lemmas in zip(sentences, self.predict(sentences, tagger))]

    # ------------------------------------------------------------------ storage

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The fitted model as JSON-able metadata (rules, dictionaries, whole rules) plus
        the arrays ``rows`` and ``weights`` (the non-zero weights); no pickle."""
        meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "tagger_format_version": TAGGER_FORMAT_VERSION,
                "n_features": TK.N_FEATURES + K.N_TAG_FEATURES, "params": self.get_params(),
                "history": self.history_, "rules": [r.to_json() for r in self.rules_],
                "dictionary": [[form, upos, lemma]
                               for (form, upos), lemma in self.dictionary_.items()],
                "feats_dictionary": [[*key, lemma]
                                     for key, lemma in self.feats_dictionary_.items()],
                "whole": self.whole_}
        rows = np.flatnonzero(self.weights_)
        return meta, {"rows": rows, "weights": self.weights_[rows]}

    @classmethod
    def from_arrays(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "Lemmatizer":
        """The lemmatizer saved by :meth:`to_arrays`."""
        found = (meta.get("format"), meta.get("format_version"),
                 meta.get("tagger_format_version"), meta.get("n_features"))
        expected = (FORMAT, FORMAT_VERSION, TAGGER_FORMAT_VERSION,
                    TK.N_FEATURES + K.N_TAG_FEATURES)
        if found != expected:
            raise ValueError(f"not a {FORMAT} model of version {FORMAT_VERSION} for the "
                             f"tagger's features of version {TAGGER_FORMAT_VERSION}: {found}")
        lemmatizer = cls(LemmatizerOptions(**meta["params"]))
        lemmatizer.history_ = list(meta["history"])
        lemmatizer.rules_ = [LemmaRule.from_json(r) for r in meta["rules"]]
        lemmatizer.dictionary_ = {(form, upos): lemma for form, upos, lemma in meta["dictionary"]}
        lemmatizer.feats_dictionary_ = {  # absent from models saved before it existed
            (form, upos, feats): lemma
            for form, upos, feats, lemma in meta.get("feats_dictionary", [])}
        lemmatizer.whole_ = {form: [int(k) for k in ids] for form, ids in meta["whole"].items()}
        lemmatizer.weights_ = np.zeros(1 << lemmatizer.options.hash_bits, dtype=np.float32)
        lemmatizer.weights_[np.asarray(arrays["rows"], dtype=np.int64)] = arrays["weights"]
        lemmatizer._index_rules()
        return lemmatizer


def with_lemmas(sentence: Sentence, lemmas: Sequence[str]) -> Sentence:
    """A copy of ``sentence`` with new lemmas (length ``n + 1``, entry 0 ignored): the
    LEMMA field and column of the word lines change, and nothing else."""
    lemmas = (ROOT,) + tuple(lemmas[1:])
    if len(lemmas) != len(sentence.forms):
        raise ValueError("lemmas must have length n + 1")
    lines = list(sentence.lines)
    for i, j in enumerate(sentence.word_lines[1:].tolist() if lines else [], start=1):
        cols = lines[j].split("\t")
        cols[LEMMA_COLUMN] = lemmas[i]
        lines[j] = "\t".join(cols)
    return replace(sentence, lemmas=lemmas, lines=tuple(lines))
