"""Issue 3 / ICML 2009 experiment 2: what eta (the share of relaxed loss-augmented
inference in SSG-eta training) does to the relaxation at test time.

One command::

    python -m eval run eta_experiment [--treebank sl_ssj] [--epochs 3] [--order 2]
                                      [--max-train N] [--max-length N] [--etas 0 ... 1]

On ``../shared/ud/sl_ssj`` (``--treebank``; Slovene, as in the paper; the last 20% of
train held out as dev), reduced feature set, eta in {0, 0.25, 0.5, 0.75, 1} with equal training
budgets (same epochs, same sentences, same seed). For each eta: share of fractional LP
solutions on dev, mean relaxation gap, mean ILP and LP time, UAS with the ILP and with
LP+rounding. Writes ``eta_experiment.{json,md,png}`` under ``--results``.
"""

from __future__ import annotations

import logging
import time

from ._common import arguments, pyplot, single_thread, treebank, write_table

single_thread()

import numpy as np  # noqa: E402

from polyparse.parser import gap  # noqa: E402
from polyparse.decoders import make_decoder  # noqa: E402
from polyparse.parser.config import FeatureConfig, PartsConfig, PrunerConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

ETAS = (0.0, 0.25, 0.5, 0.75, 1.0)

SMOKE = ["--treebank", "sample", "--etas", "0", "1", "--epochs", "1", "--max-train", "20",
         "--max-dev", "5"]
"""The smoke run: eta 0 and 1, trained on 20 sentences of the sample, 5 dev sentences."""


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="sl_ssj", help="default sl_ssj")
    ap.add_argument("--etas", type=float, nargs="+", default=ETAS, metavar="ETA",
                    help="default 0 0.25 0.5 0.75 1")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--order", choices=["2", "full"], default="2")
    ap.add_argument("--max-train", type=int, default=None, help="first N training sentences")
    ap.add_argument("--max-dev", type=int, default=None, help="first N dev sentences")
    ap.add_argument("--max-heads", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=None, metavar="S",
                    help="seconds of branch and bound per exact decoding, in training and "
                         "on dev; then LP + rounding (counted)")
    ap.add_argument("--max-length", type=int, default=None,
                    help="keep train and dev sentences of at most this many words")
    ap.add_argument("--out", default="eta_experiment", help="result name under --results")
    args = ap.parse_args(argv)
    train, dev = treebank(args.ud, args.treebank)
    if args.max_length:
        train, dev = ([s for s in part if len(s) <= args.max_length] for part in (train, dev))
    train, dev = train[:args.max_train], dev[:args.max_dev]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    rows = []
    for eta in args.etas:
        config = TrainConfig(decoder="ilp", epochs=args.epochs,
                             features=FeatureConfig(templates="reduced"),
                             parts=PartsConfig(args.order), trainer_options={"eta": eta},
                             decoder_options={"time_limit": args.time_limit}
                             if args.time_limit else {},
                             pruner=PrunerConfig(max_heads=args.max_heads))
        start = time.perf_counter()
        parser = Parser.train(train, config)
        train_seconds = time.perf_counter() - start
        lp = make_decoder("lp", True)
        ilp = make_decoder("ilp", True, time_limit=args.time_limit)
        records = list(gap.measure(parser.model, dev, lp, ilp))
        overall = gap.summarize(records)[-1]
        integral = [r["time_ilp"] for r in records if r["integral"]]
        fractional = [r["time_ilp"] for r in records if not r["integral"]]
        rows.append({"eta": eta, "train_seconds": train_seconds,
                     "fractional_share": 100.0 - overall["integral"],
                     "mean_gap": overall["mean_gap"],
                     "time_ilp_mean": overall["time_ilp_mean"],
                     "time_ilp_p90": overall["time_ilp_p90"],
                     "time_ilp_integral": float(np.mean(integral)) if integral else None,
                     "time_ilp_fractional": float(np.mean(fractional)) if fractional else None,
                     "time_lp_mean": overall["time_lp_mean"],
                     "uas_ilp": overall["uas_ilp"], "uas_lp": overall["uas_lp"],
                     "fallbacks": overall["fallbacks"],
                     "train_relaxed_share": parser.report.epochs[-1].extra.get("relaxed_share"),
                     "train_fractional_share":
                         parser.report.epochs[-1].extra.get("fractional_share"),
                     "train_fallback_share": float(np.mean(
                         [e.extra.get("fallback_share", 0.0) for e in parser.report.epochs]))})
        print(rows[-1], flush=True)
        table = write_table(args, args.out,
                            f"SSG-eta on {args.treebank} (ICML 2009, experiment 2)", rows,
                    [("eta", "eta"), ("fractional_share", "% fractional LP (dev)"),
                     ("mean_gap", "mean gap"), ("time_ilp_mean", "ILP s"),
                     ("time_ilp_p90", "ILP p90 s"), ("time_ilp_integral", "ILP s (integral LP)"),
                     ("time_ilp_fractional", "ILP s (fractional LP)"),
                     ("time_lp_mean", "LP s"), ("uas_ilp", "UAS ILP"), ("uas_lp", "UAS LP+round"),
                     ("train_seconds", "train s"),
                     ("train_fallback_share", "% exact LAI timed out (train)"),
                     ("fallbacks", "dev ILP timeouts")],
                    notes=f"order {args.order}, reduced features, {args.epochs} epochs, "
                          f"{len(train)} train / {len(dev)} dev sentences"
                          + (f" of at most {args.max_length} words" if args.max_length else "")
                          + (f", exact decoding (training and dev) stopped after "
                             f"{args.time_limit} s of branch and bound (then LP + rounding; "
                             "dev fallbacks in the last column)" if args.time_limit else "")
                          + ", pruned to "
                          f"{args.max_heads} heads per word; UAS over all words. ILP: the exact "
                          "decoder as shipped (LP relaxation first, branch and bound only when "
                          "it is fractional), so its time on an integral LP is the LP's.")
    plot(rows, table.with_suffix(".png"))


def plot(rows, path) -> None:
    plt = pyplot()
    if plt is None:
        return
    etas = [r["eta"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(etas, [r["fractional_share"] for r in rows], "o-")
    a.set(xlabel="eta", ylabel="% fractional LP solutions on dev")
    b.plot(etas, [r["time_ilp_mean"] for r in rows], "o-", label="ILP")
    b.plot(etas, [r["time_lp_mean"] for r in rows], "s-", label="LP")
    b.set(xlabel="eta", ylabel="mean time per sentence (s)")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)

