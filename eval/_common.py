"""What the benchmarks share: their parser (:func:`arguments`: ``--ud``, ``--results`` and
the command line recorded), the treebanks (:func:`split`, ``sample`` among them), models
trained or given, and writing a result as JSON and Markdown with its provenance (command,
revision, date, machine, load: :func:`write_result`, :func:`write_table`)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UD = Path(os.environ.get("POLYPARSE_UD") or REPO.parent / "shared" / "ud")
"""The shared UD treebanks (``--ud``): ``$POLYPARSE_UD``, else ``../shared/ud`` next to the
repository, as for the tests."""
RESULTS = REPO / "eval" / "results"
"""Where the tables go (``--results``)."""
SAMPLE = REPO / "corpora" / "sample"
"""The sample treebank, ``--treebank sample`` of every benchmark."""

POLYPARSE = [sys.executable, "-m", "polyparse.parser.cli"]
"""The ``polyparse`` command of this Python (the installed package this process imports)."""

try:
    import polyparse.parser  # noqa: F401
except ImportError:
    sys.exit("the benchmarks run the installed polyparse: pip install -e . in the repository")
from polyparse.corpora.files import atomic_write  # noqa: E402

from . import first_paragraph  # noqa: E402


class BenchmarkParser(argparse.ArgumentParser):
    """The argument parser of a benchmark; its ``parse_args`` also records, for the result
    tables, the command line (``command``), the date it started (``started``), the git
    revision then (``revision``: a long run's code is the code it started with, whatever
    is committed while it runs) and the load average then (``load_before``)."""

    def parse_args(self, args=None, namespace=None):
        given = sys.argv[1:] if args is None else [str(a) for a in args]
        parsed = super().parse_args(given, namespace)
        parsed.command = shlex.join([*self.prog.split(), *given])
        parsed.started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        parsed.revision = revision()
        parsed.load_before = load()
        return parsed


def arguments(module: str) -> BenchmarkParser:
    """The argument parser of the benchmark module ``module`` (its ``__name__``): the
    program ``python -m eval run NAME``, described by the first paragraph of the module's
    docstring, with the options every benchmark takes, ``--ud`` and ``--results``."""
    name = module.rpartition(".")[2]
    ap = BenchmarkParser(prog=f"python -m eval run {name}",
                         description=first_paragraph(sys.modules[module].__doc__))
    ap.add_argument("--ud", type=Path, default=UD, metavar="DIR",
                    help="folder of the shared UD treebanks, one folder each with train.conllu "
                         "and perhaps dev.conllu (default $POLYPARSE_UD, else ../shared/ud)")
    ap.add_argument("--results", type=Path, default=RESULTS, metavar="DIR",
                    help="folder of the result tables (default eval/results)")
    return ap


def folder(ud: Path, name: str) -> Path:
    """The folder of treebank ``name``: the sample treebank for ``"sample"``, else
    ``ud/name``."""
    return SAMPLE if name == "sample" else Path(ud) / name


def treebanks_argument(ap: argparse.ArgumentParser, default: list[str]) -> None:
    """The option ``--treebanks NAME ...``: shared treebanks, or ``sample``."""
    ap.add_argument("--treebanks", nargs="+", default=list(default), metavar="NAME",
                    help="folders of --ud, or sample (default: %s)" % " ".join(default))


def warm_up_argument(ap: argparse.ArgumentParser) -> None:
    """The option ``--no-warm-up``: leave out the untimed runs that fill numba's cache
    before the timed ones (the smoke runs, whose times are not figures, and a cache
    known to be warm)."""
    ap.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                    help="skip the untimed runs that fill numba's cache first (the times "
                         "then include what is still to compile)")


def require_treebanks(ap: argparse.ArgumentParser, ud: Path, names: list[str]) -> None:
    """Stop with a usage error, before any work, if a treebank of ``names`` has no
    train.conllu."""
    missing = [str(folder(ud, name) / "train.conllu") for name in names
               if not (folder(ud, name) / "train.conllu").is_file()]
    if missing:
        ap.error(f"not found: {', '.join(missing)}")


def timed_command(command: list[str], log: Path) -> float:
    """Wall seconds of ``command`` in a child process, its messages (standard output and
    error) written to ``log``, where a long training run can be followed; exits with the
    log's last lines if it fails."""
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as messages:
        status = subprocess.run(command, stdout=messages, stderr=subprocess.STDOUT).returncode
    if status:
        tail = "\n".join(log.read_text(encoding="utf-8").splitlines()[-20:])
        sys.exit(f"{shlex.join(command)} failed ({status}):\n{tail}")
    return time.perf_counter() - start


