"""What several commands share: the input flags and the reading of raw text or CoNLL-U
(``parse``, ``draw``), the decoding flags and the loading of a model to decode with
(``parse``, ``draw``, ``serve``), ``--dask``, ``--cache`` and ``-q``.

Every check here raises :class:`~parser.checks.UsageError` (one line, exit status 2)
before any long work starts.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path

from polyparse.corpora.conllu_io import CONLLX_SUFFIXES
from polyparse.corpora.errors import CorpusError
from polyparse.corpora.sentence import MAX_SENTENCE_WORDS
from polyparse.decoders import DECODERS, make_decoder

from ..checks import ModelSettings, UsageError, at_least, check_solver
from ..progress import count_sentences, showing_bar
from .flags import add_flags, chosen

log = logging.getLogger("polyparse")

QUIET_HELP = ("no progress and no summary line on standard error, only warnings, errors "
              "and what an option asks for")

TEXT_SUFFIXES = frozenset({".txt"})


def names(registry: dict) -> str:
    """The names of a registry's components, for a help text: ``a, b or c``."""
    ordered = sorted(registry)
    return ", ".join(ordered[:-1]) + " or " + ordered[-1] if len(ordered) > 1 else ordered[0]


def given(**options) -> dict:
    """The options that were given on the command line."""
    return {k: v for k, v in options.items() if v is not None}


def sentence_total(path: str | None) -> int | None:
    """The number of sentences of CoNLL-U ``path`` for a progress bar's total, counted
    only when a bar is shown."""
    return count_sentences(path) if showing_bar() else None


# -- input ---------------------------------------------------------------------------

def add_input_flags(p) -> None:
    """The input of ``parse`` and ``draw``: ``--text``, ``--input``, ``--format`` and
    ``--max-words``."""
    p.add_argument("--text", metavar="TEXT", help="raw text to parse (instead of --input)")
    p.add_argument("--input", metavar="FILE", help="input (default: standard input)")
    p.add_argument("--format", choices=["auto", "conllu", "conllx", "text"], default="auto",
                   help="input format; text: paragraphs separated by blank lines (default: "
                        "by the suffix, .txt text, .conll/.conllx CoNLL-X, else CoNLL-U)")
    add_max_words_flag(p)


def add_max_words_flag(p) -> None:
    p.add_argument("--max-words", type=int, default=MAX_SENTENCE_WORDS, metavar="N",
                   help="raw text: cut a sentence longer than N words where the sentence "
                        "model likes it best (0: never; default %(default)s)")


def add_lp_max_words_flag(p) -> None:
    from ..views import DEFAULT_LP_MAX_WORDS

    p.add_argument("--lp-max-words", type=int, default=DEFAULT_LP_MAX_WORDS, metavar="N",
                   help="--lp: do not solve the LP of a sentence longer than N words (a "
                        "note says so; 0: no cap; default %(default)s)")


def lp_max_words(args) -> int | None:
    at_least(0, lp_max_words=args.lp_max_words)
    return args.lp_max_words or None


def input_format(args) -> str:
    """The format of the input of ``parse`` or ``draw`` (:func:`parse_format`), with
    ``--text``, ``--input`` and ``--max-words`` checked."""
    if args.text is not None and args.input:
        raise UsageError("give either --text or --input, not both")
    at_least(0, max_words=args.max_words)
    fmt = parse_format(args)
    if args.text is not None and fmt != "text":
        raise UsageError(f"--text is raw text; it cannot be read as {fmt}")
    return fmt


def parse_format(args) -> str:
    if args.text is not None:
        return "text" if args.format == "auto" else args.format
    if args.format == "auto" and args.input and Path(args.input).suffix.lower() in TEXT_SUFFIXES:
        return "text"
    return args.format


