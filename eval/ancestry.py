"""How much the full-order LP loosens when ancestry is tied to the arcs without flows
(issue 13: a full-order AD3 factor graph).

One command::

    python -m eval run ancestry [--model PATH | --max-train 2000 --epochs 2 --order full]
        [--treebank en_ewt] [--max-dev N] [--out NAME]

The non-projective-arc parts of ``--order full`` need ancestry variables p_hj. The
default LP (:mod:`decoders.formulation`, ``ancestry="flow"``) reads them off the
multi-commodity flow, whose O(n |A|) variables an AD3 factor graph would have to carry
as TurboParser does when it has such parts (flow, XOR-OUT and IMPLY factors in place of
its TREE factor). ``"tree"`` and ``"product"`` tie p to the arcs by constraints on two or
three variables and one sum per (h, j): factors an AD3 graph can hold beside its TREE
factor. Their LP keeps the multi-commodity flow here, whose projection on the arcs is
the TREE factor's polytope, so each row measures exactly the LP such an AD3 graph would
solve. Per variant, on the model's first ``--max-dev`` dev sentences: CPU seconds of
HiGHS (program built and solved, then rounded as the ``lp`` decoder rounds), the share
of integral LPs, the LP value's excess over the ``"flow"`` LP's (relative to
max(1, |value|)), the share of sentences whose rounded tree is the ``"flow"`` LP's, and
the rounded trees' UAS. A last row decodes with the ``ad3`` decoder, whose full-order
factor graph (:mod:`decoders.full_graph`) has the ``"tree"`` program's LP: its value is
its dual bound (the LP optimum where it converged), with its median iterations and
shares converged and certified. One core. Writes ``<out>.{json,md}`` under ``--results``.
"""

from __future__ import annotations

import os
import time

import numpy as np
from ._common import arguments, dev_problems, model_arguments, single_thread, write_table

single_thread()

from polyparse.decoders import make_decoder  # noqa: E402
from polyparse.decoders.formulation import build_formulation  # noqa: E402
from polyparse.decoders.lp import relaxed_decode  # noqa: E402

VARIANTS = [("multi", "flow"), ("multi", "tree"), ("multi", "product"), ("single", "tree")]
"""``(flow, ancestry)``; the first is the ``lp`` decoder's program and the reference."""
AD3 = ("ad3", "tree")
"""The ``ad3`` decoder's row: its full graph's LP is that of ``("multi", "tree")``."""


SMOKE = ["--treebank", "sample", "--max-train", "20", "--epochs", "1", "--max-dev", "5"]
"""The smoke run: a full-order model trained on 20 sentences of the sample, 5 decoded."""


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    model_arguments(ap, order="full")
    ap.add_argument("--out", default="ancestry", help="result name under --results")
    args = ap.parse_args(argv)
    parser, dev, problems = dev_problems(args)
    single_root = parser.config.single_root
    tokens = sum(len(s) for s in dev)

    def decode(parts, scores, flow, ancestry):
        form = build_formulation(parts, scores, single_root=single_root, flow=flow,
                                 ancestry=ancestry)
        return relaxed_decode(parts, scores, form, single_root=single_root), form

    ad3 = make_decoder("ad3", single_root)
    decode(*problems[0], *VARIANTS[0])        # numba compiles the rounding's kernels
    ad3.decode(*problems[0])                  # and AD3's
    found = {}
    load_before = os.getloadavg()[0]
    for flow, ancestry in VARIANTS + [AD3]:
        results, seconds, size = [], [], []
        for parts, scores in problems:
            start = time.process_time()
            if flow == AD3[0]:
                result = ad3.decode(parts, scores)
            else:
                result, form = decode(parts, scores, flow, ancestry)
                size.append((form.n_vars, form.A_ub.shape[0] + form.A_eq.shape[0]))
            seconds.append(time.process_time() - start)
            results.append(result)
        found[flow, ancestry] = results, np.array(seconds), np.array(size)
        print(flow, ancestry, f"{sum(seconds):.1f} s", flush=True)
    load_after = os.getloadavg()[0]
    reference = found[VARIANTS[0]][0]
    ref_value = np.array([r.value for r in reference])
    gold = [s.heads[1:] for s in dev]
    rows = []
    for (flow, ancestry), (results, seconds, size) in found.items():
        is_ad3 = flow == AD3[0]
        value = np.array([r.stats.dual_value if is_ad3 else r.value for r in results])
        excess = (value - ref_value) / np.maximum(1.0, np.abs(ref_value))
        correct = sum(int(np.sum(r.heads[1:] == g)) for r, g in zip(results, gold))
        rows.append({
            "variant": (f"{flow}-commodity, ancestry {ancestry}" if not is_ad3 else
                        "ad3: the full factor graph (= multi-commodity, ancestry tree)"),
            "sentences": len(results), "seconds": float(seconds.sum()),
            "tokens_per_s": tokens / float(seconds.sum()),
            **({} if is_ad3 else {"variables": float(size[:, 0].mean()),
                                   "rows": float(size[:, 1].mean())}),
            "integral": float(np.mean([r.stats.integral for r in results])),
            "same_value": float(np.mean(np.abs(excess) <= 1e-6)),
            "excess_median": f"{np.median(excess):.1e}", "excess_max": f"{excess.max():.1e}",
            "same_tree": float(np.mean([np.array_equal(r.heads, f.heads)
                                        for r, f in zip(results, reference)])),
            "uas": 100.0 * correct / tokens,
            **({"iterations": float(np.median([r.stats.iterations for r in results])),
                "converged": float(np.mean([r.stats.converged for r in results])),
                "certified": float(np.mean([r.stats.certified for r in results]))}
               if is_ad3 else {}),
            "load": f"{load_before:.1f}-{load_after:.1f}"})
    notes = (f"Model {args.model or 'trained here'} (order "
             f"{parser.config.order}); {len(dev)} {args.treebank} dev "
             f"sentences ({tokens} tokens), gold tags. CPU seconds on one core of building "
             "the program, solving its LP with HiGHS and rounding (MST and local search, "
             "as the `lp` decoder); `variables`, `rows`: mean per sentence; `same value`: "
             "the share of LP values within 1e-6 (relative) of the first row's; `excess`: "
             "(LP value - first row's) / max(1, |first row's|), median and largest "
             "(positive: a looser relaxation of the same program); `same tree`: the share of rounded trees "
             "equal to the first row's; UAS of the rounded trees over all words.")
    columns = [("variant", "variant"), ("sentences", "sentences"), ("seconds", "CPU s"),
               ("tokens_per_s", "tokens/s"), ("variables", "variables"), ("rows", "rows"),
               ("integral", "integral"), ("same_value", "same value"),
               ("excess_median", "median excess"), ("excess_max", "largest excess"),
               ("same_tree", "same tree"), ("uas", "UAS"),
               ("iterations", "median AD3 iterations"), ("converged", "AD3 converged"),
               ("certified", "AD3 certified"), ("load", "load")]
    write_table(args, args.out, "Full-order LP: ancestry without flows", rows, columns,
                notes)

