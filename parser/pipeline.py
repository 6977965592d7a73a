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

import inspect
import itertools
import logging
import multiprocessing
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from polyparse.corpora.sentence import MAX_SENTENCE_WORDS, ROOT, Sentence
from polyparse.corpora.signals import end_pool, in_worker
from polyparse.corpora.tokenizer import Tokenizer
from polyparse.corpora.word_clusters import read_word_clusters
from polyparse.decoders import DECODERS, Decoder
from polyparse.decoders.higher_order import build_parts
from polyparse.features.extractor import FeatureConfig, FeatureExtractor

from . import model_file
from .evaluate import attachment_scores
from .inference import predict
from .model import Example, LinearModel
from .pruning import Pruner
from .tagging import Lemmatizer, Tagger, jackknife, with_lemmas
from .trainers import TRAINERS, Trainer, TrainReport

log = logging.getLogger("polyparse.train")

TAGGER_EPOCHS = 8
LEMMATIZER_EPOCHS = 5
CHUNK = 64
"""Sentences tagged together and sent to a worker process at a time."""


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored in the model file).

    ``tokenizer`` and ``tagger`` are the options of the :class:`~corpora.tokenizer.Tokenizer`
    and of the :class:`~parser.tagging.Tagger` (plus ``"epochs"``, default 8; its
    ``"clusters"`` is the path of a word-cluster file, read when training) trained
    with the parser, or ``None`` for none; ``lemmatizer`` the options of the
    :class:`~parser.tagging.Lemmatizer` (plus ``"epochs"``, default 5), trained whenever
    the tagger is, on the jackknifed tags, unless it is ``None``. The tokenizer is
    trained by default, when the treebank has ``# text`` comments. The tagger is trained
    when ``tagger`` is a dict (``{}`` for the defaults; ``polyparse train`` does so
    unless ``--no-tagger``); the default ``None`` keeps the parser on the treebank's gold
    tags, as before, so that experiments on gold tags keep their meaning. With a tagger
    the parser is trained on tags predicted by ``jackknife``-fold cross-tagging, and
    without lemmas
    (``lemmas=None`` means: lemmas only when there is no tagger): its features were
    chosen and measured without them on predicted input, and the lemmatizer's output is
    for the LEMMA column, not for the parser.
    """

    trainer: str = "ssg"
    decoder: str = "mst"
    single_root: bool = True
    epochs: int = 10
    seed: int = 0
    trainer_options: dict = field(default_factory=dict)
    decoder_options: dict = field(default_factory=dict)
    features: dict = field(default_factory=dict)
    parts: dict = field(default_factory=dict)      # build_parts options: order, ...
    relaxed_decoder: str = "lp"                    # SSG-eta's relaxed inference
    prune: bool | None = None                      # default: for higher-order models
    pruner: dict = field(default_factory=dict)     # threshold, max_heads, epochs
    tokenizer: dict | None = field(default_factory=dict)
    tagger: dict | None = None
    lemmatizer: dict | None = field(default_factory=dict)
    jackknife: int = 10
    lemmas: bool | None = None

    @property
    def order(self) -> str:
        return str(self.parts.get("order", "1"))

    @property
    def pruned(self) -> bool:
        return self.order != "1" if self.prune is None else self.prune

    @property
    def uses_lemmas(self) -> bool:
        """Whether the parser's features see the LEMMA column."""
        return self.tagger is None if self.lemmas is None else self.lemmas


def decoder_class(name: str) -> type[Decoder]:
    """The registered decoder ``name``; ``ValueError`` naming the choices if none."""
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose from {', '.join(sorted(DECODERS))}")
    return DECODERS[name]


def make_decoder(name: str, single_root: bool, **options) -> Decoder:
    """Decoder ``name`` with ``options``, checked against the options it declares
    (:meth:`Decoder.check_options`: an :class:`~decoders.base.OptionError` for one it
    does not take or a value of the wrong type)."""
    cls = decoder_class(name)
    cls.check_options(options)
    return cls(single_root=single_root, **options)


def config_decoder(config: TrainConfig) -> Decoder:
    """The decoder of ``config``, checked to take every part type of its model."""
    decoder = make_decoder(config.decoder, config.single_root, **config.decoder_options)
    if not set(build_parts(3, **config.parts).offsets) <= decoder.part_types:
        raise ValueError(f"decoder {config.decoder!r} cannot decode order {config.order} "
                         "models (use ilp or lp)")
    return decoder


