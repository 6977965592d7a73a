"""Command-line flags made from declared options (:mod:`decoders.declared`).

Every option that a registered decoder or trainer declares becomes one flag, with the
type, default and description of its declaration; the flags of one kind of component
share a group of the help. After parsing, :func:`chosen` keeps the flags given and
checks them against the one component chosen (``--trainer dlpw --eta 1`` is an error
naming ``--eta``), before any long work starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import types
import typing

from polyparse.decoders import Declared, Option, OptionError


def add_flags(parser: argparse.ArgumentParser, components: dict[str, type[Declared]],
              title: str, *, only: set[str] | None = None) -> None:
    """Add a group ``title`` with one flag per settable option of ``components`` (or
    of the option names in ``only``); every flag defaults to None (not given). Its help
    is :func:`_help` of the declarations."""
    declared: dict[str, list[tuple[str, Option]]] = {}
    for component, cls in sorted(components.items()):
        for name, option in cls.settable().items():
            if only is None or name in only:
                declared.setdefault(name, []).append((component, option))
    group = parser.add_argument_group(title)
    for name, owned in declared.items():
        option = _one_flag(owned)
        text = _help(owned, len(components)).replace("%", "%%")
        if option.is_flag:
            flag = option.flag if not option.default else "--no-" + option.flag[2:]
            group.add_argument(flag, dest=name, action="store_const",
                               const=not option.default, default=None,
                               help=f"turns off: {text[:1].lower()}{text[1:]}"
                               if option.default else text)
        else:
            group.add_argument(option.flag, dest=name, default=None, type=_parser(option),
                               choices=option.choices, metavar=name.rstrip("_").upper(),
                               help=text)


def _one_flag(owned: list[tuple[str, Option]]) -> Option:
    """The option of one flag for the components that declare it: the first one's, or,
    when they declare different types, one taking either type (None is the flag's
    absence); :func:`chosen` checks the value against the chosen component's own
    declaration."""
    first = owned[0][1]
    kinds = {option.annotation for _, option in owned}
    if len(kinds) == 1:
        return first
    if bool in kinds:
        raise TypeError(f"option {first.name} is declared as " + " and as ".join(
            map(str, kinds)) + ": a switch cannot take a value")
    merged = typing.Union[tuple(kind for _, option in owned
                                for kind in _alternatives(option.annotation)
                                if kind is not type(None))]
    return dataclasses.replace(first, annotation=merged, default=None)


def _help(owned: list[tuple[str, Option]], everyone: int) -> str:
    """The help of one flag in a line or two: the :func:`brief` of its description and
    its default, the components that declare it in brackets (unless all do). Where
    components describe it differently, each description is followed by its components;
    where they default differently, the default says which is whose."""
    texts = _grouped((brief(o.help, none=type(None) in _alternatives(o.annotation)), c)
                     for c, o in owned)
    if len(texts) == 1:
        text, names = next(iter(texts.items()))
        return text + _default(owned, text) + _owners(names, everyone)
    if len(_grouped((_default_value(o), c) for c, o in owned)) == 1:
        return "; ".join(text + _owners(names, everyone) for text, names in texts.items()) \
            + _default(owned, " ".join(texts))
    return "; ".join(text + _default([(c, o) for c, o in owned if c in names], text)
                     + _owners(names, everyone) for text, names in texts.items())


def _default(owned: list[tuple[str, Option]], text: str) -> str:
    """`` (default D)``, or `` (default D [a]; E [b])`` when components default
    differently; nothing for a switch, nor for None when ``text`` says the default."""
    defaults = _grouped((_default_value(o), c) for c, o in owned)
    shown = {d: names for d, names in defaults.items()
             if d is not None and not (d == "none" and "default" in text)}
    if not shown:
        return ""
    if len(defaults) == 1:
        return f" (default {next(iter(shown))})"
    return " (default " + "; ".join(f"{d}{_owners(n, 0)}" for d, n in shown.items()) + ")"


def _default_value(option: Option) -> str | None:
    if option.is_flag:
        return None
    return "none" if option.default is None else str(option.default)


def _owners(names: list[str], everyone: int) -> str:
    return f" [{', '.join(names)}]" if len(names) < everyone or not everyone else ""


def _grouped(pairs) -> dict:
    """``(key, name)`` pairs as the names of each key, in the order first met."""
    grouped: dict = {}
    for key, name in pairs:
        grouped.setdefault(key, []).append(name)
    return grouped


BRIEF = 110
"""The characters of a description kept whole in a flag's help: about two lines of
argparse's help column."""

