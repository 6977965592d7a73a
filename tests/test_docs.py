"""The documentation holds together: every section of ``docs/algorithms.md`` that the
code cites exists, every relative link of the README and of ``docs/`` leads to a file,
and the README stays short."""

from __future__ import annotations

import re

from conftest import REPO

DOCS = REPO / "docs"
SECTION = r"\d+b?"
CITATIONS = (
    # "algorithms.md`` section 5", "sections 5 and 5b", "sections 4-5", "algorithms.md`` 5b"
    re.compile(rf"algorithms\.md`*\)?\s+(?:sections?\s+)?({SECTION}"
               rf"(?:(?:\s*,\s*|\s+and\s+|-){SECTION})*)(?![\w.])"),
    # "section 1 of ``docs/algorithms.md``"
    re.compile(rf"sections?\s+({SECTION})\s+of\s+`*docs/algorithms\.md"),
)


def cited_sections(text: str) -> set[str]:
    """The section numbers of ``docs/algorithms.md`` that ``text`` cites."""
    text = " ".join(text.split())
    found = set()
    for pattern in CITATIONS:
        for match in pattern.finditer(text):
            numbers = re.findall(SECTION, match.group(1))
            if "-" in match.group(1) and len(numbers) == 2 and "b" not in "".join(numbers):
                numbers = [str(k) for k in range(int(numbers[0]), int(numbers[1]) + 1)]
            found.update(numbers)
    return found


def python_sources():
    for path in sorted(REPO.rglob("*.py")):
        parts = path.relative_to(REPO).parts
        if not any(part.startswith(".") or part.endswith(".egg-info") for part in parts):
            yield path


def test_cited_sections_are_read_from_the_forms_the_docstrings_use():
    assert cited_sections("see ``docs/algorithms.md`` section 5 (\"SSG-eta\")") == {"5"}
    assert cited_sections("``docs/algorithms.md`` sections 5\n    and 5b).") == {"5", "5b"}
    assert cited_sections("(``docs/algorithms.md`` sections 4-5) at") == {"4", "5"}
    assert cited_sections("``docs/algorithms.md`` 5b): the log-odds") == {"5b"}
    assert cited_sections("(section 1\nof ``docs/algorithms.md``)") == {"1"}
    assert cited_sections("the F(x) of ``docs/algorithms.md``).") == set()


def test_every_section_the_code_cites_is_a_heading_of_algorithms_md():
    headings = set(re.findall(rf"^## ({SECTION})\. ", (DOCS / "algorithms.md").read_text(),
                              flags=re.M))
    cited: dict[str, list[str]] = {}
    for path in python_sources():
        for number in cited_sections(path.read_text(encoding="utf-8")):
            cited.setdefault(number, []).append(str(path.relative_to(REPO)))
    assert len(cited) >= 10, sorted(cited)       # the scan itself still finds the citations
    missing = {n: files for n, files in cited.items() if n not in headings}
    assert not missing, f"cited sections without a heading in docs/algorithms.md: {missing}"


def test_every_relative_link_leads_to_a_file():
    pages = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken


def test_the_readme_is_read_in_two_minutes():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for page in ("usage", "constraints", "cluster", "benchmarks", "decoders", "trainers",
                 "algorithms"):
        assert f"docs/{page}.md" in readme
