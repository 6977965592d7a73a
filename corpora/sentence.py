"""One sentence of a treebank, kept both as fields and as the lines it was read from.

Every per-word sequence has length ``n + 1``: index 0 is the artificial root (section 1
of ``docs/algorithms.md``), indices ``1..n`` are the syntactic words in order. Multiword
token ranges and empty nodes are not words; they survive only in :attr:`Sentence.lines`,
so that writing a sentence back changes nothing but the predicted columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

ROOT = "<root>"

MAX_SENTENCE_WORDS = 300
"""Default cap on the words of a sentence cut from raw text (``Tokenizer``'s
``max_words``): text without sentence punctuation would otherwise become one sentence,
and parsing costs O(n^2) memory and time or more in its length."""

# CoNLL-U / CoNLL-X column positions (0-based) of the fields the parser predicts.
HEAD_COLUMN = 6
DEPREL_COLUMN = 7
MISC_COLUMN = 9


@dataclass(frozen=True)
class Sentence:
    """A sentence of ``n`` syntactic words plus the root at index 0.

    Attributes
    ----------
    forms, lemmas, upos, xpos, feats:
        Word fields, ``len == n + 1``; entry 0 is :data:`ROOT`.
    heads:
        ``int64 (n + 1,)``; ``heads[0] == -1``; ``heads[i] == -1`` where the file has no
        head (``_``), as in text still to be parsed.
    deprels:
        Dependency labels, ``len == n + 1``; entry 0 is :data:`ROOT`; ``"_"`` where unknown.
    lines:
        The lines of the block as read, without line terminators (comments, token lines,
        multiword-token ranges, empty nodes).
    word_lines:
        ``int64 (n + 1,)``: ``word_lines[i]`` is the index in :attr:`lines` of word ``i``
        (``word_lines[0] == -1``).
    source, first_line:
        File name and 1-based line number of the block's first line, for error messages.
    before, after, newline:
        Layout, so that :meth:`to_text` gives back the file's exact bytes: ``before`` is
        the text preceding the block that belongs to no sentence (a byte-order mark, extra
        blank lines, comment-only blocks); ``after`` is everything from the end of the
        last line (its terminator included) to the next block: normally a line break and
        the blank separator line, and for the last sentence of a file whatever the file
        ends with; ``newline`` is the line terminator (``"\\n"`` or ``"\\r\\n"``) between
        the lines of the block.
    """

    forms: tuple[str, ...]
    lemmas: tuple[str, ...]
    upos: tuple[str, ...]
    xpos: tuple[str, ...]
    feats: tuple[str, ...]
    heads: np.ndarray
    deprels: tuple[str, ...]
    lines: tuple[str, ...] = ()
    word_lines: np.ndarray = field(default_factory=lambda: np.full(1, -1, dtype=np.int64))
    source: str = "<memory>"
    first_line: int = 1
    before: str = ""
    after: str = "\n\n"
    newline: str = "\n"

    @classmethod
    def from_words(cls, forms: Sequence[str], *, lemmas: Sequence[str] | None = None,
                   upos: Sequence[str] | None = None, xpos: Sequence[str] | None = None,
                   feats: Sequence[str] | None = None) -> "Sentence":
        """A sentence to be parsed, with CoNLL-U lines synthesized from its words.

        Parameters
        ----------
        forms:
            The ``n`` word forms, without the root.
        lemmas, upos, xpos, feats:
            Optional columns of the same length; missing ones are ``"_"``.

        Returns
        -------
        Sentence
            HEAD and DEPREL are ``_`` (``heads`` all -1) until :meth:`with_tree` fills them.

        Examples
        --------
        >>> s = Sentence.from_words(["Dogs", "bark", "."], upos=["NOUN", "VERB", "PUNCT"])
        >>> s.lines[1].split()
        ['2', 'bark', '_', 'VERB', '_', '_', '_', '_', '_', '_']
        """
        n = len(forms)
        if n == 0:
            raise ValueError("a sentence needs at least one word")
        columns = [_column(name, values, n)
                   for name, values in (("form", forms), ("lemma", lemmas), ("upos", upos),
                                        ("xpos", xpos), ("feats", feats))]
        lines = tuple("\t".join((str(i), *fields, "_", "_", "_", "_"))
                      for i, fields in enumerate(zip(*columns), start=1))
        form, lemma, tag, xtag, feat = ((ROOT, *column) for column in columns)
        return cls(forms=tuple(form), lemmas=tuple(lemma), upos=tuple(tag), xpos=tuple(xtag),
                   feats=tuple(feat), heads=np.full(n + 1, -1, dtype=np.int64),
                   deprels=(ROOT,) + ("_",) * n, lines=lines,
                   word_lines=np.arange(-1, n, dtype=np.int64))

    def __len__(self) -> int:
        """Number of syntactic words ``n`` (the root excluded)."""
        return len(self.forms) - 1

    @property
    def sent_id(self) -> str | None:
        return self._comment("sent_id")

    @property
    def text(self) -> str | None:
        return self._comment("text")

    def _comment(self, key: str) -> str | None:
        prefix = f"# {key}"
        for line in self.lines:
            if not line.startswith("#"):
                break
            if line.startswith(prefix):
                rest = line[len(prefix):].lstrip()
                if rest.startswith("="):
                    return rest[1:].strip()
        return None

    def has_tree(self) -> bool:
        """True when every word has a head (a training sentence)."""
        return bool(np.all(self.heads[1:] >= 0))

    def with_tree(self, heads: np.ndarray, deprels: tuple[str, ...] | list[str]) -> "Sentence":
        """A copy with predicted ``heads`` and ``deprels`` (both of length ``n + 1``).

        Only the HEAD and DEPREL columns of the syntactic-word lines change; comments,
        multiword-token ranges, empty nodes and every other column are kept as read.
        """
        heads = np.asarray(heads, dtype=np.int64)
        if heads.shape != (len(self.forms),) or len(deprels) != len(self.forms):
            raise ValueError("heads and deprels must have length n + 1")
        lines = list(self.lines)
        for i in range(1, len(self.forms)):
            j = int(self.word_lines[i])
            cols = lines[j].split("\t")
            cols[HEAD_COLUMN] = str(int(heads[i])) if heads[i] >= 0 else "_"
            cols[DEPREL_COLUMN] = deprels[i]
            lines[j] = "\t".join(cols)
        deprels = (ROOT,) + tuple(deprels[1:])
        heads = heads.copy()
        heads[0] = -1
        return replace(self, heads=heads, deprels=deprels, lines=tuple(lines))

    def with_misc(self, entries: Mapping[str, Sequence[str]]) -> "Sentence":
        """A copy with the CoNLL-U MISC entries ``key=entries[key][i]`` on every
        syntactic word ``i`` (each sequence of length ``n + 1``, entry 0 unused).

        An entry of the same key already in MISC gets the new value where it stands;
        the others are kept as they are, in their order, and the new keys follow them
        (``_`` alone is replaced). No other column or line changes.
        """
        if any(len(values) != len(self.forms) for values in entries.values()):
            raise ValueError("every MISC entry needs n + 1 values")
        lines = list(self.lines)
        for i in range(1, len(self.forms)):
            j = int(self.word_lines[i])
            cols = lines[j].split("\t")
            given = [] if cols[MISC_COLUMN] == "_" else cols[MISC_COLUMN].split("|")
            new = {key: f"{key}={values[i]}" for key, values in entries.items()}
            kept = [new.pop(item.split("=", 1)[0], item) for item in given]
            cols[MISC_COLUMN] = "|".join(kept + list(new.values()))
            lines[j] = "\t".join(cols)
        return replace(self, lines=tuple(lines))

    def with_comments(self, comments: Sequence[str], *, first: bool = True) -> "Sentence":
        """A copy with the comment lines ``comments`` (each starting with ``#``) added
        after its own comments, before its first token line. ``first=False`` drops
        :attr:`before` (what precedes the block in its file), for a second copy of the
        sentence written after the first."""
        at = 0
        while at < len(self.lines) and self.lines[at].startswith("#"):
            at += 1
        lines = self.lines[:at] + tuple(comments) + self.lines[at:]
        word_lines = np.where(self.word_lines >= at, self.word_lines + len(comments),
                              self.word_lines)
        return replace(self, lines=lines, word_lines=word_lines,
                       before=self.before if first else "")

    def to_text(self) -> str:
        """The sentence as written to a file: ``before``, the lines, then ``after``.

        For a sentence read from a file this is exactly the text it occupied there.
        """
        return self.before + self.newline.join(self.lines) + self.after


def _column(name: str, values: Sequence[str] | None, n: int) -> tuple[str, ...]:
    """One synthesized CoNLL-U column: ``values`` checked, or ``"_"`` for every word."""
    if values is None:
        return ("_",) * n
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} entries for {n} words")
    for value in values:
        if not value or any(c in value for c in "\t\r\n"):
            raise ValueError(f"{name} {value!r} cannot be written as a CoNLL-U field")
    return tuple(values)
