"""Tests of the raw-text tokenizer (parser/text/tokenizer.py) and of the CoNLL 2018
segmentation scores (corpora/alignment.py)."""

from __future__ import annotations

import copy
import importlib.util
import io
import itertools
import json
import random
import warnings

import conllu
import numba
import numpy as np
import pytest

from polyparse.parser.text import _tokenizer_kernels as kernels
from polyparse.corpora.alignment import (F1, Segmentation, SurfaceToken, Word, align_words,
                                         evaluate_segmentation, sentence_tokens, span_f1)
from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.sentence import Sentence
from polyparse.corpora.plain_text import raw_text, sentence_text
from polyparse.parser.text.multiword import MultiwordLexicon, word_classes
from polyparse.parser.text.tokenizer import (Tokenizer, TokenizerOptions, _encode, _gaps,
                                            _tie_symbols)

from conftest import UD  # noqa: E402  (the shared treebanks, $POLYPARSE_UD)


def _read(text: str) -> list[Sentence]:
    return list(read_conllu(text.splitlines(keepends=True)))


# A synthetic treebank in the style of English EWT: contractions and possessives are
# multiword tokens, punctuation is split off, abbreviations keep their period.
_SUBJECTS = [["Dr.", "Smith"], ["Mr.", "Brown"], ["Anna"], ["The", "dog"], ["We"], ["I"],
             ["Prof.", "Lee"], ["My", "sister"]]
_VERBS = [[("can't", ("ca", "n't")), "go"], [("don't", ("do", "n't")), "know"],
          [("won't", ("wo", "n't")), "stop"], ["saw"], ["likes"], ["visited"],
          [("didn't", ("did", "n't")), "call"], ["met"]]
_OBJECTS = [["the", "U.S.", "team"], ["apples", ",", "e.g.", "pears"],
            [("Bob's", ("Bob", "'s")), "car"], ["3.5", "kg"], ["them"], ["the", "house"],
            [("Anna's", ("Anna", "'s")), "cat"], ["Paris"], ["Dr.", "Smith"], ["Mr.", "Brown"]]
_ENDS = [".", ".", ".", "!", "?"]
_NO_SPACE_BEFORE = {".", ",", "!", "?"}


def _synthetic_conllu(n: int, seed: int) -> str:
    rng = random.Random(seed)
    blocks = []
    for k in range(n):
        parts = rng.choice(_SUBJECTS) + rng.choice(_VERBS) + rng.choice(_OBJECTS)
        parts = parts + [rng.choice(_ENDS)]
        tokens = [p if isinstance(p, tuple) else (p, (p,)) for p in parts]
        text = ""
        lines = []
        word_id = 1
        for i, (form, words) in enumerate(tokens):
            glued = i + 1 < len(tokens) and tokens[i + 1][0] in _NO_SPACE_BEFORE
            misc = "SpaceAfter=No" if glued else "_"
            text += form + ("" if glued or i + 1 == len(tokens) else " ")
            if len(words) > 1:
                lines.append(f"{word_id}-{word_id + len(words) - 1}\t{form}" + "\t_" * 7
                             + f"\t{misc}")
                misc = "_"
            for w in words:
                head = 0 if word_id == 1 else 1
                lines.append(f"{word_id}\t{w}\t_\tX\t_\t_\t{head}\tdep\t_\t{misc}")
                word_id += 1
        comments = ["# newpar"] if k % 3 == 0 else []
        comments += [f"# sent_id = s{k}", f"# text = {text}"]
        blocks.append("\n".join(comments + lines) + "\n")
    return "\n".join(blocks) + "\n"


@pytest.fixture(scope="module")
def train() -> list[Sentence]:
    return _read(_synthetic_conllu(600, seed=1))


@pytest.fixture(scope="module")
def tokenizer(train) -> Tokenizer:
    return Tokenizer(TokenizerOptions(char_bits=16, token_bits=14)).fit(train)


TEXTS = [
    "We met Dr. Smith today. He can't stay!",
    "I don't know,e.g.  Bob's car\tis  3.5 kg...\n\nAnna's cat?Yes.",
    "  Ünïcödé  ✓✓ 😀x  ",
    "",
    "   \n\n  ",
    "a",
]
_ALPHABET = "abcXYZ019 .,;:!?'\"()-–/@&\n\t\u00a0éİß😀"
TEXTS += ["".join(random.Random(seed).choice(_ALPHABET) for _ in range(300)) for seed in range(4)]


