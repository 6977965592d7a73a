"""``polyparse train``: a labeled parser (and its tokenizer, tagger and lemmatizer)
trained on a CoNLL-U or CoNLL-X treebank and saved as one model file."""

from __future__ import annotations

import logging
import sys
import time

from polyparse.corpora.conllu_io import read_treebank
from polyparse.decoders import DECODERS
from polyparse.learning.mixing import check_mixable
from polyparse.learning.trainers import TRAINERS, make_trainer

from ..checks import UsageError, at_least, check_files, check_solver
from ..config import PrunerConfig, TaggerConfig
from .common import add_dask_flag, check_dask, cluster, given, names
from .flags import add_flags, chosen

log = logging.getLogger("polyparse")


def add(sub) -> None:
    p = sub.add_parser("train", help="train a parser on a treebank",
                       description="Train a labeled dependency parser on a CoNLL-U (or "
                                   "CoNLL-X) treebank and save it as one .npz model file. "
                                   "docs/options.md says more about each option.")
    p.add_argument("--train", required=True, metavar="FILE", help="training treebank")
    p.add_argument("--dev", metavar="FILE", help="dev treebank: UAS/LAS after every epoch")
    p.add_argument("--model", required=True, metavar="OUT", help="model file to write (.npz)")
    p.add_argument("--decoder", default=None, metavar="D",
                   help=f"decoder for training and parsing: {names(DECODERS)} (default "
                        f"{_default_decoders()})")
    p.add_argument("--order", choices=["1", "2", "full"], default="1",
                   help="parts scored: 1 = arcs; 2 = + grandparents and siblings; full = "
                        "2 + valency and non-projective arcs (default %(default)s)")
    p.add_argument("--consecutive-siblings", action="store_true",
                   help="consecutive sibling parts instead of all sibling pairs")
    p.add_argument("--max-heads", type=int, default=None, metavar="N",
                   help="pruning: candidate heads kept per word (default "
                        f"{PrunerConfig.max_heads})")
    p.add_argument("--labeled-pruner", action="store_true",
                   help="prune with a labeled first-order model (default: an unlabeled "
                        "one, twice as fast)")
    p.add_argument("--trainer", default="ssg", choices=sorted(TRAINERS), metavar="T",
                   help=f"learning algorithm: {names(TRAINERS)} (default %(default)s)")
    p.add_argument("--epochs", type=int, default=10, metavar="N",
                   help="passes over the data (default %(default)s)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed; the same seed gives the same model (default "
                        "%(default)s)")
    p.add_argument("--multi-root", action="store_true",
                   help="allow several words attached to the root, as CoNLL-X data do "
                        "(default: exactly one, as UD requires)")
    p.add_argument("--bits", type=int, default=None,
                   help="log2 of the number of hashed part features (default: sized from "
                        "the training data, at most 24)")
    p.add_argument("--label-bits", type=int, default=None,
                   help="log2 of the number of hashed label features (default: sized from "
                        "the training data, at most 20)")
    p.add_argument("--morphology", action="store_true",
                   help="features read XPOS refined by FEATS (XPOS|FEATS) wherever they read "
                        "XPOS: for morphologically rich languages")
    p.add_argument("--format", choices=["auto", "conllu", "conllx"], default="auto",
                   help="input format (default: from the file suffix)")
    p.add_argument("--no-tagger", action="store_true",
                   help="train no tagger: the parser learns from the gold UPOS/XPOS/LEMMA "
                        "(parse then needs tagged CoNLL-U input)")
    p.add_argument("--no-ud-rules", action="store_true",
                   help="do not learn UD's validator rules (by default the model learns "
                        "those its treebank keeps and enforces them when it parses)")
    p.add_argument("--jackknife", type=int, default=10, metavar="K",
                   help="the parser learns from tags predicted by K-fold jackknifing "
                        "(default %(default)s)")
    p.add_argument("--tagger-epochs", type=int, default=None, metavar="N",
                   help=f"perceptron epochs of the tagger (default {TaggerConfig.epochs})")
    p.add_argument("--word-clusters", metavar="FILE", default=None,
                   help="Brown word clusters for the tagger, in Liang's paths format "
                        "('polyparse clusters en' writes English ones)")
    p.add_argument("--checkpoint", metavar="FILE",
                   help="also save the model to FILE after every epoch")
    p.add_argument("--shards", type=int, default=None, metavar="K",
                   help="iterative parameter mixing: train on K shards, their weights "
                        "averaged after every epoch (ssg and perceptron)")
    add_dask_flag(p, "run the shards", "without --shards, one shard per worker thread")
    add_flags(p, TRAINERS, "trainer options (each for the trainers in brackets, or all)")
    add_flags(p, DECODERS, "decoder options (each for the decoders in brackets)")
    p.set_defaults(run=run)


