"""Issue 11: long sentences (fused order-1 scoring, raw text cut at a maximum length),
per-sentence time limits with a counted fallback, and decoders' declared options."""

from __future__ import annotations

import io

import numpy as np
import pytest

from polyparse.corpora.conllu_io import read_conllu, read_treebank, write_conllu
from polyparse.corpora.sentence import Sentence
from polyparse.parser.text.tokenizer import _pieces
from polyparse.decoders import DECODERS, OptionError
from polyparse.decoders.base import DEFAULT_TIME_LIMIT
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.lp import LPDecoder
from polyparse.decoders.trees import chu_liu_edmonds
from polyparse.features.extractor import FeatureConfig, FeatureExtractor
from polyparse.parser.cli import main
from polyparse.learning.model import LinearModel
from polyparse.decoders import make_decoder
from polyparse.parser.config import config_decoder
from polyparse.parser.config import PartsConfig
from polyparse.parser.pipeline import Parser, TrainConfig

from conftest import SAMPLE, ud_file


def _random_model(sentences, rng) -> LinearModel:
    extractor = FeatureExtractor(FeatureConfig(bits=16, label_bits=12)).fit(sentences)
    labels = sorted({r for s in sentences for r in s.deprels[1:]})
    model = LinearModel(extractor, labels)
    model.weights = rng.normal(size=model.dim)
    return model


