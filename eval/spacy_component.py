"""Throughput of the spaCy component "polyparse" against ``polyparse parse`` on the same
tokens: words per CPU second, and whether the trees are the same (issue 44's figure).

    python -m eval run spacy_component [--treebank en_ewt] [--model M]
                                       [--train-sentences 2000] [--max-dev N] [--repeat 3]

The model (``--model``, or one trained by ``polyparse train`` with its tokenizer and
tagger on the first ``--train-sentences`` training sentences, 2 epochs, kept in
``RESULTS/tmp/``) parses the dev set's gold tokens (its first ``--max-dev`` sentences;
the words only: the model's tagger tags them) on one core, at the model's defaults
(its decoder, UD rules on), three ways:

* the component: ``list(nlp.pipe(docs))`` with ``docs`` one ``Doc`` per dev sentence
  of its words (``spacy.blank("xx")`` and ``add_pipe("polyparse")``);
* ``Parser.parse`` in this process: ``list(parser.parse(sentences, retag=True))`` with
  ``sentences`` the same words (``Sentence.from_words``);
* ``polyparse parse --retag`` as a child process on the words written as CoNLL-U, end to
  end (imports, loading the model and the cached kernels, reading and writing included).

Each in-process way is timed ``--repeat`` times, the ways taking turns, after a warm-up on
five sentences; the table gives the median CPU seconds and words/s, and the ratio to
``Parser.parse``. ``same trees``: the HEAD and DEPREL columns of the component's Docs in
CoNLL-U (``parser.spacy_docs.to_conllu``) equal the command's, byte for byte. Needs
spaCy (``pip install -e '.[spacy]'``). Writes ``spacy_component_<treebank>.{json,md}``
under ``--results``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ._common import (POLYPARSE, arguments, folder as treebank_folder, kept_trained_model,
                      single_thread, write_table)

single_thread()

from polyparse.corpora.conllu_io import read_conllu, read_treebank, write_conllu  # noqa: E402
from polyparse.corpora.sentence import Sentence  # noqa: E402
from polyparse.parser.pipeline import Parser  # noqa: E402

SMOKE = ["--treebank", "sample", "--train-sentences", "20", "--max-dev", "10",
         "--repeat", "1"]
"""The smoke run: a model of 20 sample sentences parses 10 dev sentences once each way."""

REQUIRES = ["spacy"]
"""Modules the benchmark needs besides polyparse's own (the smoke test skips without)."""


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt", help="default en_ewt")
    ap.add_argument("--model", default=None, metavar="PATH",
                    help="the model (default: one trained here with tokenizer and tagger)")
    ap.add_argument("--train-sentences", type=int, default=2000, metavar="N",
                    help="training sentences of the model trained here (default 2000)")
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="the first N dev sentences (default all)")
    ap.add_argument("--repeat", type=int, default=3, metavar="K",
                    help="timed runs of each in-process way (default 3)")
    args = ap.parse_args(argv)
    if importlib.util.find_spec("spacy") is None:
        ap.error("spaCy is not installed: pip install -e '.[spacy]'")
    folder = treebank_folder(args.ud, args.treebank)
    if not (folder / "dev.conllu").is_file():
        ap.error(f"{folder / 'dev.conllu'} not found")
    words = [list(s.forms[1:]) for s in read_treebank(folder / "dev.conllu")][:args.max_dev]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        model = kept_trained_model(args, f"spacy_component_{args.treebank}_{args.train_sentences}",
                                   folder, args.train_sentences, tmp)
        rows = measure(args, model, words, tmp)
    total = rows[0]["words"]
    table = write_table(
        args, f"spacy_component_{args.treebank}",
        f"The spaCy component against polyparse parse on {args.treebank} dev's tokens", rows,
        [("way", "way"), ("cpu_s", "CPU s"), ("words_per_s", "words/s"),
         ("ratio", "against Parser.parse"), ("same_trees", "same trees"),
         ("runs_cpu_s", "runs (CPU s)")],
        notes=(f"Model {model.name}; {len(words)} dev sentences, {total} words (gold "
               "tokens, tagged by the model). One core; CPU seconds, median of the runs. "
               f"Load (1 min) {rows[0]['load']}."),
        meta={"model": str(model), "sentences": len(words), "words": total})
    print(table.read_text())


