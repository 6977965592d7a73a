"""Brown word clusters (Brown et al. 1992): read and written in Liang's ``paths`` format,
and the English (or German, Spanish) clusters that spaCy distributes, read from its
installed lookups data.

A Brown clustering is a binary tree over the words of a large unlabelled text; a word's
*bit string* is its path from the root (``0`` left, ``1`` right), so every prefix of it
names a coarser cluster. Koo, Carreras and Collins (2008) use the prefixes as parser
features, Turian, Ratinov and Bengio (2010) as tagger features: they carry what the
unlabelled text says about words that the treebank has rarely or never seen.

The ``paths`` format is what Liang's ``wcluster`` (2005) writes, one word per line::

    <bit string> TAB <word> [TAB <count>]

References
----------
- P. Brown, V. Della Pietra, P. deSouza, J. Lai, R. Mercer. Class-based n-gram models of
  natural language. Computational Linguistics 18(4), 1992.
- P. Liang. Semi-supervised learning for natural language. MIT MEng thesis, 2005.
- T. Koo, X. Carreras, M. Collins. Simple semi-supervised dependency parsing. ACL 2008.
- J. Turian, L. Ratinov, Y. Bengio. Word representations: a simple and general method
  for semi-supervised learning. ACL 2010.
"""

from __future__ import annotations

import gzip
import importlib.resources
import importlib.util
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import download
from ._hashing import sorted_lookup, string_hashes
from .errors import CorpusError
from .files import atomic_write

logger = logging.getLogger(__name__)

MAX_BITS = 64
"""Longest bit string kept (the tagger packs one into 64 bits)."""

SPACY_PACKAGE = "spacy_lookups_data"
"""spaCy's lookups data (``spacy-lookups-data`` 1.0.5, MIT licence; the optional extra
``polyparse[clusters]``), whose ``<lang>_lexeme_cluster`` tables hold the Brown
clusters of spaCy's earlier models."""
SPACY_TABLE = "data/{lang}_lexeme_cluster.json.gz"
SPACY_LANGUAGES = ("de", "en", "es")
"""The languages whose clusters spaCy's lookups data 1.0.5 holds."""
INSTALL = "pip install 'polyparse[clusters]'"
KEY_SEED = 16
"""Seed of the hashes of a :class:`ClusterTable`'s words (the tagger's since its first
model files with clusters: ``parser.text._tagger_kernels.CLUSTER_SEED``)."""


