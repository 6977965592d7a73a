"""UD's validator rules on HEAD and DEPREL, as constraints of labeled decoding (issue 14).

The rules are those of UD's validator (``udvalidate --level 3``, udtools 0.2.9,
``udtools/level3.py``) that concern only the tree and its labels given the words'
tags, named by the validator's own rule ids:

* ``0-is-not-root`` / ``root-is-not-0`` (here one rule, ``root``): a word hangs from 0
  iff its relation is ``root``;
* ``too-many-subjects``: at most one child whose universal relation contains ``subj``
  (nsubj, csubj and their subtypes) per head, ``[nc]subj:outer`` not counted
  (``check_single_subject``; the validator's MISC ``Subject=Outer`` escape cannot be
  predicted and is not used);
* ``too-many-objects``: at most one ``obj`` child per head (``check_single_object``);
* ``leaf-mark-case``, ``leaf-aux-cop``, ``leaf-det``, ``leaf-clf``, ``leaf-cc``,
  ``leaf-fixed``, ``leaf-goeswith``, ``leaf-punct``: function words take only the child
  relations :data:`LEAF_CHILDREN` allows (``check_functional_leaves``), with its
  exceptions: a negative ``advmod`` (UPOS PART or ADV, ``Polarity=Neg``) under any but
  ``punct``, and ``appos``/``acl``/``nmod`` under a ``det`` with ``Poss=Yes``. The
  validator also lets a non-projective function word have ``punct`` children; that
  exception is not made here (stricter);
* ``punct-is-nonproj``, ``punct-causes-nonproj``: ``check_projective_punctuation``
  (:func:`decoders.labeled.projectivity_violations`, enforced by cuts);
* ``right-to-left-conj``, ``-fixed``, ``-flat``, ``-goeswith``, ``-appos``: the head of
  these precedes the dependent (``check_left_to_right_relations``);
* ``rel-upos-det``, ``-nummod``, ``-advmod``, ``-expl``, ``-aux``, ``-cop``, ``-case``,
  ``-mark``, ``-cc``, ``-punct``, ``upos-rel-punct``, ``rel-upos-fixed``: relation and
  UPOS (ExtPos when given) agree (``check_upos_vs_deprel``; the ``advmod`` escape for a
  word with a ``goeswith`` child is not made: stricter);
* ``goeswith-gap``, ``fixed-gap``: the words between a head and its goeswith (fixed)
  child are its goeswith (fixed) children (for fixed: or punctuation)
  (``check_goeswith_span``, ``check_fixed_span``).

A treebank's training data may break some of them: :func:`learn_rules` keeps the rules
that at most :data:`TOLERANCE` of their relevant words break, and the model file stores
that list (:class:`UDRules`). :func:`compile_rules` turns the list, for one sentence,
into the index sets of :class:`~decoders.labeled.LabeledProblem`; the decoders know
nothing of UD.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from polyparse.corpora.sentence import Sentence
from polyparse.decoders.labeled import ChildRule, Contiguous, projectivity_violations

LEAF_CHILDREN = {
    "mark": "advmod obl goeswith fixed reparandum conj cc punct",
    "case": "advmod obl goeswith fixed reparandum conj cc punct",
    "aux": "goeswith fixed reparandum conj cc punct",
    "cop": "goeswith fixed reparandum conj cc punct",
    "det": "det case advmod obl clf goeswith fixed flat compound reparandum discourse "
           "parataxis conj cc punct",
    "clf": "advmod obl goeswith fixed reparandum conj cc punct",
    "cc": "goeswith fixed reparandum conj punct",
    "fixed": "goeswith reparandum conj punct",
    "goeswith": "",
    "punct": "punct",
}
"""The child relations each function relation allows (the validator's
``check_functional_leaves``)."""
LEAF_CHILDREN = {rel: frozenset(children.split()) for rel, children in LEAF_CHILDREN.items()}

LEAF_RULE = {"mark": "leaf-mark-case", "case": "leaf-mark-case", "aux": "leaf-aux-cop",
             "cop": "leaf-aux-cop", "det": "leaf-det", "clf": "leaf-clf", "cc": "leaf-cc",
             "fixed": "leaf-fixed", "goeswith": "leaf-goeswith", "punct": "leaf-punct"}

LEFT_HEADED = ("conj", "fixed", "flat", "goeswith", "appos")

REL_UPOS = {
    # rule id: (relation, pattern, True if UPOS must match it, False if must not)
    "rel-upos-det": ("det", r"^(DET|PRON)", True),
    "rel-upos-nummod": ("nummod", r"^(NUM|NOUN|SYM)$", True),
    "rel-upos-advmod": ("advmod", r"^(ADV|ADJ|CCONJ|DET|PART|SYM)", True),
    "rel-upos-expl": ("expl", r"^(PRON|DET|PART)$", True),
    "rel-upos-aux": ("aux", r"^(AUX)", True),
    "rel-upos-cop": ("cop", r"^(AUX|PRON|DET|SYM)", True),
    "rel-upos-case": ("case", r"^(PROPN|ADJ|PRON|DET|NUM|AUX)", False),
    "rel-upos-mark": ("mark", r"^(NOUN|PROPN|ADJ|PRON|DET|NUM|AUX|INTJ)", False),
    "rel-upos-cc": ("cc", r"^(NOUN|PROPN|ADJ|PRON|DET|NUM|VERB|AUX|INTJ)", False),
    "rel-upos-punct": ("punct", r"^PUNCT$", True),
}
"""The validator's ``check_upos_vs_deprel``: relation -> the UPOS it needs (True) or
excludes (False)."""

REL_UPOS_RULE = {relation: rule for rule, (relation, _, _) in REL_UPOS.items()}
"""Relation -> the rel-upos rule that concerns it."""

RULES = ("root", "too-many-subjects", "too-many-objects",
         "leaf-mark-case", "leaf-aux-cop", "leaf-det", "leaf-clf", "leaf-cc", "leaf-fixed",
         "leaf-goeswith", "leaf-punct", "punct-is-nonproj", "punct-causes-nonproj",
         *(f"right-to-left-{rel}" for rel in LEFT_HEADED),
         *REL_UPOS, "upos-rel-punct", "rel-upos-fixed", "goeswith-gap", "fixed-gap")
"""Every rule id this module enforces, in the order tables list them."""

TOLERANCE = 0.001
"""A rule is learned when at most this share of the words it concerns break it in the
training data (0.1%)."""


@lru_cache(maxsize=4096)
def udeprel(deprel: str) -> str:
    """The universal part of a relation: ``nsubj:pass`` -> ``nsubj``."""
    return deprel.split(":", 1)[0]


def feats_of(text: str) -> dict:
    """``"A=B|C=D"`` -> ``{"A": "B", "C": "D"}`` (``_`` -> empty)."""
    if text in ("", "_"):
        return {}
    return dict(item.split("=", 1) for item in text.split("|") if "=" in item)


@lru_cache(maxsize=4096)
def is_subject(deprel: str) -> bool:
    """Counted by too-many-subjects: ``subj`` in the universal relation, not
    ``[nc]subj:outer``."""
    return "subj" in udeprel(deprel) and not re.match(r"^[nc]subj:outer$", deprel)


def _tag(upos: str, feats: dict) -> str:
    return feats.get("ExtPos") or upos


@lru_cache(maxsize=65536)
def upos_rules_broken(rel: str, tag: str) -> tuple[str, ...]:
    """The rule ids (rel-upos-*, upos-rel-punct, rel-upos-fixed) that relation ``rel``
    (universal part) breaks on a word tagged ``tag`` (its ExtPos, else UPOS); the
    validator reports each of them."""
    broken = [rule for rule, (relation, pattern, must) in REL_UPOS.items()
              if rel == relation and bool(re.match(pattern, tag)) != must]
    if tag == "PUNCT" and rel not in ("punct", "root"):
        broken.append("upos-rel-punct")
    if tag == "PROPN" and rel == "fixed":
        broken.append("rel-upos-fixed")
    return tuple(broken)


def negative(upos: str, feats: dict) -> bool:
    """A negative word (UPOS PART or ADV, ``Polarity=Neg``): as ``advmod`` it may hang
    from any function word but ``punct`` (:func:`leaf_allows`)."""
    return upos in ("PART", "ADV") and feats.get("Polarity") == "Neg"


@lru_cache(maxsize=4096)
def word_tags(upos: str, feats: str) -> tuple[str, bool, bool]:
    """``(tag, negative, possessive)`` of a word with these UPOS and FEATS columns: its
    ExtPos (else UPOS), :func:`negative`, ``Poss=Yes``."""
    parsed = feats_of(feats)
    return _tag(upos, parsed), negative(upos, parsed), parsed.get("Poss") == "Yes"


def _word_columns(sentence: Sentence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`word_tags` of every word 0..n as three arrays (0, the root: no tag)."""
    tags = [("", False, False), *map(word_tags, sentence.upos[1:], sentence.feats[1:])]
    return (np.array([t for t, _, _ in tags]), np.array([g for _, g, _ in tags]),
            np.array([p for _, _, p in tags]))


