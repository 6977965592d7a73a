"""polyparse as a spaCy pipeline component, and polyparse's tokenizer as a spaCy tokenizer
(``pip install polyparse[spacy]``; docs/spacy.md). Only this module and
:mod:`parser.spacy_docs` import spaCy.

Both are registered through spaCy's entry points, so that neither needs polyparse to be
imported first::

    nlp = spacy.blank("en")
    nlp.add_pipe("polyparse", config={"model": "en.npz"})    # factory "polyparse"
    nlp = blank("en.npz")      # tokenizer "polyparse.Tokenizer.v1", then the component

The component parses each sentence of a ``Doc`` with the Doc's own tokens
(:meth:`PolyparseComponent.sentences` says which sentences), as ``polyparse parse``
parses tokenized CoNLL-U (with ``--retag`` when the model has a tagger), and writes the
trees, the tags, the certificates, the confidences and the k best trees into the Doc.
Its configuration, the model file included, survives ``nlp.to_disk`` / ``spacy.load``:
:meth:`PolyparseComponent.to_disk` copies the model file into the pipeline's folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional

from spacy.language import Language
from spacy.tokens import Doc, Span, Token
from spacy.util import minibatch, registry
from spacy.vocab import Vocab

from polyparse.corpora.sentence import MAX_SENTENCE_WORDS, Sentence
from polyparse.decoders import Certificate
from polyparse.learning.confidence import Temperatures, head_model

from . import parser_file
from .analysis import Analysis
from .constraints import Constraints
from .pipeline import Parser
from .spacy_docs import SentenceWords, write_tags, write_trees
from .text import Tokenizer

MODEL_FILE = "model.npz"
"""The model file's name in the component's (and the tokenizer's) folder of a saved
pipeline."""


CONSTRAINT_ATTRIBUTES = frozenset({"polyparse_head", "polyparse_deprel",
                                   "polyparse_forbidden_heads"})
"""The token attributes that constrain the parse (:func:`register_extensions`)."""


def register_extensions() -> None:
    """The extension attributes the component reads and writes (docs/spacy.md):

    * ``doc._.polyparse_sentences``: one record per parsed sentence, in order:
      ``start``, ``end`` (its tokens), ``certificate`` (dict or None) and ``kbest``
      (list or None); ``span._.polyparse_certificate`` and ``span._.polyparse_kbest``
      read a sentence span's record;
    * ``token._.polyparse_head_prob``, ``token._.polyparse_deprel_prob``: the confidences;
    * the user's constraints on a word: ``token._.polyparse_head`` (the Doc index of its
      head; its own index: the root), ``token._.polyparse_deprel`` (its relation) and
      ``token._.polyparse_forbidden_heads`` (Doc indices it must not depend on).
    """
    Doc.set_extension("polyparse_sentences", default=None, force=True)
    Span.set_extension("polyparse_certificate", force=True,
                       getter=lambda span: _record(span).get("certificate"))
    Span.set_extension("polyparse_kbest", force=True,
                       getter=lambda span: _record(span).get("kbest"))
    for name in ("polyparse_head_prob", "polyparse_deprel_prob", *CONSTRAINT_ATTRIBUTES):
        Token.set_extension(name, default=None, force=True)


def _has_constraints(doc: Doc) -> bool:
    """Whether a token of ``doc`` has a constraint attribute set: spaCy keeps the values
    of ``token._`` attributes in ``doc.user_data`` under ``("._.", name, token.idx,
    None)``, so that a Doc without any is known without reading every token's."""
    return any(isinstance(key, tuple) and len(key) == 4 and key[0] == "._."
               and key[1] in CONSTRAINT_ATTRIBUTES for key in doc.user_data)


def _record(span: Span) -> dict:
    """The record of ``doc._.polyparse_sentences`` for the sentence ``span`` ({} if none)."""
    for record in span.doc._.polyparse_sentences or ():
        if record["start"] == span.start and record["end"] == span.end:
            return record
    return {}


def certificate_record(certificate: Certificate) -> dict:
    """A certificate as plain values (a Doc's extensions travel as msgpack)."""
    return {"kind": certificate.kind, "score": float(certificate.score),
            "upper_bound": None if certificate.upper_bound is None
            else float(certificate.upper_bound),
            "gap": None if certificate.gap is None else float(certificate.gap),
            "optimal": certificate.optimal, "stage": certificate.stage,
            "unconstrained": certificate.unconstrained}


