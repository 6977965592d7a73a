"""Helpers shared by the benchmark scripts: the shared UD folder, the machine, splits,
and writing a result table as JSON and Markdown."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "ud"
RESULTS = REPO / "eval" / "results"

try:
    import polyparse.parser  # noqa: F401
except ImportError:
    sys.exit("the benchmarks run the installed polyparse: pip install -e . in the repository")
from polyparse.corpora.files import atomic_write  # noqa: E402


def single_thread() -> None:
    """One core for BLAS and numba, as the figures are stated per core."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def machine() -> dict:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cores": os.cpu_count(), "memory_gib": round(memory, 1),
            "system": platform.platform()}


def split(name: str, held_out: float = 0.2, *, require_tree: bool = True):
    """``(train, dev, how)``: the sentences of a shared treebank and how they were split;
    where it has no dev split, dev is the last ``held_out`` share of train."""
    from polyparse.corpora.conllu_io import read_treebank

    folder = UD / name
    if not (folder / "train.conllu").is_file():
        sys.exit(f"{folder / 'train.conllu'} not found: the benchmarks read the shared UD "
                 "treebanks")
    train = read_treebank(folder / "train.conllu", require_tree=require_tree)
    if (folder / "dev.conllu").exists():
        return (train, read_treebank(folder / "dev.conllu", require_tree=require_tree),
                "train -> dev")
    cut = int(len(train) * (1 - held_out))
    return train[:cut], train[cut:], f"train[:{cut}] -> train[{cut}:]"


def word_clusters(name: str) -> str | None:
    """The Brown clusters of the language of treebank ``name`` (``en_ewt``: ``en``) from
    spaCy's lookups data, fetched into the polyparse cache on first use (about 100 MB),
    or None for a language without them."""
    from polyparse.corpora.cache import default_cache_dir
    from polyparse.corpora.errors import DownloadError
    from polyparse.corpora.word_clusters import SPACY_LANGUAGES, fetch_spacy_clusters

    lang = name.split("_")[0]
    if lang not in SPACY_LANGUAGES:
        return None
    try:
        return str(fetch_spacy_clusters(lang, default_cache_dir(),
                                        progress=sys.stderr.isatty()))
    except DownloadError as error:
        sys.exit(f"{error}\n(word clusters for {name}: pass --no-clusters to run without them)")


def treebank(name: str, held_out: float = 0.2):
    """``(train, dev)`` of :func:`split`."""
    train, dev, _ = split(name, held_out)
    return train, dev


def treebank_or_sample(name: str, max_train: int | None = None,
                       max_dev: int | None = None):
    """``(train, dev)`` of :func:`treebank`, or of the repository's sample treebank for
    ``"sample"``, each cut to its first ``max_*`` sentences."""
    if name == "sample":
        from polyparse.corpora.conllu_io import read_treebank
        folder = REPO / "corpora" / "sample"
        train, dev = (read_treebank(folder / "train.conllu"),
                      read_treebank(folder / "dev.conllu"))
    else:
        train, dev = treebank(name)
    return train[:max_train], dev[:max_dev]


def model_dev_problems(description: str, out: str):
    """The arguments ``--model`` (required), ``--treebank`` (en_ewt), ``--max-dev`` and
    ``--out`` (default ``out``) of a script that decodes a saved model's dev sentences,
    parsed; returns ``(args, parser, dev, problems)``, ``problems[i]`` the parts and
    part scores of ``dev[i]`` under the model (computed once, outside any clock)."""
    import argparse

    from polyparse.parser.pipeline import Parser

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--model", required=True)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--out", default=out)
    args = ap.parse_args()
    parser = Parser.load(args.model)
    _, dev = treebank_or_sample(args.treebank, 1, args.max_dev)
    problems = []
    for sentence in dev:
        example = parser.model.example(parser.seen(sentence))
        problems.append((example.parts, parser.model.scores(example).parts))
    return args, parser, dev, problems


def kept_model(given: str | None, name: str, train) -> Path:
    """The model file ``given`` (``--model``), else ``eval/results/tmp/<name>.npz``,
    written by ``train(path)`` the first time it is asked for and kept for later runs."""
    if given:
        return Path(given)
    path = RESULTS / "tmp" / f"{name}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        train(path)
    return path


def uptime() -> str:
    """``uptime``'s line: the machine's load, for result tables."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def revision() -> str:
    """The repository's git revision (``git describe --always --dirty``), for result
    tables."""
    return subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                          capture_output=True, text=True).stdout.strip() or "unknown"


def write_table(out: Path, title: str, rows: list[dict], columns: list[tuple[str, str]],
                notes: str = "", meta: dict | None = None, after: str = "") -> None:
    """``out.json`` (all fields, after ``meta``'s) and ``out.md`` (``notes``, the chosen
    ``(key, header)`` columns, then ``after``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out.with_suffix(".json")) as f:
        f.write(json.dumps({"machine": machine(), **(meta or {}), "rows": rows}, indent=2,
                           default=float))
    lines = [f"# {title}", "", f"Machine: {machine()}", ""]
    if notes:
        lines += [notes, ""]
    lines += markdown_table(rows, columns)
    if after:
        lines += ["", after]
    with atomic_write(out.with_suffix(".md")) as f:
        f.write("\n".join(lines) + "\n")


def markdown_table(rows: list[dict], columns: list[tuple[str, str]]) -> list[str]:
    """The lines of a Markdown table of ``rows``' ``(key, header)`` columns (floats with
    two decimals, a missing value empty)."""
    lines = ["| " + " | ".join(h for _, h in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for key, _ in columns:
            value = row.get(key)
            cells.append(f"{value:.2f}" if isinstance(value, float)
                         else "" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return lines
