"""Issue 12: which block of the weights makes two trainers' models parse dev differently.

One command::

    python -m eval run weight_blocks --models A.npz B.npz [--treebank tr_imst] [--out PATH]

The model's weights are two blocks (``learning/model.py``): the part weights ``w_parts``
(arcs, grandparents, siblings) and the label weights ``W_labels``, whose best label per
arc is folded into the arc's score, so both move the unlabeled tree. Given two model
files of the same feature map and labels (``eval/trainers.py --save-models``), this
parses the dev split with the LP + rounding under each of the four combinations of A's
or B's part weights with A's or B's label weights (a borrowed label block also scaled
to the norm of the part block's own, as the two models' scales may differ), and writes
``eval/results/weight_blocks_{treebank}.{json,md}``: dev UAS/LAS per combination, and per
block each model's norm and the cosine between the two models' blocks. If swapping one
block moves the UAS from one model's to the other's, that block carries the difference.
Every pairing parses with A's pruner and decoder settings (the same as B's for two
models of one ``trainers`` run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._common import arguments, RESULTS, single_thread, treebank_or_sample, write_table

single_thread()

import numpy as np  # noqa: E402

from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.pipeline import Parser  # noqa: E402


def blocks(parser: Parser) -> tuple[np.ndarray, np.ndarray]:
    """``(w_parts, W_labels.ravel())`` of a parser's model (views of its weights)."""
    return (parser.model.weights[:parser.model.part_dim],
            parser.model.weights[parser.model.part_dim:])


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm else float("nan")


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--models", nargs=2, required=True, metavar=("A", "B"),
                    help="two model files of the same feature map and labels")
    ap.add_argument("--treebank", default="tr_imst", help="a shared UD treebank or 'sample'")
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    for path in args.models:
        if not Path(path).is_file():
            ap.error(f"--models: {path} is not a file")
    if Path(args.models[0]).stem == Path(args.models[1]).stem:
        ap.error("--models: the two files need different names (the table names them so)")
    a, b = (Parser.load(path) for path in args.models)
    if a.model.dim != b.model.dim or a.model.labels != b.model.labels:
        ap.error("--models: the two models have different feature spaces or labels")
    _, dev = treebank_or_sample(args.treebank, max_dev=args.max_dev)
    names = [Path(path).stem for path in args.models]
    parts = dict(zip(names, (blocks(a)[0], blocks(b)[0])))
    labels = dict(zip(names, (blocks(a)[1], blocks(b)[1])))
    a.use_decoder("lp")
    rows = []
    for part_name in names:
        for label_name in names:
            own = np.linalg.norm(labels[part_name]) / np.linalg.norm(labels[label_name])
            for scale in sorted({1.0, float(own)}):
                a.model.weights = np.concatenate([parts[part_name],
                                                  scale * labels[label_name]])
                scores = attachment_scores(dev, a.parse(dev)).all_words
                rows.append({"parts": part_name, "labels": label_name, "scale": scale,
                             "uas": scores["uas"], "las": scores["las"]})
                print(rows[-1], file=sys.stderr)
    (x, y) = names
    notes = (f"Command: `python -m eval run weight_blocks {' '.join(sys.argv[1:])}`. "
             f"{len(dev)} dev sentences of {args.treebank}, LP + rounding, scores over all "
             f"words. Norms: parts {x} {np.linalg.norm(parts[x]):.2f}, {y} "
             f"{np.linalg.norm(parts[y]):.2f} (cosine {cosine(parts[x], parts[y]):.3f}); "
             f"labels {x} {np.linalg.norm(labels[x]):.2f}, {y} "
             f"{np.linalg.norm(labels[y]):.2f} (cosine {cosine(labels[x], labels[y]):.3f}).")
    out = Path(args.out) if args.out else RESULTS / f"weight_blocks_{args.treebank}"
    write_table(out, f"Part and label weights of two models on {args.treebank} dev", rows,
                [("parts", "part weights of"), ("labels", "label weights of"),
                 ("scale", "label weights times"),
                 ("uas", "dev UAS (LP)"), ("las", "dev LAS (LP)")], notes)

