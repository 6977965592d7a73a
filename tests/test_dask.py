"""Parsing and training on a Dask cluster (issue 15): the same output and weights as in
one process, and no loss when a worker process is killed in the middle. One local
cluster of two worker processes on 127.0.0.1 serves the whole module."""

import importlib.util
import os
import signal
import sys
import time

import numpy as np
import pytest

# one xdist worker runs the whole file, so that one local cluster serves all its tests;
# distributed is looked for, not imported (1 s that every worker would pay to collect)
pytestmark = [pytest.mark.xdist_group("dask"),
              pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                 reason="the dask extra is not installed")]

from conftest import SAMPLE  # noqa: E402

from polyparse.corpora.conllu_io import read_treebank  # noqa: E402
from polyparse.learning.mixing import SerialShards, SparseWeights  # noqa: E402
from polyparse.parser import cluster, pipeline, training  # noqa: E402
from polyparse.parser.cli import main  # noqa: E402
from polyparse.parser.config import MixingConfig, TrainConfig  # noqa: E402
from polyparse.parser.model_file import load as load_model_file  # noqa: E402
from polyparse.parser.pipeline import Parser  # noqa: E402

TRAIN = 50
"""Sentences of the sample the parameter-mixing tests train on."""


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=40) as local, \
            Client(local) as client:
        yield client


@pytest.fixture(scope="module")
def model(sample_model_path):
    """The session's small model (tokenizer, tagger, parser), loaded for this module."""
    return Parser.load(sample_model_path)


def _wait_for_two(client):
    client.wait_for_workers(2, timeout=60)


def _kill_a_busy_worker(client) -> int:
    """SIGKILL a worker process that is running a task (or holds a result), as a crash
    would; its pid."""
    pids = client.run(os.getpid)
    for _ in range(200):
        busy = [w for w, keys in client.processing().items() if keys]
        if busy:
            break
        time.sleep(0.01)
    else:
        busy = list(pids)
    os.kill(pids[busy[0]], signal.SIGKILL)
    return pids[busy[0]]


def test_parse_on_the_cluster_writes_what_one_process_writes(client, model, tmp_path):
    _wait_for_two(client)
    address = client.scheduler.address
    dev = tmp_path / "dev.conllu"           # 60 sentences: several per worker
    dev.write_text("".join(s.to_text() for s in read_treebank(SAMPLE / "dev.conllu")[:60]))
    dev = str(dev)
    one, dask = tmp_path / "one.conllu", tmp_path / "dask.conllu"
    assert main(["-q", "parse", "--model", str(model.path), "--input", dev, "--output",
                 str(one), "--certify"]) == 0
    assert main(["-q", "parse", "--model", str(model.path), "--input", dev, "--output",
                 str(dask), "--certify", "--dask", address]) == 0
    assert dask.read_bytes() == one.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["dask.conllu", "dev.conllu", "one.conllu"]  # no stray


def test_raw_text_from_python(client, model):
    _wait_for_two(client)
    text = " ".join(s.text for s in read_treebank(SAMPLE / "dev.conllu")[:40] if s.text)
    alone = [s.to_text() for s in model.parse_text(text)]
    counts = model.decodings.copy()
    on_cluster = [s.to_text() for s in model.parse_text(text, client=client)]
    assert on_cluster == alone and len(alone) > 10
    # the workers' certificate counts come back
    assert sum(model.decodings.since(counts).kinds.values()) == len(alone)


def _prepared(shards: int):
    config = TrainConfig(epochs=2, trainer="ssg", mixing=MixingConfig(shards))
    sentences = read_treebank(SAMPLE / "train.conllu")[:TRAIN]
    return config, sentences, training.prepare(sentences, config)