def conllx_input(args, fmt: str) -> bool:
    """Whether the input is CoNLL-X (by ``--format`` or the file's suffix)."""
    return fmt == "conllx" or (fmt == "auto" and bool(args.input)
                               and Path(args.input).suffix.lower() in CONLLX_SUFFIXES)


def open_input(path: str | None):
    """``path`` opened in binary, or standard input; a file that cannot be opened is a
    :class:`CorpusError`."""
    if not path:
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as error:
        raise CorpusError(path, None, f"cannot open: {error.strerror}") from None


def raw_text(args, parser, name: str) -> str:
    """The raw text of ``--text`` or ``--input`` for ``parser`` to tokenize and tag
    (refused before any input is read if the model has no tokenizer or tagger), with a
    warning for the scripts its tokenizer never saw."""
    parser.require("tokenizer", "parse raw text")
    parser.require("tagger", "parse raw text")
    text = args.text if args.text is not None else read_text(args.input)
    warning = parser.tokenizer.unseen_scripts_warning(text)
    if warning:
        log.warning("polyparse: warning: %s: %s", name, warning)
    return text


def read_text(path: str | None) -> str:
    """All of a UTF-8 text file (or standard input); bad UTF-8 is a located error."""
    name = path or "<stdin>"
    try:
        data = Path(path).read_bytes() if path else sys.stdin.buffer.read()
    except OSError as error:
        raise CorpusError(name, None, f"cannot open: {error.strerror}") from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise CorpusError(name, line, f"not valid UTF-8 (byte 0x{data[error.start]:02x}); "
                                      "the text must be encoded in UTF-8") from None


# -- decoding ------------------------------------------------------------------------

def add_decoding_flags(p) -> None:
    """How ``parse``, ``draw`` and ``serve`` decode: ``--confidence-temperature``,
    ``--decoder`` and the decoders' options."""
    p.add_argument("--confidence-temperature", default=None, metavar="T[,T_LABEL]",
                   help="temperatures dividing the arc and the label scores for "
                        "--confidence (one value: both; default 1)")
    p.add_argument("--decoder", default=None, metavar="D",
                   help=f"decoder: {names(DECODERS)}, one that decodes the model's parts "
                        "(default: the model's own)")
    add_flags(p, DECODERS, "decoder options (with --decoder, or for the model's decoder; "
                           "each for the decoders in brackets)")


def decoder_options_given(args) -> bool:
    return any(getattr(args, option, None) is not None
               for cls in DECODERS.values() for option in cls.settable())


def check_decoder_options(args) -> None:
    """Refuse, before any file is read, a ``--decoder`` that does not exist or does not
    take the decoder options given or their values (what the model's parts allow is
    checked with the model's metadata, :func:`model_decoder`)."""
    if args.decoder is None:
        return
    try:
        options = chosen(args, DECODERS, args.decoder) if args.decoder in DECODERS else {}
        make_decoder(args.decoder, **options)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_solver(options.get("solver"))


def model_decoder(args) -> tuple[ModelSettings, object, dict]:
    """The settings of ``--model`` (read from its metadata alone), the decoder it is to
    parse with and the decoder options given, checked before the model is loaded:
    ``--decoder`` (or the model's decoder) must exist, decode the model's parts and take
    the options and their values (a :class:`UsageError` otherwise)."""
    settings = ModelSettings.read(args.model)
    name = args.decoder or settings.config.decoder
    try:
        options = chosen(args, DECODERS, name) if name in DECODERS else {}
    except ValueError as error:
        raise UsageError(f"{args.model}: {error}") from None
    decoder = settings.decoder(args.decoder, options)
    check_solver(options.get("solver"))
    return settings, decoder, options


def load_parser(args, options: dict):
    """The :class:`Parser` of ``--model``, decoding with ``--decoder`` and the decoder
    ``options`` of :func:`model_decoder`, which checked them."""
    from ..pipeline import Parser

    parser = Parser.load(args.model)
    if args.decoder is not None or options:
        parser.use_decoder(args.decoder or parser.config.decoder, **options)
    return parser


