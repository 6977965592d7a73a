"""The spaCy component "polyparse" and tokenizer "polyparse.Tokenizer.v1"
(parser/spacy_component.py): the Doc's parse is `polyparse parse --retag`'s on the same
tokens, displaCy draws it, the DependencyMatcher finds it, two processes give one
process's parse, the configuration survives to_disk / spacy.load, the constraints of token
attributes hold, and a Doc goes to CoNLL-U and back."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

spacy = pytest.importorskip("spacy")

from spacy import displacy  # noqa: E402
from spacy.matcher import DependencyMatcher  # noqa: E402
from spacy.tokens import Doc  # noqa: E402

from polyparse.corpora.conllu_io import read_conllu, write_conllu  # noqa: E402
from polyparse.corpora.sentence import Sentence  # noqa: E402
from polyparse.decoders.base import CERTIFICATE_KINDS  # noqa: E402
from polyparse.parser.cli import main  # noqa: E402
from polyparse.parser.pipeline import Parser  # noqa: E402
from polyparse.parser.spacy_component import blank  # noqa: E402
from polyparse.parser.spacy_docs import from_conllu, to_conllu  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SENTENCES = 12
"""Dev sentences of the sample parsed by the tests."""


@pytest.fixture(scope="module")
def nlp(sample_model_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("polyparse", config={"model": str(sample_model_path)})
    return nlp


@pytest.fixture(scope="module")
def dev_docs(nlp, sample_dev):
    """The first dev sentences of the sample, one Doc each, with their gold tokens only."""
    return [Doc(nlp.vocab, words=list(s.forms[1:])) for s in sample_dev[:SENTENCES]]


@pytest.fixture(scope="module")
def parsed(nlp, dev_docs):
    return list(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in d]) for d in dev_docs))


def word_columns(text: str, columns=slice(0, 8)) -> list[list[str]]:
    """ID to DEPREL of every word line of CoNLL-U ``text``."""
    return [line.split("\t")[columns] for line in text.splitlines()
            if line and not line.startswith("#")]


def test_the_doc_in_conllu_is_polyparse_parse_on_the_same_tokens(parsed, sample_dev,
                                                                  sample_model_path, tmp_path):
    tokens = tmp_path / "tokens.conllu"
    write_conllu([Sentence.from_words(s.forms[1:]) for s in sample_dev[:SENTENCES]], tokens)
    out = tmp_path / "parsed.conllu"
    assert main(["-q", "parse", "--model", str(sample_model_path), "--input", str(tokens),
                 "--retag", "--output", str(out)]) == 0
    cli = word_columns(out.read_text())
    ours = [row for doc in parsed for row in word_columns(to_conllu(doc))]
    assert [row[6:8] for row in ours] == [row[6:8] for row in cli]     # HEAD, DEPREL
    assert ours == cli              # and FORM, LEMMA, UPOS, XPOS, FEATS: the tagger's
    assert any(row[7] != "root" for row in ours)


def test_heads_labels_tags_and_sentences_as_spacy_has_them(parsed):
    parser_words = 0
    for doc in parsed:
        assert doc.has_annotation("DEP") and len(list(doc.sents)) == 1
        roots = [t for t in doc if t.head.i == t.i]
        assert len(roots) == 1 and roots[0].dep_ == "root"
        assert all(t.pos_ and t.tag_ for t in doc)
        assert all(t.is_ancestor(u) or t == u for t in roots for u in doc)
        parser_words += len(doc)
    assert parser_words == sum(len(d) for d in parsed)


def test_every_sentence_has_its_certificate(parsed):
    for doc in parsed:
        (sentence,) = doc.sents
        certificate = sentence._.polyparse_certificate
        assert certificate["kind"] in CERTIFICATE_KINDS
        assert doc._.polyparse_sentences[0]["certificate"] == certificate
        assert certificate["gap"] is None or certificate["gap"] >= -1e-6
        assert sentence._.polyparse_kbest is None


def test_displacy_draws_every_arc_with_its_label(parsed):
    doc = parsed[0]
    svg = displacy.render(doc, style="dep", jupyter=False,
                          options={"collapse_punct": False, "collapse_phrases": False})
    arcs = [t for t in doc if t.head.i != t.i]
    assert svg.count('class="displacy-arc"') == len(arcs)
    for token in arcs:
        assert f">{token.dep_}</textPath>" in svg


def test_the_dependency_matcher_finds_the_arcs_of_the_parse(nlp, parsed):
    doc = parsed[1]
    matcher = DependencyMatcher(nlp.vocab)
    arcs = [t for t in doc if t.head.i != t.i]
    for k, token in enumerate(arcs):
        matcher.add(f"arc{k}", [[
            {"RIGHT_ID": "head", "RIGHT_ATTRS": {"ORTH": token.head.text}},
            {"LEFT_ID": "head", "REL_OP": ">", "RIGHT_ID": "dependent",
             "RIGHT_ATTRS": {"ORTH": token.text, "DEP": token.dep_}}]])
    found = {(nlp.vocab.strings[key], tuple(ids)) for key, ids in matcher(doc)}
    for k, token in enumerate(arcs):
        assert (f"arc{k}", (token.head.i, token.i)) in found
    reversed_arc = DependencyMatcher(nlp.vocab)
    reversed_arc.add("reversed", [[
        {"RIGHT_ID": "head", "RIGHT_ATTRS": {"ORTH": arcs[0].text}},
        {"LEFT_ID": "head", "REL_OP": ">", "RIGHT_ID": "dependent",
         "RIGHT_ATTRS": {"ORTH": arcs[0].head.text}}]])
    assert all((ids[0], ids[1]) != (arcs[0].i, arcs[0].head.i)
               for _, ids in reversed_arc(doc))


def test_two_processes_give_the_parse_of_one(sample_model_path, sample_dev):
    nlp = blank(sample_model_path, "en")
    texts = [s.text for s in sample_dev[:8]]
    one = [[(t.text, t.head.i, t.dep_, t.tag_) for t in doc] for doc in nlp.pipe(texts)]
    two = [[(t.text, t.head.i, t.dep_, t.tag_) for t in doc]
           for doc in nlp.pipe(texts, n_process=2, batch_size=2)]
    assert two == one and len(one) == 8


def test_polyparse_tokenizer_keeps_the_text_and_polyparse_sentences(sample_model_path):
    nlp = blank(sample_model_path, "en")
    text = "  The dog ran.  Who is running?\n\nA brave doctor did not wait . "
    doc = nlp(text)
    assert doc.text == text
    words = [[t.text for t in s if not t.is_space] for s in doc.sents]
    expected = [list(s.forms[1:]) for s in Parser.load(sample_model_path).tokenize(text)]
    assert words == expected and len(expected) >= 2
    assert all(t.head.i != t.i or t.dep_ == "root" for t in doc if not t.is_space)
    assert all(t.dep_ == "dep" and t.head.i != t.i for t in doc if t.is_space and t.i > 0)


def test_config_and_model_survive_to_disk_and_spacy_load_elsewhere(sample_model_path,
                                                                    tmp_path):
    config = {"time_limit": 2.5, "ud_rules": False, "constraints": "forbid-label nmod",
              "decoder_options": {}}
    nlp = blank(sample_model_path, "en", **config)
    text = "A brave doctor did not wait for her. Who is running to a station?"
    expected = [(t.text, t.head.i, t.dep_) for t in nlp(text)]
    nlp.to_disk(tmp_path / "first")
    moved = tmp_path / "moved"
    shutil.move(tmp_path / "first", moved)
    script = f"""
