"""Drawings (parser/drawing): figures built from sentences, the layout, and the SVG read
back as XML: one arc per word going where the tree says, multiword tokens, non-projective
arcs, LP values as opacity, gold and k-best marks."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.sentence import Sentence
from polyparse.parser.drawing import (Figure, Panel, figure_html, figure_svg, lp_arcs,
                                      page_end, page_start, tree_arcs, words_of)
from polyparse.parser.drawing.figure import against_best, nonprojective, with_gold
from polyparse.parser.drawing.layout import columns, levels
from polyparse.parser.drawing.svg import panel_svg

SVG = "{http://www.w3.org/2000/svg}"

CONLLU = """# sent_id = mwt-1
# text = Vámonos al mar, dijo ella.
1-2	Vámonos	_	_	_	_	_	_	_	_
1	Vamos	ir	VERB	_	_	7	ccomp	_	_
2	nos	nosotros	PRON	_	_	1	obj	_	_
3-4	al	_	_	_	_	_	_	_	_
3	a	a	ADP	_	_	5	case	_	_
4	el	el	DET	_	_	5	det	_	_
5	mar	mar	NOUN	_	_	1	obl	_	SpaceAfter=No
6	,	,	PUNCT	_	_	7	punct	_	_
7	dijo	decir	VERB	_	_	0	root	_	_
8	ella	ella	PRON	_	_	7	nsubj	_	SpaceAfter=No
9	.	.	PUNCT	_	_	7	punct	_	_

