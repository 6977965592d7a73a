"""Download Universal Dependencies treebanks into a local cache, verified by SHA-256.

The cache mirrors the remote layout: ``cache_dir/<name>/<tag>/<prefix>-ud-<split>.conllu``
(so two release tags never overwrite each other), and ``cache_dir/SHA256SUMS`` records,
in ``sha256sum`` format, the digest of every file downloaded. A cached file is used only
if it still matches its recorded digest; otherwise it is downloaded again.

Downloads stream to a temporary file that replaces the cached one only once complete and
verified (:func:`~corpora.files.atomic_write`), so an interrupted download leaves nothing
behind.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from tqdm import tqdm

from .errors import DownloadError
from .files import atomic_write

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/UniversalDependencies"
DEFAULT_TAG = "r2.15"
URL_TEMPLATE = "{base_url}/{name}/{tag}/{prefix}-ud-{split}.conllu"
SPLITS = ("train", "dev", "test")
MANIFEST = "SHA256SUMS"
CHUNK_BYTES = 1 << 16

#: Known treebanks (repository name -> file prefix). Others need ``prefix=``.
TREEBANKS: dict[str, str] = {
    "UD_English-EWT": "en_ewt",
    "UD_English-GUM": "en_gum",
    "UD_Turkish-IMST": "tr_imst",
    "UD_Danish-DDT": "da_ddt",
    "UD_Dutch-Alpino": "nl_alpino",
    "UD_Slovenian-SSJ": "sl_ssj",
    "UD_Swedish-Talbanken": "sv_talbanken",
    "UD_German-GSD": "de_gsd",
    "UD_French-GSD": "fr_gsd",
    "UD_Spanish-AnCora": "es_ancora",
    "UD_Catalan-AnCora": "ca_ancora",
    "UD_Italian-ISDT": "it_isdt",
    "UD_Portuguese-Bosque": "pt_bosque",
    "UD_Finnish-TDT": "fi_tdt",
    "UD_Norwegian-Bokmaal": "no_bokmaal",
    "UD_Arabic-PADT": "ar_padt",
    "UD_Hindi-HDTB": "hi_hdtb",
    "UD_Chinese-GSD": "zh_gsd",
    "UD_Japanese-GSD": "ja_gsd",
}

_SAFE_COMPONENT = re.compile(r"[A-Za-z0-9_.\-]+")


def treebank_url(name: str, split: str, *, base_url: str = DEFAULT_BASE_URL,
                 tag: str = DEFAULT_TAG, prefix: str | None = None) -> str:
    """The URL of one split of a treebank.

    Examples
    --------
    >>> treebank_url("UD_English-EWT", "dev", base_url="https://example.org", tag="r2.15")
    'https://example.org/UD_English-EWT/r2.15/en_ewt-ud-dev.conllu'
    """
    prefix = _prefix(name, prefix)
    return URL_TEMPLATE.format(base_url=base_url.rstrip("/"), name=name, tag=tag,
                               prefix=prefix, split=split)


def download_treebank(name: str, cache_dir: str | os.PathLike, *,
                      base_url: str = DEFAULT_BASE_URL, tag: str = DEFAULT_TAG,
                      prefix: str | None = None, splits: Sequence[str] = SPLITS,
                      expected_sha256: Mapping[str, str] | None = None,
                      progress: bool = True, timeout: float = 60.0) -> list[Path]:
    """Fetch the splits of a UD treebank into the cache, or find them there.

    Parameters
    ----------
    name:
        Repository name, e.g. ``"UD_English-EWT"``.
    cache_dir:
        Cache root (see :func:`~corpora.cache.default_cache_dir`); files go to
        ``cache_dir/name/tag/``.
    base_url:
        Where repositories are served; a URL is ``{base_url}/{name}/{tag}/{file}``.
    tag:
        Git release tag (or branch) of the treebank repository, e.g. ``"r2.15"``.
    prefix:
        File prefix such as ``"en_ewt"``; needed only for treebanks not in
        :data:`TREEBANKS`.
    splits:
        The splits to fetch. A split the server does not have (HTTP 404) is skipped
        with a warning: many treebanks have no dev or no train set.
    expected_sha256:
        Optional ``{split: hex digest}`` that a file must match, whether cached or
        downloaded; by default a cached file must match the digest recorded in the
        manifest when it was downloaded.
    progress:
        Show a progress bar per file on stderr.
    timeout:
        Seconds to wait for the server before giving up.

    Returns
    -------
    list[Path]
        The local files, in the order of ``splits``, skipping missing splits.

    Raises
    ------
    DownloadError
        On a network or HTTP error (other than 404), a truncated download, a file that
        does not match its expected digest, or when no split at all was found.
    """
    prefix = _prefix(name, prefix)
    for component in (name, tag, prefix):
        if not _SAFE_COMPONENT.fullmatch(component) or component in (".", ".."):
            raise DownloadError(component, "not a valid treebank name, tag or prefix")
    cache_dir = Path(cache_dir)
    directory = cache_dir / name / tag
    created = [folder for folder in (directory, *directory.parents) if not folder.exists()]
    make_cache_dir(directory)
    try:
        return _fetch_splits(name, cache_dir, directory, base_url=base_url, tag=tag,
                             prefix=prefix, splits=splits, expected_sha256=expected_sha256,
                             progress=progress, timeout=timeout)
    except DownloadError:
        remove_empty(created)
        raise


def _fetch_splits(name: str, cache_dir: Path, directory: Path, *, base_url: str, tag: str,
                  prefix: str, splits: Sequence[str],
                  expected_sha256: Mapping[str, str] | None, progress: bool,
                  timeout: float) -> list[Path]:
    """The body of :func:`download_treebank`, once ``directory`` exists."""
    paths = []
    for split in splits:
        path = directory / f"{prefix}-ud-{split}.conllu"
        key = path.relative_to(cache_dir).as_posix()
        expected = (expected_sha256 or {}).get(split) or read_manifest(cache_dir).get(key)
        if is_cached(path, expected):
            paths.append(path)
            continue
        url = treebank_url(name, split, base_url=base_url, tag=tag, prefix=prefix)
        digest = fetch_url(url, path, expected, progress=progress, timeout=timeout)
        if digest is None:
            logger.warning("%s has no %s split at %s (HTTP 404 for %s); skipped",
                           name, split, tag, url)
            continue
        record(cache_dir, key, digest)
        paths.append(path)
    if not paths:
        raise DownloadError(treebank_url(name, splits[0], base_url=base_url, tag=tag,
                                         prefix=prefix),
                            f"no split of {name} found at {tag} (check the name and the tag)")
    return paths


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _prefix(name: str, prefix: str | None) -> str:
    """``prefix``, or the known prefix of treebank ``name``."""
    if prefix is not None:
        return prefix
    if name not in TREEBANKS:
        raise DownloadError(name, "unknown treebank: pass its file prefix (e.g. prefix="
                                  "'en_ewt'), or use one of " + ", ".join(sorted(TREEBANKS)))
    return TREEBANKS[name]


def make_cache_dir(directory: Path) -> None:
    """Create ``directory`` (and its parents) if needed; a :class:`DownloadError` if not
    possible."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DownloadError(str(directory), f"cannot create the cache: {error.strerror}") from None


