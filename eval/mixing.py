"""Does iterative parameter mixing cost accuracy? Dev UAS of SSG trained by IPM on 2 shards
(McDonald, Hall and Mann, NAACL 2010; uniform mixing) against SSG in one process, after
the same number of epochs.

    python -m eval run mixing [--runs en_ewt:1:5 tr_imst:2:3] [--max-train N]
                              [--dev-sentences N] [--shards K] [--eta ETA]

Each run ``TREEBANK:ORDER:EPOCHS`` of ``--runs``, by default en_ewt order 1 (mst, 5
epochs) and tr_imst order 2 (all-pairs siblings, ad3-exact, 3 epochs), gold tags
(no tagger: the comparison is of the weights), the first ``N`` training sentences when
capped by ``--max-train`` (the table says so), dev scored after every epoch. The shards
run one after the other in this process (:class:`learning.mixing.SerialShards`), which
gives the very weights a Dask cluster gives (``tests/test_dask.py``). ``--eta 1`` trains
SSG-eta with relaxed loss-augmented inference (AD3 at order 2), as ``trainers`` does; SSG's default,
exact loss-augmented inference, costs about a second per tr_imst sentence at order 2. Writes
``mixing.{json,md}`` under ``--results`` after each run; the issue's figure: within 0.3 UAS.
"""

from __future__ import annotations

import time

from ._common import arguments, require_treebanks, single_thread, split, write_result

single_thread()

SMOKE = ["--runs", "sample:1:1", "--max-train", "20", "--dev-sentences", "5"]
"""The smoke run: order 1, one epoch on 20 sentences of the sample, 5 dev sentences."""


def run(ud, name: str, order: str, sentences: int | None, epochs: int, dev_cap: int | None,
        shards: int, trainings: str = "both", eta: float | None = None) -> list[dict]:
    from polyparse.parser.config import MixingConfig, PartsConfig, TrainConfig, default_decoder
    from polyparse.parser.pipeline import Parser

    train, dev, _ = split(ud, name)
    dev = dev[:dev_cap]
    capped = sentences is not None and sentences < len(train)
    train = train[:sentences]
    parts = PartsConfig(order)
    rows = []
    for how, mixing in (("one process", None),
                        (f"IPM, {shards} shards", MixingConfig(shards))):
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
    ap.add_argument("--runs", nargs="+", default=["en_ewt:1:5", "tr_imst:2:3"],
                    metavar="TREEBANK:ORDER:EPOCHS", help="default en_ewt:1:5 tr_imst:2:3")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="the first N training sentences (default all)")
    ap.add_argument("--dev-sentences", type=int, default=None)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--eta", type=float, default=None,
                    help="SSG's eta (default: the trainer's own, exact inference)")
    ap.add_argument("--trainings", choices=["both", "one", "ipm"], default="both",
                    help="run only one side (to run the two side by side in two processes; "
                         "the table then pairs nothing: merge the JSON rows)")
    ap.add_argument("--out", default="mixing", help="table name under --results")
    args = ap.parse_args(argv)
    runs = [tuple(run.split(":")) for run in args.runs]
    if any(len(r) != 3 or r[1] not in ("1", "2", "full") or not r[2].isdigit() for r in runs):
        ap.error(f"--runs {' '.join(args.runs)}: each must be TREEBANK:ORDER:EPOCHS, "
                 "ORDER 1, 2 or full")
    require_treebanks(ap, args.ud, [name for name, _, _ in runs])
    rows = []
    for name, order, epochs in runs:
        rows += run(args.ud, name, order, args.max_train, int(epochs), args.dev_sentences,
                    args.shards, args.trainings, args.eta)
        table = write_result(args, args.out, "Iterative parameter mixing against one process: "
                             "dev UAS after each epoch", {"rows": rows}, markdown(rows))
    print(table.read_text())


def markdown(rows: list[dict]) -> list[str]:
    """The table of ``rows`` (pairs: one process, then IPM)."""
    lines = ["SSG (eta as in the command, else its default), gold tags, dev "
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
    return lines