def _check_fused_scores(sentences, model):
    for sentence in sentences:
        example = model.example(sentence)
        scores = model.scores(example)
        n = len(sentence)
        every = np.zeros((n + 1, n + 1, len(model.labels)))
        S, labels = model.arc_scores(sentence, label_scores=every)
        expected = example.parts.arc_matrix(scores.parts)
        np.testing.assert_array_equal(np.isfinite(S), np.isfinite(expected))
        finite = np.isfinite(expected)
        np.testing.assert_allclose(S[finite], expected[finite], rtol=1e-9, atol=1e-9)
        arcs = example.parts.arcs
        np.testing.assert_array_equal(labels[arcs[:, 0], arcs[:, 1]], scores.labels)
        np.testing.assert_allclose(every[arcs[:, 0], arcs[:, 1]],
                                   model.label_scores(sentence, arcs), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("source", ["sample", "en_ewt"])
def test_fused_arc_scores_equal_the_feature_rows(source):
    """model.arc_scores (features hashed and weighed in one pass, in-between values kept
    incrementally) gives the scores and best labels of example() + scores() exactly,
    on real sentences, long ones (many in-between values and counts) included."""
    path = SAMPLE / "dev.conllu" if source == "sample" else ud_file("en_ewt", "dev")
    sentences = read_treebank(path)
    chosen = sentences[:6] + sorted(sentences, key=len)[-2:]
    _check_fused_scores(chosen, _random_model(sentences[:200], np.random.default_rng(0)))


def test_threaded_arc_and_label_scores_equal_the_serial_ones(sample_dev, monkeypatch):
    """From THREADED_WORDS words on, arc and label scores are computed in two threads:
    the same matrices as one after the other, and as the feature rows."""
    from polyparse.learning import model as model_module

    model = _random_model(sample_dev, np.random.default_rng(2))
    chosen = sorted(sample_dev, key=len)[-3:]
    serial = [model.arc_scores(s) for s in chosen]
    monkeypatch.setattr(model_module, "THREADED_WORDS", 1)
    for sentence, (S, labels) in zip(chosen, serial):
        S2, labels2 = model.arc_scores(sentence)
        np.testing.assert_array_equal(S2, S)
        np.testing.assert_array_equal(labels2, labels)
    _check_fused_scores(chosen, model)


def test_fused_arc_scores_of_a_pruned_model_keep_only_candidates(sample_dev):
    model = _random_model(sample_dev, np.random.default_rng(1))
    keep = np.array([[0, 2], [2, 1], [2, 3], [1, 3]])

    class Pruner:
        def candidate_arcs(self, sentence, encoded=None, extractor=None):
            return keep

    model.pruner = Pruner()
    S, _ = model.arc_scores(Sentence.from_words(["The", "cat", "sat"]))
    assert set(zip(*np.nonzero(np.isfinite(S)))) == set(map(tuple, keep.tolist()))


def test_tiny_time_limit_falls_back_to_the_mst_of_the_arc_scores():
    """A limit far below what building and solving the LP takes: the result is the
    maximum spanning tree under the arc scores, a valid tree, and the fallback is said."""
    rng = np.random.default_rng(3)
    parts = build_parts(12, order="2")
    scores = rng.normal(size=len(parts))
    free = LPDecoder(time_limit=None).decode(parts, scores)
    assert not free.stats.fallback
    result = LPDecoder(time_limit=1e-6).decode(parts, scores)
    assert result.stats.fallback and result.stats.fallback_stage in ("build", "lp")
    expected = chu_liu_edmonds(parts.arc_matrix(scores), True)
    np.testing.assert_array_equal(result.heads, expected)
    np.testing.assert_array_equal(result.output, parts.from_heads(result.heads))
    assert result.value == pytest.approx(scores @ result.output)


def test_parser_counts_the_sentences_that_fell_back(sample_model_path, sample_dev):
    parser = Parser.load(sample_model_path)
    sentences = sample_dev[:5]
    plain = list(parser.parse(sentences))
    assert parser.fallbacks == 0
    parser.use_decoder("lp", time_limit=1e-6)
    limited = list(parser.parse(sentences))
    assert parser.fallbacks == len(sentences)
    # order 1: the MST of the arc scores is what the model's own decoder finds
    for a, b in zip(plain, limited):
        np.testing.assert_array_equal(a.heads, b.heads)


def test_cli_parse_reports_fallbacks(sample_model_path, tmp_path, caplog):
    out = tmp_path / "out.conllu"
    assert main(["parse", "--model", str(sample_model_path), "--input",
                 str(SAMPLE / "dev.conllu"), "--output", str(out), "--decoder", "lp",
                 "--time-limit", "0.000001"]) == 0
    n = len(list(read_conllu(out)))
    assert f"{n} sentence(s) reached the time limit (1e-06 s a sentence)" in caplog.text


def test_raw_text_is_cut_at_max_words(sample_model_path, sample_dev):
    """A long line without punctuation becomes sentences of at most max_words words,
    which together hold every word, in order, and are valid CoNLL-U."""
    parser = Parser.load(sample_model_path)
    words = [w for s in sample_dev for w, u in zip(s.forms[1:], s.upos[1:]) if u != "PUNCT"]
    text = " ".join(words[:400])
    assert len(parser.tokenize(text, max_words=None)) < 400 // 20
    sentences = parser.parse_text(text, max_words=20)
    assert max(len(s) for s in sentences) <= 20
    assert [w for s in sentences for w in s.forms[1:]] == words[:400]
    buffer = io.StringIO()
    write_conllu(sentences, buffer)
    back = list(read_conllu(io.StringIO(buffer.getvalue()).readlines(), require_tree=True))
    assert [len(s) for s in back] == [len(s) for s in sentences]


@pytest.mark.parametrize("max_words", [1, 2, 5, 7])
def test_pieces_respect_the_bounds(max_words):
    rng = np.random.default_rng(max_words)
    counts = rng.integers(1, 3, size=40)
    scores = rng.normal(size=40)
    pieces = list(_pieces(counts, scores, max_words))
    assert pieces[0][0] == 0 and pieces[-1][1] == 40
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    for lo, hi in pieces:
        words = int(counts[lo:hi].sum())
        assert words <= max_words or hi - lo == 1
    for lo, hi in pieces[:-1]:
        if counts[lo:hi].sum() <= max_words:
            # the cut is the best-scoring one among those leaving >= max_words // 2 words
            ok = [k for k in range(lo, 40) if max(1, max_words // 2)
                  <= counts[lo:k + 1].sum() <= max_words]
            if ok:
                assert hi - 1 == max(ok, key=lambda k: (scores[k], k))


def test_decoders_declare_their_options():
    assert set(LPDecoder.options()) == {"single_root", "flow", "grandparent", "method",
                                        "search", "time_limit"}
    assert LPDecoder.options()["grandparent"].choices == ("pairs", "star")
    assert LPDecoder.options()["time_limit"].default == DEFAULT_TIME_LIMIT == 1.0
    assert all(cls.options()["time_limit"].default == DEFAULT_TIME_LIMIT
               for cls in DECODERS.values())
    with pytest.raises(OptionError, match="does not take option.*flow"):
        make_decoder("mst", True, flow="single")
    with pytest.raises(OptionError, match="takes float or None"):
        make_decoder("ilp", True, time_limit="ten")
    assert make_decoder("ilp", True, time_limit=3).time_limit == 3
    time_limit = LPDecoder.options()["time_limit"]
    assert time_limit.parse("none") is None and time_limit.parse("2.5") == 2.5
    with pytest.raises(ValueError, match="--time-limit takes float or None, not 'never'"):
        time_limit.parse("never")
    with pytest.raises(ValueError, match="cannot decode order 2"):
        config_decoder(TrainConfig(decoder="mst", parts=PartsConfig(order="2")))


def test_none_on_the_command_line_is_none_not_the_default(sample_model_path):
    """``--time-limit none`` is no limit, told apart from the flag's absence (the
    declared default, 1 s); likewise a trainer's ``--relaxed-max-iter none``."""
    from polyparse.learning.trainers import TRAINERS
    from polyparse.parser import cli
    from polyparse.parser.cli.flags import chosen

    def limit(*flags):
        args = cli.build_parser().parse_args(["parse", "--model", str(sample_model_path),
                                              *flags])
        return cli.parser_for_parse(args).decoder.time_limit

    assert limit() == 1.0 and limit("--time-limit", "2.5") == 2.5
    assert limit("--time-limit", "none") is None
    args = cli.build_parser().parse_args(["train", "--train", "t", "--model", "m",
                                          "--relaxed-max-iter", "none"])
    assert chosen(args, TRAINERS, "ssg") == {"relaxed_max_iter": None}


@pytest.mark.parametrize("args, message", [
    (["train", "--decoder", "mst", "--flow", "single"], "decoder 'mst' does not take --flow"),
    (["train", "--decoder", "eisner", "--rounds", "5"],
     "decoder 'eisner' does not take --rounds"),
    (["train", "--order", "2", "--decoder", "ilp", "--time-limit", "0"],
     "time_limit must be positive"),
])
def test_cli_rejects_options_the_decoder_does_not_take(tmp_path, capsys, args, message):
    model = tmp_path / "m.npz"
    # the training file does not exist: the options are checked before it is read
    code = main([args[0], "--train", str(tmp_path / "missing.conllu"), "--model", str(model),
                 *args[1:]])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"polyparse: error: {message}") and err.count("\n") == 1
    assert not model.exists()


def test_cli_parse_decoder_errors(sample_model_path, capsys):
    assert main(["parse", "--model", str(sample_model_path), "--text", "Hi.",
                 "--rounds", "2"]) == 2
    assert "decoder 'mst' does not take --rounds" in capsys.readouterr().err
    assert main(["parse", "--model", str(sample_model_path), "--text", "Hi.",
                 "--decoder", "nope"]) == 2
    assert "unknown decoder 'nope'" in capsys.readouterr().err
