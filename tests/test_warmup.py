"""The first run of a training setup rehearses it in child processes
(``parser/warmup.py``): once per setup, and without changing the model."""

import logging

import numba
import numpy as np
import pytest

from polyparse.parser import warmup
from polyparse.parser.cli import main
from polyparse.parser.pipeline import Parser


@pytest.fixture
def small_sample(tmp_path, sample_train, sample_dev):
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text("".join(s.to_text() for s in sample_train[:40]))
    dev.write_text("".join(s.to_text() for s in sample_dev[:5]))
    return train, dev


def test_rehearsal_once_per_setup_and_the_same_model(tmp_path, small_sample, monkeypatch,
                                                     caplog):
    train, dev = small_sample
    # stamps in a fresh folder (the kernels themselves still load from the real cache)
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    # --average-from 2 is an epoch of the run, not of the one-epoch rehearsal
    command = ["train", "--train", str(train), "--dev", str(dev), "--epochs", "2",
               "--average-from", "2", "--tagger-epochs", "2", "--jackknife", "2"]

    def run(name, rehearse):
        monkeypatch.setenv("POLYPARSE_REHEARSE", rehearse)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="polyparse"):
            main(command + ["--model", str(tmp_path / name)])
        return "compiling the kernels" in caplog.text

    assert run("first.npz", "1")
    stamps = list((tmp_path / "cache" / "polyparse-rehearsed").iterdir())
    assert len(stamps) == 1
    assert not run("second.npz", "1")             # the same setup: no rehearsal
    assert not run("plain.npz", "0")
    weights = [Parser.load(tmp_path / name).model.weights
               for name in ("first.npz", "second.npz", "plain.npz")]
    assert np.array_equal(weights[0], weights[2]) and np.array_equal(weights[1], weights[2])


def test_the_digest_names_the_setup_not_the_epochs():
    from polyparse.parser.config import PartsConfig, TrainConfig

    base = warmup._digest(TrainConfig())
    assert warmup._digest(TrainConfig(epochs=3, seed=7)) == base
    assert warmup._digest(TrainConfig(parts=PartsConfig(order="2"), decoder="ilp")) != base
