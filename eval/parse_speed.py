"""Parsing speed end to end, and where the time goes (issue 13, item 4).

One command::

    python -m eval run parse_speed [--treebank en_ewt] [--max-train 3000] [--epochs 2]
                                   [--max-heads 5] [--model PATH] [--decoders ad3,lp]
                                   [--max-dev N] [--out NAME] [--repeat K]

Trains an order-2 model on the gold tags of ``--max-train`` training sentences (SSG with
the ``ad3`` decoder, pruned to ``--max-heads`` heads per word; with ``--model``, loads it
from there if the file exists, else saves it there; by default
``RESULTS/tmp/parse_speed_<treebank>.npz``), then parses the dev set (its first
``--max-dev`` sentences),
CoNLL-U in, CoNLL-U out, with each decoder, one core (OMP/BLAS/numba threads 1), three
times:

* ``polyparse parse --model M --input dev.conllu --output OUT --decoder D`` as a child
  process: its CPU seconds (user + system) and peak resident memory (``wait4``), model
  loading, imports and loading the cached kernels included (a first run on five
  sentences fills numba's cache);
* in this process, the model loaded and the kernels warm: ``write_conllu(parser.parse(
  read_conllu(dev)))`` timed in CPU seconds, the headline tokens/s;
* the same with every stage's function wrapped by a CPU timer (exclusive time: a stage's
  time excludes the stages called inside it), the breakdown.

Writes ``parse_speed_<treebank>.{json,md}`` (``--out`` to name it otherwise) under
``--results`` with dev UAS/LAS, a digest of the output trees (equal digests: the same
trees and labels; in and out of process they must be the same but on sentences stopped
at the time limit) and the load (the machine is shared: CPU time, not wall time). The
parsed files stay in ``RESULTS/tmp/parse_speed/``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ._common import POLYPARSE, arguments, folder, single_thread, treebank, write_table

single_thread()

from polyparse.corpora import conllu_io  # noqa: E402
from polyparse.corpora.conllu_io import read_conllu, write_conllu  # noqa: E402
from polyparse.corpora.sentence import Sentence  # noqa: E402
from polyparse.decoders import factor_graph, lp  # noqa: E402
from polyparse.features.extractor import FeatureExtractor  # noqa: E402
from polyparse.features.vocab import Vocabulary  # noqa: E402
from polyparse.learning import pruning  # noqa: E402
from polyparse.learning.model import LinearModel  # noqa: E402
from polyparse.parser.decoding import Decoding  # noqa: E402
from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.config import PartsConfig, PrunerConfig  # noqa: E402
from polyparse.parser.pipeline import Parser, TrainConfig  # noqa: E402

SMOKE = ["--treebank", "sample", "--max-train", "20", "--epochs", "1", "--max-dev", "10"]
"""The smoke run: trained on 20 sentences of the sample, 10 dev sentences parsed."""

STAGES = [
    # (stage, owner, attribute): the function whose exclusive CPU time is the stage's
    ("writing", conllu_io, "write_conllu"),
    ("feature encoding", Vocabulary, "encode"),
    ("pruning: arc scores", FeatureExtractor, "arc_scores"),
    ("pruning: label scores", FeatureExtractor, "best_label_scores"),
    ("pruning: marginals, MST", pruning, "prune_arcs"),
    ("pruning: other", pruning.Pruner, "candidate_arcs"),
    ("parts", PartsConfig, "build"),
    ("part features", FeatureExtractor, "part_features"),
    ("part features", FeatureExtractor, "label_features"),
    ("scoring", LinearModel, "scores"),
    ("factor graph / LP program", factor_graph.FactorGraph, "from_parts"),
    ("factor graph / LP program", lp, "build_formulation"),
    ("rounding", lp, "round_relaxed"),
    ("labeling", LinearModel, "label_names"),
    ("labeling", Sentence, "with_tree"),
    ("other parsing", Decoding, "analyze"),
]
"""Where ``round_relaxed`` is imported into a decoder module, that module's name is
wrapped too (:func:`instrument`); ``decoding`` is the decoder's own ``decode``."""


