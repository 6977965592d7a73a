"""Where polyparse keeps files between runs: downloads, word clusters and numba's
compiled kernels, all under one per-user cache directory.

Importing this module points numba's cache there (``<cache>/numba``) unless
``NUMBA_CACHE_DIR`` is set. Left to itself, numba writes its cache files next to the
sources whenever that folder is writable, i.e. into ``site-packages`` for an installed
polyparse; ``pip uninstall`` does not know those files, leaves their folders behind,
and Python then imports the leftover folders as empty namespace packages that shadow a
later editable install. The ``__init__`` of each of polyparse's four packages imports
this module, so it runs before any module of theirs defines a ``cache=True`` kernel.

The folder is keyed by a digest of polyparse's sources (:func:`source_digest`). numba
checks a cached kernel against its own file's time stamp only, not against the kernels
it calls from other files: after a change to ``decoders/_factor_kernels.py`` alone, the
cached AD3 loop of ``decoders/_ad3_kernels.py`` went on running the old spanning-tree
code it had compiled in. A new digest gives a new folder, compiled afresh once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def default_cache_dir() -> Path:
    """``$POLYPARSE_CACHE`` if set (and not empty), else ``~/.cache/polyparse``."""
    configured = os.environ.get("POLYPARSE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "polyparse"


PACKAGES = ("corpora", "features", "decoders", "learning", "parser")
"""polyparse's packages, whose sources :func:`source_digest` reads."""


def source_digest(root: Path) -> str:
    """16 hex digits of the SHA-256 of every ``.py`` file of :data:`PACKAGES` under
    ``root`` (its path relative to ``root``, then its bytes, in sorted order)."""
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


if not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = str(default_cache_dir() / "numba"
                                 / source_digest(Path(__file__).resolve().parent.parent))