ASIDES = 80
"""The length beyond which a description loses its asides in parentheses."""

_SENTENCE_END = re.compile(r"(?<=[^\s.])(?<!\be\.g)(?<!\bi\.e)(?<!\bal)\.(?:\s+|$)"
                           r"(?=[A-Z0-9\"'(]|$)")
_PROSE = re.compile(r"[A-Za-z']{2,} [A-Za-z]{2,}")
_CONDITION = re.compile(r"(When|Whenever|If|Unless)\b")


def brief(text: str, *, none: bool = False) -> str:
    """The gist of a declared option's description for a flag's help: its first
    sentence, shortened when it is long (its asides in parentheses dropped beyond
    :data:`ASIDES` characters, then cut to its first clause beyond :data:`BRIEF`), and, for an option that may be ``none``, the clause saying what
    None does. The whole description is the reference (docs/options.md)."""
    text = re.sub(r" \(:\w+:`[^`]*`\)", "", text)          # (:func:`x`): for readers of code
    text = _plain(text)
    short = _sentences(text)[0] if text else ""
    if len(short) > ASIDES:
        short = _without_asides(short)
    if len(short) > BRIEF:
        short = _first_clause(short)
    found = re.search(r"\bNone\b[^.;]*", text) if none else None
    if found is not None and "None" not in short:
        short += "; " + _first_clause(_without_asides(found.group(0)).rstrip(", "), 40)
    return short


def _sentences(text: str) -> list[str]:
    ends = [m.span() for m in _SENTENCE_END.finditer(text)]
    starts = [0] + [end for _, end in ends]
    stops = [start for start, _ in ends] + [len(text)]
    return [text[a:b].strip() for a, b in zip(starts, stops) if text[a:b].strip()]


def _top_level(text: str):
    """The positions of ``text`` outside parentheses, with their characters."""
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0:
            yield i, c


def _without_asides(text: str) -> str:
    """``text`` without its asides: the parenthesised prose (not formulas such as
    ``(lambda/2)``) after a space."""
    depth, groups = 0, []
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
            if depth == 1:
                start = i
        elif c == ")" and depth:
            depth -= 1
            if depth == 0 and start > 0 and text[start - 1] == " " \
                    and _PROSE.search(text[start:i + 1]):
                groups.append((start - 1, i + 1))
    for start, end in reversed(groups):
        text = text[:start] + text[end:]
    return text


def _first_clause(text: str, shortest: int = 25) -> str:
    """``text`` up to its first ``;`` or ``:`` outside parentheses, and if that is still
    longer than :data:`BRIEF`, up to its last comma within it; never shorter than
    ``shortest`` characters. Quoted choices (``"best": ...; "depth": ...``) and what
    opens with a condition (``Whenever ..., ...``) are not cut."""
    for i, c in _top_level(text):
        if c in ";:" and i >= shortest and text[i + 1:i + 2] == " ":
            if text[i + 2:i + 3] == '"':
                return text
            text = text[:i]
            break
    if len(text) <= BRIEF or _CONDITION.match(text):
        return text
    commas = [i for i, c in _top_level(text) if c == "," and shortest <= i <= BRIEF]
    return text[:commas[-1]] if commas else text


class _GivenNone:
    """``none`` given on the command line to an option that may be None, told apart
    from the flag's absence (None): :func:`chosen` gives the component None."""

    def __repr__(self) -> str:
        return "none"


GIVEN_NONE = _GivenNone()


def chosen(args: argparse.Namespace, components: dict[str, type[Declared]],
           name: str) -> dict:
    """The options given on the command line for component ``name`` (``none`` as None):
    ValueError naming the flags it does not take."""
    given = {option: None if getattr(args, option) is GIVEN_NONE else getattr(args, option)
             for option in {o for cls in components.values() for o in cls.settable()}
             if getattr(args, option, None) is not None}
    cls = components[name]
    try:
        cls.check_options(given)
    except OptionError as error:
        if not error.unknown:
            raise
        flags = ", ".join(sorted(Option(o, None, None).flag for o in error.unknown))
        raise ValueError(f"{cls.kind} {name!r} does not take {flags}") from None
    return given


def _alternatives(hint) -> tuple:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _plain(text: str) -> str:
    """A docstring's reStructuredText as plain text: ``x`` and :role:`x` become x."""
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text)
    return text.replace("``", "")


def _parser(option: Option):
    def parse(text: str):
        try:
            value = option.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return GIVEN_NONE if value is None else value
    parse.__name__ = option.name
    return parse
