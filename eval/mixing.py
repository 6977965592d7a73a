"""Does iterative parameter mixing cost accuracy? Dev UAS of SSG trained by IPM on 2 shards
(McDonald, Hall and Mann, NAACL 2010; uniform mixing) against SSG in one process, after
the same number of epochs.

    python -m eval run mixing [--en-sentences N] [--en-epochs E] [--tr-sentences N]
                          [--tr-epochs E] [--dev-sentences N] [--shards K] [--eta ETA]

en_ewt order 1 (mst) and tr_imst order 2 (all-pairs siblings, ad3-exact), gold tags
(no tagger: the comparison is of the weights), the first ``N`` training sentences when
capped (the table says so), dev scored after every epoch. The shards run one after the
other in this process (:class:`learning.mixing.SerialShards`), which gives the very
weights a Dask cluster gives (``tests/test_dask.py``). ``--eta 1`` trains SSG-eta with
relaxed loss-augmented inference (AD3 at order 2), as eval/trainers.py does; SSG's default,
exact loss-augmented inference, costs about a second per tr_imst sentence at order 2. Writes
``eval/results/mixing.{json,md}``; the issue's figure: within 0.3 UAS.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import _common
from ._common import arguments, RESULTS, machine, single_thread

single_thread()

UD = Path(os.environ.get("POLYPARSE_UD") or _common.UD)


def run(name: str, order: str, sentences: int | None, epochs: int, dev_cap: int | None,
        shards: int, trainings: str = "both", eta: float | None = None) -> list[dict]:
    from polyparse.corpora.conllu_io import read_treebank
    from polyparse.parser.config import TrainConfig, default_decoder
    from polyparse.parser.pipeline import Parser

    train = read_treebank(UD / name / "train.conllu")
    dev = read_treebank(UD / name / "dev.conllu")[:dev_cap]
    capped = sentences is not None and sentences < len(train)
    train = train[:sentences]
    parts = {"order": order}
    rows = []
    for how, mixing in (("one process", None),
                        (f"IPM, {shards} shards", {"shards": shards, "mixing": "uniform"})):
        if trainings != "both" and (trainings == "ipm") != (mixing is not None):
            continue
        config = TrainConfig(epochs=epochs, decoder=default_decoder(parts), parts=parts,
                             mixing=mixing,
                             trainer_options={} if eta is None else {"eta": eta})
        began = time.perf_counter()
        parser = Parser.train(train, config, dev)
        rows.append({"treebank": name, "order": order, "training": how,
                     "train_sentences": len(train), "capped": capped, "eta": eta,
                     "dev_sentences": len(dev), "epochs": epochs,
                     "dev_uas": [e.dev["uas"] for e in parser.report.epochs],
                     "dev_las": [e.dev["las"] for e in parser.report.epochs],
                     "minutes": (time.perf_counter() - began) / 60})
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--en-sentences", type=int, default=None)
    ap.add_argument("--en-epochs", type=int, default=5)
    ap.add_argument("--tr-sentences", type=int, default=None)
    ap.add_argument("--tr-epochs", type=int, default=3)
    ap.add_argument("--dev-sentences", type=int, default=None)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--eta", type=float, default=None,
                    help="SSG's eta (default: the trainer's own, exact inference)")
    ap.add_argument("--only", choices=["en_ewt", "tr_imst"], default=None)
    ap.add_argument("--trainings", choices=["both", "one", "ipm"], default="both",
                    help="run only one side (to run the two side by side in two processes; "
                         "the table then pairs nothing: merge the JSON rows)")
    ap.add_argument("--out", default="mixing", help="table name under eval/results/")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    rows = []
    command = " ".join(["python", "eval/mixing.py", *sys.argv[1:]])
    if args.only in (None, "en_ewt"):
        rows += run("en_ewt", "1", args.en_sentences, args.en_epochs, args.dev_sentences,
                    args.shards, args.trainings, args.eta)
        write(rows, command, load_before, os.getloadavg(), args.out)  # even if stopped
    if args.only in (None, "tr_imst"):
        rows += run("tr_imst", "2", args.tr_sentences, args.tr_epochs, args.dev_sentences,
                    args.shards, args.trainings, args.eta)
        write(rows, command, load_before, os.getloadavg(), args.out)


def write(rows: list[dict], command: str, load_before, load_after,
          name: str = "mixing") -> None:
    """``eval/results/{name}.{json,md}`` of ``rows`` (pairs: one process, then IPM)."""
    out = RESULTS / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(
        {"machine": machine(), "load_before": load_before, "load_after": load_after,
         "command": command, "rows": rows}, indent=2))
    lines = ["# Iterative parameter mixing against one process: dev UAS after each epoch", "",
             f"Machine: {machine()}", "",
             f"Load average before: {load_before}; after: {load_after}. Command: "
             f"`{command}`. SSG (eta as in the command, else its default), gold tags, dev "
             "scored after every epoch; IPM's shards run one after the other in one process (the weights a "
             "Dask cluster gives too).", "",
             "| treebank | order | training | train sentences | dev sentences | dev UAS by "
             "epoch | dev LAS (last) | UAS difference (last) | minutes |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        baseline = next(b for b in rows if b["treebank"] == r["treebank"])
        difference = r["dev_uas"][-1] - baseline["dev_uas"][-1]
        lines.append(f"| {r['treebank']} | {r['order']} | {r['training']} | "
                     f"{r['train_sentences']}{' (capped)' if r['capped'] else ''} | "
                     f"{r['dev_sentences']} | "
                     f"{', '.join(f'{u:.2f}' for u in r['dev_uas'])} | {r['dev_las'][-1]:.2f} | "
                     f"{difference:+.2f} | {r['minutes']:.1f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))

