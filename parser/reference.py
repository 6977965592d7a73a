"""The reference pages of the decoders and the trainers, rendered from their registries.

Each registered component (:data:`decoders.DECODERS`, :data:`learning.trainers.TRAINERS`)
declares its options as typed keyword parameters described in its docstring
(:class:`decoders.declared.Declared`); the pages say what the command line's help says,
so they cannot drift from the code: a section per component with the first paragraph of
its docstring and a table of the options it takes (flag, type, default, the first
sentence of the description). ``python -m polyparse.parser.reference docs/`` writes
``docs/decoders.md`` and ``docs/trainers.md``; ``tests/test_reference.py`` checks that the
committed pages equal what this renders.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from polyparse.decoders import DECODERS, Declared, Option
from polyparse.decoders.declared import type_name
from polyparse.learning.trainers import TRAINERS

ABBREVIATIONS = ("e.g.", "i.e.", "al.", "cf.", "Eq.", "vs.", "resp.")
"""Words ending in a full stop that do not end a sentence."""

PAGES = {
    "decoders.md": (
        "Decoders", DECODERS,
        "A decoder maximizes the model's score over the trees of a sentence, exactly or "
        "through a relaxation (`docs/algorithms.md` sections 2, 3 and 9). "
        "`polyparse train --decoder NAME` trains with one and stores it in the model; "
        "`polyparse parse --decoder NAME` parses with another one that can decode the "
        "model's parts."),
    "trainers.md": (
        "Trainers", TRAINERS,
        "A trainer fits the model's weights by minimizing the regularized structured hinge "
        "loss (`docs/algorithms.md` sections 4, 5 and 5b). `polyparse train --trainer "
        "NAME` picks one; a flag the chosen trainer does not take is an error before any "
        "work starts."),
}
"""File name -> (title, registry, introduction) of each page."""


def markdown(text: str) -> str:
    """A docstring's reStructuredText as Markdown: ``x`` and :role:`x` become `x`
    (:role:`~a.b` becomes `b`, as Sphinx shows it); ``|`` is escaped for tables."""
    text = re.sub(r":\w+:`~[\w.]*?(\w+)`", r"`\1`", text)
    text = re.sub(r":\w+:`([^`]*)`", r"`\1`", text)
    return text.replace("``", "`").replace("|", "\\|")


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    paragraph = inspect.cleandoc(doc or "").split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def first_sentence(text: str) -> str:
    """``text`` up to the first full stop (or ``!``, ``?``) that is followed by a space
    or the end, lies outside code and parentheses, and does not end an abbreviation such
    as ``e.g.``."""
    for end in re.finditer(r"[.!?](?=\s|$)", text):
        before = text[:end.end()]
        outside = before.count("`") % 2 == 0 and before.count("(") <= before.count(")")
        if outside and not before.rsplit(None, 1)[-1].endswith(ABBREVIATIONS):
            return before
    return text


def flag(option: Option) -> str:
    """The flag as ``polyparse train --help`` shows it: a switch whose default is on is
    turned off by ``--no-x``."""
    return "--no-" + option.flag[2:] if option.is_flag and option.default else option.flag


def kind(option: Option) -> str:
    """The option's type; ``switch`` for a bool option, which takes no value."""
    return "switch" if option.is_flag else markdown(type_name(option.annotation))


def default(option: Option) -> str:
    """The default as the command line spells it: ``on``/``off`` for a switch, ``none``
    for None."""
    if option.is_flag:
        return "on" if option.default else "off"
    return "none" if option.default is None else str(option.default)


def options_table(options: dict[str, Option]) -> str:
    """A Markdown table of ``options``: flag, type, default, the first sentence of its
    description."""
    rows = ["| flag | type | default | what it does |", "|---|---|---|---|"]
    for option in options.values():
        rows.append(f"| `{flag(option)}` | {kind(option)} | "
                    f"`{default(option)}` | {markdown(first_sentence(option.help))} |")
    return "\n".join(rows)


def component_section(cls: type[Declared]) -> str:
    """A component's section: its name, its module, the first paragraph of its class
    docstring, and its options."""
    module = cls.__module__.removeprefix("polyparse.").replace(".", "/") + ".py"
    lines = [f"## {cls.name}", "",
             f"`{cls.__name__}` in [`{module}`](../{module}).", "",
             markdown(first_paragraph(cls.__doc__)), ""]
    settable = cls.settable()
    lines += [options_table(settable) if settable else "No options of its own.", ""]
    fixed = sorted(set(cls.options()) - set(settable))
    if fixed:
        lines += ["Set by the application, not by a flag of this table: "
                  + ", ".join(f"`{name}`" for name in fixed) + ".", ""]
    return "\n".join(lines)


def render(title: str, registry: dict[str, type[Declared]], introduction: str) -> str:
    """The page of one registry: a summary table, then one section per component in
    the order of their names."""
    names = sorted(registry)
    lines = [f"# {title}", "",
             "<!-- Generated by `python -m polyparse.parser.reference docs/` from the "
             "registry and the components' docstrings; edit those, not this page. -->", "",
             introduction + " A switch that is on by default is turned off by its `--no-` "
             "flag.", "",
             "| name | what it is |", "|---|---|"]
    for name in names:
        summary = first_sentence(first_paragraph(registry[name].__doc__))
        lines.append(f"| [`{name}`](#{anchor(name)}) | {markdown(summary)} |")
    lines.append("")
    lines += [component_section(registry[name]) for name in names]
    return "\n".join(lines).rstrip("\n") + "\n"


def anchor(name: str) -> str:
    """The anchor GitHub gives the heading ``## name``."""
    return re.sub(r"[^\w-]", "", name.lower())


def pages() -> dict[str, str]:
    """File name -> rendered text of every reference page."""
    return {file: render(*spec) for file, spec in PAGES.items()}


def main(argv: list[str] | None = None) -> int:
    """``python -m polyparse.parser.reference DIR``: write the pages into the folder DIR."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m polyparse.parser.reference DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    if not folder.is_dir():
        print(f"polyparse.parser.reference: error: {folder}: not a folder", file=sys.stderr)
        return 2
    for file, text in pages().items():
        (folder / file).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
