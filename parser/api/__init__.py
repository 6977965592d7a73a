"""polyparse: a non-arc-factored dependency parser (ILP, LP relaxation + MST rounding).

The Python API in one call: :func:`load` a model file, call the parser on text.

>>> import polyparse                                           # doctest: +SKIP
>>> parser = polyparse.load("sample.npz")                      # doctest: +SKIP
>>> doc = parser("Dogs bark. Cats sleep.")                     # doctest: +SKIP
>>> for sentence in doc.sentences:                             # doctest: +SKIP
...     print(sentence.forms[1:], sentence.heads[1:], sentence.deprels[1:])
>>> print(doc.to_conllu())                                     # doctest: +SKIP

The names below are imported when first used (PEP 562), so that ``import
polyparse.corpora`` does not load the parser. This file is the package ``polyparse``
(pyproject.toml maps it from ``parser/api``); ``polyparse.corpora``, ``.features``,
``.decoders``, ``.learning`` and ``.parser`` are the project's folders. docs/api.md
describes every public name.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from polyparse.corpora.document import Document
    from polyparse.corpora.sentence import Sentence
    from polyparse.decoders.base import Certificate, DecodeStats
    from polyparse.parser.config import TrainConfig
    from polyparse.parser.constraints import Constraints
    from polyparse.parser.pipeline import Parser

__all__ = ["Certificate", "Constraints", "DecodeStats", "Document", "Parser", "Sentence",
           "TrainConfig", "load"]

_HOMES = {
    "Certificate": "polyparse.decoders.base",
    "Constraints": "polyparse.parser.constraints",
    "DecodeStats": "polyparse.decoders.base",
    "Document": "polyparse.corpora.document",
    "Parser": "polyparse.parser.pipeline",
    "Sentence": "polyparse.corpora.sentence",
    "TrainConfig": "polyparse.parser.config",
}
"""Where each public name lives."""


def load(path: str | os.PathLike) -> Parser:
    """The parser of a model file (:meth:`Parser.load`): call it on text for a
    :class:`Document`; :class:`~parser.model_file.ModelFileError` for a file that is not
    a polyparse model."""
    from polyparse.parser.pipeline import Parser

    return Parser.load(path)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'polyparse' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
