"""A trainable sentence splitter and tokenizer for raw text.

The design follows the UDPipe tokenizer (Straka, Hajič and Straková, 2016, *UDPipe:
Trainable Pipeline for Processing CoNLL-U Files*, LREC; Straka and Straková, 2017,
*Tokenizing, POS Tagging, Lemmatizing and Parsing UD 2.0 with UDPipe*, CoNLL): the
training treebank's ``# text`` comments, aligned with its tokens, say after which
characters a token and a sentence end, and a classifier learns to say the same on new
text; multiword tokens are then expanded into syntactic words from a lexicon learned from
the treebank's range lines. Here the classifiers are two averaged perceptrons (Collins,
2002) over hashed features instead of UDPipe's bidirectional GRU:

1. *Token boundaries.* Whitespace always separates tokens. Inside a whitespace-delimited
   chunk, every gap between two characters is a candidate, except inside a URL or an
   e-mail address, which stays whole; its features are character n-grams around it, the
   chunk's left and right parts (so "do|n't", "Dr.", "U.S.", "3.5" and "end|." are
   learned as the treebank writes them). A symbol between two letters or digits
   ("Israeli-Palestinian", "and/or") is split off on both sides or on neither, by the
   sum of the two gaps' scores. A symbol that starts a chunk and that the treebank
   writes as a token of its own but never first in a longer token
   (:attr:`Tokenizer.leading_`) is split off, whatever the scores, and so is one that
   ends a chunk and is never last in a longer token (:attr:`Tokenizer.trailing_`): a
   context the treebank never shows, as the dash of a line of dialogue in "-Nereden"
   (Turkish IMST) or a bracket after a period, is no reason to glue them.
2. *Sentence boundaries.* After every token, from the two tokens before and the two after:
   their forms, shapes, a learned list of abbreviations (tokens ending in a period that
   the treebank keeps whole, as in Punkt: Kiss and Strunk, 2006, *Unsupervised
   Multilingual Sentence Boundary Detection*, Computational Linguistics 32(4)), the
   capitalization of the next token and the whitespace in between. A paragraph break (a
   blank line) and the end of the text always end a sentence; the ends of training
   paragraphs are still learned from, as if followed by a space, so that text that
   comes without blank lines is split too.
3. *Multiword tokens* (:class:`~parser.text.multiword.MultiwordLexicon`): a surface form seen in training gets
   its most frequent analysis, or, if it was seen with two ("its" the possessive and
   "it" + "s" for "it's"), the one a third perceptron prefers given the neighbouring
   tokens; an unseen one ending in a suffix that reliably marks a multiword token ("'s",
   "n't") is split as that suffix was in training.

Every non-space character of the input ends up in exactly one token, in order; a token
never contains whitespace. Training text is built as the UD tool ``conllu_to_text.pl``
builds it (:func:`corpora.plain_text.raw_text`): sentences joined by a space, a blank line before each new
paragraph or document.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from polyparse.parser.text import _tokenizer_kernels as kernels
from polyparse.corpora.alignment import SurfaceToken, sentence_tokens
from polyparse.corpora.plain_text import sentence_text, starts_paragraph
from polyparse.parser.text.characters import (MIN_SCRIPT_SHARE, MIN_UNSEEN_SHARE, char_class,
                                          first_place, script_counts, stable_hash,
                                          word_shape)
from polyparse.parser.text.multiword import MultiwordLexicon, word_classes
from polyparse.corpora.sentence import MAX_SENTENCE_WORDS, Sentence

logger = logging.getLogger(__name__)

FORMAT = "polyparse-tokenizer"
VERSION = 1

# Whitespace between two tokens: none, spaces or single line breaks, a paragraph break.
NO_SPACE, SPACE, PARAGRAPH = 0, 1, 2
PARAGRAPH_BREAK = "\n\n"
"""What separates two paragraphs of the training text (a blank line)."""
MIN_ALONE = 20
"""Tokens of a symbol alone that it takes to be one of :attr:`Tokenizer.leading_` or
:attr:`Tokenizer.trailing_`."""

_WEIGHTS = ("char_weights", "token_weights")     # fitted arrays, without their "_"
@dataclass(frozen=True)
class Token:
    """A token of the input text.

    Attributes
    ----------
    form:
        ``text[start:end]``; it contains no whitespace.
    start, end:
        Character offsets into the text given to :meth:`Tokenizer.tokenize`.
    space_after:
        False when the next character of the text is not whitespace (UD's
        ``SpaceAfter=No``); True at the end of the text.
    words:
        The syntactic words; one (the form itself) unless it is a multiword token.
    """

    form: str
    start: int
    end: int
    space_after: bool
    words: tuple[str, ...]


def _token_offsets(text: str, tokens: Sequence[SurfaceToken]) -> list[tuple[int, int]] | None:
    """``[start, end)`` of each token in ``text``, or None if the tokens' forms do not
    spell exactly the non-space characters of ``text``."""
    spans = []
    pos = 0
    for token in tokens:
        start = None
        for c in token.form:
            if c.isspace():
                continue
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text) or text[pos] != c:
                return None
            start = pos if start is None else start
            pos += 1
        if start is None:
            return None
        spans.append((start, pos))
    return spans if text[pos:].isspace() or pos == len(text) else None


@dataclass(frozen=True)
class TokenizerOptions:
    """The settings of a :class:`Tokenizer` (stored with it in a model file).

    Attributes
    ----------
    epochs:
        Perceptron passes over the training examples.
    char_bits, token_bits:
        The token-boundary and sentence-boundary models have ``2**bits`` weights each.
    min_rule_count, min_rule_precision:
        When a multiword suffix rule is kept (see :class:`MultiwordLexicon`).
    min_context_count, context_bits:
        A form seen in training as a multiword token and as a single word is decided in
        context when its less frequent analysis was seen ``min_context_count`` times; that
        model has ``2**context_bits`` weights (see :class:`MultiwordLexicon`).
    """

    epochs: int = 5
    char_bits: int = 22
    token_bits: int = 20
    min_rule_count: int = 2
    min_rule_precision: float = 0.7
    min_context_count: int = 5
    context_bits: int = 18

    def __post_init__(self) -> None:
        for name, low, high in (("epochs", 1, None), ("char_bits", 8, 30),
                                ("token_bits", 8, 30), ("min_rule_count", 1, None),
                                ("min_rule_precision", 0, 1), ("min_context_count", 1, None),
                                ("context_bits", 8, 30)):
            value = getattr(self, name)
            if value < low or (high is not None and value > high):
                raise ValueError(f"{name}={value} is outside [{low}, {high or 'inf'}]")


class Tokenizer:
    """Sentence splitter, tokenizer and multiword-token expander for raw text.

    Parameters
    ----------
    options:
        Its :class:`TokenizerOptions`.
    seed:
        Seed of the order in which the perceptrons visit examples.

    Attributes
    ----------
    char_weights_, token_weights_:
        ``float32`` weights of the token-boundary and sentence-boundary perceptrons.
    leading_, trailing_:
        Characters other than letters and digits that the training data writes as
        tokens of their own (or runs of themselves: "...") at least :data:`MIN_ALONE`
        times and never as the first (``leading_``) or last (``trailing_``) character of
        a longer token (:func:`_edge_symbols`).
    abbreviations_:
        Lowercased training tokens that end in a period and contain a letter, e.g.
        "dr.", "e.g.", "u.s.".
    multiword_:
        The :class:`MultiwordLexicon`.
    scripts_:
        Characters of each script (:func:`script_counts`) in the training text; None for
        a tokenizer saved before they were counted.

    Examples
    --------
    >>> tokenizer = Tokenizer().fit(train_sentences)                    # doctest: +SKIP
    >>> [[t.words for t in s] for s in tokenizer.tokenize("I can't. Go!")]  # doctest: +SKIP
    [[('I',), ('ca', "n't"), ('.',)], [('Go',), ('!',)]]
    """

    def __init__(self, options: TokenizerOptions = TokenizerOptions(), *, seed: int = 0):
        self.options = options
        self.seed = seed

    def _params(self) -> dict:
        return {**asdict(self.options), "seed": self.seed}

    # ------------------------------------------------------------------ training

    def fit(self, sentences: Iterable[Sentence]) -> "Tokenizer":
        """Learn from a treebank: its ``# text``, tokens, multiword tokens, paragraphs.

        Sentences whose token forms do not spell their ``# text`` are skipped with a
        warning.
        """
        sentences = list(sentences)
        text, tokens, spans, ends = _training_document(sentences)
        if not tokens:
            raise ValueError("no training sentence with tokens")
        options = self.options
        self.multiword_ = MultiwordLexicon.fit(tokens, min_count=options.min_rule_count,
                                               min_precision=options.min_rule_precision,
                                               ends=ends,
                                               min_context_count=options.min_context_count,
                                               context_bits=options.context_bits,
                                               epochs=options.epochs, seed=self.seed,
                                               word_classes=word_classes(sentences))
        self.leading_, self.trailing_ = _edge_symbols(tokens)
        self.abbreviations_ = frozenset(
            t.form.lower() for t in tokens
            if len(t.form) > 1 and t.form.endswith(".") and any(c.isalpha() for c in t.form))

        self.scripts_ = dict(script_counts(text))

        chars, classes = _encode(text)
        gaps = _gaps(chars, classes)
        boundaries = np.zeros(len(text) + 1, dtype=bool)
        for start, end in spans:
            boundaries[start] = boundaries[end] = True
        features = kernels.char_features(chars, classes, gaps, options.char_bits)
        logger.info("token boundaries: %d gaps, %d boundaries", len(gaps),
                    int(boundaries[gaps].sum()))
        self.char_weights_ = kernels.perceptron_fit(features, boundaries[gaps],
                                                    self._orders(len(gaps)), options.char_bits)

        attrs = self._token_attributes(text, [s for s, _ in spans], [e for _, e in spans])
        # Learn also from the ends of paragraphs, as if the blank line were a space.
        attrs[:-1, kernels.ATTR_SPACE_AFTER] = np.minimum(attrs[:-1, kernels.ATTR_SPACE_AFTER],
                                                          SPACE)
        candidates = _sentence_candidates(attrs)
        features = kernels.token_features(attrs, candidates, options.token_bits)
        logger.info("sentence boundaries: %d candidates, %d boundaries", len(candidates),
                    int(ends[candidates].sum()))
        self.token_weights_ = kernels.perceptron_fit(features, ends[candidates],
                                                     self._orders(len(candidates)),
                                                     options.token_bits)
        return self

    def _orders(self, n: int) -> np.ndarray:
        """``(epochs, n)``: a fresh random order of the ``n`` examples for each pass."""
        rng = np.random.default_rng(self.seed)
        return np.stack([rng.permutation(n) for _ in range(self.options.epochs)])

    # ------------------------------------------------------------------ prediction

    def tokenize(self, text: str, *, max_words: int | None = MAX_SENTENCE_WORDS
                 ) -> list[list[Token]]:
        """Cut ``text`` into sentences of tokens, with their syntactic words.

        Every non-space character of ``text`` belongs to exactly one token, in order; a
        sentence ends at each paragraph break (a line holding only whitespace) and at the
        end of the text, and wherever the sentence model says so. A sentence of more than
        ``max_words`` words (None: no cap) is then cut, again and again, after the token
        whose sentence-end score is highest among those that leave the first piece
        between ``max_words // 2`` and ``max_words`` words (:func:`_pieces`); only a
        single token of more than ``max_words`` words makes a longer sentence.
        """
        return list(self.iter_tokenized(text, max_words=max_words))

    def iter_tokenized(self, text: str, *, max_words: int | None = MAX_SENTENCE_WORDS
                       ) -> Iterator[list[Token]]:
        """:meth:`tokenize`, one sentence at a time: the boundaries of the whole text are
        found at the first ``next()``, each sentence's tokens and words when it is asked
        for (so that a consumer can start on the first sentences early)."""
        # The text ends as the paragraphs of the training text end, before a blank line
        # (_training_document): an end of the text right after its last character is a
        # context the boundary model saw once, and it glued "men." together where
        # "men ." follows in a paragraph (56 of en_ewt's 2,001 dev sentences given alone).
        chars, classes = _encode(text + PARAGRAPH_BREAK)
        gaps = _gaps(chars, classes)
        split = np.zeros(len(text) + 1, dtype=bool)
        if len(gaps):
            scores = kernels.perceptron_scores(
                kernels.char_features(chars, classes, gaps, self.options.char_bits),
                self.char_weights_)
            split[gaps[_tie_symbols(classes, gaps, scores) > 0]] = True
            split[gaps[self._edge_gaps(chars, classes, gaps)]] = True
        chars, classes = chars[:len(text)], classes[:len(text)]
        solid = classes != kernels.WHITESPACE
        before = np.concatenate(([False], solid[:-1]))
        after = np.concatenate((solid[1:], [False]))
        starts = np.flatnonzero(solid & (~before | split[:-1]))
        ends = np.flatnonzero(solid & (~after | split[1:])) + 1
        if not len(starts):
            return

        attrs = self._token_attributes(text, starts, ends)
        sentence_end = attrs[:, kernels.ATTR_SPACE_AFTER] == PARAGRAPH
        sentence_end[-1] = True
        candidates = _sentence_candidates(attrs)
        end_score = np.full(len(starts), -np.inf)
        if len(candidates):
            end_score[candidates] = kernels.perceptron_scores(
                kernels.token_features(attrs, candidates, self.options.token_bits),
                self.token_weights_)
            sentence_end[candidates[end_score[candidates] > 0]] = True

        first = 0
        for k in np.flatnonzero(sentence_end).tolist():
            spans = list(zip(starts[first:k + 1].tolist(), ends[first:k + 1].tolist()))
            forms = [text[start:end] for start, end in spans]
            words = self.multiword_.expand_sentence(forms)
            tokens = [Token(form, start, end, end == len(text) or text[end].isspace(), w)
                      for form, (start, end), w in zip(forms, spans, words)]
            for lo, hi in _pieces(np.array([len(w) for w in words]), end_score[first:k + 1],
                                  max_words):
                yield tokens[lo:hi]
            first = k + 1

    def _edge_gaps(self, chars: np.ndarray, classes: np.ndarray, gaps: np.ndarray
                   ) -> np.ndarray:
        """Which ``gaps`` come right after a symbol of :attr:`leading_` that starts a
        chunk, or right before one of :attr:`trailing_` that ends a chunk, with another
        character on their other side."""
        solid = classes != kernels.WHITESPACE
        lead = np.isin(chars[gaps - 1], [ord(c) for c in self.leading_])
        trail = np.isin(chars[gaps], [ord(c) for c in self.trailing_])
        chunk_start = (gaps == 1) | ~solid[np.maximum(gaps - 2, 0)]
        chunk_end = (gaps + 1 == len(chars)) | ~solid[np.minimum(gaps + 1, len(chars) - 1)]
        return (((lead & chunk_start) | (trail & chunk_end))
                & (chars[gaps - 1] != chars[gaps]))

    def to_sentences(self, text: str, *, id_prefix: str = "",
                     max_words: int | None = MAX_SENTENCE_WORDS) -> list[Sentence]:
        """:meth:`tokenize` ``text`` into :class:`Sentence` objects ready to be parsed.

        Each has ``# sent_id = {id_prefix}{k}`` (k from 1), ``# text`` (the sentence's
        stretch of ``text`` with every run of whitespace made one space), ``# newpar``
        when it starts a paragraph, a range line for each multiword token and
        ``SpaceAfter=No`` in MISC of a token followed by no whitespace. Sentences have at
        most ``max_words`` words (:meth:`tokenize`).
        """
        return list(self.iter_sentences(text, id_prefix=id_prefix, max_words=max_words))

    def iter_sentences(self, text: str, *, id_prefix: str = "",
                       max_words: int | None = MAX_SENTENCE_WORDS) -> Iterator[Sentence]:
        """:meth:`to_sentences`, one sentence at a time (see :meth:`iter_tokenized`)."""
        previous_end = 0
        for k, tokens in enumerate(self.iter_tokenized(text, max_words=max_words), start=1):
            first, last = tokens[0], tokens[-1]
            comments = []
            if k == 1 or text.count("\n", previous_end, first.start) >= 2:
                comments.append("# newpar")
            comments.append(f"# sent_id = {id_prefix}{k}")
            comments.append(f"# text = {' '.join(text[first.start:last.end].split())}")
            yield _sentence_of(tokens, comments)
            previous_end = last.end

    # ------------------------------------------------------------------ features

    def _token_attributes(self, text: str, starts: Sequence[int], ends: Sequence[int]
                          ) -> np.ndarray:
        """``int64 (n_tokens, N_TOKEN_ATTRIBUTES)`` for :func:`kernels.token_features`."""
        cache: dict[str, tuple[int, ...]] = {}
        attrs = np.zeros((len(starts), kernels.N_TOKEN_ATTRIBUTES), dtype=np.int64)
        for k, (start, end) in enumerate(zip(starts, ends)):
            form = text[start:end]
            row = cache.get(form)
            if row is None:
                lower = form.lower()
                row = cache[form] = (
                    stable_hash(lower), stable_hash(form), stable_hash(word_shape(form)),
                    char_class(form[0]), ord(form[0]), ord(form[-1]),
                    NO_SPACE, int(lower in self.abbreviations_), min(len(form), 10))
            attrs[k] = row
            if k + 1 < len(starts):
                gap = text[end:starts[k + 1]]
                attrs[k, kernels.ATTR_SPACE_AFTER] = (
                    NO_SPACE if not gap else PARAGRAPH if gap.count("\n") >= 2 else SPACE)
            else:
                attrs[k, kernels.ATTR_SPACE_AFTER] = PARAGRAPH
        return attrs

    def unseen_scripts(self, text: str) -> dict[str, int]:
        """The scripts of ``text`` that the training text had too little of (less than
        :data:`MIN_SCRIPT_SHARE` of its script characters), with their numbers of
        characters in ``text``: the tokenizer never learnt where their words and sentences
        end, and typically makes a whole run of them one token and one sentence. Empty
        when the training scripts are unknown (a tokenizer saved before they were counted).
        """
        if self.scripts_ is None:
            return {}
        total = sum(self.scripts_.values())
        return {script: n for script, n in sorted(script_counts(text).items())
                if self.scripts_.get(script, 0) < MIN_SCRIPT_SHARE * total}

    def unseen_scripts_warning(self, text: str) -> str | None:
        """What to tell about the :meth:`unseen_scripts` of ``text`` that are a real
        share of it (at least :data:`MIN_UNSEEN_SHARE` of its script characters), or
        None when there are none: which script, how many characters and where it
        first is, e.g. ``text in a script that the model's tokenizer was not trained on:
        Han, 12 characters (57% of the letters), first at line 1, column 1; the tokenizer
        never learnt where its words and sentences end, so runs of it may come out as
        one token and one sentence``. An emoji or a foreign name in a long text is
        tokenized as the text around it and is not worth a warning."""
        unseen = self.unseen_scripts(text)
        total = sum(script_counts(text).values())
        shown = {script: n for script, n in unseen.items() if n >= MIN_UNSEEN_SHARE * total}
        if not shown:
            return None
        scripts = "; ".join(f"{script}, {n:,} character{'s' * (n > 1)} ({100 * n / total:.0f}% "
                            f"of the letters), first at {first_place(text, script)}"
                            for script, n in shown.items())
        return (f"text in a script that the model's tokenizer was not trained on: {scripts}; "
                "the tokenizer never learnt where its words and sentences end, so runs of it "
                "may come out as one token and one sentence")

    # ------------------------------------------------------------------ serialization

    def to_json(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The fitted tokenizer as JSON-able data plus arrays.

        The weight vectors are mostly zeros (the perceptron touches few of the hashed
        features), so each is stored as ``NAME_index`` (``int32``, the non-zero
        positions) and ``NAME_value`` (``float32``).
        """
        data = {"format": FORMAT, "version": VERSION, "params": self._params(),
                "abbreviations": sorted(self.abbreviations_),
                "leading": sorted(self.leading_), "trailing": sorted(self.trailing_),
                "multiword": self.multiword_.to_json(), "scripts": self.scripts_}
        arrays = {}
        for name in _WEIGHTS:
            weights = getattr(self, name + "_")
            index = np.flatnonzero(weights).astype(np.int32)
            arrays[name + "_index"], arrays[name + "_value"] = index, weights[index]
        return data, arrays

    @classmethod
    def from_json(cls, data: dict, arrays: dict[str, np.ndarray]) -> "Tokenizer":
        """The inverse of :meth:`to_json`."""
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"not a {FORMAT} version {VERSION} model")
        params = dict(data["params"])
        seed = params.pop("seed", 0)
        tokenizer = cls(TokenizerOptions(**params), seed=seed)
        tokenizer.abbreviations_ = frozenset(data["abbreviations"])
        # tokenizers saved before the edge symbols were learned have none
        tokenizer.leading_ = frozenset(data.get("leading", ()))
        tokenizer.trailing_ = frozenset(data.get("trailing", ()))
        tokenizer.multiword_ = MultiwordLexicon.from_json(data["multiword"])
        tokenizer.scripts_ = data.get("scripts")
        bits_of = (tokenizer.options.char_bits, tokenizer.options.token_bits)
        for name, bits in zip(_WEIGHTS, bits_of):
            index = np.asarray(arrays[name + "_index"], dtype=np.int64)
            value = np.asarray(arrays[name + "_value"], dtype=np.float32)
            if index.shape != value.shape or np.any((index < 0) | (index >= 1 << bits)):
                raise ValueError(f"{name}: bad sparse weights for 2**{bits} features")
            weights = np.zeros(1 << bits, dtype=np.float32)
            weights[index] = value
            setattr(tokenizer, name + "_", weights)
        return tokenizer


