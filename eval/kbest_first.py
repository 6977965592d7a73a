"""Issue 41's k-best figure: ``--kbest``'s first tree is ``parse``'s, the UD rules on.

For every model ``WORK/models/TREEBANK-ORDER.npz`` and held-out part
``WORK/TREEBANK/held.conllu`` that ``eval/defaults.py --work WORK`` left (the defaults of
each order), the held-out sentences are tagged by the model's tagger and each is decoded
as ``polyparse parse`` decodes it (:func:`polyparse.parser.cli.parser_for_parse`: the
rules on, the model's default decoder and time limit) and by ``parse --kbest K``
(:meth:`~polyparse.parser.pipeline.Parser.kbest`); a row counts the sentences whose first
k-best tree has parse's heads and labels, and those whose parse tree reached the time
limit. Writes ``eval/results/kbest_first.{md,json}`` (``--out`` for another stem).

    python -m eval run kbest_first --work /tmp/polyparse-defaults
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from ._common import arguments, RESULTS, revision, write_table

from polyparse.corpora.conllu_io import read_treebank
from polyparse.parser import cli

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


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "polyparse-defaults"),
                    help="eval/defaults.py's --work folder (its models and held-out parts)")
    ap.add_argument("--kbest", type=int, default=3, metavar="K", help="K (default 3)")
    ap.add_argument("--treebanks", nargs="+", default=None, metavar="NAME",
                    help="only these treebanks' models (default: every one there)")
    ap.add_argument("--out", default="kbest_first", help="result stem under eval/results")
    args = ap.parse_args(argv)
    work = Path(args.work)
    models = [model for model in sorted((work / "models").glob("*-*.npz"))
              if args.treebanks is None or model.stem.rsplit("-", 1)[0] in args.treebanks]
    if args.kbest < 1 or not models:
        sys.exit(f"{work / 'models'}: no model of eval/defaults.py there" if not models
                 else "--kbest must be at least 1")
    meta = {"command": " ".join(["python -m eval run kbest_first", *(argv or sys.argv[1:])]),
            "revision": revision(),
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_before": [round(x, 2) for x in os.getloadavg()]}
    rows = []
    for model in models:
        treebank, order = model.stem.rsplit("-", 1)
        rows.append({"treebank": treebank, "order": order,
                     **compare(model, work / treebank / "held.conllu", args.kbest)})
        print(rows[-1], flush=True)
    meta["load_after"] = [round(x, 2) for x in os.getloadavg()]
    notes = (f"Command: `{meta['command']}` at revision {meta['revision']}, {meta['date']}; "
             f"load average {meta['load_before']} before, {meta['load_after']} after. "
             f"Models and held-out parts of eval/defaults.py; K = {args.kbest}; predicted "
             "tags; the UD rules on; each model's default decoder and time limit.")
    write_table(RESULTS / args.out, "--kbest's first tree against parse's (issue 41)", rows,
                COLUMNS, notes, meta=meta)

