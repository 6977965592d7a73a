"""A parsed text: the text and its sentences, what calling a parser on text returns."""

from __future__ import annotations

import io
from dataclasses import dataclass

from .conllu_io import write_conllu
from .sentence import Sentence

__all__ = ["Document"]


@dataclass(frozen=True)
class Document:
    """A text and the sentences it was cut into, each tokenized, tagged and parsed.

    Attributes
    ----------
    text:
        The text as given.
    sentences:
        Its sentences in order, each with its ``# sent_id`` and ``# text``: ``forms``,
        ``upos``, ``heads``, ``deprels``, ... (index 0 is the root).
    """

    text: str
    sentences: tuple[Sentence, ...]

    def to_conllu(self) -> str:
        """The sentences as one CoNLL-U text (:func:`~corpora.conllu_io.write_conllu`)."""
        buffer = io.StringIO()
        write_conllu(self.sentences, buffer)
        return buffer.getvalue()
