"""A treebank's plain text, as UD's ``conllu_to_text.pl`` writes it: the raw text that a
tokenizer is trained on and that raw-text benchmarks parse."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

from polyparse.corpora.alignment import sentence_tokens
from polyparse.corpora.sentence import Sentence

_NEW_PARAGRAPH = re.compile(r"^#\s*new(par|doc)\b")


def raw_text(sentences: Iterable[Sentence], width: int | None = 80) -> str:
    """The plain text of a treebank, as the UD tool ``conllu_to_text.pl`` writes it.

    The ``# text`` of the sentences of a paragraph are joined by a space; a new
    paragraph or document (``# newpar``, ``# newdoc``) begins after a blank line.
    With ``width``, paragraphs are wrapped at spaces into lines of about that length.
    A sentence without ``# text`` is rebuilt from its tokens and ``SpaceAfter=No``.
    """
    paragraphs: list[list[str]] = []
    for sentence in sentences:
        if starts_paragraph(sentence) or not paragraphs:
            paragraphs.append([])
        paragraphs[-1].append(sentence_text(sentence))
    if width is None:
        return "\n\n".join(" ".join(p) for p in paragraphs) + "\n"
    return "\n\n".join(textwrap.fill(" ".join(p), width, break_long_words=False,
                                     break_on_hyphens=False) for p in paragraphs) + "\n"


def starts_paragraph(sentence: Sentence) -> bool:
    """Whether a comment line of ``sentence`` opens a paragraph or a document
    (``# newpar``, ``# newdoc``)."""
    for line in sentence.lines:
        if not line.startswith("#"):
            return False
        if _NEW_PARAGRAPH.match(line):
            return True
    return False


def sentence_text(sentence: Sentence) -> str:
    """The ``# text`` of ``sentence``, or its tokens joined as ``SpaceAfter`` says."""
    if sentence.text is not None:
        return sentence.text
    return "".join(t.form + (" " if t.space_after else "")
                   for t in sentence_tokens(sentence)).rstrip()
