"""The layers import one way: corpora <- features <- learning <- parser, and decoders
(parts, factor graph, solvers) knows neither features, learning nor the application
(issue 12: trainers no longer import from the application layer)."""

import ast

import pytest

from conftest import REPO

FORBIDDEN = {
    "corpora": ("features", "decoders", "learning", "parser"),
    "features": ("learning", "parser"),
    "decoders": ("features", "learning", "parser"),
    "learning": ("parser",),
}


def imported_packages(path):
    """The polyparse packages a module imports (absolute ``polyparse.X`` imports; a
    relative import stays inside its own package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found |= {name.split(".")[1] for name in names
                  if name.startswith("polyparse.") and name.count(".") >= 1}
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(package):
    wrong = {str(path.relative_to(REPO)): sorted(imported_packages(path)
                                                 & set(FORBIDDEN[package]))
             for path in (REPO / package).rglob("*.py")}
    assert {path: names for path, names in wrong.items() if names} == {}


def test_the_check_sees_imports():
    assert imported_packages(REPO / "parser" / "pipeline.py") >= {"corpora", "learning"}
