"""Confidence (``learning.confidence``, ``parse --confidence``): matrix-tree head
marginals against every tree, label probabilities, the temperature fit, ECE, MISC,
``--jobs``, and bad values refused before any work."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from polyparse.learning.confidence import (Temperatures, expected_calibration_error,
                                           fit_temperatures, head_marginals,
                                           label_probabilities)
from brute_force import all_trees


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_head_marginals_equal_the_sum_over_every_tree(n, single_root):
    rng = np.random.default_rng(n)
    S = rng.normal(scale=3.0, size=(n + 1, n + 1))
    S[:, 0] = -np.inf
    S[np.arange(n + 1), np.arange(n + 1)] = -np.inf
    if n >= 3:
        S[2, 1] = -np.inf                       # a pruned arc: never in a tree
    t = 1.7
    mu = head_marginals(S, t, single_root)
    words = np.arange(1, n + 1)
    trees = all_trees(n, single_root)
    trees = trees[np.isfinite(S[trees[:, 1:], words]).all(axis=1)]
    log_w = (S / t)[trees[:, 1:], words].sum(axis=1)
    p = np.exp(log_w - logsumexp(log_w))
    expected = np.zeros((n + 1, n + 1))
    for tree, weight in zip(trees, p):
        expected[tree[1:], words] += weight
    np.testing.assert_allclose(mu, expected, atol=1e-10)
    np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, atol=1e-10)


def test_label_probabilities_are_the_softmax():
    rows = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]])
    p = label_probabilities(rows, np.array([1, 0]), 2.0)
    expected = [np.exp(1.0) / np.exp(rows[0] / 2).sum(), 1 / np.exp(rows[1] / 2).sum()]
    np.testing.assert_allclose(p, expected)


def test_label_scores_pick_the_label_the_parser_writes(sample_model_path, sample_dev):
    """DeprelProb is the probability of the written label: the dense label scores of the
    chosen arcs have their maximum at the label the fused kernel chose (the first stage's
    labels: without the second-stage labeler, which weighs other scores too)."""
    from polyparse.parser.pipeline import Parser

    parser = Parser.load(sample_model_path)
    parser.relabeler = None
    model = parser.model
    for sentence in sample_dev[:10]:
        seen = parser.seen(sentence)
        n = len(sentence)
        analysis = parser.analyze(sentence, Temperatures(30.0, 7.0))
        words = np.arange(1, n + 1)
        heads = analysis.sentence.heads
        rows = model.label_scores(seen, np.stack([heads[1:], words], axis=1))
        chosen = [model.labels.index(label) for label in analysis.sentence.deprels[1:]]
        np.testing.assert_array_equal(rows.argmax(axis=1), chosen)
        np.testing.assert_allclose(analysis.label_probs[1:],
                                   label_probabilities(rows, np.array(chosen), 7.0))
        S, _ = model.arc_scores(seen)
        np.testing.assert_allclose(analysis.head_probs[1:],
                                   head_marginals(S, 30.0, True)[heads[1:], words])


def test_fitted_temperatures_minimize_the_negative_log_likelihood(sample_model_path,
                                                                  sample_dev):
    from polyparse.parser.pipeline import Parser

    parser = Parser.load(sample_model_path)
    model = parser.model
    dev = [parser.seen(s) for s in sample_dev[:40]]
    fitted = fit_temperatures(model, dev, True)

    def head_nll(t):
        total = 0.0
        for s in dev:
            mu = head_marginals(model.arc_scores(s)[0], t, True)
            with np.errstate(divide="ignore"):          # T = 1: gold heads at p = 0
                total -= np.log(mu[s.heads[1:], np.arange(1, len(s) + 1)]).sum()
        return total

    best = head_nll(fitted.head)
    assert best <= head_nll(fitted.head * 1.2) and best <= head_nll(fitted.head / 1.2)
    assert best < head_nll(1.0)
    assert fitted == parser.fit_confidence(sample_dev[:40])


def test_expected_calibration_error_by_hand():
    confidence = np.array([0.05, 0.1, 0.95, 0.97, 0.99, 1.0])
    correct = np.array([0, 1, 1, 1, 0, 1])
    # bin 1 (0, 1/15]: 0.05, accuracy 0; bin 2: 0.1, accuracy 1; bin 15: four, 3 right
    expected = (abs(0 - 0.05) + abs(1 - 0.1) + abs(3 - (0.95 + 0.97 + 0.99 + 1.0))) / 6
    assert expected_calibration_error(confidence, correct) == pytest.approx(expected)
    assert expected_calibration_error(np.full(10, 0.7), np.arange(10) < 7) == pytest.approx(0)


@pytest.mark.parametrize("values", [(0.0, 1.0), (1.0, -2.0), (float("nan"), 1.0),
                                    (float("inf"), 1.0)])
def test_temperatures_must_be_positive(values):
    with pytest.raises(ValueError, match="temperature must be a positive number"):
        Temperatures(*values)


def _blocks(text):
    return [b for b in text.split("\n\n") if b.strip()]


def test_cli_confidence_fills_misc_and_keeps_everything_else(sample_model_path, tmp_path):
    from polyparse.parser.cli import main
    from polyparse.parser.pipeline import Parser
    from conftest import SAMPLE
    from test_kbest import _sentences_of

    blocks = _blocks((SAMPLE / "dev.conllu").read_text())[:20]
    # give some words MISC entries of their own, one of them a stale HeadProb
    source_lines = []
    for b, block in enumerate(blocks):
        for line in block.split("\n"):
            cols = line.split("\t")
            if len(cols) == 10 and cols[0] in ("1", "2"):
                cols[9] = "SpaceAfter=No|Foo=bar" if cols[0] == "1" else "HeadProb=0.5|Zed=1"
            source_lines.append("\t".join(cols))
        source_lines.append("")
    source = tmp_path / "in.conllu"
    source.write_text("\n".join(source_lines) + "\n")
    plain, confident = tmp_path / "plain.conllu", tmp_path / "confident.conllu"
    model = str(sample_model_path)
    assert main(["-q", "parse", "--model", model, "--input", str(source),
                 "--output", str(plain)]) == 0
    assert main(["-q", "parse", "--model", model, "--input", str(source), "--output",
                 str(confident), "--confidence", "--confidence-temperature", "50,20"]) == 0
    parser = Parser.load(sample_model_path)
    for given, parsed in zip(_blocks(plain.read_text()), _blocks(confident.read_text())):
        given_lines, lines = given.split("\n"), parsed.split("\n")
        # an order-1 model without UD rules: the marginals account for everything
        note = "# confidence = matrix-tree marginals; not accounted for: none"
        assert lines.count(note) == 1
        lines.remove(note)
        assert len(given_lines) == len(lines)
        sentence = _sentences_of(given)[0]
        analysis = parser.analyze(sentence, Temperatures(50.0, 20.0))
        for old, new in zip(given_lines, lines):
            old_cols, cols = old.split("\t"), new.split("\t")
            if len(cols) != 10 or not cols[0].isdigit():
                assert old == new
                continue
            assert cols[:9] == old_cols[:9]
            misc = cols[9].split("|")
            keys = [item.split("=")[0] for item in misc]
            kept = [] if old_cols[9] == "_" else old_cols[9].split("|")
            assert keys[:len(kept)] == [item.split("=")[0] for item in kept]
            assert [item for item in misc if not item.startswith(("HeadProb=", "DeprelProb="))
                    ] == [item for item in kept if not item.startswith("HeadProb=")]
            values = dict(item.split("=") for item in misc)
            i = int(cols[0])
            assert float(values["HeadProb"]) == pytest.approx(analysis.head_probs[i], abs=5e-5)
            assert float(values["DeprelProb"]) == pytest.approx(analysis.label_probs[i],
                                                                abs=5e-5)
            assert 0 < analysis.head_probs[i] <= 1 and 0 < analysis.label_probs[i] <= 1
    on_two = tmp_path / "two.conllu"
    assert main(["-q", "parse", "--model", model, "--input", str(source), "--output",
                 str(on_two), "--confidence", "--confidence-temperature", "50,20",
                 "--certify", "--jobs", "2"]) == 0
    serial = tmp_path / "serial.conllu"
    assert main(["-q", "parse", "--model", model, "--input", str(source), "--output",
                 str(serial), "--confidence", "--confidence-temperature", "50,20",
                 "--certify"]) == 0
    assert on_two.read_text() == serial.read_text()
    assert "# decoding = mst; score = " in serial.read_text()


@pytest.mark.parametrize("args,message", [
    (["--confidence", "--confidence-temperature", "-1"], "temperature must be a positive"),
    (["--confidence", "--confidence-temperature", "0"], "temperature must be a positive"),
    (["--confidence", "--confidence-temperature", "1,warm"], "one or two positive numbers"),
    (["--confidence", "--confidence-temperature", "1,2,3"], "one or two positive numbers"),
    (["--confidence-temperature", "2"], "--confidence-temperature is for --confidence"),
    (["--kbest", "2", "--certify"], "--kbest cannot go with --certify or --confidence"),
    (["--kbest", "2", "--confidence"], "--kbest cannot go with --certify or --confidence"),
    (["--confidence", "--format", "conllx"], "CoNLL-X does not have"),
])
def test_cli_rejects_bad_values_before_any_work(tmp_path, capsys, args, message):
    """The model file does not even exist: the options are refused before it is read."""
    from polyparse.parser.cli import main
    from conftest import SAMPLE

    out = tmp_path / "out.conllu"
    assert main(["-q", "parse", "--model", str(tmp_path / "missing.npz"), "--input",
                 str(SAMPLE / "dev.conllu"), "--output", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polyparse: error: ") and message in err
    assert "missing.npz" not in err and not out.exists()


def test_python_parse_refuses_kbest_with_annotations(sample_model_path, sample_dev):
    from polyparse.parser.pipeline import Parser

    parser = Parser.load(sample_model_path)
    with pytest.raises(ValueError, match="k-best trees carry their rank and score"):
        parser.parse(sample_dev[:1], kbest=2, confidence=Temperatures())
