"""Multiword tokens (UD's range lines: "don't" = "do" + "n't", Spanish "del" = "de" +
"el"): a lexicon learned from the training treebank that expands a surface token into
its syntactic words (:class:`MultiwordLexicon`), with an averaged perceptron over the
neighbouring tokens where a form was seen with two analyses, and suffix rules for
unseen forms. Part of the tokenizer (:mod:`parser.text.tokenizer`), after the UDPipe
tokenizer (Straka, Hajič and Straková 2016)."""

from __future__ import annotations

from collections import Counter
import logging
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from polyparse.parser.text import _tokenizer_kernels as kernels
from polyparse.corpora.alignment import SurfaceToken
from polyparse.parser.text.characters import APOSTROPHES, stable_hash, word_shape
from polyparse.corpora.sentence import Sentence

logger = logging.getLogger("polyparse.parser.text.tokenizer")


class MultiwordLexicon:
    """Expansions of surface tokens into syntactic words, learned from range lines.

    Parameters
    ----------
    forms:
        Lowercased surface form -> lowercased words, for every training form whose most
        frequent analysis the rules would get wrong (a one-word tuple keeps it whole).
    rules:
        Lowercased suffix -> ``(rest of the first word, following words...)``: a form
        ending in the suffix becomes its remaining prefix followed by these, as
        "bush's" -> "bush" + "" | "'s" (the full-form and suffix rules of UDPipe's
        ``multiword_splitter``, Straka et al., 2016).
    ambiguous:
        Lowercased surface form -> its two most frequent training analyses, the one with
        fewer words first, for the forms that :meth:`expand_sentence` decides in context
        ("its" -> ``(("its",), ("it", "s"))``).
    weights:
        ``float32 (2**bits,)`` weights of that context model (None without ambiguous
        forms): the second analysis is chosen when its features' weights sum above zero.

    Notes
    -----
    Candidate rules come from the training multiword tokens, with the shortest suffix
    that tells the words apart and up to ``context`` more characters ("'s"; "daki" ->
    "da" | "ki"). A rule is kept when the training tokens ending in its suffix (and longer
    than it) get their analysis right by the rule at least ``min_count`` times and at a
    rate of at least ``min_precision``; the longest matching rule applies. Words take their case
    from the surface form when they spell it; otherwise an all-uppercase form gives
    uppercase words and a capitalized form a capitalized first word.

    A form seen with two analyses, the less frequent at least ``min_context_count``
    times, is decided by an averaged perceptron trained on its training occurrences: the
    features (:func:`_context_features`) are the form, the two tokens before and after
    it, their shapes and its capitalization, all conjoined with the form (without
    apostrophes, so "it's" and "its" share what they learn). In English EWT "its" is
    the possessive 164 times and "it" + "s" (for "it's") 57 times: the possessive in
    "its own", the contraction in "its a", "its not".
    """

    def __init__(self, forms: dict[str, tuple[str, ...]], rules: dict[str, tuple[str, ...]],
                 ambiguous: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] | None = None,
                 weights: np.ndarray | None = None, word_classes: dict[str, str] | None = None):
        self.forms = forms
        self.rules = rules
        self.ambiguous = dict(ambiguous or {})
        self.weights = weights
        self.word_classes = dict(word_classes or {})
        if self.ambiguous and weights is None:
            raise ValueError("ambiguous forms need context weights")
        self._longest = max(map(len, rules), default=0)

    @classmethod
    def fit(cls, tokens: Iterable[SurfaceToken], *, min_count: int = 2,
            min_precision: float = 0.5, context: int = 3, ends: Sequence[bool] | None = None,
            min_context_count: int = 5, context_bits: int = 18, epochs: int = 5,
            seed: int = 0, word_classes: dict[str, str] | None = None) -> "MultiwordLexicon":
        """Learn from the surface tokens of a training treebank, in text order.

        ``ends`` says after which tokens a sentence ends (default: only after the last);
        the context of an ambiguous form does not reach across it. A form is decided in
        context when its second most frequent analysis was seen ``min_context_count``
        times; the perceptron has ``2**context_bits`` weights and makes ``epochs``
        passes in orders drawn from ``seed``. ``word_classes`` (lowercased word -> its
        most frequent UPOS in training, see :func:`word_classes`) gives the context model
        the classes of the neighbouring tokens; it is kept only with ambiguous forms.
        """
        tokens = list(tokens)
        analyses = Counter((t.form.lower(), tuple(w.lower() for w in t.words)) for t in tokens)
        candidates: dict[str, set[tuple[str, ...]]] = {}
        for form, words in analyses:
            for suffix, expansion in _rules_of(form, words, context) if len(words) > 1 else ():
                candidates.setdefault(suffix, set()).add(expansion)
        longest = max(map(len, candidates), default=0)
        totals: Counter[str] = Counter()
        hits: Counter[tuple[str, tuple[str, ...]]] = Counter()
        for (form, words), count in analyses.items():
            for size in range(1, min(len(form) - 1, longest) + 1):
                suffix = form[-size:]
                for expansion in candidates.get(suffix, ()):
                    hits[suffix, expansion] += count * (_apply(form, suffix, expansion) == words)
                totals[suffix] += count * (suffix in candidates)
        rules: dict[str, tuple[str, ...]] = {}
        for (suffix, expansion), hit in sorted(hits.items(), key=lambda kv: -kv[1]):
            if suffix not in rules and hit >= min_count and hit >= min_precision * totals[suffix]:
                rules[suffix] = expansion
        by_rule = cls({}, rules)
        seen: dict[str, list[tuple[tuple[str, ...], int]]] = {}  # analyses, most frequent first
        for (form, words), count in analyses.most_common():
            seen.setdefault(form, []).append((words, count))
        forms = {form: ranked[0][0] for form, ranked in seen.items()
                 if by_rule._analyse(form) != ranked[0][0]}
        ambiguous: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        for form, ranked in seen.items():
            if len(ranked) > 1 and ranked[1][1] >= min_context_count:
                # the analysis with fewer words first ("its" before "it" + "s")
                pair = sorted((ranked[0][0], ranked[1][0]), key=len)
                ambiguous[form] = (pair[0], pair[1])
        weights, classes = None, None
        if ambiguous:
            classes = word_classes or {}
            weights = _fit_context(tokens, ambiguous, ends, context_bits, epochs, seed, classes)
        logger.info("multiword lexicon: %d rules, %d forms, %d decided in context", len(rules),
                    len(forms), len(ambiguous))
        return cls(forms, rules, ambiguous, weights, classes)

    def expand(self, form: str) -> tuple[str, ...]:
        """The syntactic words of the surface token ``form`` (``(form,)`` if not multiword).

        Examples
        --------
        >>> lexicon = MultiwordLexicon({"gonna": ("gon", "na")}, {"n't": ("", "n't")})
        >>> lexicon.expand("Gonna"), lexicon.expand("DON'T"), lexicon.expand("dog")
        (('Gon', 'na'), ('DO', "N'T"), ('dog',))
        """
        return _spelled(form, self._analyse(form.lower()))

    def expand_sentence(self, forms: Sequence[str]) -> list[tuple[str, ...]]:
        """The syntactic words of each surface token of a sentence.

        As :meth:`expand`, except that a form seen in training with two analyses (say
        "its": the possessive, or "it" + "s" for "it's") gets the one the context model
        prefers given its neighbours.

        Examples
        --------
        >>> lexicon = MultiwordLexicon({}, {}, {"its": (("its",), ("it", "s"))},
        ...                            np.zeros(1 << 4, np.float32))
        >>> lexicon.expand_sentence(["Its", "tail"])      # zero weights: the first analysis
        [('Its',), ('tail',)]
        """
        out = [self.expand(form) for form in forms]
        for i, form in enumerate(forms):
            choice = self.ambiguous.get(form.lower())
            if choice is not None:
                score = self.weights[_context_features(forms, i, self.context_bits,
                                                       self.word_classes)].sum()
                out[i] = _spelled(form, choice[1] if score > 0 else choice[0])
        return out

    @property
    def context_bits(self) -> int:
        """``log2`` of the number of context weights (0 without a context model)."""
        return 0 if self.weights is None else int(self.weights.shape[0]).bit_length() - 1

    def _analyse(self, form: str) -> tuple[str, ...]:
        if form in self.forms:
            return self.forms[form]
        for size in range(min(len(form) - 1, self._longest), 0, -1):
            expansion = self.rules.get(form[-size:])
            if expansion is not None:
                return _apply(form, form[-size:], expansion)
        return (form,)

    def to_json(self) -> dict:
        """JSON-able data; the context weights sparse, as their non-zero positions and
        values (a lexicon without ambiguous forms has neither)."""
        data = {"forms": {f: list(w) for f, w in sorted(self.forms.items())},
                "rules": {s: list(e) for s, e in sorted(self.rules.items())}}
        if self.ambiguous:
            index = np.flatnonzero(self.weights)
            data["ambiguous"] = {f: [list(a), list(b)] for f, (a, b) in
                                 sorted(self.ambiguous.items())}
            data["context_bits"] = self.context_bits
            data["context_index"] = index.tolist()
            data["context_value"] = [float(v) for v in self.weights[index]]
            data["word_classes"] = dict(sorted(self.word_classes.items()))
        return data

    @classmethod
    def from_json(cls, data: dict) -> "MultiwordLexicon":
        ambiguous, weights = {}, None
        if data.get("ambiguous"):
            ambiguous = {f: (tuple(a), tuple(b)) for f, (a, b) in data["ambiguous"].items()}
            bits = int(data["context_bits"])
            index = np.asarray(data["context_index"], dtype=np.int64)
            value = np.asarray(data["context_value"], dtype=np.float32)
            if (not 1 <= bits <= 30 or index.shape != value.shape
                    or np.any((index < 0) | (index >= 1 << bits))):
                raise ValueError(f"multiword context: bad sparse weights for 2**{bits} features")
            weights = np.zeros(1 << bits, dtype=np.float32)
            weights[index] = value
        return cls({f: tuple(w) for f, w in data["forms"].items()},
                   {s: tuple(e) for s, e in data["rules"].items()}, ambiguous, weights,
                   data.get("word_classes"))


