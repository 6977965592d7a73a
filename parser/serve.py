"""``polyparse serve``: a local web page that parses what is typed and draws it.

``GET /`` is the page (``serve.html``): a text box, the options of ``polyparse draw`` as
switches, and a small script that sends what is typed to ``POST /parse`` and shows the
answer: the drawings (made here, by :mod:`parser.drawing`, as ``polyparse draw --html``
makes them), a link to download the CoNLL-U, the decoding time, warnings and errors.

``POST /parse`` takes JSON ``{"text": str, "format": "text" | "conllu", "lp": bool,
"kbest": int | null, "confidence": bool}`` and answers JSON ``{"conllu", "figures",
"sentences", "words", "milliseconds", "warnings"}``, or ``{"error": message}`` with the
status of the fault: 400 for bad input (worded as the command line words it, e.g.
``input:3: expected 10 tab-separated columns, found 9``), 411 without a length, 413 for
a request over :attr:`ServeConfig.max_request` bytes (refused before it is parsed), 500
for a fault of the server (its log has the traceback; the page never gets one).

The standard library's threading HTTP server is enough for a page on one's own machine
(no framework needed): each request is read, parsed and answered in a thread of its
own, with its own sentences; the parser is shared and only read, so that answers to
requests served at once are never mixed up (``eval/serve_load.py`` checks 50 at once).
"""

from __future__ import annotations

import io
import json
import logging
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.errors import CorpusError
from polyparse.corpora.sentence import MAX_SENTENCE_WORDS, Sentence
from polyparse.learning.confidence import Temperatures

from .drawing import figure_html
from .drawing.page import LEGEND, PAGE_STYLE
from .drawing.svg import escape
from .pipeline import Parser
from .views import DEFAULT_LP_MAX_WORDS, Views, parsed_figure

log = logging.getLogger("polyparse.serve")

INPUT_NAME = "input"
"""What errors call the typed CoNLL-U (``input:LINE: ...``)."""
DRAIN_LIMIT = 16 << 20
"""A request refused for its size is still read, up to this many bytes, so that the
client gets the refusal rather than a reset connection; a larger one is not read."""


@dataclass(frozen=True)
class ServeConfig:
    """How ``polyparse serve`` runs.

    Attributes
    ----------
    host, port:
        Where it listens (port 0: a free port chosen by the system).
    max_request:
        Bytes a request may have; a larger one is refused with status 413.
    max_kbest:
        The largest K a request may ask for.
    max_words:
        Raw text: a sentence longer than this is cut (:meth:`Parser.tag_text`).
    lp_max_words:
        The LP switch: a longer sentence's LP is not solved (:attr:`Views.lp_max_words`).
    temperatures:
        Of the probabilities of the confidence switch (``--confidence-temperature``).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    max_request: int = 64 << 10
    max_kbest: int = 20
    max_words: int | None = MAX_SENTENCE_WORDS
    lp_max_words: int | None = DEFAULT_LP_MAX_WORDS
    temperatures: Temperatures = field(default_factory=Temperatures)


class RequestError(Exception):
    """A request that is answered with ``status`` and the message alone."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Request:
    """What a ``POST /parse`` asks for: ``text`` in ``format`` (``"text"`` or
    ``"conllu"``), drawn with ``views``."""

    text: str
    format: str
    views: Views


def read_request(body: bytes, config: ServeConfig) -> Request:
    """The :class:`Request` of a JSON body; a :class:`RequestError` (400) saying what is
    wrong with it."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"the request is not valid UTF-8 (byte "
                                                   f"{error.start})") from None
    except json.JSONDecodeError as error:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"the request is not JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise RequestError(HTTPStatus.BAD_REQUEST, 'the request must be a JSON object with '
                                                   'a "text" string')
    fmt = data.get("format", "text")
    if fmt not in ("text", "conllu"):
        raise RequestError(HTTPStatus.BAD_REQUEST, f'"format" must be "text" or "conllu", '
                                                   f'not {fmt!r}')
    kbest = data.get("kbest")
    if kbest is not None and (not isinstance(kbest, int) or isinstance(kbest, bool)
                              or not 1 <= kbest <= config.max_kbest):
        raise RequestError(HTTPStatus.BAD_REQUEST, f"k-best: K must be a whole number from 1 "
                                                   f"to {config.max_kbest}, not {kbest!r}")
    views = Views(lp=bool(data.get("lp")), kbest=kbest,
                  confidence=config.temperatures if data.get("confidence") else None,
                  lp_max_words=config.lp_max_words)
    return Request(data["text"], fmt, views)


def answer(parser: Parser, request: Request, config: ServeConfig) -> dict:
    """Parse and draw what ``request`` asks for: the JSON answer of ``POST /parse``.
    Bad input is a :class:`RequestError` (400) with the command line's message."""
    try:
        request.views.check(parser)
        start = time.perf_counter()
        if request.format == "text":
            sentences = parser.tag_text(request.text, max_words=config.max_words)
        else:
            stream = io.StringIO(request.text)
            stream.name = INPUT_NAME
            sentences = read_conllu(stream)
        drawn = [parsed_figure(parser, sentence, request.views,
                               second_pass=request.format == "text")
                 for sentence in sentences]
        milliseconds = 1000.0 * (time.perf_counter() - start)
    except (CorpusError, ValueError) as error:     # MissingComponentError is a ValueError
        raise RequestError(HTTPStatus.BAD_REQUEST, str(error)) from None
    warnings = []
    if request.format == "text" and parser.tokenizer is not None:
        warnings.append(parser.tokenizer.unseen_scripts_warning(request.text))
    if not drawn:
        warnings.append("no sentences to parse (the text has no words)")
    return {"conllu": "".join(s.to_text() for d in drawn for s in d.parsed),
            "figures": "".join(figure_html(d.figure) for d in drawn),
            "sentences": len(drawn), "words": sum(len(d.figure.words) for d in drawn),
            "milliseconds": milliseconds, "warnings": [w for w in warnings if w]}


