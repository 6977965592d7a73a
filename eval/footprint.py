"""Issue 11 benchmark: peak memory and time of the README's training command, with a cold
and a warm numba cache.

One command::

    python -m eval run footprint [--caches cold warm] [--max-train N] [--out footprint]

runs ``polyparse train --train corpora/sample/train.conllu --dev corpora/sample/dev.conllu
--model sample.npz`` (into a temporary folder) twice: first with ``NUMBA_CACHE_DIR``
pointing at a fresh, empty folder (a first run after installation: every kernel it uses
is compiled), then again with that folder filled (every later run; ``--caches warm``
alone: the numba cache of the environment). ``--max-train N`` trains on the first N
sentences of the sample instead of all. For each run it
reports the peak memory: the largest resident set of any process of the run
(``wait4``: the command and the child process it fits the tokenizer and tagger in), and
the peak of the whole process tree's proportional set size (PSS, sampled every 0.1 s:
pages shared between parent and child counted once), the wall and CPU time
(the CPU time depends less on the load of a shared machine), when each
stage ended (tokenizer, tagger with its jackknifing, each parser epoch; the log lines
are stamped as they arrive), the first epoch's time against the mean of the later ones,
and the load average of the machine, since the figures depend on it. Writes ``OUT.json``
and ``OUT.md`` under ``--results``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ._common import POLYPARSE, REPO, SAMPLE, arguments, write_table

SMOKE = ["--caches", "warm", "--max-train", "20"]
"""The smoke run: the command on 20 sentences, with the environment's numba cache."""
EPOCH = re.compile(r"^epoch (\d+): .*?, ([0-9.]+) s")
STAGES = {"tokenizer": "tokenizer: trained", "tagger": "tagger: dev UPOS",
          "features": "features: 2**"}


def train(cache: Path | None, train_file: Path, model: Path) -> dict:
    """One run of the README's command on ``train_file``, numba's cache in ``cache`` (None:
    the environment's); its figures."""
    command = [*POLYPARSE, "train",
               "--train", str(train_file), "--dev", str(SAMPLE / "dev.conllu"),
               "--model", str(model)]
    env = dict(os.environ, **({"NUMBA_CACHE_DIR": str(cache)} if cache else {}))
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               text=True, env=env, cwd=REPO)
    stamps, epochs, log = {}, [], []
    tree_peak = [0.0]
    sampler = threading.Thread(target=_sample_tree, args=(process, tree_peak), daemon=True)
    sampler.start()
    for line in process.stderr:
        now = time.perf_counter() - start
        log.append(line)
        for stage, prefix in STAGES.items():
            if line.startswith(prefix):
                stamps[stage] = now
        match = EPOCH.match(line)
        if match:
            epochs.append(float(match.group(2)))
            stamps[f"epoch {match.group(1)}"] = now
    _, status, usage = os.wait4(process.pid, 0)
    sampler.join()
    seconds = time.perf_counter() - start
    if status != 0 or not epochs:
        sys.exit("the training command failed:\n" + "".join(log[-20:]))
    return {"seconds": seconds, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024, "peak_tree_pss_mb": tree_peak[0],
            "first_epoch_s": epochs[0],
            "later_epochs_s": sum(epochs[1:]) / max(len(epochs) - 1, 1),
            "ended_at_s": stamps, "load_before": load_before, "load_after": os.getloadavg()[0],
            "dev": log_dev(log)}


def _sample_tree(process: subprocess.Popen, peak: list) -> None:
    """Keep ``peak[0]`` at the largest sum of PSS (MB) over ``process`` and its
    descendants, until it ends."""
    while process.poll() is None:
        total = 0
        for pid in _tree(process.pid):
            try:
                with open(f"/proc/{pid}/smaps_rollup") as f:
                    total += next(int(line.split()[1]) for line in f
                                  if line.startswith("Pss:"))
            except (OSError, StopIteration):
                pass                                    # ended meanwhile
        peak[0] = max(peak[0], total / 1024)
        time.sleep(0.1)


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def log_dev(log: list[str]) -> str:
    """The last epoch's dev scores, as logged."""
    dev = [line for line in log if ": dev UAS" in line]
    return dev[-1].split(": dev ", 1)[-1].strip() if dev else ""


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--caches", nargs="+", choices=["cold", "warm"], default=["cold", "warm"],
                    help="cold: a fresh numba cache; warm: the same after the cold run, or "
                         "the environment's without one (default both)")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="the first N sample sentences (default all)")
    ap.add_argument("--out", default="footprint", help="result name under --results")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="footprint-") as folder:
        cache = Path(folder) / "numba" if "cold" in args.caches else None
        train_file = SAMPLE / "train.conllu"
        if args.max_train is not None:
            train_file = Path(folder) / "train.conllu"
            blocks = (SAMPLE / "train.conllu").read_text(encoding="utf-8").split("\n\n")
            train_file.write_text("\n\n".join(b for b in blocks[:args.max_train] if b.strip())
                                  + "\n\n", encoding="utf-8")
        if cache:
            cache.mkdir()
        for name in args.caches:
            row = {"numba cache": name, **train(cache, train_file, Path(folder) / "sample.npz")}
            stages = row["ended_at_s"]
            row["stages"] = ", ".join(f"{k} {v:.0f}" for k, v in stages.items()
                                      if not k.startswith("epoch ") or k in ("epoch 1",
                                                                             "epoch 10"))
            rows.append(row)
            print(f"{name}: {row['seconds']:.1f} s ({row['cpu_s']:.1f} s CPU), peak RSS "
                  f"{row['peak_rss_mb']:.0f} MB, tree PSS {row['peak_tree_pss_mb']:.0f} MB, "
                  f"first epoch {row['first_epoch_s']:.1f} s, later "
                  f"{row['later_epochs_s']:.1f} s, load {row['load_before']:.1f}", flush=True)
    write_table(
        args, args.out, "Footprint of the README's training command (issue 11)", rows,
        [("numba cache", "numba cache"), ("seconds", "wall s"), ("cpu_s", "CPU s"),
         ("peak_rss_mb", "peak RSS MB (largest process)"),
         ("peak_tree_pss_mb", "peak PSS MB (all processes)"),
         ("first_epoch_s", "epoch 1 s"), ("later_epochs_s", "epochs 2-10 s (mean)"),
         ("stages", "stage ended at (s)"), ("load_before", "load before"),
         ("load_after", "load after"), ("dev", "dev after epoch 10")],
        notes=f"On {args.max_train or 'all'} sample sentences: "
              "`polyparse train --train corpora/sample/train.conllu --dev "
              "corpora/sample/dev.conllu --model sample.npz` (the README's first command), "
              "run with NUMBA_CACHE_DIR at a fresh folder (cold: every kernel is compiled), "
              "then again (warm). Peak RSS: the largest resident set of any one process of the "
              "run (`wait4`; the tokenizer, tagger and lemmatizer are fitted in a child "
              "process); peak PSS: the largest sum over all its processes at once of their "
              "proportional set sizes (sampled every 0.1 s; shared pages counted once). The load "
              "is the 1-minute load average of the machine before and after the run (2 "
              "cores shared).")