def word_classes(sentences: Iterable[Sentence], min_count: int = 2) -> dict[str, str]:
    """Lowercased word -> its most frequent UPOS, for the words seen ``min_count`` times
    with a UPOS (the features of the multiword context model: "its" + DET, as in "its
    the best", is "it" + "s")."""
    counts = Counter((form.lower(), upos) for s in sentences
                     for form, upos in zip(s.forms[1:], s.upos[1:]) if upos != "_")
    totals: Counter[str] = Counter()
    best: dict[str, str] = {}
    for (form, upos), count in counts.most_common():
        totals[form] += count
        best.setdefault(form, upos)
    return {form: upos for form, upos in best.items() if totals[form] >= min_count}


def _context_features(forms: Sequence[str], i: int, bits: int,
                      classes: dict[str, str]) -> np.ndarray:
    """``int64`` weight indices of the context of ``forms[i]`` in its sentence ``forms``:
    the lowercased form alone, with each of the two tokens before and after it, with
    pairs of them, with the next token's shape, with the classes (``classes``, else the
    shape) of the tokens around it, and with its own capitalization."""
    def lower(k: int) -> str:
        return forms[k].lower() if 0 <= k < len(forms) else "<s>" if k < 0 else "</s>"

    def shape(k: int) -> str:
        return word_shape(forms[k]) if 0 <= k < len(forms) else "<s>" if k < 0 else "</s>"

    def word_class(k: int) -> str:
        return classes.get(lower(k)) or shape(k)

    form = forms[i].lower()
    f = "".join(c for c in form if c not in APOSTROPHES)
    p2, p1, n1, n2 = lower(i - 2), lower(i - 1), lower(i + 1), lower(i + 2)
    templates = (("b", form), ("b", f), ("p", f, p1), ("n", f, n1), ("pp", f, p2, p1),
                 ("nn", f, n1, n2), ("pn", f, p1, n1), ("ns", f, shape(i + 1)),
                 ("ns2", f, shape(i + 1), shape(i + 2)),
                 ("nc", f, word_class(i + 1)), ("nc2", f, word_class(i + 1), word_class(i + 2)),
                 ("pc", f, word_class(i - 1)),
                 ("c", f, word_shape(forms[i][:1]), str(i == 0)))
    mask = (1 << bits) - 1
    return np.array([stable_hash("\x1f".join(t)) & mask for t in templates], dtype=np.int64)


