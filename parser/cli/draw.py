"""``polyparse draw``: the trees of a CoNLL-U file, or of raw text or CoNLL-U parsed by a
model (with its LP relaxation, k best trees or confidence), as SVG files or one HTML
page."""

from __future__ import annotations

import logging
from pathlib import Path

from polyparse.corpora.conllu_io import read_conllu, read_treebank
from polyparse.corpora.errors import CorpusError
from polyparse.corpora.files import atomic_directory, atomic_write

from ..checks import UsageError, at_least, check_files
from ..progress import Tally, tracked, visible_characters
from .common import (add_decoding_flags, add_input_flags, add_lp_max_words_flag,
                     check_decoder_options, decoder_options_given, input_format, load_parser,
                     lp_max_words, model_decoder, open_input, raw_text, sentence_total,
                     temperatures)

log = logging.getLogger("polyparse")

SVG_NAMES = r"\d{4,}\.svg"
"""The files ``draw --svg-dir`` writes: ``0001.svg``, ``0002.svg``, ..."""


def add(sub) -> None:
    p = sub.add_parser(
        "draw", help="draw trees (and LP relaxations) as SVG or HTML",
        description="Draw the trees of a CoNLL-U file, or of raw text or CoNLL-U parsed "
                    "with --model: the words with their UPOS under them, the arcs above "
                    "with their labels (non-projective ones in purple), multiword tokens "
                    "over their words. One self-contained SVG file per sentence "
                    "(--svg-dir) or one HTML page (--html), where long sentences scroll "
                    "sideways. With --model: --lp, --kbest, --confidence. --gold marks the "
                    "heads and labels that differ from a gold file in red.")
    p.add_argument("--model", metavar="M", help="parse the input with this model (.npz); "
                   "without it, the trees the CoNLL-U input has are drawn")
    add_input_flags(p)
    output = p.add_mutually_exclusive_group(required=True)
    output.add_argument("--html", metavar="OUT.html", help="one HTML page of all sentences")
    output.add_argument("--svg-dir", metavar="DIR", help="one SVG file per sentence, "
                        "DIR/0001.svg, ...; DIR must be new, empty or hold only such files")
    p.add_argument("--lp", action="store_true",
                   help="also draw the LP relaxation: its arcs by value, the tree it rounds "
                        "to, its certificate and gap (needs --model)")
    add_lp_max_words_flag(p)
    p.add_argument("--kbest", type=int, default=None, metavar="K",
                   help="draw the K best trees side by side, where each differs from the "
                        "first highlighted (needs --model)")
    p.add_argument("--confidence", action="store_true",
                   help="colour arcs and labels by their probability, red (0) to green (1) "
                        "(needs --model)")
    p.add_argument("--gold", metavar="G", help="a gold treebank of the same sentences: heads "
                   "and labels that differ from it are drawn in red")
    add_decoding_flags(p)
    p.set_defaults(run=run)


def run(args) -> None:
    from ..drawing import figure_html, figure_svg, page_end, page_start
    from ..pipeline import MissingComponentError
    from ..views import Views

    at_least(1, kbest=args.kbest)
    fmt = input_format(args)
    views = Views(lp=args.lp, kbest=args.kbest,
                  confidence=temperatures(args, args.confidence),
                  lp_max_words=lp_max_words(args))
    if args.model is None:
        needs = [flag for flag, given in (("--lp", args.lp), ("--kbest", args.kbest),
                                          ("--confidence", args.confidence),
                                          ("--decoder", args.decoder),
                                          ("decoder options", decoder_options_given(args)),
                                          ("raw text", fmt == "text")) if given]
        if needs:
            raise UsageError(f"{', '.join(needs)}: needs a model to parse with (--model); "
                             "without one, draw draws the trees a CoNLL-U input has")
    if args.kbest is not None and args.confidence:
        raise UsageError("--kbest cannot go with --confidence: k-best trees carry no "
                         "confidence; ask for one or the other")
    check_decoder_options(args)
    check_files({"--model": args.model, "--input": args.input, "--gold": args.gold},
                {"--html": args.html, "--svg-dir": args.svg_dir},
                folders={"--svg-dir": SVG_NAMES})
    options = model_decoder(args)[2] if args.model is not None else {}
    gold = read_treebank(args.gold) if args.gold else None
    parser = None
    if args.model is not None:
        parser = load_parser(args, options)
        try:
            views.check(parser)
        except ValueError as error:
            raise UsageError(f"{args.model}: {error}") from None
    name = "--text" if args.text is not None else args.input or "<stdin>"
    try:
        figures = _figures(parser, _draw_input(args, fmt, parser, name), views, gold,
                           args.gold, name, second_pass=fmt == "text")
        count = 0
        if args.html:
            with atomic_write(args.html) as out:
                out.write(page_start(f"polyparse draw: {Path(name).name}"))
                for count, figure in enumerate(figures, 1):
                    out.write(figure_html(figure))
                out.write(page_end())
        else:
            with atomic_directory(args.svg_dir) as folder:
                for count, figure in enumerate(figures, 1):
                    (folder / f"{count:04d}.svg").write_text(figure_svg(figure),
                                                            encoding="utf-8")
    except MissingComponentError as error:
        raise UsageError(str(error)) from None
    if count == 0:
        log.warning("polyparse: warning: %s: no sentences to draw", name)
    log.info("drew %d sentence%s to %s", count, "s" * (count != 1), args.html or args.svg_dir)


def _draw_input(args, fmt: str, parser, name: str):
    """The sentences ``draw`` reads: raw text tokenized and tagged by ``parser``, or
    CoNLL-U as it is (with progress on standard error)."""
    if fmt == "text":
        text = raw_text(args, parser, name)
        return tracked(parser.tag_text(text, max_words=args.max_words or None),
                       Tally("drew"), total=visible_characters(text), unit="characters",
                       size=lambda s: visible_characters(s.text))
    return tracked(read_conllu(open_input(args.input), fmt=fmt), Tally("drew"),
                   total=sentence_total(args.input))


def _figures(parser, sentences, views, gold, gold_name: str | None, name: str, *,
             second_pass: bool = False):
    """The figure of each sentence: parsed by ``parser`` and drawn as ``views`` ask
    (tagged again by its second pass if ``second_pass``: raw text), or its own tree (no
    parser); marked against the sentence of ``gold`` in the same place, which must have
    the same words (a located error otherwise)."""
    from ..views import check_gold, given_figure, parsed_figure

    golds = iter(gold) if gold is not None else None
    for sentence in sentences:
        gold_sentence = None
        if golds is not None:
            gold_sentence = next(golds, None)
            if gold_sentence is None:
                raise CorpusError(gold_name, None, f"has fewer sentences than {name}")
            check_gold(sentence, gold_sentence)
        if parser is None:
            yield given_figure(sentence, gold_sentence)
        else:
            yield parsed_figure(parser, sentence, views, gold_sentence,
                                second_pass=second_pass).figure
    if golds is not None and next(golds, None) is not None:
        raise CorpusError(gold_name, None, f"has more sentences than {name}")