def conll18_columns() -> list[tuple[str, str]]:
    """The ``(key, header)`` table columns of the CoNLL 2018 shared task's metrics (the
    keys of :data:`polyparse.parser.evaluate.METRICS`), each an F1."""
    from polyparse.parser.evaluate import METRICS

    return [(name, f"{label} F1") for name, label in METRICS.items()]


def load() -> list[float]:
    """The load average over 1, 5 and 15 minutes."""
    return [round(x, 2) for x in os.getloadavg()]


def single_thread() -> None:
    """One core for BLAS and numba, as the figures are stated per core."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def machine() -> dict:
    """The Python, processor, cores, memory and system of this machine."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cores": os.cpu_count(), "memory_gib": round(memory, 1),
            "system": platform.platform()}


def split(ud: Path, name: str, held_out: float = 0.2, *, require_tree: bool = True):
    """``(train, dev, how)``: the sentences of treebank ``name`` (:func:`folder`) and how
    they were split; where it has no dev split, dev is the last ``held_out`` share of
    train."""
    from polyparse.corpora.conllu_io import read_treebank

    where = folder(ud, name)
    if not (where / "train.conllu").is_file():
        sys.exit(f"{where / 'train.conllu'} not found: the benchmarks read the shared UD "
                 "treebanks (--ud DIR) or the sample (--treebank sample)")
    train = read_treebank(where / "train.conllu", require_tree=require_tree)
    if (where / "dev.conllu").exists():
        return (train, read_treebank(where / "dev.conllu", require_tree=require_tree),
                "train -> dev")
    cut = int(len(train) * (1 - held_out))
    return train[:cut], train[cut:], f"train[:{cut}] -> train[{cut}:]"


def word_clusters(name: str) -> str | None:
    """The Brown clusters of the language of treebank ``name`` (``en_ewt``: ``en``) from
    spaCy's installed lookups data, written into the polyparse cache on first use
    (:func:`corpora.word_clusters.spacy_word_clusters`), or None for a language without
    them."""
    from polyparse.corpora.cache import default_cache_dir
    from polyparse.corpora.errors import CorpusError
    from polyparse.corpora.word_clusters import SPACY_LANGUAGES, spacy_word_clusters

    lang = name.split("_")[0]
    if lang not in SPACY_LANGUAGES:
        return None
    try:
        return str(spacy_word_clusters(lang, default_cache_dir()))
    except CorpusError as error:
        sys.exit(f"word clusters for {name}: {error}")


def treebank(ud: Path, name: str, max_train: int | None = None,
             max_dev: int | None = None):
    """``(train, dev)`` of :func:`split`, each cut to its first ``max_*`` sentences."""
    train, dev, _ = split(ud, name)
    return train[:max_train], dev[:max_dev]


def model_arguments(ap: argparse.ArgumentParser, treebank: str = "en_ewt",
                    order: str = "2") -> None:
    """The options of a benchmark that decodes a model's dev sentences: ``--model``, else
    one trained here (:func:`dev_problems`), ``--treebank``, ``--max-train``,
    ``--epochs``, ``--order``, ``--max-dev``."""
    ap.add_argument("--model", default=None, metavar="PATH",
                    help="the model (default: one trained here, gold tags, SSG, ad3)")
    ap.add_argument("--treebank", default=treebank, help=f"default {treebank}")
    ap.add_argument("--max-train", type=int, default=2000, metavar="N",
                    help="training sentences of the model trained here (default 2000)")
    ap.add_argument("--epochs", type=int, default=2, help="its epochs (default 2)")
    ap.add_argument("--order", choices=["1", "2", "full"], default=order,
                    help=f"its order (default {order})")
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="the first N dev sentences (default all)")


