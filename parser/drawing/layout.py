"""Where words and arcs go: pure geometry, in SVG user units (pixels).

Words stand in one line, each in a column wide enough for its form and its UPOS, and
the columns of two neighbours far enough apart for the label of an arc between them.
Arcs are drawn above the words as a box open at the bottom; an arc's height is its
*level*, one more than the highest level of the arcs whose span lies inside its own, so
that nested arcs never overlap and crossing (non-projective) ones cross visibly. Arcs
from the root come down from above all the others. Long sentences are drawn at full
width; the HTML page scrolls them sideways.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .figure import Arc, Panel, Words

FONT = 14.0
"""Font size of the word forms."""
SMALL = 11.0
"""Font size of UPOS, labels, titles and captions."""
CHAR = 0.62
"""Width of an average character, in ems (a wide East Asian one counts 1 em)."""
WORD_GAP = 18.0
"""Space between the texts of two neighbouring words."""
LABEL_GAP = 10.0
"""Space around the label of an arc between neighbours."""
LEVEL = 18.0
"""Height of one arc level."""
MARGIN = 10.0
"""Space around a panel's drawing."""
HEAD_OFFSET = 5.0
"""An arc leaves its head at least this far from the head's centre, towards the
dependent, so that it does not run into the arc that comes down to the head."""
HEAD_SPREAD = 2.5
"""Between two arcs leaving a head on the same side: the higher one leaves nearer the
centre, so that no arc's leg crosses a lower arc of the same head."""


def text_width(text: str, size: float) -> float:
    """An estimate of the width of ``text`` at font ``size`` (no font is measured: the
    estimate errs wide)."""
    return size * sum(1.0 if unicodedata.east_asian_width(c) in "WF" else CHAR
                      for c in text)


@dataclass(frozen=True)
class Columns:
    """The horizontal place of the words, shared by every panel of a figure: word ``i``
    is centred at ``x[i]`` (``x[0]`` unused); ``width`` is the panel's width."""

    x: np.ndarray
    width: float


def columns(words: Words, panels: Iterable[Panel]) -> Columns:
    """Columns for ``words`` wide enough for each word's form and UPOS, and for the
    label of any arc of ``panels`` between two neighbours."""
    n = len(words)
    half = np.array([0.0] + [max(text_width(form, FONT), text_width(upos, SMALL)) / 2
                             for form, upos in zip(words.forms, words.upos)])
    gap = np.zeros(n + 1)          # gap[i]: least distance between the centres of i, i + 1
    gap[1:] = half[1:] + np.append(half[2:], 0.0) + WORD_GAP
    for panel in panels:
        for arc in panel.arcs:
            if arc.head > 0 and abs(arc.head - arc.dep) == 1:
                left = min(arc.head, arc.dep)
                gap[left] = max(gap[left], text_width(arc_text(arc), SMALL) + LABEL_GAP)
    x = np.zeros(n + 1)
    if n:
        x[1] = MARGIN + half[1]
        x[2:] = x[1] + np.cumsum(gap[1:n])
    return Columns(x, float(x[n] + half[n] + MARGIN) if n else 2 * MARGIN)


def arc_text(arc: Arc) -> str:
    """What is written on an arc: its label (an LP arc outside the tree has none), and
    its LP value where that is fractional."""
    value = "" if arc.value >= 1.0 - 1e-6 else f"{arc.value:.2f}"
    return " ".join(part for part in (arc.label, value) if part)


def levels(arcs: tuple[Arc, ...]) -> np.ndarray:
    """``int (len(arcs),)``: the level of each arc, one more than the highest level of
    the arcs whose span lies strictly inside its own (0 for none); arcs from the root
    get the level above all others."""
    head = np.array([arc.head for arc in arcs], dtype=np.int64)
    dep = np.array([arc.dep for arc in arcs], dtype=np.int64)
    lo, hi = np.minimum(head, dep), np.maximum(head, dep)
    span = np.where(head == 0, 0, hi - lo)
    level = np.zeros(len(arcs), dtype=np.int64)
    for i in np.argsort(span, kind="stable"):
        if head[i] == 0:
            continue
        inside = (head > 0) & (lo >= lo[i]) & (hi <= hi[i]) & (span < span[i])
        if inside.any():
            level[i] = level[inside].max() + 1
    level[head == 0] = level[head > 0].max() + 1 if (head > 0).any() else 0
    return level


def head_offsets(arcs: tuple[Arc, ...], level: np.ndarray) -> np.ndarray:
    """``float (len(arcs),)``: how far from its head's centre each arc leaves it,
    signed towards the dependent (0 for arcs from the root): :data:`HEAD_OFFSET`, plus
    :data:`HEAD_SPREAD` for each arc leaving the same head on the same side at a
    higher level."""
    offset = np.zeros(len(arcs))
    sides: dict[tuple[int, bool], list[int]] = {}
    for i, arc in enumerate(arcs):
        if arc.head > 0:
            sides.setdefault((arc.head, arc.dep > arc.head), []).append(i)
    for (_, right), group in sides.items():
        distinct = sorted({int(level[i]) for i in group}, reverse=True)
        rank = {lv: k for k, lv in enumerate(distinct)}
        sign = 1.0 if right else -1.0
        for i in group:
            offset[i] = sign * (HEAD_OFFSET + HEAD_SPREAD * rank[int(level[i])])
    return offset
