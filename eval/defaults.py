"""Issue 41 item 7: what the defaults give, on every shared treebank.

One command::

    python -m eval run defaults [--ud DIR] [--treebanks NAME ...] [--orders 1 2]
                            [--work DIR] [--models DIR] [--max-sentences N] [--out NAME]

For each treebank (each folder of ``--ud``, default ``../shared/ud``, with a
train.conllu) and each order, a model is trained by ``polyparse train --train TRAIN
--model M [--order 2]``, nothing else. It is trained on train.conllu and tested on
dev.conllu; where a folder has no dev.conllu, every 10th training sentence is held out
and the model trained on the others (both parts written into ``--work``). The held-out
sentences (the first ``--max-sentences``) are then parsed as a user meets them:

* end to end: ``polyparse parse --model M --input HELD --retag --output OUT`` (the
  model's tagger on gold tokens) as a child process, timed by the wall clock: start,
  imports and loading the model included;
* in this process: the parser ``polyparse parse`` decodes with
  (:func:`polyparse.parser.cli.parser_for_parse`), the sentences tagged by
  ``Parser.tag``, then each ``Parser.analyze(sentence)`` timed: UAS and LAS (all words),
  tokens/s, the mean, 99th percentile and slowest sentence's time, the share of trees
  certified optimal (``Certificate.optimal``) and the sentences that reached the
  decoder's time limit (certificate ``time-limit``).

Training's wall time comes with the weights' (the epochs' seconds in the model's
report). ``--models DIR`` parses the models ``DIR/TREEBANK-ORDER.npz`` of an earlier run
(``WORK/models``) instead of training. The commands' messages are kept in
``WORK/TREEBANK/train-ORDER.log`` (epoch by epoch) and ``parsed-ORDER.log``. Threads are
left as the environment sets them.
Writes ``defaults.{md,json}`` under ``--results`` (``--out`` for another stem) after every
row.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from ._common import (POLYPARSE, SAMPLE, arguments, markdown_table, timed_command,
                      warm_up_argument, write_table)

from polyparse.corpora.conllu_io import read_treebank
from polyparse.parser import cli
from polyparse.parser.evaluate import attachment_scores

SMOKE = ["--ud", str(SAMPLE.parent), "--treebanks", "sample", "--orders", "1",
         "--max-train", "20", "--max-sentences", "3", "--work", "{results}/work", "--no-warm-up"]
"""The smoke run: order 1 trained on 20 sentences of the sample, 3 parsed, no warm-up."""

HOLD_OUT_EVERY = 10
"""Without dev.conllu, training sentences 10, 20, 30, ... (1-based) are held out."""

WARM_TRAIN = 30
"""Training sentences of the untimed run that compiles (or loads) numba's kernels of an
order's setup before its first timed training."""

WARM_PARSE = 5
"""Held-out sentences of the untimed ``polyparse parse`` before the timed one, and of
the untimed in-process analyses before the timed ones."""



def blocks(path: Path) -> list[str]:
    """The sentences of a CoNLL-U file as text, comments and all."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    return [block.strip("\n") for block in text.split("\n\n") if block.strip()]


def write_blocks(path: Path, sentences: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(block + "\n\n" for block in sentences), encoding="utf-8")
    return path


def split(folder: Path, work: Path, max_sentences: int | None,
          max_train: int | None = None) -> tuple[Path, Path, str]:
    """``(train, held_out, how)``: the training file (the treebank's own where it has a
    dev.conllu, or its first ``max_train`` sentences) and the held-out sentences parsed,
    written into ``work``."""
    if (folder / "dev.conllu").is_file():
        train, held, how = folder / "train.conllu", blocks(folder / "dev.conllu"), "dev"
        if max_train is not None:
            train = write_blocks(work / "train.conllu", blocks(train)[:max_train])
    else:
        sentences = blocks(folder / "train.conllu")
        rest = [s for i, s in enumerate(sentences, 1) if i % HOLD_OUT_EVERY]
        held = [s for i, s in enumerate(sentences, 1) if not i % HOLD_OUT_EVERY]
        train = write_blocks(work / "train.conllu", rest[:max_train])
        how = f"train, every {HOLD_OUT_EVERY}th"
    return train, write_blocks(work / "held.conllu", held[:max_sentences]), how


def run(*args: str, log: Path) -> float:
    """Wall seconds of ``polyparse ARGS`` in a child process, its messages written to
    ``log`` (where a long training run can be followed); exits if it fails."""
    return timed_command([*POLYPARSE, *args], log)


def order_flags(order: str) -> list[str]:
    return [] if order == "1" else ["--order", order]


def warm_training(train: Path, order: str, work: Path) -> None:
    """Train once, untimed, on a few sentences, so that the timed run finds the kernels
    of its setup in numba's cache (``parser.warmup``) instead of compiling them."""
    small = write_blocks(work / "warm.conllu", blocks(train)[:WARM_TRAIN])
    model, log = work / f"warm-{order}.npz", work / f"warm-{order}.log"
    run("train", "--train", str(small), "--model", str(model), "--epochs", "1",
        *order_flags(order), log=log)
    for path in (small, model, log):
        path.unlink()


