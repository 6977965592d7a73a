"""The benchmarks: every module of this folder whose name does not start with an
underscore is one, named after its file and described by the first paragraph of its
docstring. Each has ``main(argv)``, whose parser (:func:`eval._common.arguments`) takes
``--ud`` and ``--results``, and ``SMOKE``, the arguments of its smoke run: the sample
treebank, a few sentences, seconds (``{results}`` in them stands for the folder its
tables go to). ``python -m eval list`` lists them, ``python -m eval
run NAME [ARGS]`` runs one (``--smoke``: its smoke run, tables into a temporary folder).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def names() -> list[str]:
    """The benchmarks' names, sorted."""
    return sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_"))


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def description(name: str) -> str:
    """The first paragraph of benchmark ``name``'s docstring on one line, read without
    importing it."""
    return first_paragraph(ast.get_docstring(ast.parse(
        (HERE / f"{name}.py").read_text(encoding="utf-8"))))


def benchmark(name: str) -> ModuleType:
    """The module of benchmark ``name``."""
    if name not in names():
        raise KeyError(f"no benchmark {name!r}: python -m eval list names them")
    return importlib.import_module(f"{__name__}.{name}")
