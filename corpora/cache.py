"""Where polyparse keeps files between runs: downloads, word clusters and numba's
compiled kernels, all under one per-user cache directory.

Importing this module points numba's cache there (``<cache>/numba``) unless
``NUMBA_CACHE_DIR`` is set. Left to itself, numba writes its cache files next to the
sources whenever that folder is writable, i.e. into ``site-packages`` for an installed
polyparse; ``pip uninstall`` does not know those files, leaves their folders behind,
and Python then imports the leftover folders as empty namespace packages that shadow a
later editable install. The ``__init__`` of each of polyparse's four packages imports
this module, so it runs before any module of theirs defines a ``cache=True`` kernel.
"""

from __future__ import annotations

import os
from pathlib import Path

import numba


def default_cache_dir() -> Path:
    """``$POLYPARSE_CACHE`` if set (and not empty), else ``~/.cache/polyparse``."""
    configured = os.environ.get("POLYPARSE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "polyparse"


if not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = str(default_cache_dir() / "numba")
