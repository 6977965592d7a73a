"""Declared options: what a component (a decoder, a trainer) takes, said once.

A component declares its options as the keyword-only parameters of its ``__init__``
(and its bases'), each with a type annotation and a default, and describes each in the
numpydoc ``Parameters`` section of its class docstring. :class:`Declared` reads them
back, so that the command line makes its flags from them, a model file stores the
values chosen, and :meth:`Declared.check_options` refuses an option the component does
not take, or a value of the wrong type, before any work starts.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Option:
    """One declared option: its parameter name, type, default and description."""

    name: str
    annotation: Any
    default: Any
    help: str = ""

    @property
    def flag(self) -> str:
        """Its command-line flag: ``lambda_`` -> ``--lambda``, ``time_limit`` ->
        ``--time-limit``."""
        return "--" + self.name.rstrip("_").replace("_", "-")

    @property
    def is_flag(self) -> bool:
        """A bool option: the command line switches it on (``--x``), or off
        (``--no-x``) when its default is True."""
        return self.annotation is bool

    @property
    def choices(self) -> tuple | None:
        """The allowed values of a ``Literal[...]`` option."""
        return _literal_values(self.annotation)

    def parse(self, text: str) -> Any:
        """The value of command-line ``text`` under the option's type (``none`` is None
        for an option that may be None); ``ValueError`` saying what was expected."""
        for kind in _alternatives(self.annotation):
            if kind is int:
                try:
                    return int(text)
                except ValueError:
                    continue
            if kind is float:
                try:
                    return float(text)
                except ValueError:
                    continue
            values = _literal_values(kind)
            if values is not None and text in values:
                return text
            if kind is type(None) and text.lower() == "none":
                return None
            if kind is str:
                return text
        raise ValueError(f"{self.flag} takes {type_name(self.annotation)}, not {text!r}")

    def conforms(self, value: Any) -> bool:
        """Whether ``value`` is of the option's type (an int is a float too)."""
        return self.annotation is inspect.Parameter.empty or _conforms(value, self.annotation)


class OptionError(ValueError):
    """Options a component does not take (``unknown``), or a value of the wrong type."""

    def __init__(self, kind: str, component: str, unknown: list[str],
                 message: str | None = None) -> None:
        self.kind = kind
        self.component = component
        self.unknown = list(unknown)
        super().__init__(message or f"{kind} {component!r} does not take option(s): "
                                    f"{', '.join(self.unknown)}")


class Declared:
    """A component whose options are the keyword-only parameters of its ``__init__``.

    ``kind`` names the sort of component in messages (``"decoder"``, ``"trainer"``);
    ``fixed`` lists the options the application sets itself (``single_root``, a
    trainer's ``epochs``), which get no flag of their own.
    """

    kind: ClassVar[str] = "component"
    name: ClassVar[str] = ""
    fixed: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def options(cls) -> dict[str, Option]:
        """The declared options by name, in the order of the base classes' then the
        class's own parameters (read once per class: a decoder's copies with other
        options, :meth:`~decoders.base.Decoder.with_options`, are made per sentence)."""
        return dict(_declared_options(cls))

    @classmethod
    def settable(cls) -> dict[str, Option]:
        """The options a user sets: :meth:`options` but the :attr:`fixed` ones."""
        return {n: o for n, o in cls.options().items() if n not in cls.fixed}

    @classmethod
    def check_options(cls, options: dict) -> None:
        """Raise :class:`OptionError` for an option not declared, or a value not of its
        declared type."""
        declared = cls.options()
        unknown = [name for name in options if name not in declared]
        if unknown:
            raise OptionError(cls.kind, cls.name, unknown)
        for name, value in options.items():
            if not declared[name].conforms(value):
                raise OptionError(cls.kind, cls.name, [],
                                  f"option {name} of {cls.kind} {cls.name!r} takes "
                                  f"{type_name(declared[name].annotation)}, not {value!r}")


class Registry(dict):
    """The components of one kind (``"decoder"``, ``"trainer"``) by name: a class joins
    by the decorator :meth:`register`, and :meth:`make` builds one with its options
    checked against its declaration. The command line and the model file learn the
    components from here."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def register(self, name: str):
        """Class decorator: make a component available under ``name``."""

        def wrap(cls):
            if name in self:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            cls.name = name
            self[name] = cls
            return cls

        return wrap

    def get_class(self, name: str) -> type:
        """The component registered as ``name``; ``ValueError`` naming the choices if
        none."""
        if name not in self:
            raise ValueError(f"unknown {self.kind} {name!r}; choose from "
                             f"{', '.join(sorted(self))}")
        return self[name]

    def make(self, name: str, **options):
        """Component ``name`` with ``options``, checked against those it declares
        (:meth:`Declared.check_options`: an :class:`OptionError` for one it does not
        take or a value of the wrong type)."""
        cls = self.get_class(name)
        cls.check_options(options)
        return cls(**options)


@functools.cache
def _declared_options(cls: type) -> dict[str, Option]:
    """:meth:`Declared.options` of ``cls``, read from its signatures and docstrings."""
    declared: dict[str, Option] = {}
    helps = _parameter_docs(cls)
    for klass in reversed(cls.__mro__):
        if "__init__" in vars(klass) and issubclass(klass, Declared):
            hints = typing.get_type_hints(klass.__init__)
            for p in inspect.signature(klass.__init__).parameters.values():
                if p.kind == p.KEYWORD_ONLY:
                    declared[p.name] = Option(p.name, hints.get(p.name, p.empty),
                                              p.default, helps.get(p.name, ""))
    return declared


def type_name(hint) -> str:
    """``float or None``, ``'multi' or 'single'``, ``int``."""
    values = _literal_values(hint)
    if values is not None:
        return " or ".join(repr(v) for v in values)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(type_name(arg) for arg in typing.get_args(hint))
    return "None" if hint is type(None) else getattr(hint, "__name__", str(hint))


def _alternatives(hint) -> tuple:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _literal_values(hint) -> tuple | None:
    return typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else None


def _conforms(value, hint) -> bool:
    if hint is typing.Any:
        return True
    values = _literal_values(hint)
    if values is not None:
        return value in values
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_conforms(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, typing.get_origin(hint) or hint)


_HEADING = re.compile(r"^\s*(\w+)\s*:\s*$")


def _parameter_docs(cls) -> dict[str, str]:
    """Each parameter's description from the ``Parameters`` sections of the class
    docstrings along the MRO (a subclass's wins): the indented lines under
    ``name:``, joined."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(vars(klass).get("__doc__") or "")
        lines = doc.splitlines()
        if "Parameters" not in lines:
            continue
        body = lines[lines.index("Parameters") + 2:]
        current = None
        for i, line in enumerate(body):
            if i + 1 < len(body) and body[i + 1].strip() and not body[i + 1].strip("-"):
                break                                       # the next section's heading
            heading = None if line.startswith(" ") else _HEADING.match(line)
            if heading is not None:
                current = heading.group(1)
                docs[current] = ""
            elif current is not None and line.startswith(" ") and line.strip():
                docs[current] = (docs[current] + " " + line.strip()).strip()
            elif line.strip():
                current = None
    return docs
