"""UD validator rules and the user's constraints (issue 14): each rule enforced, given
arcs kept, infeasible constraints and bad constraints files reported, results unchanged
without constraints, and udvalidate's own count on a real sample."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from collections import Counter

import numpy as np
import pytest

from polyparse.corpora.conllu_io import read_treebank
from polyparse.corpora.sentence import Sentence
from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.labeled import LabeledProblem, best_labels, solve_labeled
from polyparse.decoders.mst import MSTDecoder
from polyparse.decoders import Budget
from polyparse.learning.confidence import Temperatures
from polyparse.parser.constrained import LABEL_CANDIDATES, labels_under_rules
from polyparse.parser.constraints import (ConstraintError, Constraints,
                                          ConstraintsFileError)
from polyparse.parser.ud_rules import (RULES, check, compile_rules, label_masks,
                                       learn_rules)

from conftest import SAMPLE, ud_file

pytestmark = pytest.mark.ilp

UPOS = ["DET", "NOUN", "PUNCT", "VERB", "ADP", "PROPN", "AUX", "CCONJ", "PRON", "NUM"]
LABELS = ["root", "nsubj", "csubj", "obj", "punct", "det", "case", "fixed", "goeswith",
          "conj", "flat", "appos", "aux", "cc", "advmod", "nummod", "mark", "cop", "expl",
          "clf", "obl", "nmod", "nsubj:outer"]


def _sentence(upos: list[str]) -> Sentence:
    return Sentence.from_words([f"w{i}" for i in range(1, len(upos) + 1)], upos=upos)


def _labeled(sentence, heads, label_ids):
    return sentence.with_tree(heads, ["<root>"] + [LABELS[i] for i in label_ids[1:]])


def _decode(sentence, rng, rules):
    """(unconstrained, constrained) labeled trees under random scores."""
    n = len(sentence)
    parts = build_parts(n)
    arcs = parts.arcs
    scores = rng.normal(size=len(parts)) * 2.0
    label_scores = rng.normal(size=(arcs.shape[0], len(LABELS)))
    plain = MSTDecoder().decode(parts, scores)
    rows = [int(np.flatnonzero((arcs[:, 0] == plain.heads[m]) & (arcs[:, 1] == m))[0])
            for m in range(1, n + 1)]
    free = _labeled(sentence, plain.heads, [-1] + list(label_scores[rows].argmax(axis=1)))
    allowed = label_masks(sentence, LABELS, arcs, rules)
    base = best_labels(label_scores, allowed, k=3)
    problem = LabeledProblem(base.labels, base.offsets,
                             **compile_rules(sentence, LABELS, rules, arcs, base.labels))
    got = solve_labeled(parts, scores, problem, single_root=True)
    return free, _labeled(sentence, got.result.heads, got.labels)


@pytest.mark.parametrize("rule", [r for r in RULES if r not in ("leaf-clf",)])
def test_each_rule_enforced(rule):
    """Random sentences until the unconstrained parse breaks ``rule``; the constrained
    parse breaks no rule at all."""
    rules = frozenset(RULES)
    for seed in range(400):
        rng = np.random.default_rng(seed)
        upos = list(rng.choice(UPOS, size=6))
        sentence = _sentence(upos)
        n = len(sentence)
        # cheap pre-check: does a random unconstrained parse break the rule?
        parts = build_parts(n)
        scores = rng.normal(size=len(parts)) * 2.0
        label_scores = rng.normal(size=(parts.arcs.shape[0], len(LABELS)))
        plain = MSTDecoder().decode(parts, scores)
        arcs = parts.arcs
        rows = [int(np.flatnonzero((arcs[:, 0] == plain.heads[m]) & (arcs[:, 1] == m))[0])
                for m in range(1, n + 1)]
        free = _labeled(sentence, plain.heads,
                        [-1] + list(label_scores[rows].argmax(axis=1)))
        if not check(free)[1][rule]:
            continue
        _, constrained = _decode(_sentence(upos), np.random.default_rng(seed), rules)
        broken = check(constrained)[1]
        assert sum(broken.values()) == 0, (rule, seed, dict(broken))
        return
    pytest.fail(f"no random sentence broke {rule}")


@pytest.mark.parametrize("seed", range(3))
def test_labels_under_rules_are_the_best_labels_of_the_tree_that_keep_them(seed):
    """The labels of a fixed tree under the rules (what the second-stage labeler's
    labels become when they break one) against every labeling of the tree by each arc's
    three best allowed labels: the best that breaks no rule, or none when all break one."""
    rules = frozenset(RULES)
    rng = np.random.default_rng(seed)
    found = 0
    while found < 3:
        sentence = _sentence(list(rng.choice(UPOS, size=6)))
        n = len(sentence)
        parts = build_parts(n)
        heads = MSTDecoder().decode(parts, rng.normal(size=len(parts))).heads
        scores = rng.normal(size=(n, len(LABELS)))
        if not sum(check(_labeled(sentence, heads, [-1, *scores.argmax(axis=1)]))[1].values()):
            continue                # the best labels keep the rules: nothing to decide
        found += 1
        arcs = np.stack([heads[1:], np.arange(1, n + 1)], axis=1)
        allowed = label_masks(sentence, LABELS, arcs, rules)
        candidates = best_labels(scores, allowed, k=LABEL_CANDIDATES).labels
        best, best_score = None, -np.inf
        for ids in itertools.product(*[[l for l in row if l >= 0] for row in candidates]):
            score = scores[np.arange(n), ids].sum()
            if score > best_score and not sum(
                    check(_labeled(sentence, heads, [-1, *ids]))[1].values()):
                best, best_score = ids, score
        got = labels_under_rules(sentence, heads, scores, LABELS, rules, True, Budget(None))
        if best is None:
            assert got is None
        else:
            assert got is not None
            assert scores[np.arange(n), got].sum() == pytest.approx(best_score)
            assert not sum(check(_labeled(sentence, heads, [-1, *got]))[1].values())


def test_learned_rules_skip_broken_ones(sample_train):
    rules = learn_rules(sample_train)
    assert "too-many-subjects" in rules.rules
    broken = [s.with_tree(s.heads, [d if d != "nsubj" else "obj" for d in s.deprels])
              for s in sample_train[:50]]
    relearned = learn_rules(broken)
    assert "too-many-objects" not in relearned.rules         # broken in many sentences
    assert relearned.counts["too-many-objects"][1] > 0
    conllx = [s.with_tree(s.heads, [d if d != "root" else "ROOT" for d in s.deprels])
              for s in sample_train[:5]]
    assert learn_rules(conllx).rules == ()                    # not UD: no rules


# -- constraints files ----------------------------------------------------------------

def test_constraints_file(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("# comment\n\nforbid ROOT -> upos=NOUN  # no nominal root\n"
                    "forbid form=the -> *\nforbid-label nsubj upos=PRON\nforbid-label iobj\n")
    c = Constraints.read(path)
    assert len(c.forbid_arcs) == 2 and len(c.forbid_labels) == 2
    s = _sentence(["DET", "NOUN", "VERB"])
    s = Sentence.from_words(["the", "dog", "barks"], upos=["DET", "NOUN", "VERB"])
    forbidden = c.forbidden_arcs(s)
    assert forbidden[0, 2] and forbidden[1, 3] and not forbidden[0, 3]


@pytest.mark.parametrize("line, what", [
    ("forbid a b", "expected 'forbid HEAD -> DEP'"),
    ("forbid a -> ROOT", "ROOT cannot be a dependent"),
    ("forbid-label", "expected 'forbid-label LABEL [DEP]'"),
    ("forbid-label nsubj case=Nom", "unknown word field 'case'"),
    ("allow a -> b", "unknown rule 'allow'"),
])
def test_constraints_file_errors_name_file_and_line(tmp_path, line, what):
    path = tmp_path / "c.txt"
    path.write_text(f"# ok\nforbid-label iobj\n{line}\n")
    with pytest.raises(ConstraintsFileError, match="^" + re.escape(f"{path}:3: {what}")):
        Constraints.read(path)


# -- through the parser ---------------------------------------------------------------

@pytest.fixture(scope="module")
def parser(sample_train):
    """A parser with random weights (no training: fast), the sample's UD rules."""
    from polyparse.features.extractor import FeatureConfig, FeatureExtractor
    from polyparse.learning.model import LinearModel
    from polyparse.parser.config import TrainConfig
    from polyparse.parser.pipeline import Parser

    train = sample_train[:40]
    extractor = FeatureExtractor(FeatureConfig.from_json({"bits": 14, "label_bits": 10})
                                 ).fit(train)
    labels = sorted({d for s in train for d in s.deprels[1:]})
    model = LinearModel(extractor, labels)
    model.weights = np.random.default_rng(0).normal(size=model.dim)
    out = Parser(model, TrainConfig(tokenizer=None, tagger=None, lemmatizer=None),
                 ud_rules=learn_rules(sample_train))
    # random weights make hard programs: a limit keeps the tests fast (the incumbent at
    # the limit satisfies every constraint all the same), one long enough for a busy
    # machine to find one (the whole sentence's budget, every stage included)
    out.use_decoder("ilp", time_limit=10.0)
    return out


