"""Training and parsing end to end: the :class:`Parser` facade of the Python API.

>>> from parser.pipeline import Parser                      # doctest: +SKIP
>>> parser = Parser.load("model.npz")                       # doctest: +SKIP
>>> for sentence in parser.parse(read_conllu("in.conllu")): # doctest: +SKIP
...     print(sentence.to_text())
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from corpora.sentence import Sentence
from decoders import DECODERS, Decoder
from decoders.higher_order import build_parts
from features.extractor import FeatureConfig, FeatureExtractor

from . import model_file
from .evaluate import attachment_scores
from .inference import predict
from .model import Example, LinearModel
from .pruning import Pruner
from .trainers import TRAINERS, Trainer, TrainReport

log = logging.getLogger("polyparse.train")


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored in the model file)."""

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

    @property
    def order(self) -> str:
        return str(self.parts.get("order", "1"))

    @property
    def pruned(self) -> bool:
        return self.order != "1" if self.prune is None else self.prune


def make_decoder(name: str, single_root: bool, **options) -> Decoder:
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose from {', '.join(sorted(DECODERS))}")
    return DECODERS[name](single_root=single_root, **options)


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


class Parser:
    """A trained model together with the decoder it parses with."""

    def __init__(self, model: LinearModel, config: TrainConfig,
                 report: TrainReport | None = None) -> None:
        self.model = model
        self.config = config
        self.report = report
        self.decoder = config_decoder(config)

    # -- training -------------------------------------------------------------------

    @classmethod
    def train(cls, train: Sequence[Sentence], config: TrainConfig,
              dev: Sequence[Sentence] | None = None, *, progress: bool = False) -> "Parser":
        """Fit the feature map and labels on ``train``, the pruner if the model is
        pruned, then the weights."""
        config_decoder(config)
        extractor = FeatureExtractor(FeatureConfig.from_json(config.features)).fit(train)
        config.features = extractor.config.to_json()
        labels = sorted({label for s in train for label in s.deprels[1:]})
        pruner = cls._train_pruner(extractor, labels, train, config, dev, progress) \
            if config.pruned else None
        model = LinearModel(extractor, labels, parts=config.parts, pruner=pruner)
        parser = cls(model, config)
        options = dict(config.trainer_options)
        if options.get("eta"):
            options["relaxed"] = make_decoder(config.relaxed_decoder, config.single_root)
        trainer = make_trainer(config.trainer, epochs=config.epochs, seed=config.seed,
                               progress=progress, **options)
        evaluate = None
        if dev:
            def evaluate(weights: np.ndarray) -> dict:
                model.weights = weights
                scores = attachment_scores(dev, parser.parse(dev)).all_words
                return {"uas": scores["uas"], "las": scores["las"]}
        parser.report = trainer.fit(Examples(model, train), model, parser.decoder, dev=evaluate)
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
        """``sentence`` with predicted HEAD and DEPREL."""
        if len(sentence) == 0:
            return sentence
        example = self.model.example(sentence)
        result, labels = predict(self.model, example, self.decoder)
        return sentence.with_tree(result.heads,
                                  self.model.label_names(result.heads, example, labels))

    def parse(self, sentences: Iterable[Sentence]) -> Iterator[Sentence]:
        """Parse a stream of sentences lazily, in order."""
        for sentence in sentences:
            yield self.parse_one(sentence)

    # -- files ----------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        pruner = self.model.pruner
        meta = {
            "features": self.model.extractor.to_json(),
            "labels": self.model.labels,
            "training": asdict(self.config),
            "pruner": pruner.to_json() if pruner else None,
            "report": self.report.to_json() if self.report else [],
        }
        arrays = _sparse_weights("", self.model.weights)
        if pruner:
            arrays.update(_sparse_weights("pruner_", pruner.model.weights))
        model_file.save(path, model_file.ModelFile(meta, arrays))

    @classmethod
    def load(cls, path: str | Path) -> "Parser":
        contents = model_file.load(path)
        meta, arrays = contents.metadata, contents.arrays
        try:
            extractor = FeatureExtractor.from_json(meta["features"])
            config = TrainConfig(**meta["training"])
            pruner = None
            if meta["pruner"]:
                pruner_model = LinearModel(extractor, meta["labels"])
                _load_weights(pruner_model, arrays, "pruner_")
                pruner = Pruner(pruner_model, **meta["pruner"])
            model = LinearModel(extractor, meta["labels"], parts=config.parts, pruner=pruner)
            _load_weights(model, arrays, "")
        except (KeyError, TypeError, ValueError) as error:
            raise model_file.ModelFileError(f"{path}: damaged model file ({error})") from None
        return cls(model, config)


def _sparse_weights(prefix: str, weights: np.ndarray) -> dict:
    nonzero = np.flatnonzero(weights)
    return {f"{prefix}weight_index": nonzero.astype(np.int64),
            f"{prefix}weight_value": weights[nonzero].astype(np.float32)}


def _load_weights(model: LinearModel, arrays: dict, prefix: str) -> None:
    index = arrays[f"{prefix}weight_index"]
    if index.size and (index.min() < 0 or index.max() >= model.dim):
        raise ValueError("weight index out of range")
    model.weights[index] = arrays[f"{prefix}weight_value"]
