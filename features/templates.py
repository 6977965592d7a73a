"""Feature templates, one table per part type, written as short strings.

A template is a space-separated list of atoms, each ``<anchor>[+k|-k].<field>``: anchor
``h``, ``m``, ``x`` (the part's index columns, see ``decoders.parts``) or ``b`` (every
word strictly between h and m, one feature per distinct value), offset ``k`` words to the
right/left, and a field of :data:`features.vocab.FIELDS`; or a part atom ``arc.dir``,
``arc.dist`` (side and binned distance of (h, m)), ``arc.len`` (exact distance up to 10),
``arc.bcount`` (how many words in between share the ``b`` atom's value), ``arc.order``
(relative order of h, m and x), ``arc.xdist`` (binned distance of m and x) or ``arc.k``
(a valency part's k), all defined in :mod:`features._kernels`. At most
:data:`features._kernels.MAX_ATOMS` atoms. ``bias`` has no atom. A template's id is a
63-bit hash of ``"<table name>:<template string>"``, so adding or reordering templates
never changes the indices of the others.

First-order arc templates, after TurboParser's arc-factored model (Martins, Smith, Xing
2009; Martins, Almeida, Smith 2013; ``DependencyFeatures::AddWordPairFeatures`` with the
large feature set, morphological features left out: raw text has no gold FEATS). Every
template carries ``arc.dir``, as in TurboParser, and the table is not conjoined; w is the
form, l the lemma, p the UPOS, q the XPOS:

=====================  ==================================================================
token                  ``a.p``, ``a.q``, ``a.w``, ``a.l``, ``a.w a.p`` for a in h, m and
                       their neighbours h-2 .. h+2, m-2 .. m+2 (50 templates)
tag n-grams            ``h.p h-1.p``, ``h.p h-1.p h-2.p``, ``h.p h+1.p``,
                       ``h.p h+1.p h+2.p``, and likewise at m
pair                   ``h.p m.p``, ``h.w m.w``, ``h.p m.w``, ``h.p m.w m.p``, ``h.w m.p``,
                       ``h.w h.p m.p``, ``h.w h.p m.w m.p``
tag context            ``h.p m.p`` with h-1.p, h+1.p, m-1.p, m+1.p, with the four
                       pairs (h-1, m-1), (h+1, m+1), (h-1, m+1), (h+1, m-1), and with all
                       four neighbours
distance               ``arc.len`` (exact up to 10, then 11-20, ..., >40) and ``arc.dist``
                       (MSTParser's bins) with ``h.p``, ``m.p`` and ``h.p m.p``
in between             ``b.p arc.bcount`` and ``h.p m.p b.p arc.bcount`` (TurboParser's
                       counts of verbs, punctuation and coordinations between h and m,
                       for every tag); ``h.p m.p b.p``, ``h.w m.w b.p``, ``h.w m.p b.p``,
                       ``h.p m.w b.p``, one feature per distinct tag
=====================  ==================================================================

85 templates, 114 features per arc on en_ewt train (all n^2 candidate arcs; 35 of them
from the in-between templates). ``eval/results/frozen/tune_first_order.md`` compares it (perceptron, 2
epochs, en_ewt dev, same label templates) with the first table, McDonald, Crammer,
Pereira (2005) Table 1 with every feature also conjoined with direction and binned
distance (169 features per arc): UAS 86.19 against 85.25. Conjoining the new table as
MSTParser does, instead of with the direction alone, adds 0.0 - 0.2 for twice the
features; XPOS copies of the pair, context and in-between templates add 0.06 for 32
more templates. The ``reduced`` set (21 templates, 26 features per arc) keeps the h/m
tokens, the pairs, the one-neighbour tag contexts, distance and the in-between tags.

Higher-order templates (``docs/algorithms.md`` section 1; w = form, t = UPOS unless
written out). Every table but VALENCY is conjoined as MSTParser conjoins arc features:
each feature plain and with the side and binned distance of (h, m). Features per part
(``full`` / ``reduced``) are measured on en_ewt dev with candidate arcs pruned to 5 heads
per word.

GRANDPARENT (g, h, m), rows ``(h, m, g)``: x is g, 0 for the root. 24 / 8.
    After Carreras (2007) and Koo and Collins (2010): tag trigrams ``x.t h.t m.t`` for
    UPOS and XPOS; one word with the three tags (``x.w x.t h.t m.t``, likewise for h and
    m); g-m bigrams ``x.t m.t``, ``x.xpos m.xpos``, ``x.w m.w``, ``x.w m.t``,
    ``x.t m.w``; ``h.t m.t``; bias. Every template carries ``arc.order``, which holds
    the directions of (g, h) and (h, m) and whether m lies beyond g (TurboParser's
    grandparent direction code: g-h-m chain, g-m-h zig-zag, m-g-h non-projective); the
    conjoined copy adds the h-m distance.
SIBLING (h, m, s), rows ``(h, m, s)``, m the inner one. 28 / 8.
    After McDonald and Pereira (2006) (MSTParser's sibling and "trip" features) and the
    pairs of TurboParser: tag trigrams ``h.t m.t x.t`` (UPOS, XPOS) and their one-word
    back-offs; m-s bigrams ``m.t x.t``, ``m.xpos x.xpos``, ``m.w x.w``, ``m.w x.t``,
    ``m.t x.w``; ``h.t x.t``; the sibling distance ``arc.xdist`` and
    ``m.t x.t arc.xdist``; bias.
CONSECUTIVE_SIBLING, rows ``(h, m, s)``. 28 / 8.
    The SIBLING templates in a table of their own (McDonald and Pereira's second-order
    model proper). The ends of a chain read atoms of their own: m-anchored atoms read
    START when m == h (s is the first child), x reads BOS / EOS at s = -1 / n + 1 (m is
    the last child; both at once: h has no child on that side); ``arc.dist`` and
    ``arc.xdist`` take their own bin 7 there, and ``arc.dir`` is the side of s.
VALENCY (h, side, k), rows ``(h, side, k)``. 12 / 3.
    After Martins, Smith, Xing (ACL 2009): h's UPOS, XPOS, form, lemma, form with UPOS,
    and a bias, each with (side, k) and with k alone (a k-independent feature would add
    the same score to every bin of a head); k is the bin, the last one "k or more". Its
    own kernel, :func:`features._kernels.valency_features`; not conjoined.
NONPROJ (h, m), rows ``(h, m, -1)``. 26 / 8 (33 unpruned).
    After Martins, Smith, Xing (ACL 2009) (TurboParser scores a non-projective arc with
    arc features under a flag of their own, here the table salt): ``h.t``, ``h.xpos``,
    ``m.t``, ``m.xpos``, ``h.t m.t``, ``h.xpos m.xpos``, ``h.w h.t``, ``m.w m.t``,
    ``h.w m.t``, ``h.t m.w``, bias, and the in-between tags ``h.t b.t m.t`` (one per
    distinct tag: non-projectivity is about the words an arc spans).

Cluster templates (Koo, Carreras and Collins 2008), added to either set when the model has
Brown word clusters (``"full+clusters"``, :data:`WITH_CLUSTERS`; ``FeatureConfig.clusters``):
they read the 4-bit and 6-bit prefixes and the whole bit string of a word
(:data:`features.vocab.CLUSTER_FIELDS`), which carry what unlabelled text says of words the
treebank has rarely or never seen. ARC, 22 (:func:`koo_arc`, each with ``arc.dir``);
GRANDPARENT, SIBLING and CONSECUTIVE_SIBLING, 9 each (:func:`koo_triple`, conjoined as their
tables are); VALENCY 2, NONPROJ 3, labels 4. What they give at orders 1 and 2 is measured by
``eval/cluster_features.py``.

Label templates (scored against a dense ``(2**label_bits, n_labels)`` matrix, hence
neither conjoined with the label nor with direction/distance, which appear as atoms):
the words, lemmas, tags and affixes of h and m; their pairs, plain and with the direction;
bilexical and word-tag pairs with UPOS and XPOS; distance, binned and exact, with the
tags; tag and word context of m (m-2 .. m+2) and h (h-1, h+1) with the other word's tag;
in-between tags, plain and counted, with the tag pair. TurboParser conjoins every arc
feature with the label; with our dense label matrix that is too slow (every label feature
costs ``n_labels`` multiply-adds per candidate arc), so the table is a selection, grown in
two steps on en_ewt dev (``eval/results/frozen/tune_first_order.md``, perceptron, 2 epochs, the arc
table above): from 34 templates to 54, LAS 83.56 -> 85.08 and UAS 86.19 -> 86.89 (the
best label's score is part of the arc's score); to 67 (86 features per arc on en_ewt
train, 23 from the in-between templates), 85.40 / 87.18. Dropping the 8 templates that
have a copy with the direction or a counted twin saves a fifth of the label features
and costs 0.1 - 0.15 of both.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from polyparse.decoders.parts import PartType

from . import _kernels as K
from .vocab import FIELD_INDEX

TEMPLATE_SETS = ("full", "reduced")
WITH_CLUSTERS = "+clusters"
"""Suffix of a template set's name that adds the cluster templates of every table
(``"full+clusters"``), for a feature extractor with word clusters."""

_ANCHORS = {"h": K.ANCHOR_H, "m": K.ANCHOR_M, "x": K.ANCHOR_X, "b": K.ANCHOR_B}
_ARC_FIELDS = {"dir": K.ARC_DIR, "dist": K.ARC_DIST, "order": K.ARC_ORDER, "xdist": K.ARC_XDIST,
               "k": K.ARC_K, "len": K.ARC_LEN, "bcount": K.ARC_BCOUNT}

Kernel = Callable[[np.ndarray, np.ndarray, np.ndarray, int, int], tuple[np.ndarray, np.ndarray]]


def stable_hash63(text: str) -> int:
    """A 63-bit hash of ``text`` that is the same in every process (blake2b)."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def parse_atom(atom: str) -> tuple[int, int, int]:
    """``"h+1.upos"`` -> ``(anchor, offset, field)`` codes of :mod:`features._kernels`."""
    where, _, name = atom.partition(".")
    if where == "arc":
        if name not in _ARC_FIELDS:
            raise ValueError(f"bad atom {atom!r}: arc.<{'|'.join(_ARC_FIELDS)}>")
        return K.ANCHOR_ARC, 0, _ARC_FIELDS[name]
    anchor, offset = where[:1], where[1:]
    if anchor not in _ANCHORS or name not in FIELD_INDEX or (offset and anchor == "b"):
        raise ValueError(f"bad atom {atom!r}")
    return _ANCHORS[anchor], int(offset) if offset else 0, FIELD_INDEX[name]


