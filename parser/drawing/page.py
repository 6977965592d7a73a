"""Figures on an HTML page: the panels of a row side by side (scrolling sideways when
they are wider than the window), one section per sentence, the style sheets and a
legend once at the top. The page is written in pieces (:func:`page_start`, one
:func:`figure_html` per sentence, :func:`page_end`), so that a file of any size is
drawn without holding it.
"""

from __future__ import annotations

from importlib import resources

from .figure import Figure
from .layout import columns
from .svg import STYLE, escape, panel_svg

PAGE_STYLE = STYLE + resources.files(__package__).joinpath("page.css").read_text(
    encoding="utf-8")
"""The drawings' style sheet and the page's."""

LEGEND = (
    '<p class="legend">'
    '<span>arcs point from the head to the dependent; UPOS under each word; a multiword '
    'token over its words</span>'
    '<span><b style="background:#7b3fa0"></b>non-projective</span>'
    '<span><b style="background:#d0021b"></b>wrong head or label (against --gold)</span>'
    '<span><b style="background:#e07000"></b>differs from the best tree (k-best)</span>'
    '<span><b style="background:linear-gradient(90deg,hsl(0,75%,36%),hsl(60,75%,36%),'
    'hsl(120,75%,36%))"></b>probability 0 to 1 (confidence)</span>'
    '<span><b style="background:#1f5fbf;opacity:0.5"></b>LP arc, opacity = its value; '
    'dashed: the rounded tree</span></p>')
"""What the marks and colours of a drawing mean."""


def page_start(title: str) -> str:
    """The head of a page of drawings and its heading ``title``."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{escape(title)}</title><style>{PAGE_STYLE}</style></head>'
            f'<body><h1>{escape(title)}</h1>{LEGEND}\n')


def figure_html(figure: Figure) -> str:
    """One sentence's section: its title and its rows of panels, as inline SVG."""
    cols = columns(figure.words, [p for row in figure.rows for p in row])
    rows = "".join('<div class="row">' + "".join(panel_svg(figure.words, cols, panel)[0]
                                                  for panel in row) + "</div>"
                   for row in figure.rows)
    notes = "".join(f'<p class="note">{escape(note)}</p>' for note in figure.notes)
    return (f'<section class="sentence"><h2>{escape(figure.title)}</h2>{notes}{rows}'
            f'</section>\n')


def page_end() -> str:
    return "</body></html>\n"
