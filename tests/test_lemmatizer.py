"""The lemmatizer (parser.text.lemmatizer): lemma rules, its numba kernels against
plain-Python twins, fitting, and storage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import SAMPLE, through_model_file, ud_file
from polyparse.corpora.conllu_io import read_treebank
from polyparse.corpora.sentence import ROOT, Sentence
from polyparse.parser.text import (Lemmatizer, LemmatizerOptions, Tagger, TaggerOptions,
                                       with_lemmas)
from polyparse.parser.text import _lemma_kernels as K
from polyparse.parser.text.lemmatizer import LemmaRule, lemma_rule
from test_tagger import GOLDEN, M64, as_python, combine, fmix64

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


# ---------------------------------------------------------------------------------------
# Lemma rules

@pytest.mark.parametrize("form, lemma", [
    ("dogs", "dog"), ("went", "go"), ("The", "the"), ("Israelians", "Israelian"),
    ("IPO", "IPO"), ("iPhones", "iPhone"), ("unhappiest", "unhappy"), ("İstanbul", "İstanbul"),
    ("ISTANBUL", "İstanbul"), ("Straße", "Straße"), ("ǅemal", "ǆemal"), ("ﬁles", "ﬁle"),
    ("", ""), ("x", "_"), ("najlepši", "dober"), ("evlerinden", "ev")])
def test_a_rule_gives_its_lemma_back(form, lemma):
    assert lemma_rule(form, lemma).apply(form) == lemma


def test_rules_generalize_to_other_words():
    plural = lemma_rule("ladies", "lady")
    assert (plural.cut_suffix, plural.add_suffix, plural.whole) == ("ies", "y", False)
    assert plural.apply("Babies") == "baby"          # lowercase casing script
    assert plural.apply("dogs") is None and plural.apply("ies") is None
    proper = lemma_rule("Israelians", "Israelian")
    assert proper.apply("Canadians") == "Canadian"
    assert lemma_rule("was", "be").whole and lemma_rule("was", "be").apply("Is") == "be"
    prefix = lemma_rule("najlepša", "lepši")          # a prefix is removed too
    assert prefix.cut_prefix == "naj" and prefix.apply("najbolj") is None
    assert LemmaRule.from_json(json.loads(json.dumps(proper.to_json()))) == proper


@pytest.mark.realdata
def test_every_rule_of_en_ewt_gives_its_lemma_back():
    pairs = {(form, lemma) for s in read_treebank(ud_file("en_ewt"), require_tree=False)
             for form, lemma in zip(s.forms[1:], s.lemmas[1:])}
    wrong = [(f, l) for f, l in pairs if lemma_rule(f, l).apply(f) != l]
    assert not wrong and len(pairs) > 20000


# ---------------------------------------------------------------------------------------
# Kernels == twins

def tag_features_twin(features, tag_ids, tag_hashes):
    out = []
    for i, row in enumerate(features.tolist()):
        u, x, m = (int(h) for h in tag_hashes[tag_ids[i]])
        s = [row[1 + 6 + k] for k in range(4)]       # suffixes 1..4 (tagger columns 6..9)
        atoms = [(u, 0), (x, 0), (m, 0), (u, x), (u, m), (u, s[0]), (u, s[1]), (u, s[2]),
                 (u, s[3]), (m, s[1]), (m, s[2]), (x, s[2]), (u, row[1 + 1]), (u, row[1 + 2])]
        out.append(row + [combine(K.TAG_FEATURE_SEED + j, a, b) for j, (a, b) in
                          enumerate(atoms)])
    return out


def score_twin(row, rule, lexicon, weights):
    mask = weights.shape[0] - 1
    rows = [combine(int(K.RULE_SEED), f, rule) & mask for f in row]
    lex = (fmix64((int(K.LEXICON_SEED) + lexicon) & M64) * GOLDEN) & M64
    rows += [fmix64(lex ^ rule) & mask, fmix64(lex ^ int(K.ANY_RULE)) & mask]
    return rows, sum(float(weights[r]) for r in rows)


def best_twin(row, cands, lexicons, weights):
    scores = [score_twin(row, c, x, weights)[1] for c, x in zip(cands, lexicons)]
    return int(np.argmax(scores)) if scores else -1


def random_problem(rng, n_words=40, n_types=7, n_rules=9, n_features=5, bits=6):
    features = rng.integers(0, 2**64, size=(n_words, n_features), dtype=np.uint64)
    word_types = rng.integers(0, n_types, size=n_words)
    lists = [np.sort(rng.choice(n_rules, size=rng.integers(0, 4), replace=False))
             for _ in range(n_types)]
    cand_ptr = np.cumsum([0] + [len(c) for c in lists]).astype(np.int64)
    cand = np.concatenate(lists).astype(np.int64)
    lexicon = rng.integers(0, 3, size=cand.shape[0])
    weights = rng.normal(size=2**bits)
    return features, word_types, cand_ptr, cand, lexicon, weights


def test_tag_features_match_twin():
    rng = np.random.default_rng(0)
    features = rng.integers(0, 2**64, size=(6, 20), dtype=np.uint64)
    tag_hashes = rng.integers(0, 2**64, size=(3, K.N_TAG_HASHES), dtype=np.uint64)
    tag_ids = rng.integers(0, 3, size=6)
    for kernel in (K.tag_features, as_python(K.tag_features)):
        with np.errstate(over="ignore"):
            got = kernel(features, tag_ids, tag_hashes)
        assert got.tolist() == tag_features_twin(features, tag_ids, tag_hashes)


def test_classify_matches_twin():
    rng = np.random.default_rng(1)
    features, word_types, cand_ptr, cand, lexicon, weights = random_problem(rng)
    words = np.array([3, 0, 17, 39, 3], dtype=np.int64)
    with np.errstate(over="ignore"):
        got = K.classify(features, words, word_types, cand_ptr, cand, lexicon, weights)
    expected = []
    for i in words.tolist():
        lo, hi = cand_ptr[word_types[i]], cand_ptr[word_types[i] + 1]
        k = best_twin([int(f) for f in features[i]], cand[lo:hi].tolist(),
                      lexicon[lo:hi].tolist(), weights)
        expected.append(int(cand[lo + k]) if k >= 0 else -1)
    assert got.tolist() == expected and -1 in expected


def test_train_epoch_matches_twin():
    rng = np.random.default_rng(2)
    features, word_types, cand_ptr, cand, lexicon, _ = random_problem(rng, bits=5)
    has = np.flatnonzero(cand_ptr[word_types + 1] > cand_ptr[word_types])
    gold = np.full(features.shape[0], -1, dtype=np.int64)
    for i in has.tolist():
        lo, hi = cand_ptr[word_types[i]], cand_ptr[word_types[i] + 1]
        gold[i] = cand[rng.integers(lo, hi)]
    order = rng.permutation(has)
    weights, weights_sum = np.zeros(2**5), np.zeros(2**5)
    with np.errstate(over="ignore"):
        step, wrong = K.train_epoch(features, word_types, cand_ptr, cand, lexicon, gold,
                                    order, weights, weights_sum, 1)
    w, w_sum, n_wrong = np.zeros(2**5), np.zeros(2**5), 0
    for t, i in enumerate(order.tolist(), start=1):
        row = [int(f) for f in features[i]]
        lo, hi = cand_ptr[word_types[i]], cand_ptr[word_types[i] + 1]
        p = lo + best_twin(row, cand[lo:hi].tolist(), lexicon[lo:hi].tolist(), w)
        g = lo + cand[lo:hi].tolist().index(gold[i])
        if p != g:
            n_wrong += 1
            for k, delta in ((g, 1.0), (p, -1.0)):
                for r in score_twin(row, int(cand[k]), int(lexicon[k]), w)[0]:
                    w[r] += delta
                    w_sum[r] += delta * t
    assert (step, wrong) == (len(order) + 1, n_wrong) and n_wrong > 0
    assert np.array_equal(weights, w) and np.array_equal(weights_sum, w_sum)


# ---------------------------------------------------------------------------------------
# Fitting and storage

def sentence(words: list[tuple[str, str, str]]) -> Sentence:
    forms, upos, lemmas = zip(*words)
    return Sentence.from_words(forms, lemmas=lemmas, upos=upos, xpos=upos)


@pytest.fixture(scope="module")
def sample():
    train = read_treebank(SAMPLE / "train.conllu")
    dev = read_treebank(SAMPLE / "dev.conllu")
    tagger = Tagger(TaggerOptions(hash_bits=14)).fit(train, epochs=2)
    lemmatizer = Lemmatizer(LemmatizerOptions(hash_bits=14)).fit(train, tagger, epochs=2)
    return train, dev, tagger, lemmatizer


def test_unseen_words_get_the_rule_of_their_kind():
    stems = ["walk", "talk", "jump", "kick", "pick", "lock", "pull", "push", "help", "look"]
    train = [sentence([("They", "PRON", "they"), (s + "ed", "VERB", s), (s + "s", "NOUN", s),
                       (".", "PUNCT", ".")]) for s in stems]
    tagger = Tagger(TaggerOptions(hash_bits=12)).fit(train, epochs=2)
    lemmatizer = Lemmatizer(LemmatizerOptions(hash_bits=12)).fit(train, tagger, epochs=4)
    test = [sentence([("They", "PRON", "_"), ("melted", "VERB", "_"), ("cats", "NOUN", "_"),
                      (".", "PUNCT", "_")])]
    assert lemmatizer.predict(test, tagger) == [(ROOT, "they", "melt", "cat", ".")]


def test_the_features_of_a_word_choose_among_the_lemmas_of_its_form():
    # en_ewt's "her": the object is "she", the possessive "her"; the pair (her, PRON) alone
    # would give every "her" the majority's lemma
    def her(feats, lemma):
        return Sentence.from_words(["Ask", "her", "."], lemmas=["ask", lemma, "."],
                                   upos=["VERB", "PRON", "PUNCT"], feats=["_", feats, "_"])
    train = [her("Case=Acc", "she")] * 3 + [her("Poss=Yes", "her")] * 2
    tagger = Tagger(TaggerOptions(hash_bits=12)).fit(train, epochs=2)
    lemmatizer = Lemmatizer(LemmatizerOptions(hash_bits=12)).fit(train, tagger, epochs=2)
    assert lemmatizer.dictionary_["her", "PRON"] == "she"
    assert lemmatizer.feats_dictionary_ == {("her", "PRON", "Poss=Yes"): "her"}
    test = [her(feats, "_") for feats in ("Poss=Yes", "Case=Acc", "Number=Sing")]
    assert [lemmas[2] for lemmas in lemmatizer.predict(test, tagger)] == ["her", "she", "she"]
    loaded = Lemmatizer.from_arrays(*through_model_file(*lemmatizer.to_arrays()))
    assert loaded.feats_dictionary_ == lemmatizer.feats_dictionary_


def test_raw_text_words_all_get_a_lemma(sample):
    _, dev, tagger, lemmatizer = sample
    bare = [Sentence.from_words(s.forms[1:]) for s in dev]
    lemmatized = lemmatizer.lemmatize(tagger.tag(bare), tagger)
    assert all(lemma not in ("", "_") for s in lemmatized for lemma in s.lemmas[1:])
    right = sum(a == b for s, t in zip(dev, lemmatized) for a, b in zip(s.lemmas, t.lemmas))
    assert right > 0.9 * sum(len(s.forms) for s in dev)
    for s, t in zip(bare, lemmatized):
        for i in range(1, len(s.forms)):
            new = t.lines[t.word_lines[i]].split("\t")
            old = tagger.tag([s])[0].lines[s.word_lines[i]].split("\t")
            assert new[2] == t.lemmas[i] and new[:2] + new[3:] == old[:2] + old[3:]
    with pytest.raises(ValueError):
        with_lemmas(bare[0], ("x",))


def test_save_load_gives_identical_lemmas(sample):
    train, dev, tagger, lemmatizer = sample
    meta, arrays = lemmatizer.to_arrays()
    loaded = Lemmatizer.from_arrays(*through_model_file(meta, arrays))
    assert loaded.predict(dev, tagger) == lemmatizer.predict(dev, tagger)
    assert np.array_equal(loaded.weights_, lemmatizer.weights_)
    assert loaded.rules_ == lemmatizer.rules_ and loaded.dictionary_ == lemmatizer.dictionary_
    assert loaded.feats_dictionary_ == lemmatizer.feats_dictionary_
    again = Lemmatizer(LemmatizerOptions(hash_bits=14)).fit(train, tagger, epochs=2)
    assert np.array_equal(again.weights_, lemmatizer.weights_)
    with pytest.raises(ValueError, match="polyparse-lemmatizer"):
        Lemmatizer.from_arrays(dict(meta, format_version=0), arrays)


def test_bad_parameters_are_rejected(sample):
    train, _, tagger, _ = sample
    for params in ({"hash_bits": 0}, {"min_rule_count": 0}, {"rare_count": 1.5}):
        with pytest.raises(ValueError):
            Lemmatizer(LemmatizerOptions(**params)).fit(train[:5], tagger)
    with pytest.raises(ValueError):
        Lemmatizer().fit(train[:5], tagger, epochs=0)
