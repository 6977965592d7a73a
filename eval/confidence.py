"""Calibration of ``parse --confidence`` and the certificates of ``parse --certify``
(issue 14, items 4 and 5).

    python -m eval run confidence [--treebank en_ewt] [--max-train N] [--epochs E] [--model PATH]
                              [--order2-train N] [--order2-epochs E] [--order2-model PATH]
                              [--max-dev N]

Trains an order-1 parser (ssg, mst, single root, gold tags) on the first ``--max-train``
training sentences; splits dev into two halves, the even-numbered sentences (to fit the
temperatures, :meth:`Parser.fit_confidence`, Guo et al. 2017) and the odd-numbered ones
(to measure); reports, before and after calibration, the expected calibration error (15
equal-width bins, :func:`learning.confidence.expected_calibration_error`) of the head
probabilities over all words, and of the label probabilities (the label given the
predicted arc) over the words whose predicted head is right (the event they are
probabilities of) and over all words, with a reliability diagram. Then an order-2 model
(SSG with the lp decoder, pruned to 5 heads; trained on the first ``--order2-train``
sentences, or loaded from ``--order2-model`` when that file exists, else saved there)
gets the same calibration (head probabilities from its first-order pruner's marginals),
and parses dev with ``--decoder lp``, ``ad3`` and ``ad3-exact`` counting each kind of
certificate of ``parse --certify``. Writes ``confidence_<treebank>.{json,md,png}`` under
``--results``; the load average is recorded with each row.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from ._common import arguments, markdown_table, pyplot, single_thread, split, write_table

single_thread()

from polyparse.decoders import CERTIFICATE_KINDS, CertificateCounts  # noqa: E402
from polyparse.learning.confidence import (Temperatures,  # noqa: E402
                                           expected_calibration_error)
from polyparse.parser.config import PartsConfig, PrunerConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

BINS = 15
DECODERS = ("lp", "ad3", "ad3-exact")

SMOKE = ["--treebank", "sample", "--max-train", "20", "--epochs", "1", "--order2-train", "20",
         "--order2-epochs", "1", "--max-dev", "6"]
"""The smoke run: both models trained on 20 sentences of the sample, 6 dev sentences."""



def load() -> str:
    """The 1-minute load average now (2 cores shared with other jobs)."""
    return f"{os.getloadavg()[0]:.1f}"


def measure(parser: Parser, sentences: list, temperatures: Temperatures) -> dict:
    """Confidences of ``parser`` on gold ``sentences`` at ``temperatures``: per word the
    head probability and whether the head is right, the label probability and whether
    the label is right."""
    head_p, head_ok, label_p, label_ok = [], [], [], []
    for sentence in sentences:
        analysis = parser.analyze(sentence, temperatures)
        head_p.append(analysis.head_probs[1:])
        head_ok.append(analysis.sentence.heads[1:] == sentence.heads[1:])
        label_p.append(analysis.label_probs[1:])
        label_ok.append(np.array(analysis.sentence.deprels[1:]) == np.array(sentence.deprels[1:]))
    return {name: np.concatenate(values) for name, values in
            (("head_p", head_p), ("head_ok", head_ok), ("label_p", label_p),
             ("label_ok", label_ok))}


def calibration_row(name: str, words: dict, temperatures: Temperatures) -> dict:
    """ECE in points (100 times the share: 3 for 0.03), accuracy and mean confidence."""
    ok_head = words["head_ok"]
    return {"model": name, "t_head": temperatures.head, "t_label": temperatures.label,
            "words": int(ok_head.size),
            "uas": 100 * ok_head.mean(), "mean_head_p": words["head_p"].mean(),
            "ece_head": 100 * expected_calibration_error(words["head_p"], ok_head, BINS),
            "label_acc_right_head": 100 * words["label_ok"][ok_head].mean(),
            "ece_label": 100 * expected_calibration_error(words["label_p"][ok_head],
                                                          words["label_ok"][ok_head], BINS),
            "ece_label_all_words": 100 * expected_calibration_error(
                words["label_p"], words["label_ok"], BINS),
            "load": load()}


def reliability(ax, confidence: np.ndarray, correct: np.ndarray, title: str) -> None:
    """Accuracy per equal-width confidence bin against the diagonal."""
    edges = np.linspace(0.0, 1.0, BINS + 1)
    which = np.clip(np.ceil(confidence * BINS).astype(int) - 1, 0, BINS - 1)
    count = np.bincount(which, minlength=BINS)
    accuracy = np.bincount(which, correct, BINS) / np.maximum(count, 1)
    mean = np.bincount(which, confidence, BINS) / np.maximum(count, 1)
    shown = count > 0
    ax.bar(edges[:-1][shown], accuracy[shown], width=1.0 / BINS, align="edge",
           edgecolor="black", alpha=0.7, label="accuracy")
    ax.plot(mean[shown], accuracy[shown], "o", color="C1", ms=3, label="(confidence, accuracy)")
    ax.plot([0, 1], [0, 1], "k--", lw=1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


def cached_parser(path: str | None, sentences: list, config: TrainConfig, how: str
                  ) -> tuple[Parser, str]:
    """The parser in ``path`` if that file exists, else one trained on ``sentences``
    with ``config`` (and saved to ``path`` if given), and how it was made."""
    if path is not None and Path(path).exists():
        return Parser.load(path), f"loaded from {path}"
    start = time.perf_counter()
    parser = Parser.train(sentences, config, progress=sys.stderr.isatty())
    if path is not None:
        parser.save(path)
    return parser, (f"trained on the first {len(sentences)} sentences, {how} "
                    f"({time.perf_counter() - start:.0f} s)")


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="train the order-1 model on the first N sentences (default: all)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--model", default=None, metavar="PATH",
                    help="load the order-1 model from PATH if it exists, else save it there")
    ap.add_argument("--order2-train", type=int, default=2000, metavar="N")
    ap.add_argument("--order2-epochs", type=int, default=2)
    ap.add_argument("--order2-model", default=None, metavar="PATH",
                    help="load the order-2 model from PATH if it exists, else save it there")
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="only the first N dev sentences (default: all)")
    args = ap.parse_args(argv)
    train, dev, how = split(args.ud, args.treebank)
    dev = dev[:args.max_dev]
    fit_half, test_half = dev[0::2], dev[1::2]

    first, first_how = cached_parser(
        args.model, train[:args.max_train], TrainConfig(epochs=args.epochs, tokenizer=None),
        f"SSG with mst, {args.epochs} epochs")
    second, second_how = cached_parser(
        args.order2_model, train[:args.order2_train],
        TrainConfig(trainer="ssg", decoder="lp", epochs=args.order2_epochs,
                    parts=PartsConfig("2"), pruner=PrunerConfig(max_heads=5), tokenizer=None),
        f"SSG with the lp decoder, {args.order2_epochs} epochs, pruned to 5 heads")

    rows, curves = [], {}
    for name, parser in (("order 1", first), ("order 2 (pruner marginals)", second)):
        start = time.perf_counter()
        fitted = parser.fit_confidence(fit_half)
        fit_time = time.perf_counter() - start
        for label, temperatures in (("T = 1", Temperatures()), ("fitted", fitted)):
            words = measure(parser, test_half, temperatures)
            rows.append(dict(calibration_row(name, words, temperatures),
                             temperatures=label, fit_s=fit_time))
            curves[name, label] = words
        print(rows[-2], rows[-1], sep="\n", file=sys.stderr)

    certify_rows = []
    for decoder in DECODERS:
        second.use_decoder(decoder)
        second.decodings = CertificateCounts()
        before = load()
        start = time.perf_counter()
        for _ in second.parse(dev, certify=True):
            pass
        counts = second.decodings
        total = sum(counts.kinds.values())
        row = {"decoder": decoder, "sentences": total,
               "certified optimal": 100.0 * counts.optimal / total,
               **{kind: 100.0 * counts.kinds[kind] / total for kind in CERTIFICATE_KINDS},
               "seconds": time.perf_counter() - start, "load": f"{before}-{load()}",
               "summary": counts.summary()}
        certify_rows.append(row)
        print(row["summary"], file=sys.stderr)

    out = args.results / f"confidence_{args.treebank}"
    plot(curves, out.with_suffix(".png"))
    columns = [("model", "model"), ("temperatures", "temperatures"), ("t_head", "T head"),
               ("t_label", "T label"), ("words", "words"), ("uas", "UAS"),
               ("mean_head_p", "mean HeadProb"), ("ece_head", "ECE heads (points)"),
               ("label_acc_right_head", "label acc (right head)"),
               ("ece_label", "ECE labels, right head (points)"),
               ("ece_label_all_words", "ECE labels, all words (points)"),
               ("fit_s", "fit s"), ("load", "load")]
    notes = (f"Treebank {args.treebank} ({how}), gold tags; "
             f"order-1 model {first_how}; order-2 model {second_how}. Dev split in two: the "
             f"{len(fit_half)} even-numbered sentences fit the temperatures (negative "
             f"log-likelihood of the gold labels given the gold arcs, then of the gold heads "
             f"under the marginals), the {len(test_half)} odd-numbered ones are measured. "
             f"ECE: {BINS} equal-width bins, in points (3.00 = 0.03). HeadProb is the "
             "matrix-tree marginal of the predicted arc (single root) under the arc scores "
             "with their best labels folded in (the pruner's model at order 2); DeprelProb the softmax probability of the predicted label given that "
             "arc, so its calibration is measured on the words whose predicted head is "
             "right; the last ECE column scores it over all words (label right, whatever the "
             "head). `load`: 1-minute load average after the row (2 cores shared with "
             f"other jobs). Reliability diagrams: `{out.name}.png`.")
    certify_columns = ([("decoder", "decoder"), ("sentences", "sentences"),
                        ("certified optimal", "certified optimal %")]
                       + [(kind, f"{kind} %") for kind in CERTIFICATE_KINDS]
                       + [("seconds", "seconds"), ("load", "load")])
    certify = "\n".join([
        "## parse --certify on an order-2 model", "",
        f"`parse --certify` on the {len(dev)} dev sentences with the order-2 model, per "
        "decoder: the share of sentences per kind of certificate (README, 'Certificates and "
        "confidence'); certified optimal = exact, lp-integral, or a rounded tree whose score "
        "reaches the bound.", "", *markdown_table(certify_rows, certify_columns)])
    write_table(args, out.name, "Confidence calibration and decoding certificates", rows,
                columns, notes, meta={"certify": certify_rows}, after=certify)


def plot(curves: dict, path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    names = sorted({name for name, _ in curves})
    fig, axes = plt.subplots(len(names), 4, figsize=(14, 3.4 * len(names)), squeeze=False)
    for row, name in enumerate(names):
        for col, (label, kind) in enumerate((("T = 1", "head"), ("fitted", "head"),
                                             ("T = 1", "label"), ("fitted", "label"))):
            words = curves[name, label]
            ok = words["head_ok"] if kind == "head" else words["label_ok"][words["head_ok"]]
            p = words["head_p"] if kind == "head" else words["label_p"][words["head_ok"]]
            ece = expected_calibration_error(p, ok, BINS)
            reliability(axes[row, col], p, ok.astype(float),
                        f"{name}: {kind}s, {label} (ECE {ece:.3f})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)