def _edge_symbols(tokens: Sequence[SurfaceToken]) -> tuple[frozenset[str], frozenset[str]]:
    """``(leading, trailing)``: the characters other than letters and digits that
    ``tokens`` hold at least :data:`MIN_ALONE` times as a token made of nothing else, and
    never first (``leading``) or never last (``trailing``) in a token with other
    characters."""
    alone: Counter[str] = Counter()
    first: set[str] = set()
    last: set[str] = set()
    for token in tokens:
        form = token.form
        if len(set(form)) == 1:
            alone[form[0]] += 1
        else:
            first.add(form[0])
            last.add(form[-1])
    symbols = {c for c, n in alone.items() if n >= MIN_ALONE and not c.isalnum()}
    return frozenset(symbols - first), frozenset(symbols - last)


def _encode(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Lowercased code points (whitespace as :data:`kernels.SPACE`) and classes of ``text``."""
    table = {}
    for c in set(text):
        cls = char_class(c)
        lower = c.lower()
        code = (kernels.SPACE if cls == kernels.WHITESPACE
                else ord(lower) if len(lower) == 1 else ord(c))
        table[c] = (code, cls)
    pairs = np.array([table[c] for c in text], dtype=np.int64).reshape(len(text), 2)
    return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])


def _gaps(chars: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Positions ``i`` with non-space characters at ``i - 1`` and ``i``, except inside a
    URL or e-mail address (:func:`kernels.web_spans`), which is never cut (in English
    EWT's training set no token boundary falls inside one of its 278)."""
    solid = classes != kernels.WHITESPACE
    gaps = np.flatnonzero(solid[1:] & solid[:-1]).astype(np.int64) + 1
    web = kernels.web_spans(chars, classes)
    return gaps[(web[gaps] == 0) | (web[gaps] != web[gaps - 1])]


# Classes of the characters that, between two letters or digits, are split off on both
# sides or on neither ("Israeli - Palestinian", "and/or"): dashes, brackets, quotation
# marks, commas, "!", "?", other punctuation and symbols; not periods ("Co.right") and
# apostrophes ("do|n't").
_TIED_CLASSES = np.array([8, 10, 11, 12, 13, 14, 15, 16])


def _tie_symbols(classes: np.ndarray, gaps: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``scores`` of the gaps with one decision for both sides of a symbol between two
    letters or digits (see :data:`_TIED_CLASSES`): the sum of its two gaps' scores.

    The perceptron decides every gap alone and may split "Israeli|-Palestinian" on one
    side only, which the treebanks never do.
    """
    alnum = (classes >= 2) & (classes <= 6)
    tied = np.flatnonzero(np.isin(classes[1:-1], _TIED_CLASSES) & alnum[:-2] & alnum[2:]) + 1
    if not len(tied):
        return scores
    at = np.full(len(classes) + 1, -1, dtype=np.int64)
    at[gaps] = np.arange(len(gaps))
    left, right = at[tied], at[tied + 1]
    both = (left >= 0) & (right >= 0)  # not inside a URL, whose gaps are no candidates
    left, right = left[both], right[both]
    out = scores.copy()
    out[left] = out[right] = scores[left] + scores[right]
    return out


def _pieces(word_counts: np.ndarray, end_score: np.ndarray, max_words: int | None
            ) -> Iterator[tuple[int, int]]:
    """``(lo, hi)`` token ranges that cut a sentence of tokens with ``word_counts`` words
    into pieces of at most ``max_words`` words (None: one piece). Each cut is made after
    the token with the highest ``end_score`` (the sentence model's score of a sentence
    end after it; the last of equals) among those that leave the piece at least
    ``max_words // 2`` words, so that a long sentence without punctuation is cut where
    the model sees the likeliest end, in pieces of reasonable length."""
    total = len(word_counts)
    if max_words is None or int(word_counts.sum()) <= max_words:
        yield 0, total
        return
    cumulative = np.cumsum(word_counts)
    lo, before = 0, 0
    while lo < total:
        if cumulative[-1] - before <= max_words:
            yield lo, total
            return
        # a piece ends after token k: lo <= k < hi_k, its words cumulative[k] - before
        fits = int(np.searchsorted(cumulative, before + max_words, side="right"))
        least = int(np.searchsorted(cumulative, before + max(1, max_words // 2), side="left"))
        if fits <= lo:                       # one token longer than max_words
            k = lo
        else:
            least = min(max(least, lo), fits - 1)
            window = end_score[least:fits]
            k = least + len(window) - 1 - int(np.argmax(window[::-1]))
        yield lo, k + 1
        lo, before = k + 1, int(cumulative[k])


def _sentence_candidates(attrs: np.ndarray) -> np.ndarray:
    """Tokens after which the sentence classifier decides (not before a paragraph break)."""
    return np.flatnonzero(attrs[:, kernels.ATTR_SPACE_AFTER] != PARAGRAPH).astype(np.int64)


def _training_document(sentences: Iterable[Sentence]
                       ) -> tuple[str, list[SurfaceToken], list[tuple[int, int]], np.ndarray]:
    """The treebank as one text (:func:`raw_text` without wrapping), its tokens, their
    offsets, and for each token whether a sentence ends after it."""
    pieces: list[str] = []
    tokens: list[SurfaceToken] = []
    spans: list[tuple[int, int]] = []
    ends: list[bool] = []
    length = 0
    for sentence in sentences:
        surface = sentence_tokens(sentence)
        if not surface:
            continue
        separator = ("" if not pieces else PARAGRAPH_BREAK if starts_paragraph(sentence)
                     else " ")
        text = sentence_text(sentence)
        offsets = _token_offsets(text, surface)
        if offsets is None:
            logger.warning("%s:%d: tokens do not spell the sentence's text; skipped",
                           sentence.source, sentence.first_line)
            continue
        length += len(separator)
        pieces.append(separator + text)
        tokens.extend(surface)
        spans.extend((length + s, length + e) for s, e in offsets)
        ends.extend([False] * (len(surface) - 1) + [True])
        length += len(text)
    return "".join(pieces), tokens, spans, np.array(ends, dtype=bool)


def _sentence_of(tokens: Sequence[Token], comments: list[str]) -> Sentence:
    """A :class:`Sentence` of the tokens' words, with comments, range lines and MISC."""
    base = Sentence.from_words([w for t in tokens for w in t.words])
    lines = list(comments)
    word_lines = [-1]
    k = 1
    for token in tokens:
        misc = "_" if token.space_after else "SpaceAfter=No"
        if len(token.words) > 1:
            lines.append(f"{k}-{k + len(token.words) - 1}\t{token.form}" + "\t_" * 7 + f"\t{misc}")
            misc = "_"
        for word in token.words:
            word_lines.append(len(lines))
            lines.append(f"{k}\t{word}" + "\t_" * 7 + f"\t{misc}")
            k += 1
    return replace(base, lines=tuple(lines), word_lines=np.array(word_lines, dtype=np.int64))
