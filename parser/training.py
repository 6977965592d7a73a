"""What a training run fits before the parser's weights, in order: the tokenizer, the
tagger (jackknifed tags for the parser) and lemmatizer, the feature map and label set,
and the pruner; :func:`prepare` hands them on, with the parser's model, to the trainer
(:meth:`parser.pipeline.Parser.train` runs it)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from polyparse.corpora.sentence import Sentence
from polyparse.corpora.word_clusters import ClusterTable, read_word_clusters
from polyparse.decoders import make_decoder
from polyparse.features.extractor import FeatureExtractor
from polyparse.learning.examples import Examples
from polyparse.learning.model import LinearModel
from polyparse.learning.pruning import Pruner
from polyparse.learning.relabeler import Relabeler
from polyparse.learning.trainers import make_trainer

from .config import TrainConfig
from .text import Lemmatizer, Tagger, Tokenizer, jackknife, second_pass_options, with_lemmas

log = logging.getLogger("polyparse.train")


@dataclass
class Prepared:
    """The components of a parser before its weights are trained: ``model`` (feature
    map, labels, pruner; zero weights), the optional ``tokenizer``, ``tagger``,
    ``lemmatizer``, second-pass tagger ``retagger`` and second-stage labeler
    ``relabeler``, and the sentences as the parser sees them: ``train`` (jackknifed
    tags) and ``dev`` (the tagger's tags; None without dev)."""

    model: LinearModel
    tokenizer: Tokenizer | None
    tagger: Tagger | None
    lemmatizer: Lemmatizer | None
    retagger: Tagger | None
    relabeler: Relabeler | None
    train: list[Sentence]
    dev: list[Sentence] | None


def prepare(train: Sequence[Sentence], config: TrainConfig,
            dev: Sequence[Sentence] | None = None, *, progress: bool = False) -> Prepared:
    """Fit the tokenizer (if ``train`` has ``# text``), the tagger (unless
    ``config.tagger`` is None) and with it the lemmatizer (on the jackknifed tags, unless
    ``config.lemmatizer`` is None), then the parser's feature map and labels on the
    jackknifed tags, the pruner if the model is pruned, and the second-stage labeler
    (unless ``config.relabeler`` is None) on the gold trees and jackknifed tags.
    ``config.features`` is set to the feature configuration chosen (its feature spaces
    sized)."""
    if config.tagger is not None and not 2 <= config.jackknife <= len(train):
        raise ValueError(f"jackknifing needs between 2 and {len(train)} folds (the number "
                         f"of training sentences), not {config.jackknife}")
    clusters = (None if config.word_clusters is None
                else ClusterTable.of(read_word_clusters(config.word_clusters)))
    tokenizer, tagger, lemmatizer, retagger, parser_train, parser_dev = fit_text_models(
        train, config, dev, clusters)
    if not config.uses_lemmas:
        parser_train = [without_lemmas(s) for s in parser_train]
    extractor = FeatureExtractor(config.features, clusters=clusters).fit(parser_train,
                                                                         parts=config.parts)
    config.features = extractor.config
    log.info("features: 2**%d part features, 2**%d label features",
             extractor.config.bits, extractor.config.label_bits)
    labels = sorted({label for s in train for label in s.deprels[1:]})
    pruner = train_pruner(extractor, labels, parser_train, config, parser_dev,
                               progress) if config.pruned else None
    model = LinearModel(extractor, labels, parts=config.parts, pruner=pruner)
    relabeler = (None if config.relabeler is None else
                 Relabeler(labels, config.relabeler).fit(parser_train, seed=config.seed))
    return Prepared(model, tokenizer, tagger, lemmatizer, retagger, relabeler, parser_train,
                    parser_dev)


def fit_text_models(train: Sequence[Sentence], config: TrainConfig,
                    dev: Sequence[Sentence] | None = None,
                    clusters: ClusterTable | None = None):
    """The first stage of :func:`prepare`: ``(tokenizer, tagger, lemmatizer, retagger,
    train, dev)``, the models (None where ``config`` or the data has none) and the
    sentences as the parser sees them (jackknifed training tags, the tagger's dev tags,
    with their lemmas); the taggers read the word ``clusters`` if given."""
    tokenizer = tagger = lemmatizer = retagger = None
    if config.tokenizer is not None and any(s.text is not None for s in train):
        tokenizer = Tokenizer(config.tokenizer, seed=config.seed).fit(train)
        log.info("tokenizer: trained on the # text of %d sentences",
                 sum(s.text is not None for s in train))
    parser_train, parser_dev = list(train), list(dev) if dev else None
    if config.tagger is not None:
        options, epochs = config.tagger, config.tagger.epochs
        # Jackknifing first: its taggers are gone before the kept one is trained.
        parser_train = jackknife(train, config.jackknife, options, epochs=epochs,
                                 seed=config.seed, clusters=clusters)
        tagger = Tagger(options, clusters=clusters).fit(train, epochs=epochs, seed=config.seed)
        log.info("tagger: training tags jackknifed in %d folds, UPOS accuracy %.2f",
                 config.jackknife, _upos_accuracy(train, parser_train))
        if options.second_pass:
            retagger = Tagger(second_pass_options(options), clusters=clusters).fit(
                train, epochs=epochs, seed=config.seed, tagged=parser_train)
        if config.lemmatizer is not None:
            lemmatizer = Lemmatizer(config.lemmatizer).fit(parser_train, tagger,
                                                           epochs=config.lemmatizer.epochs,
                                                           seed=config.seed)
        if dev:
            parser_dev = tagger.tag(dev)
            log.info("tagger: dev UPOS accuracy %.2f", _upos_accuracy(dev, parser_dev))
            if lemmatizer is not None:
                parser_dev = lemmatizer.lemmatize(parser_dev, tagger)
                log.info("lemmatizer: dev lemma accuracy %.2f",
                         _accuracy(dev, parser_dev, "lemmas"))
    return tokenizer, tagger, lemmatizer, retagger, parser_train, parser_dev


def train_pruner(extractor, labels, train, config, dev, progress) -> Pruner:
    """An arc-factored model trained by the perceptron and MST on 90% of ``train``; its
    temperature is calibrated on the other 10% (scores of sentences it was trained on
    would make it far too sure of itself).

    Unlabeled unless ``config.pruner.labeled``, as TurboParser's pruner: it only ranks
    heads, and the label scores of all n^2 arcs cost as much as their arc scores. With 2
    epochs and 5 heads per word the labeled one keeps 99.09% of en_ewt's dev gold heads
    (4.89 arcs per word), the unlabeled one 98.94% (4.80) in half the time; on tr_imst
    (with morphology) 94.84% and 94.43%, and the order-2 models trained behind them reach
    70.03 and 70.00 dev UAS (``eval/results/orders_tr_imst_morphology*.md``).
    """
    options = config.pruner
    held_out = max(1, len(train) // 10)
    model = LinearModel(extractor, labels if options.labeled else [])
    trainer = make_trainer("perceptron", epochs=options.epochs, seed=config.seed,
                           progress=progress)
    trainer.fit(Examples(model, train[:-held_out]), model,
                make_decoder("mst", config.single_root))
    pruner = Pruner(model, config.single_root, options)
    calibration = pruner.calibrate(list(train[-held_out:]))
    log.info("pruner: temperature %g, held-out oracle UAS %.2f, %.2f arcs/word",
             calibration["temperature"], calibration["oracle_uas"],
             calibration["arcs_per_word"])
    if dev:
        log.info("pruner: dev oracle UAS %(oracle_uas).2f, %(arcs_per_word).2f arcs/word",
                 pruner.oracle(dev))
    return pruner


def without_lemmas(sentence: Sentence) -> Sentence:
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