import json, sys, spacy
nlp = spacy.load({str(moved)!r})
doc = nlp({text!r})
component = nlp.get_pipe("polyparse")
print(json.dumps({{"config": nlp.config["components"]["polyparse"],
                  "model": str(component.model), "tokenizer": str(nlp.tokenizer.model),
                  "parse": [(t.text, t.head.i, t.dep_) for t in doc]}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, check=True)
    loaded = json.loads(done.stdout)
    assert {key: loaded["config"][key] for key in config} == config
    assert loaded["config"]["factory"] == "polyparse"
    assert loaded["config"]["model"] == str(sample_model_path)
    assert Path(loaded["model"]).parent.parent == moved
    assert Path(loaded["tokenizer"]).parent.parent == moved
    assert [tuple(row) for row in loaded["parse"]] == expected
    assert not any(dep == "nmod" for _, _, dep in expected)


def test_token_attributes_fix_heads_and_forbid_them(nlp, dev_docs):
    doc = nlp(Doc(nlp.vocab, words=[t.text for t in dev_docs[0]]))
    root = next(t.i for t in doc if t.head.i == t.i)
    moved = next(t.i for t in doc if t.head.i not in (t.i, root))
    forbidden = next(t.i for t in doc if t.head.i != t.i and t.i != moved)
    old_head = doc[forbidden].head.i
    again = Doc(nlp.vocab, words=[t.text for t in doc])
    again[moved]._.polyparse_head = root
    again[forbidden]._.polyparse_forbidden_heads = [old_head]
    again = nlp(again)
    assert again[moved].head.i == root
    assert again[forbidden].head.i != old_head
    outside = Doc(nlp.vocab, words=[t.text for t in doc])
    outside[0]._.polyparse_head = len(doc) + 5
    with pytest.raises(ValueError, match="polyparse_head .* is not a word of its sentence"):
        nlp(outside)


def test_kbest_and_confidences_as_extension_attributes(sample_model_path, dev_docs):
    kbest = spacy.blank("en")
    kbest.add_pipe("polyparse", config={"model": str(sample_model_path), "kbest": 3})
    doc = kbest(Doc(kbest.vocab, words=[t.text for t in dev_docs[2]]))
    (sentence,) = doc.sents
    trees = sentence._.polyparse_kbest
    assert 1 <= len(trees) <= 3 and sentence._.polyparse_certificate is None
    assert trees[0]["heads"] == [t.head.i for t in doc]
    assert trees[0]["deprels"] == [t.dep_ for t in doc]
    assert all(a["score"] >= b["score"] for a, b in zip(trees, trees[1:]))
    assert len({tuple(t["heads"]) + tuple(t["deprels"]) for t in trees}) == len(trees)
    sure = spacy.blank("en")
    sure.add_pipe("polyparse", config={"model": str(sample_model_path), "confidence": True})
    doc = sure(Doc(sure.vocab, words=[t.text for t in dev_docs[2]]))
    assert all(0 < t._.polyparse_head_prob <= 1 + 1e-9 for t in doc)
    assert all(0 < t._.polyparse_deprel_prob <= 1 + 1e-9 for t in doc)
    with pytest.raises(ValueError, match="either kbest or confidence"):
        sure.add_pipe("polyparse", name="both", config={
            "model": str(sample_model_path), "kbest": 2, "confidence": True})


def test_conllu_to_doc_and_back_keeps_words_tags_trees_and_spaces(nlp):
    gold = list(read_conllu(REPO / "corpora" / "sample" / "dev.conllu"))[:SENTENCES]
    text = "".join(s.to_text() for s in gold)
    doc = from_conllu(nlp.vocab, text)
    assert len(list(doc.sents)) == SENTENCES
    assert word_columns(to_conllu(doc), slice(0, 10)) == word_columns(text, slice(0, 10))
    assert doc.text.startswith(gold[0].text + " " + gold[1].text)


def test_a_long_doc_without_sentence_boundaries_is_refused(sample_model_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("polyparse", config={"model": str(sample_model_path), "max_words": 5})
    with pytest.raises(ValueError, match="without sentence boundaries"):
        nlp("one two three four five six")


def test_only_the_spacy_modules_import_spacy():
    for path in (REPO / "parser").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        imports = re.search(r"^\s*(import|from) spacy\b", source, re.MULTILINE)
        assert bool(imports) == path.name.startswith("spacy_"), path
