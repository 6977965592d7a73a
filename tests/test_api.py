"""The Python API's conventions (issue 44, item 3): ``polyparse.load(path)`` returns the
parser, calling it on text returns a :class:`Document`; the package ``polyparse``
imports its names lazily; every package ships ``py.typed``; docs/api.md names every
public name."""

from __future__ import annotations

import subprocess
import sys

import pytest

import polyparse
from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.document import Document
from polyparse.parser.pipeline import MissingComponentError, Parser

from conftest import REPO, SAMPLE

TEXT = "The baker expects she went into the church. Listen to a soldier!"


@pytest.fixture(scope="module")
def parser(sample_model_path):
    return polyparse.load(sample_model_path)


def test_load_gives_the_parser(parser, sample_model_path):
    assert isinstance(parser, Parser) and parser.path == sample_model_path


def test_calling_the_parser_on_text_gives_its_parsed_sentences(parser):
    doc = parser(TEXT)
    assert isinstance(doc, Document) and doc.text == TEXT
    expected = parser.parse_text(TEXT)
    assert [s.to_text() for s in doc.sentences] == [s.to_text() for s in expected]
    assert len(doc.sentences) == 2
    assert " ".join(s.text for s in doc.sentences) == TEXT
    for sentence in doc.sentences:                 # parsed: a tree over its words
        heads = list(sentence.heads[1:])
        assert heads.count(0) == 1 and all(0 <= h <= len(heads) for h in heads)
        assert all(label != "_" for label in sentence.deprels[1:])


def test_parsed_sentences_carry_the_second_pass_tags(parser):
    tokens = [s for s in parser.tokenize(TEXT)]
    first = [parser.analyze(s).sentence for s in parser.tag(tokens)]
    second = parser.retag_parsed(first)
    parsed = list(parser.parse(tokens, retag=True))
    assert [s.to_text() for s in parsed] == [s.to_text() for s in second]
    assert [list(s.heads) for s in parsed] == [list(s.heads) for s in first]
    assert parser.retagger.options.tree and not parser.tagger.options.tree


def test_a_documents_conllu_reads_back_as_its_sentences(parser, tmp_path):
    doc = parser(TEXT)
    path = tmp_path / "doc.conllu"
    path.write_text(doc.to_conllu(), encoding="utf-8")
    back = list(read_conllu(path))
    assert [(s.forms, list(s.heads), s.deprels) for s in back] == \
        [(s.forms, list(s.heads), s.deprels) for s in doc.sentences]
    assert doc.to_conllu() == "".join(s.to_text() for s in doc.sentences)


def test_the_parser_is_called_on_text_only(parser):
    with pytest.raises(TypeError, match="parse_tokens"):
        parser(["The", "cat", "sat"])


def test_a_model_without_a_tagger_says_so(tmp_path, capsys):
    from polyparse.parser.cli import main

    model = tmp_path / "tagged.npz"
    train = tmp_path / "train.conllu"
    blocks = (SAMPLE / "train.conllu").read_text(encoding="utf-8").split("\n\n")[:40]
    train.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    assert main(["-q", "train", "--train", str(train), "--model", str(model), "--epochs", "1",
                 "--no-tagger", "--no-ud-rules"]) == 0
    with pytest.raises(MissingComponentError, match="this model has no tagger"):
        polyparse.load(model)(TEXT)


def test_public_names_resolve_where_they_live():
    from polyparse.decoders.base import Certificate, DecodeStats
    from polyparse.parser.config import TrainConfig
    from polyparse.parser.constraints import Constraints

    assert (polyparse.Parser, polyparse.Document, polyparse.Certificate,
            polyparse.DecodeStats, polyparse.TrainConfig, polyparse.Constraints) == \
        (Parser, Document, Certificate, DecodeStats, TrainConfig, Constraints)
    assert all(hasattr(polyparse, name) for name in polyparse.__all__)
    assert set(polyparse.__all__) <= set(dir(polyparse))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        polyparse.nothing  # noqa: B018


def test_importing_the_corpora_does_not_load_the_parser():
    code = ("import sys, polyparse.corpora.conllu_io, polyparse\n"
            "print(sorted(m for m in sys.modules if m.startswith('polyparse.')"
            " and m.split('.')[1] != 'corpora'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO.parent).stdout
    assert out.strip() == "[]"


def test_every_package_ships_py_typed():
    tomllib = pytest.importorskip("tomllib")
    setup = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package, folder in setup["package-dir"].items():
        assert (REPO / folder / "py.typed").is_file(), folder
        assert "py.typed" in setup["package-data"][package], package
    assert setup["package-dir"]["polyparse"] == "parser/api"


def test_docs_name_every_public_name():
    api = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    for name in polyparse.__all__:
        assert f"`{name}" in api or f"## {name}" in api, name
    for page in ("docs/usage.md", "README.md"):
        assert "api.md" in (REPO / page).read_text(encoding="utf-8"), page


@pytest.mark.readme
@pytest.mark.parametrize("editable", [False, True], ids=["install", "editable"])
def test_a_fresh_install_imports_load_and_the_subpackages(tmp_path, editable):
    """``pip install .`` and ``pip install -e .`` of a clean clone (minutes: marked
    ``readme``, run by ``.ci/run``)."""
    from test_readme_setup import fresh_clone_and_venv

    where = fresh_clone_and_venv(tmp_path)
    python = str(tmp_path / "venv" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", *(["-e"] if editable else []),
                    str(where["cwd"])], check=True, env=where["env"])
    code = ("import sys, polyparse.corpora\n"
            "assert 'polyparse.parser' not in sys.modules\n"
            "import polyparse, polyparse.parser.cli, polyparse.decoders, polyparse.features\n"
            "import polyparse.learning.trainers, importlib.resources as r\n"
            "print(polyparse.load.__name__, all(r.files(p).joinpath('py.typed').is_file() "
            "for p in ('polyparse', 'polyparse.corpora', 'polyparse.parser')))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                         env=where["env"], cwd=tmp_path).stdout
    assert out.split() == ["load", "True"]
