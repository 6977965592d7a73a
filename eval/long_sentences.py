"""Issue 11 benchmark: long sentences and the per-sentence time limit.

One command::

    python -m eval run long_sentences [--treebank en_ewt] [--train N] [--train2 N]
                                      [--models DIR] [--ud DIR] [--out long_sentences]

Trains (or, with ``--models DIR``, reuses from DIR) two small models on en_ewt
(``--treebank``) training
sentences: an order-1 model with its tokenizer and tagger (``polyparse train``
defaults, 2 epochs) on the first ``--train`` (default 300), and an order-2 model
(pruned to 5 heads, ILP, 1 epoch, no tagger) on the first ``--train2`` (default 100). Then, each command in a child process of its own, as a user runs it
(process start and model loading included), its wall time and peak resident memory
(``ru_maxrss`` of the child):

1. ``polyparse parse`` of one CoNLL-U sentence of 3,000 words: en_ewt dev sentences,
   with their gold tags, concatenated and renumbered (the root word of each original
   sentence attached to that of the first, so the file has a gold tree: UAS is given);
2. ``polyparse parse --format text`` of one 3,000-word line of raw text without sentence
   punctuation (the same dev words, punctuation tokens left out): the tokenizer cuts it
   at ``--max-words`` (default 300), and the output is read back as CoNLL-U;
3. ``polyparse gap --time-limit 10`` on one 300-word sentence (built as in 1) with the
   order-2 model: the limit bounds both the LP relaxation and the ILP, all stages.

Targets (issue 11): 1 in <= 60 s and <= 2 GB, 2 in <= 60 s, 3 in <= 30 s with the
fallback counted. Each command is run once on a 5-word input first, so that numba's
compilation (once per installation, into its cache) is not counted (``--no-warm-up``: not). Writes
``OUT.json`` and ``OUT.md`` under ``--results`` with the load average before and after
each command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ._common import (POLYPARSE, arguments, folder as treebank_folder, single_thread,
                      warm_up_argument, write_result)

single_thread()

from polyparse.corpora.conllu_io import read_conllu, read_treebank  # noqa: E402

PUNCT = "PUNCT"

SMOKE = ["--treebank", "sample", "--train", "20", "--train2", "10", "--words", "200",
         "--gap-words", "20", "--time-limit", "2", "--no-warm-up"]
"""The smoke run: models of 20 and 10 sample sentences, inputs of 200 and 20 words, no
warm-up."""

# Runs ``argv`` and prints its wall time, its CPU time and peak RSS (KiB), children included.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:]).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": code, "seconds": time.perf_counter() - start,
                  "cpu_seconds": usage.ru_utime + usage.ru_stime,
                  "max_rss_kib": usage.ru_maxrss}))
"""


def long_sentence(sentences, n_words: int) -> str:
    """One CoNLL-U sentence of the first ``n_words`` words of ``sentences``, renumbered:
    the root word of the first sentence stays the root (its last word kept, where the
    root is cut off), those of the others (and words whose head was cut off at the end)
    become its dependents, so the file has a tree."""
    lines, offset = [f"# sent_id = long-{n_words}"], 0
    first = sentences[0]
    root = min(int(first.heads[1:].tolist().index(0)) + 1, n_words)
    for sentence in sentences:
        take = min(len(sentence), n_words - offset)
        if take <= 0:
            break
        for i in range(1, take + 1):
            head, deprel = int(sentence.heads[i]), sentence.deprels[i]
            if offset + i == root:
                head, deprel = 0, "root"
            elif head == 0 or head > take:
                head, deprel = root, "parataxis"
            else:
                head += offset
            lines.append("\t".join([str(offset + i), sentence.forms[i], sentence.lemmas[i],
                                    sentence.upos[i], sentence.xpos[i], "_", str(head),
                                    deprel, "_", "_"]))
        offset += take
    return "\n".join(lines) + "\n\n"


def raw_line(sentences, n_words: int) -> str:
    """``n_words`` words of ``sentences`` without punctuation tokens, on one line."""
    words = [form for s in sentences for form, upos in zip(s.forms[1:], s.upos[1:])
             if upos != PUNCT]
    return " ".join(words[:n_words]) + "\n"


