"""K-best oracle UAS and the cost of K-best decoding on a treebank's dev set.

    python -m eval run kbest [--treebank en_ewt] [--train-sentences N] [--epochs E] [--max-dev N]

Trains an order-1 parser (ssg, mst, single root, gold tags) on the first N training
sentences (all by default), scores every dev sentence once (``LinearModel.arc_scores``),
then decodes: the best tree (``chu_liu_edmonds``, what ``polyparse parse`` runs) and the
K best trees (``kbest_arborescences``, what ``parse --kbest K`` runs) for K = 1, 5, 10.
The oracle UAS of K is the UAS of the best of the K trees per sentence (the one with the
most correct heads), over all words and without punctuation (UPOS PUNCT). Times, one
core, the best of three passes over the dev set: decoding only (from the score
matrices), and end to end as a user pays it (``Parser.parse_one`` against
``Parser.kbest``: scoring the sentence, decoding, labelling the trees). Writes
``kbest_<treebank>.{json,md}`` under ``--results``.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from ._common import arguments, single_thread, split, write_table

single_thread()

from polyparse.decoders.kbest import kbest_arborescences  # noqa: E402
from polyparse.decoders.trees import chu_liu_edmonds  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

KS = (1, 5, 10)

SMOKE = ["--treebank", "sample", "--train-sentences", "20", "--epochs", "1", "--max-dev", "10"]
"""The smoke run: trained on 20 sentences of the sample, 10 dev sentences."""
REPEATS = 3


def best_time(decode, matrices) -> float:
    """The least total time of ``decode(S)`` over all ``matrices``, in REPEATS passes."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for S in matrices:
            decode(S)
        times.append(time.perf_counter() - start)
    return min(times)


def pipeline_time(run, sentences) -> float:
    """The least total time of ``run(sentence)`` over ``sentences``, in REPEATS passes."""
    return best_time(run, sentences)


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--train-sentences", type=int, default=None, metavar="N",
                    help="train on the first N sentences (default: all)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="the first N dev sentences (default all)")
    args = ap.parse_args(argv)
    train, dev, how = split(args.ud, args.treebank)
    dev = dev[:args.max_dev]
    train = train[:args.train_sentences]
    start = time.perf_counter()
    parser = Parser.train(train, TrainConfig(epochs=args.epochs, tokenizer=None),
                          progress=sys.stderr.isatty())
    train_time = time.perf_counter() - start
    matrices = [parser.model.arc_scores(s)[0] for s in dev]
    gold = [s.heads[1:] for s in dev]
    scored = [np.array([u != "PUNCT" for u in s.upos[1:]]) for s in dev]
    words = sum(len(g) for g in gold)
    content = sum(int(m.sum()) for m in scored)

    parser.use_ud_rules = False        # as parse --kbest --no-ud-rules: the model's own k best
    load_before = os.getloadavg()
    one_best = best_time(lambda S: chu_liu_edmonds(S, True), matrices)
    one_parse = pipeline_time(parser.parse_one, dev)
    rows = [{"k": "1-best (chu_liu_edmonds)", "time_s": one_best, "relative_time": 1.0,
             "pipeline_s": one_parse, "relative_pipeline": 1.0}]
    for k in KS:
        kbest = [kbest_arborescences(S, k, True) for S in matrices]
        correct = [max(int(np.sum(t.heads[1:] == g)) for t in trees)
                   for trees, g in zip(kbest, gold)]
        correct_np = [max(int(np.sum((t.heads[1:] == g) & m)) for t in trees)
                      for trees, g, m in zip(kbest, gold, scored)]
        elapsed = best_time(lambda S: kbest_arborescences(S, k, True), matrices)
        pipeline = pipeline_time(lambda s: parser.kbest(s, k), dev)
        rows.append({"k": k, "oracle_uas_all": 100.0 * sum(correct) / words,
                     "oracle_uas_no_punct": 100.0 * sum(correct_np) / content,
                     "mean_trees": float(np.mean([len(t) for t in kbest])),
                     "time_s": elapsed, "relative_time": elapsed / one_best,
                     "pipeline_s": pipeline, "relative_pipeline": pipeline / one_parse})
    load_after = os.getloadavg()
    for row in rows:
        row.update(load_1min_before=load_before[0], load_1min_after=load_after[0])
    lengths = [len(g) for g in gold]
    notes = (f"Treebank {args.treebank} ({how}); order-1 model (ssg, mst, single root, gold "
             f"tags) trained on {len(train)} sentences, {args.epochs} epochs, in "
             f"{train_time:.0f} s. Dev: {len(dev)} sentences, {words} words (mean length "
             f"{np.mean(lengths):.1f}, max {max(lengths)}). Oracle UAS: the best of the K "
             "trees per sentence; 'all' counts every word (CoNLL 2018), 'no punct' skips "
             "UPOS PUNCT. Time: decoding only (score matrices computed beforehand), all dev "
             f"sentences, one core, best of {REPEATS} passes; relative to the 1-best MST; "
             "end to end: Parser.kbest(sentence, K) against Parser.parse_one(sentence) "
             "(scoring, decoding, labels; UD rules off, as parse --kbest decodes without "
             "them). "
             f"Load (1 min) before/after the timing: {load_before[0]:.2f} / "
             f"{load_after[0]:.2f}.")
    table = write_table(args, f"kbest_{args.treebank}", f"K-best trees on {args.treebank} dev",
                rows, [("k", "K"), ("oracle_uas_all", "oracle UAS (all)"),
                       ("oracle_uas_no_punct", "oracle UAS (no punct)"),
                       ("mean_trees", "trees per sentence"), ("time_s", "decode time (s)"),
                       ("relative_time", "time / 1-best"),
                       ("pipeline_s", "end to end (s)"),
                       ("relative_pipeline", "end to end / 1-best"),
                       ("load_1min_after", "load (1 min)")], notes)
    print(table.read_text())

