"""Shared fixtures: the sample treebank and one small model trained on it per session."""

import os
from pathlib import Path

import pytest

from polyparse.corpora.conllu_io import read_treebank

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "corpora" / "sample"
UD = Path(os.environ.get("POLYPARSE_UD") or REPO.parent / "shared" / "ud")
"""The shared UD treebanks: ``$POLYPARSE_UD``, else ``shared/ud`` next to the repository."""

# The suite trains through the command line dozens of times, each with its own setup:
# no rehearsal of the kernels in child processes (parser/warmup.py; tested in
# tests/test_warmup.py).
os.environ.setdefault("POLYPARSE_REHEARSE", "0")

MODEL_SENTENCES = 200
"""The session's model is trained on the first 200 sentences of the sample."""


@pytest.fixture(scope="session")
def sample_train():
    return read_treebank(SAMPLE / "train.conllu")


@pytest.fixture(scope="session")
def sample_dev():
    return read_treebank(SAMPLE / "dev.conllu")


@pytest.fixture(scope="session")
def sample_model_path(tmp_path_factory, sample_train):
    """The one model of the command-line, raw-text and Python-API tests, trained by
    ``polyparse train`` as the README does (tokenizer, tagger, parser, dev scored after
    every epoch, feature spaces sized from the data) but small: the first
    :data:`MODEL_SENTENCES` sentences of the sample, 2 epochs, a tagger of 4 epochs
    jackknifed in 3 folds. Without UD rules (``--no-ud-rules``): the tests of parsing,
    certificates and speed keep their meaning; tests/test_constraints.py tests the rules.
    With the second-pass tagger (``--second-pass``) and the second-stage labeler
    (``--relabel``), so that every way of parsing raw text is tested with them."""
    import fcntl

    from polyparse.parser.cli import main

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent                  # one model for all the workers of a run
    folder = root / "sample-model"
    folder.mkdir(exist_ok=True)
    path = folder / "sample.npz"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)    # the first worker trains, the others wait
        if not path.exists():               # written whole or not at all (model_file)
            train = folder / "train.conllu"
            train.write_text("".join(s.to_text() for s in sample_train[:MODEL_SENTENCES]))
            assert main(["-q", "train", "--train", str(train), "--dev",
                         str(SAMPLE / "dev.conllu"), "--model", str(path), "--epochs", "2",
                         "--jackknife", "3", "--tagger-epochs", "4", "--no-ud-rules",
                         "--second-pass", "--relabel"]) == 0
    return path


def ud_file(name: str, split: str = "train") -> Path:
    """A shared UD treebank file, or skip the test when the shared folder is absent."""
    path = UD / name / f"{split}.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def through_model_file(meta: dict, arrays: dict) -> tuple[dict, dict]:
    """``(meta, arrays)`` as a model file gives them back: JSON text and an ``.npz``
    loaded without pickles."""
    import io
    import json

    import numpy as np

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as npz:
        return json.loads(json.dumps(meta)), dict(npz)
