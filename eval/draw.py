"""``polyparse draw`` on a treebank's dev set: its time, and every drawing read back.

    python -m eval run draw [--treebank en_ewt] [--repeats 3]

Runs ``polyparse draw --input dev.conllu --svg-dir DIR`` (one SVG per sentence) and
``polyparse draw --input dev.conllu --html PAGE`` as a user would, in a child process,
``--repeats`` times each (wall time and CPU time of the whole command: start, reading,
drawing, writing), into a temporary folder. Then every SVG file, and every panel of the
page, is parsed as XML and checked: an SVG document, one arc per word, each arc from the
word's head in the file with its label. Writes ``draw_<treebank>.{json,md}`` under
``--results``
(the issue's figure: the 2,001 sentences of en_ewt dev in at most 10 s, every SVG valid).
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from ._common import POLYPARSE, arguments, folder, write_table

from polyparse.corpora.conllu_io import read_treebank  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"

SMOKE = ["--treebank", "sample", "--repeats", "1"]
"""The smoke run: the sample's 100 dev sentences drawn once each way."""


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of a child process running ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def tree_arcs(svg: ET.Element) -> list[tuple[int, int, str]]:
    """``(head, dependent, label)`` of every arc of the tree panels of ``svg``."""
    return [(int(g.get("data-head")), int(g.get("data-dep")), g.get("data-label"))
            for panel in svg.iter(f"{SVG}svg") if "tree" in panel.get("class", "").split()
            for g in panel.iter(f"{SVG}g") if "arc" in g.get("class", "").split()]


def check(svgs: list[str | Path], sentences) -> int:
    """How many of ``svgs`` (files, or SVG text) are SVG documents drawing their
    sentence's tree: one arc per word, from its head, with its label."""
    valid = 0
    for svg, sentence in zip(svgs, sentences):
        try:
            root = ET.parse(svg).getroot() if isinstance(svg, Path) else ET.fromstring(svg)
        except ET.ParseError as error:
            print(f"{svg}: not XML: {error}", file=sys.stderr)
            continue
        expected = [(int(sentence.heads[m]), m, sentence.deprels[m])
                    for m in range(1, len(sentence) + 1)]
        if root.tag == f"{SVG}svg" and tree_arcs(root) == expected:
            valid += 1
        else:
            print(f"{sentence.sent_id}: the drawing does not show the file's tree",
                  file=sys.stderr)
    return valid


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    dev = folder(args.ud, args.treebank) / "dev.conllu"
    if not dev.is_file():
        sys.exit(f"{dev} not found: the benchmarks read the shared UD treebanks")
    sentences = read_treebank(dev)
    words = sum(len(s) for s in sentences)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {"svg": ["--svg-dir", str(Path(tmp) / "trees")],
                   "html": ["--html", str(Path(tmp) / "dev.html")]}
        for kind, output in outputs.items():
            command = [*POLYPARSE, "-q", "draw", "--input", str(dev), *output]
            times = [timed(command) for _ in range(args.repeats)]
            if kind == "svg":
                files = sorted((Path(tmp) / "trees").iterdir())
                drawn, valid = len(files), check(files, sentences)
                size = sum(f.stat().st_size for f in files)
            else:
                page = (Path(tmp) / "dev.html").read_text(encoding="utf-8")
                panels = re.findall(r"<svg .*?</svg>", page, re.DOTALL)
                drawn, valid, size = len(panels), check(panels, sentences), len(page)
            wall = [w for w, _ in times]
            rows.append({"output": kind, "command": " ".join(
                             ["polyparse draw --input", f"{args.treebank}/dev.conllu",
                              output[0], Path(output[1]).name]),
                         "sentences": len(sentences), "words": words,
                         "wall_s_best": min(wall), "wall_s_worst": max(wall),
                         "cpu_s_best": min(c for _, c in times), "drawn": drawn,
                         "valid": valid, "megabytes": size / 1e6, "target_s": 10.0})
    notes = (f"`polyparse draw` on {args.treebank} dev ({len(sentences)} sentences, {words} "
             f"words) without a model (the trees of the file), run {args.repeats} times as "
             "a child process: wall and CPU time (user + system) of the whole command, "
             "start-up and writing included. 'valid': drawings that parse as XML, are SVG "
             "documents, and have one arc per word, from the file's head with the file's "
             f"label. Target: at most 10 s.")
    table = write_table(
        args, f"draw_{args.treebank}", f"polyparse draw on {args.treebank} dev", rows,
                [("command", "command"), ("sentences", "sentences"), ("drawn", "drawn"),
                 ("valid", "valid"), ("wall_s_best", "wall s (best)"),
                 ("wall_s_worst", "wall s (worst)"), ("cpu_s_best", "CPU s (best)"),
                 ("megabytes", "MB written")], notes)
    print(table.read_text())

