"""Crash-safe file output."""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .signals import block_stop_signals, unblock_stop_signals

_UNFINISHED: dict[Path, int] = {}
"""The temporary files of :func:`atomic_write` (and folders of :func:`atomic_directory`)
not yet renamed or removed, with the process that made each (a forked child must not
remove its parent's)."""


def remove_unfinished() -> None:
    """Remove this process's temporary output files that are still there: what a stop
    signal landing between two statements of :func:`atomic_write`'s clean-up could leave.
    The command line calls it when a run ends, whatever the way it ends; it runs at exit
    too."""
    mask = block_stop_signals()
    try:
        for temp, pid in list(_UNFINISHED.items()):
            if pid == os.getpid():
                _remove(temp)
                _UNFINISHED.pop(temp, None)
    finally:
        unblock_stop_signals(mask)


atexit.register(remove_unfinished)


class OutputError(OSError):
    """An output file that cannot be written; ``str()`` names the file as the user gave it
    (not the temporary file) and the reason."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        super().__init__(f"{os.fspath(path)}: cannot write: {reason}")


def check_writable(path: str | os.PathLike, *, folder: str | None = None) -> None:
    """Raise :class:`OutputError` unless :func:`atomic_write` can create ``path``: its
    directory exists and this process may create files in it, and ``path`` is not a
    directory. Meant to be called before long work whose result goes to ``path``.

    With ``folder`` (a regular expression), ``path`` is a folder that
    :func:`atomic_directory` is to write, holding files whose names match ``folder``:
    if it exists it must be a directory holding no other file, which replacing it would
    lose.
    """
    path = Path(path)
    directory = path.parent
    if folder is not None:
        if path.exists() and not path.is_dir():
            raise OutputError(path, "it is not a directory")
        if path.is_dir():
            others = sorted(p.name for p in path.iterdir() if not re.fullmatch(folder, p.name))
            if others:
                raise OutputError(path, f"it holds {len(others)} file(s) that this command "
                                        f"does not write ({', '.join(others[:3])}"
                                        f"{', ...' if len(others) > 3 else ''}), which "
                                        "replacing it would lose; give a new or empty folder")
    elif path.is_dir():
        raise OutputError(path, "it is a directory")
    if not directory.is_dir():
        problem = "is not a directory" if directory.exists() else "does not exist"
        raise OutputError(path, f"the directory {directory} {problem}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(path, f"no permission to create files in {directory}")


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w",
                 encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open ``path`` for writing so that it is replaced only by a complete file.

    Writes go to a temporary file next to ``path`` (same directory, hence same file
    system); when the ``with`` block ends normally the temporary file is flushed,
    fsynced and renamed over ``path`` with :func:`os.replace`, which is atomic. If the
    block raises (a :class:`~corpora.signals.Stopped` signal included), ``path`` keeps its
    previous content and the temporary file is removed; only a hard crash (SIGKILL, power
    loss) leaves it, as a hidden ``.*.tmp`` file, never as a truncated ``path``.

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

    Raises
    ------
    OutputError
        When the temporary file cannot be created, written or renamed (a missing
        directory, no permission, a full disk), naming ``path``.

    Examples
    --------
    >>> with atomic_write(tmp_path / "out.conllu") as f:  # doctest: +SKIP
    ...     f.write(text)
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', not {mode!r}")
    path = Path(path)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # A stop signal is held back until the ``try`` that removes the file is entered.
    mask = block_stop_signals()
    # Registered before it exists: a stop landing anywhere from here to the ``try``
    # below, where blocking cannot hold it back (another thread took the signal), leaves
    # a file that remove_unfinished knows of.
    _UNFINISHED[temp] = os.getpid()
    try:
        # O_EXCL: never share a temporary file; mode 0o666 lets the umask decide.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666)
    except OSError as error:
        _UNFINISHED.pop(temp, None)
        unblock_stop_signals(mask)
        raise OutputError(path, error.strerror) from None
    except BaseException:
        temp.unlink(missing_ok=True)
        _UNFINISHED.pop(temp, None)
        unblock_stop_signals(mask)
        raise
    try:
        unblock_stop_signals(mask)
        if mode == "wb":
            file = os.fdopen(fd, "wb")
        else:
            file = os.fdopen(fd, "w", encoding=encoding, newline="")
        with file:
            yield file
            _finish(file, path)
        _replace(temp, path)
        _UNFINISHED.pop(temp, None)
    except BaseException:
        mask = block_stop_signals()      # a second Ctrl-C must not leave the file behind
        try:
            temp.unlink(missing_ok=True)
            _UNFINISHED.pop(temp, None)
        finally:
            unblock_stop_signals(mask)
        raise
    _fsync_directory(path.parent)


@contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """A folder that replaces ``path`` only when complete, as :func:`atomic_write` does
    for a file.

    Files are written into a temporary folder next to ``path``; when the ``with`` block
    ends normally, ``path`` (if it exists) is moved aside, the temporary folder is
    renamed to ``path`` and the old one removed, stop signals held back meanwhile. If the
    block raises (a :class:`~corpora.signals.Stopped` signal included), ``path`` keeps
    its previous content and the temporary folder is removed; only a hard crash leaves
    one, as a hidden ``.*.tmp`` folder. Check ``path`` first with
    :func:`check_writable` and its ``folder`` argument: the old ``path`` is replaced
    whole.

    Yields
    ------
    Path
        The temporary folder.
    """
    path = Path(path)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    mask = block_stop_signals()
    _UNFINISHED[temp] = os.getpid()
    try:
        os.mkdir(temp)
    except OSError as error:
        _UNFINISHED.pop(temp, None)
        unblock_stop_signals(mask)
        raise OutputError(path, error.strerror) from None
    try:
        unblock_stop_signals(mask)
        yield temp
        mask = block_stop_signals()
        try:
            _swap(temp, path)
            _UNFINISHED.pop(temp, None)
        finally:
            unblock_stop_signals(mask)
    except BaseException:
        mask = block_stop_signals()
        try:
            _remove(temp)
            _UNFINISHED.pop(temp, None)
        finally:
            unblock_stop_signals(mask)
        raise
    _fsync_directory(path.parent)


def _swap(temp: Path, path: Path) -> None:
    """Rename the folder ``temp`` to ``path``, removing the folder ``path`` was; on a
    failure ``path`` is as it was (an :class:`OutputError` naming it)."""
    old = path.with_name(f".{path.name}.{secrets.token_hex(4)}.old")
    try:
        if path.exists():
            os.replace(path, old)
        try:
            os.replace(temp, path)
        except OSError:
            if old.exists():
                os.replace(old, path)
            raise
    except OSError as error:
        raise OutputError(path, error.strerror) from None
    _remove(old)


def _remove(path: Path) -> None:
    """Remove a temporary file or folder, if it is there."""
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _finish(file: IO, path: Path) -> None:
    """Flush ``file`` to the disk; a failure (a full disk) is an :class:`OutputError`."""
    try:
        file.flush()
        os.fsync(file.fileno())
    except OSError as error:
        raise OutputError(path, error.strerror) from None


def _replace(temp: Path, path: Path) -> None:
    try:
        os.replace(temp, path)
    except OSError as error:
        raise OutputError(path, error.strerror) from None


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX; a no-op where directories can't be opened)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
