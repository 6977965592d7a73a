"""Raw text to trees: the tokenizer and tagger stored with the parser, ``parse --text``,
``--jobs``, ``--retag``, the Python API of the README and of docs/usage.md, and CoNLL 2018
evaluation of a parse whose tokenization differs from the gold one."""

import contextlib
import io
import json
import re
import subprocess
import sys
import unicodedata

import numpy as np
import pytest

from polyparse.corpora.alignment import Segmentation
from polyparse.corpora.conllu_io import read_conllu, read_treebank
from polyparse.corpora.sentence import ROOT
from polyparse.corpora.plain_text import raw_text
from polyparse.parser.cli import main
from polyparse.parser.evaluate import attachment_scores, conll18_scores
from polyparse.parser.pipeline import CHUNK, MissingComponentError, Parser

from conftest import REPO, SAMPLE

TEXT = ('The baker expects she went into the dangerous church. Listen to a soldier!\n\n'
        '"There was a hungry goat in Lima," he said; she cannot answer.')


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "polyparse.parser.cli", *map(str, args)],
                          input=stdin, capture_output=True, text=True, cwd=REPO)


def cli_output(*args) -> str:
    """Standard output of ``polyparse ARGS`` run in this process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["-q", *map(str, args)]) == 0
    return out.getvalue()


def solid(text: str) -> str:
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c) != "Zs")


@pytest.fixture(scope="module")
def trained(sample_model_path):
    """The session's model (``conftest``): tokenizer + tagger + parser trained by the CLI
    on part of the sample, with dev; and its path."""
    return Parser.load(sample_model_path), sample_model_path


@pytest.fixture(scope="module")
def model(sample_model_path):
    return sample_model_path


@pytest.fixture(scope="module")
def bare_model(tmp_path_factory, sample_train):
    """A model trained by the CLI with --no-tagger (it still has a tokenizer)."""
    folder = tmp_path_factory.mktemp("bare")
    train = folder / "train.conllu"
    train.write_text("".join(s.to_text() for s in sample_train[:50]))
    path = folder / "bare.npz"
    assert main(["-q", "train", "--train", str(train), "--model", str(path),
                 "--epochs", "1", "--no-tagger"]) == 0
    return path


def old_model(path, out, components=("tokenizer", "tagger", "lemmatizer")):
    """``path`` as a polyparse before ``components`` were stored wrote it."""
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files
                  if not k.startswith(tuple(c + "_" for c in components)) and k != "metadata"}
        meta = json.loads(str(npz["metadata"]))
    for key in components:
        del meta[key]
        del meta["training"][key]
    if "tagger" in components:
        for key in ("jackknife", "lemmas"):
            del meta["training"][key]
    np.savez(out, metadata=np.array(json.dumps(meta)), **arrays)
    return out


# -- training ------------------------------------------------------------------------

def test_the_model_file_holds_tokenizer_and_tagger_without_pickles(model):
    with np.load(model, allow_pickle=False) as npz:
        meta = json.loads(str(npz["metadata"]))
        assert all(npz[k].dtype != object for k in npz.files)
        names = set(npz.files)
    assert meta["tokenizer"]["format"] == "polyparse-tokenizer"
    assert meta["tagger"]["format"] == "polyparse-tagger"
    assert meta["lemmatizer"]["format"] == "polyparse-lemmatizer"
    assert any(n.startswith("tokenizer_") for n in names)
    assert any(n.startswith("tagger_") for n in names)
    assert any(n.startswith("lemmatizer_") for n in names)
    assert meta["training"]["jackknife"] == 3


def test_dev_scores_during_training_use_predicted_tags(trained, sample_dev):
    parser, _ = trained
    predicted = attachment_scores(sample_dev, parser.parse(parser.tag(sample_dev))).all_words
    assert parser.report.epochs[-1].dev == {"uas": predicted["uas"], "las": predicted["las"]}
    gold_tags = attachment_scores(sample_dev, parser.parse(sample_dev)).all_words
    assert gold_tags["las"] != predicted["las"]


def test_train_jobs_reaches_the_trainer(tmp_path):
    small = tmp_path / "small.conllu"
    small.write_text("".join(s.to_text() for s in read_treebank(SAMPLE / "train.conllu")[:40]))
    path = tmp_path / "jobs.npz"
    assert main(["-q", "train", "--train", str(small), "--model", str(path), "--epochs", "1",
                 "--bits", "16", "--label-bits", "10", "--jackknife", "2",
                 "--tagger-epochs", "1", "--jobs", "2"]) == 0
    with np.load(path, allow_pickle=False) as npz:
        assert json.loads(str(npz["metadata"]))["training"]["trainer_options"]["jobs"] == 2


# -- parse --text ----------------------------------------------------------------------

def test_text_gives_valid_conllu_spelling_the_input(model):
    output = cli_output("parse", "--model", model, "--text", TEXT)
    sentences = list(read_conllu(io.StringIO(output), require_tree=True))
    assert len(sentences) >= 3
    assert [s.sent_id for s in sentences] == [str(k) for k in range(1, len(sentences) + 1)]
    assert solid("".join(s.text for s in sentences)) == solid(TEXT)
    assert Segmentation.from_sentences(sentences).characters == solid(TEXT)
    assert all(u != "_" for s in sentences for u in s.upos[1:])
    assert all(lemma != "_" for s in sentences for lemma in s.lemmas[1:])
    assert any(re.match(r"^\d+-\d+\tcannot\t", line) for s in sentences for line in s.lines)
    assert "SpaceAfter=No" in output
    assert output.startswith("# newpar\n# sent_id = 1\n# text = The baker expects")


def test_plain_text_from_stdin_and_from_a_file_is_the_same(model, tmp_path):
    expected = cli_output("parse", "--model", model, "--text", TEXT)
    result = run_cli("parse", "--model", model, "--format", "text", stdin=TEXT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
    text_file = tmp_path / "in.txt"
    text_file.write_text(TEXT)
    out = tmp_path / "out.conllu"
    assert main(["-q", "parse", "--model", str(model), "--input", str(text_file),
                 "--output", str(out)]) == 0
    assert out.read_text() == expected


def test_jobs_2_gives_the_bytes_of_jobs_1(model, tmp_path, sample_train, sample_dev):
    text = tmp_path / "many.txt"
    text.write_text(raw_text(sample_train[:80] + sample_dev[:60]), encoding="utf-8")
    for args in (["--input", text, "--format", "text"],
                 ["--input", SAMPLE / "dev.conllu", "--retag"],
                 ["--input", SAMPLE / "dev.conllu"]):
        outputs = [cli_output("parse", "--model", model, "--jobs", jobs, *args)
                   for jobs in (1, 2)]
        # at least two chunks, so that both processes parse and their order matters
        assert outputs[0] == outputs[1] and outputs[0].count("# sent_id") > CHUNK


def test_retag_changes_only_tags_heads_and_labels(model, tmp_path):
    gold = (SAMPLE / "dev.conllu").read_text()
    untagged = "\n".join("\t".join(c[:2] + ["_"] * 4 + c[6:]) if len(c) == 10 else line
                         for line in gold.split("\n") for c in [line.split("\t")])
    source = tmp_path / "untagged.conllu"
    source.write_text(untagged)
    output = cli_output("parse", "--model", model, "--input", source, "--retag")
    pred_lines, gold_lines = output.split("\n"), untagged.split("\n")
    assert len(pred_lines) == len(gold_lines)
    changed = set()
    for g, p in zip(gold_lines, pred_lines):
        g_cols, p_cols = g.split("\t"), p.split("\t")
        if len(g_cols) == 10 and g_cols[0].isdigit():
            changed |= {k for k in range(10) if g_cols[k] != p_cols[k]}
        else:
            assert g == p
    assert changed == {2, 3, 4, 5, 6, 7}
    # without --retag, words without tags are not parsed into trees of '_' tags
    refused = run_cli("parse", "--model", model, "--input", source,
                      "--output", tmp_path / "out.conllu")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "untagged.conllu:1: the sentence has no UPOS" in refused.stderr
    assert "--retag" in refused.stderr and not (tmp_path / "out.conllu").exists()


def test_a_model_without_a_lemmatizer_keeps_lemma_as_given(model, tmp_path):
    old = old_model(model, tmp_path / "old.npz", components=("lemmatizer",))
    parser = Parser.load(old)
    assert parser.tagger is not None and parser.lemmatizer is None
    retagged = cli_output("parse", "--model", old, "--input", SAMPLE / "dev.conllu", "--retag")
    gold = [line.split("\t") for line in (SAMPLE / "dev.conllu").read_text().split("\n")]
    out = [line.split("\t") for line in retagged.split("\n")]
    assert [c[2] for c in out if len(c) == 10] == [c[2] for c in gold if len(c) == 10]
    assert all(s.lemmas[1:] == ("_",) * len(s) for s in parser.parse_text(TEXT))
    assert Parser.load(model).lemmatizer is not None


# -- models without a tokenizer or a tagger -------------------------------------------

def test_text_needs_a_tokenizer_and_a_tagger(bare_model, model, tmp_path, capsys):
    old = old_model(model, tmp_path / "old.npz")
    for path, missing in ((bare_model, "no tagger"), (old, "no tokenizer")):
        assert main(["-q", "parse", "--model", str(path), "--text", "A cat sat."]) == 2
        stderr = capsys.readouterr().err
        assert stderr.startswith("polyparse: error: ")
        assert len(stderr.strip().split("\n")) == 1
        assert str(path) in stderr and missing in stderr
    assert main(["-q", "parse", "--model", str(old), "--input",
                 str(SAMPLE / "sentence.conllu"), "--retag"]) == 2
    assert "no tagger" in capsys.readouterr().err
    parsed = cli_output("parse", "--model", old, "--input", SAMPLE / "sentence.conllu")
    assert parsed == cli_output("parse", "--model", model, "--input",
                                SAMPLE / "sentence.conllu")
    with pytest.raises(MissingComponentError, match="no tokenizer"):
        Parser.load(old).parse_text("A cat sat.")


# -- the Python API ---------------------------------------------------------------------

def readme_example(page: str = "README.md") -> str:
    readme = (REPO / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    examples = [b for b in blocks if "polyparse.load(" in b]
    assert len(examples) == 1, f"{page} has one Python example of polyparse.load"
    return examples[0]


@pytest.mark.parametrize("page", ["README.md", "docs/usage.md", "docs/api.md"])
def test_the_readme_example_runs(page, model, tmp_path, monkeypatch):
    (tmp_path / "sample.npz").write_bytes(model.read_bytes())
    (tmp_path / "corpora").symlink_to(REPO / "corpora")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example(page), page, "exec"), {})
    printed = out.getvalue()
    assert "# text = " in printed and "\troot\t" in printed


def test_parse_tokens_and_parse_text(trained):
    parser, _ = trained
    [sentence] = parser.parse_tokens([["The", "cat", "sat", "."]])
    assert sentence.forms[1:] == ("The", "cat", "sat", ".")
    assert sentence.upos[1] == "DET" and sentence.upos[-1] == "PUNCT"
    assert "_" not in sentence.upos + sentence.xpos
    assert sentence.has_tree() and list(sentence.heads[1:]).count(0) == 1
    with pytest.raises(TypeError, match="not a string"):
        parser.parse_tokens(["The", "cat"])
    parsed = parser.parse_text(TEXT)
    again = Parser.load(parser.path or trained[1]).parse_text(TEXT)
    assert [s.to_text() for s in parsed] == [s.to_text() for s in again]
    assert all(s.has_tree() and "_" not in s.lemmas for s in parsed)
    assert parsed[0].lemmas[:4] == (ROOT, "the", "baker", "expect")


# -- evaluation ---------------------------------------------------------------------------

GOLD = """\
# text = We don't know.
1\tWe\twe\tPRON\tPRP\t_\t4\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tknow\tknow\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# text = Dr. Smith left.
1\tDr.\tDr.\tPROPN\tNNP\t_\t2\tcompound\t_\t_
2\tSmith\tSmith\tPROPN\tNNP\t_\t3\tnsubj\t_\t_
3\tleft\tleave\tVERB\tVBD\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""

