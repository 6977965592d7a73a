"""``polyparse parse``: raw text or CoNLL-U parsed with a trained model and written as
CoNLL-U, with k-best trees, certificates, confidence and constraints on request."""

from __future__ import annotations

import contextlib
import logging
import sys

from polyparse.corpora.conllu_io import read_conllu, write_conllu
from polyparse.corpora.files import atomic_write

from ..checks import UsageError, at_least, check_files
from ..progress import Tally, tracked, visible_characters
from .common import (add_dask_flag, add_decoding_flags, add_input_flags,
                     check_decoder_options, check_dask, cluster, conllx_input, input_format,
                     load_parser, model_decoder, open_input, raw_text, sentence_total,
                     temperatures)

log = logging.getLogger("polyparse")


def add(sub) -> None:
    p = sub.add_parser("parse", help="parse raw text or CoNLL-U with a trained model",
                       description="Parse raw text (--text, or --format text): it is split "
                                   "into sentences and tokens, tagged, lemmatized and parsed, "
                                   "and written "
                                   "as CoNLL-U with # sent_id and # text. Or parse CoNLL-U: "
                                   "HEAD and DEPREL are predicted (LEMMA, UPOS, XPOS and FEATS "
                                   "too with --retag); every other column, comment, multiword-"
                                   "token line and empty node is written back unchanged. "
                                   "docs/options.md says more about each option.")
    p.add_argument("--model", required=True, metavar="M", help="model file (.npz)")
    add_input_flags(p)
    p.add_argument("--output", metavar="FILE", help="output (default: standard output)")
    p.add_argument("--retag", action="store_true",
                   help="CoNLL-U input: replace LEMMA, UPOS, XPOS and FEATS by the model's "
                        "(by default the given ones are kept)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="parse on N processes, with the same output (default %(default)s)")
    add_dask_flag(p, "parse", "the output is the same")
    p.add_argument("--kbest", type=int, default=None, metavar="K",
                   help="write each sentence's K best trees in order, each copy with its "
                        "'# kbest_rank' and '# kbest_score'")
    p.add_argument("--certify", action="store_true",
                   help="say in '# decoding = ...' how each tree was decoded (optimal, "
                        "rounded with its gap, time limit) and print the share optimal")
    p.add_argument("--confidence", action="store_true",
                   help="add HeadProb and DeprelProb to each word's MISC: the probabilities "
                        "of its head and of its label")
    p.add_argument("--no-ud-rules", action="store_true",
                   help="do not enforce the UD validator rules the model learned (by default "
                        "they are)")
    p.add_argument("--constraints", metavar="FILE",
                   help="a constraints file: lines 'forbid HEAD -> DEP' and 'forbid-label "
                        "LABEL [DEP]'")
    p.add_argument("--keep-given", action="store_true",
                   help="CoNLL-U input: keep the HEAD and DEPREL given ('_' where the parser "
                        "is to decide) and parse around them")
    add_decoding_flags(p)
    p.set_defaults(run=run)


def parser_for_parse(args, options: dict | None = None):
    """The :class:`Parser` ``polyparse parse`` decodes with for its parsed arguments
    ``args`` (:func:`~parser.cli.common.load_parser` with the decoder ``options`` of
    :func:`~parser.cli.common.model_decoder`, checked here unless given; the UD rules on
    unless ``--no-ud-rules``): also what eval/defaults.py times, so that its figures are
    the command's at its defaults."""
    if options is None:
        options = model_decoder(args)[2]
    parser = load_parser(args, options)
    parser.use_ud_rules = not args.no_ud_rules
    return parser


def run(args) -> None:
    at_least(1, jobs=args.jobs, kbest=args.kbest)
    if args.dask is not None and args.jobs > 1:
        raise UsageError("give either --dask or --jobs, not both")
    check_dask(args.dask)
    fmt = input_format(args)
    confidence = _confidence(args, fmt)
    if args.kbest is not None and (args.certify or args.confidence):
        raise UsageError("--kbest cannot go with --certify or --confidence: the k best "
                         "trees carry their rank and score, not a certificate or "
                         "confidence")
    _check_constraint_options(args, fmt)
    check_decoder_options(args)
    check_files({"--model": args.model, "--input": args.input,
                 "--constraints": args.constraints}, {"--output": args.output})
    settings, _, options = model_decoder(args)
    if confidence is not None and settings.config.order != "1" and not settings.pruned:
        raise UsageError(f"--confidence: {args.model} is a higher-order model without a "
                         "first-order pruner, whose marginals give the head probabilities")
    constraints = _constraints(args)
    with cluster(args.dask) as client:
        _parse_with(args, fmt, options, dict(kbest=args.kbest, certify=args.certify,
                                             confidence=confidence, constraints=constraints),
                    client)


def _parse_with(args, fmt: str, options: dict, annotate: dict, client) -> None:
    """``polyparse parse`` once the options and files are checked (on ``client``'s
    workers if it is not None)."""
    from ..constraints import ConstraintError
    from ..pipeline import MissingComponentError

    parser = parser_for_parse(args, options)
    name = "--text" if args.text is not None else args.input or "<stdin>"
    tally = Tally("parsed")
    leading = None
    try:
        if fmt == "text":
            parsed = _parsed_text(args, parser, name, annotate, client, tally)
        else:
            if args.retag:
                parser.require("tagger", "tag words (--retag)")
            leading = _LeadingComments(open_input(args.input))
            sentences = read_conllu(leading, fmt=fmt)
            if not args.retag:
                sentences = _tagged(sentences, name, parser.tagger is not None)
            parsed = tracked(parser.parse(sentences, retag=args.retag,
                                          jobs=args.jobs, client=client, **annotate),
                             tally, counts=_output_counts,
                             total=sentence_total(args.input))
        with (atomic_write(args.output) if args.output
              else contextlib.nullcontext(sys.stdout)) as out:
            if write_conllu(parsed, out) == 0:
                _warn_nothing_parsed(name, leading, out)
    except (MissingComponentError, ConstraintError) as error:
        raise UsageError(str(error)) from None
    finally:
        if leading is not None:
            leading.close()
    _report_parse(parser, tally, args.certify)


def _parsed_text(args, parser, name: str, annotate: dict, client, tally: Tally):
    """The sentences of ``parse``'s raw text, parsed lazily, with a progress bar in
    characters of the text."""
    text = raw_text(args, parser, name)
    parsed = parser.stream_text(text, jobs=args.jobs, client=client,
                                max_words=args.max_words or None, **annotate)
    return tracked(parsed, tally, counts=_output_counts, total=visible_characters(text),
                   unit="characters",
                   size=lambda s: 0 if _later_kbest_copy(s) else visible_characters(s.text))


def _tagged(sentences, name: str, can_tag: bool):
    """``sentences``, each checked to have UPOS tags (the parser's features read them):
    a sentence without any (``_`` on every word, as in text tokenized elsewhere) is a
    :class:`UsageError` naming its line, before it is parsed into a wrong tree."""
    for sentence in sentences:
        if len(sentence) and all(tag == "_" for tag in sentence.upos[1:]):
            remedy = ("give --retag to tag it with the model's tagger" if can_tag else
                      "the model has no tagger (trained on gold tags): give UPOS and XPOS")
            raise UsageError(f"{name}:{sentence.first_line}: the sentence has no UPOS "
                             f"('_' on every word); {remedy}")
        yield sentence


def _output_counts(sentence) -> tuple[int, int]:
    """A parsed sentence as the sentences and words it adds to the tally: none for the
    second and later copies of ``--kbest``."""
    return (0, 0) if _later_kbest_copy(sentence) else (1, len(sentence))


def _later_kbest_copy(sentence) -> bool:
    for line in sentence.lines:
        if not line.startswith("#"):
            return False
        if line.startswith("# kbest_rank = ") and line != "# kbest_rank = 1":
            return True
    return False


def _warn_nothing_parsed(name: str, leading, out) -> None:
    """The warning of an input without sentences; a CoNLL-U input's comments are
    written back as they are."""
    if leading is None:
        log.warning("polyparse: warning: %s: no sentences to parse (the text has no words)",
                    name)
        return
    log.warning("polyparse: warning: %s: no sentences to parse (the input is empty or has "
                "only comments; they are written back as they are)", name)
    out.write(leading.text())


def _report_parse(parser, tally: Tally, certify: bool) -> None:
    """What ``parse`` says at its end: the constraints and fallbacks it met, then one
    summary line (sentences, words, seconds, words/s and the certificates' summary,
    printed even with -q when ``certify`` asked for it)."""
    counts = parser.constrained
    if counts["ilp_for_decoder"]:
        log.info("%d constrained sentence(s) decoded by the ILP (decoder %r cannot honor "
                 "constraints)", counts["ilp_for_decoder"], parser.decoder.name)
    if counts["lp_to_ilp"]:
        log.info("%d sentence(s): the LP's rounded tree broke a constraint; the ILP decided",
                 counts["lp_to_ilp"])
    if counts["rules_dropped"]:
        log.warning("%d sentence(s) admitted no tree under the UD rules over the candidate "
                    "arcs and were parsed without them", counts["rules_dropped"])
    if parser.fallbacks:
        unconstrained = parser.decodings.unconstrained
        log.warning("%d sentence(s) reached the time limit (%s s a sentence) and kept the "
                    "best tree found by then%s", parser.fallbacks, parser.decoder.time_limit,
                    f", {unconstrained} of them without the UD rules or constraints"
                    if unconstrained else "")
    if parser.decodings.kinds["node-limit"]:
        log.info("%d sentence(s): the search under the UD rules or constraints stopped at "
                 "its node limit and kept a tree that satisfies them",
                 parser.decodings.kinds["node-limit"])
    decoded = sum(parser.decodings.kinds.values())
    if certify:
        log.info("%s", tally.line())
        print(parser.decodings.summary(), file=sys.stderr)
    elif decoded:
        log.info("%s; %s", tally.line(), parser.decodings.summary())
    else:
        log.info("%s", tally.line())


def _check_constraint_options(args, fmt: str) -> None:
    """Refuse ``--keep-given`` on raw text."""
    if args.keep_given and fmt == "text":
        raise UsageError("--keep-given needs CoNLL-U input (raw text gives no HEAD or DEPREL)")


def _constraints(args):
    """The :class:`~parser.constraints.Constraints` of ``--constraints`` and
    ``--keep-given`` (None without them); a :class:`UsageError` for a bad file."""
    from ..constraints import Constraints, ConstraintsFileError

    if args.constraints is None and not args.keep_given:
        return None
    try:
        if args.constraints is None:
            return Constraints(keep_given=True)
        return Constraints.read(args.constraints, keep_given=args.keep_given)
    except ConstraintsFileError as error:
        raise UsageError(str(error)) from None


def _confidence(args, fmt: str):
    """The :class:`~learning.confidence.Temperatures` of ``--confidence`` (None without
    it), checked before any work: one or two positive temperatures, and an output with
    a MISC column (CoNLL-X has none)."""
    if args.confidence and conllx_input(args, fmt):
        raise UsageError("--confidence writes to the MISC column, which CoNLL-X does not "
                         "have; give CoNLL-U or raw text")
    return temperatures(args, args.confidence)


BOM_BYTES = "\ufeff".encode("utf-8")


class _LeadingComments:
    """An input's binary lines, passed on to :func:`read_conllu`, keeping the comments and
    blank lines before its first sentence: all of the input when it has no sentence, to
    be written back as the comments of parsed sentences are."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.name = getattr(stream, "name", "<stdin>")
        self.lines: list[bytes] | None = []

    def __iter__(self):
        for line in self.stream:
            if self.lines is not None:
                body = line.removeprefix(BOM_BYTES).strip()
                if body and not body.startswith(b"#"):
                    self.lines = None           # a sentence: nothing to keep
                else:
                    self.lines.append(line)
            yield line

    def text(self) -> str:
        """The lines kept (valid UTF-8, as :func:`read_conllu` checked them)."""
        return b"".join(self.lines or []).decode("utf-8")

    def close(self) -> None:
        if self.stream is not sys.stdin.buffer:
            self.stream.close()


