"""Issue 2 tuning: feature templates and trainer settings of the arc-factored parser.

One command reruns the table::

    python eval/tune_first_order.py                 # every experiment of EXPERIMENTS
    python eval/tune_first_order.py --only turbo    # the experiments whose name has "turbo"

Each experiment trains on ``../shared/ud/en_ewt`` train (gold UPOS/XPOS and gold lemmas,
no tokenizer or tagger, single root, MST) with one arc/label template table and one
trainer setting, evaluates the FULL dev set after every epoch (UAS, LAS over all words;
LAS-full compares the full label), and measures training seconds per epoch (dev
evaluation excluded) and parsing speed on one core. Every finished experiment is
appended to ``OUT.jsonl`` (so that two experiments can run in two processes) and
``OUT.md`` is rewritten from the last row of each experiment. The whole list takes about
four hours on the 2-core machine; timings and speeds are only comparable between runs
made alone on a quiet machine (the table gives the load average).

Template tables other than the committed ones (:mod:`features.templates`) are swapped in
for the run only; a model trained under them is not loadable with the committed code.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # one core, as the figures are stated

import argparse
import contextlib
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "eval"))

from polyparse.features import extractor as feature_extractor  # noqa: E402
from polyparse.corpora.conllu_io import read_treebank  # noqa: E402
from polyparse.decoders.parts import PartType  # noqa: E402
from polyparse.features import templates as T  # noqa: E402
from first_order import machine, parse_speed  # noqa: E402
from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

EN_EWT = REPO.parent / "shared" / "ud" / "en_ewt"


# -- template tables tried ------------------------------------------------------------

def _unique(specs) -> tuple[str, ...]:
    return tuple(dict.fromkeys(specs))


def mcdonald_arc() -> list[str]:
    """The first table (McDonald et al. 2005, Table 1, plus MSTParser's extras); every
    template emitted plain and conjoined with direction and binned distance."""
    return _unique(["bias"]
                   + [s for w, t in (("form", "upos"), ("form", "xpos"), ("lemma", "upos"),
                                     ("prefix", "upos")) for s in _head_modifier(w, t)]
                   + _mst_context("upos") + _mst_context("xpos")
                   + ["h.suffix h.upos", "m.suffix m.upos", "h.shape", "m.shape"])


def _head_modifier(w: str, t: str) -> list[str]:
    return [f"h.{w} h.{t}", f"h.{w}", f"h.{t}", f"m.{w} m.{t}", f"m.{w}", f"m.{t}",
            f"h.{w} h.{t} m.{w} m.{t}", f"h.{t} m.{w} m.{t}", f"h.{w} m.{w} m.{t}",
            f"h.{w} h.{t} m.{t}", f"h.{w} h.{t} m.{w}", f"h.{w} m.{w}", f"h.{t} m.{t}",
            f"h.{w} m.{t}", f"h.{t} m.{w}"]


def _mst_context(t: str) -> list[str]:
    return [f"h.{t} b.{t} m.{t}",
            f"h.{t} h+1.{t} m-1.{t} m.{t}", f"h-1.{t} h.{t} m-1.{t} m.{t}",
            f"h.{t} h+1.{t} m.{t} m+1.{t}", f"h-1.{t} h.{t} m.{t} m+1.{t}",
            f"h-1.{t} h.{t} m.{t}", f"h.{t} h+1.{t} m.{t}",
            f"h.{t} m-1.{t} m.{t}", f"h.{t} m.{t} m+1.{t}"]


MCDONALD_LABEL = (
    "bias",
    "h.form", "h.lemma", "h.upos", "h.xpos", "m.form", "m.lemma", "m.upos", "m.xpos",
    "m.prefix", "m.suffix", "m.shape", "m.suffix m.upos",
    "h.upos m.upos", "h.xpos m.xpos", "h.lemma m.lemma", "h.upos m.form",
    "h.form m.upos", "h.upos m.lemma", "h.lemma m.upos",
    "arc.dir", "arc.dir arc.dist", "arc.dir m.upos", "arc.dir m.lemma",
    "arc.dir h.upos m.upos", "arc.dir arc.dist m.upos", "arc.dir arc.dist h.upos m.upos",
    "m-1.upos m.upos", "m.upos m+1.upos", "m-1.upos m.upos m+1.upos",
    "h.upos m-1.upos m.upos", "h.upos m.upos m+1.upos",
    "h-1.upos h.upos", "h.upos h+1.upos",
)


LABEL_EXTRA = (
    "m.form arc.dir", "h.form arc.dir", "h.upos m.form arc.dir", "h.lemma m.lemma arc.dir",
    "h.xpos m.xpos arc.dir", "h.lemma m.upos arc.dir", "h.upos m.suffix arc.dir",
    "m-1.form", "m+1.form", "m-1.form m.upos", "m.upos m+1.form",
    "m-2.upos m-1.upos m.upos", "m.upos m+1.upos m+2.upos",
    "h-1.upos h.upos m.upos", "h.upos h+1.upos m.upos",
    "arc.dir arc.len m.upos", "arc.dir arc.dist m.xpos",
    "b.upos arc.dir", "h.upos m.upos b.upos", "b.upos arc.bcount arc.dir",
)
"""Label templates tried on top of the first table: the modifier's word with the head's
tag and the direction, lemma and XPOS pairs, the modifier's neighbouring words and a
wider tag context, h's neighbours with m's tag, exact distance, in-between tags."""


LABEL_EXTRA3 = (
    "h.form m.form arc.dir", "h.xpos m.form arc.dir", "h.form m.xpos arc.dir",
    "m-1.upos m.form", "m.form m+1.upos", "h-1.form h.upos", "h.upos h+1.form",
    "h.upos m.upos m-1.upos m+1.upos arc.dir", "h.upos m.upos arc.len arc.dir",
    "h.suffix h.upos", "m.shape m.upos arc.dir", "h.upos m.upos b.upos arc.bcount arc.dir",
    "h.form h.upos m.form m.upos arc.dir",
)
"""More label templates: bilexical pairs, word-tag pairs with XPOS, neighbours' words
next to the other tag, tag 4-grams, exact distance with the tag pair, counted
in-between tags with the tag pair."""


def turbo_xpos_arc() -> list[str]:
    """:func:`features.templates.turbo_arc` plus its pair, context and in-between
    templates with XPOS."""
    upos = T.turbo_arc("upos")
    xpos = [s for s in T.turbo_arc("xpos") if "xpos" in s and s not in upos]
    return _unique(list(upos) + xpos)


LABEL3_DROPPED = ("h.upos m.upos", "h.xpos m.xpos", "m.form", "h.form", "h.lemma m.lemma",
                  "h.upos m.form", "b.upos arc.dir", "h.upos m.upos b.upos")
"""Label templates dropped for speed: those with a copy conjoined with the direction,
and the in-between tags without their count."""


@dataclass
class Tables:
    """An arc and a label table (``None``: the committed one)."""

    arc: tuple[str, ...] | None = None
    arc_conjoin: bool = True
    label: tuple[str, ...] | None = None


TABLES: dict[str, Tables] = {
    "mcdonald": Tables(tuple(mcdonald_arc()), True, MCDONALD_LABEL),
    "committed": Tables(),   # the same templates as "turbo-label3"
    "turbo": Tables(tuple(T.with_direction(T.turbo_arc())), False, MCDONALD_LABEL),
    "turbo-conj": Tables(tuple(T.turbo_arc()), True, MCDONALD_LABEL),
    "turbo-label2": Tables(tuple(T.with_direction(T.turbo_arc())), False,
                           MCDONALD_LABEL + LABEL_EXTRA),
    "turbo-conj-label2": Tables(tuple(T.turbo_arc()), True, MCDONALD_LABEL + LABEL_EXTRA),
    "turbo-label3": Tables(tuple(T.with_direction(T.turbo_arc())), False,
                           MCDONALD_LABEL + LABEL_EXTRA + LABEL_EXTRA3),
    "turbo-x-label3": Tables(tuple(T.with_direction(turbo_xpos_arc())), False,
                             MCDONALD_LABEL + LABEL_EXTRA + LABEL_EXTRA3),
    "turbo-label3b": Tables(tuple(T.with_direction(T.turbo_arc())), False,
                            tuple(s for s in MCDONALD_LABEL + LABEL_EXTRA + LABEL_EXTRA3
                                  if s not in LABEL3_DROPPED)),
}


@contextlib.contextmanager
def use_tables(tables: Tables):
    """Swap the ARC and LABEL tables of the feature extractor for the duration."""
    old_arc, old_label = T.PART_TEMPLATES[PartType.ARC], feature_extractor.LABEL_TEMPLATES
    if tables.arc is not None:
        T.PART_TEMPLATES[PartType.ARC] = T.PartTemplates(
            name="arc", full=tuple(tables.arc), reduced=(), conjoin=tables.arc_conjoin)
    if tables.label is not None:
        feature_extractor.LABEL_TEMPLATES = T.PartTemplates(
            name="label", full=tuple(tables.label), reduced=(), conjoin=False)
    try:
        yield
    finally:
        T.PART_TEMPLATES[PartType.ARC] = old_arc
        feature_extractor.LABEL_TEMPLATES = old_label


# -- experiments ------------------------------------------------------------------------

@dataclass
class Experiment:
    name: str
    tables: str
    trainer: str = "perceptron"
    epochs: int = 10
    options: dict = field(default_factory=dict)
    features: dict = field(default_factory=dict)
    lemmas: bool = True
    """Gold lemmas as features (the raw-text pipeline, with its tagger, has none)."""


EXPERIMENTS = [
    Experiment("mcdonald-perceptron-e2", "mcdonald", epochs=2),
    Experiment("turbo-perceptron-e2", "turbo", epochs=2),
    Experiment("turbo-conj-perceptron-e2", "turbo-conj", epochs=2),
    Experiment("turbo-label2-perceptron-e2", "turbo-label2", epochs=2),
    Experiment("turbo-conj-label2-perceptron-e2", "turbo-conj-label2", epochs=2),
    Experiment("turbo-label3-perceptron-e2", "turbo-label3", epochs=2),
    Experiment("turbo-x-label3-perceptron-e2", "turbo-x-label3", epochs=2),
    Experiment("turbo-label3b-perceptron-e2", "turbo-label3b", epochs=2),
    Experiment("turbo-label3-ssg1e-4-e2", "turbo-label3", "ssg", 2, {"lambda_": 1e-4}),
    Experiment("turbo-label3-ssg1e-5-e2", "turbo-label3", "ssg", 2, {"lambda_": 1e-5}),
    Experiment("committed-perceptron-e10", "committed", "perceptron", 10),
    Experiment("committed-ssg1e-5-e10", "committed", "ssg", 10, {"lambda_": 1e-5}),
    Experiment("committed-ssg3e-5-e10", "committed", "ssg", 10, {"lambda_": 3e-5}),
    Experiment("committed-ssg1e-4-e10", "committed", "ssg", 10, {"lambda_": 1e-4}),
    Experiment("committed-ssg3e-6-e10", "committed", "ssg", 10, {"lambda_": 3e-6}),
    Experiment("committed-ssg1e-5-project-e3", "committed", "ssg", 3,
               {"lambda_": 1e-5, "project": True}),
    # the defaults (ssg, lambda 1e-5, no projection), run alone for the timings
    Experiment("committed-defaults-e10", "committed", "ssg", 10),
    Experiment("committed-defaults-nolemmas-e10", "committed", "ssg", 10, lemmas=False),
]


def run(exp: Experiment, train, dev, speed: bool) -> dict:
    config = TrainConfig(trainer=exp.trainer, decoder="mst", single_root=True,
                         epochs=exp.epochs, trainer_options=dict(exp.options),
                         features=dict(exp.features), tokenizer=None, tagger=None,
                         lemmas=exp.lemmas)
    with use_tables(TABLES[exp.tables]):
        start = time.perf_counter()
        parser = Parser.train(train, config, dev, progress=sys.stderr.isatty())
        train_seconds = time.perf_counter() - start
        scores = attachment_scores(dev, parser.parse(dev)).to_json()
        example = parser.model.example(dev[0])
        per_arc = example.part_features.nnz / example.part_features.shape[0]
        label_per_arc = example.label_features.nnz / example.label_features.shape[0]
        row = {"experiment": exp.name, "tables": exp.tables, "trainer": exp.trainer,
               "epochs": exp.epochs, "lemmas": exp.lemmas, "options": exp.options,
               "features": exp.features,
               "train_sentences": len(train), "dev_sentences": len(dev),
               "train_seconds": train_seconds,
               "epoch_seconds": [e.seconds for e in parser.report.epochs],
               "curve": [e.dev for e in parser.report.epochs],
               "dev": scores, "arc_features_per_arc_dev0": per_arc,
               "label_features_per_arc_dev0": label_per_arc,
               "load_average": os.getloadavg()}
        if speed:
            row["speed"] = parse_speed(parser, dev)
    return row


def markdown(rows: list[dict]) -> str:
    lines = ["| experiment | trainer | options | epochs | UAS | LAS | LAS-full | best UAS (epoch) "
             "| s/epoch | train min | tokens/s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a = r["dev"]["all_words"]
        curve = [c["uas"] for c in r["curve"]]
        best = max(range(len(curve)), key=curve.__getitem__)
        speed = f"{r['speed']['tokens_per_s']:.0f}" if "speed" in r else ""
        opts = {**r["options"], **r["features"]}
        if not r.get("lemmas", True):
            opts["lemmas"] = False
        lines.append(f"| {r['experiment']} | {r['trainer']} | "
                     f"{', '.join(f'{k}={v}' for k, v in opts.items())} | {r['epochs']} | "
                     f"{a['uas']:.2f} | {a['las']:.2f} | {a['las_full']:.2f} | "
                     f"{curve[best]:.2f} ({best + 1}) | "
                     f"{sum(r['epoch_seconds']) / len(r['epoch_seconds']):.0f} | "
                     f"{r['train_seconds'] / 60:.1f} | {speed} | {r['load_average'][0]:.1f} |")
    curves = [r for r in rows if r["epochs"] > 2]
    if curves:
        n = max(r["epochs"] for r in curves)
        lines += ["", "Dev UAS / LAS after each epoch:", "",
                  "| experiment | " + " | ".join(str(e) for e in range(1, n + 1)) + " |",
                  "|---|" + "---|" * n]
        for r in curves:
            lines.append(f"| {r['experiment']} | "
                         + " | ".join(f"{c['uas']:.2f} / {c['las']:.2f}" for c in r["curve"])
                         + " |")
    lines += ["", "Template tables (arc / label):", ""]
    lines += [f"- {name}: {text}" for name, text in TABLE_NOTES.items()
              if any(r["tables"] == name for r in rows)]
    return "\n".join(lines) + "\n"


TABLE_NOTES = {
    "mcdonald": "McDonald et al. (2005) Table 1 + MSTParser's extras, each feature plain and "
                "with direction x binned distance (169 features per arc on train) / the "
                "first 34 label templates",
    "turbo": "TurboParser's AddWordPairFeatures without morphology, every template with the "
             "direction (114 per arc on train) / the first 34",
    "turbo-conj": "the same arc templates without arc.dir, conjoined as in mcdonald / the "
                  "first 34",
    "turbo-label2": "turbo / 54 label templates (LABEL_EXTRA)",
    "turbo-conj-label2": "turbo-conj / 54",
    "turbo-label3": "turbo / 67 (LABEL_EXTRA3), the committed tables",
    "turbo-x-label3": "turbo plus XPOS copies of the pair, context and in-between "
                      "templates (117 templates) / 67",
    "turbo-label3b": "turbo / 59: label3 without LABEL3_DROPPED",
    "committed": "features.templates as committed (= turbo-label3)",
}


def latest(path: Path) -> list[dict]:
    """The last row of every experiment in ``path``, in the order of :data:`EXPERIMENTS`."""
    rows = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        rows[row["experiment"]] = row
    order = {e.name: i for i, e in enumerate(EXPERIMENTS)}
    return sorted(rows.values(), key=lambda r: order.get(r["experiment"], len(order)))


def write_report(out: Path) -> None:
    """Rewrite ``OUT.md`` from ``OUT.jsonl``."""
    out.with_suffix(".md").write_text(
        "# Arc-factored parser: templates and trainers (issue 2)\n\n"
        "Written by `eval/tune_first_order.py`. en_ewt train -> full dev (2001 sentences, "
        "25147 words), gold UPOS/XPOS and lemmas, MST with a single root. UAS/LAS over all "
        "words after the last epoch (LAS: universal labels; LAS-full: full labels). "
        "s/epoch: training only, dev evaluation excluded; train min: the whole "
        "`Parser.train`, with a dev evaluation after every epoch; tokens/s: parsing on one "
        "core (features, scores, MST, labels); load: 1-min load average of the shared "
        "2-core machine when the run ended (2 or more: other jobs ran, times are not "
        "comparable).\n\n" + markdown(latest(out.with_suffix(".jsonl"))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="run the experiments whose name contains this")
    ap.add_argument("--train-limit", type=int, default=None, help="first N train sentences")
    ap.add_argument("--no-speed", action="store_true", help="skip the parse-speed measurement")
    ap.add_argument("--report", action="store_true",
                    help="only rewrite OUT.md from OUT.jsonl, run nothing")
    ap.add_argument("--out", default=str(REPO / "eval" / "results" / "tune_first_order"))
    args = ap.parse_args()
    out = Path(args.out)
    if args.report:
        write_report(out)
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    train = read_treebank(EN_EWT / "train.conllu")[:args.train_limit]
    dev = read_treebank(EN_EWT / "dev.conllu")
    out.parent.mkdir(parents=True, exist_ok=True)
    for exp in EXPERIMENTS:
        if args.only not in exp.name:
            continue
        row = run(exp, train, dev, speed=not args.no_speed)
        row["machine"] = machine()
        with out.with_suffix(".jsonl").open("a") as f:
            f.write(json.dumps(row) + "\n")
        write_report(out)
        print(markdown([row]), flush=True)


if __name__ == "__main__":
    main()