def _default_decoders() -> str:
    """Which decoder ``train`` takes for which parts (:func:`~parser.config.
    default_decoder`): ``mst for --order 1, ad3-exact for --order 2 and full, ...``."""
    from polyparse.decoders.higher_order import PartsConfig

    from ..config import default_decoder

    chosen_for: dict[str, list[str]] = {}
    for order in ("1", "2", "full"):
        chosen_for.setdefault(default_decoder(PartsConfig(order)), []).append(order)
    text = ", ".join(f"{decoder} for --order {' and '.join(orders)}"
                     for decoder, orders in chosen_for.items())
    consecutive = {default_decoder(PartsConfig(order, consecutive_siblings=True))
                   for order in ("2", "full")}
    return text + "".join(f", {decoder} with --consecutive-siblings"
                          for decoder in sorted(consecutive))


def run(args) -> None:
    config = train_config(args)
    check_files({"--train": args.train, "--dev": args.dev,
                 "--word-clusters": args.word_clusters},
                {"--model": args.model, "--checkpoint": args.checkpoint})
    with cluster(args.dask) as client:
        _train_with(args, config, client)


def train_config(args):
    """The :class:`~parser.config.TrainConfig` of ``polyparse train``'s options, every
    option checked, alone and against the others (the decoder against the parts, the
    trainer's options against its epochs and parts, the feature sizes), before any file
    is read or any kernel compiled."""
    from polyparse.decoders.higher_order import PartsConfig
    from polyparse.features.extractor import FeatureConfig

    from ..config import MixingConfig, TrainConfig, config_decoder, default_decoder

    at_least(1, epochs=args.epochs, tagger_epochs=args.tagger_epochs, shards=args.shards,
             max_heads=args.max_heads)
    at_least(0, seed=args.seed)
    if not args.no_tagger:
        at_least(2, jackknife=args.jackknife)
    if args.no_tagger and args.word_clusters:
        raise UsageError("--word-clusters are features of the tagger: drop --no-tagger")
    check_dask(args.dask)
    parts = PartsConfig(args.order, consecutive_siblings=args.consecutive_siblings)
    decoder = args.decoder or default_decoder(parts)
    if decoder not in DECODERS:
        raise UsageError(f"unknown decoder {decoder!r}; choose from {', '.join(sorted(DECODERS))}")
    try:
        config = TrainConfig(
            trainer=args.trainer, decoder=decoder,
            single_root=not args.multi_root, epochs=args.epochs, seed=args.seed,
            trainer_options=chosen(args, TRAINERS, args.trainer),
            decoder_options=chosen(args, DECODERS, decoder),
            features=FeatureConfig(**given(bits=args.bits, label_bits=args.label_bits),
                                   morphology=args.morphology),
            parts=parts,
            pruner=PrunerConfig(**given(max_heads=args.max_heads),
                                labeled=args.labeled_pruner),
            tagger=None if args.no_tagger else TaggerConfig(**given(
                epochs=args.tagger_epochs, clusters=args.word_clusters)),
            jackknife=args.jackknife, ud_rules=not args.no_ud_rules,
            mixing=None if args.shards is None else MixingConfig(args.shards))
        config_decoder(config)
        trainer = make_trainer(config.trainer, epochs=config.epochs, seed=config.seed,
                               **config.trainer_options)
        trainer.check_parts(config.parts)
        if args.shards is not None or args.dask is not None:
            check_mixable(trainer)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_solver(config.decoder_options.get("solver"))
    return config


def _train_with(args, config, client) -> None:
    """``polyparse train`` once the options and files are checked (the shards on
    ``client``'s workers if it is not None)."""
    from dataclasses import replace

    from ..config import MixingConfig
    from ..pipeline import Parser
    from ..warmup import warm_kernels

    if client is not None and config.shards is None:
        shards = max(1, sum(client.nthreads().values()))
        log.info("training on %d shards, one per worker thread of the cluster", shards)
        config = replace(config, mixing=MixingConfig(shards))
    train = read_treebank(args.train, fmt=args.format, single_root=config.single_root)
    if config.tagger is not None and args.jackknife > len(train):
        raise UsageError(f"--jackknife {args.jackknife}: {args.train} has {len(train)} "
                         "sentence(s), fewer than the folds of the tagger's jackknifing")
    dev = (read_treebank(args.dev, fmt=args.format, single_root=config.single_root)
           if args.dev else None)
    start = time.perf_counter()
    try:
        warm_kernels(train, config, dev)
        parser = Parser.train(train, config, dev, progress=sys.stderr.isatty(),
                              checkpoint=args.checkpoint, client=client)
    except ValueError as error:
        raise UsageError(str(error)) from None
    parser.save(args.model)
    log.info("trained on %d sentences in %.1f s; model written to %s (%s)", len(train),
             time.perf_counter() - start, args.model,
             ", ".join(["parser"] + [name for name in ("tokenizer", "tagger",
                                                           "lemmatizer")
                                     if getattr(parser, name) is not None]))