@pytest.mark.parametrize("text", TEXTS)
def test_keeps_every_non_space_character_in_order(tokenizer, text):
    tokens = [t for s in tokenizer.tokenize(text) for t in s]
    assert "".join(t.form for t in tokens) == "".join(text.split())
    for t in tokens:
        assert t.form == text[t.start:t.end] and t.form and not any(c.isspace() for c in t.form)
    assert all(a.end <= b.start for a, b in zip(tokens, tokens[1:]))


@pytest.mark.parametrize("text", TEXTS)
def test_offsets_round_trip(tokenizer, text):
    sentences = tokenizer.to_sentences(text, id_prefix="t")
    joined = "".join(t.form + " " * t.space_after
                     for s in sentences for t in sentence_tokens(s)).rstrip()
    assert joined == " ".join(text.split())
    for s in sentences:
        assert s.text == "".join(t.form + " " * t.space_after for t in sentence_tokens(s)).rstrip()


def test_space_after_marks_exactly_the_glued_tokens(tokenizer):
    text = "I don't know,e.g. Bob's car."
    tokens = [t for s in tokenizer.tokenize(text) for t in s]
    for t in tokens:
        assert t.space_after == (t.end == len(text) or text[t.end] == " ")


def test_learned_contractions_and_possessives_split(tokenizer):
    text = "Anna didn't call. I can't go, but Bob's dog won't stop."
    words = [t.words for s in tokenizer.tokenize(text) for t in s]
    assert ("did", "n't") in words and ("ca", "n't") in words and ("wo", "n't") in words
    assert ("Bob", "'s") in words
    assert (",",) in words and ("go",) in words


def test_unseen_possessive_is_split_by_the_learned_suffix_rule(tokenizer):
    words = [t.words for s in tokenizer.tokenize("Carl's dog didn't call.") for t in s]
    assert words == [("Carl", "'s"), ("dog",), ("did", "n't"), ("call",), (".",)]


def test_abbreviation_does_not_end_a_sentence(tokenizer):
    text = "We met Dr. Smith. Prof. Lee saw them! I saw apples, e.g. pears."
    sentences = tokenizer.tokenize(text)
    forms = [[t.form for t in s] for s in sentences]
    assert forms == [["We", "met", "Dr.", "Smith", "."], ["Prof.", "Lee", "saw", "them", "!"],
                     ["I", "saw", "apples", ",", "e.g.", "pears", "."]]


def test_paragraph_break_ends_a_sentence(tokenizer):
    sentences = tokenizer.to_sentences("I saw them\n\nWe met Paris")
    assert [s.text for s in sentences] == ["I saw them", "We met Paris"]
    assert all("# newpar" in s.lines for s in sentences)


def test_to_sentences_writes_conllu(tokenizer):
    sentences = tokenizer.to_sentences("I can't go, e.g.  Paris.", id_prefix="doc-")
    s = sentences[0]
    assert s.sent_id == "doc-1" and s.text == "I can't go, e.g. Paris."
    assert s.forms[1:] == ("I", "ca", "n't", "go", ",", "e.g.", "Paris", ".")
    assert "2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_" in s.lines
    assert [t.space_after for t in sentence_tokens(s)] == [True, True, False, True, True, False,
                                                           True]
    assert np.all(s.heads == -1) and not s.has_tree()
    parsed = conllu.parse(s.to_text())[0]
    assert [t["form"] for t in parsed if isinstance(t["id"], int)] == list(s.forms[1:])


def test_json_round_trip_gives_identical_output(tokenizer):
    data, arrays = tokenizer.to_json()
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    loaded = Tokenizer.from_json(json.loads(json.dumps(data)), dict(np.load(buffer)))
    for text in TEXTS:
        assert loaded.tokenize(text) == tokenizer.tokenize(text)
    assert all(v.size < 1 << 14 for v in arrays.values())        # stored sparse
    with pytest.raises(ValueError):
        Tokenizer.from_json({**data, "version": -1}, arrays)
    with pytest.raises(ValueError, match="bad sparse weights"):
        Tokenizer.from_json(data, {**arrays, "char_weights_index":
                                   arrays["char_weights_index"] + (1 << 16)})


