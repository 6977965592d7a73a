"""The dual extragradient trainer (Taskar, Lacoste-Julien, Jordan 2006): its KL
projection against enumeration of trees, its gap function, the CLI."""

import numpy as np
import pytest
from brute_force import all_trees

from polyparse.learning.trainers.extragradient import MAX_SPREAD, kl_projection
from polyparse.parser.evaluate import attachment_scores
from polyparse.parser.config import FeatureConfig
from polyparse.parser.pipeline import Parser, TrainConfig

SMALL = FeatureConfig(bits=16, label_bits=10)


def brute_force_projection(theta, arcs, n, single_root):
    """Arc marginals of ``exp(sum theta)`` over every tree."""
    S = np.full((n + 1, n + 1), -np.inf)
    S[arcs[:, 0], arcs[:, 1]] = theta
    trees = all_trees(n, single_root)
    words = np.arange(1, n + 1)
    scores = S[trees[:, 1:], words].sum(axis=1)
    p = np.exp(scores - scores.max())
    p /= p.sum()
    mu = np.zeros((n + 1, n + 1))
    for tree, weight in zip(trees, p):
        mu[tree[1:], words] += weight
    return mu[arcs[:, 0], arcs[:, 1]]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("single_root", [True, False])
def test_projection_is_the_marginals_of_all_trees(n, single_root):
    rng = np.random.default_rng(n)
    h, m = np.nonzero(~np.eye(n + 1, dtype=bool))
    arcs = np.stack([h, m], 1)[m > 0]
    for scale in (0.1, 1.0, 5.0):
        theta = scale * rng.standard_normal(len(arcs))
        expected = brute_force_projection(theta, arcs, n, single_root)
        assert np.allclose(kl_projection(theta, arcs, n, single_root), expected, atol=1e-10)


@pytest.mark.parametrize("n", [2, 3])
def test_labeled_projection_is_the_marginals_of_all_labeled_trees(n):
    """The KL projection on labeled trees: ``z[a, l] = mu[a] pi[a, l]`` with ``mu`` the
    marginals at ``logsumexp_l theta[a, l]`` and ``pi`` the softmax of ``theta[a]``."""
    import itertools

    from polyparse.learning.trainers.extragradient import _labeled_projection

    rng = np.random.default_rng(n)
    n_labels = 3
    h, m = np.nonzero(~np.eye(n + 1, dtype=bool))
    arcs = np.stack([h, m], 1)[m > 0]
    theta = 2.0 * rng.standard_normal((len(arcs), n_labels))
    row = {(a, b): r for r, (a, b) in enumerate(arcs)}
    expected = np.zeros_like(theta)
    total = 0.0
    for tree in all_trees(n, True):
        rows = [row[tree[w], w] for w in range(1, n + 1)]
        for labels in itertools.product(range(n_labels), repeat=n):
            weight = np.exp(theta[rows, labels].sum())
            expected[rows, labels] += weight
            total += weight
    mu, pi = _labeled_projection(theta, arcs, n, True)
    assert np.allclose(mu[:, None] * pi, expected / total, atol=1e-10)


def test_projection_falls_back_to_the_tree_past_the_spread():
    n = 4
    rng = np.random.default_rng(0)
    h, m = np.nonzero(~np.eye(n + 1, dtype=bool))
    arcs = np.stack([h, m], 1)[m > 0]
    theta = rng.standard_normal(len(arcs))
    theta *= 2 * MAX_SPREAD / (theta.max() - theta.min())
    mu = kl_projection(theta, arcs, n, True)
    assert set(np.unique(mu)) == {0.0, 1.0} and mu.sum() == n
    assert np.allclose(mu, brute_force_projection(theta, arcs, n, True), atol=1e-9)


def _train(sentences, epochs, **options):
    config = TrainConfig(trainer="extragradient", epochs=epochs, features=SMALL,
                         trainer_options=options)
    return Parser.train(sentences, config)


