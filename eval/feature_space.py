"""Issue 43: what the sizes of the hashed feature spaces give the pipeline of a language,
from raw text and from gold tokens, at what memory.

One command::

    python -m eval run feature_space [--treebanks en_ewt] [--sizes 24,20 25,21 default]
                                     [--model SIZE=PATH ...] [--max-train N] [--max-dev N]
                                     [--epochs N] [--work DIR] [--no-warm-up]
                                     [--out feature_space]

The parser's part features are hashed into ``2**bits`` weights and its label features
into ``2**label_bits`` rows of one weight per label (:class:`features.extractor.
FeatureConfig`); by default both are sized from the training data, within the caps
:data:`features.extractor.MAX_BITS` and ``MAX_LABEL_BITS``. For each treebank (the split
of ``eval/peers.py``: train -> dev, or every 10th training sentence held out) and each
size of ``--sizes`` (``BITS,LABEL_BITS``, or ``default``: neither option given), this
trains the language's pipeline as ``eval/peers.py`` trains polyparse (``polyparse train
--lang LANG``, then ``--bits BITS --label-bits LABEL_BITS``), or takes the model
``--model SIZE=PATH`` gives for that size (one treebank), and annotates the held-out
sentences from raw text and from gold tokens as ``eval/peers.py`` does (one thread,
timed end to end, scored by UD's ``udeval``). Reports per size and input the CoNLL 2018
F1 scores, words per second, the sizes the model has, the megabytes of its weight vector
as a parse holds it (float32, part and label weights together), its file's megabytes and
the training minutes. Writes ``OUT.json`` and ``OUT.md`` under ``--results``; models,
logs and outputs stay in ``--work``.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from ._common import arguments, folder, require_treebanks, single_thread, write_table

single_thread()

from polyparse.parser.model_file import load_metadata  # noqa: E402

from .peers import (at_least_one, given_models, language, run_system,  # noqa: E402
                    size_arguments, train_polyparse, udeval_command, work_arguments)
from .defaults import split  # noqa: E402

TREEBANKS = ("en_ewt",)
SIZES = ("24,20", "default")
DEFAULT = "default"
_SIZE = re.compile(r"^(\d+),(\d+)$")

SMOKE = ["--treebanks", "sample", "--max-train", "30", "--max-dev", "10", "--epochs", "1",
         "--sizes", "14,10", "default", "--no-warm-up", "--work", "{results}/work"]
"""The smoke run: one epoch on 30 sample sentences, 10 held out, at a small size and the
default."""

COLUMNS = [("treebank", "treebank"), ("size", "size asked"), ("bits", "bits"),
           ("label_bits", "label bits"), ("input", "input"), ("upos", "UPOS F1"),
           ("ufeats", "UFeats F1"), ("lemmas", "Lemmas F1"), ("uas", "UAS F1"),
           ("las", "LAS F1"), ("clas", "CLAS F1"), ("mlas", "MLAS F1"), ("blex", "BLEX F1"),
           ("words_per_s", "words/s"), ("weights_mb", "weights MB"), ("file_mb", "file MB"),
           ("train_min", "train min")]


def size_options(size: str) -> list[str]:
    """``polyparse train``'s options for ``size`` (``BITS,LABEL_BITS`` or ``default``)."""
    if size == DEFAULT:
        return []
    bits, label_bits = _SIZE.match(size).groups()
    return ["--bits", bits, "--label-bits", label_bits]


def checked_sizes(ap, sizes: list[str]) -> list[str]:
    """``--sizes``, each ``BITS,LABEL_BITS`` (both in 1..30, as ``FeatureConfig`` takes
    them) or ``default``, none twice; a usage error otherwise."""
    for size in sizes:
        match = _SIZE.match(size)
        if size != DEFAULT and not (match and all(1 <= int(b) <= 30 for b in match.groups())):
            ap.error(f"--sizes {size}: BITS,LABEL_BITS (each 1 to 30) or {DEFAULT}")
    if len(set(sizes)) < len(sizes):
        ap.error(f"--sizes {' '.join(sizes)}: a size named twice")
    return sizes


