"""The generated reference pages (``parser/reference.py``): the committed
``docs/decoders.md`` and ``docs/trainers.md`` are what the registries render, and every
registered component and option is on its page."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from polyparse.decoders import DECODERS
from polyparse.learning.trainers import TRAINERS
from polyparse.parser import reference

DOCS = REPO / "docs"


@pytest.mark.parametrize("page", sorted(reference.PAGES))
def test_the_committed_page_is_what_the_registry_renders(page):
    committed = (DOCS / page).read_text(encoding="utf-8")
    assert committed == reference.pages()[page], (
        f"docs/{page} is out of date: run python -m polyparse.parser.reference docs/")


@pytest.mark.parametrize("page, registry", [("decoders.md", DECODERS),
                                            ("trainers.md", TRAINERS)])
def test_every_component_and_option_is_on_its_page(page, registry):
    text = (DOCS / page).read_text(encoding="utf-8")
    sections = {chunk.split("\n", 1)[0]: chunk for chunk in text.split("\n## ")[1:]}
    assert set(sections) == set(registry) and len(registry) >= 6
    for name, cls in registry.items():
        for option in cls.settable().values():
            assert f"| `{reference.flag(option)}` |" in sections[name], (name, option.flag)


def test_a_switch_on_by_default_shows_its_off_flag():
    lp = (DOCS / "decoders.md").read_text().split("\n## lp\n")[1].split("\n## ")[0]
    assert "| `--no-search` | switch | `on` |" in lp
    assert "`--method` | str | `auto` |" in lp
    assert "Set by the application, not by a flag of this table: `single_root`." in lp


@pytest.mark.parametrize("text, sentence", [
    ("One. Two.", "One."),
    ("Cut at `a . b` but not in code. Then.", "Cut at `a . b` but not in code."),
    ("As (e.g. here. Or there) says. More.", "As (e.g. here. Or there) says."),
    ("Martins et al. 2009 wrote it. More.", "Martins et al. 2009 wrote it."),
    ("No full stop at all", "No full stop at all"),
])
def test_first_sentence(text, sentence):
    assert reference.first_sentence(text) == sentence


def test_markdown_turns_roles_and_literals_into_code():
    assert reference.markdown(":func:`~decoders.mst.chu_liu_edmonds` and ``x | y``") == \
        "`chu_liu_edmonds` and `x \\| y`"
    assert reference.markdown(":mod:`decoders.formulation`") == "`decoders.formulation`"


def test_the_command_writes_both_pages_into_a_folder(tmp_path):
    run = subprocess.run([sys.executable, "-m", "polyparse.parser.reference", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(reference.PAGES)
    for page, text in reference.pages().items():
        assert (tmp_path / page).read_text(encoding="utf-8") == text


def test_the_command_refuses_a_missing_folder(tmp_path, capsys):
    assert reference.main([str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "nowhere" in err and "not a folder" in err
    assert not (tmp_path / "nowhere").exists()
    assert reference.main([]) == 2