@lru_cache(maxsize=4096)
def leaf_allows(parent_rel: str, possessive: bool, child_rel: str,
                negative_child: bool) -> bool:
    """Whether a word labeled ``parent_rel`` (a function relation; ``Poss=Yes`` if
    ``possessive``) may have a child labeled ``child_rel`` (universal parts), the child
    :func:`negative` or not."""
    if parent_rel != "punct" and child_rel == "advmod" and negative_child:
        return True
    if parent_rel == "det" and possessive and child_rel in ("appos", "acl", "nmod"):
        return True
    return child_rel in LEAF_CHILDREN[parent_rel]


def check(sentence: Sentence) -> tuple[Counter, Counter]:
    """``(relevant, broken)``: per rule id, how many words (heads, for the rules on
    children; sentences, for ``root``) of ``sentence``'s tree the rule concerns, and how
    many break it. Every word needs a head and a relation."""
    n = len(sentence)
    heads = np.asarray(sentence.heads, dtype=np.int64)
    head = heads[1:].tolist()
    # per word 0..n (0: the root, concerned by nothing)
    rels = ["", *map(udeprel, sentence.deprels[1:])]
    rel = np.array(rels)
    tag, neg, poss = _word_columns(sentence)
    relevant, broken = Counter(root=1), Counter()
    broken["root"] += bool(np.any((heads[1:] == 0) != (rel[1:] == "root")))
    subject = np.array([False, *map(is_subject, sentence.deprels[1:])])
    for rule, child in (("too-many-subjects", subject), ("too-many-objects", rel == "obj")):
        count = np.bincount(heads[child], minlength=n + 1)
        relevant[rule] += int(np.count_nonzero(count))
        broken[rule] += int(np.count_nonzero(count > 1))
    relevant.update(LEAF_RULE[r] for r in rels if r in LEAF_RULE)
    broken.update(LEAF_RULE[rels[h]] for h in {   # function words with a child not allowed
        h for c, h in enumerate(head, start=1) if rels[h] in LEAF_RULE
        and not leaf_allows(rels[h], bool(poss[h]), rels[c], bool(neg[c]))})
    relevant.update(f"right-to-left-{r}" for r in rels if r in LEFT_HEADED)
    broken.update(f"right-to-left-{r}" for m, (r, h) in enumerate(zip(rels[1:], head), start=1)
                  if r in LEFT_HEADED and m < h)
    relevant.update(REL_UPOS_RULE[r] for r in rels if r in REL_UPOS_RULE)
    relevant["upos-rel-punct"] += int(np.count_nonzero(tag == "PUNCT"))
    rule = ["", *map(upos_rules_broken, rels[1:], tag[1:].tolist())]
    broken.update(r for word in rule for r in word)
    propn = tag == "PROPN"
    relevant["rel-upos-fixed"] += int(np.count_nonzero(propn))
    fixed_child = np.zeros(n + 1, dtype=bool)
    fixed_child[heads[rel == "fixed"]] = True
    broken["rel-upos-fixed"] += sum("rel-upos-fixed" not in rule[m]
                                    for m in np.flatnonzero(propn & fixed_child).tolist())
    for rel_gap, gap_rule in (("goeswith", "goeswith-gap"), ("fixed", "fixed-gap")):
        member = rel == rel_gap
        for h in np.unique(heads[member]).tolist():
            if h == 0:
                continue
            relevant[gap_rule] += 1
            between = np.arange(h + 1, np.flatnonzero(member & (heads == h)).max())
            held = (member[between] & (heads[between] == h)) | (
                (rel_gap == "fixed") & (rel[between] == "punct"))
            broken[gap_rule] += bool(not held.all())
    is_punct = rel == "punct"
    relevant["punct-is-nonproj"] += int(np.count_nonzero(is_punct))
    relevant["punct-causes-nonproj"] += int(np.count_nonzero(is_punct))
    broken.update(rule for rule, _, _ in projectivity_violations(heads, is_punct))
    return relevant, broken