def dev_problems(args):
    """``(parser, dev, problems)`` for the options of :func:`model_arguments`: the model
    ``--model``, else one trained on gold tags (SSG, the ``ad3`` decoder), the dev
    sentences, and ``problems[i]`` the parts and part scores of ``dev[i]`` under the
    model (computed once, outside any clock)."""
    from polyparse.parser.config import PartsConfig
    from polyparse.parser.pipeline import Parser, TrainConfig

    train, dev = treebank(args.ud, args.treebank, args.max_train, args.max_dev)
    if args.model:
        parser = Parser.load(args.model)
    else:
        config = TrainConfig(trainer="ssg", decoder="ad3", epochs=args.epochs,
                             parts=PartsConfig(args.order), tokenizer=None, tagger=None,
                             lemmatizer=None)
        parser = Parser.train(train, config)
    problems = []
    for sentence in dev:
        example = parser.model.example(parser.seen(sentence))
        problems.append((example.parts, parser.model.scores(example).parts))
    return parser, dev, problems


def kept_model(args, name: str, train) -> Path:
    """The model file ``args.model`` (``--model``), else ``RESULTS/tmp/<name>.npz`` under
    ``--results``, written by ``train(path)`` the first time it is asked for and kept
    for later runs."""
    if args.model:
        return Path(args.model)
    path = args.results / "tmp" / f"{name}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        train(path)
    return path


def kept_trained_model(args, name: str, folder: Path, sentences: int, tmp: Path) -> Path:
    """:func:`kept_model` trained by ``polyparse train`` (its defaults, 2 epochs) on the
    first ``sentences`` training sentences of the treebank in ``folder``."""
    def train(path: Path) -> None:
        blocks = (folder / "train.conllu").read_text(encoding="utf-8").split("\n\n")
        cut = tmp / "train.conllu"
        cut.write_text("\n\n".join(blocks[:sentences]) + "\n\n", encoding="utf-8")
        subprocess.run([*POLYPARSE, "-q", "train", "--train", str(cut), "--model", str(path),
                        "--epochs", "2"], check=True)

    return kept_model(args, name, train)


def revision() -> str:
    """The repository's git revision (``git describe --always --dirty``), for result
    tables."""
    return subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                          capture_output=True, text=True).stdout.strip() or "unknown"


def provenance(args) -> dict:
    """How a result came about: the command, the git revision and the date it started
    at, the machine, and its load average before and now."""
    return {"command": args.command, "revision": args.revision, "date": args.started,
            "machine": machine(), "load_before": args.load_before, "load_after": load()}


def write_result(args, name: str, title: str, data: dict, lines: list[str]) -> Path:
    """``NAME.json`` (:func:`provenance`, then ``data``) and ``NAME.md`` (the title, the
    provenance, then ``lines``) under ``--results``; returns the Markdown file."""
    made = provenance(args)
    out = args.results / name
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out.with_suffix(".json")) as f:
        f.write(json.dumps({**made, **data}, indent=2, default=float))
    box = made["machine"]
    header = (f"Command: `{made['command']}` at revision {made['revision']}, {made['date']}; "
              f"{box['cores']} cores, {box['memory_gib']} GiB, Python {box['python']}, "
              f"{box['system']}; load average (1, 5, 15 min) {made['load_before']} before, "
              f"{made['load_after']} after.")
    with atomic_write(out.with_suffix(".md")) as f:
        f.write("\n".join([f"# {title}", "", header, "", *lines]) + "\n")
    return out.with_suffix(".md")


def write_table(args, name: str, title: str, rows: list[dict],
                columns: list[tuple[str, str]], notes: str = "", meta: dict | None = None,
                after: str = "") -> Path:
    """:func:`write_result` of a table: in ``NAME.json`` ``meta``'s fields and the rows, in
    ``NAME.md`` ``notes``, the chosen ``(key, header)`` columns of the rows, then
    ``after``."""
    lines = [notes, ""] if notes else []
    lines += markdown_table(rows, columns)
    if after:
        lines += ["", after]
    return write_result(args, name, title, {**(meta or {}), "rows": rows}, lines)


def pyplot():
    """``matplotlib.pyplot`` drawing into files, or None (with a message) where matplotlib
    is not installed: the tables do not need it, only their plots."""
    try:
        import matplotlib
    except ImportError:
        print("no plot: matplotlib is not installed (pip install -e '.[plot]')",
              file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


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
