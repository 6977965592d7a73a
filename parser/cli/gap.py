"""``polyparse gap``: the LP relaxation's gap and the exact ILP's runtime, sentence by
sentence, under a model's scores."""

from __future__ import annotations

import contextlib
import json
import logging
import sys

from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.files import atomic_write
from polyparse.decoders import DECODERS, decoder_class, make_decoder

from ..checks import ModelSettings, UsageError, check_files, check_solver
from ..progress import Tally, tracked
from .common import sentence_total

log = logging.getLogger("polyparse")

def add(sub) -> None:
    p = sub.add_parser(
        "gap", help="relaxation gap against runtime, sentence by sentence",
        description="Decode every sentence with the LP relaxation + MST rounding (+ local "
                    "search) and with the exact ILP under the model's scores. Writes one JSON "
                    "line per sentence (sent_id, n, lp_value, ilp_value, rounded_value, "
                    "search_moves, gap, integral, fractional_arcs, time_build, time_lp, "
                    "time_round, time_ilp, ilp_nodes, fallback, fallback_stage, and the "
                    "number of correct heads when the input has gold heads), then a summary "
                    "by sentence length. With --time-limit, a decoder that runs out falls "
                    "back to a cheaper tree: fallback is true, fallback_stage says which "
                    "decoder and stage (e.g. lp:build, ilp:ilp), and an LP that ran out has "
                    "no lp_value and no gap.")
    p.add_argument("--model", required=True, metavar="M", help="model file (.npz)")
    p.add_argument("--input", required=True, metavar="FILE", help="CoNLL-U sentences")
    p.add_argument("--jsonl", metavar="OUT", help="JSON lines file (default: standard output, "
                   "the summary then on standard error)")
    p.add_argument("--plot", metavar="OUT.png", help="plot ILP time against gap and LP and "
                   "ILP time against length (needs matplotlib)")
    p.add_argument("--solver", default="highs", help="ILP solver (default %(default)s)")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="seconds per sentence for each decoder, all stages included; out of "
                        "time, it falls back to a cheaper tree (default: no limit)")
    p.add_argument("--flow", choices=["multi", "single"], default="multi",
                   help="how the LP and ILP keep the arcs a tree: multi- or single-commodity "
                        "flow (default %(default)s)")
    p.add_argument("--no-search", action="store_true",
                   help="round fractional LP solutions by MST alone, without local search")
    p.add_argument("--compare", choices=sorted(n for n, cls in DECODERS.items() if not cls.exact),
                   default=None,
                   help="also solve the LP relaxation by this relaxation and report it "
                        "beside HiGHS's: a 'compare' object in each record and a second "
                        "summary")
    p.set_defaults(run=run)


def run(args) -> None:
    from .. import gap
    from ..config import check_decoder
    from ..pipeline import Parser

    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError(f"--time-limit must be positive, not {args.time_limit}")
    check_files({"--model": args.model, "--input": args.input},
                {"--jsonl": args.jsonl, "--plot": args.plot})
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'polyparse[plot]'") from None
    check_solver(args.solver)
    settings = ModelSettings.read(args.model)
    single_root = settings.config.single_root
    lp = make_decoder("lp", single_root, flow=args.flow, search=not args.no_search,
                      time_limit=args.time_limit)
    ilp = make_decoder("ilp", single_root, solver=args.solver, time_limit=args.time_limit,
                       flow=args.flow)
    compare = None
    if args.compare:
        try:
            # the same rounding as the LP's; at full order lazy rounds (the exact LP)
            wanted = {"search": not args.no_search, "rounds": None}
            declared = decoder_class(args.compare).options()
            compare = check_decoder(settings.config, make_decoder(
                args.compare, single_root,
                **{name: value for name, value in wanted.items() if name in declared}))
        except ValueError as error:
            raise UsageError(f"--compare: {error}") from None
    parser = Parser.load(args.model)
    tally = Tally("measured")
    records = []
    with (atomic_write(args.jsonl) if args.jsonl else contextlib.nullcontext(sys.stdout)) as out:
        for record in tracked(gap.measure(parser.model, read_conllu(args.input), lp, ilp,
                                          compare),
                              tally, counts=lambda r: (1, r["n"]),
                              total=sentence_total(args.input)):
            records.append(record)
            out.write(json.dumps(record) + "\n")
            out.flush()
    log.info("%s", tally.line())
    _report_gap(args, records, compare)


def _report_gap(args, records: list[dict], compare) -> None:
    """The summaries of ``gap`` by sentence length (and of ``--compare``), its
    fallbacks, and its plot."""
    from .. import gap

    summary_file = sys.stdout if args.jsonl else sys.stderr
    print(gap.format_summary(gap.summarize(records)), file=summary_file)
    if compare is not None:
        print(f"\n{args.compare}, the same sentences:", file=summary_file)
        print(gap.format_summary(gap.summarize(gap.compared(records))), file=summary_file)
    fallbacks = sum(r["fallback"] for r in records)
    if fallbacks:
        print(f"{fallbacks} of {len(records)} sentence(s) fell back at the time limit",
              file=summary_file)
    if args.plot:
        gap.plot(records, args.plot)