def test_mixing_on_the_cluster_gives_the_serial_weights_and_says_so(client, tmp_path):
    _wait_for_two(client)
    train = tmp_path / "train.conllu"
    text = "".join(s.to_text() for s in read_treebank(SAMPLE / "train.conllu")[:TRAIN])
    # without comments: no '# text', so no tokenizer to train; the weights are the point
    train.write_text("".join(line for line in text.splitlines(keepends=True)
                             if not line.startswith("#")))
    common = ["-q", "train", "--train", str(train), "--no-tagger", "--epochs", "1"]
    runs = {"serial": ["--shards", "2"], "dask": ["--shards", "2", "--dask",
                                                  client.scheduler.address],
            "alone": []}
    files = {}
    for name, flags in runs.items():
        assert main(common + ["--model", str(tmp_path / f"{name}.npz"), *flags]) == 0
        files[name] = load_model_file(tmp_path / f"{name}.npz")
    weights = {name: (f.arrays["weight_index"], f.arrays["weight_value"])
               for name, f in files.items()}
    assert all(np.array_equal(a, b) for a, b in zip(weights["serial"], weights["dask"]))
    assert weights["serial"][1].size > 0
    for name in ("serial", "dask"):
        assert files[name].metadata["training"]["mixing"] == {"shards": 2, "mixing": "uniform"}
    assert files["alone"].metadata["training"]["mixing"] is None
    # mixing is not one process's training: the shards see other weights
    assert not (weights["alone"][0].shape == weights["serial"][0].shape
                and np.array_equal(weights["alone"][1], weights["serial"][1]))


def test_an_unreachable_scheduler_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path,
                                                         sample_model_path):
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 0.5)
    out = tmp_path / "out.conllu"
    status = main(["parse", "--model", str(sample_model_path), "--input",
                   str(SAMPLE / "dev.conllu"), "--output", str(out),
                   "--dask", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err[0]
    assert not out.exists() and os.listdir(tmp_path) == []


def test_without_dask_the_flag_says_how_to_install_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)        # import fails
    status = main(["parse", "--model", str(tmp_path / "m.npz"), "--dask", "local:2",
                   "--text", "Go."])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and err == ["polyparse: error: " + cluster.INSTALL]


@pytest.mark.parametrize("trainer", ["bcfw", "dlpw"])
def test_dual_trainers_refuse_shards(trainer, capsys, tmp_path):
    status = main(["train", "--train", str(SAMPLE / "train.conllu"), "--model",
                   str(tmp_path / "m.npz"), "--trainer", trainer, "--shards", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "per-sentence dual state" in err[0]
    assert os.listdir(tmp_path) == []


# The two tests that kill a worker come last: the nanny's new process takes a while.

def test_a_worker_killed_during_a_parse_costs_no_sentence(client, model, monkeypatch):
    _wait_for_two(client)
    monkeypatch.setattr(pipeline, "CHUNK", 4)               # many chunks, several in flight
    dev = read_treebank(SAMPLE / "dev.conllu")
    alone = [s.to_text() for s in model.parse(dev)]
    stream = model.parse(dev, client=client)
    parsed = [next(stream).to_text()]
    killed = _kill_a_busy_worker(client)
    parsed += [s.to_text() for s in stream]
    assert parsed == alone
    assert killed not in client.run(os.getpid).values()          # it was killed indeed


def test_a_worker_killed_during_an_epoch_costs_no_weight(client):
    _wait_for_two(client)
    config, _, prepared = _prepared(2)
    parser = Parser(prepared.model, config)
    rng = np.random.default_rng(0)               # an epoch after the first: nonzero weights
    start = SparseWeights.of(np.where(rng.random(prepared.model.dim) < 0.01,
                                      rng.normal(size=prepared.model.dim), 0.0))
    serial = SerialShards(config.trainer, config.trainer_options, config.seed,
                          prepared.model, parser.decoder, prepared.train, 2)(1, start)
    with cluster.DaskShards(client, parser, prepared.train) as shards:
        futures = shards.submit(1, start)
        killed = _kill_a_busy_worker(client)
        results = shards.collect(futures)
    assert killed not in client.run(os.getpid).values()
    for mine, theirs in zip(results, serial):
        assert np.array_equal(mine.last.dense(), theirs.last.dense())
        assert np.array_equal(mine.average.dense(), theirs.average.dense())
        assert mine.slack_sum == theirs.slack_sum
