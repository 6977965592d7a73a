"""``polyparse train``: a labeled parser (and its tokenizer, tagger and lemmatizer)
trained on a CoNLL-U or CoNLL-X treebank and saved as one model file."""

from __future__ import annotations

import logging
import sys
import time

from polyparse.corpora.conllu_io import read_treebank
from polyparse.decoders import DECODERS
from polyparse.learning.mixing import MIXING, check_mixable
from polyparse.learning.trainers import TRAINERS, make_trainer

from ..checks import UsageError, at_least, check_files, check_solver
from .common import add_dask_flag, check_dask, cluster, given
from .flags import add_flags, chosen

log = logging.getLogger("polyparse")


def add(sub) -> None:
    p = sub.add_parser("train", help="train a parser on a treebank",
                       description="Train a labeled dependency parser on a CoNLL-U (or "
                                   "CoNLL-X) treebank and save it as one .npz model file.")
    p.add_argument("--train", required=True, metavar="FILE", help="training treebank")
    p.add_argument("--dev", metavar="FILE", help="dev treebank: UAS/LAS after every epoch")
    p.add_argument("--model", required=True, metavar="OUT", help="model file to write (.npz)")
    p.add_argument("--decoder", default=None, help="decoder: mst (non-projective; default "
                   "for --order 1), eisner (projective), ad3-exact (exact, branch and bound "
                   "on AD3's bounds; default for --order 2 and full with all-pairs "
                   "siblings), ilp (exact; default with consecutive siblings), lp (LP "
                   "relaxation + MST rounding + local search) or ad3 (the same relaxation "
                   "by AD3; orders 1, 2 and full with all-pairs siblings)")
    p.add_argument("--order", choices=["1", "2", "full"], default="1",
                   help="parts scored: 1 = arcs; 2 = + grandparents and siblings; full = "
                        "2 + valency and non-projective arcs (default 1)")
    p.add_argument("--consecutive-siblings", action="store_true",
                   help="consecutive sibling parts instead of all sibling pairs")
    p.add_argument("--max-heads", type=int, default=None,
                   help="pruning: candidate heads kept per word (default 10)")
    p.add_argument("--labeled-pruner", action="store_true",
                   help="pruning: a labeled first-order model (by default it is unlabeled, "
                        "as TurboParser's: half the time; it kept 0.15 (en_ewt) and 0.4 "
                        "(tr_imst) points fewer gold heads, with the same dev UAS within 0.1)")
    p.add_argument("--trainer", default="ssg", choices=sorted(TRAINERS), metavar="T",
                   help="trainer: " + "; ".join(f"{name}: {_summary(cls)}"
                                                 for name, cls in sorted(TRAINERS.items())))
    p.add_argument("--epochs", type=int, default=10, help="passes over the data (default 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0): same seed, "
                   "same model")
    p.add_argument("--multi-root", action="store_true",
                   help="allow several words attached to the root (CoNLL-X data); by "
                        "default exactly one, as Universal Dependencies requires")
    p.add_argument("--bits", type=int, default=None,
                   help="log2 of the number of hashed part features (default: sized from "
                        "the training data, 8 slots per distinct gold feature, at most 24)")
    p.add_argument("--label-bits", type=int, default=None,
                   help="log2 of the number of hashed label features (default: sized from "
                        "the training data, a slot per distinct feature, at most 20)")
    p.add_argument("--morphology", action="store_true",
                   help="features read the fine tag refined by the morphological features "
                        "(XPOS|FEATS) wherever they read XPOS: for morphologically rich "
                        "languages (tr_imst order 2: +1.85 dev UAS, +2.5 LAS)")
    p.add_argument("--format", choices=["auto", "conllu", "conllx"], default="auto",
                   help="input format (default: from the file suffix)")
    p.add_argument("--no-tagger", action="store_true",
                   help="train no tagger: the parser learns from the gold UPOS/XPOS/LEMMA of "
                        "the treebank, as before (parse then needs tagged CoNLL-U input)")
    p.add_argument("--no-ud-rules", action="store_true",
                   help="do not learn UD's validator rules from the training treebank (by "
                        "default a model trained on UD data learns those its data keeps "
                        "and enforces them when it parses)")
    p.add_argument("--jackknife", type=int, default=10, metavar="K",
                   help="the parser is trained on tags predicted by K-fold jackknifing "
                        "(default 10)")
    p.add_argument("--tagger-epochs", type=int, default=None, metavar="N",
                   help="perceptron epochs of the tagger (default 8)")
    p.add_argument("--word-clusters", metavar="FILE", default=None,
                   help="Brown word clusters from unlabelled text for the tagger's features, "
                        "one 'bit string TAB word [TAB count]' per line (Liang's paths "
                        "format); 'polyparse download-clusters en' fetches English ones")
    p.add_argument("--checkpoint", metavar="FILE",
                   help="also save the model after every epoch to FILE, so that a long "
                        "run that is stopped leaves a usable model")
    p.add_argument("--shards", type=int, default=None, metavar="K",
                   help="train by iterative parameter mixing (McDonald, Hall and Mann "
                        "2010) on K shards of the training set, their weights averaged "
                        "after every epoch (ssg and perceptron); the shards run one after "
                        "the other here, or side by side with --dask, with the same model")
    add_dask_flag(p, "run the shards of --shards on the workers of the Dask scheduler at "
                     "ADDRESS (host:port), or of N local worker processes (local:N); "
                     "without --shards, one shard per worker thread")
    add_flags(p, TRAINERS, "trainer options (each for the trainers in brackets, or all)")
    add_flags(p, DECODERS, "decoder options (each for the decoders in brackets)")
    p.set_defaults(run=run)


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
    from polyparse.features.extractor import FeatureConfig

    from ..config import TrainConfig, config_decoder, default_decoder

    at_least(1, epochs=args.epochs, tagger_epochs=args.tagger_epochs, shards=args.shards,
             max_heads=args.max_heads)
    at_least(0, seed=args.seed)
    if not args.no_tagger:
        at_least(2, jackknife=args.jackknife)
    if args.no_tagger and args.word_clusters:
        raise UsageError("--word-clusters are features of the tagger: drop --no-tagger")
    check_dask(args.dask)
    parts = dict(order=args.order, **given(consecutive_siblings=args.consecutive_siblings
                                           or None))
    decoder = args.decoder or default_decoder(parts)
    if decoder not in DECODERS:
        raise UsageError(f"unknown decoder {decoder!r}; choose from {', '.join(sorted(DECODERS))}")
    try:
        config = TrainConfig(
            trainer=args.trainer, decoder=decoder,
            single_root=not args.multi_root, epochs=args.epochs, seed=args.seed,
            trainer_options=chosen(args, TRAINERS, args.trainer),
            decoder_options=chosen(args, DECODERS, decoder),
            features=given(bits=args.bits, label_bits=args.label_bits,
                           morphology=args.morphology or None),
            parts=parts,
            pruner=given(max_heads=args.max_heads, labeled=args.labeled_pruner or None),
            tagger=None if args.no_tagger else given(epochs=args.tagger_epochs,
                                                     clusters=args.word_clusters),
            jackknife=args.jackknife, ud_rules=not args.no_ud_rules,
            mixing=None if args.shards is None else {"shards": args.shards, "mixing": MIXING})
        config_decoder(config)
        trainer = make_trainer(config.trainer, epochs=config.epochs, seed=config.seed,
                               **config.trainer_options)
        trainer.check_parts(config.parts)
        if args.shards is not None or args.dask is not None:
            check_mixable(trainer)
        FeatureConfig(**config.features)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_solver(config.decoder_options.get("solver"))
    return config


def _train_with(args, config, client) -> None:
    """``polyparse train`` once the options and files are checked (the shards on
    ``client``'s workers if it is not None)."""
    from dataclasses import replace

    from ..pipeline import Parser
    from ..warmup import warm_kernels

    if client is not None and config.shards is None:
        shards = max(1, sum(client.nthreads().values()))
        log.info("training on %d shards, one per worker thread of the cluster", shards)
        config = replace(config, mixing={"shards": shards, "mixing": MIXING})
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


def _summary(cls) -> str:
    """The first sentence of a component's docstring."""
    return (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ").rstrip(".")
