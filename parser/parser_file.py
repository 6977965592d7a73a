"""What of a parser goes into a model file and back (:mod:`parser.model_file` is the
format: numpy arrays plus JSON metadata, never pickle).

The parser's weights and its pruner's are stored sparsely; its tokenizer, tagger,
lemmatizer, second-pass tagger and second-stage labeler, when it has them, put their
arrays under the prefixes ``tokenizer_``, ``tagger_``, ``lemmatizer_``, ``retagger_`` and
``relabeler_`` and their JSON in the metadata, beside the training
settings (the word clusters that the parser's features read are the tagger's
``tagger_cluster_*`` arrays when it has the same ones, else ``clusters_*``) (:class:`~parser.config.TrainConfig`, which names the trainer and its declared
options) and the training report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from polyparse.corpora.word_clusters import ClusterTable
from polyparse.features.extractor import FeatureExtractor
from polyparse.learning.model import LinearModel
from polyparse.learning.pruning import Pruner
from polyparse.learning.relabeler import Relabeler
from polyparse.learning.trainers import TrainReport

from . import model_file
from .config import ConfigError, TrainConfig
from .text import Lemmatizer, Tagger, Tokenizer
from .ud_rules import UDRules



@dataclass
class Stored:
    """A parser's parts, as written to a model file and read back."""

    model: LinearModel
    config: TrainConfig
    report: TrainReport
    tokenizer: Tokenizer | None
    tagger: Tagger | None
    lemmatizer: Lemmatizer | None
    ud_rules: UDRules | None = None
    retagger: Tagger | None = None
    relabeler: Relabeler | None = None


def write(parser: Stored, path: str | Path) -> None:
    """Write a parser's parts (its tokenizer, tagger and lemmatizer if any) to one model
    file, atomically."""
    pruner = parser.model.pruner
    meta = {
        "features": parser.model.extractor.to_json(),
        "labels": parser.model.labels,
        "training": parser.config.to_json(),
        "pruner": pruner.to_json() if pruner else None,
        "report": parser.report.to_json() if parser.report else [],
        "tokenizer": None,
        "tagger": None,
        "lemmatizer": None,
        "retagger": None,
        "relabeler": None,
        # the UD validator rules learned from the training treebank (parser.ud_rules);
        # a file without this entry has none
        "ud_rules": parser.ud_rules.to_json(),
    }
    arrays = _sparse_weights("", parser.model.weights)
    if pruner:
        arrays.update(_sparse_weights("pruner_", pruner.model.weights))
    if parser.tokenizer is not None:
        meta["tokenizer"], tokenizer_arrays = parser.tokenizer.to_json()
        arrays.update(_prefixed("tokenizer_", tokenizer_arrays))
    if parser.tagger is not None:
        meta["tagger"], tagger_arrays = parser.tagger.to_arrays()
        arrays.update(_prefixed("tagger_", tagger_arrays))
    clusters = parser.model.extractor.clusters
    if clusters is not None and (parser.tagger is None
                                 or parser.tagger.cluster_table_ is not clusters):
        arrays.update(_prefixed("clusters_", clusters.to_arrays()))
    if parser.lemmatizer is not None:
        meta["lemmatizer"], lemmatizer_arrays = parser.lemmatizer.to_arrays()
        arrays.update(_prefixed("lemmatizer_", lemmatizer_arrays))
    if parser.retagger is not None:
        meta["retagger"], retagger_arrays = parser.retagger.to_arrays()
        arrays.update(_prefixed("retagger_", retagger_arrays))
    if parser.relabeler is not None:
        meta["relabeler"], relabeler_arrays = parser.relabeler.to_arrays()
        arrays.update(_prefixed("relabeler_", relabeler_arrays))
    model_file.save(path, model_file.ModelFile(meta, arrays))