class StageTimer:
    """Exclusive CPU seconds per stage: time spent in a nested timed call is charged to
    the inner stage only."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[list] = []       # [stage, start, time of nested stages]

    def wrap(self, stage: str, function):
        def timed(*args, **kwargs):
            self._stack.append([stage, time.process_time(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                name, start, nested = self._stack.pop()
                spent = time.process_time() - start
                self.seconds[name] = self.seconds.get(name, 0.0) + spent - nested
                if self._stack:
                    self._stack[-1][2] += spent
        return timed

    def iterate(self, stage: str, iterable):
        """``iterable`` with each ``next`` charged to ``stage``."""
        iterator = iter(iterable)
        step = self.wrap(stage, lambda: next(iterator, StopIteration))
        while (item := step()) is not StopIteration:
            yield item


def instrument(timer: StageTimer, decoder_class: type) -> list:
    """Wrap every function of :data:`STAGES` and the decoder's ``decode``; returns what
    to restore."""
    module = sys.modules[decoder_class.__module__]
    targets = list(STAGES) + [("decoding", decoder_class, "decode")]
    if module is not lp and hasattr(module, "round_relaxed"):
        targets.append(("rounding", module, "round_relaxed"))
    restore = []
    for stage, owner, name in targets:
        original = owner.__dict__[name]
        function = original.__func__ if isinstance(original, classmethod) else original
        wrapped = timer.wrap(stage, function)
        setattr(owner, name, classmethod(wrapped) if isinstance(original, classmethod)
                else wrapped)
        restore.append((owner, name, original))
    return restore


def parse_file(parser: Parser, dev: Path, out: Path, timer: StageTimer | None = None
               ) -> float:
    """CPU seconds to parse ``dev`` into ``out`` (with ``timer``: reading timed too)."""
    start = time.process_time()
    sentences = read_conllu(dev)
    if timer is not None:
        sentences = timer.iterate("reading", sentences)
    conllu_io.write_conllu(parser.parse(sentences, certify=True), out)  # wrapped when timed
    return time.process_time() - start


def run_cli(model: Path, dev: Path, out: Path, decoder: str) -> dict:
    """``polyparse parse`` in a child process: its CPU seconds and peak memory."""
    command = [*POLYPARSE, "parse", "--model", str(model), "--certify",
               "--input", str(dev), "--output", str(out), "--decoder", decoder]
    start = time.perf_counter()
    child = subprocess.Popen(command, env=dict(os.environ))
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.exit(f"{' '.join(command)} failed with status {child.returncode}")
    return {"cli_cpu_s": usage.ru_utime + usage.ru_stime,
            "cli_wall_s": time.perf_counter() - start,
            "cli_peak_mb": usage.ru_maxrss / 1024}


def trees(path: Path) -> list[tuple[str, bool]]:
    """Per sentence of ``path`` (written with ``--certify``): its HEAD and DEPREL columns,
    and whether its decoder stopped at the time limit."""
    return [(" ".join(f"{head}:{rel}" for head, rel
                      in zip(sentence.heads[1:], sentence.deprels[1:])),
             any(line.startswith("# decoding = time-limit") for line in sentence.lines))
            for sentence in read_conllu(path)]


def digest(parsed: list[tuple[str, bool]]) -> str:
    """SHA-256 of the trees of :func:`trees` (12 hex digits)."""
    h = hashlib.sha256()
    for tree, _ in parsed:
        h.update(tree.encode())
    return h.hexdigest()[:12]


def differing(a: list[tuple[str, bool]], b: list[tuple[str, bool]]) -> int:
    """Sentences whose trees differ in ``a`` and ``b`` although neither decode stopped at
    the time limit (one that did keeps the best tree found by then, which depends on the
    machine's speed)."""
    return sum(x != y and not (x_limited or y_limited)
               for (x, x_limited), (y, y_limited) in zip(a, b))


def model_for(args) -> tuple[Path, str]:
    """The model file (trained and saved first unless ``--model`` exists) and how it was
    made."""
    path = Path(args.model or args.results / "tmp" / f"parse_speed_{args.treebank}.npz")
    if path.exists():
        return path, f"loaded from {path}"
    path.parent.mkdir(parents=True, exist_ok=True)
    train, _ = treebank(args.ud, args.treebank, args.max_train)
    config = TrainConfig(trainer="ssg", decoder="ad3", epochs=args.epochs,
                         parts=PartsConfig("2"), pruner=PrunerConfig(max_heads=args.max_heads),
                         tokenizer=None, tagger=None, lemmatizer=None)
    start = time.perf_counter()
    Parser.train(train, config).save(path)
    return path, (f"trained on {len(train)} sentences' gold tags, SSG with the ad3 decoder, "
                  f"{args.epochs} epochs ({time.perf_counter() - start:.0f} s), pruned to "
                  f"{args.max_heads} heads, saved to {path}")


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--max-train", type=int, default=3000)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--max-heads", type=int, default=5)
    ap.add_argument("--model", default=None,
                    help="model file: loaded if it exists, else the trained model is saved")
    ap.add_argument("--decoders", default="ad3,lp")
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="the first N dev sentences (default all)")
    ap.add_argument("--out", default=None, help="result name (default parse_speed_<treebank>)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="in-process parses per decoder, the decoders taking turns")
    args = ap.parse_args(argv)
    model_path, how = model_for(args)
    dev_path = folder(args.ud, args.treebank) / "dev.conllu"
    outputs = args.results / "tmp" / "parse_speed"
    outputs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if args.max_dev is not None:
            cut = Path(tmp) / "dev.conllu"
            write_conllu(list(read_conllu(dev_path))[:args.max_dev], cut)
            dev_path = cut
        measure(args, model_path, how, dev_path, outputs)


def measure(args, model_path: Path, how: str, dev_path: Path, outputs: Path) -> None:
    """Parse ``dev_path`` with the model each way, each decoder; write the table."""
    gold = list(read_conllu(dev_path))
    tokens = sum(len(s) for s in gold)

    def output(decoder: str) -> Path:
        return outputs / f"{args.treebank}_{decoder}.conllu"

    warm_path = outputs / "warm.conllu"
    write_conllu(gold[:5], warm_path)
    parser = Parser.load(model_path)
    rows = []
    for decoder in args.decoders.split(","):
        out = output(decoder)
        row = {"decoder": decoder, "sentences": len(gold), "tokens": tokens}
        run_cli(model_path, warm_path, out, decoder)       # numba's cache filled first
        row.update(run_cli(model_path, dev_path, out, decoder))
        row["cli_tokens_per_s"] = tokens / row["cli_cpu_s"]
        cli_trees = trees(out)
        row["digest"] = digest(cli_trees)
        row["time_limited"] = sum(limited for _, limited in cli_trees)
        parser.use_decoder(decoder)
        list(parser.parse(gold[:2]))                     # kernels loaded before timing
        load_before = os.getloadavg()[0]
        row["runs_cpu_s"] = [parse_file(parser, dev_path, out)]
        timer = StageTimer()
        restore = instrument(timer, type(parser.decoder))
        try:
            row["timed_cpu_s"] = parse_file(parser, dev_path, out, timer)
        finally:
            for owner, name, original in reversed(restore):
                setattr(owner, name, original)
        row["load"] = f"{load_before:.1f}-{os.getloadavg()[0]:.1f}"
        row["stages"] = dict(sorted(timer.seconds.items(), key=lambda kv: -kv[1]))
        if differing(trees(out), cli_trees):
            sys.exit(f"{decoder}: the in-process parse differs from polyparse parse's")
        scores = attachment_scores(gold, list(read_conllu(out))).all_words
        row.update(uas=scores["uas"], las=scores["las"])
        print({k: v for k, v in row.items()}, flush=True)
        rows.append(row)
    for _ in range(args.repeat - 1):     # the host's speed drifts: decoders take turns
        for row in rows:
            parser.use_decoder(row["decoder"])
            row["runs_cpu_s"].append(parse_file(parser, dev_path, output(row["decoder"])))
    for row in rows:
        row["cpu_s"] = float(np.median(row["runs_cpu_s"]))
        row["tokens_per_s"] = tokens / row["cpu_s"]
        row["best_tokens_per_s"] = tokens / min(row["runs_cpu_s"])
    stages = list(dict.fromkeys(s for row in rows for s in row["stages"]))
    for row in rows:
        row["accounted"] = sum(row["stages"].values()) / row["timed_cpu_s"]
    breakdown = ["", "CPU seconds by stage (exclusive), instrumented run:", "",
                 "| stage | " + " | ".join(r["decoder"] for r in rows) + " |",
                 "|---|" + "---|" * len(rows)]
    for stage in stages:
        breakdown.append(f"| {stage} | " + " | ".join(
            f"{r['stages'].get(stage, 0.0):.2f} ({100 * r['stages'].get(stage, 0.0) / r['timed_cpu_s']:.0f}%)"
            for r in rows) + " |")
    breakdown.append("| total (instrumented) | " + " | ".join(
        f"{r['timed_cpu_s']:.2f}" for r in rows) + " |")
    order = parser.config.order
    notes = (f"Treebank {args.treebank}: order-{order} model {how}. Dev: "
             f"{len(gold)} sentences, {tokens} tokens, gold tags. One core (OMP/BLAS/numba "
             "threads 1), CPU seconds. `tokens/s`: `write_conllu(parser.parse(read_conllu("
             "dev)), out)` in one process with the model loaded and the kernels warm. "
             "`polyparse parse`: the command as a child process, everything included "
             "(imports, loading the model and the cached kernels), and its peak resident "
             "memory. `load`: 1-minute load average before and after. UAS and LAS over all "
             "words, punctuation included; `trees`: digest of "
             "the output's HEAD and DEPREL columns, the same in and out of process but "
             "on the sentences whose decoder stopped at its time limit (`time limit`: "
             "their number in `polyparse parse`'s output). With `--repeat K` the in-process parse runs K "
             "times per decoder, the decoders taking turns (the machine's speed drifts "
             "by tens of percent over minutes): `tokens/s` from the median CPU time, "
             "`best` from the least.")
    columns = [("decoder", "decoder"), ("tokens_per_s", "tokens/s"), ("cpu_s", "CPU s"),
               ("best_tokens_per_s", "best tokens/s"),
               ("cli_tokens_per_s", "polyparse parse tokens/s"),
               ("cli_cpu_s", "polyparse parse CPU s"), ("cli_peak_mb", "peak MB"),
               ("uas", "UAS"), ("las", "LAS"), ("digest", "trees"), ("time_limited", "time limit"),
               ("load", "load")]
    write_table(args, args.out or f"parse_speed_{args.treebank}",
                f"Parsing speed end to end, order {order}", rows, columns, notes,
                after="\n".join(breakdown))