@dataclass(frozen=True)
class Template:
    """One template: its string, parsed atoms, id, and whether it is also conjoined."""

    spec: str
    atoms: tuple[tuple[int, int, int], ...]
    tid: int
    conjoin: bool

    @classmethod
    def parse(cls, table_name: str, spec: str, conjoin: bool) -> "Template":
        atoms = () if spec == "bias" else tuple(parse_atom(a) for a in spec.split())
        if len(atoms) > K.MAX_ATOMS:
            raise ValueError(f"template {spec!r} has more than {K.MAX_ATOMS} atoms")
        if sum(a[0] == K.ANCHOR_B for a in atoms) > 1:
            raise ValueError(f"template {spec!r} has more than one in-between atom")
        return cls(spec, atoms, stable_hash63(f"{table_name}:{spec}"), conjoin)

    @property
    def between(self) -> int:
        """Slot of the in-between atom, -1 if none."""
        return next((i for i, a in enumerate(self.atoms) if a[0] == K.ANCHOR_B), -1)

    def row(self) -> np.ndarray:
        """This template's row of a kernel table (``_kernels`` module docstring)."""
        row = np.zeros(K.TABLE_WIDTH, dtype=np.int64)
        row[:4] = self.tid, int(self.conjoin), len(self.atoms), self.between
        for i, atom in enumerate(self.atoms):
            row[K.COL_ATOMS + 3 * i: K.COL_ATOMS + 3 * i + 3] = atom
        return row