def time_cli(model: Path, held: Path, out: Path, warm_up: bool = True) -> float:
    """Wall seconds of ``polyparse parse --retag`` from ``held`` into ``out``, after an
    untimed run on a few sentences that fills numba's cache (unless not ``warm_up``)."""
    log = out.with_suffix(".log")
    if warm_up:
        warm = write_blocks(out.with_name("warm.conllu"), blocks(held)[:WARM_PARSE])
        run("parse", "--model", str(model), "--input", str(warm), "--retag", "--output",
            str(out), log=log)
        warm.unlink()
    return run("parse", "--model", str(model), "--input", str(held), "--retag",
               "--output", str(out), log=log)


def time_analyses(model: Path, gold: list) -> tuple:
    """``(parser, analyses, seconds)``: the parser ``polyparse parse --model MODEL``
    decodes with, its analysis of each sentence of ``gold`` after tagging them all, and
    each analysis's wall seconds (after the parser's warm-up, as ``parse`` does it)."""
    parser = cli.parser_for_parse(cli.build_parser().parse_args(["parse", "--model",
                                                                  str(model)]))
    return (parser, *timed_analyses(parser, parser.tag(gold)))


def timed_analyses(parser, sentences: list) -> tuple[list, np.ndarray]:
    """``(analyses, seconds)``: ``parser``'s analysis of each of ``sentences`` (its tags
    as given) and its wall seconds, after the parser's warm-up (as ``parse`` does it)."""
    parser.warm_up()
    seconds, analyses = [], []
    for sentence in sentences:
        start = time.perf_counter()
        analyses.append(parser.analyze(sentence))
        seconds.append(time.perf_counter() - start)
    return analyses, np.array(seconds)


def parse_held_out(model: Path, held: Path, out: Path, warm_up: bool = True) -> dict:
    """Parse ``held`` both ways with ``model`` (into ``out`` by the command): the row's
    figures of parsing and the weights' training time from the model's report."""
    gold = read_treebank(held)
    tokens = sum(len(s) for s in gold)
    cli_s = time_cli(model, held, out, warm_up)
    parser, analyses, seconds = time_analyses(model, gold)
    parsed = [a.sentence for a in analyses]
    scores = attachment_scores(gold, parsed).all_words
    epochs = parser.report.epochs if parser.report else []
    return {"sentences": len(gold), "tokens": tokens, "decoder": parser.decoder.name,
            "uas": scores["uas"], "las": scores["las"],
            "cli_tokens_per_s": tokens / cli_s, "tokens_per_s": tokens / float(seconds.sum()),
            "mean_ms": 1e3 * float(seconds.mean()),
            "p99_ms": 1e3 * float(np.percentile(seconds, 99)),
            "max_ms": 1e3 * float(seconds.max()),
            "max_words": len(gold[int(seconds.argmax())]),
            "optimal_pct": 100.0 * float(np.mean([a.certificate.optimal for a in analyses])),
            "time_limits": sum(a.certificate.kind == "time-limit" for a in analyses),
            "unconstrained": sum(a.certificate.unconstrained for a in analyses),
            "same_as_cli": same_trees(parsed, read_treebank(out)), "epochs": len(epochs),
            "weights_min": sum(e.seconds for e in epochs) / 60 if epochs else None}


def same_trees(a: list, b: list) -> int:
    """Sentences whose HEAD and DEPREL agree in the two parses."""
    return sum(np.array_equal(x.heads, y.heads) and list(x.deprels) == list(y.deprels)
               for x, y in zip(a, b))


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def against_first_order(rows: list[dict]) -> list[dict]:
    """Per treebank and higher order: its speed and training time over order 1's, and
    its UAS minus order 1's."""
    first = {row["treebank"]: row for row in rows if row["order"] == "1"}
    return [{"treebank": row["treebank"], "order": row["order"],
             "speed_ratio": ratio(row["tokens_per_s"], base["tokens_per_s"]),
             "cli_speed_ratio": ratio(row["cli_tokens_per_s"], base["cli_tokens_per_s"]),
             "train_ratio": ratio(row["train_min"], base["train_min"]),
             "weights_ratio": ratio(row["weights_min"], base["weights_min"]),
             "uas_diff": row["uas"] - base["uas"]}
            for row in rows if row["order"] != "1" and (base := first.get(row["treebank"]))]


