"""Issue 41's k-best figure: ``--kbest``'s first tree is ``parse``'s, the UD rules on.

For every model ``WORK/models/TREEBANK-ORDER.npz`` and held-out part
``WORK/TREEBANK/held.conllu`` that ``eval/defaults.py --work WORK`` left (the defaults of
each order), the held-out sentences are tagged by the model's tagger and each is decoded
as ``polyparse parse`` decodes it (:func:`polyparse.parser.cli.parser_for_parse`: the
rules on, the model's default decoder and time limit) and by ``parse --kbest K``
(:meth:`~polyparse.parser.pipeline.Parser.kbest`); a row counts the sentences whose first
k-best tree has parse's heads and labels, and those whose parse tree reached the time
limit. With ``--train`` the models (and held-out parts) ``WORK`` lacks for ``--treebanks``
and ``--orders`` are first made as ``defaults`` makes them (on the first ``--max-train``
training sentences, all by default). Writes ``kbest_first.{md,json}`` under ``--results``
(``--out`` for another stem).

    python -m eval run kbest_first --work /tmp/polyparse-defaults
    python -m eval run kbest_first --work DIR --train --treebanks da_ddt --orders 1 2
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from . import defaults
from ._common import SAMPLE, arguments, folder, write_table

from polyparse.corpora.conllu_io import read_treebank
from polyparse.parser import cli

SMOKE = ["--work", "{results}/work", "--train", "--ud", str(SAMPLE.parent), "--treebanks",
         "sample", "--orders", "1", "--max-train", "20", "--max-sentences", "3"]
"""The smoke run: an order-1 model trained on 20 sentences of the sample, 3 parsed."""

COLUMNS = [("treebank", "treebank"), ("order", "order"), ("decoder", "decoder"),
           ("sentences", "sents"), ("same", "first k-best tree = parse's"),
           ("time_limits", "parse trees at the time limit")]


def compare(model: Path, held: Path, k: int) -> dict:
    """The row of one model: its held-out sentences parsed both ways."""
    parser = cli.parser_for_parse(cli.build_parser().parse_args(["parse", "--model",
                                                                  str(model)]))
    sentences = parser.tag(read_treebank(held))
    same = limited = 0
    for sentence in sentences:
        analysis = parser.analyze(sentence)
        first = parser.kbest(sentence, k)[0][0]
        same += (list(first.heads) == list(analysis.sentence.heads)
                 and list(first.deprels) == list(analysis.sentence.deprels))
        limited += analysis.certificate.kind == "time-limit"
    return {"decoder": parser.decoder.name, "sentences": len(sentences), "same": same,
            "time_limits": limited}


def train_missing(args, work: Path) -> None:
    """``defaults``'s model and held-out part of every ``--treebanks`` x ``--orders`` that
    ``work`` lacks."""
    for name in args.treebanks:
        for order in args.orders:
            model = work / "models" / f"{name}-{order}.npz"
            if model.exists():
                continue
            model.parent.mkdir(parents=True, exist_ok=True)
            train, _, _ = defaults.split(folder(args.ud, name), work / name,
                                         args.max_sentences, args.max_train)
            defaults.run("train", "--train", str(train), "--model", str(model),
                         *defaults.order_flags(order), log=work / name / f"train-{order}.log")


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "polyparse-defaults"),
                    help="eval/defaults.py's --work folder (its models and held-out parts)")
    ap.add_argument("--kbest", type=int, default=3, metavar="K", help="K (default 3)")
    ap.add_argument("--treebanks", nargs="+", default=None, metavar="NAME",
                    help="only these treebanks' models (default: every one there)")
    ap.add_argument("--train", action="store_true",
                    help="first train the models of --treebanks and --orders WORK lacks")
    ap.add_argument("--orders", nargs="+", choices=["1", "2", "full"], default=["1", "2"],
                    help="with --train (default 1 2)")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="with --train: the first N training sentences (default all)")
    ap.add_argument("--max-sentences", type=int, default=None, metavar="N",
                    help="with --train: the first N held-out sentences (default all)")
    ap.add_argument("--out", default="kbest_first", help="result stem under --results")
    args = ap.parse_args(argv)
    work = Path(args.work)
    if args.train:
        if not args.treebanks:
            ap.error("--train needs --treebanks")
        train_missing(args, work)
    models = [model for model in sorted((work / "models").glob("*-*.npz"))
              if args.treebanks is None or model.stem.rsplit("-", 1)[0] in args.treebanks]
    if args.kbest < 1 or not models:
        sys.exit(f"{work / 'models'}: no model of eval/defaults.py there" if not models
                 else "--kbest must be at least 1")
    rows = []
    for model in models:
        treebank, order = model.stem.rsplit("-", 1)
        rows.append({"treebank": treebank, "order": order,
                     **compare(model, work / treebank / "held.conllu", args.kbest)})
        print(rows[-1], flush=True)
    notes = (f"Models and held-out parts of eval/defaults.py; K = {args.kbest}; predicted "
             "tags; the UD rules on; each model's default decoder and time limit.")
    write_table(args, args.out, "--kbest's first tree against parse's (issue 41)", rows,
                COLUMNS, notes)