def remove_empty(folders: Sequence[Path]) -> None:
    """Remove ``folders``, deepest first, where they are empty: those a failed download
    created, so that it leaves nothing in the cache."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:             # not empty (or gone): a file made since is kept
            return


def is_cached(path: Path, expected: str | None) -> bool:
    """Whether ``path`` exists and matches ``expected`` (warns when it does not)."""
    if not path.exists():
        return False
    if expected is None:
        logger.warning("%s has no recorded SHA-256; downloading it again", path)
        return False
    actual = sha256_file(path)
    if actual != expected:
        logger.warning("%s is corrupted (SHA-256 %s, expected %s); downloading it again",
                       path, actual, expected)
        return False
    return True


def fetch_url(url: str, path: Path, expected: str | None, *, progress: bool,
           timeout: float) -> str | None:
    """Download ``url`` to ``path``, verifying it; its SHA-256, or None on HTTP 404."""
    request = urllib.request.Request(url, headers={"User-Agent": "polyparse"})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise DownloadError(url, f"HTTP error {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise DownloadError(url, f"cannot connect: {error.reason}") from None
    except (OSError, http.client.HTTPException) as error:
        raise DownloadError(url, f"cannot connect: {error}") from None
    with response:
        try:
            return _save(response, url, path, expected, progress)
        except (OSError, http.client.HTTPException) as error:
            raise DownloadError(url, f"download failed: {error}") from None


def _save(response: http.client.HTTPResponse, url: str, path: Path, expected: str | None,
          progress: bool) -> str:
    """Stream ``response`` to ``path`` (atomically) while hashing it; return the digest."""
    total = response.length
    digest = hashlib.sha256()
    size = 0
    with atomic_write(path, "wb") as file, tqdm(
            total=total, desc=path.name, unit="B", unit_scale=True, unit_divisor=1024,
            disable=not progress) as bar:
        while chunk := response.read(CHUNK_BYTES):
            digest.update(chunk)
            file.write(chunk)
            size += len(chunk)
            bar.update(len(chunk))
        if total is not None and size != total:
            raise DownloadError(url, f"connection closed after {size} of {total} bytes")
        if expected is not None and digest.hexdigest() != expected:
            raise DownloadError(url, f"SHA-256 mismatch: got {digest.hexdigest()}, "
                                     f"expected {expected}")
    return digest.hexdigest()


def read_manifest(cache_dir: Path) -> dict[str, str]:
    """``{relative path: hex digest}`` from ``cache_dir/SHA256SUMS`` (empty if absent)."""
    try:
        text = (cache_dir / MANIFEST).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    entries = {}
    for line in text.splitlines():
        digest, _, name = line.partition(" ")
        if name:
            entries[name[1:]] = digest  # "<digest>  <name>", or " *<name>" (binary mode)
    return entries


def record(cache_dir: Path, key: str, digest: str) -> None:
    """Add or update one manifest entry (rewriting the manifest atomically)."""
    entries = read_manifest(cache_dir)
    entries[key] = digest
    with atomic_write(cache_dir / MANIFEST) as file:
        file.writelines(f"{entries[name]}  {name}\n" for name in sorted(entries))
