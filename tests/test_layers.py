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


PACKAGES = ("corpora", "decoders", "features", "learning", "parser")


def module_graph() -> dict[str, set[str]]:
    """Every polyparse module (``decoders.mst``, ``parser.text``, ...) and the
    polyparse modules it imports anywhere in its body, functions included."""
    paths = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def known(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in paths.items():
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name.removeprefix("polyparse.") for alias in node.names
                            if alias.name.startswith("polyparse.")}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(package[:len(package) - node.level + 1]
                                    + ([node.module] if node.module else []))
                elif node.module and node.module.startswith("polyparse."):
                    base = node.module.removeprefix("polyparse.")
                else:
                    continue
                # a name is a submodule, or a name defined in the module ``base``
                targets |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths
                            else base for alias in node.names}
        graph[module] = {found for t in targets if (found := known(t)) not in (None, module)}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan 1972)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_at_module_or_function_level():
    assert circles(module_graph()) == []


def test_the_circle_check_sees_function_level_imports():
    graph = module_graph()
    assert "decoders.labeled_search" in graph["decoders.mst"]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
