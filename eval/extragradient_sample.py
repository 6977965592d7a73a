"""The dual extragradient trainer on the sample treebank at order 1, against the
perceptron; and the rate of its gap function G.

One command::

    python -m eval run extragradient_sample [--treebank sample] [--max-train N] [--epochs 30]
                                            [--iterations 1000]

1. ``polyparse train --order 1 --no-tagger`` on ``corpora/sample/train.conllu`` (400
   sentences; ``--treebank``, its first ``--max-train``) with dev scored after every
   epoch: extragradient at ``eta = 1/L`` (the default), 0.1 and 1, and the averaged
   perceptron (10 epochs) (``--trainings``); per epoch the seconds, G and dev UAS/LAS
   (from the model file's training report).
2. The rate: G of the averaged iterate against the iteration on the first 20 training
   sentences, ``radius`` 1 (a ball too small to separate them: positive slacks
   throughout) and 10 (separable), ``eta = 0.1``, and the log-log slope over the last
   decade of iterations.

Writes ``extragradient_sample.{json,md}`` under ``--results``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._common import POLYPARSE, REPO, arguments, folder, single_thread, write_result

single_thread()

import numpy as np  # noqa: E402

from polyparse.corpora.conllu_io import read_treebank  # noqa: E402
from polyparse.parser.config import FeatureConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

RATE_SENTENCES = 20
"""The training sentences of the rate of G."""

TRAININGS = {
    "1/L": ("extragradient, eta = 1/L (default)", ["--trainer", "extragradient"]),
    "0.1": ("extragradient, eta = 0.1", ["--trainer", "extragradient", "--eta", "0.1"]),
    "1": ("extragradient, eta = 1", ["--trainer", "extragradient", "--eta", "1"]),
    "perceptron": ("perceptron", ["--trainer", "perceptron", "--epochs", "10"]),
}
"""The runs of part 1, ``polyparse train`` flags (``--epochs`` added where not given)."""

SMOKE = ["--max-train", "20", "--epochs", "1", "--iterations", "5", "--trainings", "1/L"]
"""The smoke run: one epoch of the default extragradient on 20 sentences of the sample, 5
iterations of the rate."""


def train_cli(name: str, flags: list[str], train: Path, dev: Path, work: Path) -> dict:
    model = work / f"{len(list(work.glob('*.npz')))}.npz"
    command = [*POLYPARSE, "train", "--train", str(train), "--dev", str(dev), "--model",
               str(model), "--order", "1", "--no-tagger", *flags]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr)
    wall = time.perf_counter() - start
    epochs = Parser.load(model).report.epochs
    shown = ["polyparse", *command[len(POLYPARSE):]]
    return {"name": name, "command": " ".join(shown).replace(str(REPO) + "/", "").replace(
                str(model), "MODEL.npz").replace(str(work) + "/", ""),
            "wall": wall,
            "epochs": [{"epoch": e.epoch, "seconds": e.seconds, "objective": e.objective,
                        "uas": e.dev["uas"], "las": e.dev["las"], **e.extra}
                       for e in epochs]}


def rate(train_file: Path, radius: float, eta: float, sentences: int, iterations: int
         ) -> dict:
    train = read_treebank(train_file)[:sentences]
    config = TrainConfig(trainer="extragradient", epochs=iterations,
                         features=FeatureConfig(bits=16, label_bits=10),
                         trainer_options={"radius": radius, "eta": eta})
    parser = Parser.train(train, config)
    gaps = np.array([e.extra["G"] for e in parser.report.epochs])
    primal = np.array([e.extra["primal"] for e in parser.report.epochs])
    t = np.arange(1, iterations + 1)
    last = t >= iterations // 10
    slope = float(np.polyfit(np.log(t[last]), np.log(gaps[last]), 1)[0])
    marks = [k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000) if k <= iterations]
    return {"radius": radius, "eta": eta, "sentences": sentences, "iterations": iterations,
            "slope_last_decade": slope, "min_G": float(gaps.min()),
            "seconds_per_iteration": float(np.mean([e.seconds for e in parser.report.epochs])),
            "G": {k: float(gaps[k - 1]) for k in marks},
            "primal": {k: float(primal[k - 1]) for k in marks}}


def markdown(result: dict) -> list[str]:
    lines = [f"## Training on {result['treebank']} ({result['train']} sentences), dev "
             f"({result['dev']}) after each epoch", "",
             "| run | epochs | s/epoch | G first -> last | dev UAS / LAS last | best dev UAS (epoch) |",
             "|---|---:|---:|---|---|---|"]
    for run in result["runs"]:
        e = run["epochs"]
        best = max(e, key=lambda x: x["uas"])
        gaps = f"{e[0]['G']:.3g} -> {e[-1]['G']:.3g}" if "G" in e[0] else "-"
        lines.append(f"| {run['name']} | {len(e)} | {np.mean([x['seconds'] for x in e]):.2f} "
                     f"| {gaps} | {e[-1]['uas']:.2f} / {e[-1]['las']:.2f} "
                     f"| {best['uas']:.2f} ({best['epoch']}) |")
    lines.append("")
    for run in result["runs"]:
        lines += [f"### {run['name']}", "", f"    polyparse {run['command']}", "",
                  f"wall {run['wall']:.1f} s (preparation and dev parsing included)", "",
                  "| epoch | s | mean slack | G | dev UAS | dev LAS |",
                  "|---:|---:|---:|---:|---:|---:|"]
        for e in run["epochs"]:
            gap = f"{e['G']:.4g}" if "G" in e else "-"
            lines.append(f"| {e['epoch']} | {e['seconds']:.2f} | {e['objective']:.4g} | {gap} "
                         f"| {e['uas']:.2f} | {e['las']:.2f} |")
        lines.append("")
    lines += [f"## Rate of G (first {RATE_SENTENCES} training sentences, bits 16/10)", "",
              "| radius | eta | iterations | s/iteration | slope of log G, last decade "
              "| G at 1, 10, 100, ... | primal (sum of slacks) at the same |",
              "|---:|---:|---:|---:|---:|---|---|"]
    for r in result["rates"]:
        lines.append(f"| {r['radius']} | {r['eta']} | {r['iterations']} | "
                     f"{r['seconds_per_iteration']:.3f} | {r['slope_last_decade']:.3f} | "
                     + ", ".join(f"{k}: {v:.4g}" for k, v in r["G"].items()) + " | "
                     + ", ".join(f"{k}: {v:.3g}" for k, v in r["primal"].items()) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="sample", help="default sample")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="the first N training sentences (default all)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--trainings", nargs="+", choices=list(TRAININGS), default=list(TRAININGS),
                    help="the training runs of part 1 (default all)")
    args = ap.parse_args(argv)
    source = folder(args.ud, args.treebank)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        blocks = (source / "train.conllu").read_text(encoding="utf-8").split("\n\n")
        train = work / "train.conllu"
        train.write_text("\n\n".join(b for b in blocks[:args.max_train] if b.strip())
                         + "\n\n", encoding="utf-8")
        dev = source / "dev.conllu"
        result = {"epochs": args.epochs, "treebank": args.treebank,
                  "train": len(read_treebank(train)), "dev": len(read_treebank(dev)),
                  "runs": [], "rates": []}
        for key in args.trainings:
            name, flags = TRAININGS[key]
            epochs = [] if "--epochs" in flags else ["--epochs", str(args.epochs)]
            print(name, file=sys.stderr)
            result["runs"].append(train_cli(name, [*flags, *epochs], train, dev, work))
        for radius in (1.0, 10.0):
            print("rate, radius", radius, file=sys.stderr)
            result["rates"].append(rate(train, radius, 0.1, RATE_SENTENCES, args.iterations))
    table = write_result(args, "extragradient_sample",
                         f"Dual extragradient on {args.treebank}, order 1", result,
                         markdown(result))
    print(table.read_text())

