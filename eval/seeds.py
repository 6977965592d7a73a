"""How much the training seed moves the defaults, order 1 against order 2, on the small
treebanks.

One command::

    python -m eval run seeds [--ud DIR] [--treebanks NAME ...] [--orders 1 2]
                             [--seeds N] [--work DIR] [--out NAME]

For each treebank (default: the four without a dev split, 500-1,250 training
sentences, where one held-out tenth is 1,000-2,500 tokens), each order and each seed
``0 .. N-1``, a model is trained by ``polyparse train --train TRAIN --model M [--order
2] --seed S``, nothing else, on the training sentences but every 10th, the held-out ones
(as ``eval/defaults.py`` splits them), then the held-out sentences are tagged and parsed
as ``polyparse parse`` does it: UAS and LAS over all words, gold tokens, predicted tags.
The seed draws everything random in a run: the jackknife folds, the tagger's, the
pruner's and the parser's order of sentences.

Also per run, from the model's report: the mean slack of the parser's first and last
epoch (the SSG objective's hinge part, taken online during the epoch): a run whose first
epoch met slacks ten times the others' is one whose early Pegasos steps went astray
(``docs/algorithms.md`` section 5, "What the seed does to order 2"). The summary gives
per treebank and order the mean, smallest and largest UAS over the seeds, and per
treebank the seeds on which order 2 parsed at least as well as order 1 with the same
seed.

Writes ``seeds.{md,json}`` under ``--results`` (``--out`` for another stem) after every
run; models and logs in ``--work``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ._common import (SAMPLE, arguments, folder, markdown_table, require_treebanks,
                      treebanks_argument, write_table)
from .defaults import order_flags, run, split, time_analyses

from polyparse.corpora.conllu_io import read_treebank
from polyparse.parser.evaluate import attachment_scores

SMALL = ["da_ddt", "nl_alpino", "sl_ssj", "sv_talbanken"]

SMOKE = ["--ud", str(SAMPLE.parent), "--treebanks", "sample", "--orders", "1",
         "--seeds", "2", "--max-train", "20", "--work", "{results}/work"]
"""The smoke run: order 1 on 20 sentences of the sample, two seeds."""


def held_out_scores(model: Path, held: Path) -> dict:
    """UAS and LAS (all words) of ``model`` on ``held`` (its own tags), and the mean
    slack of its first and last training epoch."""
    gold = read_treebank(held)
    parser, analyses, _ = time_analyses(model, gold)
    scores = attachment_scores(gold, [a.sentence for a in analyses]).all_words
    epochs = parser.report.epochs
    return {"uas": scores["uas"], "las": scores["las"],
            "first_slack": epochs[0].mean_slack, "last_slack": epochs[-1].mean_slack}


def summary(rows: list[dict]) -> list[dict]:
    """Per treebank and order: seeds, mean, smallest and largest UAS and LAS; with order 1
    among the orders, the seeds where the higher order's UAS is at least order 1's."""
    out = []
    for treebank in dict.fromkeys(r["treebank"] for r in rows):
        mine = [r for r in rows if r["treebank"] == treebank]
        first = {r["seed"]: r["uas"] for r in mine if r["order"] == "1"}
        for order in dict.fromkeys(r["order"] for r in mine):
            runs = [r for r in mine if r["order"] == order]
            uas = np.array([r["uas"] for r in runs])
            paired = [r["uas"] >= first[r["seed"]] for r in runs if r["seed"] in first]
            out.append({"treebank": treebank, "order": order, "seeds": len(runs),
                        "mean_uas": float(uas.mean()), "min_uas": float(uas.min()),
                        "max_uas": float(uas.max()),
                        "mean_las": float(np.mean([r["las"] for r in runs])),
                        "at_least_order1": (f"{sum(paired)} of {len(paired)}"
                                            if order != "1" and paired else "")})
    return out


COLUMNS = [("treebank", "treebank"), ("order", "order"), ("seed", "seed"),
           ("uas", "UAS"), ("las", "LAS"), ("first_slack", "epoch 1 mean slack"),
           ("last_slack", "last epoch mean slack"), ("train_min", "train min")]

SUMMARY = [("treebank", "treebank"), ("order", "order"), ("seeds", "seeds"),
           ("mean_uas", "mean UAS"), ("min_uas", "lowest UAS"), ("max_uas", "highest UAS"),
           ("mean_las", "mean LAS"), ("at_least_order1", "UAS >= order 1, same seed")]


def write(args, rows: list[dict]) -> None:
    notes = ("Each model trained by `polyparse train --train TRAIN --model M [--order 2] "
             "--seed S` alone, on train.conllu but every 10th sentence (or on train.conllu, "
             "tested on dev.conllu, where there is one); UAS and LAS over all words of the "
             "held-out sentences, gold tokens, the model's tags. Mean slacks: the parser's "
             "SSG epochs, from the model's report.")
    totals = summary(rows)
    write_table(args, args.out, "The defaults under different seeds", rows, COLUMNS, notes,
                meta={"summary": totals},
                after="\n".join(["Over the seeds:", "", *markdown_table(totals, SUMMARY)]))


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    treebanks_argument(ap, SMALL)
    ap.add_argument("--orders", nargs="+", choices=["1", "2", "full"], default=["1", "2"])
    ap.add_argument("--seeds", type=int, default=5, metavar="N",
                    help="train with seeds 0 .. N-1 (default 5)")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="train on the first N training sentences (default all)")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "polyparse-seeds"),
                    metavar="DIR", help="split treebanks, models and training logs")
    ap.add_argument("--out", default="seeds", help="result stem under --results")
    args = ap.parse_args(argv)
    ud, work = Path(args.ud), Path(args.work)
    require_treebanks(ap, ud, args.treebanks)
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, not {args.seeds}")
    rows = []
    for name in args.treebanks:
        train, held, how = split(folder(ud, name), work / name, None, args.max_train)
        for seed in range(args.seeds):
            for order in args.orders:
                model = work / name / f"{order}-seed{seed}.npz"
                minutes = run("train", "--train", str(train), "--model", str(model),
                              "--seed", str(seed), *order_flags(order),
                              log=work / name / f"train-{order}-seed{seed}.log") / 60
                rows.append({"treebank": name, "order": order, "seed": seed,
                             "held_out": how, "train_min": minutes,
                             **held_out_scores(model, held)})
                print(rows[-1], flush=True)
                write(args, rows)


if __name__ == "__main__":
    main()
