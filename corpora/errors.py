"""Errors about input data, reported as ``file:line: problem``.

The command line prints a :class:`CorpusError` as is (no traceback) and exits with
status 2, so the message alone must tell the user what to fix and where.
"""

from __future__ import annotations


class CorpusError(Exception):
    """A problem in a treebank file (or in fetching one), located by file and line.

    Parameters
    ----------
    path:
        File name (or URL, or ``"<stdin>"``) the problem is in.
    line:
        1-based line number, or ``None`` when the problem concerns the whole file.
    message:
        What is wrong, phrased so that the user can fix it.

    Examples
    --------
    >>> str(CorpusError("train.conllu", 12, "expected 10 tab-separated columns, found 9"))
    'train.conllu:12: expected 10 tab-separated columns, found 9'
    >>> str(CorpusError("train.conllu", None, "no sentences found"))
    'train.conllu: no sentences found'
    """

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"

    def __reduce__(self):
        # Exceptions pickle as ``cls(*args)``; ours take three arguments (multiprocessing).
        return type(self), (self.path, self.line, self.message)


class DownloadError(CorpusError):
    """Fetching a treebank (or word clusters) failed; ``path`` is the URL (or cached
    file), ``line`` is None."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, None, message)

    def __reduce__(self):
        return type(self), (self.path, self.message)
