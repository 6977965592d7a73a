"""Faults a careful user runs into: stop signals, unwritable outputs, data that breaks the
model's assumptions, input of the wrong kind, files that are not models.

Signal tests run ``main`` in this process and send the signal to it (from inside the
code at a chosen moment, or from a timer at a random one); they check what a user would
see: the exit status, one line on stderr, the earlier files untouched and no stray file.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import pickle
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from polyparse.corpora.conllu_io import read_conllu, read_treebank
from polyparse.corpora.errors import CorpusError
from polyparse.corpora.files import OutputError, atomic_write
from polyparse.corpora import signals
from polyparse.corpora.signals import STOP_SIGNALS, Stopped, stop_behind
from polyparse.parser.text.characters import script_of
from polyparse.parser.text.tokenizer import Tokenizer
from polyparse.learning.examples import Examples
from polyparse.parser import gap, pipeline
from polyparse.parser.cli import main

from conftest import SAMPLE

TINY = ["--epochs", "1", "--bits", "16", "--label-bits", "12", "--no-tagger"]
EARLIER = b"an earlier file that must survive\n"


@pytest.fixture
def survive_late_signals():
    """Signals that reach this process while ``main`` is not running are ignored, as
    ``main`` restores the handlers it found (a timer may fire just after it returns)."""
    previous = {s: signal.signal(s, lambda *_: None) for s in STOP_SIGNALS}
    yield
    for s, handler in previous.items():
        signal.signal(s, handler)


def stray_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def run(argv: list, capsys) -> tuple[int, str]:
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().err


def signal_on_call(monkeypatch, owner, name: str, call: int, signum: int) -> None:
    """Replace ``owner.name`` by a wrapper that sends ``signum`` to this process on its
    ``call``-th call (the handler of ``main`` then raises in it)."""
    original = getattr(owner, name)
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] == call:
            os.kill(os.getpid(), signum)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)


def dev_subset(tmp_path: Path, sentences: int) -> Path:
    path = tmp_path / "dev.conllu"
    path.write_text("".join(s.to_text() for s in list(read_conllu(SAMPLE / "dev.conllu"))
                            [:sentences]))
    return path


# -- stop signals at chosen moments ----------------------------------------------------

@pytest.mark.parametrize("moment, signum", [
    ("training", signal.SIGTERM), ("checkpoint save", signal.SIGHUP),
    ("model save", signal.SIGINT)])
def test_train_stopped_keeps_earlier_model_and_checkpoint(moment, signum, tmp_path,
                                                          monkeypatch, capsys,
                                                          survive_late_signals):
    model, checkpoint = tmp_path / "model.npz", tmp_path / "checkpoint.npz"
    model.write_bytes(EARLIER)
    checkpoint.write_bytes(EARLIER)
    if moment == "training":                           # mid-epoch: the 50th example
        signal_on_call(monkeypatch, Examples, "__getitem__", 50, signum)
    else:                                              # the complete temporary file
        signal_on_call(monkeypatch, os, "fsync", 1, signum)     # exists, not yet renamed
    extra = ["--checkpoint", checkpoint] if moment == "checkpoint save" else []
    status, err = run(["-q", "train", "--train", SAMPLE / "train.conllu", "--model", model,
                       *TINY, *extra], capsys)
    assert status == 128 + signum
    assert err == f"polyparse: stopped by {signal.Signals(signum).name}\n"
    assert model.read_bytes() == EARLIER and checkpoint.read_bytes() == EARLIER
    assert stray_files(tmp_path) == []


@pytest.mark.parametrize("command", ["parse", "gap"])
def test_output_stopped_midway_keeps_earlier_output(command, sample_model_path, tmp_path,
                                                     monkeypatch, capsys,
                                                     survive_late_signals):
    out = tmp_path / "out"
    out.write_bytes(EARLIER)
    if command == "parse":      # the first chunk of sentences is written by then
        signal_on_call(monkeypatch, pipeline.Parser, "analyze", pipeline.CHUNK + 3,
                       signal.SIGTERM)
        argv = ["parse", "--model", sample_model_path, "--input", SAMPLE / "dev.conllu",
                "--output", out]
    else:                       # records are written and flushed one by one
        original = gap.measure

        def measure(*args):
            for k, record in enumerate(original(*args)):
                if k == 2:
                    os.kill(os.getpid(), signal.SIGTERM)
                yield record

        monkeypatch.setattr(gap, "measure", measure)
        argv = ["gap", "--model", sample_model_path, "--input", dev_subset(tmp_path, 6),
                "--jsonl", out]
    status, err = run(["-q", *argv], capsys)
    assert (status, err) == (143, "polyparse: stopped by SIGTERM\n")
    assert out.read_bytes() == EARLIER and stray_files(tmp_path) == []


# -- stop signals at random moments ----------------------------------------------------

def commands(model: Path, tmp_path: Path) -> dict[str, tuple[list, Path]]:
    """Each command with the output whose earlier content must survive."""
    dev = dev_subset(tmp_path, 8)
    return {
        "train": (["train", "--train", SAMPLE / "train.conllu", "--model",
                   tmp_path / "train.out", *TINY], tmp_path / "train.out"),
        "parse": (["parse", "--model", model, "--input", SAMPLE / "dev.conllu", "--output",
                   tmp_path / "parse.out"], tmp_path / "parse.out"),
        "gap": (["gap", "--model", model, "--input", dev, "--jsonl", tmp_path / "gap.out"],
                tmp_path / "gap.out"),
    }


@pytest.mark.parametrize("command", ["train", "parse", "gap"])
def test_signal_at_random_moments(command, sample_model_path, tmp_path, capsys,
                                  survive_late_signals):
    """Two runs, SIGTERM then SIGINT, each at a random moment of a run's length: either
    the run finished (a complete new file) or it stopped (the earlier file, or a complete
    new one where the signal came after the output was committed, while the command was
    still printing its summary); never a partial or stray temporary file.
    (eval/faults.py does this 20 times from outside.)"""
    argv, out = commands(sample_model_path, tmp_path)[command]
    start = time.perf_counter()
    assert run(["-q", *argv], capsys)[0] == 0
    duration = time.perf_counter() - start
    complete = out.read_bytes()
    rng = random.Random(f"{command}-{os.getpid()}")
    for signum in (signal.SIGTERM, signal.SIGINT):
        out.write_bytes(EARLIER)
        timer = threading.Timer(rng.uniform(0, duration), os.kill, (os.getpid(), signum))
        timer.start()
        status = main(["-q", *map(str, argv)])
        timer.cancel()
        timer.join()
        err = capsys.readouterr().err
        if status == 0:             # the signal came too late: a complete new file
            assert out.read_bytes() != EARLIER
            assert out.read_bytes() == complete or command != "parse"   # (timings in it)
        else:
            assert (status, err) == (128 + signum,
                                     f"polyparse: stopped by {signal.Signals(signum).name}\n")
            assert out.read_bytes() == EARLIER or same_kind(out, complete, command)
        assert stray_files(tmp_path) == []


def same_kind(out: Path, complete: bytes, command: str) -> bool:
    """Whether ``out`` is a complete output of ``command`` (``complete``: one run's;
    gap's records and the model file hold timings, so they are compared by shape)."""
    if command == "parse":
        return out.read_bytes() == complete
    if command == "gap":
        lines = out.read_bytes().splitlines()
        return (len(lines) == len(complete.splitlines())
                and all(isinstance(json.loads(line), dict) for line in lines))
    with np.load(out, allow_pickle=False) as got, \
            np.load(io.BytesIO(complete), allow_pickle=False) as want:
        return sorted(got.files) == sorted(want.files)


def test_sigterm_ends_parse_jobs_and_its_workers(sample_model_path, tmp_path):
    """From outside, as ``kill`` or a scheduler sends it, to a parse on two processes."""
    big = tmp_path / "big.conllu"
    big.write_text((SAMPLE / "dev.conllu").read_text() * 4)
    out = tmp_path / "out.conllu"
    out.write_bytes(EARLIER)
    process = subprocess.Popen([sys.executable, "-m", "polyparse.parser.cli", "parse",
                                "--model", str(sample_model_path), "--input", str(big),
                                "--output", str(out), "--jobs", "2"],
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not stray_files(tmp_path) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)                             # until the output is being written
    time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    err = process.communicate(timeout=60)[1]
    assert (process.returncode, err) == (143, "polyparse: stopped by SIGTERM\n")
    assert out.read_bytes() == EARLIER and stray_files(tmp_path) == []
    if Path("/proc").is_dir():                       # no worker left running
        time.sleep(0.2)
        left = [p for p in Path("/proc").iterdir() if p.name.isdigit()
                and str(out).encode() in _cmdline(p)]
        assert left == []


STUCK_IN_HIGHS = """
import sys
import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
import polyparse.decoders.ilp as ilp
from polyparse.parser.cli import main

def solve_highs(form, time_limit=None, **options):      # a branch and bound of minutes
    rng = np.random.default_rng(0)
    A = rng.random((200, 300))
    print("solving", file=sys.stderr, flush=True)
    milp(-rng.random(300), constraints=LinearConstraint(A, -np.inf, 0.3 * A.sum(1)),
         integrality=np.ones(300), bounds=Bounds(0, 1))
    print("the solve was not stopped", file=sys.stderr, flush=True)

ilp.solve_highs = solve_highs
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_inside_an_ilp_solve_ends_the_command_within_a_second(sample_model_path,
                                                                        tmp_path):
    """HiGHS's branch and bound holds the main thread in compiled code, where Python runs
    no signal handler: the watchdog of :func:`~corpora.signals.stop_signals_raise` ends
    the run within a second, the earlier output kept and no temporary file left."""
    out = tmp_path / "out.conllu"
    out.write_bytes(EARLIER)
    process = subprocess.Popen(
        [sys.executable, "-c", STUCK_IN_HIGHS, "parse", "--model", str(sample_model_path),
         "--input", str(SAMPLE / "dev.conllu"), "--output", str(out), "--decoder", "ilp",
         "--no-lp-first", "--time-limit", "none", "--no-ud-rules"],
        stderr=subprocess.PIPE, text=True)
    assert process.stderr.readline() == "solving\n"
    time.sleep(0.3)                                   # well inside HiGHS
    process.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    process.wait(timeout=30)
    took = time.monotonic() - sent
    err = process.stderr.read()
    assert (process.returncode, err) == (143, "polyparse: stopped by SIGTERM\n")
    assert took < 1.0
    assert out.read_bytes() == EARLIER and stray_files(tmp_path) == []


def _cmdline(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:
        return b""


def test_end_pool_does_not_hang_when_a_worker_died_holding_a_lock(monkeypatch):
    """As when Pool.terminate kills a worker sending its result: here the result queue's
    lock is taken and not given back, so terminate() itself never ends."""
    monkeypatch.setattr(signals, "POOL_END_TIMEOUT", 0.5)
    pool = multiprocessing.get_context("fork").Pool(2, initializer=signals.in_worker)
    lock = pool._outqueue._wlock
    lock.acquire()
    ending = threading.Thread(target=signals.end_pool, args=(pool,), daemon=True)
    ending.start()
    ending.join(5)                                 # (a plain terminate() would hang)
    assert not ending.is_alive()
    assert [p for p in multiprocessing.active_children() if p.daemon] == []
    lock.release()                                 # lets the stuck terminate() finish


def test_a_signal_inside_compiled_code_is_still_a_stop():
    """numba turns an exception raised in its callback into a SystemError."""
    try:
        try:
            raise Stopped(signal.SIGHUP)
        except Stopped as stop:
            raise SystemError("returned a result with an exception set") from stop
    except SystemError as error:
        assert stop_behind(error).exit_status == 129
    assert stop_behind(ValueError("x")) is None


# -- outputs that cannot be written ----------------------------------------------------

@pytest.mark.parametrize("command", ["train-model", "train-checkpoint", "parse", "gap-jsonl",
                                     "gap-plot", "output-is-a-directory"])
def test_unwritable_output_fails_before_any_work(command, sample_model_path, tmp_path,
                                                 capsys):
    missing = tmp_path / "no-such-dir" / "out"
    model = str(sample_model_path)
    # The inputs are missing too: the output is checked first, before anything is read.
    argv = {
        "train-model": ["train", "--train", "absent.conllu", "--model", missing],
        "train-checkpoint": ["train", "--train", "absent.conllu", "--model",
                             tmp_path / "m.npz", "--checkpoint", missing],
        "parse": ["parse", "--model", "absent.npz", "--text", "Hi.", "--output", missing],
        "gap-jsonl": ["gap", "--model", "absent.npz", "--input", "x", "--jsonl", missing],
        "gap-plot": ["gap", "--model", model, "--input", "absent", "--plot", missing],
        "output-is-a-directory": ["parse", "--model", model, "--text", "Hi.", "--output",
                                  tmp_path],
    }[command]
    status, err = run(argv, capsys)
    target = tmp_path if command == "output-is-a-directory" else missing
    problem = ("it is a directory" if command == "output-is-a-directory"
               else f"the directory {missing.parent} does not exist")
    assert status == 2
    assert err == f"polyparse: error: {target}: cannot write: {problem}\n"
    assert stray_files(tmp_path) == []


def test_atomic_write_names_the_users_path_not_the_temporary_one(tmp_path):
    target = tmp_path / "gone" / "out.conllu"
    with pytest.raises(OutputError) as error:
        with atomic_write(target) as out:
            out.write("x")
    assert str(error.value) == f"{target}: cannot write: No such file or directory"


# -- data that breaks the model's assumptions ------------------------------------------

TWO_ROOTS = "\n".join([
    "# sent_id = ok", "1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_",
    "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_", "",
    "# sent_id = two-roots", "1\tDogs\tdog\tNOUN\tNNS\t_\t0\troot\t_\t_",
    "2\tbark\tbark\tVERB\tVBP\t_\t1\tacl\t_\t_",
    "3\tcats\tcat\tNOUN\tNNS\t_\t0\troot\t_\t_", "", ""])


def test_two_roots_need_multi_root(tmp_path, capsys):
    data = tmp_path / "two.conllu"
    data.write_text(TWO_ROOTS)
    model = tmp_path / "model.npz"
    status, err = run(["train", "--train", data, "--model", model, *TINY], capsys)
    assert status == 2 and not model.exists()
    assert err.startswith(f"polyparse: error: {data}:8: 2 roots: words 1, 3 have HEAD 0")
    assert "--multi-root" in err and err.count("\n") == 1
    status, err = run(["-q", "train", "--train", data, "--model", model, *TINY,
                       "--multi-root"], capsys)
    assert status == 0 and model.exists()
    assert [len(s) for s in read_treebank(data)] == [2, 3]     # the library default
    with pytest.raises(CorpusError, match=r"two.conllu:8: 2 roots"):
        read_treebank(data, single_root=True)


# -- input of the wrong kind -----------------------------------------------------------

def test_plain_text_as_conllu_points_to_format_text(sample_model_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"The dog barked.\n")))
    status, err = run(["parse", "--model", sample_model_path], capsys)
    assert status == 2
    assert err.startswith("polyparse: error: <stdin>:1: expected 10 tab-separated columns: "
                          "this looks like plain text")
    assert "--format text" in err


def test_spaces_instead_of_tabs_is_still_said_so(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1 Hello hello INTJ UH _ 0 root _ _\n\n")
    with pytest.raises(CorpusError, match="bad.conllu:1: columns are separated by spaces"):
        list(read_conllu(bad))


@pytest.mark.parametrize("text", ["", "\n\n", "# newdoc id = a\n# just a comment\n\n"])
def test_input_without_sentences_warns_and_keeps_comments(text, sample_model_path, tmp_path,
                                                          capsys, caplog):
    given = tmp_path / "in.conllu"
    given.write_text(text)
    out = tmp_path / "out.conllu"
    out.write_bytes(EARLIER)
    status, err = run(["parse", "--model", sample_model_path, "--input", given, "--output",
                       out], capsys)
    assert status == 0 and err == ""
    assert out.read_text() == text
    assert f"polyparse: warning: {given}: no sentences to parse" in caplog.text


def test_blank_text_warns(sample_model_path, capsys, caplog):
    assert main(["parse", "--model", str(sample_model_path), "--text", "   "]) == 0
    assert capsys.readouterr() == ("", "")
    assert "polyparse: warning: --text: no sentences to parse (the text has no words)" \
        in caplog.text


def test_text_in_an_unseen_script_warns_once(sample_model_path, capsys, caplog):
    status, _ = run(["parse", "--model", sample_model_path, "--text",
                     "我们今天去北京了。他说很好。😀 Dogs bark."], capsys)
    assert status == 0
    warnings = [r.getMessage() for r in caplog.records if "script" in r.getMessage()]
    assert len(warnings) == 1
    assert "--text: text in a script that the model's tokenizer was not trained on: " \
           "Han, 12 characters (57% of the letters), first at line 1, column 1; " in warnings[0]
    assert "Emoji" not in warnings[0]       # 1 letter in 21: tokenized as the text around
    caplog.clear()
    assert run(["parse", "--model", sample_model_path, "--text", "Dogs bark. Ça va."],
               capsys)[0] == 0
    assert "script" not in caplog.text


def test_an_unseen_script_is_warned_about_only_as_a_real_share_of_the_text(
        sample_model_path, tmp_path, capsys, caplog):
    """One emoji in a long text is no warning; a paragraph of Cyrillic is, with where it
    first is."""
    text = tmp_path / "in.txt"
    lines = ["The dog barked at the cat."] * 200
    text.write_text("\n".join(lines[:50] + ["Nice 😀 day."] + lines[50:]) + "\n")
    assert run(["parse", "--model", sample_model_path, "--input", text], capsys)[0] == 0
    assert "script" not in caplog.text
    text.write_text("\n".join(lines[:3] + ["Привет мир, как дела у тебя сегодня?"] * 20) + "\n")
    assert run(["parse", "--model", sample_model_path, "--input", text], capsys)[0] == 0
    assert f"{text}: text in a script that the model's tokenizer was not trained on: " \
           "Cyrillic, 560 characters (90% of the letters), " in caplog.text
    assert "first at line 4, column 1;" in caplog.text


def test_scripts_are_stored_with_the_tokenizer_and_absent_in_older_models(sample_model_path):
    tokenizer = pipeline.Parser.load(sample_model_path).tokenizer
    assert set(tokenizer.scripts_) == {"Latin"} and tokenizer.scripts_["Latin"] > 5_000
    assert tokenizer.unseen_scripts("Привет, 世界") == {"Cyrillic": 6, "Han": 2}
    data, arrays = tokenizer.to_json()
    del data["scripts"]                              # as a model saved before they were
    assert Tokenizer.from_json(data, arrays).unseen_scripts("世界") == {}


def test_scripts_of_characters():
    assert [script_of(c) for c in "aé ЖΩאب中かカ한😀1.,ª"] == [
        "Latin", "Latin", None, "Cyrillic", "Greek", "Hebrew", "Arabic", "Han", "Hiragana",
        "Katakana", "Hangul", "Emoji", None, None, None, None]


# -- files that are not models ---------------------------------------------------------

def _pickle(path):
    path.write_bytes(pickle.dumps({"weights": [1, 2]}))


def _objects(path):
    with open(path, "wb") as f:
        np.savez(f, metadata=np.array([{"format": "polyparse-model"}], dtype=object))


def _npy(path):
    with open(path, "wb") as f:
        np.save(f, np.arange(3))


def _text(path):
    path.write_text("not a model\n")


@pytest.mark.parametrize("make", [_pickle, _objects, _npy, _text])
def test_non_model_npz_is_named_so_without_pickle_advice(make, tmp_path, capsys):
    fake = tmp_path / "model.npz"
    make(fake)
    status, err = run(["parse", "--model", fake, "--text", "Hi."], capsys)
    assert status == 2
    assert err.startswith(f"polyparse: error: {fake}: not a polyparse model file")
    assert "pickle" not in err and "unsafe" not in err
    assert err.count("\n") == 1


def test_a_stop_between_creating_and_guarding_the_temporary_file_leaves_nothing(
        sample_model_path, tmp_path, monkeypatch, capsys):
    """A stop signal taken by another thread runs its handler in the main thread at the
    next statement, even where the main thread blocks it: here, as soon as the temporary
    file exists, before the ``try`` that removes it (the stray files of ``eval/faults.py``
    after SIGINT to ``parse --jobs 2``). The command line removes what is left."""
    from polyparse.corpora import files

    real_open = os.open

    def open_then_stop(path, *args):
        fd = real_open(path, *args)
        if str(path).endswith(".tmp"):
            raise Stopped(signal.SIGINT)
        return fd

    monkeypatch.setattr(files.os, "open", open_then_stop)
    out = tmp_path / "out.conllu"
    status, err = run(["parse", "--model", sample_model_path, "--input",
                       SAMPLE / "dev.conllu", "--output", out], capsys)
    assert status == 130 and err.endswith("polyparse: stopped by SIGINT\n")
    assert stray_files(tmp_path) == []


def test_pool_threads_hold_back_stop_signals_and_workers_take_them_again():
    """Threads started in ``stops_to_main_thread`` block the stop signals, so the kernel
    gives a signal sent to the process to the main thread; a pool worker unblocks them
    (``in_worker``), or ``Pool.terminate``'s SIGTERM would not end it."""
    def mask_in_thread():
        seen = []
        thread = threading.Thread(target=lambda: seen.append(
            signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        thread.start()
        thread.join()
        return seen[0]

    with signals.stops_to_main_thread():
        blocked = mask_in_thread()
    assert set(STOP_SIGNALS) <= blocked
    assert not set(STOP_SIGNALS) & mask_in_thread()
    with signals.stops_to_main_thread():
        pool = multiprocessing.get_context("fork").Pool(1, initializer=signals.in_worker)
    try:
        worker_mask = pool.apply(signal.pthread_sigmask, (signal.SIG_BLOCK, []))
    finally:
        signals.end_pool(pool)
    assert not set(STOP_SIGNALS) & worker_mask


@pytest.mark.parametrize("reused", [False, True])
def test_a_wakeup_fd_closed_by_its_owner_is_not_restored(reused, tmp_path):
    """An event loop that set the signal wakeup fd and closed it without restoring it
    (the suite met one) leaves a stale number, closed or since another file's: leaving
    ``stop_signals_raise`` must still restore the handlers and install no wakeup fd,
    rather than fail in its clean-up (as it once did, in a CLI test of this file)."""
    here, there = socket.socketpair()
    there.setblocking(False)
    before = signal.set_wakeup_fd(there.fileno())
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    here.close()
    there.close()
    reuse = open(tmp_path / "reuses-the-number", "w") if reused else None  # blocking
    try:
        with signals.stop_signals_raise():
            pass
        assert signal.set_wakeup_fd(-1) == -1
        assert {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} == handlers
    finally:
        if reuse is not None:
            reuse.close()
        signal.set_wakeup_fd(before)