def read(path: str | Path) -> Stored:
    """Read a model file; one written before tokenizers, taggers and lemmatizers were
    stored has none. :class:`~parser.model_file.ModelFileError` if it is damaged."""
    contents = model_file.load(path)
    meta, arrays = contents.metadata, contents.arrays
    config = stored_config(meta, path)
    try:
        tagger = None
        if meta.get("tagger"):
            tagger = Tagger.from_arrays(meta["tagger"], _unprefixed("tagger_", arrays))
        clusters = None
        if meta["features"]["config"].get("clusters"):
            own = _unprefixed("clusters_", arrays)
            clusters = ClusterTable.from_arrays(own) if own else tagger.cluster_table_
        extractor = FeatureExtractor.from_json(meta["features"], clusters)
        pruner = None
        if meta["pruner"]:
            # files written before unlabeled pruners have labeled ones
            pruner_labels = meta["labels"] if meta["pruner"].get("labeled", True) else []
            pruner_model = LinearModel(extractor, pruner_labels,
                                       _load_weights(extractor, pruner_labels, arrays,
                                                     "pruner_"))
            pruner = Pruner.from_json(pruner_model, meta["pruner"])
        model = LinearModel(extractor, meta["labels"],
                            _load_weights(extractor, meta["labels"], arrays, ""),
                            parts=config.parts, pruner=pruner)
        tokenizer = lemmatizer = None
        if meta.get("tokenizer"):
            tokenizer = Tokenizer.from_json(meta["tokenizer"], _unprefixed("tokenizer_", arrays))
        if meta.get("lemmatizer") and tagger is not None:
            lemmatizer = Lemmatizer.from_arrays(meta["lemmatizer"],
                                                _unprefixed("lemmatizer_", arrays))
        retagger = None
        if meta.get("retagger"):
            retagger = Tagger.from_arrays(meta["retagger"], _unprefixed("retagger_", arrays))
        relabeler = None
        if meta.get("relabeler"):
            relabeler = Relabeler.from_arrays(meta["relabeler"],
                                              _unprefixed("relabeler_", arrays))
        report = TrainReport.from_json(meta.get("report", []))
        ud_rules = UDRules.from_json(meta.get("ud_rules"))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise model_file.ModelFileError(f"{path}: damaged model file ({error})") from None
    return Stored(model, config, report, tokenizer, tagger, lemmatizer, ud_rules, retagger,
                  relabeler)


def write_tokenizer(tokenizer: Tokenizer, path: str | Path) -> None:
    """Write ``tokenizer`` alone to a model file that :func:`read_tokenizer` reads (its
    metadata and arrays as :func:`write` stores them; no parser)."""
    meta, arrays = tokenizer.to_json()
    model_file.save(path, model_file.ModelFile({"tokenizer": meta},
                                               _prefixed("tokenizer_", arrays)))


def read_tokenizer(path: str | Path) -> Tokenizer | None:
    """The tokenizer of a model file (of :func:`write` or :func:`write_tokenizer`), or
    None if it has none; :class:`~parser.model_file.ModelFileError` if it is damaged."""
    contents = model_file.load(path)
    meta = contents.metadata.get("tokenizer")
    if not meta:
        return None
    try:
        return Tokenizer.from_json(meta, _unprefixed("tokenizer_", contents.arrays))
    except (KeyError, TypeError, ValueError) as error:
        raise model_file.ModelFileError(f"{path}: damaged tokenizer ({error})") from None


def stored_config(meta: dict, path: str | Path) -> TrainConfig:
    """The training settings in the metadata ``meta`` of the model file at ``path``; a
    :class:`~parser.model_file.ModelFileError` naming the file and the setting if this
    polyparse does not take one of them."""
    try:
        return TrainConfig.from_json(meta["training"])
    except ConfigError as error:
        raise model_file.ModelFileError(f"{path}: cannot read its training settings: "
                                        f"{error}") from None
    except (KeyError, TypeError, AttributeError) as error:
        raise model_file.ModelFileError(f"{path}: damaged model file ({error})") from None


def _prefixed(prefix: str, arrays: dict) -> dict:
    return {prefix + name: array for name, array in arrays.items()}


def _unprefixed(prefix: str, arrays: dict) -> dict:
    return {name[len(prefix):]: array for name, array in arrays.items()
            if name.startswith(prefix)}


def _sparse_weights(prefix: str, weights: np.ndarray) -> dict:
    nonzero = np.flatnonzero(weights)
    return {f"{prefix}weight_index": nonzero.astype(np.int64),
            f"{prefix}weight_value": weights[nonzero].astype(np.float32)}


def _load_weights(extractor: FeatureExtractor, labels: list, arrays: dict,
                  prefix: str) -> np.ndarray:
    """The dense weight vector stored under ``prefix`` of a model with ``labels``, in the
    file's float32 (a :class:`LinearModel` scores with it as with float64, to the last
    bit, in half the memory: 0.28 GB less each for an order-2 en_ewt model and its
    pruner)."""
    dim = LinearModel.dimension(extractor, len(labels))
    index = arrays[f"{prefix}weight_index"]
    if index.size and (index.min() < 0 or index.max() >= dim):
        raise ValueError("weight index out of range")
    weights = np.zeros(dim, dtype=np.float32)
    weights[index] = arrays[f"{prefix}weight_value"]
    return weights
