"""eval/stages.py (``python -m eval run stages``): the inputs that give the parser one gold
column at a time keep every other predicted column and leave the tree to be parsed."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

GOLD = ("# text = Dogs bark.\n"
        "1-2\tDogs\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t2:nsubj\t_\n"
        "2\tbark\tbark\tVERB\tVBP\tMood=Ind\t0\troot\t0:root\tSpaceAfter=No\n"
        "3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_")
PREDICTED = ("# text = Dogs bark.\n"
             "1-2\tDogs\t_\t_\t_\t_\t_\t_\t_\t_\n"
             "1\tDogs\tDogs\tPROPN\tNNP\tNumber=Sing\t0\troot\t_\t_\n"
             "2\tbark\tbark\tNOUN\tNN\tNumber=Sing\t1\tflat\t_\tSpaceAfter=No\n"
             "3\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_")


@pytest.fixture
def stages(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))
    return importlib.import_module("eval.stages")


@pytest.mark.parametrize("given, column, expected", [
    ("UPOS", 3, ["NOUN", "VERB", "PUNCT"]),
    ("XPOS", 4, ["NNS", "VBP", "."]),
    ("FEATS", 5, ["Number=Plur", "Mood=Ind", "_"]),
    ("LEMMA", 2, ["dog", "bark", "."])])
def test_one_gold_column_the_others_predicted_and_no_tree(stages, given, column, expected):
    text = stages.given_gold([PREDICTED], [GOLD], *stages.GIVEN[given])
    lines = [line.split("\t") for line in text.strip().split("\n")]
    assert lines[0] == ["# text = Dogs bark."] and lines[1][0] == "1-2"
    words = lines[2:]
    assert [w[column] for w in words] == expected
    predicted = [line.split("\t") for line in PREDICTED.split("\n")[2:]]
    for w, p in zip(words, predicted):
        assert [w[i] for i in range(10) if i not in (column, 6, 7, 8)] == \
            [p[i] for i in range(10) if i not in (column, 6, 7, 8)]
        assert w[6:9] == ["_", "_", "_"]


def test_all_gold_columns_give_the_gold_tags_and_lemmas(stages):
    text = stages.given_gold([PREDICTED], [GOLD], *stages.GIVEN["UPOS+XPOS+FEATS+LEMMA"])
    words = [line.split("\t") for line in text.strip().split("\n")[2:]]
    gold = [line.split("\t") for line in GOLD.split("\n")[2:]]
    assert [w[2:6] for w in words] == [g[2:6] for g in gold]


def test_a_confusion_set_corrects_only_the_errors_within_it(stages):
    # Dogs: NOUN tagged PROPN (within PROPN/NOUN); bark: VERB tagged NOUN (not)
    text = stages.given_gold([PREDICTED], [GOLD],
                             *stages.GIVEN["UPOS where PROPN and NOUN were confused"])
    words = [line.split("\t") for line in text.strip().split("\n")[2:]]
    assert [w[3] for w in words] == ["NOUN", "NOUN", "PUNCT"]
    assert [w[4] for w in words] == ["NNP", "NN", "."]
    text = stages.given_gold([PREDICTED], [GOLD],
                             *stages.GIVEN["UPOS where open classes were confused"])
    assert [line.split("\t")[3] for line in text.strip().split("\n")[2:]] == \
        ["PROPN", "VERB", "PUNCT"]

