"""What a user meets at the terminal: no command writes over one of its inputs, every
option is checked before any work, progress and a summary line, -q after the command,
and ``eval --model`` scoring a model on the gold file's own text, tokens or tags."""

import json
import os

import pytest

from polyparse.corpora.conllu_io import read_conllu
from polyparse.parser import pipeline, progress
from polyparse.parser.cli import build_parser, common, main, train
from polyparse.parser.honest_eval import tokens_only

from conftest import SAMPLE

TINY = ["--epochs", "1", "--bits", "16", "--label-bits", "12", "--no-tagger"]


def run(argv, capsys):
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().err


@pytest.fixture
def no_model_loading(monkeypatch):
    """Loading a model (the heavy part of parse, draw, serve, gap and eval) fails the
    test: a refusal must come before it."""
    def load(*args, **kwargs):
        raise AssertionError("the model was loaded before the refusal")
    monkeypatch.setattr(pipeline.Parser, "load", load)


# -- no command writes over one of its inputs -------------------------------------------

def _links(tmp_path, kind):
    """A copy of the sample's dev file, and the path a command is told to write: the
    file itself, a symbolic link to it or a hard link of it."""
    source = tmp_path / "dev.conllu"
    source.write_bytes((SAMPLE / "dev.conllu").read_bytes())
    if kind == "same":
        return source, source
    target = tmp_path / "other.conllu"
    if kind == "symlink":
        target.symlink_to(source)
    else:
        os.link(source, target)
    return source, target


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
def test_train_refuses_a_model_that_is_its_treebank(kind, tmp_path, capsys):
    source, target = _links(tmp_path, kind)
    before = source.read_bytes()
    status, err = run(["train", "--train", source, "--model", target, *TINY], capsys)
    assert status == 2
    assert err == (f"polyparse: error: --model {target} is the same file as --train {source}: "
                   "polyparse never writes over one of its inputs; give --model another "
                   "path\n")
    assert source.read_bytes() == before


@pytest.mark.parametrize("command", ["parse-input", "parse-model", "gap", "draw-gold",
                                     "train-dev", "outputs"])
def test_every_command_refuses_an_output_that_is_an_input(command, sample_model_path,
                                                          tmp_path, capsys,
                                                          no_model_loading):
    source, target = _links(tmp_path, "hardlink")
    model = tmp_path / "model.npz"
    model.write_bytes(sample_model_path.read_bytes())
    argv, options = {
        "parse-input": (["parse", "--model", model, "--input", source, "--output", target],
                        ("--output", "--input")),
        "parse-model": (["parse", "--model", model, "--input", source, "--output", model],
                        ("--output", "--model")),
        "gap": (["gap", "--model", model, "--input", source, "--jsonl", target],
                ("--jsonl", "--input")),
        "draw-gold": (["draw", "--input", source, "--gold", source, "--html", target],
                      ("--html", "--input")),
        "train-dev": (["train", "--train", SAMPLE / "train.conllu", "--dev", source,
                       "--model", target, *TINY], ("--model", "--dev")),
        "outputs": (["train", "--train", SAMPLE / "train.conllu", "--model", tmp_path / "m",
                     "--checkpoint", tmp_path / "m", *TINY], ("--model", "--checkpoint")),
    }[command]
    before = source.read_bytes(), model.read_bytes()
    status, err = run(argv, capsys)
    assert status == 2 and err.startswith("polyparse: error: ") and err.count("\n") == 1
    assert all(f"{option} " in err for option in options), err
    assert (source.read_bytes(), model.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["dev.conllu", "other.conllu", "model.npz"])


def test_draw_refuses_an_svg_folder_that_holds_its_input(tmp_path, capsys):
    folder = tmp_path / "svg"
    folder.mkdir()
    source = folder / "0001.svg"                 # a name the folder may hold
    source.write_bytes((SAMPLE / "dev.conllu").read_bytes())
    status, err = run(["draw", "--input", source, "--format", "conllu", "--svg-dir", folder],
                      capsys)
    assert status == 2 and f"--svg-dir {folder} holds --input {source}" in err
    assert source.exists()


