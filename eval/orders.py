"""Issue 3 / ICML 2009 experiment 1: model order x decoder on several treebanks.

One command::

    python -m eval run orders [--epochs 3] [--treebanks en_ewt tr_imst sl_ssj da_ddt]
                          [--orders 1 2 full] [--max-train N] [--max-dev N] [--jobs 2]
                          [--models DIR] [--train-decoder ilp|default|NAME]
                          [--train-option NAME=VALUE ...]
                          [--lambda L] [--morphology] [--decoders ilp lp lp-mst ...]

For each treebank and order (1, 2, full) one model is trained (SSG-eta with eta = 1,
i.e. LP-relaxed loss-augmented inference, pruned to --max-heads heads per word) and
evaluated with the exact ILP, with LP + MST rounding + local search, and with LP + MST
rounding alone (``--decoders``): UAS, LAS (all words),
tokens/s (one core) and training time. Writes ``orders.{json,md}`` (``--out``) under
``--results`` after every row. With ``--models DIR`` every model is kept as
``DIR/TREEBANK-ORDER.npz`` (and checkpointed there after every epoch), for ``polyparse
gap`` to measure ILP times on.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ._common import (arguments, require_treebanks, single_thread, treebank, treebanks_argument,
                      write_table)

single_thread()

from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.decoders import decoder_class, make_decoder  # noqa: E402
from polyparse.parser.config import (FeatureConfig, PartsConfig, PrunerConfig,  # noqa: E402
                                     default_decoder)
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402


#: Decoders compared: the exact ILP, LP + MST rounding + local search (the LP decoder's
#: default), and LP + MST rounding alone (Martins, Smith, Xing 2009).
DECODERS = {"ilp": ("ilp", {}), "lp": ("lp", {}), "lp-mst": ("lp", {"search": False}),
            "ad3": ("ad3", {}), "ad3-rounds1": ("ad3", {"rounds": 1}),
            "ad3-lazy": ("ad3", {"rounds": None}),
            "ad3-exact": ("ad3-exact", {})}

SMOKE = ["--treebanks", "sample", "--orders", "1", "2", "--epochs", "1", "--max-train", "20",
         "--max-dev", "5", "--decoders", "ilp", "lp", "ad3"]
"""The smoke run: orders 1 and 2 on 20 sentences of the sample, 5 dev sentences."""


def evaluate(parser: Parser, dev, decoder: str) -> dict:
    name, options = DECODERS[decoder]
    parser.decoder = make_decoder(name, parser.config.single_root, **options)
    start = time.perf_counter()
    parsed = list(parser.parse(dev))
    seconds = time.perf_counter() - start
    scores = attachment_scores(dev, parsed).all_words
    return {"uas": scores["uas"], "las": scores["las"],
            "tokens_per_s": sum(len(s) for s in dev) / seconds}


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--epochs", type=int, default=3)
    treebanks_argument(ap, ["en_ewt", "tr_imst", "sl_ssj", "da_ddt"])
    ap.add_argument("--orders", nargs="+", default=["1", "2", "full"])
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--max-heads", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=1,
                    help="training processes, each decoding part of a mini-batch")
    ap.add_argument("--batch", type=int, default=None,
                    help="sentences per update (default: --jobs)")
    ap.add_argument("--models", default=None, metavar="DIR", help="keep the models here")
    ap.add_argument("--train-decoder", default="ilp",
                    help="the exact decoder training uses; its relaxed step follows from it "
                         "(ad3 for ad3-exact, else the HiGHS LP); 'default': what polyparse "
                         "train picks for the order (ad3-exact at order 2); default ilp, the "
                         "decoder of the tables committed before this option")
    ap.add_argument("--train-option", nargs="+", default=[], metavar="NAME=VALUE",
                    help="declared options of the training decoder (e.g. rounds=1: at full "
                         "order AD3 runs the optimistic program alone, in the exact "
                         "decoder's nodes and in SSG's relaxed step)")
    ap.add_argument("--reuse", action="store_true",
                    help="evaluate the models already in --models instead of training them "
                         "(epochs and train min: from the training report stored in the model; "
                         "a checkpoint of an unfinished run counts its epochs; a model "
                         "without a report is taken to have --epochs)")
    ap.add_argument("--decoders", nargs="+", choices=list(DECODERS), default=list(DECODERS),
                    help="ilp (exact), lp (LP + MST rounding + local search), lp-mst (LP + "
                         "MST rounding only), ad3 (the same LP by AD3, rounded alike), "
                         "ad3-rounds1 (AD3 on the optimistic program alone; full order; ad3's "
                         "default since 2026-11-28), ad3-lazy (rounds until the tree "
                         "breaks no part: the ad3 of earlier tables), "
                         "ad3-exact (branch and bound on AD3's bounds)")
    ap.add_argument("--lambda", dest="lambda_", type=float, default=None,
                    help="SSG's regularization (default: the trainer's, 1e-5)")
    ap.add_argument("--morphology", action="store_true",
                    help="features read XPOS|FEATS where they read XPOS (FeatureConfig)")
    ap.add_argument("--labeled-pruner", action="store_true",
                    help="a labeled first-order pruner (default: unlabeled, as polyparse "
                         "train)")
    ap.add_argument("--out", default="orders", help="result name under --results")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, args.treebanks)
    models = Path(args.models) if args.models else None
    lambda_option = {} if args.lambda_ is None else {"lambda_": args.lambda_}
    if models:
        models.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.treebanks:
        train, dev = treebank(args.ud, name, args.max_train, args.max_dev)
        for order in args.orders:
            train_decoder = (default_decoder(PartsConfig(order))
                             if args.train_decoder == "default" else args.train_decoder)
            decoder_options = train_options(train_decoder, args.train_option)
            trained_with = " ".join([train_decoder, *args.train_option])
            config = TrainConfig(decoder=train_decoder, epochs=args.epochs,
                                 decoder_options=decoder_options,
                                 parts=PartsConfig(order),
                                 trainer_options={"eta": 1.0, "jobs": args.jobs,
                                                  "batch": args.batch or args.jobs,
                                                  **lambda_option},
                                 features=FeatureConfig(morphology=args.morphology),
                                 prune=True, ud_rules=False,  # the decoders' own trees
                                 pruner=PrunerConfig(max_heads=args.max_heads,
                                                     labeled=args.labeled_pruner))
            path = models / f"{name}-{order}.npz" if models else None
            reused = bool(args.reuse and path and path.exists())
            if reused:
                parser = Parser.load(path)
                epochs = parser.report.epochs if parser.report else []
                train_seconds = sum(e.seconds for e in epochs) if epochs else None
                n_epochs = len(epochs) if epochs else args.epochs
            else:
                start = time.perf_counter()
                parser = Parser.train(train, config, checkpoint=path)
                train_seconds = time.perf_counter() - start
                n_epochs = args.epochs
            for decoder in args.decoders:
                rows.append({"treebank": name, "order": order, "decoder": decoder,
                             "train_minutes": train_seconds / 60 if train_seconds else None,
                             "reused": reused, "epochs": n_epochs,
                             "train_sentences": len(train), "dev_sentences": len(dev),
                             "jobs": args.jobs, "train_decoder": trained_with,
                             **evaluate(parser, dev, decoder)})
                print(rows[-1], flush=True)
                write(rows, args)


def train_options(decoder: str, pairs: list[str]) -> dict:
    """``NAME=VALUE`` strings as the decoder's declared options, typed."""
    declared = decoder_class(decoder).settable()
    options = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in declared:
            sys.exit(f"orders.py: decoder {decoder!r} has no option {name!r} "
                     f"(it has {', '.join(declared)})")
        options[name] = declared[name].parse(value)
    return options


def write(rows: list[dict], args) -> None:
    write_table(args, args.out, "Model order x decoder (ICML 2009, experiment 1)", rows,
                [("treebank", "treebank"), ("order", "order"), ("decoder", "decoder"),
                 ("uas", "UAS"), ("las", "LAS"), ("tokens_per_s", "tokens/s"),
                 ("epochs", "epochs"), ("train_minutes", "train min"),
                 ("train_decoder", "trained with"),
                 ("train_sentences", "train sents")],
                notes=f"SSG-eta (eta = 1, lambda "
                      f"{'1e-5 (default)' if args.lambda_ is None else args.lambda_}), "
                      f"features {'with' if args.morphology else 'without'} morphology "
                      f"(XPOS|FEATS), mini-batches of "
                      f"{args.batch or args.jobs} on {args.jobs} process(es), "
                      f"pruned to {args.max_heads} heads per word by a "
                      f"{'labeled' if args.labeled_pruner else 'unlabeled'} first-order "
                      "model; scores over all words, "
                      "gold tags; tokens/s on one core.")

