"""Issue 4 benchmark: parsing from raw text (tokenizer -> tagger -> parser) on UD treebanks.

One command::

    python -m eval run raw_text [--treebanks en_ewt tr_imst sl_ssj] [--epochs 10]
                                [--max-train N] [--max-dev N] [--models DIR [--reuse]]
                                [--no-clusters] [--out raw_text]

For en_ewt and tr_imst (train -> dev) and sl_ssj (first 80% of train -> last 20%,
``_common.split``; ``--treebanks``), trains one model file's worth (:meth:`Parser.train`: the
tokenizer on the ``# text`` comments, the tagger, and the order-1 parser on tags
jackknifed in 10 folds, without lemmas) on the training sentences (the first
``--max-train`` of them if given). The tagger and the parser of a language with Brown
clusters in spaCy's lookups data (English here) use them unless ``--no-clusters``
(``eval/_common.word_clusters``: written into the polyparse cache on first use). Then
the held-out sentences' text is rebuilt from their ``# text`` comments as
``conllu_to_text.pl`` does (:func:`corpora.plain_text.raw_text`: blank lines between
paragraphs, lines wrapped at 80 characters), parsed with :meth:`Parser.parse_text`, and
scored with the CoNLL 2018 definitions
(:func:`parser.evaluate.conll18_scores`): tokens, sentences and words F1, UPOS, XPOS,
UAS and LAS F1. For reference, on the gold tokens: UPOS accuracy of the tagger, and LAS
with predicted and with gold tags.

Throughput (the first treebank only): ``polyparse parse --format text`` on the held-out
text, end to end as a user runs it (process start, model loading, tokenizing, tagging,
parsing, writing), with ``--jobs 1`` and ``--jobs 2``, checking that both outputs are
the same bytes; and the in-process :meth:`Parser.parse_text` in CPU seconds of one core.
Writes ``OUT.json`` and ``OUT.md`` under ``--results``.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from ._common import (POLYPARSE, REPO, arguments, conll18_columns, require_treebanks,
                      single_thread, split, treebanks_argument, word_clusters, write_table)

single_thread()

from polyparse.corpora.plain_text import raw_text  # noqa: E402
from polyparse.parser.evaluate import attachment_scores, conll18_scores  # noqa: E402
from polyparse.parser.config import FeatureConfig, TaggerConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

TREEBANKS = ("en_ewt", "tr_imst", "sl_ssj")

SMOKE = ["--treebanks", "sample", "--max-train", "30", "--max-dev", "10", "--epochs", "1",
         "--jackknife", "2", "--tagger-epochs", "1", "--copies", "1", "--repeats", "1",
         "--no-clusters"]
"""The smoke run: one epoch on 30 sentences of the sample, 10 held out."""
log = logging.getLogger("raw_text")


def upos_accuracy(gold, predicted) -> float:
    words = sum(len(s) for s in gold)
    right = sum(a == b for g, p in zip(gold, predicted) for a, b in zip(g.upos[1:], p.upos[1:]))
    return 100.0 * right / words


def cli_seconds(model: Path, text_file: Path, out: Path, jobs: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds (the process and its workers) of ``polyparse parse
    --format text --jobs N``."""
    command = [*POLYPARSE, "-q", "parse", "--model", str(model),
               "--input", str(text_file), "--format", "text", "--jobs", str(jobs),
               "--output", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=REPO)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def throughput(parser: Parser, text: str, tokens: int, copies: int, repeats: int) -> dict:
    """Tokens per second of the CLI on ``copies`` times ``text``, the best of
    ``repeats`` runs of each of ``--jobs 1`` and ``--jobs 2`` (taken in turns, so that
    other load on the machine hits both alike), and of ``parse_text`` on one core."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model, text_file = folder / "model.npz", folder / "held_out.txt"
        parser.save(model)
        text_file.write_text("\n".join([text] * copies), encoding="utf-8")
        (folder / "empty.txt").write_text("", encoding="utf-8")
        load = os.getloadavg()[0]
        startup, startup_cpu = cli_seconds(model, folder / "empty.txt", folder / "e.conllu", 1)
        runs: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        for _ in range(repeats):
            for jobs in runs:
                runs[jobs].append(cli_seconds(model, text_file, folder / f"jobs{jobs}.conllu",
                                              jobs))
        (one, one_cpu), (two, two_cpu) = min(runs[1]), min(runs[2])
        same = (folder / "jobs1.conllu").read_bytes() == (folder / "jobs2.conllu").read_bytes()
        model_mb = model.stat().st_size / 2**20
    cli_tokens = tokens * copies
    parser.parse_text(text[:3000])                                 # warm up
    start = time.process_time()
    parser.parse_text(text)
    cpu = time.process_time() - start
    return {"throughput_tokens": tokens, "cli_tokens": cli_tokens, "startup_s": startup,
            "startup_cpu_s": startup_cpu, "cli_runs": {str(k): v for k, v in runs.items()},
            "cli_jobs1_s": one, "cli_jobs2_s": two, "cli_jobs1_cpu_s": one_cpu,
            "cli_jobs2_cpu_s": two_cpu, "tok_s_cli_jobs1": round(cli_tokens / one),
            "tok_s_cli_jobs2": round(cli_tokens / two), "speedup_jobs2": one / two,
            "jobs_outputs_identical": same, "tok_s_cpu": round(tokens / cpu),
            "load_average": load, "model_mb": model_mb}


def trained_parser(name: str, train, config: TrainConfig, args) -> tuple[Parser, float]:
    """The parser and its training seconds: trained, or with ``--reuse`` read from
    ``--models`` when it was trained there with the same settings."""
    settings = {"treebank": name, "train_sentences": len(train),
                "config": json.loads(json.dumps(asdict(config)))}
    model = Path(args.models) / f"{name}.npz" if args.models else None
    info = model.with_suffix(".json") if model else None
    if args.reuse and model and model.exists() and info.exists():
        saved = json.loads(info.read_text())
        if saved["settings"] == settings:
            log.info("%s: reusing %s", name, model)
            return Parser.load(model), saved["train_seconds"]
        log.info("%s: %s was trained with other settings; training again", name, model)
    start = time.perf_counter()
    parser = Parser.train(train, config, progress=sys.stderr.isatty())
    seconds = time.perf_counter() - start
    if model:
        model.parent.mkdir(parents=True, exist_ok=True)
        parser.save(model)
        info.write_text(json.dumps({"settings": settings, "train_seconds": seconds}))
    return parser, seconds


def run(name: str, args) -> dict:
    train, held_out, how = split(args.ud, name)
    train, held_out = train[:args.max_train], held_out[:args.max_dev]
    clusters = None if args.no_clusters else word_clusters(name)
    config = TrainConfig(epochs=args.epochs, seed=0, jackknife=args.jackknife,
                         tagger=TaggerConfig(epochs=args.tagger_epochs),
                         word_clusters=clusters, lemmas=True if args.lemmas else None,
                         features=FeatureConfig(bits=args.bits or None,
                                                label_bits=args.label_bits or None,
                                                clusters=clusters is not None))
    parser, train_seconds = trained_parser(name, train, config, args)
    text = raw_text(held_out)
    parsed = parser.parse_text(text, id_prefix=f"{name}-")
    scores = conll18_scores(held_out, parsed).to_json()
    tagged = parser.tag(held_out)
    row = {"treebank": name, "split": how, "train_sentences": len(train),
           "clusters": f"spaCy {name.split('_')[0]}" if clusters else "-",
           "held_out_sentences": len(held_out), "epochs": args.epochs,
           "train_min": train_seconds / 60, "conll18": scores,
           **{name_: scores[name_]["f1"] for name_ in scores},
           "upos_gold_tokens": upos_accuracy(held_out, tagged),
           "las_gold_tokens": attachment_scores(held_out, parser.parse(tagged)).all_words["las"],
           "las_gold_tags": attachment_scores(held_out, parser.parse(held_out)).all_words["las"],
           "config": {"jackknife": args.jackknife, "tagger_epochs": args.tagger_epochs,
                      "lemmas": parser.config.uses_lemmas, "features": asdict(parser.config.features)}}
    if args.throughput and name == args.treebanks[0]:
        row.update(throughput(parser, text, sum(len(s) for s in parsed), args.copies,
                              args.repeats))
    log.info("%s: %s", name, {k: round(v, 2) for k, v in row.items() if isinstance(v, float)})
    return row


COLUMNS = [("treebank", "treebank"), ("split", "split"), ("train_sentences", "train sents"),
           ("epochs", "epochs"), ("clusters", "word clusters"), *conll18_columns(),
           ("upos_gold_tokens", "UPOS gold tok"),
           ("las_gold_tokens", "LAS gold tok"), ("las_gold_tags", "LAS gold tags"),
           ("train_min", "train min"), ("tok_s_cpu", "tok/s 1 core"),
           ("tok_s_cli_jobs1", "tok/s CLI --jobs 1"), ("tok_s_cli_jobs2", "tok/s CLI --jobs 2"),
           ("speedup_jobs2", "speed-up --jobs 2"), ("cli_jobs1_cpu_s", "CPU s --jobs 1"),
           ("cli_jobs2_cpu_s", "CPU s --jobs 2")]


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    treebanks_argument(ap, TREEBANKS)
    ap.add_argument("--epochs", type=int, default=10, help="parser epochs (default 10)")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="train on the first N training sentences only")
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="the first N held-out sentences (default all)")
    ap.add_argument("--jackknife", type=int, default=10, metavar="K")
    ap.add_argument("--tagger-epochs", type=int, default=8)
    ap.add_argument("--bits", type=int, default=None)
    ap.add_argument("--label-bits", type=int, default=None)
    ap.add_argument("--lemmas", action="store_true",
                    help="ablation: train the parser with the gold lemmas (raw text has none)")
    ap.add_argument("--no-clusters", action="store_true",
                    help="train taggers and parsers without word clusters")
    ap.add_argument("--no-throughput", dest="throughput", action="store_false")
    ap.add_argument("--copies", type=int, default=3,
                    help="throughput: the CLI parses this many copies of the held-out text")
    ap.add_argument("--repeats", type=int, default=3,
                    help="throughput: best of this many CLI runs of each --jobs")
    ap.add_argument("--models", metavar="DIR",
                    help="save the trained models (and their settings) in DIR")
    ap.add_argument("--reuse", action="store_true",
                    help="load a model from --models instead of training it again when it "
                         "was trained with the same settings (its training time is kept)")
    ap.add_argument("--out", default="raw_text", help="result name under --results")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, args.treebanks)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    rows = [run(name, args) for name in args.treebanks]
    notes = (
        ("Models trained by an earlier run with the same settings; *train min* is "
           "theirs. " if args.reuse else "") + "Each model: tokenizer (default options), tagger "
        f"({args.tagger_epochs} epochs) and order-1 parser (SSG, MST, "
        f"{args.epochs} epochs, "
        f"features {rows[0]['config']['features']}) trained on tags jackknifed in "
        f"{args.jackknife} folds, {'with' if rows[0]['config']['lemmas'] else 'without'} "
        "lemmas; both with the Brown clusters of spaCy's lookups data where the *word "
        "clusters* column says so. Held-out text rebuilt from `# text` (`corpora.plain_text.raw_text`: blank "
        "line between paragraphs, wrapped at 80 characters) and parsed with "
        "`Parser.parse_text`. F1 (%) as the CoNLL 2018 script: words aligned by character "
        "offsets; each metric's F1 = 2 correct / (gold + system words); CLAS, MLAS and "
        "BLEX over content words (`polyparse eval`, equal to UD's `udeval`). *gold tok*: on "
        "the gold tokens, UPOS accuracy and LAS with the tagger's tags; *gold tags*: LAS "
        "with gold tokens and tags. Throughput ("
        f"{rows[0]['treebank']} held-out text): *1 core*: `Parser.parse_text` in CPU "
        f"seconds; *CLI*: `polyparse parse --format text --jobs N` on {args.copies} copies "
        f"of the text, wall clock end to end, best of {args.repeats} runs taken in turns "
        "(process start and model loading included"
        + (f": {rows[0]['startup_s']:.1f} s wall, {rows[0]['startup_cpu_s']:.1f} s CPU for "
           "an empty input); *CPU s*: user + system seconds of the command and its worker "
           "processes. 1-minute load average before the runs: "
           f"{rows[0]['load_average']:.1f} on {os.cpu_count()} cores shared with other "
           "jobs, so wall-clock figures depend on them. Outputs of --jobs 1 and 2 "
           f"identical: {rows[0]['jobs_outputs_identical']}" if "startup_s" in rows[0]
           else ")") + ".")
    table = write_table(args, args.out, "Parsing from raw text (issues 4 and 11)", rows, COLUMNS,
                        notes)
    print(table.read_text())

