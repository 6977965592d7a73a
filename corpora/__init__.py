"""Sentences, the CoNLL-U/CoNLL-X reader and writer, plain text, downloads.

Each of polyparse's four packages imports :mod:`corpora.cache` in its ``__init__``, which
points numba's cache away from the installed sources before any kernel is defined.
"""

from . import cache  # noqa: F401
