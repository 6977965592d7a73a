"""A system output made from a gold CoNLL-U file by random errors, for testing evaluation.

:func:`perturb` changes heads (keeping every sentence a tree with one root), labels
(also only their subtypes), UPOS, XPOS, features (also only non-universal ones, or
their order) and lemmas; merges and splits tokens, turns tokens into multiword tokens
and multiword tokens into one word, changes words inside multiword tokens; merges and
splits sentences. The text (the tokens' non-space characters) stays the same, so the
result can be scored against the gold file by the CoNLL 2018 script. DEPS is written as
``_`` and empty nodes are dropped (both would refer to words that moved).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(eq=False)
class Word:
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    deprel: str
    head: "Word | None" = None             # None: the root


@dataclass(eq=False)
class Token:
    form: str
    misc: str
    words: list[Word]


@dataclass(eq=False)
class Block:
    comments: list[str]
    tokens: list[Token] = field(default_factory=list)

    @property
    def words(self) -> list[Word]:
        return [w for t in self.tokens for w in t.words]


def read_blocks(text: str) -> list[Block]:
    """The sentences of a CoNLL-U text (empty nodes and DEPS are left out)."""
    blocks = []
    for chunk in text.strip("\n").split("\n\n"):
        lines = chunk.split("\n")
        block = Block([line for line in lines if line.startswith("#")])
        words, heads, span_end, current = [], [], 0, None
        for line in lines:
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "." in cols[0]:
                continue
            if "-" in cols[0]:
                first, last = map(int, cols[0].split("-"))
                current = Token(cols[1], cols[9], [])
                block.tokens.append(current)
                span_end = last
                continue
            word = Word(cols[1], cols[2], cols[3], cols[4], cols[5], cols[7])
            words.append(word)
            heads.append(int(cols[6]))
            if current is not None and int(cols[0]) <= span_end:
                current.words.append(word)
            else:
                current = None
                block.tokens.append(Token(cols[1], cols[9], [word]))
        for word, head in zip(words, heads):
            word.head = words[head - 1] if head else None
        blocks.append(block)
    return blocks


def write_blocks(blocks: list[Block]) -> str:
    out = []
    for block in blocks:
        out.extend(block.comments)
        index = {id(w): i for i, w in enumerate(block.words, 1)}
        for token in block.tokens:
            first = index[id(token.words[0])]
            if len(token.words) > 1:
                out.append(f"{first}-{first + len(token.words) - 1}\t{token.form}\t_\t_\t_\t_"
                           f"\t_\t_\t_\t{token.misc}")
            for k, w in enumerate(token.words):
                form = token.form if len(token.words) == 1 else w.form
                misc = token.misc if len(token.words) == 1 else "_"
                head = index[id(w.head)] if w.head is not None else 0
                out.append(f"{first + k}\t{form}\t{w.lemma}\t{w.upos}\t{w.xpos}\t{w.feats}"
                           f"\t{head}\t{w.deprel}\t_\t{misc}")
        out.append("")
    return "\n".join(out) + "\n"


def _ancestor(a: Word, b: Word) -> bool:
    """Whether ``a`` dominates ``b`` (or is ``b``)."""
    while b is not None:
        if b is a:
            return True
        b = b.head
    return False


def _merge_words(words: list[Word], a: Word, b: Word) -> None:
    """Contract ``a`` and ``b`` of the tree over ``words`` into ``a`` (``b`` goes): the
    merged word takes the head of whichever dominates the other, so no cycle forms."""
    head = b.head if _ancestor(b, a) else a.head
    for w in words:
        if w.head is a or w.head is b:
            w.head = a
    a.head = head
    if head is None:
        a.deprel = "root"


def _with_space_after(misc: str, space: bool) -> str:
    items = [m for m in misc.split("|") if m not in ("_", "SpaceAfter=No")]
    items += [] if space else ["SpaceAfter=No"]
    return "|".join(items) or "_"


def _structure(blocks: list[Block], rng: random.Random) -> list[Block]:
    out: list[Block] = []
    for block in blocks:
        tokens: list[Token] = []
        for i, token in enumerate(block.tokens):
            words = [w for t in tokens + block.tokens[i:] for w in t.words]
            r = rng.random()
            if len(token.words) > 1 and r < 0.3:                 # a multiword token: one word
                a, *rest = token.words
                for b in rest:
                    _merge_words(words, a, b)
                token.words = [a]
            elif len(token.words) > 1 and r < 0.5:                # a word in it misspelled
                rng.choice(token.words).form += "x"
            elif len(token.words) > 1 and r < 0.6:                # same word, other case
                word = rng.choice(token.words)
                word.form = word.form.upper()
            elif len(token.words) == 1 and len(token.form) > 1 and r < 0.03:   # split
                k = rng.randrange(1, len(token.form))
                word = token.words[0]
                second = Word(token.form[k:], "x", word.upos, word.xpos, word.feats, "flat",
                              head=word)
                word.form = token.form = token.form[:k]
                tokens.append(Token(token.form, _with_space_after(token.misc, False), [word]))
                token = Token(second.form, token.misc, [second])
            elif len(token.words) == 1 and len(token.form) > 1 and r < 0.06:   # multiword
                k = rng.randrange(1, len(token.form))
                word = token.words[0]
                second = Word(token.form[k:], "x", "ADP", "IN", "_", "case", head=word)
                word.form = token.form[:k]
                token.words = [word, second]
            elif tokens and len(token.words) == 1 and len(tokens[-1].words) == 1 \
                    and r < 0.09:                                # merged with the one before
                last = tokens[-1]
                _merge_words(words, last.words[0], token.words[0])
                last.form += token.form
                last.misc = token.misc
                continue
            tokens.append(token)
        block.tokens = tokens
        r = rng.random()
        if out and r < 0.05:                                     # merged with the one before
            root = next(w for w in block.words if w.head is None)
            root.head = next(w for w in out[-1].words if w.head is None)
            root.deprel = "parataxis"
            out[-1].tokens.extend(block.tokens)
        elif len(block.tokens) > 1 and r < 0.1:                  # split in two
            k = rng.randrange(1, len(block.tokens))
            for part in (Block(block.comments, block.tokens[:k]), Block([], block.tokens[k:])):
                words = part.words
                inside = {id(w) for w in words}
                loose = [w for w in words if w.head is None or id(w.head) not in inside]
                root = rng.choice(loose)
                for w in loose:
                    w.head, w.deprel = (None, "root") if w is root else (root, "dep")
                out.append(part)
        else:
            out.append(block)
    return out


def _attributes(blocks: list[Block], rng: random.Random) -> None:
    labels = sorted({w.deprel for b in blocks for w in b.words})
    tags = sorted({w.upos for b in blocks for w in b.words})
    xtags = sorted({w.xpos for b in blocks for w in b.words})
    for block in blocks:
        words = block.words
        for w in words:
            if w.head is not None and rng.random() < 0.1:
                allowed = [h for h in words if not _ancestor(w, h)]
                w.head = rng.choice(allowed)
            r = rng.random()
            if r < 0.1:
                w.deprel = rng.choice(labels)
            elif r < 0.15:                                       # only the subtype differs
                w.deprel = w.deprel.split(":")[0] + rng.choice(["", ":x"])
            if rng.random() < 0.1:
                w.upos = rng.choice(tags)
            if rng.random() < 0.1:
                w.xpos = rng.choice(xtags)
            feats = [] if w.feats == "_" else w.feats.split("|")
            r = rng.random()
            if feats and r < 0.1:
                feats.remove(rng.choice(feats))
            elif r < 0.15:
                feats.append(rng.choice(["Foo=Bar", "Number[psor]=Sing", "Typo=Yes"]))
            elif r < 0.2:
                rng.shuffle(feats)
            w.feats = "|".join(feats) or "_"
            r = rng.random()
            if r < 0.1:
                w.lemma += "x"
            elif r < 0.13:
                w.lemma = "_"


def perturb(gold: str, seed: int) -> tuple[str, str]:
    """``(gold', system)``: the gold text with a few lemmas set to ``_`` (which the
    CoNLL 2018 script counts as right whatever the system says), and a system output
    made from it by random errors (see the module docstring)."""
    rng = random.Random(seed)
    lines = gold.split("\n")
    for k, line in enumerate(lines):
        cols = line.split("\t")
        if cols[0].isdigit() and rng.random() < 0.02:
            lines[k] = "\t".join(cols[:2] + ["_"] + cols[3:])
    gold = "\n".join(lines)
    system = _structure(read_blocks(gold), rng)
    _attributes(system, rng)
    return gold, write_blocks(system)
