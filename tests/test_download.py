"""Downloading treebanks (corpora.download) from a local HTTP server laid out like GitHub."""

from __future__ import annotations

import hashlib
import logging
import socket
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from polyparse.corpora.cache import default_cache_dir
from polyparse.corpora.download import DEFAULT_TAG, MANIFEST, download_treebank, treebank_url
from polyparse.corpora.errors import CorpusError, DownloadError

from conftest import UD  # noqa: E402  (the shared treebanks, $POLYPARSE_UD)
TAG = "r9.9"
NAME = "UD_Turkish-IMST"
SPLITS = {"train": UD / "tr_imst" / "train.conllu", "dev": UD / "tr_imst" / "dev.conllu"}


class Handler(SimpleHTTPRequestHandler):
    """Serves the directory; records request paths; two paths simulate failures."""

    requests: list[str]

    def do_GET(self) -> None:
        self.requests.append(self.path)
        if self.path.startswith("/UD_Broken-X/"):
            self.send_error(500, "Internal Server Error")
        elif self.path.startswith("/UD_Truncated-X/"):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"# sent_id = 1\n")
        else:
            super().do_GET()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """``(base_url, requests)`` of a server holding tr_imst train and dev (no test)."""
    if not all(path.exists() for path in SPLITS.values()):
        pytest.skip(f"no treebanks under {UD}")
    root = tmp_path_factory.mktemp("remote")
    directory = root / NAME / TAG
    directory.mkdir(parents=True)
    for split, source in SPLITS.items():
        (directory / f"tr_imst-ud-{split}.conllu").symlink_to(source)
    requests: list[str] = []
    handler = type("RecordingHandler", (Handler,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def fetch(remote, cache: Path, name: str = NAME, **kwargs) -> list[Path]:
    base_url, _ = remote
    return download_treebank(name, cache, base_url=base_url, tag=TAG,
                             **{"progress": False, **kwargs})


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_download_writes_files_and_manifest(remote, tmp_path: Path, caplog, capsys) -> None:
    with caplog.at_level(logging.WARNING, logger="polyparse.corpora.download"):
        paths = fetch(remote, tmp_path, progress=True)
    directory = tmp_path / NAME / TAG
    assert paths == [directory / "tr_imst-ud-train.conllu", directory / "tr_imst-ud-dev.conllu"]
    for path, source in zip(paths, SPLITS.values()):
        assert path.read_bytes() == source.read_bytes()
    assert "has no test split" in caplog.text and "HTTP 404" in caplog.text
    assert "tr_imst-ud-dev.conllu" in capsys.readouterr().err  # the progress bar
    manifest = (tmp_path / MANIFEST).read_text().splitlines()
    assert manifest == sorted(f"{sha256(source)}  {NAME}/{TAG}/tr_imst-ud-{split}.conllu"
                              for split, source in SPLITS.items())
    assert sorted(p.name for p in directory.iterdir()) == sorted(p.name for p in paths)


def test_cached_files_are_verified_not_downloaded(remote, tmp_path: Path) -> None:
    _, requests = remote
    first = fetch(remote, tmp_path)
    before = len(requests)
    assert fetch(remote, tmp_path, splits=("train", "dev")) == first
    assert len(requests) == before


def test_corrupted_cache_file_is_detected_and_replaced(remote, tmp_path: Path, caplog) -> None:
    _, requests = remote
    train, _ = fetch(remote, tmp_path)
    train.write_bytes(train.read_bytes()[:-100] + b"tampered\n\n")
    before = len(requests)
    with caplog.at_level(logging.WARNING, logger="polyparse.corpora.download"):
        assert fetch(remote, tmp_path, splits=("train",)) == [train]
    assert "is corrupted" in caplog.text
    assert requests[before:] == [f"/{NAME}/{TAG}/tr_imst-ud-train.conllu"]
    assert train.read_bytes() == SPLITS["train"].read_bytes()


def test_expected_sha256(remote, tmp_path: Path) -> None:
    good = {"train": sha256(SPLITS["train"])}
    (train,) = fetch(remote, tmp_path, splits=("train",), expected_sha256=good)
    assert train.read_bytes() == SPLITS["train"].read_bytes()

    with pytest.raises(DownloadError, match="SHA-256 mismatch") as caught:
        fetch(remote, tmp_path / "other", splits=("train",), expected_sha256={"train": "0" * 64})
    assert caught.value.path.endswith("/tr_imst-ud-train.conllu")
    assert not (tmp_path / "other").exists()  # nothing half-written, no empty folders


def test_nothing_found_is_an_error(remote, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="no split of UD_Danish-DDT found at r9.9"):
        fetch(remote, tmp_path, name="UD_Danish-DDT")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_download_keeps_what_the_cache_held(remote, tmp_path: Path) -> None:
    fetch(remote, tmp_path, splits=("train",))
    with socket.socket() as sock:  # a port on which nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(DownloadError, match="cannot connect"):
        download_treebank(NAME, tmp_path, base_url=f"http://127.0.0.1:{port}", tag=TAG,
                          splits=("train", "dev"), progress=False)
    assert sorted(p.name for p in (tmp_path / NAME / TAG).iterdir()) == [
        "tr_imst-ud-train.conllu"]


@pytest.mark.parametrize("name, problem", [
    ("UD_Broken-X", "HTTP error 500"),
    ("UD_Truncated-X", "connection closed after 14 of 1000 bytes"),
])
def test_server_failures(remote, tmp_path: Path, name: str, problem: str) -> None:
    with pytest.raises(DownloadError, match=problem):
        fetch(remote, tmp_path, name=name, prefix="x")
    assert list(tmp_path.iterdir()) == []


def test_network_error_is_a_clear_message(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port on which nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(DownloadError) as caught:
        download_treebank(NAME, tmp_path, base_url=f"http://127.0.0.1:{port}", progress=False)
    assert isinstance(caught.value, CorpusError)  # the CLI reports it like a corpus error
    assert str(caught.value).startswith(f"http://127.0.0.1:{port}/{NAME}/")
    assert "cannot connect" in str(caught.value)
    assert list(tmp_path.iterdir()) == []           # no empty folders left in the cache


def test_unknown_treebank_needs_a_prefix(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="unknown treebank: pass its file prefix"):
        download_treebank("UD_Klingon-QO", tmp_path)
    with pytest.raises(DownloadError, match="not a valid"):
        download_treebank(NAME, tmp_path, tag="../../etc")


def test_urls_and_cache_dir(monkeypatch, tmp_path: Path) -> None:
    assert treebank_url("UD_English-EWT", "train") == (
        "https://raw.githubusercontent.com/UniversalDependencies/UD_English-EWT/"
        f"{DEFAULT_TAG}/en_ewt-ud-train.conllu")
    monkeypatch.setenv("POLYPARSE_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.delenv("POLYPARSE_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / ".cache" / "polyparse"
