"""``polyparse serve`` over real HTTP on 127.0.0.1: answers against the parser's own
output, bad input answered with the command line's messages, a request too large
refused, requests served at once never mixed up, and the command started and stopped."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest

from polyparse.parser.pipeline import Parser
from polyparse.parser.serve import Server, ServeConfig, warm_up

from test_draw import gold_tree, tree_of


# one xdist worker runs the file, so that the module's fixture (one server) is
# built once, not once per worker
pytestmark = pytest.mark.xdist_group("serve")


@pytest.fixture(scope="module")
def server(sample_model_path):
    """The sample model served on a free port of 127.0.0.1, in a thread, warmed up as
    ``polyparse serve`` warms it before it listens: on a cold numba cache the k-best
    kernels took longer than a request's 30 s to compile in CI."""
    served = Server(ServeConfig(port=0, max_request=4096, lp_max_words=10))
    parser = Parser.load(sample_model_path)
    warm_up(parser)
    served.load(parser, "sample.npz")
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()


def post(server, body: bytes | dict, headers: dict | None = None) -> tuple[int, dict]:
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.request("POST", "/parse", body, headers or {})
    response = connection.getresponse()
    answer = (response.status, json.loads(response.read()))
    connection.close()
    return answer


def drawn_trees(figures: str) -> list[tuple[str, list]]:
    """``(panel class, arcs)`` of every panel in an answer's HTML."""
    svgs = [ET.fromstring(s) for s in re.findall(r"<svg .*?</svg>", figures, re.DOTALL)]
    return [(svg.get("class"), tree_of(svg)) for svg in svgs]


def test_the_page_is_self_contained(server):
    with urllib.request.urlopen(server.url, timeout=30) as response:
        page = response.read().decode()
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert '<textarea id="text"' in page and "sample.npz: order 1, decoder mst" in page
    assert "/*STYLE*/" not in page and ".arc .line" in page
    assert not re.search(r"""(src|href)=["']?https?:""", page)     # nothing from elsewhere


def test_an_answer_is_what_parse_writes_and_draws_it(server, sample_model_path):
    text = "The cat sat on the mat. It purred."
    status, answer = post(server, {"text": text, "lp": True})
    assert status == 200 and answer["sentences"] == 2 and answer["warnings"] == []
    parser = Parser.load(sample_model_path)
    expected = parser.retag_parsed([parser.analyze(s).annotated(certify=True)
                                    for s in parser.tag_text(text)])
    assert answer["conllu"] == "".join(s.to_text() for s in expected)
    assert answer["words"] == sum(len(s) for s in expected)
    assert answer["milliseconds"] > 0
    panels = drawn_trees(answer["figures"])
    assert [kind for kind, _ in panels] == ["panel tree", "panel lp"] * 2
    assert [arcs for kind, arcs in panels if kind == "panel tree"] == [
        gold_tree(s) for s in expected]


def test_the_lp_of_a_sentence_over_the_cap_is_a_note(server):
    status, answer = post(server, {"text": "The old cat and the young dog sat on the warm "
                                           "mat. It purred.", "lp": True})
    assert status == 200
    assert [kind for kind, _ in drawn_trees(answer["figures"])] == [
        "panel tree", "panel tree", "panel lp"]
    assert answer["figures"].count('<p class="note">LP relaxation not solved: 13 words, '
                                   'more than 10 (--lp-max-words)</p>') == 1


def test_kbest_answers_every_tree(server):
    status, answer = post(server, {"text": "Dogs bark loudly.", "kbest": 3})
    assert status == 200
    ranks = re.findall(r"# kbest_rank = (\d+)", answer["conllu"])
    assert ranks == ["1", "2", "3"]
    assert len(re.findall(r'data-rank="\d"', answer["figures"])) == 3


@pytest.mark.parametrize("body, status, message", [
    (b"\xff\xfe", 400, "the request is not valid UTF-8"),
    (b"{", 400, "the request is not JSON"),
    (b'["text"]', 400, 'a JSON object with a "text" string'),
    ({"text": "x", "format": "xml"}, 400, '"format" must be "text" or "conllu"'),
    ({"text": "x", "kbest": 0}, 400, "K must be a whole number from 1 to 20, not 0"),
    ({"text": "x", "kbest": True}, 400, "K must be a whole number"),
    ({"text": "x", "kbest": 2, "confidence": True}, 400, "k-best trees carry no confidence"),
    ({"text": "# c\n1\tDogs\t_\n", "format": "conllu"}, 400,
     "input:2: expected 10 tab-separated columns, found 3"),
])
def test_bad_input_gets_the_command_lines_message(server, body, status, message):
    got, answer = post(server, body)
    assert got == status
    assert message in answer["error"]
    assert "Traceback" not in answer["error"]


def test_a_request_over_the_limit_is_refused_before_it_is_parsed(server):
    status, answer = post(server, {"text": "word " * 1000})
    assert status == 413
    assert answer["error"].startswith("the request has 5,")
    assert "this server takes at most 4,096 (polyparse serve --max-request)" in answer["error"]


def test_a_request_without_a_length_or_elsewhere_is_answered_too(server):
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(b"POST /parse HTTP/1.0\r\n\r\n")
        reply = sock.makefile("rb").read().decode()
    assert reply.startswith("HTTP/1.0 411") and "no Content-Length" in reply
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(server.url + "nothing", timeout=30)
    assert error.value.code == 404


def test_empty_text_and_unseen_scripts_are_warnings(server):
    status, answer = post(server, {"text": "  \n "})
    assert status == 200 and answer["sentences"] == 0
    assert answer["warnings"] == ["no sentences to parse (the text has no words)"]
    status, answer = post(server, {"text": "Привет мир."})
    assert status == 200
    assert any("Cyrillic" in w for w in answer["warnings"])


def test_requests_served_at_once_are_not_mixed_up(server):
    texts = [f"The {noun} sat on the {place}." for noun in ("cat", "dog", "baker", "queen")
             for place in ("mat", "roof", "bench", "church")]
    alone = {text: post(server, {"text": text, "lp": True})[1] for text in texts}
    with ThreadPoolExecutor(len(texts)) as pool:
        together = list(pool.map(lambda t: post(server, {"text": t, "lp": True}), texts * 2))
    for text, (status, answer) in zip(texts * 2, together):
        assert status == 200
        assert answer["conllu"] == alone[text]["conllu"]
        assert answer["figures"] == alone[text]["figures"]


def test_the_command_serves_until_stopped(sample_model_path):
    process = subprocess.Popen([sys.executable, "-m", "polyparse.parser.cli", "serve",
                                "--model", str(sample_model_path), "--port", "0"],
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+/)", line).group(1)
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200
        busy = subprocess.run([sys.executable, "-m", "polyparse.parser.cli", "serve",
                               "--model", str(sample_model_path), "--port",
                               url.rsplit(":", 1)[1].strip("/")],
                              capture_output=True, text=True, timeout=120)
        assert busy.returncode == 2
        assert "polyparse: error: cannot listen on 127.0.0.1:" in busy.stderr
        assert "Traceback" not in busy.stderr
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in process.stderr.read()
