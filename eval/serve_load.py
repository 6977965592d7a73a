"""A bounded local load test of ``polyparse serve``: latency, concurrency, size limit.

    python -m eval run serve_load [--treebank en_ewt] [--train-sentences 2000] [--model M]

Trains an order-1 model (tokenizer, tagger, parser: ``polyparse train`` on the first
``--train-sentences`` sentences of the treebank, 3 epochs, jackknife 3; kept in
``RESULTS/tmp/`` for the next run) unless ``--model`` is given, starts ``polyparse
serve --port 0`` on 127.0.0.1 and sends it, from this process, only to 127.0.0.1:

* latency: a dev sentence of 20 words (the nearest length there is; its ``# text``), 10
  requests to warm up then
  ``--requests`` (200) one after the other, each timed from sending to the whole answer
  read (the tree drawn; then the same with the LP switch on);
* concurrency: ``--concurrent`` (50) requests at once, each a different dev sentence,
  started together by a barrier; every answer's CoNLL-U and drawings are compared with
  the answer to the same text asked alone beforehand;
* size: one request of 1 MiB (1,048,576 bytes), which must be refused with status 413
  and a message.

Every request has a 60 s time-out and the counts are fixed, so the test ends by itself.
Writes ``serve_load.{json,md}`` under ``--results`` (the issue's figures: 50 concurrent answers
all correct; p95 <= 100 ms for a 20-word sentence with an order-1 model; 1 MB refused).
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ._common import POLYPARSE, arguments, kept_model, single_thread, treebank, write_table

single_thread()

TIMEOUT = 60.0
"""Seconds a request may take."""
MIB = 1 << 20

SMOKE = ["--treebank", "sample", "--train-sentences", "20", "--requests", "5",
         "--concurrent", "5"]
"""The smoke run: a model of 20 sample sentences, 5 requests of each kind."""


def post(port: int, body: bytes) -> tuple[int, dict, float]:
    """``(status, answer, seconds)`` of one ``POST /parse`` to 127.0.0.1."""
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        connection.request("POST", "/parse", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        return response.status, answer, time.perf_counter() - start
    finally:
        connection.close()


def request(text: str, **views) -> bytes:
    return json.dumps({"text": text, **views}).encode()


def percentiles(seconds: list[float]) -> dict:
    ms = 1000.0 * np.array(seconds)
    return {"requests": len(ms), "p50_ms": float(np.percentile(ms, 50)),
            "p95_ms": float(np.percentile(ms, 95)), "p99_ms": float(np.percentile(ms, 99)),
            "max_ms": float(ms.max())}


def trained_model(args, train) -> Path:
    """``--model``, or an order-1 model trained by ``polyparse train`` (kept)."""
    def train_to(path: Path) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".conllu", encoding="utf-8") as file:
            file.write("".join(s.to_text() for s in train))
            file.flush()
            subprocess.run([*POLYPARSE, "-q", "train", "--train", file.name, "--model",
                            str(path), "--epochs", "3", "--jackknife", "3",
                            "--tagger-epochs", "4"], check=True)

    return kept_model(args, f"serve_{args.treebank}_{len(train)}", train_to)


def start_server(model: Path) -> tuple[subprocess.Popen, int]:
    """``polyparse serve`` on a free port of 127.0.0.1, and that port."""
    server = subprocess.Popen([*POLYPARSE, "serve", "--model", str(model), "--port", "0"],
                              stderr=subprocess.PIPE, text=True)
    line = server.stderr.readline()
    found = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        server.kill()
        sys.exit(f"polyparse serve did not start: {line}{server.stderr.read()}")
    threading.Thread(target=server.stderr.read, daemon=True).start()   # drain its log
    return server, int(found.group(1))


def at_once(port: int, bodies: list[bytes]) -> tuple[list, float]:
    """Send ``bodies`` together, one thread each, started by a barrier: their answers
    and the wall time until the last one is read."""
    barrier = threading.Barrier(len(bodies))
    answers: list = [None] * len(bodies)

    def send(i: int) -> None:
        barrier.wait(TIMEOUT)
        answers[i] = post(port, bodies[i])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(2 * TIMEOUT)
    return answers, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--train-sentences", type=int, default=2000, metavar="N")
    ap.add_argument("--model", default=None, help="an order-1 model to serve instead")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--concurrent", type=int, default=50)
    args = ap.parse_args(argv)
    train, dev = treebank(args.ud, args.treebank, args.train_sentences)
    model = trained_model(args, train)
    texts = [s.text for s in dev if s.text]
    twenty = min((s for s in dev if s.text), key=lambda s: abs(len(s) - 20)).text
    others = [t for t in texts if t != twenty][:args.concurrent]
    server, port = start_server(model)
    rows = []
    try:
        for views in ({}, {"lp": True}):
            body = request(twenty, **views)
            for _ in range(10):
                post(port, body)
            timed = [post(port, body) for _ in range(args.requests)]
            assert all(status == 200 for status, _, _ in timed)
            answer = timed[0][1]
            rows.append({"test": f"one at a time, {answer['words']}-word sentence"
                                 f"{', LP' if views else ''}",
                         "words": answer["words"], "correct": args.requests,
                         "server_ms_mean": float(np.mean([a["milliseconds"]
                                                          for _, a, _ in timed])),
                         **percentiles([s for _, _, s in timed])})
        alone = {text: post(port, request(text))[1] for text in others}
        answers, wall = at_once(port, [request(text) for text in others])
        correct = sum(1 for text, got in zip(others, answers)
                      if got is not None and got[0] == 200
                      and got[1]["conllu"] == alone[text]["conllu"]
                      and got[1]["figures"] == alone[text]["figures"])
        rows.append({"test": f"{len(others)} at once, different dev sentences",
                     "words": sum(a["words"] for a in alone.values()), "correct": correct,
                     "wall_s": wall,
                     **percentiles([got[2] for got in answers if got is not None])})
        filler = MIB - len(request(""))
        big = request("a" * filler)
        assert len(big) == MIB
        status, answer, seconds = post(port, big)
        rows.append({"test": "one request of 1 MiB (1,048,576 bytes)", "requests": 1,
                     "status": status, "message": answer.get("error", ""),
                     "correct": int(status == 413 and "error" in answer),
                     "max_ms": 1000.0 * seconds})
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(TIMEOUT)
    notes = (f"`polyparse serve` of an order-1 model ({model.name}: tokenizer, tagger and "
             f"parser trained by `polyparse train --epochs 3 --jackknife 3 --tagger-epochs "
             f"4` on the first {len(train)} sentences of {args.treebank} train), on "
             "127.0.0.1, one process (its threads) with one core for BLAS and numba; the "
             "client is this script, on the same 2-core machine. Latency: from sending a "
             "request to reading its whole answer (raw text tokenized, tagged, parsed, "
             "drawn as SVG, JSON), each request on a new connection; 'server ms': the time "
             f"the server reports for tokenizing, tagging and decoding. The sentence: "
             f"\"{twenty}\". 'correct': answers equal to the same request's answer alone "
             "(CoNLL-U and drawings), or for the 1 MiB request, refused with status 413 and "
             "a message.")
    table = write_table(
        args, "serve_load", "polyparse serve: latency, concurrent requests, size limit", rows,
                [("test", "test"), ("requests", "requests"), ("correct", "correct"),
                 ("words", "words"), ("p50_ms", "p50 ms"), ("p95_ms", "p95 ms"),
                 ("p99_ms", "p99 ms"), ("max_ms", "max ms"),
                 ("server_ms_mean", "server ms (mean)"), ("wall_s", "wall s"),
                 ("status", "status"), ("message", "message")], notes)
    print(table.read_text())