@dataclass(frozen=True)
class PartTemplates:
    """The templates of one part type and the kernel that instantiates them.

    Parameters
    ----------
    name:
        Table name; salts the hash (``salt``) and every template id.
    full:
        Template strings of the ``full`` set, in emission order.
    reduced:
        The subset of ``full`` that forms the ``reduced`` set.
    clusters:
        The templates that read word clusters (Koo, Carreras and Collins 2008), added to
        either set when the words have clusters (``"full" + WITH_CLUSTERS``).
    conjoin:
        Emit every feature also conjoined with direction and binned distance of (h, m).
    kernel:
        ``kernel(ids, rows, table, salt, bits) -> (indptr, indices)``: the generic template
        interpreter :func:`features._kernels.part_features`, or
        :func:`features._kernels.valency_features` for parts whose m column is not a word.
    """

    name: str
    full: tuple[str, ...]
    reduced: tuple[str, ...]
    conjoin: bool
    kernel: Kernel = K.part_features
    clusters: tuple[str, ...] = ()
    templates: dict = field(init=False, repr=False)
    tables: dict = field(init=False, repr=False)

    def __post_init__(self):
        if len(set(self.full)) != len(self.full) or not set(self.reduced) <= set(self.full):
            raise ValueError(f"{self.name}: duplicate templates or reduced not a subset of full")
        if set(self.clusters) & set(self.full) or len(set(self.clusters)) != len(self.clusters):
            raise ValueError(f"{self.name}: duplicate cluster templates")
        templates = {}
        for set_name, specs in zip(TEMPLATE_SETS, (self.full, self.reduced)):
            for name, more in ((set_name, ()), (set_name + WITH_CLUSTERS, self.clusters)):
                templates[name] = tuple(Template.parse(self.name, s, self.conjoin)
                                        for s in specs + more)
        object.__setattr__(self, "templates", templates)
        object.__setattr__(self, "tables", {
            s: np.stack([t.row() for t in ts]) if ts
            else np.zeros((0, K.TABLE_WIDTH), dtype=np.int64)
            for s, ts in templates.items()})

    @property
    def salt(self) -> int:
        return stable_hash63(self.name)

    def features(self, ids: np.ndarray, rows: np.ndarray, template_set: str,
                 bits: int) -> tuple[np.ndarray, np.ndarray]:
        """``(indptr, indices)`` of the parts ``rows`` (``int64 (k, 4)`` index rows)."""
        return self.kernel(ids, rows, self.tables[template_set], self.salt, bits)

    def arc_scores(self, ids: np.ndarray, template_set: str, bits: int,
                   weights: np.ndarray, every: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, labels)`` of every arc of the sentence under ``weights``
        (``(2**bits, L)``), without feature rows: :func:`features._kernels.arc_scores`;
        ``every`` (``(n + 1, n + 1, L)``), if given, receives each output of each arc."""
        return K.arc_scores(ids, self.tables[template_set], self.salt, bits, weights,
                            np.zeros((0, 0, 0)) if every is None else every)


def with_direction(specs: list[str]) -> tuple[str, ...]:
    """Every template with ``arc.dir`` appended (``bias`` becomes ``arc.dir``)."""
    return tuple("arc.dir" if spec == "bias" else f"{spec} arc.dir" for spec in specs)


def _token(a: str) -> list[str]:
    """TurboParser's token templates of the word at ``a`` (an anchor and an offset)."""
    return [f"{a}.upos", f"{a}.xpos", f"{a}.form", f"{a}.lemma", f"{a}.form {a}.upos"]


