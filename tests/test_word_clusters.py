"""Word-cluster files (corpora.word_clusters): Liang's paths format, spaCy's tables, and
fetching them from a local HTTP server that stands in for PyPI."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from polyparse.corpora.errors import CorpusError, DownloadError
from polyparse.corpora.word_clusters import (SPACY_MEMBER, fetch_spacy_clusters, read_word_clusters,
                                             spacy_clusters, write_word_clusters)
from polyparse.parser.cli import main


def test_read_accepts_liang_paths_with_and_without_counts(tmp_path: Path) -> None:
    path = tmp_path / "paths"
    path.write_text("0010\tthe\t1021\n0011\ta\t870\n\n110\tdog\n", encoding="utf-8")
    assert read_word_clusters(path) == {"the": "0010", "a": "0011", "dog": "110"}


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    clusters = {"Dog": "110", "cat": "1110", "ünïcode": "0", "x": "1" * 64}
    write_word_clusters(clusters, tmp_path / "paths")
    assert read_word_clusters(tmp_path / "paths") == clusters


@pytest.mark.parametrize("text, line, problem", [
    ("0\ta\n1 b\n", 2, "expected 2 or 3 tab-separated columns"),
    ("0\ta\t1\textra\n", 1, "expected 2 or 3 tab-separated columns"),
    ("012\ta\n", 1, "is not made of 0 and 1"),
    ("\ta\n", 1, "is not made of 0 and 1"),
    ("1" * 65 + "\ta\n", 1, "at most 64"),
    ("0\t\n", 1, "empty word"),
    ("0\ta\tmany\n", 1, "not a whole number"),
    ("0\ta\n1\tb\n10\ta\n", 3, "already has a cluster (line 1)"),
])
def test_bad_lines_are_named_by_file_and_line(tmp_path: Path, text, line, problem) -> None:
    path = tmp_path / "paths"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CorpusError) as error:
        read_word_clusters(path)
    assert error.value.line == line and problem in str(error.value)
    assert str(error.value).startswith(f"{path}:{line}: ")


def test_unreadable_files_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "latin1").write_bytes(b"0\tcaf\xe9\n")
    (tmp_path / "empty").write_text("\n")
    for name, problem in (("latin1", ":1: not UTF-8"), ("empty", "no word clusters found"),
                          ("absent", "no such word-cluster file")):
        with pytest.raises(CorpusError, match=problem):
            read_word_clusters(tmp_path / name)


def test_spacy_codes_are_reversed_bit_strings() -> None:
    # spaCy keeps int(bits[::-1], 2): the first bit of the path is bit 0.
    table = {"a": int("0110"[::-1], 2), "b": int("1"[::-1], 2), "none": 0, "odd": "x"}
    # the trailing 0 of "0110" cannot be told from the integer: "011" names the same clusters
    assert spacy_clusters(table) == {"a": "011", "b": "1"}


# ---------------------------------------------------------------------------------------
# Fetching spaCy's lookups data from a local server.

TABLE = {"the": int("0010"[::-1], 2), "dog": int("110"[::-1], 2), "unclustered": 0}


def wheel_bytes(members: dict[str, dict]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, table in members.items():
            archive.writestr(member, gzip.compress(json.dumps(table).encode()))
    return buffer.getvalue()


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """``(base_url, requests, sha256 of lookups.whl)`` of a server holding a small
    stand-in for spaCy's lookups wheel (English clusters only) and a file that is no zip."""
    root = tmp_path_factory.mktemp("pypi")
    data = wheel_bytes({SPACY_MEMBER.format(lang="en"): TABLE})
    (root / "lookups.whl").write_bytes(data)
    (root / "broken.whl").write_bytes(b"not a zip file")
    requests: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield (f"http://127.0.0.1:{server.server_address[1]}", requests,
               hashlib.sha256(data).hexdigest())
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_fetch_converts_and_caches(remote, tmp_path: Path) -> None:
    base_url, requests, digest = remote
    url = f"{base_url}/lookups.whl"
    before = len(requests)
    path = fetch_spacy_clusters("en", tmp_path, url=url, sha256=digest, progress=False)
    assert path == tmp_path / "clusters" / "en-brown.paths"
    assert read_word_clusters(path) == {"the": "001", "dog": "11"}
    assert sorted(p.name for p in path.parent.iterdir()) == ["en-brown.paths"]  # no wheel left
    assert fetch_spacy_clusters("en", tmp_path, url=url, sha256=digest, progress=False) == path
    assert len(requests) == before + 1          # the second call used the cache
    path.write_text("0\tchanged\n")             # a damaged cache file is fetched again
    fetch_spacy_clusters("en", tmp_path, url=url, sha256=digest, progress=False)
    assert len(requests) == before + 2 and "dog" in read_word_clusters(path)


def test_fetch_failures_are_clear_errors(remote, tmp_path: Path) -> None:
    base_url, _, digest = remote
    cases = [("en", "lookups.whl", "0" * 64, "SHA-256 mismatch"),
             ("de", "lookups.whl", digest, "no word clusters for language 'de'"),
             ("en", "broken.whl", None, "not a readable spaCy lookups archive"),
             ("en", "missing.whl", None, "not found"),
             ("../en", "lookups.whl", digest, "not a language code")]
    for lang, name, sha256, problem in cases:
        with pytest.raises(DownloadError, match=problem):
            fetch_spacy_clusters(lang, tmp_path, url=f"{base_url}/{name}", sha256=sha256,
                                 progress=False)
    assert not (tmp_path / "clusters" / "en-brown.paths").exists()


def test_cli_download_clusters_prints_the_path(remote, tmp_path: Path, capsys) -> None:
    base_url, _, _ = remote
    assert main(["-q", "download-clusters", "en", "--cache", str(tmp_path),
                 "--url", f"{base_url}/lookups.whl"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "clusters" / "en-brown.paths")
    assert main(["-q", "download-clusters", "xx", "--cache", str(tmp_path),
                 "--url", f"{base_url}/lookups.whl"]) == 2
    assert "no word clusters for language 'xx'" in capsys.readouterr().err
