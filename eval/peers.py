"""Issue 43 item 1: polyparse, UDPipe 1 and spaCy side by side, trained on the same
data, parsing the same held-out raw text and gold tokens, scored by UD's udeval.

One command::

    python -m eval run peers [--treebanks en_ewt tr_imst ...] [--systems polyparse udpipe spacy]
                             [--max-train N] [--max-dev N] [--epochs N]
                             [--udpipe-tokenizer OPTS] [--udpipe-tagger OPTS]
                             [--udpipe-parser OPTS] [--spacy-max-epochs N]
                             [--spacy-max-steps N] [--model SYSTEM=PATH ...] [--jobs N]
                             [--work DIR] [--no-warm-up] [--out peers]

For each treebank the training and held-out files are those of ``eval/defaults.py``
(:func:`eval.defaults.split`): train.conllu and dev.conllu, or without dev.conllu every
10th training sentence held out and the model trained on the others. On the same
training file each system is trained as its users train it:

* polyparse: ``polyparse train --train TRAIN --model M --lang LANG``, the defaults of
  the treebank's language (tokenizer, tagger, lemmatizer and parser; its family's
  recipe of ``parser/recipes.py``, order 2 for the Germanic, Slavic and Turkic
  languages; the language's word clusters in tagger and parser where spaCy's lookups
  data has them and is installed: English); ``--epochs`` only if given;
* UDPipe 1 (``ufal.udpipe``): ``Trainer.train("morphodita_parsito", ...)``, tokenizer,
  tagger (with its lemmatizer) and parser with UDPipe's default options (``--udpipe-*``
  to change them), no held-out data (the training data is all it sees, as for the
  others);
* spaCy, from scratch on the CPU: the CoNLL-U converted by ``spacy convert --converter
  conllu --n-sents 10``; ``spacy init config --pipeline tagger,morphologizer,
  trainable_lemmatizer,senter,parser --optimize efficiency`` (tok2vec, XPOS in the
  tagger, UPOS and FEATS in the morphologizer, the edit-tree lemmatizer, the sentence
  recognizer and the parser), the language's rule-based tokenizer (``spacy.blank(lang)``);
  ``spacy train`` for at most ``--spacy-max-epochs`` epochs and ``--spacy-max-steps``
  steps, no early stopping (the training file is also its ``--paths.dev``, evaluated
  at step 0 and every ``--spacy-max-steps`` steps), ``model-last`` kept.

``--model SYSTEM=PATH`` gives a model trained before on the same training split (UDPipe
1's takes hours on en_ewt: it may be trained once, by a run of this benchmark, and timed
again on an idle machine): it is loaded instead of trained, its *train min* 0. The
trainings run ``--jobs`` at a time (default one), each in a child process. Then,
once all of a treebank's models are trained, in this process, one thread
(:func:`eval._common.single_thread`; spaCy ``n_process=1``), each system in turn loads
its model and annotates two inputs, each timed end to end (annotating and writing the CoNLL-U), after an untimed run on the first
sentences (unless ``--no-warm-up``):

* raw text: the held-out sentences' ``# text`` as ``conllu_to_text.pl`` writes them
  (:func:`corpora.plain_text.raw_text`, as ``eval/raw_text.py``): paragraphs apart by
  blank lines, lines wrapped at 80 characters. polyparse: ``Parser.stream_text`` as
  ``polyparse parse --format text``; UDPipe: its ``tokenize`` input; spaCy: one ``Doc``
  per paragraph, its lines joined by spaces, whitespace tokens left out of the output;
* gold tokens: the held-out CoNLL-U with LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL and DEPS
  blanked (``_``). polyparse: ``Parser.parse(retag=True)`` as ``polyparse parse
  --retag``; UDPipe: its ``conllu`` input; spaCy: one ``Doc`` per sentence, its words
  and sentence start given.

Every output is scored by ``udeval --counts --no-enhanced`` (the ``udtools`` package of
the test extra: UD's CoNLL 2018 script) on all its metrics, F1 = 2 correct / (gold +
system). A sentence where spaCy left several roots (its parser splitting a sentence the
sentence recognizer gave it) has the later roots attached to the first; the row counts
them. Writes ``OUT.json`` and ``OUT.md`` under ``--results`` after every treebank: one
row per treebank, system and input with every metric, words per second (gold words),
load seconds and training minutes. The peers are optional (``pip install -e
'.[peers]'``): one not installed is said in one line and left out. Models, logs and
outputs stay in ``--work``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ._common import (POLYPARSE, arguments, conll18_columns, folder, require_treebanks,
                      single_thread, timed_command, warm_up_argument, write_table)

single_thread()

from polyparse.corpora.conllu_io import read_conllu, write_conllu  # noqa: E402
from polyparse.corpora.plain_text import raw_text  # noqa: E402
from polyparse.parser import cli  # noqa: E402
from polyparse.parser.evaluate import METRICS  # noqa: E402
from polyparse.parser.recipes import recipe_for  # noqa: E402

from .defaults import blocks, split, warm_training  # noqa: E402

TREEBANKS = ("en_ewt", "tr_imst")
SYSTEMS = ("polyparse", "udpipe", "spacy")
NAMES = {"polyparse": "polyparse", "udpipe": "UDPipe", "spacy": "spaCy"}
PACKAGES = {"udpipe": "ufal.udpipe", "spacy": "spacy"}
"""The module each peer needs (``pip install -e '.[peers]'``)."""

SPACY_PIPELINE = "tagger,morphologizer,trainable_lemmatizer,senter,parser"
WARM_SENTENCES = 5
"""Held-out sentences of the untimed run of each system and input before the timed one."""

SMOKE = ["--treebanks", "sample", "--max-train", "30", "--max-dev", "10", "--epochs", "1",
         "--udpipe-tokenizer", "epochs=1;dimension=16", "--udpipe-tagger", "iterations=1",
         "--udpipe-parser", "iterations=1;hidden_layer=20", "--spacy-max-epochs", "1",
         "--spacy-max-steps", "10", "--jobs", "2", "--no-warm-up", "--work", "{results}/work"]
"""The smoke run: every installed system trained for one epoch on 30 sample sentences,
10 held out."""

@dataclass(frozen=True)
class Annotator:
    """A loaded model: CoNLL-U text of raw text (``from_text``) and of CoNLL-U whose
    words are given (``from_tokens``); ``repaired`` counts the roots attached to another
    root so far (spaCy's)."""

    from_text: Callable[[str], str]
    from_tokens: Callable[[str], str]
    repaired: Callable[[], int] = lambda: 0


# polyparse

def train_polyparse(args, train: Path, work: Path, options: Sequence[str] = (),
                    name: str = "polyparse") -> Path:
    """``polyparse train --train TRAIN --model WORK/NAME.npz --lang LANG``: trained as a
    user who names the treebank's language trains, with its family's recipe (order 2 for
    Germanic, Slavic and Turkic languages) and its word clusters where spaCy's lookups
    data has them and is installed (the sample treebank: the plain defaults);
    ``--epochs`` and ``--relabel`` if given, then ``options`` (``eval/feature_space.py``'s
    ``--bits`` and ``--label-bits``); its messages in ``WORK/NAME-train.log``."""
    model = work / f"{name}.npz"
    lang = [] if args.treebank == "sample" else ["--lang", args.lang]
    if args.warm_up:
        warm_training(train, recipe_for(args.lang)[1].order if lang else "1", work)
    epochs = ["--epochs", str(args.epochs)] if args.epochs else []
    relabel = ["--relabel"] if args.relabel else []
    timed_command([*POLYPARSE, "train", "--train", str(train), "--model", str(model),
                   *lang, *epochs, *relabel, *options], work / f"{name}-train.log")
    return model


def load_polyparse(model: Path) -> Annotator:
    """The parser ``polyparse parse --model M`` decodes with, warmed up as it does it."""
    options = cli.build_parser().parse_args(["parse", "--model", str(model)])
    parser = cli.parser_for_parse(options)
    parser.warm_up()

    def conllu(sentences) -> str:
        out = io.StringIO()
        write_conllu(sentences, out)
        return out.getvalue()

    return Annotator(
        from_text=lambda text: conllu(parser.stream_text(
            text, max_words=options.max_words or None)),
        from_tokens=lambda text: conllu(parser.parse(
            read_conllu(io.StringIO(text)), retag=True)))


# UDPipe 1

@contextlib.contextmanager
def stderr_into(log: Path):
    """File descriptor 2 (where UDPipe's C++ writes its training messages) into ``log``."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with log.open("w", encoding="utf-8") as messages:
            os.dup2(messages.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def udpipe_sentences(path: Path):
    """The sentences of a CoNLL-U file as UDPipe reads them."""
    from ufal import udpipe

    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(path.read_text(encoding="utf-8"))
    sentences, sentence, error = udpipe.Sentences(), udpipe.Sentence(), udpipe.ProcessingError()
    while reader.nextSentence(sentence, error):
        sentences.append(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        sys.exit(f"UDPipe cannot read {path}: {error.message}")
    return sentences


def train_udpipe(args, train: Path, work: Path) -> Path:
    """UDPipe 1's ``Trainer.train`` (Straka and Strakova 2017): the GRU tokenizer,
    MorphoDiTa's tagger and lemmatizer, Parsito's parser, with ``--udpipe-*`` options
    (UDPipe's defaults unless given) and no held-out data."""
    from ufal import udpipe

    model, log = work / "udpipe.model", work / "udpipe-train.log"
    error = udpipe.ProcessingError()
    with stderr_into(log):
        trained = udpipe.Trainer.train("morphodita_parsito", udpipe_sentences(train),
                                       udpipe.Sentences(), args.udpipe_tokenizer,
                                       args.udpipe_tagger, args.udpipe_parser, error)
    if error.occurred():
        sys.exit(f"UDPipe's training on {train} failed: {error.message} (messages: {log})")
    model.write_bytes(trained)
    return model


def load_udpipe(model: Path) -> Annotator:
    """UDPipe's pipeline: ``tokenize`` input for raw text, ``conllu`` for given words;
    the model's tagger and parser."""
    from ufal import udpipe

    loaded = udpipe.Model.load(str(model))
    if loaded is None:
        sys.exit(f"UDPipe cannot load {model}")

    def process(input_format: str, text: str) -> str:
        pipeline = udpipe.Pipeline(loaded, input_format, udpipe.Pipeline.DEFAULT,
                                   udpipe.Pipeline.DEFAULT, "conllu")
        error = udpipe.ProcessingError()
        out = pipeline.process(text, error)
        if error.occurred():
            sys.exit(f"UDPipe failed on its {input_format} input: {error.message}")
        return out

    return Annotator(from_text=lambda text: process("tokenize", text),
                     from_tokens=lambda text: process("conllu", text))


# spaCy

def language(name: str) -> str:
    """The language code of treebank ``name`` (``sv_talbanken``: ``sv``; the sample is
    English)."""
    return "en" if name == "sample" else name.split("_")[0]


def train_spacy(args, train: Path, work: Path) -> Path:
    """spaCy from scratch: ``spacy convert``, ``spacy init config``, ``spacy train`` in
    child processes, their messages in ``WORK/spacy-*.log``; returns ``model-last``."""
    spacy_dir = work / "spacy"
    spacy_dir.mkdir(parents=True, exist_ok=True)
    spacy = [sys.executable, "-m", "spacy"]
    timed_command([*spacy, "convert", str(train), str(spacy_dir), "--converter", "conllu",
                   "--n-sents", "10", "--file-type", "spacy"], work / "spacy-convert.log")
    corpus, config = spacy_dir / f"{train.stem}.spacy", spacy_dir / "config.cfg"
    timed_command([*spacy, "init", "config", str(config), "--lang", args.lang,
                   "--pipeline", SPACY_PIPELINE, "--optimize", "efficiency", "--force"],
                  work / "spacy-config.log")
    timed_command([*spacy, "train", str(config), "--output", str(spacy_dir / "out"),
                   "--paths.train", str(corpus), "--paths.dev", str(corpus),
                   "--training.max_epochs", str(args.spacy_max_epochs),
                   "--training.max_steps", str(args.spacy_max_steps),
                   "--training.patience", "0",
                   "--training.eval_frequency", str(args.spacy_max_steps),
                   "--system.seed", "0"], work / "spacy-train.log")
    return spacy_dir / "out" / "model-last"


def spacy_columns(tokens: list, repaired: list[int]) -> list[list[str]]:
    """LEMMA, UPOS, XPOS, FEATS, HEAD and DEPREL of spaCy's ``tokens`` (one sentence, no
    whitespace tokens): a head that is a whitespace token is replaced by its nearest
    ancestor among ``tokens``; the roots after the first are attached to it (with the
    label ``dep``), each counted in ``repaired[0]``."""
    index = {token.i: k for k, token in enumerate(tokens, 1)}
    heads = []
    for token in tokens:
        head = token.head
        while head.i not in index and head.head.i != head.i:
            head = head.head
        heads.append(0 if head.i == token.i else index.get(head.i, 0))
    roots = [k for k, head in enumerate(heads, 1) if head == 0]
    for k in roots[1:]:
        heads[k - 1] = roots[0]
    repaired[0] += len(roots) - 1
    return [[token.lemma_ or "_", token.pos_ or "_", token.tag_ or "_",
             str(token.morph) or "_", str(head),
             "root" if head == 0 else "dep" if token.dep_ in ("ROOT", "") else token.dep_]
            for token, head in zip(tokens, heads)]


def spacy_sentence(sentence, repaired: list[int]) -> str:
    """One CoNLL-U sentence of a spaCy sentence of raw text, whitespace tokens left out."""
    tokens = [token for token in sentence if not token.is_space]
    lines = [f"# text = {sentence.text.strip()}"]
    for k, (token, columns) in enumerate(zip(tokens, spacy_columns(tokens, repaired)), 1):
        lines.append("\t".join([str(k), token.text, *columns, "_",
                                "_" if token.whitespace_ else "SpaceAfter=No"]))
    return "\n".join(lines)


def word_lines(block: str) -> list[list[str]]:
    """The columns of the word lines (integer IDs) of a CoNLL-U sentence."""
    return [line.split("\t") for line in block.split("\n") if line.split("\t", 1)[0].isdigit()]


def with_columns(block: str, columns: list[list[str]]) -> str:
    """CoNLL-U sentence ``block`` with its word lines' LEMMA to DEPREL replaced by
    ``columns``, in order."""
    given, lines = iter(columns), []
    for line in block.split("\n"):
        cells = line.split("\t")
        lines.append("\t".join([*cells[:2], *next(given), *cells[8:]])
                     if cells[0].isdigit() else line)
    return "\n".join(lines)


def load_spacy(model: Path) -> Annotator:
    """spaCy's pipeline: raw text one paragraph per ``Doc``; given words one sentence per
    ``Doc``, its first word starting the sentence and no other."""
    import spacy
    from spacy.tokens import Doc

    nlp, repaired = spacy.load(model), [0]

    def from_text(text: str) -> str:
        paragraphs = [p.replace("\n", " ") for p in text.split("\n\n") if p.strip()]
        return "".join(spacy_sentence(sentence, repaired) + "\n\n"
                       for doc in nlp.pipe(paragraphs, n_process=1) for sentence in doc.sents
                       if any(not token.is_space for token in sentence))

    def from_tokens(text: str) -> str:
        sentences = [block for block in text.split("\n\n") if block.strip()]
        docs = []
        for block in sentences:
            words = word_lines(block)
            docs.append(Doc(nlp.vocab, words=[w[1] for w in words],
                            spaces=["SpaceAfter=No" not in w[9] for w in words],
                            sent_starts=[True] + [False] * (len(words) - 1)))
        return "".join(with_columns(block, spacy_columns(list(doc), repaired)) + "\n\n"
                       for block, doc in zip(sentences, nlp.pipe(docs, n_process=1)))

    return Annotator(from_text, from_tokens, lambda: repaired[0])


TRAIN = {"polyparse": train_polyparse, "udpipe": train_udpipe, "spacy": train_spacy}
LOAD = {"polyparse": load_polyparse, "udpipe": load_udpipe, "spacy": load_spacy}


# The data, the scores, the runs

def tokens_only(block: str) -> str:
    """CoNLL-U sentence ``block`` with LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL and DEPS
    blanked on its words and empty nodes: the words alone (and the multiword tokens,
    MISC and comments)."""
    lines = []
    for line in block.split("\n"):
        cells = line.split("\t")
        blank = cells[0][:1].isdigit() and "-" not in cells[0]
        lines.append("\t".join([*cells[:2], *["_"] * 7, cells[9]]) if blank else line)
    return "\n".join(lines)


def udeval_command() -> str | None:
    """The ``udeval`` command of this Python's environment, or on the PATH."""
    here = Path(sys.executable).with_name("udeval")
    return str(here) if here.exists() else shutil.which("udeval")


def udeval(command: str, gold: Path, system: Path) -> dict:
    """``udeval --counts --no-enhanced GOLD SYSTEM``: per metric of :data:`METRICS` its
    counts and F1 (%)."""
    done = subprocess.run([command, "--counts", "--no-enhanced", str(gold), str(system)],
                          capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"udeval {gold} {system} failed: {done.stderr.strip()[-2000:]}")
    rows = {cells[0].strip(): [c.strip() for c in cells[1:]]
            for cells in (line.split("|") for line in done.stdout.splitlines()[2:])}
    scores = {}
    for name, label in METRICS.items():
        correct, gold_n, system_n = (int(rows[label][i]) for i in range(3))
        scores[name] = {"correct": correct, "gold": gold_n, "system": system_n,
                        "f1": 200.0 * correct / (gold_n + system_n) if gold_n + system_n else 0.0}
    return scores


def timed(function: Callable[[str], str], text: str, out: Path) -> float:
    """Wall seconds of ``function(text)`` written into ``out``."""
    start = time.perf_counter()
    out.write_text(function(text), encoding="utf-8")
    return time.perf_counter() - start


def trained(system: str, args, train: Path, work: Path) -> tuple[Path, float]:
    """``system``'s model trained on ``train`` and the wall minutes it took (run in a
    process of its own, so that the trainings of ``--jobs`` run side by side); the model
    ``--model`` gives for it, trained before, and 0 minutes."""
    if system in args.models:
        return args.models[system], 0.0
    start = time.perf_counter()
    model = TRAIN[system](args, train, work)
    return model, (time.perf_counter() - start) / 60


def run_system(system: str, model: Path, train_min: float, name: str, held: Path,
               work: Path, args, udeval_: str) -> list[dict]:
    """``system``'s rows, its ``model`` loaded: for raw text and for gold tokens, every
    CoNLL 2018 metric, words per second, load seconds, training minutes."""
    start = time.perf_counter()
    annotator = LOAD[system](model)
    load_s = time.perf_counter() - start
    gold, sentences = blocks(held), list(read_conllu(held))
    words = sum(len(word_lines(block)) for block in gold)
    tokens = ["".join(tokens_only(block) + "\n\n" for block in some)
              for some in (gold, gold[:WARM_SENTENCES])]
    inputs = {"raw text": (annotator.from_text, raw_text(sentences),
                           raw_text(sentences[:WARM_SENTENCES])),
              "gold tokens": (annotator.from_tokens, *tokens)}
    rows = []
    for kind, (function, given, warm) in inputs.items():
        out = work / f"{system}-{kind.replace(' ', '-')}.conllu"
        if args.warm_up:
            function(warm)
        before = annotator.repaired()
        seconds = timed(function, given, out)
        scores = udeval(udeval_, held, out)
        rows.append({"treebank": name, "system": system, "input": kind,
                     **{metric: s["f1"] for metric, s in scores.items()},
                     "words_per_s": words / seconds, "parse_s": seconds, "load_s": load_s,
                     "train_min": train_min, "gold_words": words,
                     "roots_repaired": annotator.repaired() - before, "conll18": scores})
    return rows


def train_all(systems: list[str], args, train: Path, work: Path) -> dict:
    """Every system's (model, training minutes), ``--jobs`` trainings at a time, each in
    a child process (UDPipe trains in its own library, which would hold this process)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
        futures = {system: pool.submit(trained, system, args, train, work)
                   for system in systems}
        return {system: future.result() for system, future in futures.items()}


def installed(system: str) -> bool:
    """Whether the module ``system`` needs can be imported (polyparse always can)."""
    if system not in PACKAGES:
        return True
    try:
        return importlib.util.find_spec(PACKAGES[system]) is not None
    except ModuleNotFoundError:                       # ufal itself is missing
        return False


def chosen_systems(ap, asked: list[str] | None) -> list[str]:
    """The systems to run: those ``--systems`` names (default all), less the peers not
    installed, each said in one line; a usage error if the peers asked for by name are
    all missing."""
    missing = [s for s in (asked or SYSTEMS) if not installed(s)]
    wanted_peers = [s for s in (asked or ()) if s in PACKAGES]
    if wanted_peers and set(wanted_peers) <= set(missing):
        ap.error(f"--systems {' '.join(asked)}: none of the peers asked for is installed "
                 f"(pip install -e '.[peers]' installs {' and '.join(PACKAGES.values())})")
    for system in missing:
        print(f"peers: {PACKAGES[system]} is not installed (pip install -e '.[peers]'): "
              f"no {system} rows", file=sys.stderr)
    return [s for s in (asked or SYSTEMS) if s not in missing]


COLUMNS = [("treebank", "treebank"), ("system", "system"), ("input", "input"),
           *conll18_columns(), ("words_per_s", "words/s"), ("load_s", "load s"),
           ("train_min", "train min")]


def write(args, rows: list[dict], splits: dict) -> Path:
    budgets = {"polyparse": "its default epochs" if not args.epochs else f"{args.epochs} epochs",
               "udpipe": f"tokenizer `{args.udpipe_tokenizer or 'defaults'}`, tagger "
                         f"`{args.udpipe_tagger or 'defaults'}`, parser "
                         f"`{args.udpipe_parser or 'defaults'}`",
               "spacy": f"at most {args.spacy_max_epochs} epochs and {args.spacy_max_steps} "
                        "steps, `model-last`"}
    budgets.update({system: f"the model {path}, trained before on the same training split "
                            "(its train min: 0 here)" for system, path in args.models.items()})
    ran = {row["system"] for row in rows}
    budgets = "; ".join(f"{NAMES[system]} {how}" for system, how in budgets.items()
                        if system in ran)
    notes = ("Each system trained on the same file (" + "; ".join(
        f"{name}: {how}" for name, how in splits.items()) + f"), budgets: {budgets}. "
        "Held-out raw text rebuilt from `# text` (blank line between paragraphs, wrapped at "
        "80 characters); gold tokens: the held-out CoNLL-U with its annotation blanked. "
        "F1 (%) by UD's `udeval --counts --no-enhanced` (CoNLL 2018). *words/s*: gold words "
        "over the wall seconds of annotating and writing the CoNLL-U in one process and one "
        "thread, the model loaded (*load s*) and "
        + ("warmed up on 5 sentences first" if args.warm_up else "not warmed up")
        + f"; *train min*: wall minutes of training on {os.cpu_count()} cores, {args.jobs} "
        "training(s) at once, shared with other jobs (load averages above).")
    repaired = [r for r in rows if r["roots_repaired"]]
    if repaired:
        notes += (" Roots attached to their sentence's first root: " + ", ".join(
            f"{r['treebank']} {r['system']} {r['input']} {r['roots_repaired']}"
            for r in repaired) + ".")
    return write_table(args, args.out, "polyparse and its peers, same data (issue 43, item 1)",
                       rows, COLUMNS, notes, meta={"splits": splits})


SIZES = ("max_train", "max_dev", "epochs")
"""The options of :func:`size_arguments`."""


def size_arguments(ap) -> None:
    """``--max-train``, ``--max-dev`` and ``--epochs``: how much of the treebank polyparse
    trains on and annotates, and its epochs (also ``eval/stages.py``'s)."""
    ap.add_argument("--max-train", type=int, default=None, metavar="N",
                    help="train on the first N training sentences (default all)")
    ap.add_argument("--max-dev", type=int, default=None, metavar="N",
                    help="the first N held-out sentences (default all)")
    ap.add_argument("--epochs", type=int, default=None, metavar="N",
                    help="polyparse train --epochs N (default: polyparse's own)")
    ap.add_argument("--relabel", action="store_true",
                    help="polyparse train --relabel (default: as the language's recipe says)")


def work_arguments(ap, work: str, out: str) -> None:
    """``--work DIR`` (default ``work`` in the temporary directory), ``--out`` (default
    ``out``) and ``--no-warm-up`` (also ``eval/feature_space.py``'s)."""
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / work),
                    metavar="DIR", help="split treebanks, models, logs and outputs")
    ap.add_argument("--out", default=out, help="result stem under --results")
    warm_up_argument(ap)


def at_least_one(ap, args, options) -> None:
    """A usage error, before any work, for an option of ``options`` given below 1."""
    for option in options:
        value = getattr(args, option)
        if value is not None and value < 1:
            ap.error(f"--{option.replace('_', '-')} must be at least 1, not {value}")


def given_models(ap, given: list[str], treebanks: list[str], keys: Sequence[str] = SYSTEMS,
                 key: str = "SYSTEM") -> dict[str, Path]:
    """The models of ``--model KEY=PATH``, by key (a system of ``keys`` here, a size in
    ``eval/feature_space.py``); a usage error for a key not in ``keys``, a key named
    twice, a path that does not exist, or more than one treebank."""
    models = {}
    for item in given:
        name, _, path = item.partition("=")
        if name not in keys or not path:
            ap.error(f"--model {item}: {key}=PATH, {key} one of {', '.join(keys)}")
        if name in models:
            ap.error(f"--model {item}: a second model for {name}")
        if not Path(path).exists():
            ap.error(f"--model {item}: {path} does not exist")
        models[name] = Path(path)
    if models and len(treebanks) != 1:
        ap.error("--model: the models of one treebank, so --treebanks names one")
    return models


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebanks", nargs="+", default=list(TREEBANKS), metavar="NAME",
                    help="folders of --ud, or sample (default: %s)" % " ".join(TREEBANKS))
    ap.add_argument("--systems", nargs="+", choices=SYSTEMS, default=None,
                    help="the systems to train and run (default: polyparse and every "
                         "installed peer)")
    size_arguments(ap)
    ap.add_argument("--model", action="append", default=[], metavar="SYSTEM=PATH",
                    help="a model of SYSTEM already trained on the treebank's training split "
                         "(one treebank only), instead of training one; repeatable")
    ap.add_argument("--udpipe-tokenizer", default="", metavar="OPTS",
                    help="UDPipe's tokenizer options, e.g. 'epochs=10' (default: UDPipe's)")
    ap.add_argument("--udpipe-tagger", default="", metavar="OPTS",
                    help="UDPipe's tagger options, e.g. 'iterations=5' (default: UDPipe's)")
    ap.add_argument("--udpipe-parser", default="", metavar="OPTS",
                    help="UDPipe's parser options, e.g. 'iterations=5' (default: UDPipe's)")
    ap.add_argument("--spacy-max-epochs", type=int, default=30, metavar="N",
                    help="spacy train's training.max_epochs (default 30)")
    ap.add_argument("--spacy-max-steps", type=int, default=20000, metavar="N",
                    help="spacy train's training.max_steps (default 20000, spaCy's)")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="trainings at once, each in its own process (default 1); the "
                         "timed annotation runs after all of them, one system at a time")
    work_arguments(ap, "polyparse-peers", "peers")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, args.treebanks)
    args.models = given_models(ap, args.model, args.treebanks)
    at_least_one(ap, args, (*SIZES, "spacy_max_epochs", "spacy_max_steps", "jobs"))
    udeval_ = udeval_command()
    if udeval_ is None:
        ap.error("udeval not found: the scores are UD's own udeval "
                 "(pip install -e '.[test]' installs udtools)")
    systems = chosen_systems(ap, args.systems)
    rows, splits = [], {}
    for name in args.treebanks:
        work = Path(args.work) / name
        train, held, how = split(folder(args.ud, name), work, args.max_dev, args.max_train)
        splits[name] = how
        args.treebank, args.lang = name, language(name)
        training = [s for s in systems if s not in args.models]
        print(f"peers: {name}: training {', '.join(training) or 'none'}, {args.jobs} at a "
              f"time; models given: {', '.join(args.models) or 'none'}",
              file=sys.stderr, flush=True)
        models = train_all(systems, args, train, work)
        for system in systems:
            print(f"peers: {name}: {system} annotates (timed)", file=sys.stderr, flush=True)
            rows += run_system(system, *models[system], name, held, work, args, udeval_)
        table = write(args, rows, splits)
    print(table.read_text())
