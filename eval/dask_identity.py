"""``polyparse parse --dask local:2`` writes the bytes of ``--jobs 1`` on a treebank's dev
set, as CoNLL-U and as raw text (issue 15's first figure).

    python -m eval run dask_identity [--treebank en_ewt] [--model M] [--train-sentences 1000]
                                     [--max-dev N] [--inputs conllu text]

The model (``--model``, or one trained by ``polyparse train`` with its tokenizer and
tagger on the first ``--train-sentences`` training sentences, 2 epochs, kept in
``RESULTS/tmp/``) parses the dev set (its first ``--max-dev`` sentences; ``../shared/ud``,
read in place) twice per input
format through the command line: with ``--jobs 1`` and with ``--dask local:2``. Raw text
is dev's ``# text`` lines, one paragraph each (``--inputs``: the formats, default both). Without the UD rules (``--no-ud-rules``):
a decoder's time limit, which the constrained ILP has, makes a sentence's tree depend on
the machine's speed, on one process as on a cluster. Writes ``dask_identity.{json,md}``
under ``--results``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._common import (POLYPARSE, arguments, folder as treebank_folder, kept_trained_model,
                      write_table)

SMOKE = ["--treebank", "sample", "--train-sentences", "20", "--max-dev", "10",
         "--inputs", "conllu"]
"""The smoke run: a model of 20 sample sentences parses 10 dev sentences, as CoNLL-U."""
INPUTS = {"conllu": "CoNLL-U", "text": "raw text"}


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt", help="default en_ewt")
    ap.add_argument("--model", default=None)
    ap.add_argument("--train-sentences", type=int, default=1000)
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="the first N dev sentences (default all)")
    ap.add_argument("--inputs", nargs="+", choices=list(INPUTS), default=list(INPUTS),
                    help="parse dev as CoNLL-U, as raw text, or both (default)")
    args = ap.parse_args(argv)
    folder = treebank_folder(args.ud, args.treebank)
    if not (folder / "dev.conllu").exists():
        sys.exit(f"{folder / 'dev.conllu'} not found")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        model = kept_trained_model(args, f"dask_identity_{args.treebank}_{args.train_sentences}",
                                   folder, args.train_sentences, tmp)
        dev = tmp / "dev.conllu"
        dev.write_text("\n\n".join((folder / "dev.conllu").read_text(encoding="utf-8")
                                   .split("\n\n")[:args.max_dev]).rstrip("\n") + "\n\n",
                       encoding="utf-8")
        raw = tmp / "dev.txt"
        raw.write_text("".join(line[len("# text = "):] + "\n\n" for line in
                               dev.read_text(encoding="utf-8").splitlines()
                               if line.startswith("# text = ")), encoding="utf-8")
        rows = []
        sources = {"conllu": dev, "text": raw}
        for name, source in ((INPUTS[i], sources[i]) for i in args.inputs):
            outputs = {}
            for how in (["--jobs", "1"], ["--dask", "local:2"]):
                out = tmp / f"out{len(outputs)}.conllu"
                began = time.perf_counter()
                subprocess.run([*POLYPARSE, "-q", "parse", "--model", str(model), "--input",
                                str(source), "--output", str(out), "--no-ud-rules", *how],
                               check=True)
                outputs[" ".join(how)] = (out.read_bytes(), time.perf_counter() - began)
            (one, one_s), (dask, dask_s) = outputs.values()
            rows.append({"input": name, "sentences": one.count(b"\n\n"),
                         "md5_jobs_1": hashlib.md5(one).hexdigest(),
                         "md5_dask_local_2": hashlib.md5(dask).hexdigest(),
                         "identical": "yes" if one == dask else "NO",
                         "jobs_1_s": one_s, "dask_s": dask_s})
    table = write_table(args, "dask_identity",
                        f"--dask local:2 against --jobs 1 on {args.treebank} dev", rows,
                        [("input", "input"), ("sentences", "sentences"),
                         ("identical", "same bytes"), ("md5_jobs_1", "md5 --jobs 1"),
                         ("md5_dask_local_2", "md5 --dask local:2"),
                         ("jobs_1_s", "--jobs 1 s"), ("dask_s", "--dask local:2 s")],
                        notes=f"Model {model.name}.")
    print(table.read_text())