@pytest.fixture(scope="module")
def dev():
    return read_treebank(SAMPLE / "dev.conllu")[:8]


def test_rules_enforced_by_parser(parser, dev):
    parser.use_ud_rules = False
    free = list(parser.parse(dev))
    parser.use_ud_rules = True
    ruled = list(parser.parse(dev))
    assert sum(sum(check(s)[1].values()) for s in free) > 0
    assert sum(sum(check(s)[1].values()) for s in ruled) == 0


class _SubjectEverywhere:
    """A second-stage labeler whose scores make every arc's best label ``nsubj``: its best
    labels break the rules on subjects and leaves wherever a head has two dependents."""

    def __init__(self, labels):
        self.bonus = 10.0 * (np.asarray(labels) == "nsubj")

    def combined_scores(self, parsed, first_stage):
        return first_stage + first_stage.std(axis=1, keepdims=True) * self.bonus


def test_second_stage_labels_that_break_a_rule_give_way_to_the_best_that_keep_them(
        parser, dev):
    """Where the second stage's best labels break a UD rule, the tree takes the best
    labels under its scores that keep them: no rule broken, and ``nsubj`` wherever the
    rules allow it (more than the first stage's labels have), not the first stage's."""
    first = list(parser.parse(dev))
    parser.relabeler, before = _SubjectEverywhere(parser.model.labels), Counter(
        parser.constrained)
    try:
        relabelled = list(parser.parse(dev))
    finally:
        parser.relabeler = None
    assert parser.constrained["relabelled_under_rules"] > before["relabelled_under_rules"]
    assert sum(sum(check(s)[1].values()) for s in relabelled) == 0
    def subjects(parsed):
        return sum(d == "nsubj" for s in parsed for d in s.deprels)

    assert subjects(relabelled) > subjects(first)


