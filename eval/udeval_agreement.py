"""``polyparse eval`` against UD's own evaluator on whole treebanks (issue 11).

Every shared treebank (its dev file, or train where it has none) is scored against a
system output made from it by random errors (``tests/perturb.py``: heads, labels, tags,
features, lemmas, merged and split tokens and sentences, multiword tokens), once per
seed, by :func:`polyparse.parser.evaluate.conll18_scores` and by ``udeval --counts`` of
the ``udtools`` package (the CoNLL 2018 script; ``pip install -e '.[test]'``). A metric
agrees when all four counts (correct, gold, system, aligned words) are the same.
``tests/test_conll18_eval.py`` does the same on small slices of three treebanks.

    python eval/udeval_agreement.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, RESULTS, UD, write_table

sys.path.insert(0, str(REPO / "tests"))

from perturb import perturb  # noqa: E402

from polyparse.corpora.conllu_io import read_conllu  # noqa: E402
from polyparse.parser.evaluate import METRICS, conll18_scores  # noqa: E402


def udeval_counts(command: str, gold: Path, system: Path) -> dict[str, list[str]]:
    done = subprocess.run([command, "--counts", "--no-enhanced", str(gold), str(system)],
                          capture_output=True, text=True, check=True)
    rows = [line.split("|") for line in done.stdout.splitlines()[2:]]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def run(name: str, seed: int, command: str, folder: Path) -> dict:
    path = UD / name / "dev.conllu"
    path = path if path.exists() else UD / name / "train.conllu"
    gold_text, system_text = perturb(path.read_text(encoding="utf-8"), seed)
    gold, system = folder / "gold.conllu", folder / "system.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text(system_text, encoding="utf-8")
    start = time.perf_counter()
    theirs = udeval_counts(command, gold, system)
    udeval_s = time.perf_counter() - start
    start = time.perf_counter()
    ours = conll18_scores(list(read_conllu(gold)), list(read_conllu(system)))
    ours_s = time.perf_counter() - start
    agree = []
    for key, label in METRICS.items():
        s = getattr(ours, key)
        aligned = s.correct if key == "words" else s.aligned
        mine = [str(s.correct), str(s.gold), str(s.system), "" if aligned is None else str(aligned)]
        if mine == theirs[label]:
            agree.append(label)
        else:
            print(f"{name} seed {seed}: {label} polyparse {mine} udeval {theirs[label]}",
                  file=sys.stderr)
    row = {"treebank": name, "file": path.name, "seed": seed,
           "gold_words": ours.words.gold, "agree": f"{len(agree)}/{len(METRICS)}",
           "udeval_s": udeval_s, "polyparse_s": ours_s}
    row.update({key: 100 * getattr(ours, key).f1 for key in ("words", "las", "mlas", "blex")})
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="perturbations per treebank")
    ap.add_argument("--out", default=str(RESULTS / "udeval_agreement"))
    args = ap.parse_args(argv)
    here = Path(sys.executable).with_name("udeval")
    command = str(here) if here.exists() else shutil.which("udeval")
    if command is None:
        sys.exit("udeval not found: pip install -e '.[test]'")
    names = sorted(p.name for p in UD.iterdir() if (p / "train.conllu").exists())
    with tempfile.TemporaryDirectory() as folder:
        rows = [run(name, seed, command, Path(folder))
                for name in names for seed in range(1, args.seeds + 1)]
    load = os.getloadavg()[0]
    notes = (f"Command: `python eval/udeval_agreement.py --seeds {args.seeds}`. Each row: "
             "the treebank's dev file (train where it has none), perturbed by "
             "`tests/perturb.py` with that seed; *agree*: metrics of the CoNLL 2018 script "
             "(Tokens ... BLEX) whose four counts (correct, gold, system, aligned) are the "
             "same in `polyparse eval` and `udeval --counts` (udtools); F1 (%) of the "
             "perturbed output as both give it; seconds: udeval's whole command, and "
             f"`conll18_scores` after reading. 1-minute load average at the end: {load:.1f} "
             f"on {os.cpu_count()} shared cores.")
    columns = [("treebank", "treebank"), ("file", "file"), ("seed", "seed"),
               ("gold_words", "gold words"), ("words", "Words F1"), ("las", "LAS F1"),
               ("mlas", "MLAS F1"), ("blex", "BLEX F1"), ("agree", "metrics equal"),
               ("udeval_s", "udeval s"), ("polyparse_s", "polyparse s")]
    write_table(Path(args.out), "polyparse eval against udeval (issue 11)", rows, columns,
                notes)


if __name__ == "__main__":
    main()