def _fit_context(tokens: Sequence[SurfaceToken],
                 ambiguous: dict[str, tuple[tuple[str, ...], tuple[str, ...]]],
                 ends: Sequence[bool] | None, bits: int, epochs: int, seed: int,
                 classes: dict[str, str]) -> np.ndarray:
    """The perceptron that picks the second analysis of an ambiguous form (score > 0),
    trained on every training token of such a form that has one of its two analyses."""
    if ends is None:
        ends = [False] * (len(tokens) - 1) + [True]
    rows, labels = [], []
    first = 0
    for k, end in enumerate(ends):
        if not end:
            continue
        sentence = tokens[first:k + 1]
        forms = [t.form for t in sentence]
        for i, t in enumerate(sentence):
            choice = ambiguous.get(forms[i].lower())
            words = tuple(w.lower() for w in t.words)
            if choice is not None and words in choice:
                rows.append(_context_features(forms, i, bits, classes))
                labels.append(words == choice[1])
        first = k + 1
    features = np.array(rows, dtype=np.int32).reshape(len(rows), -1)
    rng = np.random.default_rng(seed)
    orders = np.stack([rng.permutation(len(rows)) for _ in range(epochs)])
    return kernels.perceptron_fit(features, np.array(labels, dtype=bool), orders, bits)