@dataclass(frozen=True)
class UDRules:
    """The rules a model enforces (a tuple of rule ids of :data:`RULES`), with the
    training counts they were learned from (``{rule: [relevant, broken]}``)."""

    rules: tuple[str, ...] = ()
    counts: dict | None = None

    def to_json(self) -> dict:
        return {"rules": list(self.rules), "counts": self.counts or {},
                "tolerance": TOLERANCE}

    @classmethod
    def from_json(cls, data: dict | None) -> "UDRules":
        """From a model file's ``ud_rules`` entry; None (an older file): no rules."""
        if not data:
            return cls()
        unknown = [rule for rule in data.get("rules", []) if rule not in RULES]
        if unknown:
            raise ValueError(f"unknown UD rule(s) {', '.join(unknown)}")
        return cls(tuple(data.get("rules", [])), dict(data.get("counts", {})))


def is_ud(sentences: Sequence[Sentence]) -> bool:
    """Whether a treebank looks like UD: ``root`` relations and UPOS tags."""
    return any("root" in s.deprels for s in sentences) and any(
        u not in ("_", "") for s in sentences for u in s.upos[1:])


def learn_rules(sentences: Sequence[Sentence], tolerance: float = TOLERANCE) -> UDRules:
    """The rules of :data:`RULES` that at most ``tolerance`` of their relevant words in
    ``sentences`` (gold trees) break; none for a treebank that is not UD
    (:func:`is_ud`)."""
    if not is_ud(sentences):
        return UDRules()
    relevant, broken = Counter(), Counter()
    for sentence in sentences:
        if len(sentence) == 0 or np.any(sentence.heads[1:] < 0):
            continue
        r, b = check(sentence)
        relevant.update(r)
        broken.update(b)
    kept = tuple(rule for rule in RULES if broken[rule] <= tolerance * relevant[rule])
    return UDRules(kept, {rule: [int(relevant[rule]), int(broken[rule])] for rule in RULES})


