"""The second-stage labeler (learning.relabeler): what it learns from the tree, its
features' layout, storage, and a parser that carries one."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import through_model_file
from polyparse.corpora.sentence import Sentence
from polyparse.learning import _relabel_kernels as K
from polyparse.learning.relabeler import Relabeler, RelabelerOptions, _encode

LABELS = ["advmod", "aux:pass", "nsubj", "nsubj:pass", "obj", "root"]


def tree(forms, upos, heads, deprels) -> Sentence:
    return Sentence.from_words(forms, upos=upos, xpos=upos).with_tree(
        np.array([-1, *heads]), ["<root>", *deprels])


def called(name: str, passive: bool) -> Sentence:
    """``NAME called was`` (passive: the subject is ``nsubj:pass``) or ``NAME called
    today``: the subject's arc, its words and their distance are the same in both; only
    the verb's other child tells them apart."""
    last, label = (("was", "AUX"), "aux:pass") if passive else (("today", "ADV"), "advmod")
    return tree([name, "called", last[0]], ["PROPN", "VERB", last[1]], [2, 0, 2],
                ["nsubj:pass" if passive else "nsubj", "root", label])


NAMES = ["Kim", "Lee", "Ann", "Bo", "Sam", "Jo", "Al", "Di", "Ed", "Flo"]


def test_a_sibling_decides_the_label_of_an_arc():
    train = [called(name, passive) for name in NAMES[:8] for passive in (True, False)]
    relabeler = Relabeler(LABELS, RelabelerOptions(hash_bits=12, epochs=5)).fit(train)
    test = [called(name, passive) for name in NAMES[8:] for passive in (True, False)]
    best = np.argmax(relabeler.scores(test), axis=1).reshape(len(test), 3)
    assert [LABELS[k] for k in best[:, 0]] == ["nsubj:pass", "nsubj"] * 2
    # the first stage's scores, equal for both subjects, leave the decision to the tree
    first = np.zeros((3, len(LABELS)))
    first[0, [LABELS.index("nsubj"), LABELS.index("nsubj:pass")]] = 1.0
    first[1, LABELS.index("root")] = first[2, LABELS.index("advmod")] = 1.0
    assert LABELS[np.argmax(relabeler.combined_scores(test[0], first)[0])] == "nsubj:pass"


def test_features_are_laid_out_per_word_and_the_same_in_every_call():
    # two roots (CoNLL-X), a head with four children: every word has its features,
    # the fixed ones and at most 4 per child and 3 per sibling
    many = tree(["a", "b", "c", "d", "e", "f"], ["NOUN", "VERB", "ADP", "PRON", "ADV", "X"],
                [2, 0, 2, 2, 2, 0], ["nsubj", "root", "obj", "obj", "advmod", "root"])
    one = tree(["x"], ["X"], [0], ["root"])
    ptr, features = _encode([many, one])
    counts = np.diff(ptr)
    assert ptr[-1] == features.shape[0] and counts.shape == (7,)
    assert (counts >= K.N_FIXED).all()
    assert counts[1] <= K.N_FIXED + K.PER_CHILD * 4 + K.PER_SIBLING * 1
    assert np.array_equal(_encode([many, one])[1], features)
    assert np.array_equal(_encode([one])[1], features[ptr[6]:])     # sentence by sentence


def test_save_load_gives_the_same_scores():
    train = [called(name, passive) for name in NAMES for passive in (True, False)]
    relabeler = Relabeler(LABELS, RelabelerOptions(hash_bits=10, epochs=2)).fit(train)
    loaded = Relabeler.from_arrays(*through_model_file(*relabeler.to_arrays()))
    assert np.array_equal(loaded.scores(train), relabeler.scores(train))
    assert loaded.labels == LABELS and loaded.history_ == relabeler.history_
    meta, arrays = relabeler.to_arrays()
    with pytest.raises(ValueError, match="polyparse-relabeler"):
        Relabeler.from_arrays(dict(meta, format_version=0), arrays)


@pytest.mark.parametrize("options", [{"hash_bits": 0}, {"epochs": 0}, {"epochs": 1.5}])
def test_bad_options_are_rejected(options):
    with pytest.raises(ValueError):
        RelabelerOptions(**options)


def test_the_sample_model_relabels_and_keeps_it_through_its_file(sample_model_path):
    from polyparse.parser.pipeline import Parser

    parser = Parser.load(sample_model_path)
    assert parser.relabeler is not None and parser.relabeler.labels == parser.model.labels
    assert parser.config.relabeler == RelabelerOptions()
    parsed = parser.parse_text("The cat sat on the mat. Dogs bark.")
    assert all(d in parser.model.labels for s in parsed for d in s.deprels[1:])
    plain = Parser.load(sample_model_path)
    plain.relabeler = None
    first = plain.parse_text("The cat sat on the mat. Dogs bark.")
    assert [s.heads.tolist() for s in first] == [s.heads.tolist() for s in parsed]
