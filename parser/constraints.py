"""The user's constraints on trees: given arcs, forbidden arcs and forbidden labels.

A :class:`Constraints` value says, for any sentence, which arcs and labels a parse must
not use and whether the HEAD and DEPREL given in the input must be kept
(``keep_given``). It comes from Python or from a constraints file (:meth:`Constraints.read`),
one rule a line::

    # comments and blank lines are ignored
    forbid HEAD -> DEP          # no arc from a word matching HEAD to one matching DEP
    forbid-label LABEL          # no word takes relation LABEL
    forbid-label LABEL DEP      # no word matching DEP takes relation LABEL

A word pattern is ``*`` (any word), ``ROOT`` (the root, as HEAD only), ``form=X``,
``lemma=X``, ``upos=X``, ``xpos=X`` or a bare form ``X``. A line that is not one of
these raises :class:`ConstraintsFileError` naming ``FILE:LINE`` and what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from polyparse.corpora.sentence import Sentence

PATTERN_KEYS = ("form", "lemma", "upos", "xpos")


class ConstraintsFileError(ValueError):
    """A constraints file that cannot be read (message ``FILE:LINE: what is wrong``)."""


class ConstraintError(ValueError):
    """No tree of a sentence satisfies its constraints (the message names the sentence
    and the conflict)."""


@dataclass(frozen=True)
class WordPattern:
    """Words whose ``key`` field equals ``value`` (``key`` ``"any"``: every word;
    ``"root"``: the root, index 0)."""

    key: str
    value: str = ""

    @classmethod
    def parse(cls, text: str) -> "WordPattern":
        """``*``, ``ROOT``, ``key=value`` or a bare form; ``ValueError`` for an unknown
        key or an empty value."""
        if text == "*":
            return cls("any")
        if text == "ROOT":
            return cls("root")
        if "=" in text:
            key, value = text.split("=", 1)
            if key not in PATTERN_KEYS:
                raise ValueError(f"unknown word field {key!r} in {text!r} (use "
                                 f"{', '.join(k + '=' for k in PATTERN_KEYS)}, * or ROOT)")
            if not value:
                raise ValueError(f"empty value in {text!r}")
            return cls(key, value)
        return cls("form", text)

    def mask(self, sentence: Sentence) -> np.ndarray:
        """``bool (n + 1,)``: the positions it matches (0 is the root)."""
        n = len(sentence)
        if self.key == "any":
            out = np.ones(n + 1, dtype=bool)
            out[0] = False
            return out
        if self.key == "root":
            out = np.zeros(n + 1, dtype=bool)
            out[0] = True
            return out
        column = {"form": sentence.forms, "lemma": sentence.lemmas, "upos": sentence.upos,
                  "xpos": sentence.xpos}[self.key]
        return np.array([i > 0 and column[i] == self.value for i in range(n + 1)])

    def __str__(self) -> str:
        return {"any": "*", "root": "ROOT"}.get(self.key, f"{self.key}={self.value}")


@dataclass(frozen=True)
class Constraints:
    """What every parse must respect.

    Attributes
    ----------
    forbid_arcs:
        ``(head pattern, dependent pattern)`` pairs: no such arc.
    forbid_labels:
        ``(label, dependent pattern)`` pairs: no word matching the pattern takes the
        label.
    keep_given:
        Keep the HEAD and DEPREL the input gives (either may be ``_``: then only the
        other is kept); the parser fills in the rest.
    forbid_positions:
        ``(head, dependent)`` word positions (0: the root; 1..n the words) whose arc is
        forbidden: constraints on one sentence by position, as the token attributes of a
        spaCy ``Doc`` give them (:mod:`parser.spacy_component`); a position beyond a
        sentence's words concerns no arc of it.
    """

    forbid_arcs: tuple[tuple[WordPattern, WordPattern], ...] = ()
    forbid_labels: tuple[tuple[str, WordPattern], ...] = ()
    keep_given: bool = False
    forbid_positions: frozenset[tuple[int, int]] = frozenset()

    @classmethod
    def parse(cls, text: str, source: str = "<constraints>", *,
              keep_given: bool = False) -> "Constraints":
        """The constraints of ``text`` (the file format of the module docstring);
        :class:`ConstraintsFileError` naming ``source:line`` for a bad line."""
        arcs, labels = [], []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            try:
                if fields[0] == "forbid":
                    if len(fields) != 4 or fields[2] != "->":
                        raise ValueError("expected 'forbid HEAD -> DEP'")
                    dep = WordPattern.parse(fields[3])
                    if dep.key == "root":
                        raise ValueError("ROOT cannot be a dependent")
                    arcs.append((WordPattern.parse(fields[1]), dep))
                elif fields[0] == "forbid-label":
                    if len(fields) not in (2, 3):
                        raise ValueError("expected 'forbid-label LABEL [DEP]'")
                    dep = WordPattern.parse(fields[2]) if len(fields) == 3 else WordPattern("any")
                    if dep.key == "root":
                        raise ValueError("ROOT takes no label")
                    labels.append((fields[1], dep))
                else:
                    raise ValueError(f"unknown rule {fields[0]!r} (expected 'forbid' or "
                                     "'forbid-label')")
            except ValueError as error:
                raise ConstraintsFileError(f"{source}:{number}: {error}: {raw.strip()!r}") \
                    from None
        return cls(tuple(arcs), tuple(labels), keep_given)

    @classmethod
    def read(cls, path: str | Path, *, keep_given: bool = False) -> "Constraints":
        """:meth:`parse` of the file ``path`` (:class:`ConstraintsFileError` if it cannot
        be read)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConstraintsFileError(f"{path}: cannot read the constraints file "
                                       f"({error})") from None
        return cls.parse(text, str(path), keep_given=keep_given)

    def forbidden_arcs(self, sentence: Sentence) -> np.ndarray:
        """``bool (n + 1, n + 1)``: ``[h, m]`` True where arc h -> m is forbidden."""
        n = len(sentence)
        out = np.zeros((n + 1, n + 1), dtype=bool)
        for head, dep in self.forbid_arcs:
            out |= head.mask(sentence)[:, None] & dep.mask(sentence)[None, :]
        for head, dep in self.forbid_positions:
            if head <= n and 1 <= dep <= n:
                out[head, dep] = True
        return out

    def forbidden_labels(self, sentence: Sentence, labels: list[str]) -> np.ndarray:
        """``bool (n + 1, n_labels)``: ``[m, l]`` True where word m may not take label l."""
        n = len(sentence)
        index = {label: i for i, label in enumerate(labels)}
        out = np.zeros((n + 1, len(labels)), dtype=bool)
        for label, dep in self.forbid_labels:
            if label in index:
                out[:, index[label]] |= dep.mask(sentence)
        return out

    def given(self, sentence: Sentence) -> tuple[np.ndarray, list[str | None]]:
        """``(heads, labels)`` kept from the input: ``heads[m]`` the given head or -1,
        ``labels[m]`` the given relation or None (all free without ``keep_given``)."""
        n = len(sentence)
        if not self.keep_given:
            return np.full(n + 1, -1, dtype=np.int64), [None] * (n + 1)
        heads = np.array(sentence.heads, dtype=np.int64).copy()
        heads[0] = -1
        labels = [None] + [None if d in ("_", "") else d for d in sentence.deprels[1:]]
        return heads, labels

    def applies(self, sentence: Sentence) -> bool:
        """Whether any constraint concerns ``sentence``."""
        if self.keep_given and (np.any(sentence.heads[1:] >= 0)
                                or any(d not in ("_", "") for d in sentence.deprels[1:])):
            return True
        if self.forbid_labels and any(dep.mask(sentence).any() for _, dep in self.forbid_labels):
            return True
        return ((bool(self.forbid_arcs) or bool(self.forbid_positions))
                and bool(self.forbidden_arcs(sentence).any()))


