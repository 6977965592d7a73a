"""The command line end to end on the sample treebank, and its handling of bad input."""

import contextlib
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from polyparse.decoders import PartType
from polyparse.corpora.conllu_io import read_treebank
from polyparse.parser.cli import main
from polyparse.parser.pipeline import Parser

from conftest import SAMPLE


def run_cli(*args, stdin=None):
    """Run ``polyparse`` in a subprocess, as a user would."""
    return subprocess.run([sys.executable, "-m", "polyparse.parser.cli", *map(str, args)],
                          input=stdin, capture_output=True, text=True)


def run_main(*args) -> subprocess.CompletedProcess:
    """Run ``polyparse`` in this process (a second start of Python and of its kernels
    costs seconds), with what it writes on standard output and error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(map(str, args)))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_parse_changes_only_head_and_deprel(sample_model_path, tmp_path):
    out = tmp_path / "parsed.conllu"
    assert main(["-q", "parse", "--model", str(sample_model_path), "--input",
                 str(SAMPLE / "dev.conllu"), "--output", str(out)]) == 0
    gold_lines = (SAMPLE / "dev.conllu").read_text().split("\n")
    pred_lines = out.read_text().split("\n")
    assert len(gold_lines) == len(pred_lines)
    for g, p in zip(gold_lines, pred_lines):
        g_cols, p_cols = g.split("\t"), p.split("\t")
        if len(g_cols) == 10 and g_cols[0].isdigit():
            assert g_cols[:6] + g_cols[8:] == p_cols[:6] + p_cols[8:]
        else:
            assert g == p


def test_train_parse_eval_from_the_shell(sample_model_path, tmp_path):
    parsed = run_cli("parse", "--model", sample_model_path,
                     stdin=(SAMPLE / "dev.conllu").read_text())
    assert parsed.returncode == 0, parsed.stderr
    pred = tmp_path / "pred.conllu"
    pred.write_text(parsed.stdout)
    result = run_cli("eval", "--gold", SAMPLE / "dev.conllu", "--pred", pred, "--json")
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    assert scores["all_words"]["uas"] > 75.0
    assert scores["no_punct"]["words"] < scores["all_words"]["words"]


def test_save_load_parse_is_identical(sample_model_path, tmp_path, sample_dev):
    parser = Parser.load(sample_model_path)
    first = [s.to_text() for s in parser.parse(sample_dev)]
    parser.save(tmp_path / "again.npz")
    again = Parser.load(tmp_path / "again.npz")
    assert np.array_equal(parser.model.weights, again.model.weights)
    assert [s.to_text() for s in again.parse(sample_dev)] == first


def test_loaded_weights_are_the_files_float32_and_score_as_float64(sample_model_path,
                                                                    sample_dev):
    """A model read from its file keeps the stored float32 weights (half the memory);
    every score is the one of the same weights in float64, to the last bit."""
    model = Parser.load(sample_model_path).model
    assert model.weights.dtype == np.float32
    as_read = [(model.arc_scores(s), model.scores(model.example(s)).parts)
               for s in sample_dev[:20]]
    model.weights = model.weights.astype(np.float64)
    labels_block = model.weights[model.part_dim:].reshape(model.label_dim, -1)
    for s, ((S, labels), parts) in zip(sample_dev[:20], as_read):
        S64, labels64 = model.arc_scores(s)
        assert np.array_equal(S, S64) and np.array_equal(labels, labels64)
        assert np.array_equal(parts, model.scores(model.example(s)).parts)
        example = model.example(s)              # and scipy's own products in float64
        scipy_parts = example.part_features @ model.weights[:model.part_dim]
        scipy_labels = (example.label_features @ labels_block).max(axis=1)
        arc = example.parts.block(PartType.ARC)
        scipy_parts[arc] += scipy_labels
        assert np.array_equal(parts, scipy_parts)


def test_help_for_every_command(capsys):
    result = run_cli("--help")
    assert result.returncode == 0 and "usage: polyparse" in result.stdout
    for command in ("train", "parse", "draw", "serve", "eval", "gap", "download",
                    "clusters"):
        with pytest.raises(SystemExit) as stop:
            main([command, "--help"])
        assert stop.value.code == 0
        assert "usage: polyparse " + command in capsys.readouterr().out


def test_a_flag_whose_decoders_default_differently_gives_each_default(capsys):
    """--max-iter is ad3's (10,000 by default) and ad3-exact's (100 per node): the help
    says both, not the first one found; --time-limit, every decoder's, says its one
    default."""
    with pytest.raises(SystemExit):
        main(["parse", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 10000 [ad3]; 100 [ad3-exact])" in text
    time_limit = text[text.index("--time-limit TIME_LIMIT Seconds"):
                      text.index("--penalty PENALTY Initial")]
    assert time_limit.count("(default") == 1 and "(default 1.0)" in time_limit


BAD_HEAD = "1\tHello\thello\tINTJ\tUH\t_\t7\troot\t_\t_\n\n"


@pytest.mark.parametrize("text, message", [
    (BAD_HEAD, "bad.conllu:1:"),
    ("1 Hello hello INTJ UH _ 0 root _ _\n\n", "space"),
    ("", "no sentences"),
    ("1\tA\ta\tX\tX\t_\t2\tdep\t_\t_\n2\tB\tb\tX\tX\t_\t1\tdep\t_\t_\n\n", "bad.conllu:"),
])
def test_bad_training_file_is_one_clear_line_and_no_model(tmp_path, text, message):
    bad = tmp_path / "bad.conllu"
    bad.write_text(text)
    model = tmp_path / "model.npz"
    result = run_main("train", "--train", bad, "--model", model)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert message in result.stderr and result.stderr.startswith("polyparse: error:")
    assert not model.exists()


def test_jobs_without_mini_batches_is_a_usage_error(tmp_path):
    model = tmp_path / "model.npz"
    result = run_main("train", "--train", SAMPLE / "train.conllu", "--model", model,
                     "--no-tagger", "--jobs", "2", "--batch", "1")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "2 jobs need mini-batches of at least 2 sentences" in result.stderr
    assert not model.exists()


def test_bad_input_keeps_existing_output_and_model(sample_model_path, tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(b"1\tcaf\xe9\tcafe\tNOUN\tNN\t_\t0\troot\t_\t_\n\n")
    out = tmp_path / "out.conllu"
    out.write_text("precious\n")
    before = sample_model_path.read_bytes()
    result = run_cli("parse", "--model", sample_model_path, "--input", bad, "--output", out)
    assert result.returncode == 2 and "bad.conllu:1:" in result.stderr
    assert "Traceback" not in result.stderr
    assert out.read_text() == "precious\n"
    assert sample_model_path.read_bytes() == before


def test_damaged_or_missing_model_is_a_clear_error(tmp_path):
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(b"PK\x03\x04 not really a zip")
    for model in (damaged, tmp_path / "missing.npz"):
        result = run_main("parse", "--model", model, "--input", os.devnull)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert str(model) in result.stderr


def test_model_file_holds_no_pickles(sample_model_path):
    with np.load(sample_model_path, allow_pickle=False) as npz:
        assert "metadata" in npz.files
        meta = json.loads(str(npz["metadata"]))
        assert all(npz[k].dtype != object for k in npz.files)
    assert meta["format_version"] == 1 and meta["labels"]
    assert meta["training"]["decoder"] == "mst" and meta["training"]["single_root"] is True
    sized = Parser.load(sample_model_path).model           # no --bits: sized from the data
    assert meta["training"]["features"]["bits"] == sized.extractor.config.bits < 24
    assert sized.part_dim == 2 ** sized.extractor.config.bits


def test_word_clusters_are_stored_once_for_the_tagger_and_the_parser(tmp_path, sample_train):
    train = tmp_path / "train.conllu"
    train.write_text("".join(s.to_text() for s in sample_train[:40]))
    forms = sorted({f for s in read_treebank(train) for f in s.forms[1:]})
    clusters = tmp_path / "paths"
    clusters.write_text("".join(f"{i % 16:04b}\t{form}\t1\n" for i, form in enumerate(forms)))
    model = tmp_path / "model.npz"
    assert main(["-q", "train", "--train", str(train), "--model", str(model),
                 "--epochs", "1", "--jackknife", "2", "--tagger-epochs", "1",
                 "--word-clusters", str(clusters)]) == 0
    parser = Parser.load(model)
    assert parser.tagger.cluster_table_.keys.shape[0] == len(forms)
    assert parser.config.word_clusters == str(clusters) and parser.config.features.clusters
    assert parser.model.extractor.clusters is parser.tagger.cluster_table_
    assert not any(name.startswith("clusters_") for name in np.load(model).files)
    encoded = parser.model.extractor.encode(read_treebank(train)[0])
    assert encoded.ids.shape[0] == 10 and (encoded.ids[7:, 1:] > 3).all()  # every word has one
    assert main(["-q", "train", "--train", str(train), "--model", str(model),
                 "--epochs", "1", "--no-tagger", "--word-clusters", str(clusters)]) == 0
    parser = Parser.load(model)                  # no tagger: the parser's own copy
    assert parser.tagger is None and len(parser.model.extractor.clusters) == len(forms)
    assert main(["-q", "train", "--train", str(train), "--model", str(model),
                 "--epochs", "1", "--no-tagger", "--word-clusters", str(clusters),
                 "--no-cluster-features"]) == 0
    assert Parser.load(model).model.extractor.clusters is None


@pytest.mark.parametrize("args, message", [
    (["--word-clusters", "{bad}"], "paths:2: bit string '01x' is not made of 0 and 1"),
    (["--cluster-features"], "--cluster-features: give the clusters with --word-clusters"),
])
def test_bad_word_clusters_are_one_clear_line_and_no_model(tmp_path, args, message):
    bad = tmp_path / "paths"
    bad.write_text("0\tthe\n01x\ta\n")
    model = tmp_path / "model.npz"
    result = run_main("train", "--train", SAMPLE / "train.conllu", "--model", model,
                     *[a.format(bad=bad) for a in args])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert message in result.stderr and not model.exists()
