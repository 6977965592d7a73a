"""Shared fixtures: the sample treebank and a parser trained on it once per session."""

import os
from pathlib import Path

import pytest

from polyparse.corpora.conllu_io import read_treebank

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "corpora" / "sample"
UD = Path(os.environ.get("POLYPARSE_UD") or REPO.parent / "shared" / "ud")
"""The shared UD treebanks: ``$POLYPARSE_UD``, else ``shared/ud`` next to the repository."""


@pytest.fixture(scope="session")
def sample_train():
    return read_treebank(SAMPLE / "train.conllu")


@pytest.fixture(scope="session")
def sample_dev():
    return read_treebank(SAMPLE / "dev.conllu")


@pytest.fixture(scope="session")
def sample_model_path(tmp_path_factory):
    """A model trained on the sample by the CLI (3 epochs), shared by the CLI tests."""
    from polyparse.parser.cli import main

    path = tmp_path_factory.mktemp("model") / "sample.npz"
    assert main(["-q", "train", "--train", str(SAMPLE / "train.conllu"), "--model", str(path),
                 "--epochs", "3", "--bits", "20", "--label-bits", "14"]) == 0
    return path


def ud_file(name: str, split: str = "train") -> Path:
    """A shared UD treebank file, or skip the test when the shared folder is absent."""
    path = UD / name / f"{split}.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path