class PolyparseComponent:
    """The spaCy component ``"polyparse"`` (:func:`make_component` documents its
    configuration). The model is loaded when first needed (:attr:`parser`), from the
    pipeline's folder after ``from_disk``."""

    def __init__(self, name: str, model: str, *, kbest: int, confidence: bool,
                 temperatures: List[float], ud_rules: bool, decoder: Optional[str],
                 time_limit: Optional[float], decoder_options: Dict[str, Any],
                 constraints: str, max_words: int) -> None:
        if kbest < 0:
            raise ValueError(f"polyparse: kbest must be >= 0 (0: off), not {kbest}")
        if kbest and confidence:
            raise ValueError("polyparse: k-best trees carry their rank and score, not "
                             "confidences: set either kbest or confidence")
        if max_words < 1:
            raise ValueError(f"polyparse: max_words must be >= 1, not {max_words}")
        self.name = name
        self.model = Path(model)
        self.kbest = kbest
        self.temperatures = Temperatures(*temperatures) if confidence else None
        self.ud_rules = ud_rules
        self.decoder = decoder
        self.decoder_options = dict(decoder_options)
        if time_limit is not None:
            self.decoder_options["time_limit"] = time_limit
        user = Constraints.parse(constraints, f"{name} config 'constraints'")
        self.user = None if user == Constraints() else user
        self.max_words = max_words
        self._parser: Parser | None = None
        register_extensions()

    @property
    def parser(self) -> Parser:
        """The :class:`~parser.pipeline.Parser` of :attr:`model`, decoding as configured
        (loaded on first use)."""
        if self._parser is None:
            parser = Parser.load(self.model)
            if self.decoder is not None or self.decoder_options:
                parser.use_decoder(self.decoder or parser.config.decoder,
                                   **self.decoder_options)
            parser.use_ud_rules = self.ud_rules
            if self.temperatures is not None:
                head_model(parser.model)     # a higher-order model needs its pruner
            self._parser = parser
        return self._parser

    def __call__(self, doc: Doc) -> Doc:
        self.parse([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        """Parse ``docs`` in batches (their sentences tagged together)."""
        for batch in minibatch(docs, batch_size):
            self.parse(batch)
            yield from batch

    def sentences(self, doc: Doc) -> list[SentenceWords]:
        """The sentences of ``doc`` to parse: ``doc.sents`` when the Doc has sentence
        boundaries (from its tokenizer, a ``sentencizer``, a parser), else the whole Doc
        as one sentence, which may have at most ``max_words`` words (``ValueError``
        otherwise: give the Doc sentence boundaries)."""
        if doc.has_annotation("SENT_START") or doc.has_annotation("DEP"):
            return [SentenceWords.of(span) for span in doc.sents]
        whole = SentenceWords.of(doc[:])
        if len(whole.tokens) > self.max_words:
            raise ValueError(
                f"polyparse: a Doc of {len(whole.tokens)} words without sentence boundaries "
                f"(more than max_words = {self.max_words}): add a 'sentencizer' before "
                "'polyparse', or make the Doc with polyparse's tokenizer (blank())")
        return [whole]

    def parse(self, docs: list[Doc]) -> None:
        """Tag (with the model's tagger, if it has one) and parse every sentence of
        ``docs`` and write the results into them (the tags of the second pass if the
        model has one, :meth:`~parser.pipeline.Parser.retag_parsed`)."""
        parser = self.parser
        retag = parser.tagger is not None
        units = [words for doc in docs for words in self.sentences(doc)]
        plain = [words.sentence(tags=not retag) for words in units if words.tokens]
        tagged = iter(parser.tag(plain) if retag and plain else plain)
        parsed = {id(doc): [] for doc in docs}
        constrained = {id(doc) for doc in docs if _has_constraints(doc)}
        for words in units:
            if not words.tokens:
                parsed[id(words.span.doc)].append((words, None, None))
                continue
            parsed[id(words.span.doc)].append(
                (words, *self._parse_one(words, next(tagged),
                                         id(words.span.doc) in constrained)))
        if retag:           # the tags of the second pass, which read the trees
            done = [(words, tree) for doc in docs for words, tree, _ in parsed[id(doc)]
                    if tree is not None]
            for (words, _), sentence in zip(done, parser.retag_parsed(
                    [tree for _, tree in done])):
                write_tags(words, sentence, lemmas=parser.lemmatizer is not None)
        for doc in docs:
            done = parsed[id(doc)]
            write_trees(doc, [(words, tree) for words, tree, _ in done if tree is not None])
            doc._.polyparse_sentences = [
                {"start": words.span.start, "end": words.span.end, **(record or {})}
                for words, _, record in done]

    def _parse_one(self, words: SentenceWords, sentence: Sentence, attributes: bool
                   ) -> tuple[Sentence, dict]:
        """The tree of one tagged ``sentence`` and its record (certificate or k best
        trees; the confidences are written into the tokens), under the tokens'
        constraints if ``attributes`` (the Doc has some)."""
        sentence, constraints = (self._constrained(words, sentence) if attributes
                                 else (sentence, self.user))
        if self.kbest:
            trees = self.parser.kbest(sentence, self.kbest, constraints)
            return trees[0][0], {"certificate": None, "kbest": [
                {"score": float(score), "heads": _doc_heads(words, tree),
                 "deprels": list(tree.deprels[1:])} for tree, score in trees]}
        analysis = self.parser.analyze(sentence, self.temperatures, constraints)
        if analysis.head_probs is not None:
            _write_confidences(words, analysis)
        return analysis.sentence, {"certificate": certificate_record(analysis.certificate),
                                   "kbest": None}

    def _constrained(self, words: SentenceWords, sentence: Sentence
                     ) -> tuple[Sentence, Constraints | None]:
        """``sentence`` with the heads and relations its tokens fix
        (``token._.polyparse_head``, ``polyparse_deprel``), and the constraints: the
        configured ones, those given kept, the tokens' forbidden heads
        (``token._.polyparse_forbidden_heads``) forbidden. ``ValueError`` naming the
        token for a head outside its sentence."""
        doc = words.span.doc
        n = len(words.tokens)
        heads, deprels, forbidden = [-1] * (n + 1), ["_"] * (n + 1), set()
        for k, i in enumerate(words.tokens, 1):
            token = doc[i]
            if token._.polyparse_head is not None:
                heads[k] = self._position(words, i, token._.polyparse_head, "polyparse_head")
            if token._.polyparse_deprel:
                deprels[k] = token._.polyparse_deprel
            for head in token._.polyparse_forbidden_heads or ():
                forbidden.add((self._position(words, i, head, "polyparse_forbidden_heads"), k))
        given = any(h >= 0 for h in heads) or any(d != "_" for d in deprels)
        if given:
            sentence = sentence.with_tree(heads, deprels)
        if not given and not forbidden:
            return sentence, self.user
        user = self.user or Constraints()
        return sentence, Constraints(user.forbid_arcs, user.forbid_labels, keep_given=given,
                                     forbid_positions=frozenset(forbidden))

    @staticmethod
    def _position(words: SentenceWords, token: int, head: int, attribute: str) -> int:
        """The word position of Doc index ``head`` given for ``token`` (0: ``token``
        itself, the root)."""
        if head == token:
            return 0
        position = words.position(head)
        if position is None:
            raise ValueError(f"polyparse: token {token} ({words.span.doc[token].text!r}): "
                             f"{attribute} {head} is not a word of its sentence (tokens "
                             f"{words.span.start}-{words.span.end - 1})")
        return position

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """Copy the model file into the folder ``path`` (``model.npz``)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        target = path / MODEL_FILE
        if not (target.exists() and target.samefile(self.model)):
            shutil.copyfile(self.model, target)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()
                  ) -> "PolyparseComponent":
        """Use the model file that :meth:`to_disk` copied into ``path``."""
        self.model = Path(path) / MODEL_FILE
        self._parser = None
        return self


def _doc_heads(words: SentenceWords, tree: Sentence) -> list[int]:
    """The Doc index of each word's head in ``tree`` (a root word: its own)."""
    return [words.tokens[h - 1] if h > 0 else words.tokens[k]
            for k, h in enumerate(tree.heads[1:].tolist())]


def _write_confidences(words: SentenceWords, analysis: Analysis) -> None:
    doc = words.span.doc
    for k, i in enumerate(words.tokens, 1):
        doc[i]._.polyparse_head_prob = float(analysis.head_probs[k])
        doc[i]._.polyparse_deprel_prob = float(analysis.label_probs[k])


@Language.factory(
    "polyparse",
    default_config={"kbest": 0, "confidence": False, "temperatures": [1.0, 1.0],
                    "ud_rules": True, "decoder": None, "time_limit": None,
                    "decoder_options": {}, "constraints": "",
                    "max_words": MAX_SENTENCE_WORDS},
    assigns=["token.head", "token.dep", "token.is_sent_start", "doc.sents", "token.pos",
             "token.tag", "token.morph", "token.lemma"])
def make_component(nlp: Language, name: str, model: str, kbest: int, confidence: bool,
                   temperatures: List[float], ud_rules: bool, decoder: Optional[str],
                   time_limit: Optional[float], decoder_options: Dict[str, Any],
                   constraints: str, max_words: int) -> PolyparseComponent:
    """The component ``"polyparse"``.

    Parameters
    ----------
    model:
        The model file (``polyparse train --model``).
    kbest:
        Each sentence's ``kbest`` best trees in ``span._.polyparse_kbest`` (0: off; the
        Doc gets the first; the sentence then has no certificate, as with ``parse
        --kbest``).
    confidence, temperatures:
        Each word's head and label probabilities (``parse --confidence``) at the
        temperatures ``[head, label]`` (``--confidence-temperature``).
    ud_rules:
        Enforce the UD rules the model learned (False: ``parse --no-ud-rules``).
    decoder, time_limit, decoder_options:
        ``parse --decoder`` (None: the model's), its time limit per sentence in seconds
        (None: the decoder's default) and its other options, e.g. ``{"solver": "highs"}``.
    constraints:
        Constraints on every sentence in the format of ``parse --constraints`` (its text,
        not a file name, so that it is saved with the pipeline).
    max_words:
        The most words of a Doc without sentence boundaries, parsed as one sentence.
    """
    return PolyparseComponent(name, model, kbest=kbest, confidence=confidence,
                              temperatures=temperatures, ud_rules=ud_rules, decoder=decoder,
                              time_limit=time_limit, decoder_options=decoder_options,
                              constraints=constraints, max_words=max_words)


class PolyparseTokenizer:
    """A spaCy tokenizer from polyparse's (:class:`~parser.text.Tokenizer`): raw
    text to a ``Doc`` of syntactic words (a multiword token's words with no space
    between them) with sentence boundaries (sentences of at most ``max_words`` words).
    The whitespace between tokens is kept as spaCy keeps it (a space after a token, any
    other whitespace as a whitespace token), so that ``doc.text`` is the text."""

    def __init__(self, vocab: Vocab, model: str | Path, max_words: int) -> None:
        self.vocab = vocab
        self.model = Path(model)
        self.max_words = max_words
        self._tokenizer: Tokenizer | None = None

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of :attr:`model` (loaded on first use)."""
        if self._tokenizer is None:
            tokenizer = parser_file.read_tokenizer(self.model)
            if tokenizer is None:
                raise ValueError(f"{self.model}: this model has no tokenizer (its training "
                                 "treebank had no '# text' comments); use spaCy's tokenizer")
            self._tokenizer = tokenizer
        return self._tokenizer

    def __call__(self, text: str) -> Doc:
        words: list[str] = []
        spaces: list[bool] = []
        starts: list[bool] = []
        end = 0
        for sentence in self.tokenizer.iter_tokenized(text, max_words=self.max_words):
            for t, token in enumerate(sentence):
                _whitespace(text[end:token.start], words, spaces, starts)
                leading = len(words) == 1 and words[0].isspace()   # began the Doc
                starts += [t == 0 and not leading] + [False] * (len(token.words) - 1)
                words += token.words
                spaces += [False] * len(token.words)
                end = token.end
        _whitespace(text[end:], words, spaces, starts)
        return Doc(self.vocab, words=words, spaces=spaces, sent_starts=starts)

    def pipe(self, texts: Iterable[str], batch_size: int = 1000) -> Iterator[Doc]:
        for text in texts:
            yield self(text)

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """Write the tokenizer alone into the folder ``path`` (``model.npz``)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        parser_file.write_tokenizer(self.tokenizer, path / MODEL_FILE)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()
                  ) -> "PolyparseTokenizer":
        """Use the tokenizer that :meth:`to_disk` wrote into ``path``."""
        self.model = Path(path) / MODEL_FILE
        self._tokenizer = None
        return self


def _whitespace(gap: str, words: list[str], spaces: list[bool], starts: list[bool]) -> None:
    """Add the whitespace ``gap`` before the next token as spaCy keeps it: its first
    space as the previous token's trailing space, the rest as a whitespace token (which
    starts the Doc's first sentence if it begins the text)."""
    if words and gap[:1] == " ":
        spaces[-1], gap = True, gap[1:]
    if gap:
        starts.append(not words)
        words.append(gap)
        spaces.append(False)


@registry.tokenizers("polyparse.Tokenizer.v1")
def create_tokenizer(model: str, max_words: int = MAX_SENTENCE_WORDS):
    """The tokenizer ``polyparse.Tokenizer.v1`` of ``[nlp.tokenizer]``: polyparse's
    tokenizer of the model file ``model`` (:class:`PolyparseTokenizer`)."""
    def make(nlp: Language) -> PolyparseTokenizer:
        return PolyparseTokenizer(nlp.vocab, model, max_words)
    return make


def blank(model: str | Path, lang: str = "xx", **config) -> Language:
    """A pipeline from raw text: ``spacy.blank(lang)`` with polyparse's tokenizer of
    ``model`` (``polyparse.Tokenizer.v1``) and the component ``"polyparse"`` of ``model``
    with ``config`` (:func:`make_component`)."""
    import spacy

    nlp = spacy.blank(lang, config={"nlp": {"tokenizer": {
        "@tokenizers": "polyparse.Tokenizer.v1", "model": str(model)}}})
    nlp.add_pipe("polyparse", config={"model": str(model), **config})
    return nlp