@lru_cache(maxsize=4096)
def _upos_allows(rels: tuple[str, ...], tag: str, rules: frozenset) -> np.ndarray:
    """``bool (len(rels),)``: the relations a word tagged ``tag`` may take under the
    rel-upos rules of ``rules`` (:func:`upos_rules_broken`; read-only, shared)."""
    allowed = np.array([rules.isdisjoint(upos_rules_broken(rel, tag)) for rel in rels])
    allowed.flags.writeable = False
    return allowed


def label_masks(sentence: Sentence, labels: Sequence[str], arcs: np.ndarray,
                rules: frozenset) -> np.ndarray:
    """``bool (n_arcs, n_labels)``: the labels each candidate arc ``(h, m)`` may take
    under the arc-local ``rules`` (root, right-to-left-*, rel-upos-*, upos-rel-punct,
    rel-upos-fixed)."""
    rels = tuple(udeprel(label) for label in labels)
    tag, _, _ = _word_columns(sentence)
    by_word = np.ones((len(sentence) + 1, len(labels)), dtype=bool)
    for m, word_tag in enumerate(tag[1:].tolist(), start=1):
        by_word[m] = _upos_allows(rels, word_tag, rules)
    allowed = by_word[arcs[:, 1]].copy()
    h, m = arcs[:, 0], arcs[:, 1]
    rel_arr = np.array(rels)
    if "root" in rules:
        is_root = rel_arr == "root"
        allowed &= np.where((h == 0)[:, None], is_root[None, :], ~is_root[None, :])
    for rel in LEFT_HEADED:
        if f"right-to-left-{rel}" in rules:
            allowed[np.ix_(h > m, rel_arr == rel)] = False
    if "rel-upos-fixed" in rules:
        allowed[np.ix_(tag[h] == "PROPN", rel_arr == "fixed")] = False
    return allowed


