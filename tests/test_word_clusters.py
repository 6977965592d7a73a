"""Word-cluster files (corpora.word_clusters): Liang's paths format, spaCy's tables, and
reading them from spaCy's lookups data, installed (a stand-in package here)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from polyparse.corpora.errors import CorpusError
from polyparse.corpora.word_clusters import (SPACY_PACKAGE, ClusterTable, read_word_clusters,
                                             spacy_clusters, spacy_word_clusters,
                                             write_word_clusters)
from polyparse.parser.cli import main


def test_read_accepts_liang_paths_with_and_without_counts(tmp_path: Path) -> None:
    path = tmp_path / "paths"
    path.write_text("0010\tthe\t1021\n0011\ta\t870\n\n110\tdog\n", encoding="utf-8")
    assert read_word_clusters(path) == {"the": "0010", "a": "0011", "dog": "110"}


def test_words_are_looked_up_as_written_then_lowercased() -> None:
    table = ClusterTable.of({"Dog": "01", "cat": "0110", "x": "1" * 64})
    paths, lengths = table.lookup(["Dog", "dog", "Cat", "cat", "bird", "X"])
    assert lengths.tolist() == [2, -1, 4, 4, -1, 64]
    assert paths.tolist() == [0b10, 0, 0b0110, 0b0110, 0, 2**64 - 1]   # first bit in bit 0
    again = ClusterTable.from_arrays(table.to_arrays())
    assert [a.tolist() for a in again.lookup(["cat", "Dog"])] == [[0b0110, 0b10], [4, 2]]


def test_damaged_cluster_arrays_are_refused() -> None:
    arrays = ClusterTable.of({"a": "0", "b": "1", "c": "01"}).to_arrays()
    with pytest.raises(ValueError, match="sorted"):
        ClusterTable.from_arrays(dict(arrays, keys=arrays["keys"][::-1]))
    with pytest.raises(ValueError, match="shapes"):
        ClusterTable.from_arrays(dict(arrays, lengths=np.ones(2)))


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
# spaCy's lookups data, installed: a stand-in package on the import path.

TABLE = {"the": int("0010"[::-1], 2), "dog": int("110"[::-1], 2), "unclustered": 0}


@pytest.fixture
def lookups(tmp_path_factory, monkeypatch):
    """A stand-in for the installed ``spacy_lookups_data`` with English clusters only,
    and a German table that is not gzip."""
    root = tmp_path_factory.mktemp("site")
    data = root / SPACY_PACKAGE / "data"
    data.mkdir(parents=True)
    (root / SPACY_PACKAGE / "__init__.py").write_text("")
    (data / "en_lexeme_cluster.json.gz").write_bytes(gzip.compress(json.dumps(TABLE).encode()))
    (data / "es_lexeme_cluster.json.gz").write_bytes(b"not gzip")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, SPACY_PACKAGE, raising=False)
    return root


def test_clusters_are_written_once_from_the_installed_package(lookups, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = spacy_word_clusters("en", cache)
    assert path == cache / "clusters" / "en-brown.paths"
    assert read_word_clusters(path) == {"the": "001", "dog": "11"}
    written = path.stat().st_mtime_ns
    assert spacy_word_clusters("en", cache) == path and path.stat().st_mtime_ns == written
    path.write_text("0\tchanged\n")           # a damaged cache file is written again
    spacy_word_clusters("en", cache)
    assert "dog" in read_word_clusters(path)


def test_cluster_failures_are_clear_errors(lookups, tmp_path: Path, monkeypatch) -> None:
    for lang, problem in (("de", "no word clusters for language 'de'"),
                          ("es", "not a readable spaCy table"),
                          ("../en", "not a language code")):
        with pytest.raises(CorpusError, match=problem):
            spacy_word_clusters(lang, tmp_path)
    assert not (tmp_path / "clusters" / "de-brown.paths").exists()
    monkeypatch.setitem(sys.modules, SPACY_PACKAGE, None)   # not importable, if installed too
    with pytest.raises(CorpusError, match=r"not installed: pip install 'polyparse\[clusters\]'"):
        spacy_word_clusters("en", tmp_path)


def test_cli_clusters_prints_the_path(lookups, tmp_path: Path, capsys) -> None:
    assert main(["-q", "clusters", "en", "--cache", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "clusters" / "en-brown.paths")
    assert main(["-q", "clusters", "xx", "--cache", str(tmp_path)]) == 2


def test_a_language_s_clusters_are_the_default_where_installed(lookups, tmp_path, monkeypatch,
                                                                 caplog) -> None:
    from polyparse.parser.cli import build_parser
    from polyparse.parser.cli.train import word_clusters

    def resolved(*argv: str, lang: str | None = "en"):
        args = build_parser().parse_args(["train", "--train", "t.conllu", "--model", "m.npz",
                                          "--cache", str(tmp_path), *argv])
        return word_clusters(args, lang)

    # where they will be written once the options are checked
    assert resolved() == (str(tmp_path / "clusters" / "en-brown.paths"), "en")
    assert resolved("--word-clusters", "mine.paths") == ("mine.paths", None)  # given: it wins
    assert resolved("--no-word-clusters") == (None, None)
    assert resolved(lang="tr") == resolved(lang=None) == (None, None)    # none in spaCy's
    monkeypatch.setitem(sys.modules, SPACY_PACKAGE, None)                # not installed
    assert resolved() == (None, None)
    assert "pip install 'polyparse[clusters]' adds them" in caplog.text
    assert list(tmp_path.iterdir()) == []