def measure(args, model: Path, words: list[list[str]], tmp: Path) -> list[dict]:
    """Time the three ways (the module docstring) and compare their trees."""
    import spacy
    from spacy.tokens import Doc

    from polyparse.parser.spacy_docs import to_conllu

    nlp = spacy.blank("xx")
    nlp.add_pipe("polyparse", config={"model": str(model)})
    plain = Parser.load(model)
    retag = plain.tagger is not None
    tokens = tmp / "tokens.conllu"
    write_conllu([Sentence.from_words(w) for w in words], tokens)

    def docs() -> list[Doc]:
        return [Doc(nlp.vocab, words=w) for w in words]

    def run_component() -> tuple[float, list]:
        given = docs()
        start = time.process_time()
        parsed = list(nlp.pipe(given))
        return time.process_time() - start, parsed

    def run_parser() -> tuple[float, list]:
        given = [Sentence.from_words(w) for w in words]
        start = time.process_time()
        parsed = list(plain.parse(given, retag=retag))
        return time.process_time() - start, parsed

    list(nlp.pipe(docs()[:5]))                                  # warm kernels
    list(plain.parse([Sentence.from_words(w) for w in words[:5]], retag=retag))
    load_before = os.getloadavg()[0]
    runs = {"component": [], "parser": []}
    for _ in range(args.repeat):
        seconds, parsed_docs = run_component()
        runs["component"].append(seconds)
        seconds, parsed_sentences = run_parser()
        runs["parser"].append(seconds)
    load = f"{load_before:.1f}-{os.getloadavg()[0]:.1f}"
    out = tmp / "parsed.conllu"
    cli = run_cli(model, tokens, out, retag)
    cli_trees = tree_digest(out.read_text(encoding="utf-8"))
    component_trees = tree_digest("".join(to_conllu(doc) for doc in parsed_docs))
    parser_trees = tree_digest("".join(s.to_text() for s in parsed_sentences))
    total = sum(len(w) for w in words)
    parser_s = float(np.median(runs["parser"]))
    rows = []
    for way, seconds, trees, times in (
            ("spaCy component: nlp.pipe(docs)", float(np.median(runs["component"])),
             component_trees, runs["component"]),
            ("Parser.parse(sentences, retag=True)", parser_s, parser_trees, runs["parser"]),
            ("polyparse parse --retag (child process, end to end)", cli, cli_trees, [cli])):
        rows.append({"way": way, "words": total, "cpu_s": seconds,
                     "words_per_s": total / seconds, "ratio": parser_s / seconds,
                     "same_trees": "yes" if trees == cli_trees else "NO",
                     "runs_cpu_s": ", ".join(f"{t:.2f}" for t in times), "load": load})
    return rows


def run_cli(model: Path, tokens: Path, out: Path, retag: bool) -> float:
    """CPU seconds (user + system) of ``polyparse parse`` on ``tokens`` as a child."""
    command = [*POLYPARSE, "-q", "parse", "--model", str(model), "--input", str(tokens),
               "--output", str(out), *(["--retag"] if retag else [])]
    child = subprocess.Popen(command, env=dict(os.environ))
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"{' '.join(command)} failed with status {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def tree_digest(conllu: str) -> str:
    """SHA-256 (12 hex digits) of the HEAD and DEPREL columns of the word lines of
    ``conllu``."""
    h = hashlib.sha256()
    for sentence in read_conllu(io.StringIO(conllu)):
        h.update(" ".join(f"{head}:{rel}" for head, rel
                          in zip(sentence.heads[1:], sentence.deprels[1:])).encode() + b"\n")
    return h.hexdigest()[:12]