def test_unchanged_without_rules(parser, dev):
    from polyparse.parser.ud_rules import UDRules

    parser.use_ud_rules = False
    a = [(tuple(s.heads), s.deprels) for s in parser.parse(dev)]
    parser.use_ud_rules = True
    rules, parser.ud_rules = parser.ud_rules, UDRules()          # an old model file
    try:
        b = [(tuple(s.heads), s.deprels) for s in parser.parse(dev)]
    finally:
        parser.ud_rules = rules
    assert a == b


def _half_given(sentence: Sentence) -> Sentence:
    heads = sentence.heads.copy()
    deprels = list(sentence.deprels)
    heads[2::2] = -1
    for m in range(2, len(sentence) + 1, 2):
        deprels[m] = "_"
    return sentence.with_tree(heads, deprels)


def test_keep_given(parser, dev):
    given = [_half_given(s) for s in dev[:6]]
    out = list(parser.parse(given, constraints=Constraints(keep_given=True)))
    for g, o in zip(given, out):
        kept = g.heads >= 0
        kept[0] = False
        assert np.array_equal(o.heads[kept], g.heads[kept])
        assert [o.deprels[m] for m in np.flatnonzero(kept)] == \
            [g.deprels[m] for m in np.flatnonzero(kept)]
        assert np.all(o.heads[1:] >= 0)


def test_forbidden_arcs_and_labels(parser, dev):
    c = Constraints.parse("forbid * -> upos=DET\nforbid-label punct\n")
    # every DET must hang from somewhere: forbidding all its heads is a conflict
    with pytest.raises(ConstraintError, match="every head of word"):
        list(parser.parse(dev[:1], constraints=c))
    c = Constraints.parse("forbid upos=NOUN -> upos=DET\nforbid-label amod\n")
    for s in parser.parse(dev[:4], constraints=c):
        for m in range(1, len(s) + 1):
            assert not (s.upos[m] == "DET" and s.upos[s.heads[m]] == "NOUN")
            assert s.deprels[m] != "amod"


