"""Crash-safe file output."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w",
                 encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open ``path`` for writing so that it is replaced only by a complete file.

    Writes go to a temporary file next to ``path`` (same directory, hence same file
    system); when the ``with`` block ends normally the temporary file is flushed,
    fsynced and renamed over ``path`` with :func:`os.replace`, which is atomic. If the
    block raises (or the process dies), ``path`` keeps its previous content and the
    temporary file is removed (on an exception) or left as a hidden ``.*.tmp`` file
    (on a hard crash), never as a truncated ``path``.

    Parameters
    ----------
    path:
        The file to create or replace. Its directory must exist.
    mode:
        ``"w"`` (text) or ``"wb"`` (binary).
    encoding:
        Text encoding, ignored (may be None) in binary mode. Text is written with
        ``newline=""``: ``"\\n"`` and ``"\\r\\n"`` reach the file exactly as given.

    Yields
    ------
    IO
        The open temporary file.

    Examples
    --------
    >>> with atomic_write(tmp_path / "out.conllu") as f:  # doctest: +SKIP
    ...     f.write(text)
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', not {mode!r}")
    path = Path(path)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # O_EXCL: never share a temporary file; mode 0o666 lets the umask decide, as open() does.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        if mode == "wb":
            file = os.fdopen(fd, "wb")
        else:
            file = os.fdopen(fd, "w", encoding=encoding, newline="")
        with file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX; a no-op where directories can't be opened)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
