"""Issue 12: which block of the weights makes two trainers' models parse dev differently.

One command::

    python -m eval run weight_blocks --models A.npz B.npz [--treebank tr_imst] [--out NAME]
    python -m eval run weight_blocks [--trainers ssg bcfw] [--order 2] [--max-train N]
                                     [--epochs 2] [--treebank tr_imst]

The model's weights are two blocks (``learning/model.py``): the part weights ``w_parts``
(arcs, grandparents, siblings) and the label weights ``W_labels``, whose best label per
arc is folded into the arc's score, so both move the unlabeled tree. Given two model
files of the same feature map and labels (``trainers --save-models``; without
``--models``, two trained here on the treebank's gold tags by the two ``--trainers``), this
parses the dev split with the LP + rounding under each of the four combinations of A's
or B's part weights with A's or B's label weights (a borrowed label block also scaled
to the norm of the part block's own, as the two models' scales may differ), and writes
``weight_blocks_{treebank}.{json,md}`` under ``--results``: dev UAS/LAS per combination, and per
block each model's norm and the cosine between the two models' blocks. If swapping one
block moves the UAS from one model's to the other's, that block carries the difference.
Every pairing parses with A's pruner and decoder settings (the same as B's for two
models of one ``trainers`` run).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ._common import arguments, single_thread, treebank, write_table

single_thread()

import numpy as np  # noqa: E402

from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.config import PartsConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

SMOKE = ["--treebank", "sample", "--trainers", "ssg", "perceptron", "--order", "1",
         "--max-train", "20", "--epochs", "1", "--max-dev", "5"]
"""The smoke run: two order-1 models of 20 sample sentences, 5 dev sentences."""


def blocks(parser: Parser) -> tuple[np.ndarray, np.ndarray]:
    """``(w_parts, W_labels.ravel())`` of a parser's model (views of its weights)."""
    return (parser.model.weights[:parser.model.part_dim],
            parser.model.weights[parser.model.part_dim:])


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm else float("nan")


def trained(args, train, folder: Path) -> list[str]:
    """Model files of the two ``--trainers``, trained on ``train`` (gold tags) into
    ``folder``."""
    paths = []
    for name in args.trainers:
        config = TrainConfig(trainer=name, epochs=args.epochs, parts=PartsConfig(args.order),
                             tokenizer=None, tagger=None, lemmatizer=None)
        path = folder / f"{name}.npz"
        Parser.train(train, config).save(path)
        paths.append(str(path))
    return paths


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--models", nargs=2, default=None, metavar=("A", "B"),
                    help="two model files of the same feature map and labels (default: two "
                         "trained here)")
    ap.add_argument("--trainers", nargs=2, default=["ssg", "bcfw"], metavar=("A", "B"),
                    help="without --models, the trainers of the two models (default ssg bcfw)")
    ap.add_argument("--order", choices=["1", "2", "full"], default="2",
                    help="without --models, their order (default 2)")
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="without --models, their training sentences (default all)")
    ap.add_argument("--epochs", type=int, default=2, help="without --models (default 2)")
    ap.add_argument("--treebank", default="tr_imst", help="a shared UD treebank or 'sample'")
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--out", default=None,
                    help="result name under --results (default weight_blocks_TREEBANK)")
    args = ap.parse_args(argv)
    train, dev = treebank(args.ud, args.treebank, args.max_train, args.max_dev)
    if args.models is None:
        if args.trainers[0] == args.trainers[1]:
            ap.error("--trainers: two different trainers")
        with tempfile.TemporaryDirectory() as folder:
            compare(ap, args, trained(args, train, Path(folder)), dev)
    else:
        compare(ap, args, args.models, dev)


def compare(ap, args, models: list[str], dev) -> None:
    """The table of the two model files ``models`` on ``dev``."""
    for path in models:
        if not Path(path).is_file():
            ap.error(f"--models: {path} is not a file")
    if Path(models[0]).stem == Path(models[1]).stem:
        ap.error("--models: the two files need different names (the table names them so)")
    a, b = (Parser.load(path) for path in models)
    if a.model.dim != b.model.dim or a.model.labels != b.model.labels:
        ap.error("--models: the two models have different feature spaces or labels")
    names = [Path(path).stem for path in models]
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
    notes = (f"{len(dev)} dev sentences of {args.treebank}, LP + rounding, scores over all "
             f"words. Norms: parts {x} {np.linalg.norm(parts[x]):.2f}, {y} "
             f"{np.linalg.norm(parts[y]):.2f} (cosine {cosine(parts[x], parts[y]):.3f}); "
             f"labels {x} {np.linalg.norm(labels[x]):.2f}, {y} "
             f"{np.linalg.norm(labels[y]):.2f} (cosine {cosine(labels[x], labels[y]):.3f}).")
    write_table(args, args.out or f"weight_blocks_{args.treebank}",
                f"Part and label weights of two models on {args.treebank} dev", rows,
                [("parts", "part weights of"), ("labels", "label weights of"),
                 ("scale", "label weights times"),
                 ("uas", "dev UAS (LP)"), ("las", "dev LAS (LP)")], notes)