# -- every option is checked before any work ---------------------------------------------

@pytest.mark.parametrize("options, message", [
    (["--epochs", "0"], "--epochs must be at least 1, not 0"),
    (["--seed", "-1"], "--seed must be at least 0, not -1"),
    (["--bits", "40"], "bits must be in 1..30"),
    (["--max-heads", "0"], "--max-heads must be at least 1, not 0"),
    (["--jackknife", "1"], "--jackknife must be at least 2, not 1"),
    (["--order", "2", "--decoder", "mst"], "decoder 'mst' cannot decode order 2 models"),
    (["--trainer", "dlpw", "--order", "full"], "the dlpw trainer supports orders 1 and 2"),
    (["--epochs", "2", "--average-from", "3"], "average_from must be an epoch of the run"),
    (["--decoder", "ilp", "--solver", "no-such-solver"], "--solver no-such-solver: not a "
                                                         "solver PuLP knows"),
])
def test_train_checks_its_options_before_reading_the_treebank(options, message, tmp_path,
                                                              capsys):
    """The treebank does not exist: the option's message wins, so it came first."""
    status, err = run(["train", "--train", tmp_path / "absent.conllu", "--model",
                       tmp_path / "m.npz", *options], capsys)
    assert status == 2 and message in err and "absent" not in err


def test_train_checks_every_input_before_reading_any(tmp_path, capsys, monkeypatch):
    def read(*args, **kwargs):
        raise AssertionError("a treebank was read before the missing --dev was seen")
    monkeypatch.setattr(train, "read_treebank", read)
    for option in ("--dev", "--word-clusters"):
        status, err = run(["train", "--train", SAMPLE / "train.conllu", option,
                           tmp_path / "absent", "--model", tmp_path / "m.npz"], capsys)
        assert status == 2
        assert err == (f"polyparse: error: {tmp_path / 'absent'}: cannot read {option}: "
                       "No such file or directory\n")


@pytest.mark.parametrize("command, message", [
    (["parse", "--model", "{model}", "--input", "{absent}", "--decoder", "foo"],
     "unknown decoder 'foo'"),
    (["parse", "--model", "{model}", "--input", "{absent}", "--jobs", "0"],
     "--jobs must be at least 1"),
    (["parse", "--model", "{model}", "--text", "Hi.", "--decoder", "lp", "--time-limit",
      "-1"], "time_limit must be positive"),
    (["parse", "--model", "{model}", "--input", "{absent}", "--kbest", "0"],
     "--kbest must be at least 1"),
    (["parse", "--model", "{model}", "--text", "Hi.", "--decoder", "ilp", "--solver", "nope"],
     "--solver nope: not a solver PuLP knows"),
    (["parse", "--model", "{model}", "--input", "{absent}"], "cannot read --input"),
    (["draw", "--model", "{model}", "--input", "{absent}", "--kbest", "0", "--html", "{out}"],
     "--kbest must be at least 1"),
    (["draw", "--model", "{model}", "--text", "Hi.", "--decoder", "foo", "--html", "{out}"],
     "unknown decoder 'foo'"),
    (["serve", "--model", "{absent}", "--port", "70000"], "--port must be from 0 to 65535"),
    (["serve", "--model", "{model}", "--decoder", "eisner", "--flow", "single"],
     "decoder 'eisner' does not take --flow"),
    (["eval", "--gold", "{absent}", "--pred", "{absent}", "--from", "tags"],
     "--from and --jobs are for --model"),
    (["eval", "--gold", "{absent}", "--model", "{model}", "--jobs", "0"],
     "--jobs must be at least 1"),
    (["gap", "--model", "{absent}", "--input", "{absent}", "--time-limit", "-1"],
     "--time-limit must be positive"),
    (["gap", "--model", "{model}", "--input", "{dev}", "--solver", "nope"],
     "--solver nope: not a solver PuLP knows"),
    (["clusters", "xx", "--cache", "{absent}"], "no word clusters for 'xx'"),
])
def test_a_bad_option_is_refused_before_the_model_or_input_is_read(
        command, message, sample_model_path, tmp_path, capsys, no_model_loading):
    names = {"model": sample_model_path, "absent": tmp_path / "absent",
             "out": tmp_path / "out.html", "dev": SAMPLE / "dev.conllu"}
    status, err = run([a.format(**names) for a in command], capsys)
    assert status == 2 and message in err and err.count("\n") == 1, err
    assert os.listdir(tmp_path) == []


