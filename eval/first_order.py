"""Issue 2 benchmark: the arc-factored labeled parser on real UD treebanks.

One command::

    python eval/first_order.py [--epochs 10] [--out eval/results/first_order]

trains on ``../shared/ud/en_ewt`` train (gold UPOS/XPOS, single root, MST) and reports
dev UAS/LAS over all words and without punctuation, training time per epoch, peak
memory of training, and parsing speed on one core with feature extraction's share;
then tr_imst train -> dev with MST and with Eisner. Writes ``OUT.json`` and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from _common import RESULTS, UD, machine, single_thread

single_thread()

from polyparse.corpora.conllu_io import read_treebank  # noqa: E402
from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402


def parse_speed(parser: Parser, sentences) -> dict:
    """Tokens/s of parsing (features + scoring + decoding + labels), and the share of
    feature extraction, on one core."""
    model = parser.model
    tokens = sum(len(s) for s in sentences)
    for s in sentences[:50]:                      # compile the kernels first
        parser.parse_one(s)
    start = time.perf_counter()
    for s in sentences:
        parser.parse_one(s)
    total = time.perf_counter() - start
    start = time.perf_counter()
    for s in sentences:
        model.example(s)
    features = time.perf_counter() - start
    return {"tokens": tokens, "seconds": total, "tokens_per_s": tokens / total,
            "feature_share": features / total}


def run(name: str, train_file: Path, dev_file: Path, decoder: str, epochs: int,
        options: dict) -> dict:
    train = read_treebank(train_file)
    dev = read_treebank(dev_file)
    config = TrainConfig(decoder=decoder, epochs=epochs, trainer_options=options)
    start = time.perf_counter()
    parser = Parser.train(train, config, dev, progress=sys.stderr.isatty())
    train_seconds = time.perf_counter() - start
    scores = attachment_scores(dev, parser.parse(dev)).to_json()
    return {"treebank": name, "decoder": decoder, "epochs": epochs, "options": options,
            "train_sentences": len(train), "dev_sentences": len(dev),
            "train_seconds": train_seconds,
            "epoch_curve": parser.report.to_json(),
            "dev": scores, "speed": parse_speed(parser, dev),
            "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20}


def markdown(rows: list[dict]) -> str:
    lines = ["| treebank | decoder | epochs | UAS all | LAS all | LAS-full all | UAS no-punct | "
             "LAS no-punct | train min | tokens/s (1 core) | feature share | peak RSS GB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, p = r["dev"]["all_words"], r["dev"]["no_punct"]
        lines.append(f"| {r['treebank']} | {r['decoder']} | {r['epochs']} | {a['uas']:.2f} | "
                     f"{a['las']:.2f} | {a['las_full']:.2f} | {p['uas']:.2f} | {p['las']:.2f} | "
                     f"{r['train_seconds'] / 60:.1f} | {r['speed']['tokens_per_s']:.0f} | "
                     f"{r['speed']['feature_share']:.2f} | {r['peak_rss_gb']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lambda", dest="lambda_", type=float, default=None)
    ap.add_argument("--only", choices=["en_ewt", "tr_imst"], default=None)
    ap.add_argument("--out", default=str(RESULTS / "first_order"))
    args = ap.parse_args()
    if not UD.is_dir():
        sys.exit(f"{UD} not found: the benchmark reads the shared UD treebanks")
    options = {"lambda_": args.lambda_} if args.lambda_ else {}
    jobs = [("en_ewt", "mst"), ("tr_imst", "mst"), ("tr_imst", "eisner")]
    rows = []
    for name, decoder in jobs:
        if args.only and name != args.only:
            continue
        rows.append(run(name, UD / name / "train.conllu", UD / name / "dev.conllu", decoder,
                        args.epochs, options))
        print(markdown(rows[-1:]), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"machine": machine(), "rows": rows},
                                                   indent=2))
    out.with_suffix(".md").write_text(
        f"# First-order parser (issue 2)\n\nMachine: {machine()}\n\n"
        "Scores over all syntactic words and without punctuation (UPOS PUNCT); LAS "
        "compares universal labels (CoNLL 2018), LAS-full the full label.\n\n"
        + markdown(rows))


if __name__ == "__main__":
    main()
