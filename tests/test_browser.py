"""``polyparse serve``'s page in a real browser: headless Chromium (from the system's
packages; these tests skip without it) types a sentence into the page, switches the
options on, presses Parse, and the arcs the page then shows are checked against the
CoNLL-U it offers for download, down to where each arc is drawn."""

from __future__ import annotations

import threading

import pytest

from polyparse.parser.pipeline import Parser
from polyparse.parser.serve import Server, ServeConfig, warm_up

from browser import Browser, chromium

# one xdist worker runs the file: one server and one Chromium for all its tests
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

ARCS = """Array.from(document.querySelectorAll('svg.panel.%s')).map(panel => {
  const words = Array.from(panel.querySelectorAll('text.word')).map(t => {
    const box = t.getBBox(); return box.x + box.width / 2; });
  return Array.from(panel.querySelectorAll('g.arc')).map(g => {
    const line = g.querySelector('path.line').getBBox();
    const tip = g.querySelector('path.tip').getBBox();
    return {head: +g.dataset.head, dep: +g.dataset.dep, label: g.dataset.label,
            value: +g.dataset.value, rounded: g.classList.contains('rounded'),
            opacity: +getComputedStyle(g.querySelector('path.line')).strokeOpacity,
            left: line.x, right: line.x + line.width, tip: tip.x + tip.width / 2,
            words: words};
  });
})"""
"""Every arc of the panels of a class as the page drew it: its data, the horizontal
extent of its line and of its arrow head, and the centres of the words drawn."""


@pytest.fixture(scope="module")
def page(request):
    """The sample model served in a thread, and Chromium on its page (the model is
    trained only when there is a Chromium)."""
    binary = chromium()
    if binary is None:
        pytest.skip("no Chromium on the PATH (apt-get install chromium)")
    parser = Parser.load(request.getfixturevalue("sample_model_path"))
    warm_up(parser)
    server = Server(ServeConfig(port=0)).load(parser, "sample.npz")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = Browser(binary)
    try:
        browser.open(server.url)
        yield browser
    finally:
        browser.close()
        server.shutdown()
        server.server_close()


def submit(browser: Browser, text: str) -> None:
    """Type ``text`` into the cleared text box and press Parse; wait for the answer."""
    answers = int(browser.evaluate("document.body.dataset.answers"))
    browser.evaluate("document.getElementById('text').value = ''")
    browser.click("#text")
    browser.type(text)
    browser.click("#parse")
    browser.wait_for(f"document.body.dataset.answers === '{answers + 1}'")


def conllu_trees(text: str) -> list[list[tuple[int, int, str]]]:
    """The (head, dependent, label) of every word of every sentence of CoNLL-U."""
    trees = []
    for block in text.strip().split("\n\n"):
        cols = [line.split("\t") for line in block.split("\n")
                if line and not line.startswith("#")]
        trees.append([(int(c[6]), int(c[0]), c[7]) for c in cols if c[0].isdigit()])
    return trees


def check_drawn_where_they_belong(arcs: list[dict]) -> None:
    """Each arc's head points at its dependent's word and its line leaves from its
    head's word (the root's come straight down)."""
    for arc in arcs:
        words = arc["words"]
        assert abs(arc["tip"] - words[arc["dep"] - 1]) < 1.0, arc
        if arc["head"] == 0:
            assert arc["right"] - arc["left"] < 2.0
        else:
            start = arc["left"] if arc["head"] < arc["dep"] else arc["right"]
            end = arc["right"] if arc["head"] < arc["dep"] else arc["left"]
            assert abs(end - words[arc["dep"] - 1]) < 1.0, arc
            assert 0 < abs(start - words[arc["head"] - 1]) < 15.0, arc


def test_typed_text_is_drawn_as_the_conllu_the_page_offers(page):
    page.click("#lp")
    submit(page, "The baker expects she went into the church. Listen to a soldier!")
    assert page.evaluate("document.getElementById('error').textContent") == ""
    conllu = page.evaluate("fetch(document.getElementById('download').href)"
                           ".then(r => r.text())")
    trees = conllu_trees(conllu)
    assert len(trees) == 2
    drawn = page.evaluate(ARCS % "tree")
    assert [[(a["head"], a["dep"], a["label"]) for a in panel] for panel in drawn] == trees
    for panel in drawn:
        check_drawn_where_they_belong(panel)
    lp = page.evaluate(ARCS % "lp")
    assert len(lp) == 2
    for panel, tree in zip(lp, trees):
        rounded = [(a["head"], a["dep"]) for a in panel if a["rounded"]]
        assert sorted(rounded) == sorted((h, d) for h, d, _ in tree)  # first order: tight
        for arc in panel:
            assert arc["opacity"] == pytest.approx(arc["value"], abs=1e-3)
        check_drawn_where_they_belong(panel)
    status = page.evaluate("document.getElementById('status').textContent")
    assert status.startswith("2 sentence(s), 14 words: tokenized, tagged and decoded in ")
    assert status.endswith(" ms")
    page.click("#lp")                                        # off again


def test_kbest_trees_are_drawn_side_by_side(page):
    page.click("#kbest")
    page.type("3")
    submit(page, "Dogs bark loudly.")
    conllu = page.evaluate("document.getElementById('conllu').textContent")
    trees = conllu_trees(conllu)
    drawn = page.evaluate(ARCS % "tree")
    assert len(trees) == 3
    assert [[(a["head"], a["dep"], a["label"]) for a in panel] for panel in drawn] == trees
    tops = page.evaluate("Array.from(document.querySelectorAll('svg.panel.tree'))"
                         ".map(s => s.getBoundingClientRect().top)")
    assert len(set(tops)) == 1                                # in one row
    page.evaluate("document.getElementById('kbest').value = ''")


def test_bad_input_is_a_message_on_the_page(page):
    page.evaluate("document.getElementById('format').value = 'conllu'")
    submit(page, "1 Dogs dog")
    error = page.evaluate("document.getElementById('error').textContent")
    assert error == ("input:1: columns are separated by spaces instead of tabs (expected "
                     "10 tab-separated columns)")
    page.evaluate("document.getElementById('format').value = 'text'")
