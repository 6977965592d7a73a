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
    of the option names in ``only``); every flag defaults to None (not given)."""
    by_name: dict[str, tuple[Option, list[str]]] = {}
    helps: dict[str, dict[str, list[str]]] = {}
    defaults: dict[str, dict[str, list[str]]] = {}
    merged_names: set[str] = set()
    for component, cls in sorted(components.items()):
        for name, option in cls.settable().items():
            if only is not None and name not in only:
                continue
            known = by_name.setdefault(name, (option, []))
            if known[0].annotation != option.annotation:
                if bool in (known[0].annotation, option.annotation):
                    raise TypeError(f"option {name} is declared as {known[0].annotation} and "
                                    f"as {option.annotation}: a switch cannot take a value")
                # one flag taking either type (None is the flag's absence); chosen()
                # checks the value against the chosen component's own declaration
                merged = typing.Union[tuple(
                    kind for kind in (*_alternatives(known[0].annotation),
                                      *_alternatives(option.annotation))
                    if kind is not type(None))]
                known = by_name[name] = (dataclasses.replace(known[0], annotation=merged,
                                                             default=None), known[1])
                merged_names.add(name)
            known[1].append(component)
            helps.setdefault(name, {}).setdefault(_plain(option.help), []).append(component)
            defaults.setdefault(name, {}).setdefault(
                "none" if option.default is None else str(option.default), []).append(component)
    group = parser.add_argument_group(title)
    for name, (option, owners) in by_name.items():
        where = f" [{', '.join(owners)}]" if len(owners) < len(components) else ""
        text = _plain(option.help)
        if name in merged_names or len(helps[name]) > 1:
            # one name, two meanings or two descriptions: each with its owners
            text = "; ".join(f"{h} [{', '.join(o)}]" for h, o in helps[name].items())
            where = ""
        default = "" if option.default is None else f" (default {option.default})"
        if len(defaults[name]) > 1:     # components that default differently: each says
            default = " (default " + "; ".join(f"{d} [{', '.join(o)}]"
                                                for d, o in defaults[name].items()) + ")"
        if option.is_flag:
            flag = option.flag if not option.default else "--no-" + option.flag[2:]
            group.add_argument(flag, dest=name, action="store_const",
                               const=not option.default, default=None,
                               help=f"{'turns off: ' if option.default else ''}{text}{where}")
        else:
            group.add_argument(option.flag, dest=name, default=None, type=_parser(option),
                               choices=option.choices, metavar=name.rstrip("_").upper(),
                               help=f"{text}{default}{where}")


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
    """A docstring's reStructuredText as plain text for argparse's help: ``x`` and
    :role:`x` become x, and ``%`` is escaped from argparse's formatting."""
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text)
    return text.replace("``", "").replace("%", "%%")


def _parser(option: Option):
    def parse(text: str):
        try:
            value = option.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return GIVEN_NONE if value is None else value
    parse.__name__ = option.name
    return parse
