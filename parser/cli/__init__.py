"""The ``polyparse`` command: train, parse, draw, serve, eval, gap, download,
clusters, one module each (:mod:`.common` holds the flags and helpers they
share, :mod:`.flags` the flags made from the decoders' and trainers' declarations).

Every expected failure (bad input, a missing or damaged model, a bad option) ends with
one line ``polyparse: error: FILE:LINE: what is wrong`` on stderr and exit status 2,
never a traceback; every output path is checked to be writable before any work starts.
Outputs are written to a temporary file and renamed, so nothing on disk is half-written
or destroyed; SIGTERM and SIGHUP stop a run as Ctrl-C does (the temporary file removed,
exit status 128 + the signal's number, one line on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys

from polyparse.corpora.errors import CorpusError
from polyparse.corpora.files import OutputError, remove_unfinished
from polyparse.corpora.signals import stop_behind, stop_signals_raise

from ..checks import UsageError
from ..model_file import ModelFileError
from . import download, draw, evaluate, gap, parse, serve, train
from .common import QUIET_HELP
from .parse import parser_for_parse

__all__ = ["build_parser", "main", "parser_for_parse"]

COMMANDS = (train.add, parse.add, draw.add, serve.add, evaluate.add, gap.add, download.add,
            download.add_clusters)
"""What adds each command to the parser, in the order of ``polyparse --help``."""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="polyparse", description="polyparse: a dependency "
                                 "parser built on the polyhedral view of structured "
                                 "prediction (ILP decoding, LP relaxation + MST rounding).")
    ap.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    for command in sub.choices.values():     # after the command's name too
        command.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                             help=QUIET_HELP)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(message)s", stream=sys.stderr)
    try:
        with stop_signals_raise(remove_unfinished):
            args.run(args)
    except (CorpusError, ModelFileError, OutputError, UsageError) as error:
        print(f"polyparse: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return 0
    except (Exception, KeyboardInterrupt) as error:
        stop = stop_behind(error)     # a Stopped, or an error a stop signal caused
        if stop is not None:
            print(f"polyparse: {stop}", file=sys.stderr)
            return stop.exit_status
        if isinstance(error, KeyboardInterrupt):
            print("polyparse: interrupted", file=sys.stderr)
            return 130
        raise
    finally:
        remove_unfinished()
    return 0