@pytest.mark.parametrize("options", [{"epochs": 0}, {"char_bits": 40}, {"min_rule_precision": 2}])
def test_bad_options_are_refused(train, options):
    with pytest.raises(ValueError):
        Tokenizer(TokenizerOptions(**options)).fit(train[:5])


def test_raw_text_follows_conllu_to_text(train):
    text = raw_text(train[:4], width=None)
    assert text == f"{train[0].text} {train[1].text} {train[2].text}\n\n{train[3].text}\n"
    wrapped = raw_text(train, width=40)
    assert wrapped.split() == raw_text(train, width=None).split()
    assert max(len(line) for line in wrapped.splitlines()) < 60


def test_training_scores_are_high_on_synthetic_text(train, tokenizer):
    held_out = _read(_synthetic_conllu(60, seed=2))
    system = Segmentation.from_sentences(tokenizer.to_sentences(raw_text(held_out)))
    scores = evaluate_segmentation(Segmentation.from_sentences(held_out), system)
    assert scores.tokens.f1 == 1.0 and scores.words.f1 == 1.0
    assert scores.sentences.f1 > 0.95


# ---------------------------------------------------------------- multiword lexicon

def test_multiword_lexicon_learns_rules_and_exceptions():
    def tok(form, *words):
        return SurfaceToken(form, words or (form,))
    tokens = ([tok("don't", "do", "n't")] * 3 + [tok("can't", "ca", "n't")] * 2
              + [tok("its", "it", "s"), tok("its"), tok("its"), tok("del", "de", "el")] * 2
              + [tok("Bob's", "Bob", "'s"), tok("it's", "it", "'s"), tok("let's")] * 2)
    lexicon = MultiwordLexicon.fit(tokens, min_count=2, min_precision=0.5)
    assert lexicon.rules["n't"] == ("", "n't") and lexicon.rules["'s"] == ("", "'s")
    assert lexicon.expand("Won't") == ("Wo", "n't")          # unseen: by rule
    assert lexicon.expand("DON'T") == ("DO", "N'T")          # case from the surface
    assert lexicon.expand("its") == ("its",)                  # majority: not multiword
    assert lexicon.expand("Del") == ("De", "el")              # seen, words do not spell it
    assert lexicon.expand("let's") == ("let's",)              # seen exception to a rule
    assert MultiwordLexicon.from_json(json.loads(json.dumps(lexicon.to_json()))).expand(
        "Carl's") == ("Carl", "'s")


def _its_treebank(n: int, seed: int) -> tuple[list[SurfaceToken], list[bool]]:
    """Sentences in which "its" is the possessive (2 in 3) or "it" + "s" (for "it's")."""
    rng = random.Random(seed)
    tokens: list[SurfaceToken] = []
    ends: list[bool] = []
    for _ in range(n):
        if rng.random() < 2 / 3:
            sentence = [(w,) for w in rng.choice([["The", "dog"], ["A", "cat"], ["Anna"]])]
            sentence += [(rng.choice(["wags", "licks", "likes"]),), ("its",),
                         (rng.choice(["tail", "own", "name", "owner"]),), (".",)]
        else:
            sentence = [("its", "it", "s"), (rng.choice(["a", "not", "really", "so"]),),
                        (rng.choice(["nice", "big", "good"]),), (rng.choice(["day", "deal"]),)]
            sentence += [(rng.choice([".", "!"]),)]
            if rng.random() < 0.5:
                sentence = [(rng.choice(["Yes", "Well"]),), (",",)] + sentence
        tokens += [SurfaceToken(t[0], t[1:] or t) for t in sentence]
        ends += [False] * (len(sentence) - 1) + [True]
    return tokens, ends


