"""AD3 against HiGHS on the same LP relaxation (issue 13, item 1): decoding speed and
agreement on a trained order-2 model.

One command::

    python -m eval run ad3_speed [--treebank sample|en_ewt|tr_imst] [--max-train N]
                             [--max-dev N] [--epochs 2] [--max-heads 5] [--out NAME]

Trains an order-2 model (SSG, LP-relaxed loss-augmented inference, the ``lp`` decoder,
pruned to ``--max-heads`` heads per word) on the treebank's training sentences (the
sample of ``corpora/sample`` by default), then decodes the same dev sentences (parts and
scores computed once, outside the timing) with ``lp`` (HiGHS) and with ``ad3`` at its
default tolerance (1e-6) and at TurboParser's test-time setting (``tol`` 1e-3, 500
iterations), one core. Per decoder: decoding tokens/s (decoder calls only, rounding and
local search included), UAS of the output trees; for AD3: share converged, mean and
median iterations, share integral and certified, and the LP value against HiGHS's
(median and largest relative difference where converged; over all sentences). Writes
``ad3_speed.{json,md}`` (``--out``) under ``--results``.
"""

from __future__ import annotations

import time

import numpy as np

from ._common import arguments, single_thread, treebank, write_table

single_thread()

from polyparse.decoders import make_decoder  # noqa: E402
from polyparse.parser.config import PartsConfig, PrunerConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

SMOKE = ["--treebank", "sample", "--max-train", "20", "--max-dev", "5", "--epochs", "1"]

DECODERS = {"lp": ("lp", {}), "ad3": ("ad3", {}),
            "ad3-turbo": ("ad3", {"tol": 1e-3, "max_iter": 500})}


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="sample")
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--max-heads", type=int, default=5)
    ap.add_argument("--out", default="ad3_speed",
                    help="result name under --results (default ad3_speed)")
    args = ap.parse_args(argv)
    train, dev = treebank(args.ud, args.treebank, args.max_train, args.max_dev)
    config = TrainConfig(trainer="ssg", decoder="lp", epochs=args.epochs,
                         parts=PartsConfig("2"), pruner=PrunerConfig(max_heads=args.max_heads),
                         tokenizer=None, tagger=None, lemmatizer=None)
    start = time.perf_counter()
    parser = Parser.train(train, config)
    train_seconds = time.perf_counter() - start
    model = parser.model
    problems = []
    for sentence in dev:
        example = model.example(sentence)
        problems.append((example.parts, model.scores(example).parts, sentence.heads))
    tokens = sum(len(s) for s in dev)
    lp_values = None
    rows = []
    for label, (name, options) in DECODERS.items():
        decoder = make_decoder(name, config.single_root, **options)
        decoder.decode(*problems[0][:2])                 # compile before timing
        results, seconds = [], 0.0
        for parts, scores, _ in problems:
            start = time.process_time()
            results.append(decoder.decode(parts, scores))
            seconds += time.process_time() - start
        correct = sum(int((r.heads[1:] == gold[1:]).sum())
                      for r, (_, _, gold) in zip(results, problems))
        values = np.array([r.value for r in results])
        row = {"decoder": label, "options": options, "sentences": len(dev), "tokens": tokens,
               "tokens_per_s": tokens / seconds, "seconds": seconds,
               "uas": 100.0 * correct / tokens,
               "integral": float(np.mean([r.stats.integral for r in results]))}
        if lp_values is None:
            lp_values = values
        if name == "ad3":
            converged = np.array([r.stats.converged for r in results])
            iterations = np.array([r.stats.iterations for r in results])
            rel = np.abs(values - lp_values) / np.maximum(1.0, np.abs(lp_values))
            dual_ok = np.array([r.stats.dual_value for r in results]) >= lp_values - 1e-6
            row.update(converged=float(converged.mean()),
                       iterations_mean=float(iterations.mean()),
                       iterations_median=float(np.median(iterations)),
                       certified=float(np.mean([r.stats.certified for r in results])),
                       rel_diff_converged_median=float(np.median(rel[converged]))
                       if converged.any() else None,
                       rel_diff_converged_max=float(rel[converged].max())
                       if converged.any() else None,
                       rel_diff_all_max=float(rel.max()),
                       dual_bounds_lp=float(dual_ok.mean()),
                       same_tree_as_lp=float(np.mean([
                           np.array_equal(r.heads, o.heads)
                           for r, o in zip(results, rows_results["lp"])])))
            for key in ("rel_diff_converged_median", "rel_diff_converged_max",
                        "rel_diff_all_max"):
                row[key + "_text"] = "" if row[key] is None else f"{row[key]:.1e}"
        rows_results[label] = results
        rows.append(row)
        print(row, flush=True)
    notes = (f"Treebank {args.treebank}: {len(train)} training "
             f"sentences, order 2, SSG with the lp decoder, {args.epochs} epochs "
             f"({train_seconds:.0f} s), pruned to {args.max_heads} heads; {len(dev)} dev "
             f"sentences ({tokens} tokens). Decoding time only (CPU seconds, one core: "
             f"OMP/BLAS/numba threads 1), parts and scores computed beforehand. "
             "Relative differences of the LP value: "
             "|ad3 - lp| / max(1, |lp|). ad3's value is that of a feasible point of the "
             "LP (<= the optimum), and it reports convergence only when its dual bound is "
             "within tol of it.")
    columns = [("decoder", "decoder"), ("tokens_per_s", "tokens/s"), ("uas", "UAS"),
               ("integral", "integral"), ("converged", "converged"),
               ("iterations_mean", "mean iter"), ("iterations_median", "median iter"),
               ("certified", "certified"), ("rel_diff_converged_max_text",
                                            "max rel diff (converged)"),
               ("rel_diff_all_max_text", "max rel diff (all)"), ("dual_bounds_lp", "dual >= LP"),
               ("same_tree_as_lp", "same tree as lp")]
    write_table(args, args.out, "AD3 vs HiGHS on the order-2 LP relaxation", rows,
                columns, notes)


rows_results: dict = {}