"""


def sentence_of(text: str) -> Sentence:
    return next(read_conllu(text.splitlines(keepends=True)))


def tree(heads, labels=None) -> Sentence:
    """A sentence of ``len(heads)`` words w1, w2, ... with the tree ``heads``."""
    n = len(heads)
    sentence = Sentence.from_words([f"w{i}" for i in range(1, n + 1)], upos=["X"] * n)
    return sentence.with_tree(np.array([-1, *heads]), ["<root>", *(labels or ["dep"] * n)])


def arcs_of(svg: ET.Element, panel: str = "tree") -> list[ET.Element]:
    """The arc groups of the panels of class ``panel`` in an SVG document."""
    return [g for p in svg.iter(f"{SVG}svg") if panel in p.get("class", "").split()
            for g in p.iter(f"{SVG}g") if "arc" in g.get("class", "").split()]


def test_every_word_has_one_arc_from_its_head_and_the_svg_is_xml():
    sentence = sentence_of(CONLLU)
    figure = Figure("t", words_of(sentence), ((Panel("gold", tree_arcs(sentence)),),))
    svg = ET.fromstring(figure_svg(figure))
    assert svg.tag == f"{SVG}svg"
    arcs = arcs_of(svg)
    assert [(int(g.get("data-head")), int(g.get("data-dep")), g.get("data-label"))
            for g in arcs] == [(int(sentence.heads[m]), m, sentence.deprels[m])
                               for m in range(1, 10)]
    words = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "word"]
    assert words == ["Vamos", "nos", "a", "el", "mar", ",", "dijo", "ella", "."]


def test_an_arc_goes_from_above_its_head_down_to_its_dependent():
    sentence = sentence_of(CONLLU)
    figure = Figure("t", words_of(sentence), ((Panel("", tree_arcs(sentence)),),))
    svg = ET.fromstring(figure_svg(figure))
    x = {i: float(t.get("x")) for i, t in enumerate(
        (t for t in svg.iter(f"{SVG}text") if t.get("class") == "word"), 1)}
    for g in arcs_of(svg):
        head, dep = int(g.get("data-head")), int(g.get("data-dep"))
        line = next(p for p in g if p.get("class") == "line").get("d")
        tip = next(p for p in g if p.get("class") == "tip").get("d")
        start_x = float(line[1:].split(",")[0])            # M x,y: where the line starts
        assert float(tip.split("L")[1].split(",")[0]) == pytest.approx(x[dep], abs=0.1)
        if head:
            assert 0 < (start_x - x[head]) * np.sign(dep - head) <= 12
        else:
            assert start_x == pytest.approx(x[dep], abs=0.1)
        assert g.find(f"{SVG}title").text.split(":")[0] == g.get("data-label")


def test_multiword_tokens_stand_over_their_words():
    words = words_of(sentence_of(CONLLU))
    assert [(t.form, t.first, t.last) for t in words.tokens] == [("Vámonos", 1, 2),
                                                                 ("al", 3, 4)]
    svg = ET.fromstring(figure_svg(Figure("t", words, ((Panel("", ()),),))))
    tokens = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "token"]
    assert [g.find(f"{SVG}text").text for g in tokens] == ["Vámonos", "al"]
    word_x = [float(t.get("x")) for t in svg.iter(f"{SVG}text") if t.get("class") == "word"]
    for g, (first, last) in zip(tokens, [(1, 2), (3, 4)]):
        assert float(g.find(f"{SVG}text").get("x")) == pytest.approx(
            (word_x[first - 1] + word_x[last - 1]) / 2, abs=0.1)


def test_crossing_arcs_are_non_projective():
    # 3 -> 1 crosses 4 -> 2; word 3 lies between 4 and 2 and does not descend from 4
    # (word 2, between 3 and 1, descends from 3 through 4)
    sentence = tree([3, 4, 0, 3])
    assert nonprojective(sentence.heads).tolist() == [False, False, True, False, False]
    svg = ET.fromstring(figure_svg(Figure("t", words_of(sentence),
                                          ((Panel("", tree_arcs(sentence)),),))))
    assert [("nonproj" in g.get("class").split()) for g in arcs_of(svg)] == [False, True,
                                                                           False, False]
    projective = tree([2, 0, 2, 3])
    assert not nonprojective(projective.heads).any()


def test_nested_arcs_are_drawn_higher_and_root_arcs_highest():
    arcs = tree_arcs(tree([0, 1, 4, 2]))       # 1 -> 2, 2 -> 4 over 4 -> 3, root -> 1
    assert levels(arcs).tolist() == [2, 0, 0, 1]


def test_lp_arcs_have_their_value_as_opacity_and_the_rounded_tree_is_marked():
    rounded = tree([0, 1, 2])
    z = np.zeros((4, 4))
    z[0, 1] = 1.0
    z[1, 2], z[3, 2] = 0.75, 0.25
    z[2, 3], z[1, 3] = 0.5, 0.5
    arcs = lp_arcs(z, rounded)
    assert {(a.head, a.dep, a.value, a.in_tree) for a in arcs} == {
        (0, 1, 1.0, True), (1, 2, 0.75, True), (2, 3, 0.5, True), (3, 2, 0.25, False),
        (1, 3, 0.5, False)}
    svg = ET.fromstring(figure_svg(Figure("t", words_of(rounded),
                                          ((Panel("lp", arcs, kind="lp"),),))))
    drawn = arcs_of(svg, "lp")
    for g in drawn:
        line = next(p for p in g if p.get("class") == "line")
        assert float(line.get("stroke-opacity")) == pytest.approx(float(g.get("data-value")))
        marked = any(p.get("class") == "tree" for p in g)
        assert marked == ("rounded" in g.get("class").split())
    assert sum("rounded" in g.get("class").split() for g in drawn) == 3
    texts = {g.get("data-dep") + g.get("data-head"): g.find(f"{SVG}text").text for g in drawn}
    assert texts["23"] == "0.25" and texts["21"] == "dep 0.75" and texts["10"] == "dep"


def test_gold_marks_wrong_heads_and_labels():
    predicted = tree([0, 1, 1], ["root", "obj", "nsubj"])
    gold = tree([0, 1, 2], ["root", "nsubj", "nsubj"])
    marked = with_gold(tree_arcs(predicted), gold)
    assert [(a.wrong_head, a.wrong_label) for a in marked] == [(False, False),
                                                               (False, True), (True, False)]
    svg = ET.fromstring(figure_svg(Figure("t", words_of(predicted),
                                          ((Panel("", marked),),))))
    classes = [set(g.get("class").split()) for g in arcs_of(svg)]
    assert ["wrong-head" in c for c in classes] == [False, False, True]
    assert ["wrong-label" in c for c in classes] == [False, True, False]
    assert "gold: nsubj from w2 (2)" in arcs_of(svg)[2].find(f"{SVG}title").text


def test_kbest_trees_side_by_side_mark_where_they_differ_from_the_first():
    best = tree_arcs(tree([0, 1, 1], ["root", "obj", "obj"]))
    second = against_best(tree_arcs(tree([0, 1, 2], ["root", "nsubj", "obj"])), best)
    assert [a.differs for a in second] == [False, True, True]
    words = words_of(tree([0, 1, 1]))
    svg = ET.fromstring(figure_svg(Figure("t", words, ((Panel("1", best, rank=1),
                                                        Panel("2", second, rank=2)),))))
    panels = [p for p in svg.iter(f"{SVG}svg") if p.get("data-rank")]
    assert [p.get("data-rank") for p in panels] == ["1", "2"]
    assert float(panels[1].get("x")) >= float(panels[0].get("x")) + float(
        panels[0].get("width"))                                   # side by side
    assert float(panels[1].get("y")) == float(panels[0].get("y"))


def test_probabilities_colour_arcs_from_red_to_green():
    sentence = tree([0, 1])
    probs = np.array([np.nan, 0.99, 0.1])
    svg = ET.fromstring(figure_svg(Figure("t", words_of(sentence), ((Panel(
        "", tree_arcs(sentence, probs, probs)),),))))
    styles = [[p.get("style") for p in g if p.get("class") in ("line", "tip")]
              for g in arcs_of(svg)]
    assert styles == [["stroke:hsl(119,75%,36%)", "fill:hsl(119,75%,36%)"],
                      ["stroke:hsl(12,75%,36%)", "fill:hsl(12,75%,36%)"]]


def test_labels_of_neighbours_get_room_and_odd_text_stays_xml():
    sentence = tree([0, 1], ["root", "compound:prt"])
    words = words_of(sentence)
    panel = Panel("", tree_arcs(sentence))
    svg, _, _ = panel_svg(words, columns(words, [panel]), panel)
    x = [float(t.get("x")) for t in ET.fromstring(svg).iter(f"{SVG}text")
         if t.get("class") == "word"]
    assert x[1] - x[0] >= 11 * 0.62 * len("compound:prt")
    odd = Sentence.from_words(["<a&b>", "\"q'", "x\x0by"])
    odd = odd.with_tree(np.array([-1, 0, 1, 1]), ["<root>", "root", "x", "y"])
    svg = ET.fromstring(figure_svg(Figure("<&>", words_of(odd),
                                          ((Panel("", tree_arcs(odd)),),))))
    assert [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "word"] == [
        "<a&b>", "\"q'", "x\ufffdy"]


def test_a_page_holds_every_figure_once_with_one_style_sheet():
    sentence = sentence_of(CONLLU)
    figure = Figure("mwt-1: Vámonos", words_of(sentence),
                    ((Panel("", tree_arcs(sentence)),),))
    page = page_start("two") + figure_html(figure) * 2 + page_end()
    assert page.count("<section") == 2 and page.count("<style>") == 1
    assert page.count('class="arc') == 18
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
