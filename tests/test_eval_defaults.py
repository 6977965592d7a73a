"""eval/defaults.py (``python -m eval run defaults``), the benchmark of the defaults: its
hold-out split, and one run on the sample treebank laid out as ../shared/ud is (training
a model on 150 of the sample's sentences with the defaults, half a minute)."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest

from polyparse.corpora.conllu_io import read_treebank

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "corpora" / "sample"


@pytest.fixture
def defaults(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))
    return importlib.import_module("eval.defaults")


def test_without_dev_every_tenth_training_sentence_is_held_out(defaults, tmp_path):
    folder = tmp_path / "ud" / "sample"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE / "train.conllu", folder)
    train, held, how = defaults.split(folder, tmp_path / "work", None)
    sentences = read_treebank(SAMPLE / "train.conllu")
    kept, out = read_treebank(train), read_treebank(held)
    assert train.parent == held.parent == tmp_path / "work"
    assert how == "train, every 10th"
    assert [s.forms for s in out] == [s.forms for s in sentences[9::10]]
    assert [s.forms for s in kept] == [s.forms for i, s in enumerate(sentences)
                                       if i % 10 != 9]
    assert len(kept) + len(out) == len(sentences)
    _, first, _ = defaults.split(folder, tmp_path / "again", 3)
    assert [s.forms for s in read_treebank(first)] == [s.forms for s in out[:3]]


def test_order_2_against_order_1_per_treebank(defaults):
    def row(name, order, speed, train, uas):
        return {"treebank": name, "order": order, "tokens_per_s": speed,
                "cli_tokens_per_s": speed / 2, "train_min": train, "weights_min": None,
                "uas": uas}
    rows = [row("a", "1", 1000.0, 2.0, 80.0), row("a", "2", 250.0, 10.0, 83.5),
            row("b", "2", 100.0, 1.0, 70.0)]          # b has no order-1 row
    [derived] = defaults.against_first_order(rows)
    assert derived == {"treebank": "a", "order": "2", "speed_ratio": 0.25,
                       "cli_speed_ratio": 0.25, "train_ratio": 5.0, "weights_ratio": None,
                       "uas_diff": 3.5}


@pytest.mark.slow
def test_one_run_on_the_sample_writes_a_sane_row(defaults, tmp_path):
    folder = tmp_path / "ud" / "sample"
    folder.mkdir(parents=True)
    for name in ("train.conllu", "dev.conllu"):
        shutil.copy(SAMPLE / name, folder)
    out = tmp_path / "results" / "defaults"
    defaults.main(["--ud", str(tmp_path / "ud"), "--orders", "1", "--max-sentences", "6",
                   "--max-train", "150", "--no-warm-up", "--work", str(tmp_path / "work"),
                   "--out", str(out)])
    table = json.loads(out.with_suffix(".json").read_text())
    gold = read_treebank(SAMPLE / "dev.conllu")[:6]
    [row] = table["rows"]
    assert (row["treebank"], row["order"], row["held_out"]) == ("sample", "1", "dev")
    assert (row["train_sentences"], row["sentences"]) == (150, 6)
    assert row["tokens"] == sum(len(s) for s in gold)
    assert row["max_words"] in {len(s) for s in gold}
    assert (row["decoder"], row["epochs"]) == ("mst", 10)       # polyparse train's own
    assert 50 < row["uas"] <= 100 and 0 <= row["las"] <= row["uas"]
    assert row["same_as_cli"] == 6          # in process, the command's parser
    assert 0 < row["mean_ms"] <= row["p99_ms"] <= row["max_ms"]
    assert 0 <= row["time_limits"] <= 6 and 0 <= row["optimal_pct"] <= 100
    assert 0 < row["weights_min"] < row["train_min"]
    assert table["revision"] and len(table["load_before"]) == 3
    assert table["against_first_order"] == []
    markdown = out.with_suffix(".md").read_text()
    assert "| sample | 1 | mst | dev | 6 | %d | %.2f |" % (row["tokens"], row["uas"]) in markdown
    assert "python -m eval run defaults --ud" in markdown
    assert row["cli_tokens_per_s"] > 0 and row["tokens_per_s"] > 0
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["models", "sample"]
    assert "epoch 10:" in (tmp_path / "work" / "sample" / "train-1.log").read_text()
    # eval/kbest_first.py on the same models and held-out part: --kbest's first tree is
    # parse's, the rules on
    kbest_first = importlib.import_module("eval.kbest_first")
    kbest_first.main(["--work", str(tmp_path / "work"), "--out", str(tmp_path / "kb")])
    [row] = json.loads((tmp_path / "kb.json").read_text())["rows"]
    assert (row["treebank"], row["order"], row["sentences"], row["same"]) == ("sample", "1",
                                                                               6, 6)