@dataclass(frozen=True, eq=False)
class ClusterTable:
    """Brown clusters as arrays, for looking words up in a kernel's hot path and for a
    model file (numpy arrays, no pickle).

    Attributes
    ----------
    keys:
        ``uint64 (W,)``, sorted: the hash of each word (:data:`KEY_SEED`).
    paths:
        ``uint64 (W,)``: its bit string packed with the first bit in bit 0, so that
        ``path & (2**k - 1)`` is its ``k``-bit prefix.
    lengths:
        ``int64 (W,)``: the length of its bit string.
    """

    keys: np.ndarray
    paths: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, clusters: "Mapping[str, str] | ClusterTable") -> "ClusterTable":
        """The table of ``{word: bit string}`` (:func:`read_word_clusters`), or
        ``clusters`` itself if it is one."""
        if isinstance(clusters, ClusterTable):
            return clusters
        words = list(clusters)
        keys = string_hashes(words, KEY_SEED)
        order = np.argsort(keys, kind="stable")
        paths = np.array([int(clusters[w][::-1], 2) for w in words], dtype=np.uint64)
        lengths = np.array([len(clusters[w]) for w in words], dtype=np.int64)
        return cls(keys[order], paths[order], lengths[order])

    def __len__(self) -> int:
        return self.keys.shape[0]

    def lookup(self, forms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(paths, lengths)`` of the clusters of ``forms`` (``uint64``, ``int64``),
        each looked up as written, else lowercased; a word in neither form has path 0
        and length -1."""
        rows = np.arange(len(self))
        row = sorted_lookup(self.keys, rows, string_hashes(forms, KEY_SEED), -1)
        missing = np.flatnonzero(row < 0)
        if missing.size:
            row[missing] = sorted_lookup(self.keys, rows, string_hashes(
                [forms[i].lower() for i in missing], KEY_SEED), -1)
        found = row >= 0
        paths = np.where(found, self.paths[row], np.uint64(0)).astype(np.uint64)
        return paths, np.where(found, self.lengths[row], -1).astype(np.int64)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """``{"keys", "paths", "lengths"}``: what :meth:`from_arrays` reads back."""
        return {"keys": self.keys, "paths": self.paths, "lengths": self.lengths}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "ClusterTable":
        keys = np.asarray(arrays["keys"], dtype=np.uint64)
        paths = np.asarray(arrays["paths"], dtype=np.uint64)
        lengths = np.asarray(arrays["lengths"], dtype=np.int64)
        if not keys.shape == paths.shape == lengths.shape or keys.ndim != 1:
            raise ValueError("word-cluster arrays of different shapes")
        if keys.size and (np.any(keys[1:] < keys[:-1]) or lengths.min() < 1
                          or lengths.max() > MAX_BITS):
            raise ValueError("word-cluster arrays are not a sorted table of bit strings")
        return cls(keys, paths, lengths)


def read_word_clusters(path: str | os.PathLike) -> dict[str, str]:
    """``{word: bit string}`` from a ``paths`` file.

    Raises :class:`~corpora.errors.CorpusError` naming the file and line of a line that
    does not have 2 or 3 tab-separated columns, a bit string that is empty, not made of
    ``0`` and ``1`` or longer than :data:`MAX_BITS`, a count that is not a number, a word
    listed twice, text that is not UTF-8, or a file without any word.
    """
    clusters: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    try:
        with open(path, "rb") as file:
            for lineno, raw in enumerate(file, 1):
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as error:
                    raise CorpusError(path, lineno, f"not UTF-8 text ({error.reason})") from None
                if not line.strip():
                    continue
                bits, word = _parse_line(line, path, lineno)
                if word in first_seen:
                    raise CorpusError(path, lineno, f"word {word!r} already has a cluster "
                                                    f"(line {first_seen[word]})")
                first_seen[word] = lineno
                clusters[word] = bits
    except FileNotFoundError:
        raise CorpusError(path, None, "no such word-cluster file") from None
    except IsADirectoryError:
        raise CorpusError(path, None, "is a directory, not a word-cluster file") from None
    if not clusters:
        raise CorpusError(path, None, "no word clusters found (expected lines "
                                      "'<bit string> TAB <word> [TAB <count>]')")
    return clusters


def _parse_line(line: str, path, lineno: int) -> tuple[str, str]:
    columns = line.split("\t")
    if len(columns) not in (2, 3):
        raise CorpusError(path, lineno, f"expected 2 or 3 tab-separated columns (bit string, "
                                        f"word, count), found {len(columns)}")
    bits, word = columns[0], columns[1]
    if not bits or set(bits) - {"0", "1"}:
        raise CorpusError(path, lineno, f"bit string {bits!r} is not made of 0 and 1")
    if len(bits) > MAX_BITS:
        raise CorpusError(path, lineno, f"bit string of {len(bits)} bits; at most "
                                        f"{MAX_BITS} are supported")
    if not word:
        raise CorpusError(path, lineno, "empty word")
    if len(columns) == 3 and not columns[2].strip().isdigit():
        raise CorpusError(path, lineno, f"count {columns[2]!r} is not a whole number")
    return bits, word


def write_word_clusters(clusters: Mapping[str, str], path: str | os.PathLike) -> None:
    """Write ``{word: bit string}`` as a ``paths`` file (atomically), sorted by bit string."""
    with atomic_write(path) as file:
        for word, bits in sorted(clusters.items(), key=lambda item: (item[1], item[0])):
            file.write(f"{bits}\t{word}\n")


def spacy_clusters(table: Mapping[str, int]) -> dict[str, str]:
    """``{word: bit string}`` from a spaCy ``lexeme_cluster`` table.

    spaCy stores a bit string as the integer whose binary digits are the string reversed
    (its first bit is bit 0, so that ``cluster & (2**k - 1)`` is its ``k``-bit prefix),
    and 0 for a word without a cluster, which is left out. Trailing zeros of a string
    cannot be told from the integer, and are dropped: a prefix of every length still
    names the same clusters.
    """
    return {word: format(code, "b")[::-1] for word, code in table.items()
            if isinstance(code, int) and code > 0}


def spacy_clusters_path(lang: str, cache_dir: str | os.PathLike) -> Path:
    """Where :func:`spacy_word_clusters` writes the clusters of ``lang`` in
    ``cache_dir``; :class:`~corpora.errors.CorpusError` if ``lang`` is not a language
    code."""
    if not lang.isalpha():
        raise CorpusError(lang, None, "not a language code")
    return Path(cache_dir) / "clusters" / f"{lang}-brown.paths"


def spacy_clusters_installed() -> bool:
    """Whether spaCy's lookups data (:data:`SPACY_PACKAGE`) can be imported."""
    try:
        return importlib.util.find_spec(SPACY_PACKAGE) is not None
    except (ImportError, ValueError):      # ValueError: set to None in sys.modules
        return False


def spacy_word_clusters(lang: str, cache_dir: str | os.PathLike) -> Path:
    """The Brown clusters of language ``lang`` (``"en"``, ``"de"``, ``"es"``) from the
    installed spaCy lookups data (:data:`SPACY_PACKAGE`), as a ``paths`` file in
    ``cache_dir/clusters/``, written unless already there with its recorded digest.

    Raises :class:`~corpora.errors.CorpusError` when the package is not installed (how
    to install it), or has no clusters for ``lang``.
    """
    cache_dir = Path(cache_dir)
    path = spacy_clusters_path(lang, cache_dir)
    key = path.relative_to(cache_dir).as_posix()
    if download.is_cached(path, download.read_manifest(cache_dir).get(key)):
        return path
    try:
        data = importlib.resources.files(SPACY_PACKAGE)
    except ModuleNotFoundError:
        raise CorpusError(SPACY_PACKAGE, None, f"spaCy's lookups data is not installed: "
                                               f"{INSTALL}") from None
    table_file = data.joinpath(SPACY_TABLE.format(lang=lang))
    if not table_file.is_file():
        raise CorpusError(SPACY_PACKAGE, None, f"no word clusters for language {lang!r} "
                                               f"(there are: {', '.join(SPACY_LANGUAGES)})")
    try:
        table = json.loads(gzip.decompress(table_file.read_bytes()))
    except (OSError, EOFError, ValueError) as error:
        raise CorpusError(str(table_file), None, f"not a readable spaCy table ({error})") from None
    clusters = spacy_clusters(table)
    if not clusters:
        raise CorpusError(str(table_file), None, f"no word clusters for language {lang!r}")
    download.make_cache_dir(path.parent)
    write_word_clusters(clusters, path)
    download.record(cache_dir, key, download.sha256_file(path))
    logger.info("%s: %d word clusters of %r", path, len(clusters), lang)
    return path