def test_gap_is_nonnegative_and_falls_as_one_over_t(sample_train):
    """G >= 0 at every averaged iterate; over the last decade of 100 iterations on 5
    sentences (radius 10, eta 0.1) log G falls against log t with slope about -1."""
    parser = _train(sample_train[:5], 100, radius=10.0, eta=0.1)
    gaps = np.array([e.extra["G"] for e in parser.report.epochs])
    assert (gaps >= -1e-9).all()
    assert np.all(np.array([e.extra["primal"] for e in parser.report.epochs]) >= -1e-9)
    t = np.arange(1, gaps.size + 1)
    slope = np.polyfit(np.log(t[9:]), np.log(gaps[9:]), 1)[0]
    assert -1.2 <= slope <= -0.8


def test_gap_is_nonnegative_with_the_default_step_and_a_tight_ball(sample_train):
    """With eta = 1/L and a ball too small to fit the data, every slack stays positive
    and G never goes negative."""
    parser = _train(sample_train[:8], 15, radius=0.5)
    gaps = np.array([e.extra["G"] for e in parser.report.epochs])
    assert (gaps >= 0).all() and gaps[-1] < gaps[0]
    assert all(e.objective > 0 for e in parser.report.epochs)


def test_options_are_checked():
    from polyparse.learning.trainers import make_trainer

    with pytest.raises(ValueError, match="takes float or None, not 'sqrt'"):
        make_trainer("extragradient", eta="sqrt")
    with pytest.raises(ValueError, match="eta must be"):
        make_trainer("extragradient", eta=0.0)
    with pytest.raises(ValueError, match="radius must be"):
        make_trainer("extragradient", radius=-1.0)


def test_cli_trains_at_order_1_and_parses_dev(tmp_path):
    from conftest import SAMPLE
    from polyparse.corpora.conllu_io import read_treebank
    from polyparse.parser.cli import main

    model, out = tmp_path / "model.npz", tmp_path / "dev.conllu"
    train = tmp_path / "train.conllu"
    train.write_text("".join(s.to_text() for s in read_treebank(SAMPLE / "train.conllu")[:80]))
    assert main(["train", "--train", str(train), "--model", str(model), "--no-tagger",
                 "--trainer", "extragradient", "--eta", "0.1", "--epochs", "5",
                 "--bits", "18", "--label-bits", "12", "--no-ud-rules"]) == 0
    assert main(["parse", "--model", str(model), "--input", str(SAMPLE / "dev.conllu"),
                 "--output", str(out)]) == 0
    gold = read_treebank(SAMPLE / "dev.conllu")
    scores = attachment_scores(gold, read_treebank(out)).all_words
    assert scores["uas"] > 80.0 and scores["las"] > 75.0     # measured: 83.8 and 79.5


def test_expected_features_kernel_agrees_with_its_python_twin():
    """``out += sign * F z`` for labeled arc marginals, against dense algebra."""
    import scipy.sparse as sp

    from polyparse.learning._kernels import add_expected_features

    rng = np.random.default_rng(1)
    n_arcs, part_dim, label_dim, n_labels = 7, 50, 11, 4
    part = sp.random(n_arcs, part_dim, density=0.2, format="csr", random_state=2)
    label = sp.random(n_arcs, label_dim, density=0.3, format="csr", random_state=3)
    mu = rng.random(n_arcs)
    mu[2] = 0.0
    pi = rng.random((n_arcs, n_labels))
    pi /= pi.sum(axis=1, keepdims=True)
    out = rng.standard_normal(part_dim + label_dim * n_labels)
    expected = out.copy()
    expected[:part_dim] -= 0.5 * (part.T @ mu)
    expected[part_dim:] -= 0.5 * (label.T @ (mu[:, None] * pi)).ravel()
    add_expected_features(out, part_dim, n_labels, part.indptr, part.indices, part.data,
                          label.indptr, label.indices, label.data, mu, pi, -0.5)
    assert np.allclose(out, expected)
