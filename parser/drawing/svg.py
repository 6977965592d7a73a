"""Figures as SVG: one ``<svg>`` per panel, nested in one self-contained SVG document
per sentence (:func:`figure_svg`) or set side by side in an HTML page
(:mod:`~parser.drawing.page`).

Every arc is one ``<g class="arc">`` holding its line, its arrow head (pointing at the
dependent), its text and a tooltip (``<title>``), with ``data-head``, ``data-dep``,
``data-label`` and ``data-value`` attributes, so that what is drawn can be read back
from the document; a tree panel has one per word. The look is in ``drawing.css``
(:data:`STYLE`); what differs from arc to arc (the opacity of an LP value, the colour of
a probability) is in the arc's own attributes.
"""

from __future__ import annotations

import html
import re
from importlib import resources

from .figure import Arc, Figure, Panel, Words
from .layout import (FONT, LEVEL, MARGIN, SMALL, Columns, arc_text, columns, head_offsets,
                     levels)

STYLE = resources.files(__package__).joinpath("drawing.css").read_text(encoding="utf-8")
"""The style sheet of every drawing (inlined in each SVG document, once in a page)."""

SVG_NS = "http://www.w3.org/2000/svg"
TIP = 7.0
"""Length of an arrow head."""
PANEL_GAP = 28.0
"""Space between the panels of a row, and between rows."""
TITLE = SMALL + 8.0
"""Height of the title line of a panel or figure."""

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def escape(text: str) -> str:
    """``text`` for XML text or a quoted attribute; a character XML 1.0 cannot hold
    (a control character) becomes U+FFFD."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=True)


def figure_svg(figure: Figure) -> str:
    """A self-contained SVG document of ``figure``: its title, then its rows of
    panels, the panels of a row side by side."""
    cols = columns(figure.words, [p for row in figure.rows for p in row])
    parts = [f'<text class="note" x="{MARGIN}" y="{MARGIN + SMALL + TITLE * k:.1f}">'
             f'{escape(note)}</text>' for k, note in enumerate(figure.notes, 1)]
    width, y = 0.0, TITLE * (1 + len(figure.notes)) + MARGIN
    for row in figure.rows:
        x, height = MARGIN, 0.0
        for panel in row:
            svg, w, h = panel_svg(figure.words, cols, panel, x=x, y=y)
            parts.append(svg)
            x += w + PANEL_GAP
            height = max(height, h)
        width = max(width, x - PANEL_GAP + MARGIN)
        y += height + PANEL_GAP
    height = y - PANEL_GAP + MARGIN
    return (f'<svg xmlns="{SVG_NS}" class="figure" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}">'
            f'<style>{STYLE}</style><title>{escape(figure.title)}</title>'
            f'<rect class="background" width="100%" height="100%"/>'
            f'<text class="figure-title" x="{MARGIN}" y="{MARGIN + SMALL}">'
            f'{escape(figure.title)}</text>{"".join(parts)}</svg>\n')


def panel_svg(words: Words, cols: Columns, panel: Panel, *, x: float | None = None,
              y: float | None = None) -> tuple[str, float, float]:
    """``(svg, width, height)``: the ``<svg class="panel KIND">`` of ``panel`` over
    ``words`` placed in ``cols``, at ``x, y`` in an enclosing SVG (when given)."""
    level = levels(panel.arcs)
    top = int(level.max()) if len(level) else 0
    title_h = TITLE if panel.title else 0.0
    base = MARGIN + title_h + (top + 1) * LEVEL + SMALL + 2
    band = SMALL + 10 if words.tokens else 0.0
    form_y = base + band + FONT + 4
    upos_y = form_y + SMALL + 5
    height = upos_y + (SMALL + 8 if panel.caption else 0.0) + MARGIN
    out = []
    if panel.title:
        out.append(f'<text class="title" x="{MARGIN}" y="{MARGIN + SMALL}">'
                   f'{escape(panel.title)}</text>')
    for arc, lv, offset in zip(panel.arcs, level, head_offsets(panel.arcs, level)):
        out.append(_arc(arc, words, cols, base, base - (int(lv) + 1) * LEVEL, offset,
                        panel.kind))
    for token in words.tokens:
        left = cols.x[token.first] - 6
        right = cols.x[token.last] + 6
        out.append(f'<g class="token"><text x="{(left + right) / 2:.1f}" '
                   f'y="{base + SMALL + 1:.1f}">{escape(token.form)}</text>'
                   f'<path class="bracket" d="M{left:.1f},{base + band:.1f}v-4H{right:.1f}v4"/>'
                   f'</g>')
    for i, (form, upos) in enumerate(zip(words.forms, words.upos), 1):
        out.append(f'<text class="word" x="{cols.x[i]:.1f}" y="{form_y:.1f}">{escape(form)}'
                   f'</text><text class="upos" x="{cols.x[i]:.1f}" y="{upos_y:.1f}">'
                   f'{escape(upos)}</text>')
    if panel.caption:
        out.append(f'<text class="caption" x="{MARGIN}" y="{upos_y + SMALL + 8:.1f}">'
                   f'{escape(panel.caption)}</text>')
    place = "" if x is None else f' x="{x:.1f}" y="{y:.1f}"'
    rank = "" if panel.rank is None else f' data-rank="{panel.rank}"'
    return (f'<svg xmlns="{SVG_NS}" class="panel {panel.kind}"{rank}{place} '
            f'width="{cols.width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {cols.width:.0f} {height:.0f}">{"".join(out)}</svg>',
            cols.width, height)


def _arc(arc: Arc, words: Words, cols: Columns, base: float, top: float, offset: float,
         kind: str) -> str:
    """One arc: a box open at the bottom from ``base`` up to ``top``, leaving the head
    ``offset`` from its centre (a vertical line from above for the root), its arrow head
    at the dependent, its text on top."""
    x2 = cols.x[arc.dep]
    if arc.head == 0:
        x1 = x2
        line = f"M{x2:.1f},{top:.1f}V{base - TIP:.1f}"
    else:
        side = 1.0 if arc.dep > arc.head else -1.0
        x1 = cols.x[arc.head] + offset
        r = min(6.0, abs(x2 - x1) / 2)
        line = (f"M{x1:.1f},{base:.1f}V{top + r:.1f}Q{x1:.1f},{top:.1f} {x1 + side * r:.1f},"
                f"{top:.1f}H{x2 - side * r:.1f}Q{x2:.1f},{top:.1f} {x2:.1f},{top + r:.1f}"
                f"V{base - TIP:.1f}")
    tip = f"M{x2 - 3.5:.1f},{base - TIP:.1f}h7L{x2:.1f},{base:.1f}z"
    classes = ["arc"] + [name for name, on in (
        ("root", arc.head == 0), ("nonproj", arc.nonprojective), ("differs", arc.differs),
        ("wrong-head", arc.wrong_head), ("wrong-label", arc.wrong_label and not arc.wrong_head),
        ("rounded", kind == "lp" and arc.in_tree), ("relaxed", not arc.in_tree)) if on]
    line_style = tip_style = label_style = ""
    if kind == "lp":
        line_style = f' stroke-opacity="{arc.value:.3f}"'
        tip_style = f' fill-opacity="{arc.value:.3f}"'
    elif arc.head_prob is not None and not arc.wrong_head:
        colour = probability_colour(arc.head_prob)
        line_style, tip_style = f' style="stroke:{colour}"', f' style="fill:{colour}"'
    if arc.label_prob is not None and not (arc.wrong_head or arc.wrong_label):
        label_style = f' style="fill:{probability_colour(arc.label_prob)}"'
    overlay = (f'<path class="tree" d="{line}"/>' if kind == "lp" and arc.in_tree else "")
    return (f'<g class="{" ".join(classes)}" data-head="{arc.head}" data-dep="{arc.dep}" '
            f'data-label="{escape(arc.label)}" data-value="{arc.value:.4f}">'
            f'<title>{escape(_tooltip(arc, words))}</title>'
            f'<path class="line" d="{line}"{line_style}/>'
            f'<path class="tip" d="{tip}"{tip_style}/>{overlay}'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{top - 3 if arc.head == 0 else top + 4:.1f}"'
            f'{label_style}>{escape(arc_text(arc))}</text></g>')


def probability_colour(p: float) -> str:
    """Red (0) through amber to green (1)."""
    return f"hsl({120.0 * min(max(p, 0.0), 1.0):.0f},75%,36%)"


def _tooltip(arc: Arc, words: Words) -> str:
    """What an arc's tooltip says: label, words, and what its marks mean."""
    head = "ROOT" if arc.head == 0 else words.forms[arc.head - 1]
    lines = [f"{arc.label or 'arc'}: {head} ({arc.head}) -> {words.forms[arc.dep - 1]} "
             f"({arc.dep})"]
    if not arc.in_tree or arc.value < 1.0:
        lines.append(f"LP value {arc.value:.4f}" + ("" if arc.in_tree else
                                                    ", not in the rounded tree"))
    if arc.head_prob is not None:
        lines.append(f"P(head) {arc.head_prob:.4f}, P(label | arc) {arc.label_prob:.4f}")
    if arc.nonprojective:
        lines.append("non-projective")
    if arc.differs:
        lines.append("differs from the best tree")
    if arc.wrong_head or arc.wrong_label:
        gold = "ROOT" if arc.gold_head == 0 else words.forms[arc.gold_head - 1]
        lines.append(f"gold: {arc.gold_label} from {gold} ({arc.gold_head})")
    return "\n".join(lines)
