"""Issue 4 benchmark: the UPOS / XPOS / FEATS tagger on real UD treebanks.

One command::

    python -m eval run tagger_bench [--out tagger] [--epochs 8] [--no-variants] [--no-clusters]
                                    [--treebanks en_ewt tr_imst sl_ssj] [--max-train N]

For en_ewt and tr_imst (train -> dev) and sl_ssj (first 80% of train -> last 20%;
``--treebanks``, the first ``--max-train`` training sentences), fits
:class:`parser.text.Tagger` (default parameters, seed 0) on the training sentences
with gold tokens and tags the held-out ones. Reports UPOS, XPOS and FEATS accuracy (FEATS
compared as sets of ``Name=Value`` pairs), all three right at once, UPOS on words unseen
in training, fitting time, tagging speed (tokens per CPU second on one core, after a
warm-up) and the model's size; next to it a most-frequent-tag baseline: each field of a
word is the value it had most often in training, for unseen words the most frequent value
overall. Unless ``--no-variants``, also compares a joint UPOS+XPOS layer with separate
ones, one FEATS layer with one layer per feature, and (where the language has them) the
tagger without word clusters. The tagger of a language with Brown clusters in spaCy's
lookups data (English here) uses them unless ``--no-clusters``; they are fetched into the
polyparse cache on first use. Writes ``OUT.json`` and ``OUT.md`` under ``--results``.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from pathlib import Path

from ._common import (arguments, require_treebanks, single_thread, split, treebanks_argument,
                      word_clusters, write_result)

single_thread()   # one core, as the figures are stated

from polyparse.corpora.sentence import Sentence  # noqa: E402
from polyparse.corpora.word_clusters import read_word_clusters  # noqa: E402
from polyparse.parser.text import Tagger, TaggerOptions  # noqa: E402

TREEBANKS = ("en_ewt", "tr_imst", "sl_ssj")
TARGETS = {"en_ewt": {"upos": 95.5}}   # issue 4
VARIANTS = {"joint UPOS+XPOS": {"xpos": "joint"}, "FEATS per feature": {"feats": "split"}}
FIELDS = ("upos", "xpos", "feats")

SMOKE = ["--treebanks", "sample", "--max-train", "40", "--epochs", "1", "--no-clusters"]
"""The smoke run: one epoch on 40 sentences of the sample, the variants too."""

logger = logging.getLogger("tagger_bench")


def _same(field: str, gold: str, predicted: str) -> bool:
    if field != "feats":
        return gold == predicted
    return set(gold.split("|")) - {"_"} == set(predicted.split("|")) - {"_"}


def accuracy(gold: list[Sentence], predicted: list[tuple], known: set[str]) -> dict:
    """Accuracy (%) of each field, of all three at once, and of UPOS on unseen words."""
    hits = Counter()
    words = unseen = 0
    for s, tags in zip(gold, predicted):
        for i in range(1, len(s.forms)):
            right = [_same(f, getattr(s, f)[i], column[i]) for f, column in zip(FIELDS, tags)]
            hits.update(f for f, ok in zip(FIELDS, right) if ok)
            hits["all"] += all(right)
            words += 1
            if s.forms[i] not in known:
                unseen += 1
                hits["unseen_upos"] += right[0]
    scores = {key: 100 * hits[key] / words for key in (*FIELDS, "all")}
    scores["unseen_upos"] = 100 * hits["unseen_upos"] / max(unseen, 1)
    scores["unseen_share"] = 100 * unseen / words
    return scores


def most_frequent(train: list[Sentence], test: list[Sentence]) -> list[tuple]:
    """Baseline: each field of a word is its most frequent value in training (the most
    frequent value overall for words not seen in training)."""
    by_word = {f: {} for f in FIELDS}
    overall = {f: Counter() for f in FIELDS}
    for s in train:
        for f in FIELDS:
            for form, value in zip(s.forms[1:], getattr(s, f)[1:]):
                by_word[f].setdefault(form, Counter())[value] += 1
                overall[f][value] += 1
    best = {f: {form: c.most_common(1)[0][0] for form, c in by_word[f].items()} for f in FIELDS}
    top = {f: overall[f].most_common(1)[0][0] for f in FIELDS}
    return [tuple(("<root>",) + tuple(best[f].get(form, top[f]) for form in s.forms[1:])
                  for f in FIELDS) for s in test]


def run(args, name: str, params: dict, clusters: str | None) -> dict:
    epochs = args.epochs
    train, held_out, how = split(args.ud, name, require_tree=False)
    train = train[:args.max_train]
    table = read_word_clusters(clusters) if clusters else None
    start = time.process_time()
    tagger = Tagger(TaggerOptions(**params), clusters=table).fit(train, epochs=epochs, seed=0)
    fit_seconds = time.process_time() - start
    tagger.predict(held_out[:20])                             # compile the kernels first
    start = time.process_time()
    predicted = tagger.predict(held_out)
    seconds = time.process_time() - start
    known = {form for s in train for form in s.forms[1:]}
    _, arrays = tagger.to_arrays()
    tokens = sum(len(s) for s in held_out)
    result = {"treebank": name, "split": how, "params": params, "clusters": clusters,
              "epochs": epochs,
              "train_words": sum(len(s) for s in train), "held_out_words": tokens,
              "fit_seconds": fit_seconds, "tokens_per_s": tokens / seconds,
              "model_mb": sum(a.nbytes for a in arrays.values()) / 2**20,
              "tags": {layer.name: len(layer.tags) for layer in tagger.layers_},
              "accuracy": accuracy(held_out, predicted, known),
              "baseline": accuracy(held_out, most_frequent(train, held_out), known)}
    logger.info("%s %s: %s", name, params, result["accuracy"])
    return result


def markdown(results: list[dict], variants: list[dict]) -> list[str]:
    lines = ["Accuracy (%) on held-out sentences with gold tokens; FEATS compared as sets of "
             "`Name=Value` pairs; *all*: UPOS, XPOS and FEATS all right; *unseen*: UPOS on "
             "words not in the training data (their share of the held-out words in "
             "brackets). Baseline: each field the word's most frequent value in training "
             "(for unseen words the most frequent overall). Speed: `Tagger.predict`, tokens "
             "per second of CPU time (one core) after a warm-up; fit: CPU seconds. "
             "*clusters*: words with a Brown cluster from spaCy's lookups data.", "",
             "| treebank | split | clusters | UPOS | XPOS | FEATS | all | unseen | baseline "
             "UPOS / XPOS / FEATS | tokens/s | fit (s) | model (MB) |",
             "|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in results:
        a, b = r["accuracy"], r["baseline"]
        lines.append(
            f"| {r['treebank']} | {r['split']} | {_clusters(r)} | {a['upos']:.2f} | "
            f"{a['xpos']:.2f} | {a['feats']:.2f} | {a['all']:.2f} | {a['unseen_upos']:.2f} "
            f"({a['unseen_share']:.1f}) | {b['upos']:.2f} / {b['xpos']:.2f} / "
            f"{b['feats']:.2f} | {r['tokens_per_s']:,.0f} | {r['fit_seconds']:.1f} | "
            f"{r['model_mb']:.1f} |")
    lines += ["", "Targets of issue 4:", ""]
    for r in results:
        for field, target in TARGETS.get(r["treebank"], {}).items():
            value = r["accuracy"][field]
            lines.append(f"- {r['treebank']} {field.upper()} >= {target}: {value:.2f} "
                         f"({'met' if value >= target else 'NOT met'})")
    if variants:
        lines += ["", "## Layer variants", "",
                  "The default tagger against a joint UPOS+XPOS layer (instead of two) and "
                  "one FEATS layer per feature name (instead of one over whole FEATS "
                  "strings), and the tagger without word clusters, all else equal.", "",
                  "| treebank | layers | UPOS | XPOS | FEATS | all | tokens/s | fit (s) | "
                  "model (MB) |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in results:
            for row in [r] + [v for v in variants if v["treebank"] == r["treebank"]]:
                a = row["accuracy"]
                lines.append(f"| {row['treebank']} | {row.get('variant', 'default')} | "
                             f"{a['upos']:.2f} | {a['xpos']:.2f} | {a['feats']:.2f} | "
                             f"{a['all']:.2f} | {row['tokens_per_s']:,.0f} | "
                             f"{row['fit_seconds']:.1f} | {row['model_mb']:.1f} |")
    params = json.dumps(Tagger().get_params())
    lines += ["", f"Tagger defaults: `{params}`; {results[0]['epochs']} epochs, seed 0."]
    return lines


def _clusters(result: dict) -> str:
    return "spaCy " + Path(result["clusters"]).stem.split("-")[0] if result["clusters"] else "-"


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__name__)
    parser.add_argument("--out", default="tagger", help="result name under --results")
    treebanks_argument(parser, TREEBANKS)
    parser.add_argument("--max-train", type=int, default=None, metavar="N",
                        help="the first N training sentences (default all)")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--no-variants", action="store_true",
                        help="only the default tagger")
    parser.add_argument("--no-clusters", action="store_true",
                        help="no word clusters (the tagger of earlier sessions)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    require_treebanks(parser, args.ud, args.treebanks)
    clusters = {name: None if args.no_clusters else word_clusters(name)
                for name in args.treebanks}
    results = [run(args, name, {}, clusters[name]) for name in args.treebanks]
    variants = []
    if not args.no_variants:
        for name in args.treebanks:
            for label, params in VARIANTS.items():
                variants.append(dict(run(args, name, params, clusters[name]), variant=label))
            if clusters[name]:
                variants.append(dict(run(args, name, {}, None), variant="no word clusters"))
    table = write_result(args, args.out, "Part-of-speech and morphology tagger (issue 4)",
                         {"results": results, "variants": variants, "targets": TARGETS},
                         markdown(results, variants))
    print(table.read_text())
    return 0