def _pair(t: str) -> list[str]:
    return [f"h.{t} m.{t}", "h.form m.form", f"h.{t} m.form", f"h.{t} m.form m.{t}",
            f"h.form m.{t}", f"h.form h.{t} m.{t}", f"h.form h.{t} m.form m.{t}"]


def _tag_context(t: str) -> list[str]:
    return [f"h.{t} m.{t} {c}" for c in (
        f"h-1.{t}", f"h+1.{t}", f"m-1.{t}", f"m+1.{t}", f"h-1.{t} m-1.{t}",
        f"h+1.{t} m+1.{t}", f"h-1.{t} m+1.{t}", f"h+1.{t} m-1.{t}",
        f"h-1.{t} h+1.{t} m-1.{t} m+1.{t}")]


def turbo_arc(t: str = "upos") -> list[str]:
    """After TurboParser's ``AddWordPairFeatures`` (large set, no morphology): token
    templates of h, m and their +-1, +-2 neighbours, tag n-grams around h and m, the
    pair templates, the tag-context 3-, 4- and 6-grams, distance, and in-between tags
    with counts; ``t`` is the tag of every template but the token ones."""
    specs = ["bias"] + _token("h") + _token("m")
    for a in ("h-1", "h+1", "m-1", "m+1", "h-2", "h+2", "m-2", "m+2"):
        specs += _token(a)
    for a in ("h", "m"):
        specs += [f"{a}.{t} {a}-1.{t}", f"{a}.{t} {a}-1.{t} {a}-2.{t}",
                  f"{a}.{t} {a}+1.{t}", f"{a}.{t} {a}+1.{t} {a}+2.{t}"]
    hm = f"h.{t} m.{t}"
    return (specs + _pair(t) + _tag_context(t)
            + ["arc.len", f"h.{t} arc.dist", f"m.{t} arc.dist", f"{hm} arc.dist"]
            + [f"b.{t} arc.bcount", f"{hm} b.{t} arc.bcount", f"{hm} b.{t}",
               f"h.form m.form b.{t}", f"h.form m.{t} b.{t}", f"h.{t} m.form b.{t}"])


