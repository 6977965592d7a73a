"""Training a parser (:meth:`Parser.train <parser.pipeline.Parser.train>`): fit the
tokenizer, tagger, lemmatizer, feature map and pruner (:func:`parser.training.prepare`),
then the weights by the configured trainer, in this process or by parameter mixing on
shards (one after the other, or on a Dask cluster), scoring the dev set and saving a
checkpoint after every epoch; then learn the UD rules that hold in the training data."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Sequence

from polyparse.corpora.sentence import Sentence
from polyparse.learning.examples import Examples
from polyparse.learning.mixing import ParameterMixing, SerialShards, check_mixable
from polyparse.learning.trainers import TrainReport, make_trainer

from . import training
from .config import TrainConfig, config_decoder
from .evaluate import attachment_scores
from .ud_rules import UDRules, learn_rules

log = logging.getLogger("polyparse.train")


def train(cls: type, train: Sequence[Sentence], config: TrainConfig,
          dev: Sequence[Sentence] | None = None, *, progress: bool = False,
          checkpoint: str | Path | None = None, client=None):
    """A parser of class ``cls`` (:class:`~parser.pipeline.Parser`) trained on ``train``:
    fit the tokenizer, tagger, lemmatizer, feature map and pruner
    (:func:`parser.training.prepare`), then the weights by ``config.trainer``.

    With ``config.mixing`` (a :class:`~parser.config.MixingConfig` of ``K`` shards) the
    weights are trained by iterative parameter mixing (McDonald, Hall and Mann 2010;
    :mod:`learning.mixing`) on ``K`` shards: on the workers of the Dask ``client``
    (:class:`parser.cluster.DaskShards`) if one is given, else one after the other in
    this process, with the same weights. The rest of training runs here.

    ``dev`` (gold trees) is parsed after every epoch, with the tags the tagger
    predicts for it when there is one. With ``checkpoint``, the parser with the
    weights so far is saved there after every epoch, so that a long run that is
    stopped still leaves a model.
    """
    config_decoder(config)
    trainer = make_trainer(config.trainer, epochs=config.epochs, seed=config.seed,
                           progress=progress, **config.trainer_options)
    trainer.check_parts(config.parts)
    if config.mixing is not None:
        check_mixable(trainer)
    elif client is not None:
        raise ValueError("training on a Dask cluster is by parameter mixing: give the "
                         "number of shards (config.mixing)")
    prepared = training.prepare(train, config, dev, progress=progress)
    parser = cls(prepared.model, config, TrainReport(), tokenizer=prepared.tokenizer,
                 tagger=prepared.tagger, lemmatizer=prepared.lemmatizer,
                 retagger=prepared.retagger, relabeler=prepared.relabeler)
    with contextlib.ExitStack() as stack:
        if config.mixing is None:
            epochs = trainer.run(Examples(prepared.model, prepared.train),
                                 prepared.model, parser.decoder)
        else:
            if client is None:
                runner = SerialShards(config.trainer, config.trainer_options,
                                      config.seed, prepared.model, parser.decoder,
                                      prepared.train, config.shards)
            else:
                from .cluster import DaskShards        # Dask's import: 0.3 s, when used
                runner = stack.enter_context(DaskShards(client, parser, prepared.train))
            epochs = ParameterMixing(trainer, config.shards, runner).run(prepared.model)
        _run_epochs(parser, epochs, prepared, dev, checkpoint)
    parser.ud_rules = learn_rules(train) if config.ud_rules else UDRules()
    if parser.ud_rules.rules:
        log.info("UD rules holding in the training data: %d of %d (%s)",
                 len(parser.ud_rules.rules), len(parser.ud_rules.counts),
                 ", ".join(parser.ud_rules.rules))
        if checkpoint is not None:
            parser.save(checkpoint)
    return parser


def _run_epochs(parser, epochs, prepared, dev, checkpoint) -> None:
    """Run the epochs of :func:`train`: dev scores and checkpoints after each."""
    for stats in epochs:
        if dev:
            scores = attachment_scores(dev, parser.parse(prepared.dev)).all_words
            stats.dev = {"uas": scores["uas"], "las": scores["las"]}
            log.info("epoch %d: dev UAS %.2f, LAS %.2f", stats.epoch, stats.dev["uas"],
                     stats.dev["las"])
        parser.report.epochs.append(stats)
        if checkpoint is not None:
            parser.save(checkpoint)
