"""Pictures of dependency trees and of their LP relaxation, as SVG and HTML.

What to draw is a :class:`~parser.drawing.figure.Figure`: the words of a sentence and
rows of panels of arcs (a tree, the k best trees side by side, the arcs of the LP
relaxation); :mod:`~parser.drawing.figure` builds them from sentences,
:mod:`~parser.drawing.layout` places words and arcs, :mod:`~parser.drawing.svg` writes
the SVG and :mod:`~parser.drawing.page` the HTML page. Nothing here knows a model:
:mod:`parser.views` runs the parser for what is drawn.
"""

from .figure import Arc, Figure, Panel, Token, Words, lp_arcs, tree_arcs, words_of
from .page import figure_html, page_end, page_start
from .svg import figure_svg

__all__ = ["Arc", "Figure", "Panel", "Token", "Words", "figure_html", "figure_svg",
           "lp_arcs", "page_end", "page_start", "tree_arcs", "words_of"]