def koo_arc() -> list[str]:
    """Koo, Carreras and Collins (2008)'s first-order cluster templates (their Table 2
    and section 3.2): the 4-bit, 6-bit and whole bit strings of h and m alone and paired
    (``hc4,mc4``, ``hc6,mc6``, ``hc*,mc*``), the prefixes with the other word's tag or
    form (``hc4,mt``, ``ht,mc4``, ``hc4,mw``, ...), and the hybrids of the POS
    templates: with the distance, the in-between tags and the surrounding tags, the
    4-bit prefixes standing for the tags of h and m. c4 = ``cluster4``, c6 =
    ``cluster6``, c* = ``cluster`` (:data:`features.vocab.CLUSTER_FIELDS`)."""
    specs = [f"{a}.{c}" for a in ("h", "m") for c in ("cluster4", "cluster6", "cluster")]
    specs += [f"h.{c} m.{c}" for c in ("cluster4", "cluster6", "cluster")]
    for c in ("cluster4", "cluster6"):
        specs += [f"h.{c} m.upos", f"h.upos m.{c}", f"h.{c} m.form", f"h.form m.{c}"]
    hm = "h.cluster4 m.cluster4"
    return specs + [f"{hm} arc.dist", "h.cluster6 m.cluster6 arc.dist", f"{hm} b.upos",
                    f"{hm} h+1.upos m-1.upos", f"{hm} h-1.upos m+1.upos"]


ARC_TEMPLATES = PartTemplates(
    name="arc",
    full=with_direction(turbo_arc()),
    reduced=with_direction(["bias", "h.upos", "h.form", "h.form h.upos", "m.upos", "m.form",
                            "m.form m.upos"] + _pair("upos") + _tag_context("upos")[:4]
                           + ["arc.len", "h.upos m.upos arc.dist", "h.upos m.upos b.upos"]),
    conjoin=False,
    clusters=with_direction(koo_arc()),
)

