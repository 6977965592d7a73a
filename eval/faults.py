"""Issue 11 fault benchmark: stop signals at random moments of ``train``, ``parse``, ``gap``.

One command::

    python -m eval run faults [--runs 20] [--commands train parse gap] [--max-train N]
                              [--out faults]

Trains a tiny model on the sample treebank (its first ``--max-train`` sentences, the
training of ``train`` too), then runs each command ``--runs`` times per
signal (SIGTERM, SIGINT) as a user would (``polyparse ...`` in a process of its own, with
``--jobs 2`` for ``train`` and ``parse`` so that worker processes are there too), and
sends the signal at a random moment: half of the runs at a uniform moment of the
command's uninterrupted duration, half while an output is being written (as soon as its
temporary file shows up, plus a random delay: during a model or checkpoint save for
``train``, mid-output for ``parse`` and ``gap``). Before each run, the output files hold
earlier content (a real model for ``train``). After it, checks: the exit status, stray
files in the folder, the earlier files intact (unchanged, or for a run that finished or
a checkpoint written before the signal, a complete new file), and processes of the run
still alive. Writes ``OUT.json`` and ``OUT.md`` under ``--results``.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from ._common import POLYPARSE, SAMPLE, arguments, write_result

SMOKE = ["--runs", "1", "--commands", "parse", "--max-train", "20"]
"""The smoke run: parse stopped once per signal, the model trained on 20 sentences."""
TINY = ["--epochs", "2", "--bits", "16", "--label-bits", "12", "--no-tagger"]
SIGNALS = (signal.SIGTERM, signal.SIGINT)
HANG = 120          # seconds after the signal: a run still going then has hung


def polyparse(*args) -> list[str]:
    return POLYPARSE + [str(a) for a in args]


class Command:
    """One command line of the benchmark, its outputs, and how to tell a complete one."""

    def __init__(self, name: str, folder: Path, model: Path, inputs: dict[str, Path]):
        """``inputs``: the training file of ``train``, the input of ``parse`` and ``gap``."""
        self.name = name
        self.folder = folder
        folder.mkdir()
        if name == "train":
            self.outputs = {"model": folder / "model.npz", "checkpoint": folder / "ckpt.npz"}
            self.argv = polyparse("train", "--train", inputs["train"], "--model",
                                  self.outputs["model"], "--checkpoint",
                                  self.outputs["checkpoint"], *TINY, "--jobs", "2")
            self.earlier = {key: model.read_bytes() for key in self.outputs}
        elif name == "parse":
            self.outputs = {"output": folder / "parsed.conllu"}
            self.argv = polyparse("parse", "--model", model, "--input", inputs["parse"],
                                  "--output", self.outputs["output"], "--jobs", "2")
            self.earlier = {"output": b"earlier parse output\n"}
        else:
            self.outputs = {"jsonl": folder / "gap.jsonl"}
            self.argv = polyparse("gap", "--model", model, "--input", inputs["gap"],
                                  "--jsonl", self.outputs["jsonl"])
            self.earlier = {"jsonl": b'{"earlier": "gap output"}\n'}
        self.reference: dict[str, bytes] = {}

    def reset(self) -> None:
        for item in self.folder.iterdir():
            item.unlink()
        for key, path in self.outputs.items():
            path.write_bytes(self.earlier[key])

    def complete(self, key: str, content: bytes) -> bool:
        """Whether ``content`` is a whole output (not the earlier file, not a part)."""
        if self.name == "train":
            return content[:4] == b"PK\x03\x04" and _loads(content)
        if self.name == "parse":
            return content == self.reference[key]
        lines = content.decode().splitlines()
        return (len(lines) == len(self.reference[key].decode().splitlines())
                and all("ilp_value" in json.loads(line) for line in lines))


def _loads(content: bytes) -> bool:
    """A model file that numpy opens and whose metadata parses."""
    import io

    import numpy as np

    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as npz:
            return json.loads(str(npz["metadata"]))["format"] == "polyparse-model"
    except Exception:            # anything unreadable is what this benchmark looks for
        return False


def state(command: Command, key: str) -> str:
    """``earlier``, ``complete``, ``missing`` or ``damaged``: what an output holds."""
    path = command.outputs[key]
    if not path.exists():
        return "missing"
    content = path.read_bytes()
    if content == command.earlier[key]:
        return "earlier"
    return "complete" if command.complete(key, content) else "damaged"


def temporary_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def alive(folder: Path) -> int:
    """Processes whose command line names ``folder`` (the run or its workers)."""
    count = 0
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                count += str(folder).encode() in (proc / "cmdline").read_bytes()
            except OSError:
                pass
    return count


def one_run(command: Command, signum: int, kind: str, duration: float,
            rng: random.Random) -> dict:
    """Run ``command``, send ``signum`` at a moment of ``kind``; what was seen."""
    command.reset()
    start = time.perf_counter()
    process = subprocess.Popen(command.argv, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    if kind == "random":
        time.sleep(rng.uniform(0, duration))
    else:
        while not temporary_files(command.folder) and process.poll() is None:
            time.sleep(0.0005)
        # a save takes milliseconds; output is written until the end
        time.sleep(rng.uniform(0, 0.005 if command.name == "train"
                               else max(0.0, duration - (time.perf_counter() - start))))
    writing = bool(temporary_files(command.folder))
    sent = process.poll() is None
    if sent:
        process.send_signal(signum)
    signalled = time.perf_counter()
    try:
        err = process.communicate(timeout=HANG)[1].decode(errors="replace")
        hung = False
    except subprocess.TimeoutExpired:          # counted, then ended for the next run
        process.kill()
        err = process.communicate()[1].decode(errors="replace")
        hung = True
    stop_seconds = time.perf_counter() - signalled
    time.sleep(0.1)
    status = process.returncode
    states = {key: state(command, key) for key in command.outputs}
    # finished: every output complete; stopped: each earlier, or complete if the signal
    # came after its rename (a checkpoint of an earlier epoch, or the end of the run)
    intact = all(v == "complete" or (status != 0 and v == "earlier") for v in states.values())
    if not sent:
        moment = "after the end"
    elif status == -signum:       # no handler: before main() installed it, or after it
        moment = "start-up" if set(states.values()) == {"earlier"} else "exit"
    else:
        moment = "writing" if writing else "working"
    last = err.strip().splitlines()[-1] if err.strip() else ""
    return {"kind": kind, "moment": moment, "status": status, "last_line": last,
            "outputs": states, "hung": hung,
            "stop_seconds": round(stop_seconds, 2) if sent and status != 0 else None,
            "stray": temporary_files(command.folder)
            + sorted(p.name for p in command.folder.iterdir()
                     if p not in command.outputs.values() and not p.name.endswith(".tmp")),
            "intact": intact, "alive": alive(command.folder),
            "one_line": status in (0, -signum) or (
                status == 128 + signum and "Traceback" not in err
                and last == f"polyparse: stopped by {signal.Signals(signum).name}")}


def status_name(status: int) -> str:
    return f"killed by {signal.Signals(-status).name}" if status < 0 else str(status)


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--runs", type=int, default=20, help="runs per command and signal")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--commands", nargs="+", choices=["train", "parse", "gap"],
                    default=["train", "parse", "gap"])
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="train on the first N sample sentences (default all)")
    ap.add_argument("--out", default="faults", help="result name under --results")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="polyparse-faults-"))
    try:
        model = work / "base.npz"
        inputs = {"train": work / "train.conllu", "parse": work / "parse-input.conllu",
                  "gap": work / "gap-input.conllu"}
        train = (SAMPLE / "train.conllu").read_text().split("\n\n")
        inputs["train"].write_text("\n\n".join(s for s in train[:args.max_train] if s.strip())
                                   + "\n\n")
        subprocess.run(polyparse("-q", "train", "--train", inputs["train"],
                                 "--model", model, *TINY), check=True)
        dev = (SAMPLE / "dev.conllu").read_text()
        inputs["parse"].write_text(dev * 4)
        inputs["gap"].write_text("\n\n".join(dev.split("\n\n")[:25]) + "\n\n")
        rows, runs = [], []
        for name in args.commands:
            command = Command(name, work / name, model, inputs)
            command.reset()
            start = time.perf_counter()
            subprocess.run(command.argv, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            duration = time.perf_counter() - start
            command.reference = {k: p.read_bytes() for k, p in command.outputs.items()}
            for signum in SIGNALS:
                seen = [one_run(command, signum, "random" if i % 2 == 0 else "writing",
                                duration, rng) for i in range(args.runs)]
                runs += [dict(r, command=name, signal=signal.Signals(signum).name)
                         for r in seen]
                moments = Counter(r["moment"] for r in seen)
                statuses = Counter(status_name(r["status"]) for r in seen)
                rows.append({
                    "command": name, "signal": signal.Signals(signum).name,
                    "runs": len(seen), "duration_s": round(duration, 2),
                    "moments": dict(moments), "exit_statuses": dict(statuses),
                    "stray_files": sum(len(r["stray"]) for r in seen),
                    "intact": sum(r["intact"] for r in seen),
                    "stopped_after_rename": sum(r["status"] != 0 and "complete" in
                                                r["outputs"].values() for r in seen),
                    "processes_left": sum(r["alive"] for r in seen),
                    "hung": sum(r["hung"] for r in seen),
                    "longest_stop_s": max((r["stop_seconds"] for r in seen
                                           if r["stop_seconds"] is not None), default=0.0),
                    "one_line_message": sum(r["one_line"] for r in seen)})
                print(json.dumps(rows[-1]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = write_result(args, args.out, "Stop signals at random moments (issue 11)",
                         {"runs_per_command_and_signal": args.runs, "seed": args.seed,
                          "rows": rows, "runs": runs}, markdown(rows, args))
    print(table.read_text())


def markdown(rows: list[dict], args) -> list[str]:
    """The Markdown table of ``rows`` and what its columns mean."""
    lines = [
        f"{args.runs} runs per "
        "command and signal, half at a uniform moment of the uninterrupted run, half while "
        "an output is being written (train: model or checkpoint save; parse, gap: "
        "mid-output). train and parse run with `--jobs 2`. Moments: *start-up* = before "
        "polyparse installed its handlers (the process dies by the signal; nothing written "
        "yet), *working* = reading, training or parsing, *writing* = a temporary output "
        "file existed when the signal was sent, *exit* = after the work, while Python "
        "shuts down (the handlers are gone: the process dies by the signal, its outputs "
        "complete), *after the end* = the process had ended.",
        "",
        "| command | signal | runs | moments | exit statuses | stray files | earlier files "
        "intact | stopped after a rename | processes left | hung | longest stop (s) | "
        "one-line message |",
        "|---|---|---:|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        moments = ", ".join(f"{k} {v}" for k, v in sorted(r["moments"].items()))
        statuses = ", ".join(f"{k} ×{v}" for k, v in sorted(r["exit_statuses"].items()))
        intact = "yes" if r["intact"] == r["runs"] else f"no ({r['runs'] - r['intact']} not)"
        lines.append(f"| {r['command']} | {r['signal']} | {r['runs']} | {moments} | "
                     f"{statuses} | {r['stray_files']} | {intact} | "
                     f"{r['stopped_after_rename']} | {r['processes_left']} | {r['hung']} | "
                     f"{r['longest_stop_s']:.2f} | "
                     f"{r['one_line_message']}/{r['runs']} |")
    lines += ["", "Earlier files intact: after a stopped run each output (model, checkpoint, "
              "CoNLL-U, JSON lines) holds its earlier content, or a complete new file when "
              "the signal came after its rename (*stopped after a rename*: a checkpoint of an "
              "earlier epoch, or a signal during the last moments of the run); after a "
              "finished run, a complete new file. Never a missing or damaged one. "
              "One-line message: a stopped run ends its stderr with `polyparse: stopped by "
              "SIG...` and exits 128 + the signal's number (runs killed at start-up and "
              "finished runs are counted as fine). Hung: still running "
              f"{HANG} s after the signal (then killed); longest stop: seconds from the "
              "signal to the end of the process."]
    return lines