@dataclass(frozen=True, eq=False)
class ArcConstraints(Constraints):
    """The user's constraints on one sentence with arcs forced in and arcs forbidden
    besides: a subproblem of Lawler's partition (:mod:`decoders.lawler`) as the
    constrained decoding of :meth:`parser.pipeline.Parser.decode_constrained` takes it
    (a forced arc is a given head, kept as the user's are).

    Attributes
    ----------
    forced:
        ``int64 (n + 1,)``: the head forced on each word, -1 where free.
    forbidden:
        ``bool (n + 1, n + 1)``: ``[h, m]`` True where arc h -> m is forbidden.
    """

    forced: np.ndarray | None = None
    forbidden: np.ndarray | None = None

    @classmethod
    def of(cls, user: Constraints | None, forced: np.ndarray, forbidden: np.ndarray
           ) -> "ArcConstraints":
        """``user``'s constraints (none if None) with ``forced`` and ``forbidden``."""
        user = user or Constraints()
        return cls(user.forbid_arcs, user.forbid_labels, user.keep_given,
                   user.forbid_positions, forced, forbidden)

    def forbidden_arcs(self, sentence: Sentence) -> np.ndarray:
        return super().forbidden_arcs(sentence) | self.forbidden

    def given(self, sentence: Sentence) -> tuple[np.ndarray, list[str | None]]:
        """The user's given heads and labels, and the forced heads (a given head is
        forced on every subproblem, :meth:`parser.pipeline.Parser.kbest`)."""
        heads, labels = super().given(sentence)
        return np.where(self.forced >= 0, self.forced, heads), labels

    def applies(self, sentence: Sentence) -> bool:
        return True