LABEL_TEMPLATES = PartTemplates(
    name="label",
    full=(
        # h and m alone
        "bias", "h.form", "h.lemma", "h.upos", "h.xpos", "m.form", "m.lemma", "m.upos",
        "m.xpos", "m.prefix", "m.suffix", "m.shape", "m.suffix m.upos", "h.suffix h.upos",
        # pairs
        "h.upos m.upos", "h.xpos m.xpos", "h.lemma m.lemma", "h.upos m.form",
        "h.form m.upos", "h.upos m.lemma", "h.lemma m.upos",
        # with the direction
        "arc.dir", "m.form arc.dir", "h.form arc.dir", "arc.dir m.upos", "arc.dir m.lemma",
        "m.shape m.upos arc.dir", "arc.dir h.upos m.upos", "h.upos m.form arc.dir",
        "h.lemma m.lemma arc.dir", "h.xpos m.xpos arc.dir", "h.lemma m.upos arc.dir",
        "h.upos m.suffix arc.dir", "h.form m.form arc.dir", "h.xpos m.form arc.dir",
        "h.form m.xpos arc.dir", "h.form h.upos m.form m.upos arc.dir",
        # distance
        "arc.dir arc.dist", "arc.dir arc.dist m.upos", "arc.dir arc.dist m.xpos",
        "arc.dir arc.dist h.upos m.upos", "arc.dir arc.len m.upos",
        "h.upos m.upos arc.len arc.dir",
        # context of m and h
        "m-1.upos m.upos", "m.upos m+1.upos", "m-1.upos m.upos m+1.upos",
        "m-2.upos m-1.upos m.upos", "m.upos m+1.upos m+2.upos",
        "m-1.form", "m+1.form", "m-1.form m.upos", "m.upos m+1.form", "m-1.upos m.form",
        "m.form m+1.upos", "h.upos m-1.upos m.upos", "h.upos m.upos m+1.upos",
        "h.upos m.upos m-1.upos m+1.upos arc.dir",
        "h-1.upos h.upos", "h.upos h+1.upos", "h-1.upos h.upos m.upos", "h.upos h+1.upos m.upos",
        "h-1.form h.upos", "h.upos h+1.form",
        # in between
        "b.upos arc.dir", "b.upos arc.bcount arc.dir", "h.upos m.upos b.upos",
        "h.upos m.upos b.upos arc.bcount arc.dir",
    ),
    clusters=("m.cluster", "m.cluster6 arc.dir", "h.cluster4 m.cluster4 arc.dir",
              "h.upos m.cluster arc.dir"),
    reduced=(
        "bias", "h.form", "h.upos", "m.form", "m.upos", "m.suffix", "h.upos m.upos",
        "h.upos m.form", "h.form m.upos", "arc.dir", "arc.dir arc.dist",
        "arc.dir h.upos m.upos", "m-1.upos m.upos", "m.upos m+1.upos",
    ),
    conjoin=False,
)


def _conjoined(specs: list[str], atoms: str) -> list[str]:
    """Every template of ``specs`` with the part atoms ``atoms`` appended (``bias``: alone)."""
    return [atoms if spec == "bias" else f"{spec} {atoms}" for spec in specs]


_GRANDPARENT = ["bias",
                "x.upos h.upos m.upos", "x.xpos h.xpos m.xpos",
                "x.form x.upos h.upos m.upos", "h.form x.upos h.upos m.upos",
                "m.form x.upos h.upos m.upos",
                "x.upos m.upos", "x.xpos m.xpos", "x.form m.form", "x.form m.upos",
                "x.upos m.form", "h.upos m.upos"]

def koo_triple(a: str, b: str, c: str) -> list[str]:
    """Koo, Carreras and Collins (2008)'s second-order cluster templates of a part of
    words ``a``, ``b``, ``c`` (h, m and the sibling or grandparent ``x``): the 4- and
    6-bit prefixes of all three (``hc4,mc4,sc4``), each word's tag with the others' 4-bit
    prefixes (``ht,mc4,sc4``), and the pairs of m and x (``mc4,sc4``, ``mc6,sc6``,
    ``mt,sc4``, ``mc4,st``)."""
    triple = [f"{a}.cluster4 {b}.cluster4 {c}.cluster4", f"{a}.cluster6 {b}.cluster6 {c}.cluster6"]
    for tagged in (a, b, c):
        triple.append(" ".join(f"{w}.upos" if w == tagged else f"{w}.cluster4"
                               for w in (a, b, c)))
    m, x = (b, c) if a == "h" else (c, a)
    return triple + [f"{m}.cluster4 {x}.cluster4", f"{m}.cluster6 {x}.cluster6",
                     f"{m}.upos {x}.cluster4", f"{m}.cluster4 {x}.upos"]