def weight_megabytes(model: Path) -> tuple[int, int, float]:
    """The model's ``bits`` and ``label_bits`` and the megabytes of its float32 weight
    vector, ``2**bits`` part weights and ``2**label_bits`` rows of a weight per label."""
    meta = load_metadata(model)
    config = meta["features"]["config"]
    dim = 2 ** config["bits"] + 2 ** config["label_bits"] * len(meta["labels"])
    return config["bits"], config["label_bits"], 4 * dim / 2 ** 20


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebanks", nargs="+", default=list(TREEBANKS), metavar="NAME",
                    help="folders of --ud, or sample (default: %s)" % " ".join(TREEBANKS))
    ap.add_argument("--sizes", nargs="+", default=list(SIZES), metavar="SIZE",
                    help="BITS,LABEL_BITS, or default for the sizes training chooses "
                         "(default: %s)" % " ".join(SIZES))
    size_arguments(ap)
    ap.add_argument("--model", action="append", default=[], metavar="SIZE=PATH",
                    help="a model of that size already trained on the treebank's training "
                         "split as this benchmark trains it (one treebank only); repeatable")
    work_arguments(ap, "polyparse-space", "feature_space")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, args.treebanks)
    sizes = checked_sizes(ap, args.sizes)
    models = given_models(ap, args.model, args.treebanks, sizes, "SIZE")
    at_least_one(ap, args, ("max_train", "max_dev", "epochs"))
    udeval_ = udeval_command()
    if udeval_ is None:
        ap.error("udeval not found: the scores are UD's own udeval "
                 "(pip install -e '.[test]' installs udtools)")
    rows, splits = [], {}
    for name in args.treebanks:
        work = Path(args.work) / name
        train, held, how = split(folder(args.ud, name), work, args.max_dev, args.max_train)
        splits[name] = how
        args.treebank, args.lang = name, language(name)
        for size in sizes:
            tag = "size-" + size.replace(",", "-")
            if size in models:
                model, train_min = models[size], 0.0
            else:
                print(f"feature_space: {name}: training at size {size}", file=sys.stderr,
                      flush=True)
                start = time.perf_counter()
                model = train_polyparse(args, train, work, size_options(size), tag)
                train_min = (time.perf_counter() - start) / 60
            bits, label_bits, weights_mb = weight_megabytes(model)
            print(f"feature_space: {name}: size {size} annotates (timed)", file=sys.stderr,
                  flush=True)
            outputs = work / tag
            outputs.mkdir(exist_ok=True)
            for row in run_system("polyparse", model, train_min, name, held, outputs, args,
                                  udeval_):
                rows.append({**row, "size": size, "bits": bits, "label_bits": label_bits,
                             "weights_mb": weights_mb, "model": str(model),
                             "file_mb": model.stat().st_size / 2 ** 20})
        notes = (
            "Each model trained as `eval/peers.py` trains polyparse (`polyparse train --lang "
            "LANG`, its recipe and word clusters), with `--bits B --label-bits L` for a size "
            "`B,L` and neither for `default`; held-out splits: " + "; ".join(
                f"{n}: {h}" for n, h in splits.items()) + ". Models given: " + (", ".join(
                f"{size} {path}" for size, path in models.items()) or "none") + " (their "
            "train min 0). F1 (%) by UD's `udeval` from raw text and from gold tokens, "
            "*words/s* end to end on one thread, as `eval/peers.py` measures them; *weights "
            "MB*: the float32 weight vector a parse holds (`2**bits` part weights and "
            "`2**label_bits` rows of a weight per label); *file MB*: the model file.")
        table = write_table(args, args.out, "Feature-space sizes (issue 43)", rows, COLUMNS,
                            notes, meta={"splits": splits})
    print(table.read_text())
