"""``polyparse train``: a labeled parser (and its tokenizer, tagger and lemmatizer)
trained on a CoNLL-U or CoNLL-X treebank and saved as one model file."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from dataclasses import asdict

from polyparse.corpora.conllu_io import read_treebank
from polyparse.decoders import DECODERS
from polyparse.learning.mixing import check_mixable
from polyparse.learning.trainers import TRAINERS, make_trainer

from ..checks import UsageError, at_least, check_files, check_solver
from ..config import PrunerConfig, TaggerConfig
from ..recipes import PLAIN, Recipe, language, recipe_for
from .common import (add_dask_flag, add_treebank_flags, cache_dir, check_dask, cluster,
                     fetch_treebank, given, names)
from .flags import add_flags, chosen

log = logging.getLogger("polyparse")


def add(sub) -> None:
    p = sub.add_parser("train", help="train a parser on a treebank",
                       description="Train a labeled dependency parser on a CoNLL-U (or "
                                   "CoNLL-X) treebank and save it as one .npz model file. "
                                   "docs/options.md says more about each option.")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--train", metavar="FILE", help="training treebank")
    source.add_argument("--treebank", metavar="NAME",
                        help="a UD treebank by name (UD_English-EWT): its train and dev "
                             "fetched into the cache as by 'download', trained with its "
                             "language family's settings (options given win), dev scored")
    p.add_argument("--lang", metavar="CODE", default=None,
                   help="the treebank's language (ISO 639 code, as UD's file prefixes: "
                        "en, tr): trained with its language family's settings and its word "
                        "clusters, as with --treebank (options given win)")
    p.add_argument("--dev", metavar="FILE", help="dev treebank: UAS/LAS after every epoch")
    p.add_argument("--model", required=True, metavar="OUT", help="model file to write (.npz)")
    p.add_argument("--decoder", default=None, metavar="D",
                   help=f"decoder for training and parsing: {names(DECODERS)} (default "
                        f"{_default_decoders()})")
    p.add_argument("--order", choices=["1", "2", "full"], default=None,
                   help="parts scored: 1 = arcs; 2 = + grandparents and siblings; full = "
                        "2 + valency and non-projective arcs (default: the recipe's with "
                        f"--treebank, else {PLAIN.order})")
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
    p.add_argument("--morphology", action=argparse.BooleanOptionalAction, default=None,
                   help="features read XPOS refined by FEATS (XPOS|FEATS) wherever they read "
                        "XPOS: for morphologically rich languages (default: the recipe's "
                        "with --treebank, else off)")
    p.add_argument("--format", choices=["auto", "conllu", "conllx"], default="auto",
                   help="input format (default: from the file suffix)")
    p.add_argument("--no-tagger", action="store_true",
                   help="train no tagger: the parser learns from the gold UPOS/XPOS/LEMMA "
                        "(parse then needs tagged CoNLL-U input)")
    p.add_argument("--second-pass", action=argparse.BooleanOptionalAction, default=None,
                   help="fit a second-pass tagger, which sees each word's place in the "
                        "parsed tree and tags every parsed sentence again (default: as "
                        "the language's recipe says; on for Slavic languages and English)")
    p.add_argument("--relabel", action=argparse.BooleanOptionalAction, default=None,
                   help="fit a second-stage labeler, which labels the arcs of every parsed "
                        "tree again from the whole tree (default: as the language's recipe "
                        "says; on in every family's: Germanic, English, Slavic, Turkic)")
    p.add_argument("--no-ud-rules", action="store_true",
                   help="do not learn UD's validator rules (by default the model learns "
                        "those its treebank keeps and enforces them when it parses)")
    p.add_argument("--jackknife", type=int, default=10, metavar="K",
                   help="the parser learns from tags predicted by K-fold jackknifing "
                        "(default %(default)s)")
    p.add_argument("--tagger-epochs", type=int, default=None, metavar="N",
                   help=f"perceptron epochs of the tagger (default {TaggerConfig.epochs})")
    p.add_argument("--word-clusters", metavar="FILE", default=None,
                   help="Brown word clusters (Liang's paths format) for the tagger and "
                        "the parser (default with --lang or --treebank: the language's "
                        "from spaCy's lookups data, en/de/es, if installed)")
    p.add_argument("--no-word-clusters", action="store_true",
                   help="no word clusters, not even the language's")
    p.add_argument("--cluster-features", action=argparse.BooleanOptionalAction,
                   default=None,
                   help="the parser's features read the word clusters (Koo et al. "
                        "2008; default: on with --word-clusters)")
    p.add_argument("--checkpoint", metavar="FILE",
                   help="also save the model to FILE after every epoch")
    p.add_argument("--shards", type=int, default=None, metavar="K",
                   help="iterative parameter mixing: train on K shards, their weights "
                        "averaged after every epoch (ssg and perceptron)")
    add_dask_flag(p, "run the shards", "without --shards, one shard per worker thread")
    add_treebank_flags(p.add_argument_group("with --treebank"))
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
    recipe, code = treebank_recipe(args)
    given_clusters = args.word_clusters
    args.word_clusters, spacy_lang = word_clusters(args, code)
    config = train_config(args, recipe)
    check_files({"--train": args.train, "--dev": args.dev, "--word-clusters": given_clusters},
                {"--model": args.model, "--checkpoint": args.checkpoint})
    train, dev = (args.train, args.dev) if args.treebank is None else treebank_splits(args)
    if spacy_lang is not None:
        from polyparse.corpora.word_clusters import spacy_word_clusters

        spacy_word_clusters(spacy_lang, cache_dir(args))
        log.info("word clusters of %s: %s", spacy_lang, args.word_clusters)
    with cluster(args.dask) as client:
        parser = _train_with(args, config, client, train, dev)
    if args.treebank is not None and dev is not None:
        score_dev(parser, dev, args.format)


def treebank_recipe(args) -> tuple[Recipe, str | None]:
    """The recipe of the language family (:mod:`parser.recipes`) of ``--treebank`` or
    ``--lang``, and the language code; the plain defaults and None without either. The
    options that only ``--treebank`` takes are refused without it (``--cache`` also
    with ``--lang``), and ``--dev`` with it (the treebank has its own)."""
    from polyparse.corpora.download import TREEBANKS

    if args.treebank is None:
        given_flags = [flag for flag, value in (("--cache", args.cache if args.lang is None
                                                 else None),
                                                ("--base-url", args.base_url),
                                                ("--tag", args.tag)) if value is not None]
        if given_flags:
            raise UsageError(f"{', '.join(given_flags)}: for --treebank only")
        if args.lang is None:
            return PLAIN, None
        if not (args.lang.isascii() and args.lang.isalpha() and args.lang.islower()
                and 2 <= len(args.lang) <= 3):
            raise UsageError(f"--lang {args.lang}: not an ISO 639 language code (en, tr, "
                             "hsb)")
        code, name = args.lang, f"--lang {args.lang}"
    else:
        if args.dev is not None:
            raise UsageError("--dev: --treebank trains on the treebank's train split and "
                             "scores its own dev split")
        if args.lang is not None:
            raise UsageError("--lang: --treebank names the language")
        if args.treebank not in TREEBANKS:
            raise UsageError(f"--treebank {args.treebank}: unknown treebank; known: "
                             f"{', '.join(sorted(TREEBANKS))}")
        code, name = language(TREEBANKS[args.treebank]), args.treebank
    family, recipe = recipe_for(code)
    log.info("%s: language %s, %s", name, code,
             f"{family} recipe: {recipe.describe()}" if family else
             "in no family of parser/recipes.py: the plain defaults")
    return recipe, code


def word_clusters(args, code: str | None) -> tuple[str | None, str | None]:
    """``(path, lang)``: the word-cluster file of the run and, if it is still to be
    written from spaCy's lookups data (:func:`~corpora.word_clusters.
    spacy_word_clusters`, once the options are checked and the treebank is at hand), its
    language. The path is ``--word-clusters``; else, with a language ``code`` whose
    clusters spaCy's lookups data holds, where they go in the cache, if the package is
    installed (a note says how to install it if not); else None, and None with
    ``--no-word-clusters``."""
    from polyparse.corpora.word_clusters import (INSTALL, SPACY_LANGUAGES,
                                                 spacy_clusters_installed, spacy_clusters_path)

    if args.no_word_clusters:
        if args.word_clusters or args.cluster_features:
            raise UsageError("--no-word-clusters: drop --word-clusters and --cluster-features")
        return None, None
    if args.word_clusters or code not in SPACY_LANGUAGES:
        return args.word_clusters, None
    if not spacy_clusters_installed():
        log.warning("polyparse: note: no word clusters for %s: %s adds them", code, INSTALL)
        return None, None
    return str(spacy_clusters_path(code, cache_dir(args))), code


def treebank_splits(args) -> tuple[str, str | None]:
    """``--treebank``'s train and dev files in the cache, fetched if missing; a
    :class:`UsageError` naming the treebank and the URL it could not fetch, and none
    without a train split."""
    from urllib.parse import urlsplit

    from polyparse.corpora.download import DEFAULT_BASE_URL
    from polyparse.corpora.errors import DownloadError

    try:
        paths = {path.name.rsplit("-", 1)[-1].removesuffix(".conllu"): str(path)
                 for path in fetch_treebank(args, args.treebank, ("train", "dev"))}
    except DownloadError as error:
        host = urlsplit(args.base_url or DEFAULT_BASE_URL).netloc
        raise UsageError(f"cannot download treebank {args.treebank} from {host}: "
                         f"{error}") from None
    if "train" not in paths:
        raise UsageError(f"--treebank {args.treebank}: it has no train split")
    log.info("%s: %s", args.treebank, ", ".join(paths.values()))
    if "dev" not in paths:
        log.warning("polyparse: warning: %s has no dev split: nothing to score",
                    args.treebank)
    return paths["train"], paths.get("dev")


def score_dev(parser, dev: str, fmt: str) -> None:
    """Print the CoNLL 2018 scores of ``parser`` on ``dev`` as ``polyparse eval
    --model`` does, from the most honest input the parser takes."""
    from polyparse.corpora.conllu_io import read_conllu

    from ..honest_eval import default_source
    from .evaluate import score_parser

    gold = list(read_conllu(dev, fmt=fmt))
    components = frozenset(name for name in ("tokenizer", "tagger", "lemmatizer")
                           if getattr(parser, name) is not None)
    score_parser(parser, gold, dev, default_source(components, gold))


def train_config(args, recipe: Recipe = PLAIN):
    """The :class:`~parser.config.TrainConfig` of ``polyparse train``'s options over
    ``recipe``'s settings (:mod:`parser.recipes`; an option given wins), every
    option checked, alone and against the others (the decoder against the parts, the
    trainer's options against its epochs and parts, the feature sizes), before any file
    is read or any kernel compiled."""
    from polyparse.decoders.higher_order import PartsConfig
    from polyparse.features.extractor import FeatureConfig
    from polyparse.learning.relabeler import RelabelerOptions

    from ..config import MixingConfig, TrainConfig, config_decoder, default_decoder

    at_least(1, epochs=args.epochs, tagger_epochs=args.tagger_epochs, shards=args.shards,
             max_heads=args.max_heads)
    at_least(0, seed=args.seed)
    if not args.no_tagger:
        at_least(2, jackknife=args.jackknife)
    if args.cluster_features and not args.word_clusters:
        raise UsageError("--cluster-features: give the clusters with --word-clusters FILE")
    check_dask(args.dask)
    parts = PartsConfig(args.order or recipe.order,
                        consecutive_siblings=args.consecutive_siblings)
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
                                   morphology=recipe.morphology if args.morphology is None
                                   else args.morphology,
                                   clusters=bool(args.word_clusters)
                                   and args.cluster_features is not False),
            parts=parts,
            pruner=PrunerConfig(**given(max_heads=args.max_heads),
                                labeled=args.labeled_pruner),
            tagger=None if args.no_tagger else TaggerConfig(
                **asdict(recipe.tagger), **given(epochs=args.tagger_epochs),
                second_pass=recipe.second_pass if args.second_pass is None
                else args.second_pass),
            word_clusters=args.word_clusters,
            jackknife=args.jackknife, ud_rules=not args.no_ud_rules,
            relabeler=RelabelerOptions() if (recipe.relabel if args.relabel is None
                                             else args.relabel) else None,
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


def _train_with(args, config, client, train_path: str, dev_path: str | None):
    """``polyparse train`` on ``train_path`` (scored on ``dev_path`` after every epoch)
    once the options and files are checked (the shards on ``client``'s workers if it is
    not None): the :class:`Parser`, saved to ``--model``."""
    from dataclasses import replace

    from ..config import MixingConfig
    from ..pipeline import Parser
    from ..warmup import warm_kernels

    if client is not None and config.shards is None:
        shards = max(1, sum(client.nthreads().values()))
        log.info("training on %d shards, one per worker thread of the cluster", shards)
        config = replace(config, mixing=MixingConfig(shards))
    train = read_treebank(train_path, fmt=args.format, single_root=config.single_root)
    if config.tagger is not None and args.jackknife > len(train):
        raise UsageError(f"--jackknife {args.jackknife}: {train_path} has {len(train)} "
                         "sentence(s), fewer than the folds of the tagger's jackknifing")
    dev = (read_treebank(dev_path, fmt=args.format, single_root=config.single_root)
           if dev_path else None)
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
             ", ".join(["parser"] + [label for name, label in (
                 ("tokenizer", "tokenizer"), ("tagger", "tagger"), ("lemmatizer", "lemmatizer"),
                 ("retagger", "second-pass tagger"), ("relabeler", "second-stage labeler"))
                 if getattr(parser, name) is not None]))
    return parser