def make_trainer(name: str, **options) -> Trainer:
    """Build trainer ``name`` from the options it accepts.

    Options set to ``None`` are left at the trainer's default; an option the trainer
    does not take is an error.
    """
    if name not in TRAINERS:
        raise ValueError(f"unknown trainer {name!r}; choose from {', '.join(sorted(TRAINERS))}")
    cls = TRAINERS[name]
    accepted = set()
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            accepted |= {p.name for p in inspect.signature(klass.__init__).parameters.values()
                         if p.kind == p.KEYWORD_ONLY}
    options = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ValueError(f"trainer {name!r} does not take option(s): {', '.join(unknown)}")
    return cls(**options)


class Examples(Sequence):
    """Training examples made on demand (features of a treebank do not fit in memory);
    the pruned candidate arcs of each sentence are computed once and kept."""

    def __init__(self, model: LinearModel, sentences: Sequence[Sentence]) -> None:
        self.model = model
        self.sentences = sentences
        self._arcs: dict[int, np.ndarray | None] = {}

    def __len__(self) -> int:
        return len(self.sentences)

    def __getitem__(self, i: int) -> Example:
        sentence = self.sentences[i]
        if i not in self._arcs:
            self._arcs[i] = self.model.candidate_arcs(sentence, gold=True)
        return self.model.example(sentence, gold=True, arcs=self._arcs[i])