def compile_rules(sentence: Sentence, labels: Sequence[str], rules: frozenset,
                  arcs: np.ndarray, candidates: np.ndarray) -> dict:
    """The non-local constraints of ``rules`` for ``sentence`` as keyword arguments of
    :class:`~decoders.labeled.LabeledProblem` (``at_most_one``, ``child_rules``,
    ``contiguous``, ``projective``), over the candidate arcs ``arcs`` (``(n_arcs, 2)``)
    and their candidate label ids ``candidates`` (``(n_arcs, K)``, -1 unused)."""
    rels = np.array([udeprel(label) for label in labels])
    ids = np.arange(len(labels))
    sets = []
    if "too-many-subjects" in rules:
        sets.append(np.array([i for i, label in enumerate(labels) if is_subject(label)],
                             dtype=np.int64))
    if "too-many-objects" in rules:
        sets.append(ids[rels == "obj"])
    contiguous: tuple = ()
    for rel_gap, rule in (("goeswith", "goeswith-gap"), ("fixed", "fixed-gap")):
        if rule in rules:
            also = tuple(int(i) for i in ids[rels == "punct"]) if rel_gap == "fixed" else ()
            contiguous += tuple(Contiguous(int(i), also) for i in ids[rels == rel_gap])
    projective = ids[rels == "punct"] if {"punct-is-nonproj", "punct-causes-nonproj"} & rules \
        else np.zeros(0, dtype=np.int64)
    return {"at_most_one": tuple(s for s in sets if s.size),
            "child_rules": child_rules(sentence, labels, rules, arcs, candidates),
            "contiguous": contiguous, "projective": projective}


@lru_cache(maxsize=1024)
def _leaf_children(rels: tuple[str, ...], parent_rel: str, possessive: bool) -> np.ndarray:
    """``bool (len(rels),)``: the child relations :func:`leaf_allows` lets a word labeled
    ``parent_rel`` (with ``Poss=Yes`` if ``possessive``) have, but for the negative
    ``advmod`` exception, which depends on the child (read-only, shared)."""
    allowed = np.array([leaf_allows(parent_rel, possessive, rel, False) for rel in rels])
    allowed.flags.writeable = False
    return allowed


def child_rules(sentence: Sentence, labels: Sequence[str], rules: frozenset,
                arcs: np.ndarray, candidates: np.ndarray) -> tuple[ChildRule, ...]:
    """The leaf-* rules of ``rules`` as :class:`~decoders.labeled.ChildRule` s: one per
    word m and function label that some candidate arc into m has."""
    rels = tuple(udeprel(label) for label in labels)
    _, neg, poss = _word_columns(sentence)
    function = np.array([rel in LEAF_RULE and LEAF_RULE[rel] in rules for rel in rels])
    a, k = np.nonzero(candidates >= 0)
    label = candidates[a, k]
    keep = function[label]
    present = np.zeros((len(sentence) + 1, len(labels)), dtype=bool)
    present[arcs[a[keep], 1], label[keep]] = True
    # leaf_allows for every child: the relation's own list, and advmod under any but
    # punct for a negative child
    advmod = np.array([rel == "advmod" for rel in rels])
    out = []
    cache: dict = {}
    for m, label in np.argwhere(present).tolist():     # by word, then label id
        rel = rels[label]
        key = (rel, bool(poss[m]))
        if key not in cache:
            own = _leaf_children(rels, *key)
            cache[key] = own[None, :] | (neg[:, None] & advmod[None, :] & (rel != "punct"))
        out.append(ChildRule(m, label, cache[key]))
    return tuple(out)
