"""Issue 43 item 2: what Koo, Carreras and Collins (2008)'s word-cluster features give
the parser, at orders 1 and 2, on gold and on predicted tags.

One command::

    python -m eval run cluster_features [--treebank en_ewt] [--orders 1 2]
                                        [--clusters FILE] [--max-train N] [--jobs 2]
                                        [--work DIR] [--out NAME]

For each order, two models are trained by ``polyparse train`` with the user's defaults
on the same training file (``eval.defaults.split``: train.conllu, or every 10th
sentence held out where the treebank has no dev.conllu, and its first ``--max-train``
sentences if given), both with the same word clusters in the tagger
(``--word-clusters``): one whose parser reads them too (the default with clusters) and
one without (``--no-cluster-features``), so the tagger, its jackknifed tags and
everything else are alike and the rows differ by the parser's cluster templates alone.
``--jobs`` models train at once (each in its own process, one thread each). The
clusters are ``--clusters FILE``, else those of the treebank's language from spaCy's
lookups data (``polyparse clusters LANG``; ``pip install -e '.[clusters]'``); for the
sample treebank (the smoke run), made-up ones: each word's bit string is the index of
its most frequent UPOS in 4 bits, then 4 bits of its hash.

Each model then parses the held-out sentences (gold tokens) twice in this process: with
their gold UPOS, XPOS and FEATS, and retagged by its own tagger (``Parser.parse(retag=
True)``, as ``polyparse parse --retag``), timed after an untimed parse of the first
sentences; UAS and LAS count every word. Writes
``OUT.json`` and ``OUT.md`` under ``--results``: a row per order, clusters and tags, and
the gain of the clusters per order and tags. Models and logs stay in ``--work``.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ._common import (POLYPARSE, SAMPLE, arguments, folder, markdown_table, require_treebanks,
                      single_thread, timed_command, word_clusters, write_table)
from .defaults import split

single_thread()

from polyparse.corpora.conllu_io import read_conllu  # noqa: E402
from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.pipeline import Parser  # noqa: E402

SMOKE = ["--ud", str(SAMPLE.parent), "--treebank", "sample", "--orders", "1", "--max-train",
         "30", "--epochs", "1", "--work", "{results}/work"]
"""The smoke run: order 1, one epoch on 30 sample sentences, every 10th held out."""

ARMS = (("without", ["--no-cluster-features"]), ("with", []))
WARM_SENTENCES = 20
"""Held-out sentences parsed untimed by each model before the timed parse."""
COLUMNS = [("treebank", "treebank"), ("order", "order"), ("clusters", "parser clusters"),
           ("tags", "tags"), ("UAS", "UAS"), ("LAS", "LAS"), ("train_min", "train min"),
           ("parse_s", "parse s")]
GAIN_COLUMNS = [("order", "order"), ("tags", "tags"), ("UAS", "UAS gain"),
                ("LAS", "LAS gain")]


def main(argv=None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt", help="a folder of --ud (default en_ewt)")
    ap.add_argument("--orders", nargs="+", choices=["1", "2"], default=["1", "2"])
    ap.add_argument("--clusters", type=Path, default=None, metavar="FILE",
                    help="Brown clusters in Liang's paths format (default: spaCy's of the "
                         "treebank's language)")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="train on the first N training sentences (default all)")
    ap.add_argument("--epochs", type=int, default=None,
                    help="training epochs (default: polyparse train's)")
    ap.add_argument("--jobs", type=int, default=2, help="models trained at once (default 2)")
    ap.add_argument("--work", type=Path, default=Path("eval/results/tmp/cluster_features"),
                    metavar="DIR", help="split treebank, models and logs")
    ap.add_argument("--out", default=None, metavar="NAME",
                    help="result name (default cluster_features_TREEBANK)")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, [args.treebank])
    if args.clusters is not None and not args.clusters.is_file():
        ap.error(f"--clusters {args.clusters}: no such file")
    work = args.work / args.treebank
    work.mkdir(parents=True, exist_ok=True)
    train, held, how = split(folder(args.ud, args.treebank), work, None, args.max_train)
    if args.clusters:
        clusters = str(args.clusters)
    elif args.treebank == "sample":
        clusters = made_up_clusters(train, work / "sample.paths")
    else:
        clusters = word_clusters(args.treebank)
    if clusters is None:
        ap.error(f"no word clusters for {args.treebank}'s language: give --clusters FILE")

    runs = [(order, arm, flags) for order in args.orders for arm, flags in ARMS]

    def trained(run) -> float:
        order, arm, flags = run
        model = work / f"order{order}-{arm}.npz"
        return timed_command([*POLYPARSE, "train", "--train", str(train), "--model",
                              str(model), "--word-clusters", clusters,
                              *([] if order == "1" else ["--order", order]),
                              *([] if args.epochs is None else ["--epochs", str(args.epochs)]),
                              *flags],
                             work / f"order{order}-{arm}.log") / 60

    with ThreadPoolExecutor(args.jobs) as pool:
        minutes = dict(zip([run[:2] for run in runs], pool.map(trained, runs)))

    gold = list(read_conllu(held))
    rows = []
    for (order, arm), train_min in minutes.items():
        parser = Parser.load(work / f"order{order}-{arm}.npz")
        for tags, retag in (("gold", False), ("predicted", True)):
            list(parser.parse(gold[:WARM_SENTENCES], retag=retag))  # numba's cache, untimed
            start = time.perf_counter()
            parsed = list(parser.parse(gold, retag=retag))
            seconds = time.perf_counter() - start
            scores = attachment_scores(gold, parsed)
            rows.append({"treebank": args.treebank, "order": order, "clusters": arm,
                         "tags": tags, "UAS": scores.all_words["uas"], "LAS": scores.all_words["las"],
                         "train_min": train_min, "parse_s": seconds,
                         "sentences": len(gold)})
            print(rows[-1], file=sys.stderr)
    gains = []
    for order in args.orders:
        for tags in ("gold", "predicted"):
            pair = {r["clusters"]: r for r in rows if r["order"] == order and r["tags"] == tags}
            gains.append({"order": order, "tags": tags,
                          **{m: pair["with"][m] - pair["without"][m] for m in ("UAS", "LAS")}})
    notes = (f"Held out: {how} ({len(gold)} sentences, gold tokens); training file "
             f"{train}{'' if args.max_train is None else f' (first {args.max_train})'}; "
             f"clusters {clusters}. Both models of an order have the clusters in the "
             "tagger; `parser clusters` says whether the parser's templates read them. "
             "`train min`: wall minutes of `polyparse train`, "
             f"{args.jobs} at once; `parse s`: the held-out sentences in this process.")
    write_table(args, args.out or f"cluster_features_{args.treebank}",
                f"Word-cluster features (Koo et al. 2008) on {args.treebank}", rows, COLUMNS,
                notes, meta={"gains": gains},
                after="\n".join(["Gain of the parser's cluster features (with - without):",
                                 "", *markdown_table(gains, GAIN_COLUMNS)]))


def made_up_clusters(train: Path, path: Path) -> str:
    """Clusters of the words of ``train`` for the smoke run, written to ``path``: the
    index of a word's most frequent UPOS in 4 bits, then 4 bits of its hash."""
    import zlib
    from collections import Counter

    from polyparse.corpora.word_clusters import write_word_clusters

    tags: dict[str, Counter] = {}
    for sentence in read_conllu(train):
        for form, upos in zip(sentence.forms[1:], sentence.upos[1:]):
            tags.setdefault(form, Counter())[upos] += 1
    names = sorted({upos for counts in tags.values() for upos in counts})
    write_word_clusters({form: format(names.index(counts.most_common(1)[0][0]) % 16, "04b")
                         + format(zlib.crc32(form.encode()) % 16, "04b")
                         for form, counts in tags.items()}, path)
    return str(path)


if __name__ == "__main__":
    main()