class MissingComponentError(ValueError):
    """The model lacks the tokenizer or the tagger that a request needs."""


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
    fallbacks:
        Sentences whose decoder ran out of its time limit and fell back to a cheaper
        tree (``stats["fallback"]``), counted as sentences are parsed.
    """

    def __init__(self, model: LinearModel, config: TrainConfig,
                 report: TrainReport | None = None, *, tokenizer: Tokenizer | None = None,
                 tagger: Tagger | None = None, lemmatizer: Lemmatizer | None = None) -> None:
        self.model = model
        self.config = config
        self.report = report
        self.tokenizer = tokenizer
        self.tagger = tagger
        self.lemmatizer = lemmatizer
        self.path: Path | None = None
        self.decoder = config_decoder(config)
        self.fallbacks = 0

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
              checkpoint: str | Path | None = None) -> "Parser":
        """Fit the tokenizer (if ``train`` has ``# text``), the tagger (unless
        ``config.tagger`` is None) and with it the lemmatizer (on the jackknifed tags,
        unless ``config.lemmatizer`` is None), then the parser on jackknifed tags: its
        feature map and labels, the pruner if the model is pruned, then the weights.

        ``dev`` (gold trees) is parsed after every epoch, with the tags the tagger
        predicts for it when there is one. With ``checkpoint``, the parser with the
        averaged weights so far is saved there after every epoch, so that a long run
        that is stopped still leaves a model.
        """
        config_decoder(config)
        trainer = _trainer(config, progress)
        if config.tagger is not None and not 2 <= config.jackknife <= len(train):
            raise ValueError(f"jackknifing needs between 2 and {len(train)} folds (the number "
                             f"of training sentences), not {config.jackknife}")
        tagger_options = dict(config.tagger or {})
        epochs = int(tagger_options.pop("epochs", TAGGER_EPOCHS))
        if tagger_options.get("clusters") is not None:
            tagger_options["clusters"] = read_word_clusters(tagger_options["clusters"])
        tokenizer = tagger = lemmatizer = None
        if config.tokenizer is not None and any(s.text is not None for s in train):
            tokenizer = Tokenizer(**{"seed": config.seed, **config.tokenizer}).fit(train)
            log.info("tokenizer: trained on the # text of %d sentences",
                     sum(s.text is not None for s in train))
        parser_train, parser_dev = list(train), list(dev) if dev else None
        if config.tagger is not None:
            # Jackknifing first: its taggers are gone before the kept one is trained.
            parser_train = jackknife(train, config.jackknife, epochs=epochs, seed=config.seed,
                                     **tagger_options)
            tagger = Tagger(**tagger_options).fit(train, epochs=epochs, seed=config.seed)
            log.info("tagger: training tags jackknifed in %d folds, UPOS accuracy %.2f",
                     config.jackknife, _upos_accuracy(train, parser_train))
            if config.lemmatizer is not None:
                options = dict(config.lemmatizer)
                lemmatizer_epochs = int(options.pop("epochs", LEMMATIZER_EPOCHS))
                lemmatizer = Lemmatizer(**options).fit(parser_train, tagger,
                                                       epochs=lemmatizer_epochs,
                                                       seed=config.seed)
            if dev:
                parser_dev = tagger.tag(dev)
                log.info("tagger: dev UPOS accuracy %.2f", _upos_accuracy(dev, parser_dev))
                if lemmatizer is not None:
                    parser_dev = lemmatizer.lemmatize(parser_dev, tagger)
                    log.info("lemmatizer: dev lemma accuracy %.2f",
                             _accuracy(dev, parser_dev, "lemmas"))
        if not config.uses_lemmas:
            parser_train = [_without_lemmas(s) for s in parser_train]
        extractor = FeatureExtractor(FeatureConfig.from_json(config.features)).fit(
            parser_train, parts=config.parts)
        config.features = extractor.config.to_json()
        log.info("features: 2**%d part features, 2**%d label features",
                 extractor.config.bits, extractor.config.label_bits)
        labels = sorted({label for s in train for label in s.deprels[1:]})
        pruner = cls._train_pruner(extractor, labels, parser_train, config, parser_dev,
                                   progress) if config.pruned else None
        model = LinearModel(extractor, labels, parts=config.parts, pruner=pruner)
        parser = cls(model, config, tokenizer=tokenizer, tagger=tagger, lemmatizer=lemmatizer)
        def after_epoch(weights: np.ndarray, report: TrainReport) -> dict:
            model.weights = weights
            if checkpoint is not None:
                parser.report = report
                parser.save(checkpoint)
            if not dev:
                return {}
            scores = attachment_scores(dev, parser.parse(parser_dev)).all_words
            return {"uas": scores["uas"], "las": scores["las"]}
        parser.report = trainer.fit(Examples(model, parser_train), model, parser.decoder,
                                    dev=after_epoch if dev or checkpoint else None)
        return parser

    @staticmethod
    def _train_pruner(extractor, labels, train, config, dev, progress) -> Pruner:
        """An arc-factored labeled model trained by the perceptron and MST on 90% of
        ``train``; its temperature is calibrated on the other 10% (scores of sentences
        it was trained on would make it far too sure of itself)."""
        options = dict(config.pruner)
        epochs = int(options.pop("epochs", 2))
        held_out = max(1, len(train) // 10)
        model = LinearModel(extractor, labels)
        trainer = make_trainer("perceptron", epochs=epochs, seed=config.seed, progress=progress)
        trainer.fit(Examples(model, train[:-held_out]), model,
                    make_decoder("mst", config.single_root))
        pruner = Pruner(model, config.single_root, **options)
        calibration = pruner.calibrate(list(train[-held_out:]))
        log.info("pruner: temperature %g, held-out oracle UAS %.2f, %.2f arcs/word",
                 calibration["temperature"], calibration["oracle_uas"],
                 calibration["arcs_per_word"])
        if dev:
            log.info("pruner: dev oracle UAS %(oracle_uas).2f, %(arcs_per_word).2f arcs/word",
                     pruner.oracle(dev))
        return pruner

    # -- parsing --------------------------------------------------------------------

    def parse_one(self, sentence: Sentence) -> Sentence:
        """``sentence`` with predicted HEAD and DEPREL (its tags as given)."""
        if len(sentence) == 0:
            return sentence
        seen = sentence if self.config.uses_lemmas else _without_lemmas(sentence)
        if self.model.arc_factored:
            # O(n^2) memory: no feature rows and no part index for the n^2 arcs
            S, labels = self.model.arc_scores(seen)
            result = self.decoder.decode_arcs(S)
            label_ids = labels[result.heads[1:], np.arange(1, len(sentence) + 1)]
            names = [ROOT] + [self.model.labels[i] for i in label_ids]
        else:
            example = self.model.example(seen)
            result, labels = predict(self.model, example, self.decoder)
            names = self.model.label_names(result.heads, example, labels)
        self.fallbacks += bool(result.stats.get("fallback"))
        return sentence.with_tree(result.heads, names)

    def parse(self, sentences: Iterable[Sentence], *, retag: bool = False,
              jobs: int = 1) -> Iterator[Sentence]:
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
        """
        if retag:
            self.require("tagger", "tag words")
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1, not {jobs}")
        chunks = _chunks(sentences, CHUNK)
        if jobs > 1:
            return self._parse_in_processes(chunks, retag, jobs)
        return (parsed for chunk in chunks for parsed in self._parse_chunk(chunk, retag))

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

    def parse_text(self, text: str, *, id_prefix: str = "", jobs: int = 1,
                   max_words: int | None = MAX_SENTENCE_WORDS) -> list[Sentence]:
        """Tokenize, tag and parse raw ``text``: a list of sentences ready for
        :meth:`~corpora.sentence.Sentence.to_text`. A sentence longer than ``max_words``
        words (default :data:`~corpora.sentence.MAX_SENTENCE_WORDS`, 300) is cut where
        the sentence model sees the likeliest end (:meth:`Tokenizer.tokenize`; None:
        never), so that text without punctuation is not parsed as one sentence.

        Raises :class:`MissingComponentError` if the model has no tokenizer or tagger.
        """
        return list(self.stream_text(text, id_prefix=id_prefix, jobs=jobs,
                                     max_words=max_words))

    def stream_text(self, text: str, *, id_prefix: str = "", jobs: int = 1,
                    max_words: int | None = MAX_SENTENCE_WORDS) -> Iterator[Sentence]:
        """:meth:`parse_text`, lazily. Tokenizing starts when the first sentence is asked
        for and hands out sentences as it builds them
        (:meth:`~corpora.tokenizer.Tokenizer.iter_sentences`), so that with ``jobs > 1``
        the worker processes start, warm up and parse while this process tokenizes."""
        self.require("tokenizer", "parse raw text")
        self.require("tagger", "parse raw text")
        return self.parse(self.tokenizer.iter_sentences(text, id_prefix=id_prefix,
                                                        max_words=max_words),
                          retag=True, jobs=jobs)

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

    def _parse_chunk(self, chunk: list[Sentence], retag: bool) -> list[Sentence]:
        if retag:
            chunk = self.tag(chunk)
        return [self.parse_one(s) for s in chunk]

    def _parse_in_processes(self, chunks: Iterator[list[Sentence]], retag: bool,
                            jobs: int) -> Iterator[Sentence]:
        global _WORKER
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        if context.get_start_method() != "fork" and self.path is None:
            raise ValueError("parsing on several processes without fork needs a parser "
                             "loaded from a file (Parser.load)")
        _WORKER = self          # inherited by forked workers; spawned ones load self.path
        try:
            pool = context.Pool(jobs, initializer=_init_worker,
                                initargs=(str(self.path) if self.path else None,))
        finally:
            _WORKER = None
        try:
            pending: deque = deque()
            for chunk in chunks:
                pending.append(pool.apply_async(_parse_in_worker, (chunk, retag)))
                if len(pending) >= 2 * jobs:
                    yield from self._collect(pending.popleft().get())
            while pending:
                yield from self._collect(pending.popleft().get())
        finally:
            end_pool(pool)

    def _collect(self, done: tuple[list[Sentence], int]) -> list[Sentence]:
        """A worker's parsed chunk; its fallbacks are added to :attr:`fallbacks`."""
        parsed, fallbacks = done
        self.fallbacks += fallbacks
        return parsed

    # -- files ----------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the parser, and its tokenizer, tagger and lemmatizer if any, to one model
        file: their arrays under the prefixes ``tokenizer_``, ``tagger_`` and
        ``lemmatizer_``, their JSON in the metadata."""
        pruner = self.model.pruner
        meta = {
            "features": self.model.extractor.to_json(),
            "labels": self.model.labels,
            "training": asdict(self.config),
            "pruner": pruner.to_json() if pruner else None,
            "report": self.report.to_json() if self.report else [],
            "tokenizer": None,
            "tagger": None,
            "lemmatizer": None,
        }
        arrays = _sparse_weights("", self.model.weights)
        if pruner:
            arrays.update(_sparse_weights("pruner_", pruner.model.weights))
        if self.tokenizer is not None:
            meta["tokenizer"], tokenizer_arrays = self.tokenizer.to_json()
            arrays.update(_prefixed("tokenizer_", tokenizer_arrays))
        if self.tagger is not None:
            meta["tagger"], tagger_arrays = self.tagger.to_arrays()
            arrays.update(_prefixed("tagger_", tagger_arrays))
        if self.lemmatizer is not None:
            meta["lemmatizer"], lemmatizer_arrays = self.lemmatizer.to_arrays()
            arrays.update(_prefixed("lemmatizer_", lemmatizer_arrays))
        model_file.save(path, model_file.ModelFile(meta, arrays))

    @classmethod
    def load(cls, path: str | Path) -> "Parser":
        """Read a model file; one written before tokenizers, taggers and lemmatizers
        were stored loads as a parser without them."""
        contents = model_file.load(path)
        meta, arrays = contents.metadata, contents.arrays
        try:
            extractor = FeatureExtractor.from_json(meta["features"])
            # A model without these keys predates them: no tokenizer, tagger, lemmatizer.
            config = TrainConfig(**{"tokenizer": None, "tagger": None, "lemmatizer": None,
                                    **meta["training"]})
            pruner = None
            if meta["pruner"]:
                pruner_model = LinearModel(extractor, meta["labels"])
                _load_weights(pruner_model, arrays, "pruner_")
                pruner = Pruner(pruner_model, **meta["pruner"])
            model = LinearModel(extractor, meta["labels"], parts=config.parts, pruner=pruner)
            _load_weights(model, arrays, "")
            tokenizer = tagger = lemmatizer = None
            if meta.get("tokenizer"):
                tokenizer = Tokenizer.from_json(meta["tokenizer"],
                                                _unprefixed("tokenizer_", arrays))
            if meta.get("tagger"):
                tagger = Tagger.from_arrays(meta["tagger"], _unprefixed("tagger_", arrays))
            if meta.get("lemmatizer") and tagger is not None:
                lemmatizer = Lemmatizer.from_arrays(meta["lemmatizer"],
                                                    _unprefixed("lemmatizer_", arrays))
            report = TrainReport.from_json(meta.get("report", []))
        except (KeyError, TypeError, ValueError) as error:
            raise model_file.ModelFileError(f"{path}: damaged model file ({error})") from None
        parser = cls(model, config, report, tokenizer=tokenizer, tagger=tagger,
                     lemmatizer=lemmatizer)
        parser.path = Path(path)
        return parser


# -- worker processes ------------------------------------------------------------------

_WORKER: Parser | None = None
"""The parser of a worker process (set in the parent just before forking)."""


def _init_worker(path: str | None) -> None:
    global _WORKER
    in_worker()     # the parent handles Ctrl-C; SIGTERM from the pool ends it at once
    if _WORKER is None:             # spawned, not forked: load the model once
        _WORKER = Parser.load(path)
    # load the compiled tagging and parsing kernels now, while the parent reads input
    _WORKER._parse_chunk([Sentence.from_words(["Go", "."])], _WORKER.tagger is not None)


def _parse_in_worker(chunk: list[Sentence], retag: bool) -> tuple[list[Sentence], int]:
    before = _WORKER.fallbacks
    parsed = _WORKER._parse_chunk(chunk, retag)
    return parsed, _WORKER.fallbacks - before


# -- helpers ---------------------------------------------------------------------------

def _trainer(config: TrainConfig, progress: bool) -> Trainer:
    options = dict(config.trainer_options)
    if options.get("eta"):
        options["relaxed"] = make_decoder(config.relaxed_decoder, config.single_root)
    return make_trainer(config.trainer, epochs=config.epochs, seed=config.seed,
                        progress=progress, **options)


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _without_lemmas(sentence: Sentence) -> Sentence:
    """``sentence`` with LEMMA ``_`` (fields and lines): what the parser sees when it
    was trained without lemmas."""
    if all(lemma == "_" for lemma in sentence.lemmas[1:]):
        return sentence
    return with_lemmas(sentence, ("_",) * len(sentence.forms))


def _upos_accuracy(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> float:
    return _accuracy(gold, predicted, "upos")


def _accuracy(gold: Sequence[Sentence], predicted: Sequence[Sentence], name: str) -> float:
    """Percentage of the words whose field ``name`` is the same in both."""
    words = sum(len(s) for s in gold)
    right = sum(a == b for g, p in zip(gold, predicted)
                for a, b in zip(getattr(g, name)[1:], getattr(p, name)[1:]))
    return 100.0 * right / words if words else 0.0


def _prefixed(prefix: str, arrays: dict) -> dict:
    return {prefix + name: array for name, array in arrays.items()}


def _unprefixed(prefix: str, arrays: dict) -> dict:
    return {name[len(prefix):]: array for name, array in arrays.items()
            if name.startswith(prefix)}


def _sparse_weights(prefix: str, weights: np.ndarray) -> dict:
    nonzero = np.flatnonzero(weights)
    return {f"{prefix}weight_index": nonzero.astype(np.int64),
            f"{prefix}weight_value": weights[nonzero].astype(np.float32)}


def _load_weights(model: LinearModel, arrays: dict, prefix: str) -> None:
    index = arrays[f"{prefix}weight_index"]
    if index.size and (index.min() < 0 or index.max() >= model.dim):
        raise ValueError("weight index out of range")
    model.weights[index] = arrays[f"{prefix}weight_value"]
