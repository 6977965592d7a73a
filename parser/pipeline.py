"""Training and parsing end to end: the :class:`Parser` facade of the Python API.

A model file holds the parser and, when they were trained with it, the tokenizer
(:class:`parser.text.tokenizer.Tokenizer`), the tagger (:class:`parser.text.Tagger`) and
the lemmatizer (:class:`parser.text.Lemmatizer`), so that one file takes raw text to
trees:

>>> import polyparse                                         # doctest: +SKIP
>>> parser = polyparse.load("model.npz")                     # a Parser  # doctest: +SKIP
>>> print(parser("The cat sat. It purred.").to_conllu())     # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from polyparse.corpora.document import Document
from polyparse.corpora.sentence import MAX_SENTENCE_WORDS, Sentence
from polyparse.learning.confidence import Temperatures, head_model
from polyparse.learning.model import LinearModel
from polyparse.learning.relabeler import Relabeler
from polyparse.learning.trainers import TrainReport

from . import fit, kbest_constrained, parser_file
from .analysis import ParseOptions, kbest_copies
from .config import TrainConfig
from .constraints import Constraints
from .decoding import Decoding
from .text import Lemmatizer, Tagger, Tokenizer
from .ud_rules import UDRules
from .workers import parse_in_processes

CHUNK = 64
"""Sentences tagged together and sent to a worker process at a time."""


class MissingComponentError(ValueError):
    """The model lacks the tokenizer or the tagger that a request needs."""


class Parser(Decoding):
    """A trained model together with the decoder it parses with (:class:`~parser.
    decoding.Decoding`: :meth:`analyze`, :meth:`relax`, the UD rules, the certificate
    counts), and optionally the tokenizer, tagger and lemmatizer that take raw text to
    its input.

    Attributes
    ----------
    report:
        The training report.
    tokenizer:
        :class:`~parser.text.tokenizer.Tokenizer` or None (no ``# text`` in training, or an
        older model file).
    tagger:
        :class:`~parser.text.Tagger` or None (trained on gold tags).
    lemmatizer:
        :class:`~parser.text.Lemmatizer` or None (no tagger, or an older model file).
    retagger:
        The second-pass :class:`~parser.text.Tagger` (tree features,
        :attr:`~parser.text.TaggerOptions.tree`), which tags the sentences it parsed again
        once their trees are known (:meth:`retag_parsed`), or None (trained without it,
        or an older model file).
    relabeler:
        The second-stage labeler (:attr:`~parser.decoding.Decoding.relabeler`), or None.
    path:
        The file the parser was loaded from (None if trained in this process).
    """

    def __init__(self, model: LinearModel, config: TrainConfig,
                 report: TrainReport | None = None, *, tokenizer: Tokenizer | None = None,
                 tagger: Tagger | None = None, lemmatizer: Lemmatizer | None = None,
                 retagger: Tagger | None = None, relabeler: Relabeler | None = None,
                 ud_rules: UDRules | None = None) -> None:
        super().__init__(model, config, ud_rules, relabeler)
        self.report = report
        self.tokenizer = tokenizer
        self.tagger = tagger
        self.lemmatizer = lemmatizer
        self.retagger = retagger
        self.path: Path | None = None

    @classmethod
    def train(cls, train: Sequence[Sentence], config: TrainConfig,
              dev: Sequence[Sentence] | None = None, *, progress: bool = False,
              checkpoint: str | Path | None = None, client=None) -> "Parser":
        """A parser trained on ``train`` (:func:`parser.fit.train`: the tokenizer,
        tagger, lemmatizer, feature map and pruner, then the weights by
        ``config.trainer``, in this process or by parameter mixing, on a Dask
        ``client`` if one is given; ``dev`` scored and the parser saved to
        ``checkpoint`` after every epoch)."""
        return fit.train(cls, train, config, dev, progress=progress, checkpoint=checkpoint,
                         client=client)

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
            if the model has one (otherwise they are kept as given), and once a sentence
            is parsed, by its second-pass tagger's (:meth:`retag_parsed`). Raises
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
        options = ParseOptions(retag, kbest, certify, confidence, constraints)
        if client is not None:
            from .cluster import parse_on_cluster      # Dask's import: 0.3 s, when used
            return parse_on_cluster(self, chunks, client, options)
        if jobs > 1:
            return parse_in_processes(self, chunks, jobs, options)
        return (parsed for chunk in chunks for parsed in self.parse_chunk(chunk, options))

    def kbest(self, sentence: Sentence, k: int, constraints: Constraints | None = None
              ) -> list[tuple[Sentence, float]]:
        """The ``k`` best trees of ``sentence`` under the UD rules in force and
        ``constraints``, best first, each with its score; the first is :meth:`analyze`'s
        (:func:`parser.kbest_constrained.kbest`)."""
        return kbest_constrained.kbest(self, sentence, k, constraints)

    def parse_kbest(self, sentence: Sentence, k: int, constraints: Constraints | None = None
                    ) -> list[Sentence]:
        """The trees of :meth:`kbest` as ``parse --kbest`` writes them
        (:func:`kbest_copies`)."""
        return kbest_copies(self.kbest(sentence, k, constraints))

    def parse_chunk(self, chunk: list[Sentence], options: ParseOptions = ParseOptions()
                    ) -> list[Sentence]:
        """Tag (with ``options.retag``) and parse one chunk of sentences (with
        ``kbest``: the copies of :meth:`parse_kbest`, one sentence after another;
        otherwise annotated as ``certify`` and ``confidence`` ask, :meth:`parse`)."""
        if options.retag:
            chunk = self.tag(chunk)
        if options.kbest is not None:
            parsed = [copy for s in chunk
                      for copy in self.parse_kbest(s, options.kbest, options.constraints)]
        else:
            parsed = [self.analyze(s, options.confidence, options.constraints
                                   ).annotated(options.certify) for s in chunk]
        return self.retag_parsed(parsed) if options.retag else parsed

    def tag(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """Copies of ``sentences`` with the tagger's UPOS, XPOS and FEATS, and the
        lemmatizer's LEMMA if the model has one (else LEMMA as given)."""
        self.require("tagger", "tag words")
        tagged = self.tagger.tag(list(sentences))
        if self.lemmatizer is not None:
            tagged = self.lemmatizer.lemmatize(tagged, self.tagger)
        return tagged

    def retag_parsed(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """Copies of parsed ``sentences`` with the second-pass tagger's UPOS, XPOS and
        FEATS, which see each word's place in its tree, and the lemmatizer's LEMMA of
        them; ``sentences`` as they are if the model has no second-pass tagger. The tree
        is not parsed again (what the pass gives with the same trees: the *first-pass
        tags* rows of ``eval/results/stages_*.md``)."""
        if self.retagger is None or not sentences:
            return list(sentences)
        tagged = self.retagger.tag(list(sentences))
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

    def __call__(self, text: str) -> Document:
        """The :class:`~corpora.document.Document` of raw ``text``: its sentences
        tokenized, tagged and parsed (:meth:`parse_text`). Raises
        :class:`MissingComponentError` if the model has no tokenizer or tagger."""
        if not isinstance(text, str):
            raise TypeError(f"a parser is called on raw text (a str), not "
                            f"{type(text).__name__}; use parse_tokens for word lists and "
                            "parse for Sentences")
        return Document(text, tuple(self.parse_text(text)))

    def stream_text(self, text: str, *, id_prefix: str = "", jobs: int = 1,
                    max_words: int | None = MAX_SENTENCE_WORDS,
                    kbest: int | None = None, certify: bool = False,
                    confidence: Temperatures | None = None,
                    constraints: Constraints | None = None, client=None
                    ) -> Iterator[Sentence]:
        """:meth:`parse_text`, lazily. Tokenizing starts when the first sentence is asked
        for and hands out sentences as it builds them
        (:meth:`~parser.text.tokenizer.Tokenizer.iter_sentences`), so that with ``jobs > 1``
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

    def save(self, path: str | Path) -> None:
        """Write the parser, and its tokenizer, tagger and lemmatizer if any, to one model
        file (:func:`parser.parser_file.write`)."""
        parser_file.write(parser_file.Stored(self.model, self.config, self.report,
                                             self.tokenizer, self.tagger, self.lemmatizer,
                                             self.ud_rules, self.retagger, self.relabeler),
                          path)

    @classmethod
    def load(cls, path: str | Path) -> "Parser":
        """Read a model file (:func:`parser.parser_file.read`)."""
        stored = parser_file.read(path)
        parser = cls(stored.model, stored.config, stored.report, tokenizer=stored.tokenizer,
                     tagger=stored.tagger, lemmatizer=stored.lemmatizer,
                     retagger=stored.retagger, relabeler=stored.relabeler,
                     ud_rules=stored.ud_rules)
        parser.path = Path(path)
        return parser


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk
