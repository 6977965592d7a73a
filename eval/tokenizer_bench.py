"""Issue 4 benchmark: the raw-text tokenizer and sentence splitter on real UD treebanks.

One command::

    python -m eval run tokenizer_bench [--out tokenizer] [--treebanks en_ewt tr_imst sl_ssj]
                                       [--max-train N] [--epochs E]

For en_ewt and tr_imst (train -> dev) and sl_ssj (first 80% of train -> last 20%;
``--treebanks``, the first ``--max-train`` training sentences), fits
:class:`parser.text.tokenizer.Tokenizer` on the training sentences, rebuilds the held-out
text from its ``# text`` comments as the UD tool ``conllu_to_text.pl`` does (a blank
line between paragraphs, lines wrapped at 80 characters), cuts it into sentences and
scores them with the CoNLL 2018 shared-task definitions (tokens, multiword-token words
and sentences matched by offsets over non-whitespace characters); sentences are also
scored on the same text without paragraph breaks, and each held-out sentence is
tokenized alone (its ``# text``, as ``polyparse parse --text`` gives one). Reports the F1 scores, training time
and tokens per CPU second of :meth:`Tokenizer.to_sentences`, and writes ``OUT.json`` and
``OUT.md`` under ``--results``.
"""

from __future__ import annotations

import json
import logging
import time

from ._common import (arguments, require_treebanks, single_thread, split, treebanks_argument,
                      write_result)

single_thread()   # one core, as the figures are stated

from polyparse.corpora.alignment import (Segmentation, evaluate_segmentation,  # noqa: E402
                                         sentence_tokens)
from polyparse.corpora.plain_text import raw_text, sentence_text  # noqa: E402
from polyparse.parser.text.tokenizer import Tokenizer, TokenizerOptions  # noqa: E402

TREEBANKS = ("en_ewt", "tr_imst", "sl_ssj")
TARGETS = {"en_ewt": {"tokens": 98.5, "sentences": 75.0}}   # issue 4

SMOKE = ["--treebanks", "sample", "--max-train", "40", "--epochs", "1"]
"""The smoke run: one epoch on 40 sentences of the sample."""

logger = logging.getLogger("tokenizer_bench")


def run(args, name: str, tokenizer_options: dict) -> dict:
    train, held_out, how = split(args.ud, name, require_tree=False)
    train = train[:args.max_train]
    start = time.process_time()
    tokenizer = Tokenizer(TokenizerOptions(**tokenizer_options)).fit(train)
    fit_seconds = time.process_time() - start
    text = raw_text(held_out)
    tokenizer.to_sentences(text[:2000])                     # compile the kernels first
    start = time.process_time()
    predicted = tokenizer.to_sentences(text, id_prefix=f"{name}-")
    seconds = time.process_time() - start
    gold = Segmentation.from_sentences(held_out)
    system = Segmentation.from_sentences(predicted)
    scores = evaluate_segmentation(gold, system)
    # the same text as one paragraph: no blank line tells where a sentence ends
    flat = Segmentation.from_sentences(tokenizer.to_sentences(" ".join(text.split())))
    flat_sentences = evaluate_segmentation(gold, flat).sentences
    # each sentence alone, as `polyparse parse --text` gives one: tokenized as the treebank?
    alone = sum([t.form for piece in tokenizer.tokenize(sentence_text(s)) for t in piece]
                == [t.form for t in sentence_tokens(s)] for s in held_out)
    data, arrays = tokenizer.to_json()
    result = {
        "treebank": name, "split": how, "train_sentences": len(train),
        "held_out_sentences": len(held_out), "characters": len(text),
        "fit_seconds": fit_seconds, "tokenize_seconds": seconds,
        "tokens_per_s": len(system.tokens) / seconds,
        "multiword_rules": len(tokenizer.multiword_.rules),
        "multiword_forms": len(tokenizer.multiword_.forms),
        "abbreviations": len(tokenizer.abbreviations_),
        "model_json_bytes": len(json.dumps(data)),
        "nonzero_weights": {k: int((v != 0).sum()) for k, v in arrays.items()},
    }
    for metric in ("tokens", "words", "sentences"):
        score = getattr(scores, metric)
        result[metric] = {"gold": score.gold, "system": score.system, "correct": score.correct,
                          "precision": 100 * score.precision, "recall": 100 * score.recall,
                          "f1": 100 * score.f1}
    result["sentences_alone"] = 100 * alone / len(held_out)
    result["sentences_one_paragraph"] = {"gold": flat_sentences.gold,
                                         "system": flat_sentences.system,
                                         "correct": flat_sentences.correct,
                                         "f1": 100 * flat_sentences.f1}
    targets = TARGETS.get(name, {})
    result["targets"] = {metric: {"target": target, "met": result[metric]["f1"] >= target}
                         for metric, target in targets.items()}
    logger.info("%s: tokens %.2f words %.2f sentences %.2f, %.0f tokens/s", name,
                result["tokens"]["f1"], result["words"]["f1"], result["sentences"]["f1"],
                result["tokens_per_s"])
    return result


def markdown(results: list[dict], options: dict) -> list[str]:
    lines = [
        "CoNLL 2018 shared-task F1 (%) on text rebuilt from the held-out `# text` comments "
        "(`conllu_to_text.pl` layout: blank line between paragraphs, wrapped at 80 "
        "characters). *sentences, one paragraph*: the same text with every run of "
        "whitespace made one space, so that no paragraph break gives a sentence end away. "
        "*alone*: the held-out sentences (%) whose `# text`, given alone as `polyparse "
        "parse --text` gives one, is cut into the treebank's tokens. "
        "Speed: `Tokenizer.to_sentences` after a warm-up, tokens per second of CPU time "
        "(one core).",
        "",
        "| treebank | split | tokens F1 | words F1 | sentences F1 | sentences, one paragraph "
        "| alone | tokens/s | fit (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['treebank']} | {r['split']} | {r['tokens']['f1']:.2f} | "
                     f"{r['words']['f1']:.2f} | {r['sentences']['f1']:.2f} | "
                     f"{r['sentences_one_paragraph']['f1']:.2f} | "
                     f"{r['sentences_alone']:.2f} | "
                     f"{r['tokens_per_s']:,.0f} | {r['fit_seconds']:.1f} |")
    lines += ["", "Targets of issue 4:", ""]
    for r in results:
        for metric, t in r["targets"].items():
            lines.append(f"- {r['treebank']} {metric} F1 >= {t['target']}: "
                         f"{r[metric]['f1']:.2f} ({'met' if t['met'] else 'NOT met'})")
    lines += ["", f"Tokenizer options: `{json.dumps(options)}` (defaults where empty)."]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__name__)
    parser.add_argument("--out", default="tokenizer", help="result name under --results")
    treebanks_argument(parser, TREEBANKS)
    parser.add_argument("--max-train", type=int, default=None, metavar="N",
                        help="the first N training sentences (default all)")
    parser.add_argument("--epochs", type=int, help="perceptron epochs (default of Tokenizer)")
    args = parser.parse_args(argv)
    require_treebanks(parser, args.ud, args.treebanks)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    options = {} if args.epochs is None else {"epochs": args.epochs}
    results = [run(args, name, options) for name in args.treebanks]
    table = write_result(args, args.out, "Tokenizer and sentence splitter (issue 4)",
                         {"options": options, "results": results}, markdown(results, options))
    print(table.read_text())

