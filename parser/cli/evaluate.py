"""``polyparse eval``: the CoNLL 2018 scores of a parse, or of a model's parse of the
gold file's own text, tokens or tags, against a gold treebank."""

from __future__ import annotations

import json
import logging

from polyparse.corpora.conllu_io import read_conllu

from ..checks import ModelSettings, UsageError, at_least, check_files
from ..honest_eval import SOURCES, default_source, missing_components, parsed, system_input
from ..progress import Tally, tracked, visible_characters

log = logging.getLogger("polyparse")

def add(sub) -> None:
    p = sub.add_parser(
        "eval", help="scores of a parse against gold",
        description="Score a parse (--pred) against a gold treebank, or a model (--model), "
                    "which parses the gold file's own text, tokens or tags (--from) to be "
                    "scored. Every metric of the CoNLL 2018 shared-task script "
                    "(conll18_ud_eval.py, udeval of UD's tools), with the same values: "
                    "tokens, sentences and words F1, then over the words aligned by "
                    "character offsets UPOS, XPOS, UFeats (universal features), AllTags "
                    "(UPOS+XPOS+UFeats), Lemmas, UAS, LAS (universal part of the label), "
                    "and over content words CLAS, MLAS (+ UPOS, UFeats and function-word "
                    "children) and BLEX (+ lemma). The "
                    "predicted file may be tokenized differently from the gold one (both "
                    "must spell the same text). When the tokenization is identical, also "
                    "UAS, LAS and label accuracy over all syntactic words (multiword-token "
                    "ranges and empty nodes excluded) and without punctuation (UPOS PUNCT).",
        epilog="Columns: precision and recall are the correct words out of the system's and "
               "the gold words, F1 their harmonic mean, 'aligned acc' the correct words out "
               "of the aligned ones. Identical tokenization: LAS-full is LAS with the full "
               "labels, subtypes included (nmod:poss is then wrong for nmod), where LAS, as "
               "in CoNLL 2018, compares the universal part only; 'label' is the share of "
               "words with the right universal label, whatever their head.")
    p.add_argument("--gold", required=True, metavar="G", help="gold treebank")
    system = p.add_mutually_exclusive_group(required=True)
    system.add_argument("--pred", metavar="P", help="predicted treebank to score")
    system.add_argument("--model", metavar="M",
                        help="score this model (.npz): it parses the gold file's own text, "
                             "tokens or tags (--from) and its parse is scored")
    p.add_argument("--from", dest="source", choices=list(SOURCES), default=None,
                   help="what --model parses (default: the most honest the model supports; "
                        "the output says which)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="with --model, parse on N processes (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=run)


def run(args) -> None:
    if args.model is None and (args.source is not None or args.jobs != 1):
        raise UsageError("--from and --jobs are for --model (eval --pred scores a parse "
                         "already made)")
    at_least(1, jobs=args.jobs)
    check_files({"--gold": args.gold, "--pred": args.pred, "--model": args.model}, {})
    if args.model is None:
        gold, pred = list(read_conllu(args.gold)), list(read_conllu(args.pred))
        _print_scores(_scores(gold, pred, args.pred, args.gold), args.json)
        return
    from ..pipeline import Parser

    settings = ModelSettings.read(args.model)
    gold = list(read_conllu(args.gold))
    source = _eval_source(args, settings, gold)
    score_parser(Parser.load(args.model), gold, args.gold, source, jobs=args.jobs,
                 as_json=args.json)


def score_parser(parser, gold: list, gold_name: str, source: str, *, jobs: int = 1,
                 as_json: bool = False) -> None:
    """Print the CoNLL 2018 scores (JSON or tables) of ``parser``'s parse of the gold
    sentences' own text, tokens or tags (``source``): ``eval --model``, and ``train
    --treebank`` on its dev split."""
    pred = _parse_gold(parser, source, gold, jobs)
    scores = _scores(gold, pred, f"the parse of {gold_name}", gold_name)
    if as_json:
        _print_scores({"from": source, **scores}, True)
        return
    print(f"from {source}: {SOURCES[source]}\n")
    _print_scores(scores, False)


def _eval_source(args, settings: ModelSettings, gold) -> str:
    """What ``eval --model`` parses: ``--from``, checked against the model's components,
    or the most honest source the model supports."""
    if args.source is None:
        return default_source(settings.components, gold)
    missing = missing_components(args.source, settings.components)
    if missing:
        raise UsageError(f"--from {args.source}: {args.model} has no {' and no '.join(missing)}"
                         f"; use --from {default_source(settings.components, gold)}")
    return args.source


def _parse_gold(parser, source: str, gold, jobs: int) -> list:
    """The parser's parse of the gold file's text, tokens or tags (with progress and a
    summary line on standard error)."""
    given = system_input(gold, source)
    tally = Tally("parsed")
    if source == "text":
        stream = tracked(parsed(parser, source, given, jobs=jobs), tally,
                         total=visible_characters(given), unit="characters",
                         size=lambda s: visible_characters(s.text))
    else:
        stream = tracked(parsed(parser, source, given, jobs=jobs), tally,
                         total=len(given))
    pred = list(stream)
    log.info("%s", tally.line())
    return pred


def _scores(gold, pred, pred_name: str, gold_name: str) -> dict:
    """The CoNLL 2018 scores of ``pred`` against ``gold`` (words aligned by their
    characters), and the attachment scores over all words when they have the same
    tokenization."""
    from ..evaluate import attachment_scores, conll18_scores, same_tokenization

    try:
        aligned = conll18_scores(gold, pred).to_json()
    except ValueError as error:           # e.g. a token without a non-space character
        raise UsageError(f"cannot align {pred_name} with {gold_name}: {error}") from None
    identical = same_tokenization(gold, pred)
    scores = {"identical_tokenization": identical, "conll18": aligned}
    if identical:
        scores.update(attachment_scores(gold, pred).to_json())
    return scores


def _print_scores(scores: dict, as_json: bool) -> None:
    """:func:`_scores` as JSON or as tables."""
    from ..evaluate import METRICS

    if as_json:
        print(json.dumps(scores, indent=2))
        return
    aligned, identical = scores["conll18"], scores["identical_tokenization"]
    print(f"{'metric':10} {'precision':>9} {'recall':>7} {'F1':>7} {'aligned acc':>11}")
    for name, label in METRICS.items():
        s = aligned[name]
        accuracy = "" if s["aligned_accuracy"] is None else f"{s['aligned_accuracy']:11.2f}"
        print(f"{label:10} {s['precision']:9.2f} {s['recall']:7.2f} {s['f1']:7.2f} "
              f"{accuracy}".rstrip())
    if identical:
        print()
        print(f"{'':12} {'words':>7} {'UAS':>7} {'LAS':>7} {'LAS-full':>8} {'label':>7}")
        for name in ("all_words", "no_punct"):
            s = scores[name]
            print(f"{name.replace('_', ' '):12} {s['words']:7d} {s['uas']:7.2f} "
                  f"{s['las']:7.2f} {s['las_full']:8.2f} {s['label_acc']:7.2f}")

