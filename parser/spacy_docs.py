"""Between spaCy's ``Doc`` and polyparse's :class:`~corpora.sentence.Sentence`: the words
of a sentence span as a sentence to parse, a parsed tree written into a ``Doc``, and a
``Doc`` as CoNLL-U text and back (:func:`to_conllu`, :func:`from_conllu`). Imported only
by :mod:`parser.spacy_component` and by whoever converts Docs: it imports spaCy, which
the rest of polyparse never does (``pip install polyparse[spacy]``).

Whitespace tokens (spaCy's ``token.is_space``: runs of spaces and line breaks that a
spaCy tokenizer keeps as tokens) are not words: a sentence is parsed without them, each
is attached to the word before it (the word after it at the start of a sentence) with
UD's unspecified relation ``dep``, and CoNLL-U leaves them out. A form with whitespace
inside (a merged span) is written with each run of whitespace as one space.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.parts_of_speech import IDS as UPOS_IDS
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from polyparse.corpora.conllu_io import read_conllu, write_conllu
from polyparse.corpora.sentence import MISC_COLUMN, ROOT, Sentence

SPACE_RELATION = "dep"
"""The relation of a whitespace token to the word it is attached to."""


@dataclass(frozen=True)
class SentenceWords:
    """The words of one sentence span of a ``Doc``: ``tokens[k]`` is the Doc index of
    word ``k + 1``; ``span`` the sentence."""

    span: Span
    tokens: list[int]

    @classmethod
    def of(cls, span: Span) -> "SentenceWords":
        return cls(span, [t.i for t in span if not t.is_space])

    def position(self, token: int) -> int | None:
        """The word position (1..n) of Doc token ``token``, None if it is not a word of
        this sentence."""
        k = token - self.span.start
        if 0 <= k < len(self.span) and not self.span[k].is_space:
            return self.tokens.index(token) + 1
        return None

    def sentence(self, *, tags: bool) -> Sentence:
        """The words as a sentence to parse, with the Doc's own UPOS, XPOS, FEATS and
        LEMMA if ``tags`` (``_`` where the Doc has none), else without them."""
        doc = self.span.doc
        forms = [_field(doc[i].text) for i in self.tokens]
        if not tags:
            return Sentence.from_words(forms)
        words = [doc[i] for i in self.tokens]
        return Sentence.from_words(forms, lemmas=[_field(t.lemma_) for t in words],
                                   upos=[_field(t.pos_) for t in words],
                                   xpos=[_field(t.tag_) for t in words],
                                   feats=[_field(str(t.morph)) for t in words])


def _field(value: str) -> str:
    """``value`` as a CoNLL-U field: runs of whitespace made one space; ``_`` if empty."""
    return " ".join(value.split()) or "_"


def write_trees(doc: Doc, parsed: Sequence[tuple[SentenceWords, Sentence]]) -> None:
    """Set every token's head and relation from the ``parsed`` sentences, which cover the
    Doc (a sentence's root word heads itself, as spaCy's roots do; whitespace tokens as
    the module docstring says); the sentence boundaries follow from the trees."""
    heads = np.arange(len(doc), dtype=np.int64)
    deps = [SPACE_RELATION] * len(doc)
    for words, sentence in parsed:
        tokens = np.array(words.tokens, dtype=np.int64)
        span = words.span
        if len(tokens):
            word_heads = np.asarray(sentence.heads[1:])
            heads[tokens] = np.where(word_heads == 0, tokens,
                                     tokens[np.maximum(word_heads, 1) - 1])
            for token, relation in zip(words.tokens, sentence.deprels[1:]):
                deps[token] = relation
        _attach_spaces(heads, span, words.tokens)
    strings = doc.vocab.strings
    values = np.stack([(heads - np.arange(len(doc))).astype(np.uint64),
                       np.array([strings.add(d) for d in deps], dtype=np.uint64)], axis=1)
    doc.from_array([HEAD, DEP], values)


def _attach_spaces(heads: np.ndarray, span: Span, words: list[int]) -> None:
    """Attach each whitespace token of ``span`` to the word before it, else the word
    after it; in a span without words, to its first token."""
    if len(words) == len(span):
        return
    previous = None
    first = words[0] if words else span.start
    for token in span:
        if not token.is_space:
            previous = token.i
        elif token.i != first:
            heads[token.i] = previous if previous is not None else first


def write_tags(words: SentenceWords, tagged: Sentence, *, lemmas: bool) -> None:
    """Set the words' ``pos_`` (a UPOS spaCy knows), ``tag_`` and ``morph`` from
    ``tagged``, and their ``lemma_`` if ``lemmas``."""
    doc = words.span.doc
    for k, i in enumerate(words.tokens, 1):
        token = doc[i]
        if tagged.upos[k] in UPOS_IDS:
            token.pos_ = tagged.upos[k]
        token.tag_ = "" if tagged.xpos[k] == "_" else tagged.xpos[k]
        token.set_morph(None if tagged.feats[k] == "_" else tagged.feats[k])
        if lemmas:
            token.lemma_ = "" if tagged.lemmas[k] == "_" else tagged.lemmas[k]


def doc_sentences(doc: Doc) -> list[Sentence]:
    """The sentences of ``doc`` (``doc.sents``; one if it has no boundaries) as CoNLL-U
    sentences: ``# sent_id = k`` and ``# text``, each word's FORM, LEMMA, UPOS, XPOS,
    FEATS, HEAD and DEPREL as the Doc has them (``_`` where it has none, HEAD and DEPREL
    too without a parse) and ``SpaceAfter=No`` in MISC where no whitespace follows a word
    within the Doc."""
    parsed = doc.has_annotation("DEP")
    spans = list(doc.sents) if doc.has_annotation("SENT_START") or parsed else [doc[:]]
    out = []
    for number, span in enumerate(spans, 1):
        words = SentenceWords.of(span)
        if not words.tokens:
            continue
        sentence = words.sentence(tags=True)
        if parsed:
            heads = [-1] + [0 if doc[i].head.i == i else words.position(doc[i].head.i) or 0
                            for i in words.tokens]
            sentence = sentence.with_tree(np.array(heads), [ROOT] + [
                _field(doc[i].dep_) for i in words.tokens])
        no_space = [k for k, i in enumerate(words.tokens, 1)
                    if i + 1 < len(doc) and not doc[i].whitespace_
                    and not doc[i + 1].is_space]
        out.append(_with_space_after(sentence, no_space).with_comments(
            [f"# sent_id = {number}", f"# text = {' '.join(span.text.split())}"]))
    return out


def _with_space_after(sentence: Sentence, positions: Iterable[int]) -> Sentence:
    """``sentence`` (MISC empty, as :meth:`Sentence.from_words` makes it) with
    ``SpaceAfter=No`` in the MISC of the words at ``positions``."""
    lines = list(sentence.lines)
    for k in positions:
        cols = lines[int(sentence.word_lines[k])].split("\t")
        cols[MISC_COLUMN] = "SpaceAfter=No"
        lines[int(sentence.word_lines[k])] = "\t".join(cols)
    return replace(sentence, lines=tuple(lines))


def to_conllu(doc: Doc) -> str:
    """``doc`` as CoNLL-U text (:func:`doc_sentences`, written by
    :func:`~corpora.conllu_io.write_conllu`)."""
    out = io.StringIO()
    write_conllu(doc_sentences(doc), out)
    return out.getvalue()


def from_conllu(vocab: Vocab, text: str) -> Doc:
    """One ``Doc`` of the sentences of the CoNLL-U ``text``: their syntactic words as
    tokens (a multiword token's words with no space between them), a space after each
    word unless its MISC (or its multiword token's) says ``SpaceAfter=No``, the
    sentence boundaries, and LEMMA, UPOS, XPOS, FEATS and, where every word has one,
    HEAD and DEPREL. ``ValueError`` naming the line for text that is not CoNLL-U."""
    words, spaces, lemmas, upos, xpos, feats, heads, deps, starts = ([] for _ in range(9))
    sentences = list(read_conllu(io.StringIO(text)))
    parsed = all(s.has_tree() for s in sentences)
    for sentence in sentences:
        offset = len(words)
        n = len(sentence)
        words += sentence.forms[1:]
        spaces += _spaces_after(sentence)
        lemmas += [None if v == "_" else v for v in sentence.lemmas[1:]]
        upos += [v if v in UPOS_IDS else None for v in sentence.upos[1:]]
        xpos += [None if v == "_" else v for v in sentence.xpos[1:]]
        feats += ["" if v == "_" else v for v in sentence.feats[1:]]
        starts += [True] + [False] * (n - 1)
        if parsed:
            heads += [offset + (h - 1 if h > 0 else k)
                      for k, h in enumerate(sentence.heads[1:].tolist())]
            deps += sentence.deprels[1:]
    if words:
        spaces[-1] = False
    tree = {"heads": heads, "deps": deps} if parsed and words else {"sent_starts": starts}
    return Doc(vocab, words=words, spaces=spaces, lemmas=lemmas, pos=upos, tags=xpos,
               morphs=feats, **tree)


def _spaces_after(sentence: Sentence) -> list[bool]:
    """Whether a space follows each word of ``sentence`` (its MISC, or its multiword
    token's range line, says ``SpaceAfter=No`` where not; no space inside a multiword
    token)."""
    spaces = [True] * len(sentence)
    for line in sentence.lines:
        cols = line.split("\t")
        if line.startswith("#") or len(cols) < 10 or "." in cols[0]:
            continue
        first, _, last = cols[0].partition("-")
        no_space = "SpaceAfter=No" in cols[9].split("|")
        if last:                                  # a multiword token's range line
            for k in range(int(first), int(last)):
                spaces[k - 1] = False
            spaces[int(last) - 1] = not no_space
        elif no_space:
            spaces[int(first) - 1] = False
    return spaces