GRANDPARENT_TEMPLATES = PartTemplates(
    name="grandparent",
    full=tuple(_conjoined(_GRANDPARENT, "arc.order")),
    reduced=tuple(_conjoined(["bias", "x.upos h.upos m.upos", "x.upos m.upos",
                              "x.form m.form"], "arc.order")),
    conjoin=True,
    clusters=tuple(_conjoined(koo_triple("x", "h", "m"), "arc.order")),
)

_SIBLING = ["bias",
            "h.upos m.upos x.upos", "h.xpos m.xpos x.xpos",
            "h.form m.upos x.upos", "h.upos m.form x.upos", "h.upos m.upos x.form",
            "m.upos x.upos", "m.xpos x.xpos", "m.form x.form", "m.form x.upos", "m.upos x.form",
            "h.upos x.upos", "arc.xdist", "m.upos x.upos arc.xdist"]
_SIBLING_REDUCED = ["bias", "h.upos m.upos x.upos", "m.upos x.upos", "m.form x.form"]

SIBLING_TEMPLATES = PartTemplates(
    name="sibling", full=tuple(_SIBLING), reduced=tuple(_SIBLING_REDUCED), conjoin=True,
    clusters=tuple(koo_triple("h", "m", "x")))

CONSECUTIVE_SIBLING_TEMPLATES = PartTemplates(
    name="consecutive-sibling", full=tuple(_SIBLING), reduced=tuple(_SIBLING_REDUCED),
    conjoin=True, clusters=tuple(koo_triple("h", "m", "x")))

_VALENCY_HEAD = ["bias", "h.upos", "h.xpos", "h.form", "h.lemma", "h.form h.upos"]

VALENCY_TEMPLATES = PartTemplates(
    name="valency",
    full=tuple(_conjoined(_VALENCY_HEAD, "arc.dir arc.k") + _conjoined(_VALENCY_HEAD, "arc.k")),
    reduced=tuple(_conjoined(["bias", "h.upos", "h.form"], "arc.dir arc.k")),
    conjoin=False,
    kernel=K.valency_features,
    clusters=tuple(_conjoined(["h.cluster6", "h.cluster"], "arc.dir arc.k")),
)

NONPROJ_TEMPLATES = PartTemplates(
    name="nonproj",
    full=("bias", "h.upos", "h.xpos", "m.upos", "m.xpos", "h.upos m.upos", "h.xpos m.xpos",
          "h.form h.upos", "m.form m.upos", "h.form m.upos", "h.upos m.form",
          "h.upos b.upos m.upos"),
    reduced=("bias", "h.upos", "m.upos", "h.upos m.upos"),
    conjoin=True,
    clusters=("h.cluster4 m.cluster4", "h.cluster6 m.upos", "h.upos m.cluster6"),
)

PART_TEMPLATES: dict[PartType, PartTemplates] = {
    PartType.ARC: ARC_TEMPLATES,
    PartType.GRANDPARENT: GRANDPARENT_TEMPLATES,
    PartType.SIBLING: SIBLING_TEMPLATES,
    PartType.CONSECUTIVE_SIBLING: CONSECUTIVE_SIBLING_TEMPLATES,
    PartType.VALENCY: VALENCY_TEMPLATES,
    PartType.NONPROJ: NONPROJ_TEMPLATES,
}
"""Templates of every part type; a new type adds one entry (and, if the generic
interpreter does not fit, its own kernel, as VALENCY does)."""