# "don't" not split, "know." one token, "Dr." split and ending a sentence; "left" has
# the wrong UPOS, "." the wrong label, "Smith" a subtype of the right one.
PRED = """\
# text = We don't know.
1\tWe\t_\tPRON\tPRP\t_\t3\tnsubj\t_\t_
2\tdon't\t_\tAUX\tVBP\t_\t3\taux\t_\t_
3\tknow.\t_\tVERB\tVB\t_\t0\troot\t_\t_

# text = Dr.
1\tDr\t_\tPROPN\tNNP\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t_\tPUNCT\t.\t_\t1\tpunct\t_\t_

# text = Smith left.
1\tSmith\t_\tPROPN\tNNP\t_\t2\tnsubj:outer\t_\t_
2\tleft\t_\tNOUN\tVBD\t_\t0\troot\t_\tSpaceAfter=No
3\t.\t_\tPUNCT\t.\t_\t2\tdep\t_\t_

"""


def test_eval_aligns_a_different_tokenization(tmp_path):
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(GOLD)
    pred.write_text(PRED)
    scores = json.loads(cli_output("eval", "--gold", gold, "--pred", pred, "--json"))
    assert scores["identical_tokenization"] is False and "all_words" not in scores
    f1 = {name: s["f1"] for name, s in scores["conll18"].items()}
    # 8 gold and 8 system tokens, 5 the same; sentences: 1 of 2 gold, 3 system; words:
    # 9 gold, 8 system, aligned: We, Smith, left, "." (none inside "don't").
    expected = {"tokens": 5 / 8, "sentences": 2 / 5, "words": 8 / 17, "upos": 6 / 17,
                "xpos": 8 / 17, "uas": 6 / 17, "las": 4 / 17}
    assert {k: f1[k] for k in expected} == pytest.approx({k: 100 * v for k, v in expected.items()})
    assert scores["conll18"]["uas"]["aligned"] == 4
    table = cli_output("eval", "--gold", gold, "--pred", pred)
    assert re.search(r"^LAS\s+25\.00\s+22\.22\s+23\.53\s+50\.00$", table, flags=re.M)


def test_eval_of_identical_tokenization_gives_attachment_scores(trained, sample_dev):
    parser, _ = trained
    pred = list(parser.parse(parser.tag(sample_dev)))
    aligned = conll18_scores(sample_dev, pred)
    scores = attachment_scores(sample_dev, pred).all_words
    assert aligned.uas.f1 * 100 == pytest.approx(scores["uas"])
    assert aligned.las.f1 * 100 == pytest.approx(scores["las"])
    assert aligned.words.f1 == aligned.tokens.f1 == aligned.sentences.f1 == 1.0
    gold = list(read_conllu(io.StringIO(GOLD)))
    gold = conll18_scores(gold, gold)
    assert all(getattr(gold, m).f1 == 1.0 for m in ("words", "upos", "uas", "las"))


def test_eval_of_different_text_is_one_clear_line(tmp_path):
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(GOLD)
    pred.write_text(PRED.replace("Smith", "Smyth"))
    result = run_cli("eval", "--gold", gold, "--pred", pred)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"polyparse: error: {pred}:10: the text differs from the "
                                    f"gold file ({gold}:9)")
    assert "'ythleft.' instead of 'ithleft.'" in result.stderr
