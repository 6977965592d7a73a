"""How many AD3 iterations SSG's relaxed loss-augmented inference should run (issue 41).

For each treebank, order 2 is trained with the defaults but gold tags (``polyparse
train --order 2 --no-tagger --relaxed-max-iter N``) for each N of ``--iterations``
(``none``: AD3 to convergence, at most 10,000), on the training sentences that
eval/defaults.py trains on (a tenth held out where there is no dev), and the held-out
part is parsed with gold tags, the UD rules on and off, each sentence timed by
``Parser.analyze`` after the parser's warm-up. A row: training wall seconds, UAS and LAS
(all words) and tokens per second under both, and the sentences that reached the time
limit. Writes ``eval/results/relaxed_iterations.{md,json}``.

    python -m eval run relaxed_iterations --treebanks da_ddt sv_talbanken
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from ._common import arguments, RESULTS, UD, revision, write_table
from .defaults import run, split, timed_analyses, warm_training

from polyparse.corpora.conllu_io import read_treebank
from polyparse.parser.evaluate import attachment_scores
from polyparse.parser.pipeline import Parser

COLUMNS = [("treebank", "treebank"), ("iterations", "relaxed AD3 iterations"),
           ("train_s", "train s"), ("uas", "UAS rules"), ("las", "LAS rules"),
           ("tokens_per_s", "tokens/s rules"), ("time_limits", "time-limit rules"),
           ("uas_free", "UAS no rules"), ("las_free", "LAS no rules"),
           ("tokens_per_s_free", "tokens/s no rules")]


def parsed(model: Path, gold: list, rules: bool) -> dict:
    """UAS, LAS, tokens/s and time limits of ``model`` on ``gold`` (its tags)."""
    parser = Parser.load(model)
    parser.use_ud_rules = rules
    analyses, seconds = timed_analyses(parser, gold)
    scores = attachment_scores(gold, [a.sentence for a in analyses]).all_words
    return {"uas": scores["uas"], "las": scores["las"],
            "tokens_per_s": sum(len(s) for s in gold) / float(np.sum(seconds)),
            "time_limits": sum(a.certificate.kind == "time-limit" for a in analyses)}


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--ud", default=str(UD), metavar="DIR")
    ap.add_argument("--treebanks", nargs="+", default=["da_ddt", "sv_talbanken"])
    ap.add_argument("--iterations", nargs="+", default=["100", "1000", "none"])
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir())
                                          / "polyparse-relaxed-iterations"))
    ap.add_argument("--out", default="relaxed_iterations")
    args = ap.parse_args(argv)
    work = Path(args.work)
    meta = {"command": " ".join(["python -m eval run relaxed_iterations",
                                 *(argv or sys.argv[1:])]),
            "revision": revision(),
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_before": [round(x, 2) for x in os.getloadavg()]}
    rows = []
    for name in args.treebanks:
        folder = work / name
        train, held, how = split(Path(args.ud) / name, folder, None)
        gold = read_treebank(held)
        warm_training(train, "2", folder)
        for iterations in args.iterations:
            model = folder / f"order2-{iterations}.npz"
            seconds = run("train", "--train", str(train), "--model", str(model), "--order",
                          "2", "--no-tagger", "--relaxed-max-iter", iterations,
                          log=folder / f"train-{iterations}.log")
            free = parsed(model, gold, rules=False)
            rows.append({"treebank": name, "held_out": how, "iterations": iterations,
                         "train_s": seconds, **parsed(model, gold, rules=True),
                         **{f"{key}_free": value for key, value in free.items()}})
            print(rows[-1], flush=True)
    meta["load_after"] = [round(x, 2) for x in os.getloadavg()]
    notes = (f"Command: `{meta['command']}` at revision {meta['revision']}, {meta['date']}; "
             f"load average {meta['load_before']} before, {meta['load_after']} after. "
             "Order 2, SSG with the defaults (eta 1: relaxed inference by AD3), gold tags; "
             "held out: dev, or every 10th training sentence; UAS and LAS over all words.")
    write_table(RESULTS / args.out, "AD3 iterations of SSG's relaxed inference (issue 41)",
                rows, COLUMNS, notes, meta=meta)