def warm_up(parser: Parser) -> None:
    """Parse and relax a sentence of three words once, and give its k best trees, so
    that the first request does not wait for the compiled kernels and the LP solver to
    load."""
    sentence = Sentence.from_words(["Dogs", "bark", "."])
    if parser.tagger is not None:
        sentence = parser.tag([sentence])[0]
    parsed_figure(parser, sentence, Views(lp=True))
    parsed_figure(parser, sentence, Views(kbest=2))


class Server(ThreadingHTTPServer):
    """The HTTP server of one parser: a thread per request."""

    daemon_threads = True
    request_queue_size = 128        # connections waiting to be accepted (socket backlog)

    def __init__(self, config: ServeConfig) -> None:
        """Listen on the configured address at once, so that a port in use is reported
        before a model is loaded; :meth:`load` gives the server its parser."""
        self.config = config
        self.parser: Parser | None = None
        self.page = b""
        super().__init__((config.host, config.port), Handler)

    def load(self, parser: Parser, model_name: str) -> "Server":
        """Serve ``parser`` (before :meth:`serve_forever`), its page naming ``model_name``."""
        self.parser = parser
        self.page = _page(parser, self.config, model_name).encode("utf-8")
        return self

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


class Handler(BaseHTTPRequestHandler):
    """``GET /`` and ``POST /parse`` (see the module's docstring)."""

    server: Server
    server_version = "polyparse"
    timeout = 60.0
    """Seconds a client may take to send its request."""

    def do_GET(self) -> None:
        if self.path.split("?")[0] in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no page {self.path}: the page is /"})

    def do_POST(self) -> None:
        if self.path != "/parse":
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no {self.path}: post to /parse"})
            return
        try:
            request = read_request(self._body(), self.server.config)
            result = answer(self.server.parser, request, self.server.config)
        except RequestError as error:
            self._json(error.status, {"error": error.message})
            return
        except (TimeoutError, ConnectionError) as error:   # the client is gone or stalled
            log.info("polyparse serve: a request was not read: %s", error)
            self.close_connection = True
            return
        except Exception:                                # a fault of ours, not the input's
            log.exception("polyparse serve: error while answering a request")
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR,
                       {"error": "internal error of the server (its log has the details)"})
            return
        self._json(HTTPStatus.OK, result)

    def _body(self) -> bytes:
        """The request's body, refused (:class:`RequestError`) without a length or over
        :attr:`ServeConfig.max_request` bytes, before it is parsed."""
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError(HTTPStatus.LENGTH_REQUIRED, "the request has no Content-Length")
        try:
            size = int(length)
            if size < 0:
                raise ValueError(length)
        except ValueError:
            raise RequestError(HTTPStatus.BAD_REQUEST,
                               f"bad Content-Length {length!r}") from None
        limit = self.server.config.max_request
        if size > limit:
            if size <= DRAIN_LIMIT:
                while size > 0 and (chunk := self.rfile.read(min(size, 1 << 16))):
                    size -= len(chunk)
            raise RequestError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                               f"the request has {int(length):,} bytes; this server takes at "
                               f"most {limit:,} (polyparse serve --max-request): parse a "
                               "long text with polyparse parse or polyparse draw")
        return self.rfile.read(size)

    def _json(self, status: HTTPStatus, data: dict) -> None:
        self._send(status, json.dumps(data).encode("utf-8"), "application/json")

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        log.info("%s %s", self.address_string(), format % args)


def _page(parser: Parser, config: ServeConfig, model_name: str) -> str:
    """The page of ``serve.html`` with its style, legend and what the model is."""
    model = parser.model
    order = model.part_config.order
    about = f"{model_name}: order {order}, decoder {parser.decoder.name}"
    if parser.tokenizer is None or parser.tagger is None:
        about += " (no tokenizer or tagger: give CoNLL-U)"
    template = resources.files(__package__).joinpath("serve.html").read_text(encoding="utf-8")
    return (template.replace("/*STYLE*/", PAGE_STYLE).replace("<!--LEGEND-->", LEGEND)
            .replace("<!--MODEL-->", escape(about))
            .replace("MAX_KBEST", str(config.max_kbest)))
