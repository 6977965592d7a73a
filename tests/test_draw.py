"""``polyparse draw`` end to end: SVG files and HTML pages read back (valid XML, one arc
per word, the file's or the parser's tree), the views of a model (LP, k-best,
confidence), gold marks, and bad input refused before anything is written."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from polyparse.learning.confidence import Temperatures
from polyparse.parser.cli import main
from polyparse.parser.config import FeatureConfig, PartsConfig, PrunerConfig
from polyparse.parser.pipeline import Parser, TrainConfig
from polyparse.parser.views import Views, parsed_figure

from conftest import SAMPLE
from test_drawing import SVG, arcs_of

# one xdist worker runs the file, so that the module's fixture (one order-2 parser) is
# built once, not once per worker
pytestmark = pytest.mark.xdist_group("draw")

DEV = SAMPLE / "dev.conllu"


def panels(html: str) -> list[ET.Element]:
    """The panel SVGs of an HTML page, parsed as XML."""
    return [ET.fromstring(svg) for svg in re.findall(r"<svg .*?</svg>", html, re.DOTALL)]


def tree_of(panel: ET.Element) -> list[tuple[int, int, str]]:
    return [(int(g.get("data-head")), int(g.get("data-dep")), g.get("data-label"))
            for g in panel.iter(f"{SVG}g") if "arc" in g.get("class").split()]


def gold_tree(sentence) -> list[tuple[int, int, str]]:
    return [(int(sentence.heads[m]), m, sentence.deprels[m])
            for m in range(1, len(sentence) + 1)]


def test_svg_files_draw_every_tree_of_a_file(tmp_path, sample_dev):
    out = tmp_path / "trees"
    assert main(["-q", "draw", "--input", str(DEV), "--svg-dir", str(out)]) == 0
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [f"{i:04d}.svg" for i in range(1, len(sample_dev) + 1)]
    for path, sentence in zip(files, sample_dev):
        svg = ET.parse(path).getroot()
        assert svg.tag == f"{SVG}svg"
        assert [(int(g.get("data-head")), int(g.get("data-dep")), g.get("data-label"))
                for g in arcs_of(svg)] == gold_tree(sentence)


def test_a_new_drawing_replaces_the_old_folder_whole_and_a_failed_one_keeps_it(tmp_path):
    out = tmp_path / "trees"
    out.mkdir()
    (out / "0999.svg").write_text("old")
    assert main(["-q", "draw", "--input", str(DEV), "--svg-dir", str(out)]) == 0
    assert not (out / "0999.svg").exists() and (out / "0001.svg").exists()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = tmp_path / "bad.conllu"
    lines = DEV.read_text().split("\n")
    bad.write_text("\n".join(lines[:40] + ["1\tbroken"] + lines[40:]))
    assert main(["-q", "draw", "--input", str(bad), "--svg-dir", str(out)]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.conllu", "trees"]


def test_a_folder_holding_other_files_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["-q", "draw", "--input", str(DEV), "--svg-dir", str(out)]) == 2
    assert "notes.txt" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_the_html_page_has_a_section_per_sentence_and_gold_marks_the_parsers_errors(
        tmp_path, sample_model_path, sample_dev):
    page = tmp_path / "dev.html"
    assert main(["-q", "draw", "--model", str(sample_model_path), "--input", str(DEV),
                 "--gold", str(DEV), "--html", str(page)]) == 0
    html = page.read_text()
    assert html.count('<section class="sentence">') == len(sample_dev)
    parsed = list(Parser.load(sample_model_path).parse(sample_dev))
    drawn = panels(html)
    assert len(drawn) == len(sample_dev)
    wrong_heads = wrong_labels = 0
    for panel, sentence, gold in zip(drawn, parsed, sample_dev):
        assert tree_of(panel) == gold_tree(sentence)
        for g in arcs_of(panel):
            m = int(g.get("data-dep"))
            classes = g.get("class").split()
            assert ("wrong-head" in classes) == (sentence.heads[m] != gold.heads[m])
            wrong_heads += "wrong-head" in classes
            wrong_labels += "wrong-label" in classes
    assert wrong_heads > 0 and wrong_labels > 0       # a small model makes mistakes


def test_gold_with_other_words_is_a_located_error(tmp_path, capsys):
    gold = tmp_path / "gold.conllu"
    text = DEV.read_text()
    first = text.split("\n\n")[0]
    word = first.split("\n")[-1].split("\t")[1]
    gold.write_text(text.replace(first, first.replace(f"\t{word}\t", "\tSomethingElse\t", 1)))
    assert main(["-q", "draw", "--input", str(DEV), "--gold", str(gold), "--html",
                 str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert f"{gold}:1: the gold sentence does not have the words of" in err
    assert not (tmp_path / "out.html").exists()


@pytest.mark.parametrize("args, message", [
    (["--lp"], "--lp: needs a model"),
    (["--kbest", "2"], "--kbest: needs a model"),
    (["--confidence"], "--confidence: needs a model"),
    (["--format", "text"], "raw text: needs a model"),
    (["--confidence-temperature", "2"], "--confidence-temperature is for --confidence"),
    (["--kbest", "0"], "--kbest must be at least 1"),
])
def test_options_that_need_a_model_are_refused_without_one(tmp_path, capsys, args, message):
    assert main(["-q", "draw", "--input", str(DEV), "--html", str(tmp_path / "o.html"),
                 *args]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_input_without_trees_needs_a_model(tmp_path, capsys):
    blank = tmp_path / "blank.conllu"
    blank.write_text("# sent_id = x\n1\tDogs\t_\tNOUN\t_\t_\t_\t_\t_\t_\n"
                     "2\tbark\t_\tVERB\t_\t_\t_\t_\t_\t_\n\n")
    assert main(["-q", "draw", "--input", str(blank), "--html", str(tmp_path / "o.html")]) == 2
    assert f"{blank}:1: a word of this sentence has no head" in capsys.readouterr().err


def test_a_model_draws_raw_text_its_lp_its_kbest_and_refuses_what_parse_refuses(
        tmp_path, sample_model_path, capsys):
    page = tmp_path / "text.html"
    assert main(["-q", "draw", "--model", str(sample_model_path), "--text",
                 "The cat sat on the mat. It purred.", "--lp", "--kbest", "3",
                 "--html", str(page)]) == 0
    html = page.read_text()
    assert html.count('<section class="sentence">') == 2
    parser = Parser.load(sample_model_path)
    sentences = list(parser.tag_text("The cat sat on the mat. It purred."))
    drawn = panels(html)
    for sentence in sentences:
        kbest = parser.kbest(sentence, 3)
        trees, drawn = drawn[:len(kbest)], drawn[len(kbest):]
        assert [p.get("data-rank") for p in trees] == [str(r) for r in range(1, len(kbest) + 1)]
        assert [tree_of(p) for p in trees] == [gold_tree(t) for t, _ in kbest]
        lp, drawn = drawn[0], drawn[1:]
        assert "lp" in lp.get("class").split()
        rounded = [g for g in arcs_of(lp, "lp") if "rounded" in g.get("class").split()]
        assert len(rounded) == len(sentence)      # a first-order LP is integral: its tree
    assert drawn == []
    assert main(["-q", "draw", "--model", str(sample_model_path), "--text", "Hi.",
                 "--kbest", "2", "--confidence", "--html", str(page)]) == 2
    assert "k-best trees carry no confidence" in capsys.readouterr().err
    # a decoder without k-best trees of its own gives them by Lawler's partition
    assert main(["-q", "draw", "--model", str(sample_model_path), "--text", "The cat sat.",
                 "--kbest", "2", "--decoder", "eisner", "--html", str(page)]) == 0
    assert [p.get("data-rank") for p in panels(page.read_text())] == ["1", "2"]


def test_confidence_colours_follow_the_probabilities_parse_writes(sample_model_path,
                                                                   sample_dev):
    parser = Parser.load(sample_model_path)
    temperatures = Temperatures(200.0, 80.0)
    drawn = parsed_figure(parser, sample_dev[0], Views(confidence=temperatures))
    analysis = parser.analyze(sample_dev[0], temperatures)
    arcs = drawn.figure.rows[0][0].arcs
    assert [a.head_prob for a in arcs] == pytest.approx(analysis.head_probs[1:].tolist())
    assert [a.label_prob for a in arcs] == pytest.approx(analysis.label_probs[1:].tolist())
    written = drawn.parsed[0].to_text()
    assert "# decoding = mst" in written and "HeadProb=" in written


@pytest.fixture(scope="module")
def order2_parser(sample_train):
    """An order-2 model decoded by the LP, trained on 60 sentences for one epoch: weak
    enough that some LP optima are fractional. Without UD rules, which the relaxation
    drawn does not carry (docs/constraints.md)."""
    config = TrainConfig(epochs=1, decoder="lp", features=FeatureConfig(bits=16, label_bits=10),
                         parts=PartsConfig(order="2"), pruner=PrunerConfig(max_heads=4, epochs=1),
                         ud_rules=False)
    return Parser.train(sample_train[:60], config)


def test_relax_gives_the_lp_arcs_the_decoder_rounds_and_certifies(order2_parser,
                                                                   sample_dev):
    fractional = 0
    for sentence in sample_dev[:40]:
        relaxation = order2_parser.relax(sentence)
        z = relaxation.arc_values
        n = len(sentence)
        assert z.shape == (n + 1, n + 1)
        assert np.allclose(z[:, 1:].sum(axis=0), 1.0, atol=1e-6)    # one head per word
        assert np.allclose(z[:, 0], 0.0) and np.allclose(np.diag(z), 0.0)
        certificate = relaxation.analysis.certificate
        is_fractional = bool(((z > 1e-6) & (z < 1 - 1e-6)).any())
        fractional += is_fractional
        assert certificate.kind == ("rounded" if is_fractional else "lp-integral")
        heads = relaxation.analysis.sentence.heads
        if not is_fractional:
            assert np.all(z[heads[1:], np.arange(1, n + 1)] > 1 - 1e-6)
        else:
            assert certificate.upper_bound >= certificate.score - 1e-6
        assert relaxation.analysis.sentence.heads.tolist() == \
            order2_parser.analyze(sentence).sentence.heads.tolist()   # the lp decoder's tree
    assert fractional > 0


def test_a_stopped_drawing_leaves_the_old_folder_and_no_temporary_one(tmp_path):
    out = tmp_path / "trees"
    out.mkdir()
    (out / "0001.svg").write_text("old")
    many = tmp_path / "many.conllu"
    many.write_text(DEV.read_text() * 40)
    process = subprocess.Popen([sys.executable, "-m", "polyparse.parser.cli", "draw",
                                "--input", str(many), "--svg-dir", str(out)],
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(len(list(p.iterdir())) > 10 for p in tmp_path.glob(".trees.*.tmp")):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in process.stderr.read()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.conllu", "trees"]
    assert [(p.name, p.read_text()) for p in out.iterdir()] == [("0001.svg", "old")]