def test_a_missing_input_is_refused_before_the_model_is_loaded(sample_model_path, tmp_path,
                                                               capsys, no_model_loading):
    status, err = run(["gap", "--model", sample_model_path, "--input", tmp_path / "absent"],
                      capsys)
    assert status == 2
    assert err == (f"polyparse: error: {tmp_path / 'absent'}: cannot read --input: "
                   "No such file or directory\n")


# -- progress and summary ----------------------------------------------------------------

def test_parse_ends_with_a_summary_line_off_a_terminal(sample_model_path, tmp_path, capsys,
                                                       caplog):
    caplog.set_level("INFO", logger="polyparse")
    status, err = run(["parse", "--model", sample_model_path, "--input", SAMPLE / "dev.conllu",
                       "--output", tmp_path / "out.conllu"], capsys)
    assert status == 0 and err == ""
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("parsed")]
    assert len(lines) == 1
    assert lines[0].startswith("parsed 100 sentences (1,090 words) in ")
    assert " words/s; decoding: 100.0% of 100 sentences certified optimal (mst 100)" in lines[0]


def test_gap_ends_with_a_summary_line(sample_model_path, tmp_path, capsys, caplog):
    caplog.set_level("INFO", logger="polyparse")
    dev = tmp_path / "dev.conllu"
    dev.write_text("".join(s.to_text() for s in list(read_conllu(SAMPLE / "dev.conllu"))[:3]))
    status, _ = run(["gap", "--model", sample_model_path, "--input", dev, "--jsonl",
                     tmp_path / "gap.jsonl"], capsys)
    assert status == 0
    words = sum(len(s) for s in read_conllu(dev))
    assert f"measured 3 sentences ({words} words) in " in caplog.text


@pytest.fixture
def terminal(monkeypatch):
    """Standard error taken for a terminal: progress is a bar."""
    monkeypatch.setattr(progress, "showing_bar", lambda: True)
    monkeypatch.setattr(common, "showing_bar", lambda: True)


