"""The benchmark suite of ``eval/``: ``python -m eval list`` names every benchmark, each
one's smoke run (its ``SMOKE`` arguments: the sample treebank, a few sentences) writes
tables that state their command and revision, and no benchmark reaches into ``tests/``
or the package's private functions.

The smoke runs are marked ``benchmarks`` and left out of the default run: most of their
time is the ``polyparse`` processes they start (a second or more each to import and load
the kernels), about two CPU-minutes in all, a third of the suite's. ``.ci/run`` runs them
after the suite (``python -m pytest -q -m benchmarks``)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO / "eval"
PROVENANCE = {"command", "revision", "date", "machine", "load_before", "load_after"}
"""What every result JSON records first (``eval._common.provenance``)."""
NAMES = sorted(p.stem for p in EVAL.glob("*.py") if not p.stem.startswith("_"))


@pytest.fixture
def benchmarks(monkeypatch):
    """The ``eval`` package of this repository."""
    monkeypatch.syspath_prepend(str(REPO))
    import eval as package
    return package


def test_list_names_every_benchmark_with_its_description(benchmarks):
    done = subprocess.run([sys.executable, "-m", "eval", "list"], cwd=REPO,
                          capture_output=True, text=True, check=True)
    listed = [line.split()[0] for line in done.stdout.splitlines() if not line[:1].isspace()]
    assert listed == NAMES == benchmarks.names()
    for name in NAMES:
        first = benchmarks.description(name).split()[0]
        assert f"{name}  " in done.stdout and first in done.stdout


def test_run_of_an_unknown_benchmark_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "eval", "run", "no_such_benchmark"],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2
    assert "invalid choice: 'no_such_benchmark'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name, given, said", [
    ("peers", ["--model", "stanza=m.npz"], "SYSTEM=PATH, SYSTEM one of polyparse, udpipe, spacy"),
    ("peers", ["--model", "udpipe=no/such/model"], "no/such/model does not exist"),
    ("peers", ["--model", "udpipe=README.md", "--model", "udpipe=README.md"],
     "a second model for udpipe"),
    ("peers", ["--model", "udpipe=README.md", "--treebanks", "sample", "sample"],
     "--treebanks names one"),
    ("peers", ["--jobs", "0"], "--jobs must be at least 1, not 0"),
    ("stages", ["--model", "no/such/model.npz"], "an existing model file"),
    ("stages", ["--model", "README.md", "--treebanks", "sample", "sample"],
     "an existing model file"),
    ("stages", ["--max-dev", "0"], "--max-dev must be at least 1, not 0"),
    ("feature_space", ["--sizes", "24"], "--sizes 24: BITS,LABEL_BITS (each 1 to 30) or default"),
    ("feature_space", ["--sizes", "24,31"], "--sizes 24,31: BITS,LABEL_BITS"),
    ("feature_space", ["--sizes", "default", "default"], "a size named twice"),
    ("feature_space", ["--sizes", "24,20", "--model", "25,21=README.md"],
     "SIZE=PATH, SIZE one of 24,20")])
def test_option_errors_are_usage_errors_before_any_training(name, given, said):
    done = subprocess.run([sys.executable, "-m", "eval", "run", name, "--treebanks",
                           "sample", *given], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_no_benchmark_imports_tests_or_private_names(name):
    tree = ast.parse((EVAL / f"{name}.py").read_text(encoding="utf-8"))
    polyparse_modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("polyparse"):
            assert not any(part.startswith("_") for part in node.module.split(".")), node.module
            for alias in node.names:
                assert not alias.name.startswith("_"), f"{node.module}.{alias.name}"
                polyparse_modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] not in ("tests", "browser", "perturb")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id in polyparse_modules):
            assert not node.attr.startswith("_"), f"{node.value.id}.{node.attr}"
    assert "sys.path" not in ast.unparse(tree)


@pytest.mark.benchmarks
@pytest.mark.parametrize("name", NAMES)
def test_smoke_run_writes_tables_with_command_and_revision(benchmarks, name, tmp_path):
    from eval.__main__ import smoke

    for module in getattr(benchmarks.benchmark(name), "REQUIRES", ()):
        pytest.importorskip(module)         # a benchmark of an optional extra
    results = tmp_path / "results"
    before = files(EVAL / "results")
    tables = smoke(name, results)
    assert files(EVAL / "results") == before, "the smoke run wrote into eval/results"
    assert tables, f"{name} wrote no table"
    for table in tables:
        data = json.loads(table.with_suffix(".json").read_text())
        assert data["command"].startswith(f"python -m eval run {name} ")
        assert f"--results {results}" in data["command"]
        assert data["revision"] and data["revision"] != "unknown"
        assert len(data["load_before"]) == len(data["load_after"]) == 3
        assert data["machine"]["cores"] >= 1
        found = {key: value for key, value in data.items() if key not in PROVENANCE}
        assert any(isinstance(value, list) and value for value in found.values()), \
            f"{table}: no rows"
        text = table.read_text()
        assert text.startswith("# ")
        assert f"Command: `python -m eval run {name} " in text
        assert f"at revision {data['revision']}" in text
        assert "|---" in text or "---|" in text          # a Markdown table


def files(folder: Path) -> dict:
    """Every file under ``folder`` and the time it was last written."""
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