def _rules_of(form: str, words: tuple[str, ...], context: int
              ) -> Iterator[tuple[str, tuple[str, ...]]]:
    """The suffix rules that turn ``form`` into ``words`` when the first word starts like
    the form: the shortest, ("don't", ("do", "n't")) -> ("n't", ("", "n't")), and those
    with up to ``context`` more characters of the first word, ("o", ("o", "n't"))."""
    p = 0
    while p < min(len(form), len(words[0])) and form[p] == words[0][p]:
        p += 1
    if p == len(form):
        return
    for q in range(p, max(p - context, 1) - 1, -1):
        yield form[q:], (words[0][q:],) + words[1:]


def _spelled(form: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The syntactic words ``words`` (lowercased) of the surface token ``form``, in its
    case; ``(form,)`` when it is one word."""
    return (form,) if len(words) == 1 else _restore_case(form, words)


def _apply(form: str, suffix: str, expansion: tuple[str, ...]) -> tuple[str, ...]:
    return (form[:len(form) - len(suffix)] + expansion[0],) + expansion[1:]


def _restore_case(form: str, words: tuple[str, ...]) -> tuple[str, ...]:
    lower = form.lower()
    if len(lower) == len(form) and "".join(words) == lower:
        out, pos = [], 0
        for w in words:
            out.append(form[pos:pos + len(w)])
            pos += len(w)
        return tuple(out)
    if len(form) > 1 and form.isupper():
        return tuple(w.upper() for w in words)
    if form[:1].isupper():
        return (words[0][:1].upper() + words[0][1:],) + words[1:]
    return words