def test_forbidden_positions_take_the_arcs_of_the_free_tree_away(parser, dev):
    parser.use_ud_rules = False
    free = list(parser.parse(dev[:4]))
    for sentence, tree in zip(dev[:4], free):
        arcs = frozenset((int(tree.heads[m]), m) for m in range(1, len(tree) + 1, 2))
        c = Constraints(forbid_positions=arcs | {(len(tree) + 3, 1)})   # one beyond: none
        assert c.applies(sentence)
        assert np.array_equal(np.argwhere(c.forbidden_arcs(sentence)), sorted(arcs))
        (out,) = parser.parse([sentence], constraints=c)
        assert not any((int(out.heads[m]), m) in arcs for m in range(1, len(out) + 1))
    parser.use_ud_rules = True


def test_infeasible_names_sentence_and_conflict(parser, dev):
    s = dev[0]
    heads = s.heads.copy()
    heads[1:3] = 0                                         # two root children
    with pytest.raises(ConstraintError, match=r"sample-dev-0001.*head 0"):
        list(parser.parse([s.with_tree(heads, s.deprels)],
                          constraints=Constraints(keep_given=True)))
    # given labels that break a UD rule: two nsubj under one head (the conflict is
    # found by dropping each rule in turn: a few rules keep the test fast)
    from polyparse.parser.ud_rules import UDRules

    rules = parser.ud_rules
    parser.ud_rules = UDRules(("root", "too-many-subjects", "leaf-punct"))
    deprels = ["_"] * (len(s) + 1)
    deprels[0] = "<root>"
    heads = np.full(len(s) + 1, -1)
    heads[0] = -1
    heads[1], heads[2] = 4, 4
    deprels[1] = deprels[2] = "nsubj"
    try:
        with pytest.raises(ConstraintError, match="conflict with UD rule.s. too-many-subjects"):
            list(parser.parse([s.with_tree(heads, deprels)],
                              constraints=Constraints(keep_given=True)))
    except BaseException:
        parser.ud_rules = rules
        raise
    parser.use_ud_rules = False
    try:
        out = list(parser.parse([s.with_tree(heads, deprels)],
                                constraints=Constraints(keep_given=True)))
    finally:
        parser.use_ud_rules = True
        parser.ud_rules = rules
    assert out[0].deprels[1] == out[0].deprels[2] == "nsubj"


def test_a_time_limited_incumbent_is_repaired_over_its_arcs_and_the_free_trees(parser, dev):
    """When branch and bound stops at its limit, the labeled program is solved again over
    the incumbent's arcs and the hint's: never below the incumbent, within the rules, and
    as good as the optimum when the hint is the optimum's tree."""
    parser.use_ud_rules = True
    rules = frozenset(parser.ud_rules.rules)
    improved = 0
    for sentence in dev[:2]:
        best, _ = parser.decode_constrained(sentence)
        heads = best.result.heads
        # a worse tree within the rules: word 2 given another (adjacent) head
        given = np.full(len(sentence) + 1, -1)
        given[2] = 1 if heads[2] != 1 else 3
        deprels = ["_"] * (len(sentence) + 1)
        incumbent, _ = parser.decode_constrained(sentence.with_tree(given, deprels),
                                                 Constraints(keep_given=True))
        assert incumbent.result.value < best.result.value
        repaired = parser._repaired(sentence, rules, None, parser.decoder, incumbent, heads)
        assert repaired.result.value >= best.result.value - 1e-6
        assert repaired.result.stats.fallback
        tree = sentence.with_tree(repaired.result.heads,
                                  ["<root>"] + [parser.model.labels[i]
                                                for i in repaired.labels[1:]])
        assert not any(check(tree)[1][rule] for rule in rules)
        improved += repaired is not incumbent
    assert improved == 2


