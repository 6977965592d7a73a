"""Training and parsing end to end: the :class:`Parser` facade of the Python API.

>>> from parser.pipeline import Parser                      # doctest: +SKIP
>>> parser = Parser.load("model.npz")                       # doctest: +SKIP
>>> for sentence in parser.parse(read_conllu("in.conllu")): # doctest: +SKIP
...     print(sentence.to_text())
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from corpora.sentence import Sentence
from decoders import DECODERS, Decoder
from features.extractor import FeatureConfig, FeatureExtractor

from . import model_file
from .evaluate import attachment_scores
from .inference import predict
from .model import Example, LinearModel
from .trainers import TRAINERS, Trainer, TrainReport


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored in the model file)."""

    trainer: str = "ssg"
    decoder: str = "mst"
    single_root: bool = True
    epochs: int = 10
    seed: int = 0
    trainer_options: dict = field(default_factory=dict)
    features: dict = field(default_factory=dict)


def make_decoder(name: str, single_root: bool, **options) -> Decoder:
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose from {', '.join(sorted(DECODERS))}")
    return DECODERS[name](single_root=single_root, **options)


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
    """Training examples made on demand (features of a treebank do not fit in memory)."""

    def __init__(self, model: LinearModel, sentences: Sequence[Sentence]) -> None:
        self.model = model
        self.sentences = sentences

    def __len__(self) -> int:
        return len(self.sentences)

    def __getitem__(self, i: int) -> Example:
        return self.model.example(self.sentences[i], gold=True)


class Parser:
    """A trained model together with the decoder it parses with."""

    def __init__(self, model: LinearModel, config: TrainConfig,
                 report: TrainReport | None = None) -> None:
        self.model = model
        self.config = config
        self.report = report
        self.decoder = make_decoder(config.decoder, config.single_root)

    # -- training -------------------------------------------------------------------

    @classmethod
    def train(cls, train: Sequence[Sentence], config: TrainConfig,
              dev: Sequence[Sentence] | None = None, *, progress: bool = False) -> "Parser":
        """Fit the feature map and labels on ``train``, then the weights."""
        extractor = FeatureExtractor(FeatureConfig.from_json(config.features)).fit(train)
        config.features = extractor.config.to_json()
        labels = sorted({label for s in train for label in s.deprels[1:]})
        model = LinearModel(extractor, labels)
        parser = cls(model, config)
        trainer = make_trainer(config.trainer, epochs=config.epochs, seed=config.seed,
                               progress=progress, **config.trainer_options)
        evaluate = None
        if dev:
            def evaluate(weights: np.ndarray) -> dict:
                model.weights = weights
                scores = attachment_scores(dev, parser.parse(dev)).all_words
                return {"uas": scores["uas"], "las": scores["las"]}
        parser.report = trainer.fit(Examples(model, train), model, parser.decoder, dev=evaluate)
        return parser

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
        weights = self.model.weights
        nonzero = np.flatnonzero(weights)
        meta = {
            "features": self.model.extractor.to_json(),
            "labels": self.model.labels,
            "training": asdict(self.config),
            "report": self.report.to_json() if self.report else [],
        }
        arrays = {"weight_index": nonzero.astype(np.int64),
                  "weight_value": weights[nonzero].astype(np.float32)}
        model_file.save(path, model_file.ModelFile(meta, arrays))

    @classmethod
    def load(cls, path: str | Path) -> "Parser":
        contents = model_file.load(path)
        meta, arrays = contents.metadata, contents.arrays
        try:
            extractor = FeatureExtractor.from_json(meta["features"])
            model = LinearModel(extractor, meta["labels"])
            index = arrays["weight_index"]
            if index.size and (index.min() < 0 or index.max() >= model.dim):
                raise ValueError("weight index out of range")
            model.weights[index] = arrays["weight_value"]
            config = TrainConfig(**meta["training"])
        except (KeyError, TypeError, ValueError) as error:
            raise model_file.ModelFileError(f"{path}: damaged model file ({error})") from None
        return cls(model, config)
