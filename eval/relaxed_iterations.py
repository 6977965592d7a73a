"""How many AD3 iterations SSG's relaxed loss-augmented inference should run (issue 41).

For each treebank, order 2 is trained with the defaults but gold tags (``polyparse
train --order 2 --no-tagger --relaxed-max-iter N``) for each N of ``--iterations``
(``none``: AD3 to convergence, at most 10,000), on the training sentences that
eval/defaults.py trains on (a tenth held out where there is no dev), and the held-out
part is parsed with gold tags, the UD rules on and off, each sentence timed by
``Parser.analyze`` after the parser's warm-up. A row: training wall seconds, UAS and LAS
(all words) and tokens per second under both, and the sentences that reached the time
limit. ``--max-train`` and ``--max-sentences`` cut the training and held-out parts.
Writes ``relaxed_iterations.{md,json}`` under ``--results``.

    python -m eval run relaxed_iterations --treebanks da_ddt sv_talbanken
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ._common import SAMPLE, arguments, folder as treebank_folder, require_treebanks, write_table
from .defaults import run, split, timed_analyses, warm_training

from polyparse.corpora.conllu_io import read_treebank
from polyparse.parser.evaluate import attachment_scores
from polyparse.parser.pipeline import Parser

SMOKE = ["--ud", str(SAMPLE.parent), "--treebanks", "sample", "--iterations", "10",
         "--max-train", "20", "--max-sentences", "3", "--work", "{results}/work"]
"""The smoke run: 10 AD3 iterations, trained on 20 sentences of the sample, 3 parsed."""

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
    ap.add_argument("--treebanks", nargs="+", default=["da_ddt", "sv_talbanken"])
    ap.add_argument("--iterations", nargs="+", default=["100", "1000", "none"])
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir())
                                          / "polyparse-relaxed-iterations"))
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="the first N training sentences (default all)")
    ap.add_argument("--max-sentences", type=int, default=None, metavar="N",
                    help="the first N held-out sentences (default all)")
    ap.add_argument("--out", default="relaxed_iterations", help="result name under --results")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, args.treebanks)
    work = Path(args.work)
    rows = []
    for name in args.treebanks:
        folder = work / name
        train, held, how = split(treebank_folder(args.ud, name), folder, args.max_sentences,
                                 args.max_train)
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
    notes = ("Order 2, SSG with the defaults (eta 1: relaxed inference by AD3), gold tags; "
             "held out: dev, or every 10th training sentence; UAS and LAS over all words.")
    write_table(args, args.out, "AD3 iterations of SSG's relaxed inference (issue 41)",
                rows, COLUMNS, notes)