def test_no_incumbent_at_the_limit_keeps_the_lp_tree_or_the_unconstrained_one(
        parser, dev, monkeypatch):
    """Branch and bound that ends its time without a tree (simulated: HiGHS answers "time
    limit, no solution") leaves the LP's rounded tree when it keeps the rules (a
    time-limit result), else the tree decoded without the rules, whose certificate says
    so; never a search without a limit."""
    import scipy.optimize

    calls = []

    def milp(c, *, bounds, options, **kwargs):
        calls.append("time_limit" in options)
        return scipy.optimize.OptimizeResult(x=None, status=1, message="time limit")

    monkeypatch.setattr(scipy.optimize, "milp", milp)
    parser.use_ud_rules = True
    rules = frozenset(parser.ud_rules.rules)
    reached = unconstrained = 0
    for sentence in dev:
        calls.clear()
        analysis = parser.analyze(sentence, Temperatures(1.0, 1.0))
        if not calls:
            continue            # the LP was integral, or no rule was broken
        reached += 1
        assert all(calls) and analysis.certificate.kind == "time-limit"
        broken = any(check(analysis.sentence)[1][rule] for rule in rules)
        assert broken <= analysis.certificate.unconstrained
        unconstrained += analysis.certificate.unconstrained
        assert ("constraints = not enforced" in analysis.certificate.comment()) \
            == analysis.certificate.unconstrained
    assert reached >= 1


def test_a_spent_budget_keeps_the_free_tree_and_starts_no_decoding_under_the_rules(
        parser, dev):
    """A sentence whose time budget the decoding without the rules used up, and whose tree
    breaks a rule, keeps that tree (its certificate says the rules were not enforced):
    a decoding under the rules that cannot end in time does not start (en_gum's slowest
    sentence spent 84 ms in one, past its limit)."""
    parser.use_ud_rules = False
    free = [parser.analyze(s).sentence for s in dev[:4]]
    parser.use_ud_rules = True
    broken = [s for s, tree in zip(dev, free)
              if any(check(tree)[1][rule] for rule in parser.ud_rules.rules)]
    assert broken
    before = parser.constrained["sentences"]
    for sentence in broken:
        analysis = parser.analyze(sentence, budget=Budget(0.0))
        assert analysis.certificate.kind == "time-limit" and analysis.certificate.unconstrained
        assert analysis.sentence.has_tree()
    assert parser.constrained["sentences"] == before
    parser.analyze(broken[0])                   # with time, it is decoded under the rules
    assert parser.constrained["sentences"] == before + 1


def test_warm_up_decodes_without_limit_and_counts_nothing(parser, monkeypatch):
    """Parser.warm_up runs the plain and the constrained decoding once, with no time
    limit, and leaves the parser's counts and decoder as they were."""
    seen = []
    real = parser.decode_constrained

    def decode_constrained(*args, **kwargs):
        seen.append(parser.decoder.time_limit)
        return real(*args, **kwargs)

    monkeypatch.setattr(parser, "decode_constrained", decode_constrained)
    monkeypatch.setattr(parser, "_warm", False)
    parser.use_ud_rules = True
    decoder, counts = parser.decoder, parser.constrained.copy()
    decodings = parser.decodings.copy()
    parser.warm_up()
    parser.warm_up()                        # once per parser
    assert seen == [None]
    assert parser.decoder is decoder and parser.constrained == counts
    assert parser.decodings == decodings


def test_lp_decoder_never_breaks_rules(parser, dev):
    parser.use_decoder("lp", time_limit=10.0)
    try:
        out = list(parser.parse(dev[:4]))
    finally:
        parser.use_decoder("ilp", time_limit=10.0)
    assert sum(sum(check(s)[1].values()) for s in out) == 0


def test_cli_errors(tmp_path, parser, dev):
    from polyparse.parser.cli import main

    model = tmp_path / "m.npz"
    parser.save(model)
    data = tmp_path / "in.conllu"
    data.write_text("".join(s.to_text() for s in dev[:2]))
    bad = tmp_path / "bad.txt"
    bad.write_text("forbid x y\n")
    assert main(["-q", "parse", "--model", str(model), "--input", str(data),
                 "--constraints", str(bad)]) == 2
    out = tmp_path / "out.conllu"
    assert main(["-q", "parse", "--model", str(model), "--input", str(data), "--keep-given",
                 "--output", str(out)]) == 0
    assert [tuple(s.heads) for s in read_treebank(out)] == [tuple(s.heads) for s in dev[:2]]


# -- UD's validator on a real sample --------------------------------------------------

VALIDATOR_IDS = {"0-is-not-root": "root", "root-is-not-0": "root"}