def measure(argv: list[str], name: str) -> dict:
    load_before = os.getloadavg()
    out = subprocess.run([sys.executable, "-c", _MEASURE, *argv], capture_output=True,
                         text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(name=name, command=" ".join(argv), load_before=load_before[0],
                  load_after=os.getloadavg()[0], stderr=out.stderr.strip()[-400:])
    print(f"{name}: {result['seconds']:.1f} s ({result['cpu_seconds']:.1f} s CPU), "
          f"{result['max_rss_kib'] / 1024:.0f} MiB, "
          f"rc {result['rc']}, load {load_before[0]:.2f}", file=sys.stderr, flush=True)
    return result


def train_models(folder: Path, source_folder: Path, n_train: int, n_train2: int
                 ) -> tuple[Path, Path]:
    with open(source_folder / "train.conllu", encoding="utf-8") as source:
        blocks = source.read().split("\n\n")
    for n in (n_train, n_train2):
        if not (folder / f"train{n}.conllu").exists():
            (folder / f"train{n}.conllu").write_text("\n\n".join(blocks[:n]) + "\n\n",
                                                    encoding="utf-8")
    order1, order2 = folder / f"order1_{n_train}.npz", folder / f"order2_{n_train2}.npz"
    polyparse = POLYPARSE
    if not order1.exists():
        subprocess.run(polyparse + ["train", "--train", str(folder / f"train{n_train}.conllu"),
                                    "--model", str(order1), "--epochs", "2"], check=True)
    if not order2.exists():
        subprocess.run(polyparse + ["train", "--train", str(folder / f"train{n_train2}.conllu"),
                                    "--model", str(order2),
                                    "--order", "2", "--epochs", "1", "--no-tagger",
                                    "--max-heads", "5"], check=True)
    return order1, order2


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt", help="default en_ewt")
    ap.add_argument("--train", type=int, default=300,
                    help="training sentences of the order-1 model (default 300)")
    ap.add_argument("--train2", type=int, default=100,
                    help="training sentences of the order-2 model (default 100)")
    ap.add_argument("--models", metavar="DIR", help="keep (and reuse) the models here")
    ap.add_argument("--words", type=int, default=3000, help="words of the long inputs")
    ap.add_argument("--gap-words", type=int, default=300)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--out", default="long_sentences", help="result name under --results")
    warm_up_argument(ap)
    args = ap.parse_args(argv)
    source = treebank_folder(args.ud, args.treebank)
    if not (source / "dev.conllu").is_file():
        ap.error(f"{source / 'dev.conllu'} not found")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = Path(args.models) if args.models else tmp
        folder.mkdir(parents=True, exist_ok=True)
        order1, order2 = train_models(folder, source, args.train, args.train2)
        dev = read_treebank(source / "dev.conllu", require_tree=True)
        conllu = tmp / "long.conllu"
        conllu.write_text(long_sentence(dev, args.words), encoding="utf-8")
        text = tmp / "long.txt"
        text.write_text(raw_line(dev, args.words), encoding="utf-8")
        medium = tmp / "medium.conllu"
        medium.write_text(long_sentence(dev, args.gap_words), encoding="utf-8")
        polyparse = POLYPARSE
        if args.warm_up:        # numba compiles the kernels into its cache on first use
            tiny = tmp / "tiny.conllu"
            tiny.write_text(long_sentence(dev, 5), encoding="utf-8")
            for model, command in ((order1, "parse"), (order2, "gap")):
                subprocess.run(polyparse + ["-q", command, "--model", str(model), "--input",
                                            str(tiny)], check=True, capture_output=True)
            subprocess.run(polyparse + ["-q", "parse", "--model", str(order1), "--text",
                                        "Hi there"], check=True, capture_output=True)
        rows = []

        out = tmp / "long.out.conllu"
        row = measure(polyparse + ["parse", "--model", str(order1), "--input", str(conllu),
                                   "--output", str(out)], f"CoNLL-U sentence, {args.words} words")
        gold, pred = next(read_conllu(conllu)), next(read_conllu(out))
        row["words"] = len(pred)
        row["detail"] = (f"UAS {100.0 * (gold.heads[1:] == pred.heads[1:]).mean():.2f} "
                         "(gold tags)")
        rows.append(row)

        out = tmp / "text.out.conllu"
        row = measure(polyparse + ["parse", "--model", str(order1), "--input", str(text),
                                   "--output", str(out)],
                      f"raw text line, {args.words} words, no punctuation")
        parsed = list(read_conllu(out))
        row["words"] = sum(len(s) for s in parsed)
        row["detail"] = (f"{len(parsed)} sentences, longest {max(len(s) for s in parsed)} "
                         "words; output read back as CoNLL-U")
        rows.append(row)

        jsonl = tmp / "gap.jsonl"
        row = measure(polyparse + ["gap", "--model", str(order2), "--input", str(medium),
                                   "--time-limit", str(args.time_limit), "--jsonl",
                                   str(jsonl)],
                      f"gap --time-limit {args.time_limit:g}, order 2, {args.gap_words} words")
        record = json.loads(jsonl.read_text().splitlines()[0])
        row["words"] = record["n"]
        row["detail"] = (f"fallback {record['fallback']} ({record['fallback_stage']}); "
                         f"time_build {record['time_build']:.1f} s, time_lp "
                         f"{record['time_lp']:.1f} s, time_ilp {record['time_ilp']:.1f} s")
        rows.append(row)

    lines = [f"Models trained on {args.treebank} train sentences (order 1: the first {args.train}, "
             f"tokenizer, tagger, 2 epochs; order 2: the first {args.train2}, pruned to 5 "
             "heads, ILP, 1 epoch). Each command runs in a child process: wall time and peak RSS "
             "include starting Python and loading the model. Load: `os.getloadavg()` "
             "(1 min) before and after; the machine has 2 cores shared with other work, so "
             "CPU seconds (user + system of the child) are given beside the wall time.",
             "", "| input | words | seconds | CPU seconds | peak RSS (MiB) | "
             "load before/after | result |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['name']} | {row['words']} | {row['seconds']:.1f} | "
                     f"{row['cpu_seconds']:.1f} | "
                     f"{row['max_rss_kib'] / 1024:.0f} | {row['load_before']:.2f} / "
                     f"{row['load_after']:.2f} | {row['detail']} |")
    lines += ["", "Commands (paths of the temporary files shortened):", ""]
    shown = [row["command"].replace(str(tmp), "$TMP").replace(" ".join(POLYPARSE), "polyparse")
             for row in rows]
    lines += [f"- `{command}`" for command in shown]
    table = write_result(args, args.out, "Long sentences and time limits (issue 11)",
                         {"rows": rows}, lines)
    print(table.read_text())

