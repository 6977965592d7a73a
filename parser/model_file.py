"""Model files: one ``.npz`` of numeric arrays plus a ``metadata`` entry of JSON text.

Loading uses ``numpy.load(allow_pickle=False)``: a model file cannot run code. Saving
writes a temporary file and renames it, so a crash never leaves a half-written model or
destroys the one already on disk.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path

import numpy as np

from polyparse.corpora.files import atomic_write

FORMAT = "polyparse-model"
FORMAT_VERSION = 1
ZIP_MAGIC = b"PK\x03\x04"   # a .npz file is a zip archive


class ModelFileError(Exception):
    """A model file that cannot be read; ``str()`` names the file and the problem."""


@dataclass
class ModelFile:
    """The contents of a model file: JSON-able ``metadata`` and named numpy ``arrays``."""

    metadata: dict
    arrays: dict = field(default_factory=dict)


def package_versions() -> dict:
    versions = {}
    for name in ("polyparse", "numpy", "scipy", "numba", "conllu", "pulp"):
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def save(path: str | Path, contents: ModelFile) -> None:
    """Write ``contents`` atomically to ``path``."""
    meta = dict(contents.metadata, format=FORMAT, format_version=FORMAT_VERSION,
                versions=package_versions())
    buffer = io.BytesIO()
    np.savez(buffer, metadata=np.array(json.dumps(meta)), **contents.arrays)
    with atomic_write(path, mode="wb", encoding=None) as out:
        out.write(buffer.getvalue())


def load(path: str | Path) -> ModelFile:
    """Read a model file written by :func:`save`.

    Any other file, a ``.npz`` of Python objects included, is a :class:`ModelFileError`
    saying that it is not a polyparse model file; nothing in it is unpickled.
    """
    arrays = _read(path, None)
    return ModelFile(_metadata(arrays.pop("metadata", None), path), arrays)


def load_metadata(path: str | Path) -> dict:
    """The metadata of the model file at ``path`` alone, its arrays left unread: what
    the command line checks its options against before it loads a model
    (:class:`ModelFileError` as :func:`load`)."""
    return _metadata(_read(path, "metadata").get("metadata"), path)


def _read(path: str | Path, only: str | None) -> dict:
    """The arrays of the model file at ``path`` (only the one called ``only`` if given
    and present)."""
    try:
        file = open(path, "rb")
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file") from None
    except OSError as error:
        raise ModelFileError(f"{path}: cannot read the model file: {error.strerror}") from None
    with file:
        return _arrays(file, path, only)


def _metadata(stored, path: str | Path) -> dict:
    """The checked metadata of a model file from its ``metadata`` array (None: absent)."""
    if stored is None:
        raise ModelFileError(f"{path}: not a polyparse model file (no metadata entry)")
    try:
        meta = json.loads(str(stored))
    except json.JSONDecodeError as error:
        raise ModelFileError(f"{path}: damaged model metadata ({error})") from None
    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a polyparse model file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{path}: model format version {meta.get('format_version')} is "
                             f"not supported (this polyparse reads version {FORMAT_VERSION})")
    return meta


def _arrays(file, path: str | Path, only: str | None = None) -> dict:
    """The arrays of the open ``.npz`` ``file`` (only the one called ``only`` if given);
    numpy's own messages are not passed on, as some of them advise loading the file with
    pickle."""
    if file.read(len(ZIP_MAGIC)) != ZIP_MAGIC:
        raise ModelFileError(f"{path}: not a polyparse model file (not a .npz archive)")
    file.seek(0)
    try:
        with np.load(file, allow_pickle=False) as npz:
            return {key: npz[key] for key in npz.files if only in (None, key)}
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise ModelFileError(f"{path}: not a polyparse model file (it holds Python "
                                 "objects, which polyparse never loads)") from None
        raise ModelFileError(f"{path}: not a polyparse model file (an array in it cannot "
                             "be read)") from None
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise ModelFileError(f"{path}: damaged model file ({error})") from None
