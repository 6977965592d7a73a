"""Where HiGHS's exact decoding spends its time on the sentences whose LP is fractional
(issue 13: exact decoding at the LP's speed, for ``--order full`` too).

One command::

    python -m eval run ilp_root [--model PATH | --max-train 2000 --epochs 2 --order full]
        [--treebank en_ewt] [--max-dev N] [--out NAME]

Parses the first ``--max-dev`` dev sentences' parts and scores with the model and solves
each one's LP relaxation (the ``lp`` decoder: the multi-commodity program), timed on a
second pass after the first has compiled the kernels. On the sentences whose LP is
fractional it times HiGHS's branch and bound (:func:`decoders.ilp.solve_highs`, relative
gap 0, :data:`TIME_LIMIT` seconds each) on the single- and the multi-commodity program of
:mod:`decoders.formulation`, with HiGHS's presolve on and off. Per variant: CPU seconds of
building the program and of the solve, the solve's median multiple of the sentence's LP
time, branch-and-bound nodes (1: closed at the root), and the largest difference of the
optimum from the first variant's (all four must find the same optimum). One core.
Writes ``<out>.{json,md}`` under ``--results``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import NamedTuple

import numpy as np
from ._common import arguments, dev_problems, model_arguments, single_thread, write_table

single_thread()

from polyparse.decoders import Parts, make_decoder  # noqa: E402
from polyparse.decoders.formulation import build_formulation  # noqa: E402
from polyparse.decoders.ilp import solve_highs  # noqa: E402

TIME_LIMIT = 120.0
"""CPU seconds per branch and bound before HiGHS gives up (counted as not closed)."""

VARIANTS = [(flow, presolve) for flow in ("single", "multi") for presolve in (True, False)]


class Fractional(NamedTuple):
    """A sentence whose LP is fractional, and what the ``lp`` decoder made of it."""

    parts: Parts
    scores: np.ndarray
    words: int
    lp_seconds: float
    lp_value: float
    rounded_value: float


def solve(form, presolve: bool) -> tuple[float, float, int, bool]:
    """``(CPU s, optimum, nodes, proven optimal)`` of HiGHS's branch and bound."""
    start = time.process_time()
    x, optimal, nodes = solve_highs(form, TIME_LIMIT, presolve=presolve)
    seconds = time.process_time() - start
    return seconds, np.nan if x is None else float(form.c @ x), nodes or 0, optimal


SMOKE = ["--treebank", "sample", "--max-train", "20", "--epochs", "1", "--max-dev", "20"]
"""The smoke run: a full-order model trained on 20 sentences of the sample, 20 decoded."""


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    model_arguments(ap, order="full")
    ap.add_argument("--out", default="ilp_root", help="result name under --results")
    args = ap.parse_args(argv)
    parser, dev, problems = dev_problems(args)
    lp = make_decoder("lp", parser.config.single_root)
    problems = [(parts, scores, len(s)) for (parts, scores), s in zip(problems, dev)]
    for parts, scores, _ in problems:   # once untimed: numba compiles the kernels (local
        lp.decode(parts, scores)        # search only on a fractional LP) on first use
    lp_seconds, fractional = 0.0, []
    for parts, scores, words in problems:
        start = time.process_time()
        relaxed = lp.decode(parts, scores)
        seconds = time.process_time() - start
        lp_seconds += seconds
        if not relaxed.stats.integral:
            fractional.append(Fractional(parts, scores, words, seconds,
                                         relaxed.stats.lp_value,
                                         relaxed.stats.rounded_value))
    if not fractional:
        sys.exit(f"none of the {len(dev)} dev sentences has a fractional LP: nothing to time")
    rows = [{"variant": "lp (multi-commodity), all sentences", "sentences": len(dev),
             "solve_s": lp_seconds, "tokens_per_s": sum(p[2] for p in problems) / lp_seconds}]
    results = {variant: [] for variant in VARIANTS}
    load_before = os.getloadavg()[0]
    for sentence in fractional:
        for flow, presolve in VARIANTS:
            start = time.process_time()
            form = build_formulation(sentence.parts, sentence.scores,
                                     single_root=parser.config.single_root, flow=flow)
            build = time.process_time() - start
            results[flow, presolve].append((build, *solve(form, presolve)))
        print(sentence.words, {f"{f}/{p}": round(r[-1][1], 3) for (f, p), r in results.items()},
              flush=True)
    load_after = os.getloadavg()[0]
    reference = np.array([r[2] for r in results[VARIANTS[0]]])
    lp_time = np.array([f.lp_seconds for f in fractional])
    lp_value = np.array([f.lp_value for f in fractional])
    rounded = np.array([f.rounded_value for f in fractional])
    scale = np.maximum(1.0, np.abs(reference))
    lp_gap, rounding_gap = (lp_value - reference) / scale, (reference - rounded) / scale
    rows.append({"variant": "lp (multi-commodity), fractional sentences",
                 "sentences": len(fractional), "solve_s": float(lp_time.sum()),
                 "lp_gap_median": f"{np.median(lp_gap):.1e}",
                 "lp_gap_max": f"{lp_gap.max():.1e}",
                 "rounded_optimal": float(np.mean(rounding_gap <= 1e-9))})
    for (flow, presolve), found in results.items():
        build, seconds, value, nodes, optimal = (np.array(c) for c in zip(*found))
        rows.append({"variant": f"milp, {flow}-commodity, presolve {'on' if presolve else 'off'}",
                     "sentences": len(found), "build_s": float(build.sum()),
                     "solve_s": float(seconds.sum()),
                     "median_x_lp": float(np.median(seconds / lp_time)),
                     "nodes_mean": float(nodes.mean()), "nodes_max": int(nodes.max()),
                     "at_root": float(np.mean(nodes <= 1)), "closed": float(np.mean(optimal)),
                     "diff": f"{np.nanmax(np.abs(value - reference)):.1e}",
                     "load": f"{load_before:.1f}-{load_after:.1f}"})
    notes = (f"Model {args.model or 'trained here'} (order "
             f"{parser.config.order}); {len(dev)} {args.treebank} dev "
             f"sentences, gold tags, {len(fractional)} of them with a fractional LP. CPU "
             "seconds on one core; `solve s`: HiGHS's time, summed over the sentences "
             "(`build s`: making the program); `median x LP`: the solve's median multiple "
             "of the same sentence's LP (the `lp` decoder, rounding included); `at root`: "
             "the share closed with at most one node; `diff`: the largest difference of "
             "the optimum from the first milp row's; `LP gap`: (LP value - optimum) / "
             "max(1, |optimum|), median and largest; `rounded optimal`: the share of them "
             "whose rounded tree (the `lp` decoder's, after local search) is optimal.")
    columns = [("variant", "variant"), ("sentences", "sentences"), ("build_s", "build s"),
               ("solve_s", "solve s"), ("tokens_per_s", "tokens/s"),
               ("median_x_lp", "median x LP"), ("nodes_mean", "mean nodes"),
               ("nodes_max", "max nodes"), ("at_root", "at root"), ("closed", "closed"),
               ("diff", "diff"), ("lp_gap_median", "median LP gap"),
               ("lp_gap_max", "largest LP gap"), ("rounded_optimal", "rounded optimal"),
               ("load", "load")]
    write_table(args, args.out, "Exact decoding with HiGHS on fractional LPs", rows,
                columns, notes)

