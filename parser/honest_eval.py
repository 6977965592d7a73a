"""An honest score in one command: ``polyparse eval --model M --gold G``.

The model parses what a user would give it, taken from the gold file itself, and the
result is scored against the gold file as the CoNLL 2018 shared task scores a system
(Zeman et al., 2018: words aligned by their characters, :func:`~parser.evaluate.
conll18_scores`). What it is given is the :data:`SOURCES` ``--from``:

``text``
    the gold file's raw text (its ``# text`` comments, joined as UD's
    ``conllu_to_text.pl`` joins them, :func:`~corpora.plain_text.raw_text`), cut into
    sentences and words by the model's tokenizer, tagged and parsed: every step the
    model's own, as the shared task ran;
``tokens``
    the gold words alone (LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL and DEPS blanked), tagged
    by the model's tagger and parsed;
``tags``
    the gold words with their gold tags and lemmas, parsed: what ``polyparse parse``
    does with CoNLL-U by default, and the score a paper on gold tags reports.

Parsing the gold file with ``parse`` and scoring it with ``eval --pred`` keeps the gold
tags, and scores a model with a tagger higher than its users will ever see it
(:func:`default_source` picks the most honest source the model supports).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.sentence import Sentence
from polyparse.corpora.plain_text import raw_text

SOURCES = {
    "text": "the gold file's # text, through the model's tokenizer, tagger and parser",
    "tokens": "the gold tokenization, through the model's tagger and parser",
    "tags": "the gold tokenization, tags and lemmas, through the model's parser",
}
"""What the model is given to parse, by the name ``--from`` gives it, described."""

NEEDS = {"text": ("tokenizer", "tagger"), "tokens": ("tagger",), "tags": ()}
"""The components of a model that each source needs."""


def default_source(components: frozenset[str], gold: Sequence[Sentence]) -> str:
    """The most honest source a model with ``components`` can parse: ``text`` when it
    has a tokenizer (and a tagger) and every gold sentence has its ``# text``, else
    ``tokens`` when it has a tagger, else ``tags``."""
    if set(NEEDS["text"]) <= components and all(s.text is not None for s in gold):
        return "text"
    return "tokens" if set(NEEDS["tokens"]) <= components else "tags"


def missing_components(source: str, components: frozenset[str]) -> list[str]:
    """The components ``source`` needs that the model lacks."""
    return [name for name in NEEDS[source] if name not in components]


def system_input(gold: Sequence[Sentence], source: str) -> str | list[Sentence]:
    """What the model is given: raw text for ``text``, sentences otherwise."""
    if source == "text":
        return raw_text(gold)
    if source == "tokens":
        return tokens_only(gold)
    return list(gold)


def parsed(parser, source: str, given: str | list[Sentence], *, jobs: int = 1
           ) -> Iterator[Sentence]:
    """The model's parse, lazily, of what :func:`system_input` gives for ``source``:
    raw text tokenized, tagged and parsed; blanked words tagged and parsed; or tagged
    words parsed."""
    if source == "text":
        return parser.stream_text(given, jobs=jobs)
    return parser.parse(given, retag=source == "tokens", jobs=jobs)


def tokens_only(gold: Sequence[Sentence]) -> list[Sentence]:
    """``gold`` with only its tokens: in every word line (empty nodes included) LEMMA,
    UPOS, XPOS, FEATS, HEAD, DEPREL and DEPS become ``_``; IDs, forms, multiword-token
    lines, MISC (``SpaceAfter=No``) and comments stay."""
    text = "".join(_blanked(s) for s in gold)
    return list(read_conllu(io.BytesIO(text.encode("utf-8"))))


def _blanked(sentence: Sentence) -> str:
    lines = []
    for line in sentence.lines:
        columns = line.split("\t")
        if not line.startswith("#") and len(columns) == 10:
            columns[2:9] = ["_"] * 7
        lines.append("\t".join(columns))
    return "\n".join(lines) + "\n\n"
