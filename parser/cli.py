"""The ``polyparse`` command: train, parse, draw, serve, eval, gap, download,
download-clusters.

Every expected failure (bad input, a missing or damaged model, a bad option) ends with
one line ``polyparse: error: FILE:LINE: what is wrong`` on stderr and exit status 2,
never a traceback; every output path is checked to be writable before any work starts.
Outputs are written to a temporary file and renamed, so nothing on disk is half-written
or destroyed; SIGTERM and SIGHUP stop a run as Ctrl-C does (the temporary file removed,
exit status 128 + the signal's number, one line on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from pathlib import Path

from polyparse.corpora.conllu_io import (CONLLX_SUFFIXES, read_conllu, read_treebank,
                                         write_conllu)
from polyparse.corpora.errors import CorpusError
from polyparse.corpora.files import (OutputError, atomic_directory, atomic_write,
                                     remove_unfinished)
from polyparse.corpora.sentence import MAX_SENTENCE_WORDS
from polyparse.corpora.signals import stop_behind, stop_signals_raise

from polyparse.decoders import DECODERS, make_decoder
from polyparse.learning.mixing import MIXING, check_mixable
from polyparse.learning.trainers import TRAINERS, make_trainer

from .checks import ModelSettings, UsageError, at_least, check_files, check_solver
from .flags import add_flags, chosen
from .honest_eval import SOURCES, default_source, missing_components, parsed, system_input
from .model_file import ModelFileError
from .progress import Tally, count_sentences, showing_bar, tracked, visible_characters

log = logging.getLogger("polyparse")


# -- train ---------------------------------------------------------------------------

def _add_train(sub) -> None:
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
    _add_dask_flag(p, "run the shards of --shards on the workers of the Dask scheduler at "
                      "ADDRESS (host:port), or of N local worker processes (local:N); "
                      "without --shards, one shard per worker thread")
    add_flags(p, TRAINERS, "trainer options (each for the trainers in brackets, or all)")
    add_flags(p, DECODERS, "decoder options (each for the decoders in brackets)")
    p.set_defaults(run=_train)


def _train(args) -> None:
    config = _train_config(args)
    check_files({"--train": args.train, "--dev": args.dev,
                 "--word-clusters": args.word_clusters},
                {"--model": args.model, "--checkpoint": args.checkpoint})
    with _cluster(args.dask) as client:
        _train_with(args, config, client)


def _train_config(args):
    """The :class:`~parser.config.TrainConfig` of ``polyparse train``'s options, every
    option checked, alone and against the others (the decoder against the parts, the
    trainer's options against its epochs and parts, the feature sizes), before any file
    is read or any kernel compiled."""
    from polyparse.features.extractor import FeatureConfig

    from .config import TrainConfig, config_decoder, default_decoder

    at_least(1, epochs=args.epochs, tagger_epochs=args.tagger_epochs, shards=args.shards,
             max_heads=args.max_heads)
    at_least(0, seed=args.seed)
    if not args.no_tagger:
        at_least(2, jackknife=args.jackknife)
    if args.no_tagger and args.word_clusters:
        raise UsageError("--word-clusters are features of the tagger: drop --no-tagger")
    _check_dask(args.dask)
    parts = dict(order=args.order, **_given(consecutive_siblings=args.consecutive_siblings
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
            features=_given(bits=args.bits, label_bits=args.label_bits,
                            morphology=args.morphology or None),
            parts=parts,
            pruner=_given(max_heads=args.max_heads, labeled=args.labeled_pruner or None),
            tagger=None if args.no_tagger else _given(epochs=args.tagger_epochs,
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

    from .pipeline import Parser
    from .warmup import warm_kernels

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


def _given(**options) -> dict:
    """The options that were given on the command line."""
    return {k: v for k, v in options.items() if v is not None}


def _summary(cls) -> str:
    """The first sentence of a component's docstring."""
    return (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ").rstrip(".")


# -- parse ---------------------------------------------------------------------------

TEXT_SUFFIXES = frozenset({".txt"})


def _add_parse(sub) -> None:
    p = sub.add_parser("parse", help="parse raw text or CoNLL-U with a trained model",
                       description="Parse raw text (--text, or --format text): it is split "
                                   "into sentences and tokens, tagged, lemmatized and parsed, "
                                   "and written "
                                   "as CoNLL-U with # sent_id and # text. Or parse CoNLL-U: "
                                   "HEAD and DEPREL are predicted (LEMMA, UPOS, XPOS and FEATS "
                                   "too with --retag); every other column, comment, multiword-"
                                   "token line and empty node is written back unchanged.")
    p.add_argument("--model", required=True, metavar="M", help="model file (.npz)")
    _add_input_flags(p)
    p.add_argument("--output", metavar="FILE", help="output (default: standard output)")
    p.add_argument("--retag", action="store_true",
                   help="CoNLL-U input: replace LEMMA, UPOS, XPOS and FEATS by the model's "
                        "tagger and lemmatizer (by default the given ones are kept)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="parse on N processes (default 1); the output is the same")
    _add_dask_flag(p, "parse chunks of sentences on the workers of the Dask scheduler at "
                      "ADDRESS (host:port), or of a cluster of N local worker processes "
                      "(local:N); the output is the same as with --jobs 1")
    p.add_argument("--kbest", type=int, default=None, metavar="K",
                   help="write each sentence K times, its K best trees in order (fewer "
                        "if it has fewer), each copy with the comments '# kbest_rank = r' "
                        "and '# kbest_score = s' (the model's score of the labeled tree); "
                        "trees that keep the UD rules and --constraints/--keep-given, the "
                        "first the tree parse writes without --kbest; exact with an exact "
                        "decoder (mst, ilp, ad3-exact), approximate with lp and ad3")
    p.add_argument("--certify", action="store_true",
                   help="add to each sentence the comment '# decoding = KIND; ...' saying "
                        "how its tree was decoded (exact, lp-integral, mst, eisner: optimal; "
                        "rounded, with the upper bound, score and gap; time-limit, with the "
                        "stage) and print on stderr the share certified optimal")
    p.add_argument("--confidence", action="store_true",
                   help="add HeadProb=p|DeprelProb=q to every word's MISC: the probability "
                        "of its head (matrix-tree marginal of the arc scores under the given "
                        "and forbidden arcs; the pruner's at higher orders) and of its label "
                        "given that arc (CoNLL-U only), and the comment '# confidence = ...' "
                        "naming what they do not account for (UD rules, label constraints, "
                        "higher-order parts)")
    p.add_argument("--no-ud-rules", action="store_true",
                   help="do not enforce the UD validator rules the model learned from its "
                        "training treebank (one root, at most one subject and object per "
                        "head, function words as leaves, projective punctuation, relation/"
                        "UPOS agreement, ...; see the README); by default they are, with "
                        "labels decoded together with the tree")
    p.add_argument("--constraints", metavar="FILE",
                   help="a constraints file: lines 'forbid HEAD -> DEP' and 'forbid-label "
                        "LABEL [DEP]' (word patterns: FORM, form=, lemma=, upos=, xpos=, *, "
                        "ROOT); see the README")
    p.add_argument("--keep-given", action="store_true",
                   help="CoNLL-U input: keep the HEAD and DEPREL the input gives ('_' where "
                        "the parser is to decide) and parse the rest around them")
    _add_decoding_flags(p)
    p.set_defaults(run=_parse)


def _add_input_flags(p) -> None:
    """The input of ``parse`` and ``draw``: ``--text``, ``--input``, ``--format`` and
    ``--max-words``."""
    p.add_argument("--text", metavar="TEXT", help="raw text to parse (instead of --input)")
    p.add_argument("--input", metavar="FILE", help="input (default: standard input)")
    p.add_argument("--format", choices=["auto", "conllu", "conllx", "text"], default="auto",
                   help="input format: text is plain text (paragraphs separated by blank "
                        "lines); default: from the file suffix (.txt: text, .conll/.conllx: "
                        "CoNLL-X, else CoNLL-U; CoNLL-U on standard input)")
    _add_max_words_flag(p)


def _add_max_words_flag(p) -> None:
    p.add_argument("--max-words", type=int, default=MAX_SENTENCE_WORDS, metavar="N",
                   help="raw text: cut a sentence longer than N words where the sentence "
                        f"model likes it best (default {MAX_SENTENCE_WORDS}; 0: never), so "
                        "that text without punctuation does not become one sentence")


def _add_lp_max_words_flag(p) -> None:
    from .views import DEFAULT_LP_MAX_WORDS

    p.add_argument("--lp-max-words", type=int, default=DEFAULT_LP_MAX_WORDS, metavar="N",
                   help="--lp: the LP of a sentence longer than N words is not solved (a "
                        "note says so), as an unpruned first-order LP grows as n^3: 5 s and "
                        f"0.8 GB at 60 words (default {DEFAULT_LP_MAX_WORDS}; 0: no cap)")


def _lp_max_words(args) -> int | None:
    at_least(0, lp_max_words=args.lp_max_words)
    return args.lp_max_words or None


def _add_decoding_flags(p) -> None:
    """How ``parse``, ``draw`` and ``serve`` decode: ``--confidence-temperature``,
    ``--decoder`` and the decoders' options."""
    p.add_argument("--confidence-temperature", default=None, metavar="T[,T_LABEL]",
                   help="temperatures dividing the arc scores and the label scores for "
                        "--confidence (one value: both; default 1), fitted on held-out "
                        "data as eval/confidence.py does")
    p.add_argument("--decoder", default=None, metavar="D",
                   help="decode with D (mst, eisner, lp, ad3, ilp) instead of the decoder the "
                        "model was trained with; it must handle the model's parts (order 1: "
                        "any; higher orders: lp or ilp; order 2 with all-pairs siblings: "
                        "also ad3)")
    add_flags(p, DECODERS, "decoder options (with --decoder, or for the model's decoder; "
                           "each for the decoders in brackets)")


def _add_dask_flag(p, text: str) -> None:
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help=text + " (needs pip install 'polyparse[dask]')")


def _check_dask(address: str | None) -> None:
    """Refuse ``--dask`` without Dask installed, or a bad ``local:N``, before any work
    (the scheduler itself is reached once the files are checked, :func:`_cluster`)."""
    if address is None:
        return
    from .cluster import ClusterError, check_address

    try:
        check_address(address)
    except ClusterError as error:
        raise UsageError(str(error)) from None


@contextlib.contextmanager
def _cluster(address: str | None):
    """A Dask client of ``--dask`` (None without it), connected before any work; a
    :class:`UsageError` if Dask is missing or the scheduler does not answer."""
    if address is None:
        yield None
        return
    from .cluster import ClusterError, connect

    try:
        stack = contextlib.ExitStack()
        client = stack.enter_context(connect(address))
    except ClusterError as error:
        raise UsageError(str(error)) from None
    with stack:
        try:
            yield client
        except ClusterError as error:          # the workers cannot load the model
            raise UsageError(str(error)) from None


def _check_decoder_options(args) -> None:
    """Refuse, before any file is read, a ``--decoder`` that does not exist or does not
    take the decoder options given or their values (what the model's parts allow is
    checked with the model's metadata, :func:`_model_decoder`)."""
    if args.decoder is None:
        return
    try:
        options = chosen(args, DECODERS, args.decoder) if args.decoder in DECODERS else {}
        make_decoder(args.decoder, **options)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_solver(options.get("solver"))


def _model_decoder(args) -> tuple[ModelSettings, object, dict]:
    """The settings of ``--model`` (read from its metadata alone), the decoder it is to
    parse with and the decoder options given, checked before the model is loaded:
    ``--decoder`` (or the model's decoder) must exist, decode the model's parts and take
    the options and their values (a :class:`UsageError` otherwise)."""
    settings = ModelSettings.read(args.model)
    name = args.decoder or settings.config.decoder
    try:
        options = chosen(args, DECODERS, name) if name in DECODERS else {}
    except ValueError as error:
        raise UsageError(f"{args.model}: {error}") from None
    decoder = settings.decoder(args.decoder, options)
    check_solver(options.get("solver"))
    return settings, decoder, options


def _load_parser(args, options: dict):
    """The :class:`Parser` of ``--model``, decoding with ``--decoder`` and the decoder
    ``options`` of :func:`_model_decoder`, which checked them."""
    from .pipeline import Parser

    parser = Parser.load(args.model)
    if args.decoder is not None or options:
        parser.use_decoder(args.decoder or parser.config.decoder, **options)
    return parser


def parser_for_parse(args, options: dict | None = None):
    """The :class:`Parser` ``polyparse parse`` decodes with for its parsed arguments
    ``args`` (:func:`_load_parser` with the decoder ``options`` of
    :func:`_model_decoder`, checked here unless given; the UD rules on unless
    ``--no-ud-rules``): also what eval/defaults.py times, so that its figures are the
    command's at its defaults."""
    if options is None:
        options = _model_decoder(args)[2]
    parser = _load_parser(args, options)
    parser.use_ud_rules = not args.no_ud_rules
    return parser


def _parse(args) -> None:
    at_least(1, jobs=args.jobs, kbest=args.kbest)
    if args.dask is not None and args.jobs > 1:
        raise UsageError("give either --dask or --jobs, not both")
    _check_dask(args.dask)
    fmt = _input_format(args)
    confidence = _confidence(args, fmt)
    if args.kbest is not None and (args.certify or args.confidence):
        raise UsageError("--kbest cannot go with --certify or --confidence: the k best "
                         "trees carry their rank and score, not a certificate or "
                         "confidence")
    _check_constraint_options(args, fmt)
    _check_decoder_options(args)
    check_files({"--model": args.model, "--input": args.input,
                 "--constraints": args.constraints}, {"--output": args.output})
    settings, _, options = _model_decoder(args)
    if confidence is not None and settings.config.order != "1" and not settings.pruned:
        raise UsageError(f"--confidence: {args.model} is a higher-order model without a "
                         "first-order pruner, whose marginals give the head probabilities")
    constraints = _constraints(args)
    with _cluster(args.dask) as client:
        _parse_with(args, fmt, options, dict(kbest=args.kbest, certify=args.certify,
                                             confidence=confidence, constraints=constraints),
                    client)


def _parse_with(args, fmt: str, options: dict, annotate: dict, client) -> None:
    """``polyparse parse`` once the options and files are checked (on ``client``'s
    workers if it is not None)."""
    from .constraints import ConstraintError
    from .pipeline import MissingComponentError

    parser = parser_for_parse(args, options)
    name = "--text" if args.text is not None else args.input or "<stdin>"
    tally = Tally("parsed")
    leading = None
    try:
        if fmt == "text":
            parsed = _parsed_text(args, parser, name, annotate, client, tally)
        else:
            if args.retag:
                parser.require("tagger", "tag words (--retag)")
            leading = _LeadingComments(_open_input(args.input))
            parsed = tracked(parser.parse(read_conllu(leading, fmt=fmt), retag=args.retag,
                                          jobs=args.jobs, client=client, **annotate),
                             tally, counts=_output_counts,
                             total=count_sentences(args.input) if showing_bar() else None)
        with (atomic_write(args.output) if args.output
              else contextlib.nullcontext(sys.stdout)) as out:
            if write_conllu(parsed, out) == 0:
                _warn_nothing_parsed(name, leading, out)
    except (MissingComponentError, ConstraintError) as error:
        raise UsageError(str(error)) from None
    finally:
        if leading is not None:
            leading.close()
    _report_parse(parser, tally, args.certify)


def _parsed_text(args, parser, name: str, annotate: dict, client, tally: Tally):
    """The sentences of ``parse``'s raw text, parsed lazily, with a progress bar in
    characters of the text."""
    parser.require("tokenizer", "parse raw text")    # before any input is read
    parser.require("tagger", "parse raw text")
    text = args.text if args.text is not None else _read_text(args.input)
    _warn_unseen_scripts(parser.tokenizer, text, name)
    parsed = parser.stream_text(text, jobs=args.jobs, client=client,
                                max_words=args.max_words or None, **annotate)
    return tracked(parsed, tally, counts=_output_counts, total=visible_characters(text),
                   unit="characters",
                   size=lambda s: 0 if _later_kbest_copy(s) else visible_characters(s.text))


def _output_counts(sentence) -> tuple[int, int]:
    """A parsed sentence as the sentences and words it adds to the tally: none for the
    second and later copies of ``--kbest``."""
    return (0, 0) if _later_kbest_copy(sentence) else (1, len(sentence))


def _later_kbest_copy(sentence) -> bool:
    for line in sentence.lines:
        if not line.startswith("#"):
            return False
        if line.startswith("# kbest_rank = ") and line != "# kbest_rank = 1":
            return True
    return False


def _warn_nothing_parsed(name: str, leading, out) -> None:
    """The warning of an input without sentences; a CoNLL-U input's comments are
    written back as they are."""
    if leading is None:
        log.warning("polyparse: warning: %s: no sentences to parse (the text has no words)",
                    name)
        return
    log.warning("polyparse: warning: %s: no sentences to parse (the input is empty or has "
                "only comments; they are written back as they are)", name)
    out.write(leading.text())


def _report_parse(parser, tally: Tally, certify: bool) -> None:
    """What ``parse`` says at its end: the constraints and fallbacks it met, then one
    summary line (sentences, words, seconds, words/s and the certificates' summary,
    printed even with -q when ``certify`` asked for it)."""
    counts = parser.constrained
    if counts["ilp_for_decoder"]:
        log.info("%d constrained sentence(s) decoded by the ILP (decoder %r cannot honor "
                 "constraints)", counts["ilp_for_decoder"], parser.decoder.name)
    if counts["lp_to_ilp"]:
        log.info("%d sentence(s): the LP's rounded tree broke a constraint; the ILP decided",
                 counts["lp_to_ilp"])
    if counts["rules_dropped"]:
        log.warning("%d sentence(s) admitted no tree under the UD rules over the candidate "
                    "arcs and were parsed without them", counts["rules_dropped"])
    if parser.fallbacks:
        unconstrained = parser.decodings.unconstrained
        log.warning("%d sentence(s) reached the time limit (%s s a sentence) and kept the "
                    "best tree found by then%s", parser.fallbacks, parser.decoder.time_limit,
                    f", {unconstrained} of them without the UD rules or constraints"
                    if unconstrained else "")
    if parser.decodings.kinds["node-limit"]:
        log.info("%d sentence(s): the search under the UD rules or constraints stopped at "
                 "its node limit and kept a tree that satisfies them",
                 parser.decodings.kinds["node-limit"])
    decoded = sum(parser.decodings.kinds.values())
    if certify:
        log.info("%s", tally.line())
        print(parser.decodings.summary(), file=sys.stderr)
    elif decoded:
        log.info("%s; %s", tally.line(), parser.decodings.summary())
    else:
        log.info("%s", tally.line())


def _check_constraint_options(args, fmt: str) -> None:
    """Refuse ``--keep-given`` on raw text."""
    if args.keep_given and fmt == "text":
        raise UsageError("--keep-given needs CoNLL-U input (raw text gives no HEAD or DEPREL)")


def _constraints(args):
    """The :class:`~parser.constraints.Constraints` of ``--constraints`` and
    ``--keep-given`` (None without them); a :class:`UsageError` for a bad file."""
    from .constraints import Constraints, ConstraintsFileError

    if args.constraints is None and not args.keep_given:
        return None
    try:
        if args.constraints is None:
            return Constraints(keep_given=True)
        return Constraints.read(args.constraints, keep_given=args.keep_given)
    except ConstraintsFileError as error:
        raise UsageError(str(error)) from None


def _input_format(args) -> str:
    """The format of the input of ``parse`` or ``draw`` (:func:`_parse_format`), with
    ``--text``, ``--input`` and ``--max-words`` checked."""
    if args.text is not None and args.input:
        raise UsageError("give either --text or --input, not both")
    at_least(0, max_words=args.max_words)
    fmt = _parse_format(args)
    if args.text is not None and fmt != "text":
        raise UsageError(f"--text is raw text; it cannot be read as {fmt}")
    return fmt


def _confidence(args, fmt: str):
    """The :class:`~learning.confidence.Temperatures` of ``--confidence`` (None without
    it), checked before any work: one or two positive temperatures, and an output with
    a MISC column (CoNLL-X has none)."""
    conllx = fmt == "conllx" or (fmt == "auto" and bool(args.input)
                                 and Path(args.input).suffix.lower() in CONLLX_SUFFIXES)
    if args.confidence and conllx:
        raise UsageError("--confidence writes to the MISC column, which CoNLL-X does not "
                         "have; give CoNLL-U or raw text")
    return _temperatures(args, args.confidence)


def _temperatures(args, asked: bool):
    """The :class:`~learning.confidence.Temperatures` of ``--confidence-temperature``
    (default 1) when probabilities are ``asked`` for; else None, and the option is
    refused if given."""
    from polyparse.learning.confidence import Temperatures

    text = args.confidence_temperature
    if not asked:
        if text is not None:
            raise UsageError("--confidence-temperature is for --confidence")
        return None
    if text is None:
        return Temperatures()
    try:
        values = [float(value) for value in text.split(",")]
        if len(values) not in (1, 2):
            raise ValueError(f"{len(values)} values")
        return Temperatures(values[0], values[-1])
    except ValueError as error:
        raise UsageError(f"--confidence-temperature takes one or two positive numbers "
                         f"(arcs[,labels]), not {text!r}: {error}") from None


def _parse_format(args) -> str:
    if args.text is not None:
        return "text" if args.format == "auto" else args.format
    if args.format == "auto" and args.input and Path(args.input).suffix.lower() in TEXT_SUFFIXES:
        return "text"
    return args.format


BOM_BYTES = "\ufeff".encode("utf-8")


class _LeadingComments:
    """An input's binary lines, passed on to :func:`read_conllu`, keeping the comments and
    blank lines before its first sentence: all of the input when it has no sentence, to
    be written back as the comments of parsed sentences are."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.name = getattr(stream, "name", "<stdin>")
        self.lines: list[bytes] | None = []

    def __iter__(self):
        for line in self.stream:
            if self.lines is not None:
                body = line.removeprefix(BOM_BYTES).strip()
                if body and not body.startswith(b"#"):
                    self.lines = None           # a sentence: nothing to keep
                else:
                    self.lines.append(line)
            yield line

    def text(self) -> str:
        """The lines kept (valid UTF-8, as :func:`read_conllu` checked them)."""
        return b"".join(self.lines or []).decode("utf-8")

    def close(self) -> None:
        if self.stream is not sys.stdin.buffer:
            self.stream.close()


def _open_input(path: str | None):
    """``path`` opened in binary, or standard input; a file that cannot be opened is a
    :class:`CorpusError`."""
    if not path:
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as error:
        raise CorpusError(path, None, f"cannot open: {error.strerror}") from None


def _warn_unseen_scripts(tokenizer, text: str, name: str) -> None:
    """One warning for the scripts of ``text`` that the model's tokenizer never saw."""
    warning = tokenizer.unseen_scripts_warning(text)
    if warning:
        log.warning("polyparse: warning: %s: %s", name, warning)


def _read_text(path: str | None) -> str:
    """All of a UTF-8 text file (or standard input); bad UTF-8 is a located error."""
    name = path or "<stdin>"
    try:
        data = Path(path).read_bytes() if path else sys.stdin.buffer.read()
    except OSError as error:
        raise CorpusError(name, None, f"cannot open: {error.strerror}") from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise CorpusError(name, line, f"not valid UTF-8 (byte 0x{data[error.start]:02x}); "
                                      "the text must be encoded in UTF-8") from None


# -- draw ----------------------------------------------------------------------------

SVG_NAMES = r"\d{4,}\.svg"
"""The files ``draw --svg-dir`` writes: ``0001.svg``, ``0002.svg``, ..."""


def _add_draw(sub) -> None:
    p = sub.add_parser(
        "draw", help="draw trees (and LP relaxations) as SVG or HTML",
        description="Draw the trees of a CoNLL-U file, or of raw text or CoNLL-U parsed "
                    "with --model: the words with their UPOS under them, the arcs above "
                    "with their labels (non-projective ones in purple), multiword tokens "
                    "over their words. One self-contained SVG file per sentence "
                    "(--svg-dir) or one HTML page (--html), where long sentences scroll "
                    "sideways. With --model: --lp, --kbest, --confidence. --gold marks the "
                    "heads and labels that differ from a gold file in red.")
    p.add_argument("--model", metavar="M", help="parse the input with this model (.npz); "
                   "without it, the trees the CoNLL-U input has are drawn")
    _add_input_flags(p)
    output = p.add_mutually_exclusive_group(required=True)
    output.add_argument("--html", metavar="OUT.html", help="one HTML page of all sentences")
    output.add_argument("--svg-dir", metavar="DIR", help="one SVG file per sentence, "
                        "DIR/0001.svg, DIR/0002.svg, ...; DIR is replaced as a whole when "
                        "done, so it must be new, empty or hold only such files")
    p.add_argument("--lp", action="store_true",
                   help="also draw the LP relaxation: the arcs of its solution with opacity "
                        "by value, the tree it rounds to (dashed), its certificate and gap "
                        "(needs --model; first-order LPs are integral)")
    _add_lp_max_words_flag(p)
    p.add_argument("--kbest", type=int, default=None, metavar="K",
                   help="draw the K best trees side by side, the arcs where each differs "
                        "from the first highlighted, as parse --kbest gives them (needs "
                        "--model)")
    p.add_argument("--confidence", action="store_true",
                   help="colour each arc by the probability of its head and each label by "
                        "its own, red (0) to green (1), as parse --confidence computes them "
                        "(needs --model)")
    p.add_argument("--gold", metavar="G", help="a gold treebank with the same sentences and "
                   "words: heads and labels that differ from it are drawn in red")
    _add_decoding_flags(p)
    p.set_defaults(run=_draw)


def _draw(args) -> None:
    from .drawing import figure_html, figure_svg, page_end, page_start
    from .pipeline import MissingComponentError
    from .views import Views

    at_least(1, kbest=args.kbest)
    fmt = _input_format(args)
    views = Views(lp=args.lp, kbest=args.kbest,
                  confidence=_temperatures(args, args.confidence),
                  lp_max_words=_lp_max_words(args))
    if args.model is None:
        needs = [flag for flag, given in (("--lp", args.lp), ("--kbest", args.kbest),
                                          ("--confidence", args.confidence),
                                          ("--decoder", args.decoder),
                                          ("decoder options", _decoder_options_given(args)),
                                          ("raw text", fmt == "text")) if given]
        if needs:
            raise UsageError(f"{', '.join(needs)}: needs a model to parse with (--model); "
                             "without one, draw draws the trees a CoNLL-U input has")
    if args.kbest is not None and args.confidence:
        raise UsageError("--kbest cannot go with --confidence: k-best trees carry no "
                         "confidence; ask for one or the other")
    _check_decoder_options(args)
    check_files({"--model": args.model, "--input": args.input, "--gold": args.gold},
                {"--html": args.html, "--svg-dir": args.svg_dir},
                folders={"--svg-dir": SVG_NAMES})
    options = _model_decoder(args)[2] if args.model is not None else {}
    gold = read_treebank(args.gold) if args.gold else None
    parser = None
    if args.model is not None:
        parser = _load_parser(args, options)
        try:
            views.check(parser)
        except ValueError as error:
            raise UsageError(f"{args.model}: {error}") from None
    name = "--text" if args.text is not None else args.input or "<stdin>"
    try:
        figures = _figures(parser, _draw_input(args, fmt, parser, name), views, gold,
                           args.gold, name)
        count = 0
        if args.html:
            with atomic_write(args.html) as out:
                out.write(page_start(f"polyparse draw: {Path(name).name}"))
                for count, figure in enumerate(figures, 1):
                    out.write(figure_html(figure))
                out.write(page_end())
        else:
            with atomic_directory(args.svg_dir) as folder:
                for count, figure in enumerate(figures, 1):
                    (folder / f"{count:04d}.svg").write_text(figure_svg(figure),
                                                            encoding="utf-8")
    except MissingComponentError as error:
        raise UsageError(str(error)) from None
    if count == 0:
        log.warning("polyparse: warning: %s: no sentences to draw", name)
    log.info("drew %d sentence%s to %s", count, "s" * (count != 1), args.html or args.svg_dir)


def _decoder_options_given(args) -> bool:
    return any(getattr(args, option, None) is not None
               for cls in DECODERS.values() for option in cls.settable())


def _draw_input(args, fmt: str, parser, name: str):
    """The sentences ``draw`` reads: raw text tokenized and tagged by ``parser``, or
    CoNLL-U as it is (with progress on standard error)."""
    if fmt == "text":
        parser.require("tokenizer", "parse raw text")        # before any input is read
        parser.require("tagger", "parse raw text")
        text = args.text if args.text is not None else _read_text(args.input)
        _warn_unseen_scripts(parser.tokenizer, text, name)
        return tracked(parser.tag_text(text, max_words=args.max_words or None),
                       Tally("drew"), total=visible_characters(text), unit="characters",
                       size=lambda s: visible_characters(s.text))
    return tracked(read_conllu(_open_input(args.input), fmt=fmt), Tally("drew"),
                   total=count_sentences(args.input) if showing_bar() else None)


def _figures(parser, sentences, views, gold, gold_name: str | None, name: str):
    """The figure of each sentence: parsed by ``parser`` and drawn as ``views`` ask,
    or its own tree (no parser); marked against the sentence of ``gold`` in the same
    place, which must have the same words (a located error otherwise)."""
    from .views import check_gold, given_figure, parsed_figure

    golds = iter(gold) if gold is not None else None
    for sentence in sentences:
        gold_sentence = None
        if golds is not None:
            gold_sentence = next(golds, None)
            if gold_sentence is None:
                raise CorpusError(gold_name, None, f"has fewer sentences than {name}")
            check_gold(sentence, gold_sentence)
        if parser is None:
            yield given_figure(sentence, gold_sentence)
        else:
            yield parsed_figure(parser, sentence, views, gold_sentence).figure
    if golds is not None and next(golds, None) is not None:
        raise CorpusError(gold_name, None, f"has more sentences than {name}")


# -- serve ---------------------------------------------------------------------------

def _add_serve(sub) -> None:
    from .serve import ServeConfig

    defaults = ServeConfig()
    p = sub.add_parser(
        "serve", help="a local web page that parses what you type and draws it",
        description="Serve a web page that parses the text (or CoNLL-U) typed into it and "
                    "shows the trees as polyparse draw draws them, with the LP relaxation, "
                    "the k best trees and the confidence as switches, a download of the "
                    "CoNLL-U and the decoding time. Listens on 127.0.0.1 (this machine "
                    "only) unless --host says otherwise; Ctrl-C stops it.")
    p.add_argument("--model", required=True, metavar="M", help="model file (.npz)")
    p.add_argument("--host", default=defaults.host,
                   help=f"address to listen on (default {defaults.host}: this machine only)")
    p.add_argument("--port", type=int, default=defaults.port,
                   help=f"port (default {defaults.port}; 0: any free port)")
    p.add_argument("--max-request", type=int, default=defaults.max_request, metavar="BYTES",
                   help="largest request taken; a larger one is refused with a message "
                        f"(default {defaults.max_request:,})")
    p.add_argument("--max-kbest", type=int, default=defaults.max_kbest, metavar="K",
                   help=f"largest K of the k-best switch (default {defaults.max_kbest})")
    _add_max_words_flag(p)
    _add_lp_max_words_flag(p)
    _add_decoding_flags(p)
    p.set_defaults(run=_serve)


def _serve(args) -> None:
    from .serve import Server, ServeConfig, warm_up

    at_least(1, max_request=args.max_request, max_kbest=args.max_kbest)
    at_least(0, max_words=args.max_words)
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, not {args.port}")
    _check_decoder_options(args)
    check_files({"--model": args.model}, {})
    options = _model_decoder(args)[2]
    config = ServeConfig(host=args.host, port=args.port, max_request=args.max_request,
                         max_kbest=args.max_kbest, max_words=args.max_words or None,
                         lp_max_words=_lp_max_words(args),
                         temperatures=_temperatures(args, True))
    try:
        server = Server(config)
    except OSError as error:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: "
                         f"{error.strerror or error}") from None
    with server:
        parser = _load_parser(args, options)
        server.load(parser, Path(args.model).name)
        warm_up(parser)
        print(f"polyparse: serving {args.model} at {server.url} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        server.serve_forever()


# -- eval ----------------------------------------------------------------------------

def _add_eval(sub) -> None:
    p = sub.add_parser(
        "eval", help="scores of a parse against gold",
        description="Score a parse (--pred) against a gold treebank, or a model (--model), "
                    "which parses the gold file's own text, tokens or tags (--from) to be "
                    "scored. Every metric of the CoNLL 2018 shared-task script "
                    "(conll18_ud_eval.py, udeval of UD's tools), with the same values: "
                    "tokens, sentences and words F1, then over the words aligned by "
                    "character offsets UPOS, XPOS, UFeats (universal features), AllTags "
                    "(UPOS+XPOS+UFeats), Lemmas, UAS, LAS (universal part of the label), "
                    "and over content words CLAS, MLAS (+ UPOS, UFeats and function-word "
                    "children) and BLEX (+ lemma). The "
                    "predicted file may be tokenized differently from the gold one (both "
                    "must spell the same text). When the tokenization is identical, also "
                    "UAS, LAS and label accuracy over all syntactic words (multiword-token "
                    "ranges and empty nodes excluded) and without punctuation (UPOS PUNCT).",
        epilog="Columns: precision and recall are the correct words out of the system's and "
               "the gold words, F1 their harmonic mean, 'aligned acc' the correct words out "
               "of the aligned ones. Identical tokenization: LAS-full is LAS with the full "
               "labels, subtypes included (nmod:poss is then wrong for nmod), where LAS, as "
               "in CoNLL 2018, compares the universal part only; 'label' is the share of "
               "words with the right universal label, whatever their head.")
    p.add_argument("--gold", required=True, metavar="G", help="gold treebank")
    system = p.add_mutually_exclusive_group(required=True)
    system.add_argument("--pred", metavar="P", help="predicted treebank to score")
    system.add_argument("--model", metavar="M",
                        help="score this model (.npz) on the gold file: it parses the gold "
                             "file's own text, tokens or tags (--from) and its parse is "
                             "scored; an honest score in one command")
    p.add_argument("--from", dest="source", choices=list(SOURCES), default=None,
                   help="with --model, what the model parses: " + "; ".join(
                       f"{name}: {text}" for name, text in SOURCES.items())
                   + " (default: the most honest the model supports, text if it has a "
                     "tokenizer and the gold file has '# text' comments, else tokens if it "
                     "has a tagger, else tags; the output says which)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="with --model, parse on N processes (default 1)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=_eval)


def _eval(args) -> None:
    if args.model is None and (args.source is not None or args.jobs != 1):
        raise UsageError("--from and --jobs are for --model (eval --pred scores a parse "
                         "already made)")
    at_least(1, jobs=args.jobs)
    check_files({"--gold": args.gold, "--pred": args.pred, "--model": args.model}, {})
    if args.model is None:
        gold, pred = list(read_conllu(args.gold)), list(read_conllu(args.pred))
        _print_scores(_scores(gold, pred, args.pred, args.gold), args.json)
        return
    settings = ModelSettings.read(args.model)
    gold = list(read_conllu(args.gold))
    source = _eval_source(args, settings, gold)
    pred = _parse_gold(args, source, gold)
    scores = _scores(gold, pred, f"the parse of {args.gold}", args.gold)
    if args.json:
        _print_scores({"from": source, **scores}, True)
        return
    print(f"from {source}: {SOURCES[source]}\n")
    _print_scores(scores, False)


def _eval_source(args, settings: ModelSettings, gold) -> str:
    """What ``eval --model`` parses: ``--from``, checked against the model's components,
    or the most honest source the model supports."""
    if args.source is None:
        return default_source(settings.components, gold)
    missing = missing_components(args.source, settings.components)
    if missing:
        raise UsageError(f"--from {args.source}: {args.model} has no {' and no '.join(missing)}"
                         f"; use --from {default_source(settings.components, gold)}")
    return args.source


def _parse_gold(args, source: str, gold) -> list:
    """The model's parse of the gold file's text, tokens or tags (with progress and a
    summary line on standard error)."""
    from .pipeline import Parser

    parser = Parser.load(args.model)
    given = system_input(gold, source)
    tally = Tally("parsed")
    if source == "text":
        stream = tracked(parsed(parser, source, given, jobs=args.jobs), tally,
                         total=visible_characters(given), unit="characters",
                         size=lambda s: visible_characters(s.text))
    else:
        stream = tracked(parsed(parser, source, given, jobs=args.jobs), tally,
                         total=len(given))
    pred = list(stream)
    log.info("%s", tally.line())
    return pred


def _scores(gold, pred, pred_name: str, gold_name: str) -> dict:
    """The CoNLL 2018 scores of ``pred`` against ``gold`` (words aligned by their
    characters), and the attachment scores over all words when they have the same
    tokenization."""
    from .evaluate import attachment_scores, conll18_scores, same_tokenization

    try:
        aligned = conll18_scores(gold, pred).to_json()
    except ValueError as error:           # e.g. a token without a non-space character
        raise UsageError(f"cannot align {pred_name} with {gold_name}: {error}") from None
    identical = same_tokenization(gold, pred)
    scores = {"identical_tokenization": identical, "conll18": aligned}
    if identical:
        scores.update(attachment_scores(gold, pred).to_json())
    return scores


def _print_scores(scores: dict, as_json: bool) -> None:
    """:func:`_scores` as JSON or as tables."""
    from .evaluate import METRICS

    if as_json:
        print(json.dumps(scores, indent=2))
        return
    aligned, identical = scores["conll18"], scores["identical_tokenization"]
    print(f"{'metric':10} {'precision':>9} {'recall':>7} {'F1':>7} {'aligned acc':>11}")
    for name, label in METRICS.items():
        s = aligned[name]
        accuracy = "" if s["aligned_accuracy"] is None else f"{s['aligned_accuracy']:11.2f}"
        print(f"{label:10} {s['precision']:9.2f} {s['recall']:7.2f} {s['f1']:7.2f} "
              f"{accuracy}".rstrip())
    if identical:
        print()
        print(f"{'':12} {'words':>7} {'UAS':>7} {'LAS':>7} {'LAS-full':>8} {'label':>7}")
        for name in ("all_words", "no_punct"):
            s = scores[name]
            print(f"{name.replace('_', ' '):12} {s['words']:7d} {s['uas']:7.2f} "
                  f"{s['las']:7.2f} {s['las_full']:8.2f} {s['label_acc']:7.2f}")


# -- gap -----------------------------------------------------------------------------

def _add_gap(sub) -> None:
    p = sub.add_parser(
        "gap", help="relaxation gap against runtime, sentence by sentence",
        description="Decode every sentence with the LP relaxation + MST rounding (+ local "
                    "search) and with the exact ILP under the model's scores. Writes one JSON "
                    "line per sentence (sent_id, n, lp_value, ilp_value, rounded_value, "
                    "search_moves, gap, integral, fractional_arcs, time_build, time_lp, "
                    "time_round, time_ilp, ilp_nodes, fallback, fallback_stage, and the "
                    "number of correct heads when the input has gold heads), then a summary "
                    "by sentence length. With --time-limit, a decoder that runs out falls "
                    "back to a cheaper tree: fallback is true, fallback_stage says which "
                    "decoder and stage (e.g. lp:build, ilp:ilp), and an LP that ran out has "
                    "no lp_value and no gap.")
    p.add_argument("--model", required=True, metavar="M", help="model file (.npz)")
    p.add_argument("--input", required=True, metavar="FILE", help="CoNLL-U sentences")
    p.add_argument("--jsonl", metavar="OUT", help="JSON lines file (default: standard output; "
                   "the summary then goes to standard error)")
    p.add_argument("--plot", metavar="OUT.png", help="plots of ILP time against gap and of "
                   "LP and ILP time against length (needs matplotlib)")
    p.add_argument("--solver", default="highs", help="ILP solver (default highs)")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="seconds per sentence for each decoder, all stages included "
                        "(building, LP, rounding, branch and bound); one that runs out "
                        "falls back to a cheaper tree and the record says fallback")
    p.add_argument("--flow", choices=["multi", "single"], default="multi",
                   help="how the LP and ILP keep the arcs a tree: multi-commodity flow "
                        "(default; tight for arc-factored scores) or single-commodity flow")
    p.add_argument("--no-search", action="store_true",
                   help="round fractional LP solutions by MST alone, without the local "
                        "search under the higher-order scores that follows by default")
    p.add_argument("--compare", choices=["ad3"], default=None,
                   help="also solve the LP relaxation by this decoder (AD3: orders 1 and 2; "
                        "at full order its own, with ancestry by the tree recursion, the "
                        "grandparent star rows, and the non-projective-arc parts of a head "
                        "only once a tree breaks one: lazy rounds, ad3-exact's root "
                        "relaxation, not ad3's default of one round) "
                        "and report it beside HiGHS's: each record gets a 'compare' object "
                        "with the same keys, and a second summary follows")
    p.set_defaults(run=_gap)


def _gap(args) -> None:
    from . import gap
    from .config import check_decoder
    from .pipeline import Parser

    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError(f"--time-limit must be positive, not {args.time_limit}")
    check_files({"--model": args.model, "--input": args.input},
                {"--jsonl": args.jsonl, "--plot": args.plot})
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'polyparse[plot]'") from None
    check_solver(args.solver)
    settings = ModelSettings.read(args.model)
    single_root = settings.config.single_root
    lp = make_decoder("lp", single_root, flow=args.flow, search=not args.no_search,
                      time_limit=args.time_limit)
    ilp = make_decoder("ilp", single_root, solver=args.solver, time_limit=args.time_limit,
                       flow=args.flow)
    compare = None
    if args.compare:
        try:
            compare = check_decoder(settings.config, make_decoder(
                args.compare, single_root, search=not args.no_search, rounds=None))
        except ValueError as error:
            raise UsageError(f"--compare: {error}") from None
    parser = Parser.load(args.model)
    tally = Tally("measured")
    records = []
    with (atomic_write(args.jsonl) if args.jsonl else contextlib.nullcontext(sys.stdout)) as out:
        for record in tracked(gap.measure(parser.model, read_conllu(args.input), lp, ilp,
                                          compare),
                              tally, counts=lambda r: (1, r["n"]),
                              total=count_sentences(args.input) if showing_bar() else None):
            records.append(record)
            out.write(json.dumps(record) + "\n")
            out.flush()
    log.info("%s", tally.line())
    _report_gap(args, records, compare)


def _report_gap(args, records: list[dict], compare) -> None:
    """The summaries of ``gap`` by sentence length (and of ``--compare``), its
    fallbacks, and its plot."""
    from . import gap

    summary_file = sys.stdout if args.jsonl else sys.stderr
    print(gap.format_summary(gap.summarize(records)), file=summary_file)
    if compare is not None:
        print(f"\n{args.compare}, the same sentences:", file=summary_file)
        print(gap.format_summary(gap.summarize(gap.compared(records))), file=summary_file)
    fallbacks = sum(r["fallback"] for r in records)
    if fallbacks:
        print(f"{fallbacks} of {len(records)} sentence(s) fell back at the time limit",
              file=summary_file)
    if args.plot:
        gap.plot(records, args.plot)


# -- download ------------------------------------------------------------------------

def _add_cache_option(p) -> None:
    p.add_argument("--cache", metavar="DIR", default=None,
                   help="cache directory (default: $POLYPARSE_CACHE or ~/.cache/polyparse)")


def _cache_dir(args) -> Path:
    from polyparse.corpora.cache import default_cache_dir

    return Path(args.cache) if args.cache else default_cache_dir()


def _add_download(sub) -> None:
    from polyparse.corpora import download

    p = sub.add_parser("download", help="download a Universal Dependencies treebank",
                       description="Fetch a UD treebank's CoNLL-U files over HTTPS into a "
                                   "cache directory, checking SHA-256 sums.")
    p.add_argument("name", help="treebank, e.g. UD_English-EWT")
    _add_cache_option(p)
    p.add_argument("--base-url", default=download.DEFAULT_BASE_URL,
                   help="where treebanks are served from")
    p.set_defaults(run=_download)


def _download(args) -> None:
    from polyparse.corpora import download

    for path in download.download_treebank(args.name, _cache_dir(args), base_url=args.base_url,
                                           progress=sys.stderr.isatty()):
        print(path)


def _add_download_clusters(sub) -> None:
    from polyparse.corpora import word_clusters

    p = sub.add_parser("download-clusters", help="download Brown word clusters for the tagger",
                       description="Fetch the Brown word clusters of a language from spaCy's "
                                   "lookups data (PyPI, about 100 MB, SHA-256 checked) into "
                                   "the cache as a paths file, for 'polyparse train "
                                   "--word-clusters'; prints its path.")
    p.add_argument("lang", help="language code: " + ", ".join(word_clusters.SPACY_LANGUAGES)
                   + " (those with clusters in spaCy's lookups data)")
    _add_cache_option(p)
    p.add_argument("--url", default=word_clusters.SPACY_LOOKUPS_URL,
                   help="where spaCy's lookups data wheel is served from")
    p.set_defaults(run=_download_clusters)


def _download_clusters(args) -> None:
    from polyparse.corpora import word_clusters

    if (args.url == word_clusters.SPACY_LOOKUPS_URL
            and args.lang not in word_clusters.SPACY_LANGUAGES):
        raise UsageError(f"no word clusters for {args.lang!r} in spaCy's lookups data: "
                         f"choose from {', '.join(word_clusters.SPACY_LANGUAGES)}")
    print(word_clusters.fetch_spacy_clusters(args.lang, _cache_dir(args), url=args.url,
                                             progress=sys.stderr.isatty()))


# -- main ----------------------------------------------------------------------------

QUIET_HELP = ("quiet: no progress and no summary line on standard error, only warnings and "
              "errors (and what an option asks for, such as --certify's summary); before "
              "or after the command's name")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="polyparse", description="polyparse: a dependency "
                                 "parser built on the polyhedral view of structured "
                                 "prediction (ILP decoding, LP relaxation + MST rounding).")
    ap.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_train, _add_parse, _add_draw, _add_serve, _add_eval, _add_gap,
                _add_download, _add_download_clusters):
        add(sub)
    for command in sub.choices.values():     # after the command's name too
        command.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                             help=QUIET_HELP)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(message)s", stream=sys.stderr)
    try:
        with stop_signals_raise(remove_unfinished):
            args.run(args)
    except (CorpusError, ModelFileError, OutputError, UsageError) as error:
        print(f"polyparse: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return 0
    except (Exception, KeyboardInterrupt) as error:
        stop = stop_behind(error)     # a Stopped, or an error a stop signal caused
        if stop is not None:
            print(f"polyparse: {stop}", file=sys.stderr)
            return stop.exit_status
        if isinstance(error, KeyboardInterrupt):
            print("polyparse: interrupted", file=sys.stderr)
            return 130
        raise
    finally:
        remove_unfinished()
    return 0


if __name__ == "__main__":
    sys.exit(main())