def test_multiword_lexicon_decides_ambiguous_forms_in_context():
    tokens, ends = _its_treebank(300, seed=3)
    lexicon = MultiwordLexicon.fit(tokens, ends=ends, context_bits=12)
    assert lexicon.ambiguous == {"its": (("its",), ("it", "s"))}
    assert lexicon.expand("its") == ("its",)                          # out of context
    assert lexicon.expand_sentence("Its a nice day .".split())[0] == ("It", "s")
    assert lexicon.expand_sentence("Well , its not good .".split())[2] == ("it", "s")
    assert lexicon.expand_sentence("The cat licks its tail .".split())[3] == ("its",)
    assert lexicon.expand_sentence("Anna likes its owner .".split())[2] == ("its",)
    loaded = MultiwordLexicon.from_json(json.loads(json.dumps(lexicon.to_json())))
    for sentence in ("Its a nice day .", "The cat licks its tail .", "ITS REALLY BIG !"):
        assert loaded.expand_sentence(sentence.split()) == lexicon.expand_sentence(
            sentence.split())
    # too rare a second analysis: no context model, the most frequent analysis
    rare = MultiwordLexicon.fit(tokens, ends=ends, min_context_count=1000)
    assert rare.ambiguous == {} and "context_index" not in rare.to_json()
    assert rare.expand_sentence("Its a nice day .".split())[0] == ("Its",)


def test_word_classes_feed_the_context_model():
    sentences = [Sentence.from_words(["Its", "the", "best", "."],
                                     upos=["PRON", "DET", "ADJ", "PUNCT"]),
                 Sentence.from_words(["the", "dog", "the", "run"],
                                     upos=["DET", "NOUN", "DET", "VERB"]),
                 Sentence.from_words(["run", "run"], upos=["NOUN", "_"])]
    assert word_classes(sentences) == {"the": "DET", "run": "VERB"}
    assert word_classes(sentences, min_count=1)["dog"] == "NOUN"
    # "then its X ." where only the class of X (a made-up word, seen once) tells the
    # possessive (X a NOUN) from "it" + "s" (X a DET)
    rng = random.Random(5)
    def word():
        return "".join(rng.choice("bcdfgklmnprstvz") for _ in range(5))
    tokens, ends, classes = [], [], {}
    for k in range(400):
        split = k % 3 == 0
        x = word()
        classes[x] = "DET" if split else "NOUN"
        tokens += [SurfaceToken("then", ("then",)),
                   SurfaceToken("its", ("it", "s") if split else ("its",)),
                   SurfaceToken(x, (x,)), SurfaceToken(".", (".",))]
        ends += [False, False, False, True]
    lexicon = MultiwordLexicon.fit(tokens, ends=ends, context_bits=14, word_classes=classes)
    unseen = {word(): "DET", word(): "NOUN"}
    lexicon.word_classes.update(unseen)
    for x, upos in unseen.items():
        words = lexicon.expand_sentence(["then", "its", x, "."])[1]
        assert words == (("it", "s") if upos == "DET" else ("its",))
    loaded = MultiwordLexicon.from_json(json.loads(json.dumps(lexicon.to_json())))
    assert loaded.word_classes == lexicon.word_classes


def test_symbols_never_at_a_token_edge_in_training_are_split_off_at_chunk_edges(tokenizer):
    # the synthetic treebank has "!", "?" and "," only as tokens of their own, "." also
    # last in "Dr.", "U.S." and inside "3.5", never first
    assert tokenizer.leading_ == {"!", "?", ",", "."} and tokenizer.trailing_ == {"!", "?", ","}
    glued = copy.copy(tokenizer)                   # a boundary model that splits nothing
    glued.char_weights_ = np.full_like(tokenizer.char_weights_, -1.0)
    forms = [t.form for s in glued.tokenize("!yes no? a!b ?! !! x:y .5 Dr.") for t in s]
    assert forms == ["!", "yes", "no", "?", "a!b", "?", "!", "!!", "x:y", ".", "5", "Dr."]
    data, arrays = tokenizer.to_json()
    old = Tokenizer.from_json({k: v for k, v in data.items() if k not in ("leading", "trailing")},
                              arrays)                 # saved before the edge symbols
    assert old.leading_ == old.trailing_ == frozenset()


