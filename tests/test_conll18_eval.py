"""``polyparse eval`` against UD's own evaluator (``udeval`` of the ``udtools`` package,
the CoNLL 2018 shared-task script) on real treebanks with random errors."""

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from polyparse.parser.cli import main
from polyparse.parser.evaluate import METRICS

from conftest import ud_file
from perturb import perturb


def udeval() -> str:
    """The ``udeval`` command of the test extra, or skip the test."""
    here = Path(sys.executable).with_name("udeval")
    found = str(here) if here.exists() else shutil.which("udeval")
    if found is None:
        pytest.skip("udeval not installed: pip install -e '.[test]'")
    return found


def table(text: str) -> dict[str, list[str]]:
    """``udeval``'s table: metric -> its four cells (blank when not printed)."""
    rows = [line.split("|") for line in text.splitlines()[2:]]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def polyparse(*args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["-q", "eval", *map(str, args)]) == 0
    return out.getvalue()


# en_ewt: multiword tokens ("don't") and empty nodes; tr_imst: many multiword tokens;
# sl_ssj: rich features, some not universal.
@pytest.mark.realdata
@pytest.mark.parametrize("treebank, split, sentences, seed", [
    ("en_ewt", "dev", 200, 1), ("tr_imst", "dev", 200, 2), ("sl_ssj", "train", 80, 3)])
def test_eval_equals_udeval_on_every_metric(tmp_path, treebank, split, sentences, seed):
    command = udeval()
    text = ud_file(treebank, split).read_text(encoding="utf-8")
    text = "\n\n".join(text.rstrip("\n").split("\n\n")[:sentences]) + "\n\n"
    gold, system = perturb(text, seed)
    gold_path, system_path = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold_path.write_text(gold, encoding="utf-8")
    system_path.write_text(system, encoding="utf-8")

    def run_udeval(option: str) -> dict[str, list[str]]:
        done = subprocess.run([command, option, "--no-enhanced", gold_path, system_path],
                              capture_output=True, text=True, check=True)
        return table(done.stdout)

    counts, percents = run_udeval("--counts"), run_udeval("--verbose")
    ours = json.loads(polyparse("--gold", gold_path, "--pred", system_path, "--json"))
    ours = ours["conll18"]
    for name, label in METRICS.items():
        s = ours[name]
        aligned = s["correct"] if name == "words" else s["aligned"]
        assert counts[label] == [str(s["correct"]), str(s["gold"]), str(s["system"]),
                                 "" if aligned is None else str(aligned)], label
        # Every metric is exercised: some words right, some wrong.
        assert 0 < s["correct"] < min(s["gold"], s["system"]), label
    shown = polyparse("--gold", gold_path, "--pred", system_path).splitlines()
    for line in shown[1:1 + len(METRICS)]:
        label, *cells = line.split()
        assert cells == [c for c in percents[label] if c], label
    assert ours["words"]["system"] > ours["tokens"]["system"]      # multiword tokens