def _validator_errors(path) -> Counter:
    run = subprocess.run(["udvalidate", "--lang", "en", "--level", "3", str(path)],
                         capture_output=True, text=True, timeout=120)
    found = Counter()
    for line in (run.stdout + run.stderr).splitlines():
        for rule in list(RULES) + list(VALIDATOR_IDS):
            if f" {rule}]" in line:
                found[VALIDATOR_IDS.get(rule, rule)] += 1
    return found


def _perturbed(sentences, rng):
    """Each tree with two words moved under other words (no cycle, the root kept) and
    two non-root words relabeled with relations of the treebank."""
    labels = sorted({d for s in sentences for d in s.deprels[1:]} - {"root"})
    out = []
    for s in sentences:
        n = len(s)
        heads, deprels = s.heads.copy(), list(s.deprels)
        for m in rng.integers(1, n + 1, size=2):
            h = int(rng.integers(1, n + 1))
            up = h
            while up not in (0, m):
                up = heads[up]
            if heads[m] != 0 and up == 0:
                heads[m] = h
        for m in rng.integers(1, n + 1, size=2):
            if heads[m] != 0:
                deprels[m] = labels[rng.integers(len(labels))]
        out.append(s.with_tree(heads, deprels))
    return out


@pytest.mark.realdata
@pytest.mark.skipif(shutil.which("udvalidate") is None, reason="udvalidate not installed")
def test_check_finds_what_udvalidate_finds(tmp_path):
    """Per sentence, the rule ids :func:`check` finds broken are those UD's validator
    reports, on real trees with words moved and relabeled at random."""
    import itertools
    from polyparse.corpora.conllu_io import read_conllu

    sentences = [s for s in itertools.islice(read_conllu(ud_file("en_ewt")), 200)
                 if len(s) > 2]
    trees = _perturbed(sentences, np.random.default_rng(1))
    path = tmp_path / "perturbed.conllu"
    path.write_text("".join(s.to_text() for s in trees))
    run = subprocess.run(["udvalidate", "--lang", "en", "--level", "3",
                          "--max-err", "0", str(path)],
                         capture_output=True, text=True, timeout=120)
    reported = {s.sent_id: set() for s in trees}
    for sent_id, rule in re.findall(r"Sent ([^\]]+)\]: \[L\d \w+ ([\w-]+)\]",
                                    run.stdout + run.stderr):
        if VALIDATOR_IDS.get(rule, rule) in RULES:
            reported[sent_id].add(VALIDATOR_IDS.get(rule, rule))
    found = {s.sent_id: {rule for rule, count in check(s)[1].items() if count}
             for s in trees}
    assert sum(map(len, reported.values())) > 100
    assert found == reported


@pytest.mark.realdata
@pytest.mark.skipif(shutil.which("udvalidate") is None, reason="udvalidate not installed")
def test_udvalidate_on_real_sample(parser, tmp_path):
    from polyparse.corpora.conllu_io import read_conllu
    import itertools

    train = list(itertools.islice(read_conllu(ud_file("en_ewt")), 400))
    sample = [s for s in itertools.islice(read_conllu(ud_file("en_ewt", "dev")), 40)
              if 4 <= len(s) <= 12][:5]
    rules, parser.ud_rules = parser.ud_rules, learn_rules(train)
    try:
        counts = {}
        for use in (False, True):
            parser.use_ud_rules = use
            path = tmp_path / f"out{use}.conllu"
            with open(path, "w") as out:
                for s in parser.parse(sample):
                    out.write(s.to_text())
            counts[use] = _validator_errors(path)
    finally:
        parser.ud_rules = rules
        parser.use_ud_rules = True
    enforced = set(learn_rules(train).rules)
    assert sum(counts[False].values()) > 0
    assert not {rule: c for rule, c in counts[True].items() if rule in enforced}


def test_model_file_keeps_rules_and_old_files_have_none(tmp_path, parser):
    from polyparse.parser import model_file
    from polyparse.parser.pipeline import Parser

    path = tmp_path / "m.npz"
    parser.save(path)
    assert Parser.load(path).ud_rules.rules == parser.ud_rules.rules != ()
    stored = model_file.load(path)
    assert stored.metadata["ud_rules"]["counts"]["too-many-subjects"][0] > 0
    del stored.metadata["ud_rules"]                       # a file from before issue 14
    old = tmp_path / "old.npz"
    model_file.save(old, stored)
    assert Parser.load(old).ud_rules.rules == ()