def temperatures(args, asked: bool):
    """The :class:`~learning.confidence.Temperatures` of ``--confidence-temperature``
    (default 1) when probabilities are ``asked`` for; else None, and the option is
    refused if given."""
    from polyparse.learning.confidence import Temperatures

    text = args.confidence_temperature
    if not asked:
        if text is not None:
            raise UsageError("--confidence-temperature is for --confidence")
        return None
    if text is None:
        return Temperatures()
    try:
        values = [float(value) for value in text.split(",")]
        if len(values) not in (1, 2):
            raise ValueError(f"{len(values)} values")
        return Temperatures(values[0], values[-1])
    except ValueError as error:
        raise UsageError(f"--confidence-temperature takes one or two positive numbers "
                         f"(arcs[,labels]), not {text!r}: {error}") from None


# -- dask and the cache ----------------------------------------------------------------

def add_dask_flag(p, work: str, note: str) -> None:
    """``--dask``: ``work`` (``parse``) on a Dask cluster, and a ``note`` on it."""
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help=f"{work} on the Dask scheduler at ADDRESS (host:port) or on N local "
                        f"worker processes (local:N); {note} (needs polyparse[dask])")


def check_dask(address: str | None) -> None:
    """Refuse ``--dask`` without Dask installed, or a bad ``local:N``, before any work
    (the scheduler itself is reached once the files are checked, :func:`cluster`)."""
    if address is None:
        return
    from ..cluster import ClusterError, check_address

    try:
        check_address(address)
    except ClusterError as error:
        raise UsageError(str(error)) from None


@contextlib.contextmanager
def cluster(address: str | None):
    """A Dask client of ``--dask`` (None without it), connected before any work; a
    :class:`UsageError` if Dask is missing or the scheduler does not answer."""
    if address is None:
        yield None
        return
    from ..cluster import ClusterError, connect

    try:
        stack = contextlib.ExitStack()
        client = stack.enter_context(connect(address))
    except ClusterError as error:
        raise UsageError(str(error)) from None
    with stack:
        try:
            yield client
        except ClusterError as error:          # the workers cannot load the model
            raise UsageError(str(error)) from None


def add_cache_flag(p) -> None:
    p.add_argument("--cache", metavar="DIR", default=None,
                   help="cache directory (default: $POLYPARSE_CACHE or ~/.cache/polyparse)")


def add_treebank_flags(p) -> None:
    """Where a UD treebank is fetched from and kept (``download``, ``train
    --treebank``): ``--cache``, ``--base-url`` and ``--tag``."""
    from polyparse.corpora.download import DEFAULT_BASE_URL, DEFAULT_TAG

    add_cache_flag(p)
    p.add_argument("--base-url", default=None, metavar="URL",
                   help=f"where treebanks are served from, as URL/NAME/TAG/FILE (default "
                        f"{DEFAULT_BASE_URL})")
    p.add_argument("--tag", default=None, metavar="TAG",
                   help=f"release tag (or branch) of the treebank's repository (default "
                        f"{DEFAULT_TAG})")


def fetch_treebank(args, name: str, splits: tuple[str, ...] | None = None) -> list[Path]:
    """The ``splits`` (default: all) of UD treebank ``name`` in the cache of ``args``,
    downloaded there if missing (:func:`~corpora.download.download_treebank`, from
    ``--base-url`` at ``--tag``)."""
    from polyparse.corpora import download

    return download.download_treebank(name, cache_dir(args),
                                      base_url=args.base_url or download.DEFAULT_BASE_URL,
                                      tag=args.tag or download.DEFAULT_TAG,
                                      splits=splits or download.SPLITS,
                                      progress=sys.stderr.isatty())


def cache_dir(args) -> Path:
    from polyparse.corpora.cache import default_cache_dir

    return Path(args.cache) if args.cache else default_cache_dir()
