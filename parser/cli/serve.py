"""``polyparse serve``: a local web page that parses what is typed into it and draws
the trees as ``draw`` does."""

from __future__ import annotations

import sys
from pathlib import Path

from ..checks import UsageError, at_least, check_files
from .common import (add_decoding_flags, add_lp_max_words_flag, add_max_words_flag,
                     check_decoder_options, load_parser, lp_max_words, model_decoder,
                     temperatures)

def add(sub) -> None:
    from ..serve import ServeConfig

    defaults = ServeConfig()
    p = sub.add_parser(
        "serve", help="a local web page that parses what you type and draws it",
        description="Serve a web page that parses the text (or CoNLL-U) typed into it and "
                    "shows the trees as polyparse draw draws them, with the LP relaxation, "
                    "the k best trees and the confidence as switches, a download of the "
                    "CoNLL-U and the decoding time. Listens on 127.0.0.1 (this machine "
                    "only) unless --host says otherwise; Ctrl-C stops it.")
    p.add_argument("--model", required=True, metavar="M", help="model file (.npz)")
    p.add_argument("--host", default=defaults.host,
                   help="address to listen on (default %(default)s: this machine only)")
    p.add_argument("--port", type=int, default=defaults.port,
                   help="port (0: any free port; default %(default)s)")
    p.add_argument("--max-request", type=int, default=defaults.max_request, metavar="BYTES",
                   help="largest request taken; a larger one is refused with a message "
                        "(default %(default)s)")
    p.add_argument("--max-kbest", type=int, default=defaults.max_kbest, metavar="K",
                   help="largest K of the k-best switch (default %(default)s)")
    add_max_words_flag(p)
    add_lp_max_words_flag(p)
    add_decoding_flags(p)
    p.set_defaults(run=run)


def run(args) -> None:
    from ..serve import Server, ServeConfig, warm_up

    at_least(1, max_request=args.max_request, max_kbest=args.max_kbest)
    at_least(0, max_words=args.max_words)
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, not {args.port}")
    check_decoder_options(args)
    check_files({"--model": args.model}, {})
    options = model_decoder(args)[2]
    config = ServeConfig(host=args.host, port=args.port, max_request=args.max_request,
                         max_kbest=args.max_kbest, max_words=args.max_words or None,
                         lp_max_words=lp_max_words(args),
                         temperatures=temperatures(args, True))
    try:
        server = Server(config)
    except OSError as error:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: "
                         f"{error.strerror or error}") from None
    with server:
        parser = load_parser(args, options)
        server.load(parser, Path(args.model).name)
        warm_up(parser)
        print(f"polyparse: serving {args.model} at {server.url} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        server.serve_forever()