COLUMNS = [("treebank", "treebank"), ("order", "order"), ("decoder", "decoder"),
           ("held_out", "held out"), ("sentences", "sents"), ("tokens", "tokens"),
           ("uas", "UAS"), ("las", "LAS"), ("cli_tokens_per_s", "tokens/s CLI"),
           ("tokens_per_s", "tokens/s in process"), ("mean_ms", "mean ms"),
           ("p99_ms", "p99 ms"), ("max_ms", "slowest ms"), ("max_words", "its words"),
           ("optimal_pct", "optimal %"), ("time_limits", "time-limit"),
           ("unconstrained", "without rules"), ("train_min", "train min"), ("weights_min", "weights min"),
           ("same_as_cli", "same as CLI")]

DERIVED = [("treebank", "treebank"), ("order", "order"),
           ("speed_ratio", "speed / order 1 (in process)"),
           ("cli_speed_ratio", "speed / order 1 (CLI)"),
           ("train_ratio", "train time / order 1"),
           ("weights_ratio", "weights time / order 1"), ("uas_diff", "UAS - order 1")]


def write(args, rows: list[dict]) -> None:
    derived = against_first_order(rows)
    notes = ("Each model trained by `polyparse "
             "train --train TRAIN --model M [--order 2]` alone (`train min`: its wall time; "
             "`weights min`: the epochs' time in the model's report), on train.conllu "
             "tested on dev.conllu, or without dev on the training sentences but every "
             f"{HOLD_OUT_EVERY}th, which are held out. `tokens/s CLI`: `polyparse parse "
             "--input HELD --retag --output OUT` by the wall clock, start and model loading "
             "included; in process: the tagged sentences' `Parser.analyze` times, tagging "
             "excluded, whose mean, 99th percentile and slowest are given, with the words of "
             "the slowest sentence. UAS and LAS over all words, predicted tags, gold tokens; "
             "`optimal %`: trees certified optimal; `time-limit`: sentences that reached "
             "the decoder's time limit, `without rules` those of them that kept the tree "
             "decoded without the UD rules; `same as CLI`: sentences parsed alike by both ways. "
             "Threads as the environment sets them.")
    after = "\n".join(["Order 2 (or full) against order 1:", "",
                       *markdown_table(derived, DERIVED)]) if derived else ""
    write_table(args, args.out, "The defaults on the shared treebanks (issue 41, item 7)", rows,
                COLUMNS, notes, meta={"against_first_order": derived}, after=after)


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebanks", nargs="+", default=None, metavar="NAME",
                    help="folders of --ud (default: every one with a train.conllu)")
    ap.add_argument("--orders", nargs="+", choices=["1", "2", "full"], default=["1", "2"])
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "polyparse-defaults"),
                    metavar="DIR", help="split treebanks, parses and models (WORK/models)")
    ap.add_argument("--models", default=None, metavar="DIR",
                    help="parse the models DIR/TREEBANK-ORDER.npz instead of training")
    ap.add_argument("--max-sentences", type=int, default=None, metavar="N",
                    help="parse the first N held-out sentences (default all)")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="train on the first N training sentences (default all)")
    ap.add_argument("--out", default="defaults", help="result stem under --results")
    warm_up_argument(ap)
    args = ap.parse_args(argv)
    ud, work = Path(args.ud), Path(args.work)
    if not ud.is_dir():
        ap.error(f"--ud {ud}: no such folder")
    names = args.treebanks or sorted(p.name for p in ud.iterdir()
                                     if (p / "train.conllu").is_file())
    models = Path(args.models) if args.models else work / "models"
    for name in names:
        if not (ud / name / "train.conllu").is_file():
            ap.error(f"{ud / name / 'train.conllu'} not found")
        for order in args.orders:
            if args.models and not (models / f"{name}-{order}.npz").is_file():
                ap.error(f"--models: {models / f'{name}-{order}.npz'} not found")
    if args.max_sentences is not None and args.max_sentences < 1:
        ap.error(f"--max-sentences must be at least 1, not {args.max_sentences}")
    models.mkdir(parents=True, exist_ok=True)
    rows, warmed = [], set()
    for name in names:
        train, held, how = split(ud / name, work / name, args.max_sentences, args.max_train)
        for order in args.orders:
            model = models / f"{name}-{order}.npz"
            train_min = None
            if not args.models:
                if args.warm_up and order not in warmed:
                    warm_training(train, order, work)
                    warmed.add(order)
                train_min = run("train", "--train", str(train), "--model", str(model),
                                *order_flags(order),
                                log=work / name / f"train-{order}.log") / 60
            rows.append({"treebank": name, "order": order, "held_out": how,
                         "train_sentences": len(blocks(train)), "train_min": train_min,
                         **parse_held_out(model, held, work / name / f"parsed-{order}.conllu",
                                           args.warm_up)})
            print(rows[-1], flush=True)
            write(args, rows)

