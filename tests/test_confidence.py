"""Confidence (``learning.confidence``, ``parse --confidence``): label-marginalized
matrix-tree head marginals against every tree and labelling, the kernel's label log
partition against dense label scores, the temperature fit, ECE, MISC, ``--jobs``, and
bad values refused before any work."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from polyparse.learning.confidence import (Temperatures, expected_calibration_error,
                                           fit_temperatures, head_marginals,
                                           label_log_partition, label_probabilities)
from polyparse.learning.model import ArcScores
from brute_force import all_trees


def random_arc_scores(n, n_labels, rng):
    """``ArcScores`` of random part and label scores, and the dense label scores."""
    arcs = rng.normal(scale=2.0, size=(n + 1, n + 1))
    arcs[:, 0] = -np.inf
    arcs[np.arange(n + 1), np.arange(n + 1)] = -np.inf
    labels = rng.normal(scale=2.0, size=(n + 1, n + 1, n_labels))
    return arcs, labels


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_head_marginals_equal_the_sum_over_every_tree(n, single_root):
    rng = np.random.default_rng(n)
    arcs, labels = random_arc_scores(n, 3, rng)
    t_head, t_label = 1.7, 0.6
    log_partition = label_log_partition(labels.reshape(-1, 3), t_label).reshape(n + 1, n + 1)
    scores = ArcScores(arcs, labels.max(axis=2), labels.argmax(axis=2), log_partition)
    mu = head_marginals(scores, t_head, single_root)
    words = np.arange(1, n + 1)
    trees = all_trees(n, single_root)
    # every tree's weight: its arcs' exp(a / T_head), each summed over its labels
    log_w = (arcs / t_head + log_partition)[trees[:, 1:], words].sum(axis=1)
    p = np.exp(log_w - logsumexp(log_w))
    expected = np.zeros((n + 1, n + 1))
    for tree, weight in zip(trees, p):
        expected[tree[1:], words] += weight
    np.testing.assert_allclose(mu, expected, atol=1e-10)
    np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, atol=1e-10)


def test_label_sum_equals_enumerating_every_labelling():
    """n = 3, 2 labels: the labels summed out arc by arc (the log partition) give the
    marginals of the joint distribution over labelled trees."""
    n, n_labels = 3, 2
    rng = np.random.default_rng(7)
    arcs, labels = random_arc_scores(n, n_labels, rng)
    log_partition = label_log_partition(labels.reshape(-1, n_labels), 1.3).reshape(n + 1, n + 1)
    mu = head_marginals(ArcScores(arcs, labels.max(2), labels.argmax(2), log_partition),
                        0.8, True)
    words = np.arange(1, n + 1)
    joint = {}
    for tree in all_trees(n, True):
        for labelling in itertools.product(range(n_labels), repeat=n):
            joint[tuple(tree), labelling] = (arcs[tree[1:], words] / 0.8
                                             + labels[tree[1:], words, labelling] / 1.3).sum()
    z = logsumexp(list(joint.values()))
    expected = np.zeros((n + 1, n + 1))
    for (tree, _), score in joint.items():
        expected[list(tree[1:]), words] += np.exp(score - z)
    np.testing.assert_allclose(mu, expected, atol=1e-10)


def test_label_probabilities_are_the_softmax():
    rows = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]])
    chosen = rows[np.arange(2), [1, 0]]
    p = label_probabilities(chosen, label_log_partition(rows, 2.0), 2.0)
    expected = [np.exp(1.0) / np.exp(rows[0] / 2).sum(), 1 / np.exp(rows[1] / 2).sum()]
    np.testing.assert_allclose(p, expected)


def test_kernel_log_partition_equals_the_dense_label_scores(sample_model_path, sample_dev):
    from polyparse.parser.pipeline import Parser

    model = Parser.load(sample_model_path).model
    for sentence in sample_dev[:5]:
        n = len(sentence)
        scores = model.arc_distribution(sentence, 300.0)
        h, m = np.nonzero(np.isfinite(scores.arcs))
        encoded = model.extractor.encode(sentence)
        matrix = model.weights[model.part_dim:].reshape(model.label_dim, len(model.labels))
        dense = model.extractor.label_features(encoded, np.stack([h, m], 1)) @ matrix
        np.testing.assert_allclose(scores.label_log_partition[h, m],
                                   label_log_partition(dense, 300.0), rtol=1e-10)
        np.testing.assert_allclose(scores.best_labels[h, m], dense.max(axis=1), rtol=1e-10)
        assert np.isneginf(scores.label_log_partition[np.arange(n + 1), np.arange(n + 1)]).all()
        S, labels = model.arc_scores(sentence)
        np.testing.assert_array_equal(S, scores.arcs + scores.best_labels)


def test_fitted_temperatures_minimize_the_negative_log_likelihood(sample_model_path,
                                                                  sample_dev):
    from polyparse.parser.pipeline import Parser

    parser = Parser.load(sample_model_path)
    model = parser.model
    dev = [parser._seen(s) for s in sample_dev[:40]]
    fitted = fit_temperatures(model, dev, True)

    def head_nll(t):
        total = 0.0
        for s in dev:
            mu = head_marginals(model.arc_distribution(s, fitted.label), t, True)
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
    with pytest.raises(ValueError, match="k-best trees are exact"):
        parser.parse(sample_dev[:1], kbest=2, confidence=Temperatures())
