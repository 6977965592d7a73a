"""Issue 43 item 3: what each stage's errors cost the parse, from gold tokens with one
column of polyparse's own annotation at a time replaced by the gold one.

One command::

    python -m eval run stages [--treebanks en_ewt] [--model PATH] [--max-train N]
                              [--max-dev N] [--epochs N] [--work DIR] [--out stages]

For each treebank the training and held-out files and the polyparse model are those of
``eval/peers.py``: its split (:func:`eval.defaults.split`) and ``polyparse train --lang
LANG`` (:func:`eval.peers.train_polyparse`), or the model ``--model`` gives (one
treebank). The held-out sentences are annotated

* from raw text, as ``polyparse parse --format text`` (``Parser.stream_text``);
* from gold tokens, every column predicted, as ``polyparse parse --retag``;
* when the model has a second-pass tagger (:meth:`parser.pipeline.Parser.retag_parsed`),
  both again with the tags of the first pass (the same trees): what the second pass
  gives; when it has a second-stage labeler (:mod:`learning.relabeler`), both again
  without it (the first stage's labels): what the second stage gives;
* from gold tokens with the predicted columns of the row before, one of them (``UPOS``,
  ``XPOS``, ``FEATS``, ``LEMMA``) or all four replaced by the gold ones, HEAD and DEPREL
  parsed again from those (as ``polyparse parse`` keeps the tags a CoNLL-U file gives);
  then the UPOS errors of one kind only corrected (:data:`GIVEN`): between PROPN and
  NOUN, among the open classes, among the function words.

Every output is scored by UD's ``udeval`` (:func:`eval.peers.udeval`). A gold column
counts twice in MLAS and BLEX, which compare it themselves, and once more through the
parse it changes: UAS, LAS and CLAS move only through the parse, so their change from
the gold-token row is what the stage's errors cost the parser (error propagation, the
data issue 43 asks for before joint decisions). Writes ``OUT.{md,json}`` under
``--results``; models, inputs and outputs in ``--work``.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

from ._common import (arguments, conll18_columns, folder, require_treebanks,
                      warm_up_argument, write_table)
from .defaults import blocks, split
from .peers import (SIZES, at_least_one, language, size_arguments, train_polyparse,
                    udeval, udeval_command, with_columns, word_lines)

from polyparse.corpora.conllu_io import read_conllu, write_conllu
from polyparse.corpora.plain_text import raw_text
from polyparse.parser import cli
from polyparse.parser.evaluate import METRICS

OPEN = frozenset({"NOUN", "VERB", "ADJ", "ADV", "AUX"})
FUNCTION = frozenset({"ADP", "SCONJ", "ADV", "PART", "PRON", "DET", "CCONJ"})
GIVEN = {"UPOS": ((3,), None), "XPOS": ((4,), None), "FEATS": ((5,), None),
         "LEMMA": ((2,), None), "UPOS+XPOS+FEATS+LEMMA": ((2, 3, 4, 5), None),
         "UPOS where PROPN and NOUN were confused": ((3,), frozenset({"PROPN", "NOUN"})),
         "UPOS where open classes were confused": ((3,), OPEN),
         "UPOS where function words were confused": ((3,), FUNCTION)}
"""Per row, the gold columns (0-based CoNLL-U fields) given to the parser, and the UPOS
set within which a tagging error is corrected (None: every word): with a set, only the
UPOS of the words whose predicted and gold UPOS are two of its tags (ADV is in both sets:
it is confused with adjectives and with adpositions)."""

FIRST_PASS = ", first-pass tags"
"""The rows of a model with a second-pass tagger annotated without it (the same trees,
the tags before parsing): what the second pass gives."""

FIRST_STAGE = ", first-stage labels"
"""The rows of a model with a second-stage labeler annotated without it: what it gives."""

SHOWN = ("uas", "las", "clas", "mlas", "blex")
"""The metrics whose change from the gold-token row the table shows."""

SMOKE = ["--treebanks", "sample", "--max-train", "30", "--max-dev", "10", "--epochs", "1",
         "--relabel", "--no-warm-up", "--work", "{results}/work"]
"""The smoke run: polyparse trained for one epoch on 30 sample sentences (with a
second-stage labeler), 10 held out."""


def given_gold(predicted: list[str], gold: list[str], fields: tuple[int, ...],
               among: frozenset[str] | None = None) -> str:
    """CoNLL-U of the ``predicted`` sentences with ``fields`` of every word taken from
    ``gold`` (the same words), or with ``among`` of the words whose predicted and gold
    UPOS are both in ``among``; HEAD, DEPREL and DEPS blanked."""
    out = []
    for system, truth in zip(predicted, gold):
        columns = []
        for ours, theirs in zip(word_lines(system), word_lines(truth)):
            given = among is None or {ours[3], theirs[3]} <= among
            cells = [theirs[i] if given and i in fields else ours[i] for i in range(2, 6)]
            columns.append([*cells, "_", "_"])
        out.append(with_columns(system, columns) + "\n\n")
    return "".join(out)


def annotate(args, model: Path, held: Path, work: Path, name: str, udeval_: str) -> list[dict]:
    """The rows of one treebank: raw text, gold tokens, then each row of :data:`GIVEN`."""
    parser = cli.parser_for_parse(cli.build_parser().parse_args(["parse", "--model",
                                                                 str(model)]))
    if args.warm_up:
        parser.warm_up()
    gold = blocks(held)

    def parsed(sentences, path: Path) -> Path:
        write_conllu(sentences, path)
        return path

    def both(suffix: str) -> dict[str, Path]:
        return {"raw text" + suffix: parsed(
                    parser.stream_text(raw_text(list(read_conllu(held)))),
                    work / f"stages-raw-text{suffix.replace(' ', '-')}.conllu"),
                "gold tokens" + suffix: parsed(
                    parser.parse(read_conllu(held), retag=True),
                    work / f"stages-gold-tokens{suffix.replace(' ', '-')}.conllu")}

    runs = both("")
    predicted = blocks(runs["gold tokens"])
    if parser.retagger is not None:          # the same trees, the first pass's tags
        parser.retagger, second = None, parser.retagger
        runs.update(both(FIRST_PASS))
        parser.retagger = second
    if parser.relabeler is not None:         # the first stage's labels
        parser.relabeler, second = None, parser.relabeler
        runs.update(both(FIRST_STAGE))
        parser.relabeler = second
    for k, (given, (fields, among)) in enumerate(GIVEN.items()):
        text = given_gold(predicted, gold, fields, among)
        runs[f"gold tokens, gold {given}"] = parsed(
            parser.parse(read_conllu(io.StringIO(text))), work / f"stages-gold-{k}.conllu")
    rows = []
    for kind, path in runs.items():
        scores = udeval(udeval_, held, path)
        rows.append({"treebank": name, "input": kind,
                     **{metric: s["f1"] for metric, s in scores.items()}, "conll18": scores})
    base = rows[1]
    for row in rows[2:]:
        if not row["input"].startswith("gold tokens,"):
            continue
        for metric in SHOWN:
            row[f"d_{metric}"] = row[metric] - base[metric]
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebanks", nargs="+", default=["en_ewt"], metavar="NAME",
                    help="folders of --ud, or sample (default: en_ewt)")
    ap.add_argument("--model", default=None, metavar="PATH",
                    help="a polyparse model already trained on the treebank's training "
                         "split (one treebank only), instead of training one")
    size_arguments(ap)
    warm_up_argument(ap)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "polyparse-stages"),
                    metavar="DIR", help="split treebanks, models, inputs and outputs")
    ap.add_argument("--out", default="stages", help="result stem under --results")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, args.treebanks)
    at_least_one(ap, args, SIZES)
    if args.model is not None and (len(args.treebanks) != 1 or not Path(args.model).exists()):
        ap.error("--model: an existing model file of the one treebank --treebanks names")
    udeval_ = udeval_command()
    if udeval_ is None:
        ap.error("udeval not found: the scores are UD's own udeval "
                 "(pip install -e '.[test]' installs udtools)")
    rows = []
    for name in args.treebanks:
        work = Path(args.work) / name
        train, held, how = split(folder(args.ud, name), work, args.max_dev, args.max_train)
        args.treebank, args.lang = name, language(name)
        model = Path(args.model) if args.model else train_polyparse(args, train, work)
        print(f"stages: {name}: annotating {held} ({how}) with {model}", file=sys.stderr,
              flush=True)
        rows += annotate(args, model, held, work, name, udeval_)
        notes = ("Model: " + (f"`{args.model}`" if args.model else
                              "`polyparse train --train TRAIN --lang LANG`") + "; held out: "
                 + how + ". F1 (%) by UD's `udeval --counts --no-enhanced`; *d X*: X minus "
                 "X from gold tokens with every column predicted. In the *gold* rows the "
                 "given columns are gold and HEAD and DEPREL are parsed from them; the "
                 "*first-pass tags* rows have the trees of the rows above them and the "
                 "tags from before parsing, without the second pass; the *first-stage "
                 "labels* rows are parsed without the second-stage labeler.")
        table = write_table(
            args, args.out, "What each stage's errors cost the parse (issue 43, item 3)",
            rows, [("treebank", "treebank"), ("input", "input"), *conll18_columns(),
                   *[(f"d_{m}", f"d {METRICS[m]}") for m in SHOWN]],
            notes)
    print(table.read_text())
