"""K-best trees under the UD rules and the user's constraints (Lawler's partition,
``decoders.lawler``, ``parser.kbest_constrained``) and confidence under given and
forbidden arcs, against brute force over every labeled tree of sentences of 4-5 words."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from brute_force import all_trees
from polyparse.corpora.sentence import ROOT, Sentence
from polyparse.decoders.lawler import Subproblem, admits_tree, lawler_kbest
from polyparse.learning.confidence import Temperatures, head_marginals
from polyparse.parser.constraints import Constraints
from polyparse.parser.ud_rules import UDRules, check

pytestmark = [pytest.mark.ilp, pytest.mark.xdist_group("kbest_constrained")]

LABELS = ["nsubj", "obj", "punct", "root"]
RULES = UDRules(("root", "too-many-subjects", "too-many-objects", "leaf-punct",
                 "rel-upos-punct", "upos-rel-punct", "punct-is-nonproj",
                 "punct-causes-nonproj"))
SENTENCES = [(["a", "b", ".", "c"], ["NOUN", "VERB", "PUNCT", "NOUN"]),
             (["a", "b", "c", ".", "d"], ["NOUN", "VERB", "NOUN", "PUNCT", "NOUN"]),
             (["a", ",", "b", "."], ["PRON", "PUNCT", "VERB", "PUNCT"])]
CONSTRAINTS = Constraints.parse("forbid upos=VERB -> upos=PUNCT\nforbid-label nsubj form=c\n")


def _parser(sample_train, order: str, seed: int):
    """A parser of random weights (no training: fast) over three labels, so that every
    allowed label of an arc is a candidate of the labeled decoding, with UD rules that
    bite on them."""
    from polyparse.features.extractor import FeatureConfig, FeatureExtractor
    from polyparse.learning.model import LinearModel
    from polyparse.parser.config import PartsConfig, TrainConfig
    from polyparse.parser.pipeline import Parser

    extractor = FeatureExtractor(FeatureConfig.from_json({"bits": 14, "label_bits": 10})
                                 ).fit(sample_train[:40])
    model = LinearModel(extractor, LABELS, parts=PartsConfig(order=order))
    model.weights = np.random.default_rng(seed).normal(size=model.dim)
    decoder = "mst" if order == "1" else "ad3-exact"
    # no time limit: the tests compare the whole k-best list with brute force
    return Parser(model, TrainConfig(tokenizer=None, tagger=None, lemmatizer=None,
                                     decoder=decoder, parts=PartsConfig(order=order),
                                     decoder_options={"time_limit": None}),
                  ud_rules=RULES)


@pytest.fixture(scope="module")
def parsers(sample_train):
    return {order: _parser(sample_train, order, seed)
            for order, seed in (("1", 0), ("2", 1))}


@pytest.fixture(scope="module")
def brute(parsers):
    """:func:`_labeled_trees` of sentence ``i`` of :data:`SENTENCES` under
    :data:`CONSTRAINTS` (``constrained``) and the rules (``rules``), computed once."""
    cache = {}

    def trees(order: str, i: int, constrained: bool, rules: bool = True) -> dict:
        key = (order, i, constrained, rules)
        if key not in cache:
            cache[key] = _labeled_trees(parsers[order], _sentence(*SENTENCES[i]),
                                        CONSTRAINTS if constrained else None, rules)
        return cache[key]

    return trees


def _sentence(forms, upos, heads=None, deprels=None) -> Sentence:
    sentence = Sentence.from_words(forms, upos=upos)
    if heads is not None:
        sentence = sentence.with_tree(np.array(heads), deprels)
    return sentence


def _labeled_trees(parser, sentence, constraints=None, rules=True):
    """Every head structure of ``sentence`` with its best labeling that keeps the rules
    and constraints (if any does), as ``{heads: (score, labels)}``: the model's score of
    the labeled tree, from the parts and label scores over all arcs. With ``rules``, the
    labelings tried are those the rules root (``root`` iff the head is 0) and
    rel-upos-punct allow (``punct`` only on PUNCT), each checked by
    :func:`~parser.ud_rules.check` against all the rules, best first."""
    model = parser.model
    seen = parser.seen(sentence)
    n = len(sentence)
    example = model.example(seen, parts=model.parts(seen, None))
    scores = model.scores(example)
    given, given_labels = (constraints.given(sentence) if constraints
                           else (np.full(n + 1, -1), [None] * (n + 1)))
    forbidden = (constraints.forbidden_arcs(sentence) if constraints
                 else np.zeros((n + 1, n + 1), dtype=bool))
    banned = (constraints.forbidden_labels(sentence, LABELS) if constraints
              else np.zeros((n + 1, len(LABELS)), dtype=bool))
    for m, label in enumerate(given_labels):
        if label is not None:
            banned[m] = np.array(LABELS) != label
    words = np.arange(1, n + 1)
    found = {}
    for heads in all_trees(n, True):
        if forbidden[heads[1:], words].any() or np.any((given[1:] >= 0)
                                                      & (given[1:] != heads[1:])):
            continue
        rows = model.arc_rows(heads, example)
        offsets = (scores.label_scores[rows]
                   - scores.label_scores[rows, scores.labels[rows]][:, None])
        choices = [[i for i, label in enumerate(LABELS) if not banned[m, i] and (
                    not rules or (label == "root") == (heads[m] == 0)
                    and (label != "punct" or sentence.upos[m] == "PUNCT"))]
                   for m in words]
        labelings = np.array(list(itertools.product(*choices)), dtype=np.int64)
        if not labelings.size:
            continue
        values = offsets[words - 1, labelings].sum(axis=1)
        base = float(scores.parts @ example.parts.from_heads(heads))
        for i in np.argsort(-values, kind="stable"):
            tree = sentence.with_tree(heads, [ROOT] + [LABELS[j] for j in labelings[i]])
            broken = check(tree)[1]
            if not rules or not any(broken[rule] for rule in RULES.rules):
                found[tuple(heads)] = (base + values[i], tree.deprels)
                break
    return found


def _assert_kbest(got, found, k):
    """``got`` (``kbest``'s list) is the top ``k`` of ``found`` in order: the same
    scores, each tree with its brute-force score and best labels, distinct trees."""
    expected = sorted((score for score, _ in found.values()), reverse=True)[:k]
    assert len(got) == len(expected)
    np.testing.assert_allclose([score for _, score in got], expected, atol=1e-6)
    assert len({tuple(tree.heads) for tree, _ in got}) == len(got)
    for tree, score in got:
        best, deprels = found[tuple(tree.heads)]
        assert score == pytest.approx(best, abs=1e-6)
        assert tree.deprels == deprels


@pytest.mark.parametrize("order", ["1", "2"])
@pytest.mark.parametrize("constrained", [False, True])
def test_kbest_is_the_k_best_trees_that_keep_the_rules_and_constraints(parsers, brute,
                                                                        order, constrained):
    """Exact decoders (order 1: mst, with its branch and bound on labels; order 2:
    ad3-exact, the ILP on labels): the k best rule- and constraint-satisfying trees of
    brute force, in order, the first ``analyze``'s."""
    parser = parsers[order]
    constraints = CONSTRAINTS if constrained else None
    for i, (forms, upos) in enumerate(SENTENCES):
        sentence = _sentence(forms, upos)
        found = brute(order, i, constrained)
        unconstrained = brute(order, i, False, rules=False)
        assert len(found) < len(unconstrained)            # the rules exclude trees
        got = parser.kbest(sentence, 7, constraints)
        _assert_kbest(got, found, 7)
        first = parser.analyze(sentence, constraints=constraints).sentence
        assert got[0][0].heads.tolist() == first.heads.tolist()
        assert got[0][0].deprels == first.deprels


def test_kbest_keeps_the_given_heads_and_labels(parsers):
    parser = parsers["1"]
    forms, upos = SENTENCES[1]
    given = _sentence(forms, upos, [-1, 2, 0, -1, -1, -1],
                      ["<root>", "_", "root", "_", "punct", "_"])
    constraints = Constraints(keep_given=True)
    got = parser.kbest(given, 6, constraints)
    _assert_kbest(got, _labeled_trees(parser, given, constraints), 6)
    for tree, _ in got:
        assert tree.heads[1] == 2 and tree.heads[2] == 0 and tree.deprels[4] == "punct"


@pytest.mark.parametrize("order, decoder", [("1", "mst"), ("1", "lp"), ("1", "eisner"),
                                            ("1", "ilp"), ("2", "ad3-exact"), ("2", "ad3"),
                                            ("2", "lp")])
@pytest.mark.parametrize("constrained", [False, True])
def test_the_first_tree_is_parses_with_every_decoder(parsers, brute, order, decoder,
                                                     constrained):
    """With relaxations too (approximate k-best): distinct trees, each with the model's
    score of its labeled tree, that keep the rules and constraints, the first the tree
    ``parse`` writes."""
    parser = parsers[order]
    constraints = CONSTRAINTS if constrained else None
    parser.use_decoder(decoder, time_limit=None)
    try:
        for i, (forms, upos) in enumerate(SENTENCES):
            sentence = _sentence(forms, upos)
            found = brute(order, i, constrained)
            got = parser.kbest(sentence, 4, constraints)
            parsed = next(parser.parse([sentence], constraints=constraints))
            assert got[0][0].heads.tolist() == parsed.heads.tolist()
            assert got[0][0].deprels == parsed.deprels
            assert len({tuple(tree.heads) for tree, _ in got}) == len(got) == min(4, len(found))
            for tree, score in got:
                assert tuple(tree.heads) in found     # keeps the rules and constraints
                if decoder != "eisner":               # eisner: projective trees only
                    assert score <= found[tuple(tree.heads)][0] + 1e-6
                    if tree.deprels == found[tuple(tree.heads)][1]:
                        assert score == pytest.approx(found[tuple(tree.heads)][0], abs=1e-6)
    finally:
        parser.use_decoder()


def test_the_decoders_own_kbest_equals_the_partition(parsers, brute):
    """Without rules or constraints, mst's (Camerini) and ilp's (no-good cuts) k best
    are what the partition gives."""
    from polyparse.parser.kbest_constrained import partitioned_kbest

    for order, decoder in (("1", "mst"), ("2", "ilp")):
        parser = parsers[order]
        parser.use_decoder(decoder, time_limit=None)
        parser.use_ud_rules = False
        try:
            for i, (forms, upos) in enumerate(SENTENCES):
                sentence = _sentence(forms, upos)
                fast = parser.kbest(sentence, 8)
                general = partitioned_kbest(parser, sentence, 8, None)
                assert [tuple(t.heads) for t, _ in fast] == [tuple(r.heads) for r in general]
                np.testing.assert_allclose([s for _, s in fast], [r.score for r in general],
                                           atol=1e-6)
                _assert_kbest(fast, brute(order, i, False, rules=False), 8)
        finally:
            parser.use_ud_rules = True
            parser.use_decoder()


def test_lawler_partition_enumerates_every_tree_once_in_order():
    """The partition alone, with brute force as the oracle of each subproblem: every
    tree of 4 words, once, best first; forced and forbidden arcs honored."""
    rng = np.random.default_rng(4)
    n = 4
    S = rng.normal(size=(n + 1, n + 1))
    trees = all_trees(n, True)
    words = np.arange(1, n + 1)
    scores = S[trees[:, 1:], words].sum(axis=1)

    class Tree:
        def __init__(self, i):
            self.heads, self.score = trees[i], float(scores[i])

    def solve(sub: Subproblem):
        allowed = sub.allowed()
        inside = np.flatnonzero(allowed[trees[:, 1:], words].all(axis=1))
        if not inside.size:
            assert not admits_tree(allowed, True)
            return None
        assert admits_tree(allowed, True)
        return Tree(inside[np.argmax(scores[inside])])

    whole = Subproblem.whole(n)
    got = lawler_kbest(solve(whole), solve, 1000, whole)
    assert len(got) == len(trees)
    np.testing.assert_allclose([t.score for t in got], np.sort(scores)[::-1])
    forced = whole.forced.copy()
    forced[2] = 0
    part = Subproblem(forced, whole.forbidden)
    got = lawler_kbest(solve(part), solve, 1000, part)
    assert len(got) == int((trees[:, 2] == 0).sum())
    assert all(t.heads[2] == 0 for t in got)


def test_confidence_marginals_are_sums_over_the_allowed_trees(parsers):
    """HeadProb under given and forbidden arcs is the brute-force marginal over the
    trees that have the given arcs and no forbidden one, and the comment names what it
    does not account for."""
    parser = parsers["1"]
    forms, upos = SENTENCES[1]
    sentence = _sentence(forms, upos, [-1, 2, -1, -1, -1, -1],
                         ["<root>", "_", "_", "_", "_", "_"])
    constraints = Constraints.parse("forbid upos=VERB -> upos=PUNCT\n", keep_given=True)
    t = Temperatures(3.0, 2.0)
    n = len(sentence)
    words = np.arange(1, n + 1)
    S, _ = parser.model.arc_scores(parser.seen(sentence))
    trees = all_trees(n, True)
    forbidden = constraints.forbidden_arcs(sentence)
    keep = ~forbidden[trees[:, 1:], words].any(axis=1) & (trees[:, 1] == 2)
    log_w = (S / t.head)[trees[keep, 1:], words].sum(axis=1)
    p = np.exp(log_w - logsumexp(log_w))
    expected = np.zeros((n + 1, n + 1))
    for tree, weight in zip(trees[keep], p):
        expected[tree[1:], words] += weight
    for rules in (True, False):
        parser.use_ud_rules = rules
        try:
            analysis = parser.analyze(sentence, t, constraints)
        finally:
            parser.use_ud_rules = True
        heads = analysis.sentence.heads
        assert heads[1] == 2 and not forbidden[heads[1:], words].any()
        np.testing.assert_allclose(analysis.head_probs[1:], expected[heads[1:], words],
                                   atol=1e-9)
        assert analysis.unaccounted == (("UD rules",) if rules else ())
    # unmasked they would differ: the masks matter
    free = head_marginals(S, t.head, True)
    assert not np.allclose(free[heads[1:], words], expected[heads[1:], words])
    labeled = Constraints.parse("forbid-label nsubj form=c\n")
    analysis = parser.analyze(_sentence(forms, upos), t, labeled)
    assert analysis.unaccounted == ("UD rules", "label constraints")
    assert [line for line in analysis.annotated(False).lines if line.startswith("#")][-1] == (
        "# confidence = matrix-tree marginals; not accounted for: UD rules, "
        "label constraints")


def test_draw_and_serve_give_k_best_trees_with_an_order_2_relaxation(parsers):
    """``draw --lp --kbest 3`` on an order-2 model (refused before: ad3-exact and lp have
    no k-best of their own): three panels, the first the tree ``parse`` writes."""
    from polyparse.parser.views import Views, parsed_figure

    parser = parsers["2"]
    sentence = _sentence(*SENTENCES[1])
    views = Views(lp=True, kbest=3)
    views.check(parser)
    drawn = parsed_figure(parser, sentence, views)
    assert len(drawn.parsed) == 3 and len(drawn.figure.rows[0]) == 3
    assert drawn.parsed[0].heads.tolist() == parser.parse_one(sentence).heads.tolist()
    assert "# kbest_rank = 1" in drawn.parsed[0].lines