def test_on_a_terminal_parse_shows_a_bar_with_its_total(sample_model_path, tmp_path, capsys,
                                                        terminal):
    assert main(["parse", "--model", str(sample_model_path), "--input",
                 str(SAMPLE / "dev.conllu"), "--output", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "/100 [" in err and "sentences/s]" in err             # total, time, rate
    text = "Dogs bark. The cat sat on the mat."
    assert main(["parse", "--model", str(sample_model_path), "--text", text]) == 0
    assert f"/{len(''.join(text.split()))} [" in capsys.readouterr().err   # its characters


def test_on_a_terminal_gap_shows_a_bar_with_its_total(sample_model_path, tmp_path, capsys,
                                                      terminal):
    dev = tmp_path / "dev.conllu"
    dev.write_text("".join(s.to_text() for s in list(read_conllu(SAMPLE / "dev.conllu"))[:2]))
    assert main(["gap", "--model", str(sample_model_path), "--input", str(dev),
                 "--jsonl", str(tmp_path / "gap.jsonl")]) == 0
    assert "/2 [" in capsys.readouterr().err


def test_sentences_are_counted_up_front_from_blank_lines(tmp_path):
    path = tmp_path / "in.conllu"
    path.write_text("# newdoc\n\n# sent_id = 1\n1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n\n\n"
                    "1\tb\t_\t_\t_\t_\t_\t_\t_\t_\n")                 # no blank line at the end
    assert progress.count_sentences(path) == 2 == len(list(read_conllu(path)))
    assert progress.count_sentences(SAMPLE / "dev.conllu") == 100
    assert progress.count_sentences(None) is None


# -- -q after the command ----------------------------------------------------------------

def test_quiet_goes_before_or_after_the_command():
    parse = build_parser().parse_args
    assert parse(["-q", "parse", "--model", "m"]).quiet
    assert parse(["parse", "-q", "--model", "m"]).quiet
    assert parse(["eval", "--gold", "g", "--pred", "p", "--quiet"]).quiet
    assert not parse(["parse", "--model", "m"]).quiet


def test_quiet_after_the_command_silences_the_summary(sample_model_path, tmp_path):
    from test_cli import run_cli

    loud = run_cli("parse", "--model", sample_model_path, "--text", "Dogs bark.")
    quiet = run_cli("parse", "-q", "--model", sample_model_path, "--text", "Dogs bark.")
    assert loud.returncode == quiet.returncode == 0
    assert "parsed 1 sentence (3 words)" in loud.stderr and quiet.stderr == ""
    assert quiet.stdout == loud.stdout


# -- eval --model --------------------------------------------------------------------------

def _eval_json(capsys, *args):
    assert main(["eval", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_model_parses_the_gold_files_text_by_default(sample_model_path, capsys):
    scores = _eval_json(capsys, "--model", sample_model_path, "--gold", SAMPLE / "dev.conllu")
    assert scores["from"] == "text"          # a tokenizer, and '# text' in the gold file
    assert 0 < scores["conll18"]["tokens"]["f1"] <= 100
    assert scores["conll18"]["upos"]["f1"] < 100               # the model's own tags
    assert main(["eval", "--model", str(sample_model_path), "--gold",
                 str(SAMPLE / "dev.conllu")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("from text: the gold file's # text, through the model's tokenizer")


def test_eval_model_from_tags_is_parse_then_eval(sample_model_path, tmp_path, capsys):
    """``--from tags`` scores what ``parse`` then ``eval --pred`` score: the gold tags
    kept; ``--from tokens`` has the model's tags, and scores lower."""
    gold = SAMPLE / "dev.conllu"
    pred = tmp_path / "pred.conllu"
    assert main(["-q", "parse", "--model", str(sample_model_path), "--input", str(gold),
                 "--output", str(pred)]) == 0
    two_steps = _eval_json(capsys, "--gold", gold, "--pred", pred)
    tags = _eval_json(capsys, "--model", sample_model_path, "--gold", gold, "--from", "tags")
    tokens = _eval_json(capsys, "--model", sample_model_path, "--gold", gold, "--from",
                        "tokens")
    assert tags.pop("from") == "tags" and tags == two_steps
    assert tags["conll18"]["upos"]["f1"] == 100.0 > tokens["conll18"]["upos"]["f1"]
    assert tokens["all_words"]["uas"] < tags["all_words"]["uas"]


def test_eval_model_without_a_tagger_parses_the_gold_tags(tmp_path, capsys):
    model = tmp_path / "m.npz"
    assert main(["-q", "train", "--train", str(SAMPLE / "train.conllu"), "--model",
                 str(model), *TINY]) == 0
    scores = _eval_json(capsys, "--model", model, "--gold", SAMPLE / "dev.conllu")
    assert scores["from"] == "tags" and scores["conll18"]["upos"]["f1"] == 100.0
    status, err = run(["eval", "--model", model, "--gold", SAMPLE / "dev.conllu", "--from",
                       "tokens"], capsys)
    assert status == 2 and f"--from tokens: {model} has no tagger; use --from tags" in err


def test_tokens_only_keeps_the_words_and_blanks_the_analysis():
    gold = list(read_conllu(SAMPLE / "dev.conllu"))[:5]
    for given, blank in zip(gold, tokens_only(gold)):
        assert blank.forms == given.forms and blank.text == given.text
        assert set(blank.upos[1:]) == set(blank.lemmas[1:]) == set(blank.deprels[1:]) == {"_"}
        assert all(head == -1 for head in blank.heads[1:])
