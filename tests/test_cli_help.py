"""The help of the command line: made from the registries and the declarations, a line
or two an option with its default, and the long story in docs/options.md."""

import argparse
import re

import pytest

from polyparse.decoders import DECODERS
from polyparse.learning.trainers import TRAINERS
from polyparse.parser.cli import build_parser
from polyparse.parser.cli.flags import brief

from conftest import REPO


def commands() -> dict[str, argparse.ArgumentParser]:
    ap = build_parser()
    return next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction)).choices


def option(command: str, flag: str) -> argparse.Action:
    return next(a for a in commands()[command]._actions if flag in a.option_strings)


def help_lines(parser: argparse.ArgumentParser, action: argparse.Action) -> list[str]:
    """The lines of ``action``'s help as ``parser --help`` prints it (without the line
    of the flag alone when the help starts below it)."""
    formatter = parser._get_formatter()
    formatter.add_argument(action)
    lines = formatter.format_help().rstrip().splitlines()
    alone = lines[0].strip() == formatter._format_action_invocation(action)
    return lines[1:] if alone else lines


@pytest.mark.parametrize("command", ["train", "parse", "draw", "serve"])
def test_decoder_help_names_every_registered_decoder(command):
    """The choices of --decoder come from the registry (ad3-exact was once missing)."""
    text = option(command, "--decoder").help
    assert all(re.search(rf"(^|[\s,:]){re.escape(name)}([\s,]|$)", text)
               for name in DECODERS)


def test_trainer_help_names_every_trainer_and_the_default():
    text = option("train", "--trainer").help % {"default": "ssg"}
    assert all(name in text for name in TRAINERS) and "(default ssg)" in text


def test_train_decoder_help_gives_each_order_its_default():
    text = " ".join(option("train", "--decoder").help.split())
    assert "mst for --order 1" in text and "ad3-exact for --order 2 and full" in text
    assert "ilp with --consecutive-siblings" in text


def test_one_flag_two_meanings_gives_each_its_default_and_trainer():
    """--eta is extragradient's step size (none) and ssg's relaxed-inference probability
    (1.0): each description with its own default and trainer, not one merged text."""
    text = option("train", "--eta").help
    step, probability = text.split("; Probability")
    assert step.startswith("The step size eta") and step.endswith("(default none) "
                                                                  "[extragradient]")
    assert probability.endswith("(default 1.0) [ssg]") and "sqrt" in probability


def test_brief_keeps_the_gist_of_a_description():
    """The first sentence, its asides dropped and cut to its first clause when long,
    and for an option that may be none what none does."""
    max_iter = DECODERS["ad3"].settable()["max_iter"].help
    assert "tokens/s" in max_iter and brief(max_iter) == "Most AD3 iterations per sentence"
    assert brief("Epochs between two computations of the duality gap (one pass of oracles "
                 "at fixed ``w``, not counted in the epoch's seconds); 0: never.") \
        == "Epochs between two computations of the duality gap; 0: never"
    t0 = TRAINERS["ssg"].settable()["t0"].help
    assert brief(t0, none=True) == ("Steps are alpha_t = 1 / (lambda (t + t0)); None takes "
                                    "the number of steps of one epoch, as if one epoch had "
                                    "been spent at w = 0")
    assert "None" not in brief(t0)
    choices = DECODERS["ad3-exact"].settable()["node_order"].help
    assert brief(choices).startswith('"best": the open node of highest bound first; '
                                     '"depth": depth first')


def test_help_holds_no_measurements():
    """Speeds, scores and result files belong in docs/options.md."""
    lab_notes = re.compile(r"tokens/s|eval/results|\d[.,]?\d*x faster|\d (dev )?UAS|UAS \d"
                           r"|\d+%")
    for name, command in commands().items():
        for action in command._actions:
            assert not lab_notes.search(action.help or ""), (name, action.option_strings)


def test_each_description_takes_at_most_four_lines(monkeypatch):
    """At 80 columns; a flag that components describe differently has a description for
    each (each followed by its components in brackets)."""
    monkeypatch.setenv("COLUMNS", "80")
    for name, command in commands().items():
        for action in command._actions:
            if not action.option_strings or action.help in (None, argparse.SUPPRESS):
                continue
            descriptions = 1 + (action.help or "").count("]; ")
            lines = help_lines(command, action)
            assert len(lines) <= 4 * descriptions, (name, action.option_strings, lines)


def test_docs_tell_every_option_of_every_command():
    docs = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    for name, command in commands().items():
        assert f"## {name}" in docs or f", {name}" in docs
        for action in command._actions:
            flags = [f for f in action.option_strings if f.startswith("--") and f != "--help"]
            if flags:
                assert any(f"`{flag}" in docs for flag in flags), (name, flags)
