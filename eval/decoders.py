"""The decoders side by side (issue 13, item 2): speed, certificates and accuracy of the
LP relaxations and of the exact decoders on one model's dev sentences.

The LP relaxation by HiGHS (``lp``; ``lp
star`` with the grandparent star rows of AD3's full-order graph) and by AD3 (``ad3``; at
full order ``ad3 one round``, the optimistic program alone without ancestry factors, the
default since 2026-11-28, and ``ad3 lazy``, rounds until the tree breaks no part, the
default before: an ``ad3`` row of an earlier table), and the two exact decoders,
HiGHS's branch and bound (``ilp``) and branch and bound on AD3's bounds (``ad3-exact``,
best first, its default, and depth first; ``ad3-exact one round`` relaxes each node on
the optimistic program alone).

One command::

    python -m eval run decoders [--treebank sample|en_ewt] [--max-train N] [--max-dev N]
                            [--epochs 2] [--max-heads 5] [--model PATH] [--out NAME]
                            [--decoders lp "lp star" ad3 ilp ad3-exact ...]

Trains an order-2 model as ``ad3_speed`` does (SSG, the ``lp`` decoder, pruned
to ``--max-heads`` heads per word; with ``--model``, loads it from there if the file
exists, whatever its order, else saves it there), computes every dev sentence's parts and scores once, then
decodes them with each decoder, one core, timing the decoder calls only (CPU seconds).
Per decoder: tokens/s, per-sentence median, 90th and 99th percentile and largest
milliseconds, the share of sentences whose tree is certified optimal (``lp``: an
integral LP; ``ad3``: its certificate; ``ilp``: no fallback; ``ad3-exact``: the search
closed), the share on which AD3 converged (``ad3``), mean AD3 iterations, AD3 calls
(at full order, where non-projective parts are added as trees break them) and
branch-and-bound nodes, UAS and LAS over all words, and, against ``ilp``, the largest
relative difference of the value ``|v - v_ilp| / max(1, |v_ilp|)``
and the share of identical trees; for the relaxations, against ``lp``, the number of
sentences whose tree differs from its tree and, in brackets, of those where both
relaxations were fractional (where each rounds its own fractional point: the source of
their UAS differences when only those are counted). Writes ``decoders_<treebank>.{json,md}``
under ``--results``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ._common import arguments, single_thread, treebank, write_table

single_thread()

from polyparse.decoders import DecodeStats, make_decoder  # noqa: E402
from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.config import PartsConfig, PrunerConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

DECODERS = {"lp": ("lp", {}), "lp star": ("lp", {"grandparent": "star"}),
            "ad3": ("ad3", {}), "ad3 one round": ("ad3", {"rounds": 1}),
            "ad3 lazy": ("ad3", {"rounds": None}), "ilp": ("ilp", {}),
            "ad3-exact": ("ad3-exact", {}), "ad3-exact one round": ("ad3-exact", {"rounds": 1}),
            "ad3-exact depth-first": ("ad3-exact", {"node_order": "depth"})}

SMOKE = ["--treebank", "sample", "--max-train", "20", "--max-dev", "5", "--epochs", "1"]
"""The smoke run: trained on 20 sentences of the sample, 5 dev sentences decoded."""


def certified(name: str, stats: DecodeStats) -> bool:
    """Whether the decoder proved its tree optimal."""
    if name == "lp":
        return bool(stats.integral)
    if name == "ilp":
        return not stats.fallback
    return bool(stats.certified)


def model_for(args, train) -> tuple[Parser, str]:
    """The order-2 parser (loaded from ``--model`` if it exists, else trained) and how."""
    if args.model and Path(args.model).exists():
        return Parser.load(args.model), f"loaded from {args.model}"
    config = TrainConfig(trainer="ssg", decoder="lp", epochs=args.epochs,
                         parts=PartsConfig("2"), pruner=PrunerConfig(max_heads=args.max_heads),
                         tokenizer=None, tagger=None, lemmatizer=None)
    start = time.perf_counter()
    parser = Parser.train(train, config)
    how = (f"trained on {len(train)} sentences, SSG with the lp decoder, {args.epochs} "
           f"epochs ({time.perf_counter() - start:.0f} s), pruned to {args.max_heads} heads")
    if args.model:
        parser.save(args.model)
    return parser, how


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="sample")
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--max-heads", type=int, default=5)
    ap.add_argument("--model", default=None,
                    help="model file: loaded if it exists, else the trained model is saved")
    ap.add_argument("--out", default=None, help="result name (default decoders_<treebank>)")
    ap.add_argument("--decoders", nargs="+", choices=list(DECODERS), default=list(DECODERS),
                    help="the rows (ilp is always run: the others are compared with it)")
    args = ap.parse_args(argv)
    train, dev = treebank(args.ud, args.treebank, args.max_train, args.max_dev)
    parser, how = model_for(args, train)
    model = parser.model
    problems = []
    for sentence in dev:
        example = model.example(parser.seen(sentence))
        scores = model.scores(example)
        problems.append((example, scores.parts, scores.labels))
    tokens = sum(len(s) for s in dev)
    rows, values = [], {}
    for label in [d for d in DECODERS if d in args.decoders or d == "ilp"]:
        name, options = DECODERS[label]
        decoder = make_decoder(name, parser.config.single_root, **options)
        decoder.decode(problems[0][0].parts, problems[0][1])      # compile before timing
        load_before = os.getloadavg()[0]
        results, seconds = [], []
        for example, scores, _ in problems:
            start = time.process_time()
            results.append(decoder.decode(example.parts, scores))
            seconds.append(time.process_time() - start)
        load_after = os.getloadavg()[0]
        predicted = [s.with_tree(r.heads, model.label_names(r.heads, example, labels))
                     for s, r, (example, _, labels) in zip(dev, results, problems)]
        scores = attachment_scores(dev, predicted).all_words
        seconds = np.array(seconds)
        stats = [r.stats for r in results]
        values[label] = np.array([r.value if name != "lp" and name != "ad3"
                                  else r.stats.rounded_value for r in results])
        row = {"decoder": label, "options": options, "sentences": len(dev), "tokens": tokens,
               "tokens_per_s": tokens / seconds.sum(), "seconds": float(seconds.sum()),
               "median_ms": 1e3 * float(np.median(seconds)),
               "p90_ms": 1e3 * float(np.percentile(seconds, 90)),
               "p99_ms": 1e3 * float(np.percentile(seconds, 99)),
               "max_ms": 1e3 * float(seconds.max()),
               "certified": float(np.mean([certified(name, s) for s in stats])),
               "uas": scores["uas"], "las": scores["las"],
               "fallbacks": int(sum(s.fallback for s in stats)),
               "load": f"{load_before:.1f}-{load_after:.1f}"}
        if name in ("ad3", "ad3-exact"):
            row["iterations_mean"] = float(np.mean([s.iterations for s in stats]))
            if stats[0].rounds is not None:
                row["rounds_mean"] = float(np.mean([s.rounds for s in stats]))
        if name == "ad3":
            row["converged"] = float(np.mean([s.converged for s in stats]))
        if name == "ad3-exact":
            nodes = np.array([s.nodes for s in stats])
            row.update(nodes_mean=float(nodes.mean()), nodes_max=int(nodes.max()),
                       branched=float(np.mean(nodes > 0)))
        if name == "ilp":
            row["nodes_mean"] = float(np.mean([s.ilp_nodes or 0 for s in stats]))
            ilp_heads = [r.heads for r in results]
        rows.append(row)
        rows[-1]["_results"] = results
        print({k: v for k, v in row.items() if k != "_results"}, flush=True)
    relaxed_by = {row["decoder"]: row["_results"] for row in rows
                  if DECODERS[row["decoder"]][0] in ("lp", "ad3")}
    for row in rows:
        results = row.pop("_results")
        if "lp" in relaxed_by and row["decoder"] in relaxed_by:
            differ = [not np.array_equal(r.heads, q.heads)
                      for r, q in zip(results, relaxed_by["lp"])]
            both_fractional = [d and not r.stats.integral and not q.stats.integral
                               for d, r, q in zip(differ, results, relaxed_by["lp"])]
            row["trees_unlike_lp"] = f"{sum(differ)} ({sum(both_fractional)})"
        rel = (np.abs(values[row["decoder"]] - values["ilp"])
               / np.maximum(1.0, np.abs(values["ilp"])))
        row["rel_diff_max"] = float(rel.max())
        row["rel_diff_max_text"] = f"{rel.max():.1e}"
        row["same_tree_as_ilp"] = float(np.mean([np.array_equal(r.heads, h)
                                                 for r, h in zip(results, ilp_heads)]))
    order = parser.config.order
    notes = (f"Treebank {args.treebank}: order-{order} model {how}; "
             f"{len(dev)} dev sentences ({tokens} tokens). Decoding time only (CPU "
             "seconds of the decoder calls, one core: OMP/BLAS/numba threads 1), parts "
             "and scores computed beforehand; the per-sentence times are CPU "
             "milliseconds too. `certified`: the share of sentences whose tree the decoder proved "
             "optimal (lp: integral LP; ad3: integral and within tol of its dual bound; "
             "ilp: no fallback; ad3-exact: the search closed). `max rel diff vs ilp`: of "
             "the returned tree's score (for lp and ad3, the rounded tree's), "
             "|v - v_ilp| / max(1, |v_ilp|). `load`: the 1-minute load average before and "
             "after the decoder's run (2 cores shared with other jobs). UAS and LAS over all "
             "words, punctuation included.")
    columns = [("decoder", "decoder"), ("tokens_per_s", "tokens/s"),
               ("median_ms", "median ms"), ("p90_ms", "p90 ms"), ("p99_ms", "p99 ms"),
               ("max_ms", "max ms"),
               ("certified", "certified"), ("converged", "AD3 converged"),
               ("iterations_mean", "mean AD3 iter"), ("rounds_mean", "mean AD3 calls"),
               ("nodes_mean", "mean B&B nodes"), ("nodes_max", "max nodes"),
               ("fallbacks", "fallbacks"), ("uas", "UAS"), ("las", "LAS"),
               ("rel_diff_max_text", "max rel diff vs ilp"),
               ("same_tree_as_ilp", "same tree as ilp"),
               ("trees_unlike_lp", "trees unlike lp's (both fractional)"), ("load", "load")]
    write_table(args, args.out or f"decoders_{args.treebank}",
                f"Order-{order} decoders: relaxations and exact decoding", rows, columns,
                notes)