def test_urls_and_addresses_stay_whole_and_symbols_split_on_both_sides_or_neither():
    text = ("Write to franz371...@gmail.com or <ded69...@hotmail.com>, see "
            "http://www.google.com/search?q=a+b&ie=UTF-8. The Israeli-Palestinian talks")
    chars, classes = _encode(text)
    web = kernels.web_spans(chars, classes)
    spans = {text[k:k + int((web == v).sum())] for k, v in enumerate(web)
             if v and (k == 0 or web[k - 1] != v)}
    assert spans == {"franz371...@gmail.com", "ded69...@hotmail.com",
                     "http://www.google.com/search?q=a+b&ie=UTF-8"}
    gaps = np.arange(1, len(text))
    gaps = gaps[(classes[gaps] != kernels.WHITESPACE) & (classes[gaps - 1] != kernels.WHITESPACE)]
    kept = _gaps(chars, classes)
    assert set(gaps) - set(kept) == {k for k in gaps if web[k] and web[k] == web[k - 1]}
    hyphen = text.index("-Palestinian")
    scores = np.where(kept == hyphen, 3.0, np.where(kept == hyphen + 1, -1.0, -5.0))
    tied = _tie_symbols(classes, kept, scores)
    assert tied[kept == hyphen] == tied[kept == hyphen + 1] == 2.0
    assert tied[kept == text.index(">,") + 1] == -5.0         # "," is not between letters
    # a hyphen inside a URL has no candidate gaps: no other gap's score changes
    chars, classes = _encode("see www.my-site.com and")
    kept = _gaps(chars, classes)
    scores = np.arange(len(kept), dtype=float)
    np.testing.assert_array_equal(_tie_symbols(classes, kept, scores), scores)


# ---------------------------------------------------------------- CoNLL 2018 scores

def _doc(*sentences):
    """Sentences of tokens written "form" or "surface=word+word"."""
    def token(t):
        surface, _, words = t.partition("=")
        return SurfaceToken(surface, tuple(words.split("+")) if words else (surface,))
    return Segmentation.from_tokens([[token(t) for t in s] for s in sentences])


def test_span_f1_counts_exact_spans():
    score = span_f1([(0, 2), (2, 5), (5, 6)], [(0, 2), (2, 3), (3, 6)])
    assert (score.gold, score.system, score.correct) == (3, 3, 1)
    assert score.f1 == pytest.approx(1 / 3)
    assert F1(0, 0, 0).f1 == 0.0 and F1(4, 2, 1).precision == 0.5 and F1(4, 2, 1).recall == 0.25


def test_scores_of_a_hand_made_document():
    gold = _doc(["I", "don't=do+n't", "know", "."], ["Go", "!"])
    system = _doc(["I", "don't", "know."], ["Go", "!"])
    scores = evaluate_segmentation(gold, system)
    # tokens: I, don't, Go, ! are right; "know." is wrong; gold has 6, system 5
    assert (scores.tokens.gold, scores.tokens.system, scores.tokens.correct) == (6, 5, 4)
    # words: I, Go, ! ("do"/"n't" vs "don't" do not align; "know" vs "know." neither)
    assert (scores.words.gold, scores.words.system, scores.words.correct) == (7, 5, 3)
    assert (scores.sentences.correct, scores.sentences.f1) == (2, 1.0)


def test_words_align_inside_multiword_tokens_by_lcs():
    gold = _doc(["vámonos=vamos+nos", "del=de+el", "x"])
    system = _doc(["vámonos=vamos+nos", "del=de+la", "x"])
    scores = evaluate_segmentation(gold, system)
    assert scores.tokens.correct == 3 and scores.words.correct == 4
    # the system splits a multiword token into two plain tokens with the same words
    gold = _doc(["vamosnos=vamos+nos", "x"])
    system = _doc(["vamos", "nos", "x"])
    assert align_words(gold.words, system.words) == [(0, 0), (1, 1), (2, 2)]
    assert evaluate_segmentation(gold, system).tokens.correct == 1
    # a system multiword token over two gold tokens: "ab" = "a" + "b" against "a", "b"
    assert align_words(_doc(["a", "b"]).words, _doc(["ab=a+b"]).words) == [(0, 0), (1, 1)]


def test_sentences_need_the_same_start_and_end():
    gold = _doc(["a", "b"], ["c"], ["d", "e"])
    system = _doc(["a", "b", "c"], ["d", "e"])
    assert evaluate_segmentation(gold, system).sentences.correct == 1


def test_different_characters_are_an_error():
    with pytest.raises(ValueError, match="differ at character 1"):
        evaluate_segmentation(_doc(["ab"]), _doc(["ac"]))


def test_align_words_docstring_cases():
    gold = [Word("do", 0, 5, True), Word("n't", 0, 5, True)]
    assert align_words(gold, [Word("don't", 0, 5, False)]) == []
    assert align_words(gold, [Word("DO", 0, 5, True), Word("N'T", 0, 5, True)]) == [(0, 0), (1, 1)]


# ---------------------------------------------------------------- kernels vs Python twins

def _perceptron_twin(features, labels, orders, bits):
    w = np.zeros(1 << bits)
    total = np.zeros(1 << bits)
    for order in orders:
        for j in order:
            if (w[features[j]].sum() > 0) != labels[j]:
                for f in features[j]:
                    w[f] += 1.0 if labels[j] else -1.0
            total += w
    return (total / (orders.size)).astype(np.float32)


def test_perceptron_kernel_matches_plain_average():
    rng = np.random.default_rng(0)
    features = rng.integers(0, 64, size=(40, 5)).astype(np.int32)
    labels = rng.random(40) < 0.4
    orders = np.stack([rng.permutation(40) for _ in range(3)])
    fitted = kernels.perceptron_fit(features, labels, orders, 6)
    # w - u / c with c = steps + 1 equals the average over steps of w scaled by steps/c
    twin = _perceptron_twin(features, labels, orders, 6) * (orders.size / (orders.size + 1))
    np.testing.assert_allclose(fitted, twin, rtol=1e-5, atol=1e-5)
    scores = kernels.perceptron_scores(features, fitted)
    np.testing.assert_allclose(scores, fitted[features].sum(axis=1), rtol=1e-5, atol=1e-4)


@pytest.fixture(scope="module")
def python_kernels():
    """A second copy of the kernels module loaded with numba's JIT off: plain Python."""
    spec = importlib.util.spec_from_file_location("_tokenizer_kernels_python", kernels.__file__)
    module = importlib.util.module_from_spec(spec)
    saved = numba.config.DISABLE_JIT
    numba.config.DISABLE_JIT = True
    try:
        spec.loader.exec_module(module)
    finally:
        numba.config.DISABLE_JIT = saved
    assert not hasattr(module.char_features, "py_func")
    return module


def test_feature_kernels_match_their_python_versions(python_kernels):
    chars = np.array([ord(c) for c in "don't go,e.g. x"], dtype=np.int64)
    classes = np.array([kernels.WHITESPACE if c == 32 else 3 for c in chars], dtype=np.int64)
    gaps = np.array([1, 2, 3, 4, 8, 9, 10, 11, 12], dtype=np.int64)
    attrs = np.arange(4 * kernels.N_TOKEN_ATTRIBUTES, dtype=np.int64).reshape(4, -1)
    candidates = np.arange(4, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # uint64 products wrap, as in numba
        np.testing.assert_array_equal(
            kernels.char_features(chars, classes, gaps, 12),
            python_kernels.char_features(chars, classes, gaps, 12))
        np.testing.assert_array_equal(
            kernels.token_features(attrs, candidates, 12),
            python_kernels.token_features(attrs, candidates, 12))


# ---------------------------------------------------------------- real data

@pytest.mark.realdata
@pytest.mark.skipif(not (UD / "en_ewt" / "dev.conllu").exists(), reason="no UD treebanks")
def test_english_ewt_sample():
    train = list(itertools.islice(read_conllu(UD / "en_ewt" / "train.conllu"), 2500))
    dev = list(itertools.islice(read_conllu(UD / "en_ewt" / "dev.conllu"), 300))
    tokenizer = Tokenizer(TokenizerOptions(char_bits=18, token_bits=16)).fit(train)
    system = Segmentation.from_sentences(tokenizer.to_sentences(raw_text(dev)))
    scores = evaluate_segmentation(Segmentation.from_sentences(dev), system)
    assert scores.tokens.f1 > 0.97 and scores.words.f1 > 0.96 and scores.sentences.f1 > 0.7
    # A sentence given alone, as `parse --text` gives it, ends in its own period token (8
    # of these 219 were glued, "men.", when the end of the text looked unlike training's)
    alone = [s for s in dev if len(s.forms) > 2 and sentence_tokens(s)[-1].form == "."]
    assert len(alone) > 200
    last = [tokenizer.tokenize(sentence_text(s))[-1][-1].form for s in alone]
    assert last.count(".") == len(alone)
