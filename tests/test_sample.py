"""The embedded sample treebank (corpora/sample): well-formed CoNLL-U, valid trees,
enough non-projective sentences, and exactly reproducible from its generator."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import conllu
import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "sample"
SCRIPT = SAMPLE / "make_sample.py"
SPLITS = ("train.conllu", "dev.conllu")
GENERATED = SPLITS + ("sentence.conllu",)

UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
        "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"}
UD_RELATIONS = {"acl", "advcl", "advmod", "amod", "appos", "aux", "case", "cc", "ccomp", "clf",
                "compound", "conj", "cop", "csubj", "dep", "det", "discourse", "dislocated",
                "expl", "fixed", "flat", "goeswith", "iobj", "list", "mark", "nmod", "nsubj",
                "nummod", "obj", "obl", "orphan", "parataxis", "punct", "reparandum", "root",
                "vocative", "xcomp"}
# UD relations that never take dependents of their own (in this treebank).
LEAVES = {"det", "case", "aux", "cop", "mark", "cc", "punct", "expl"}


def raw_blocks(name: str) -> list[list[str]]:
    text = (SAMPLE / name).read_text(encoding="utf-8")
    return [block.split("\n") for block in text.strip("\n").split("\n\n")]


def parse(name: str) -> list[conllu.TokenList]:
    return conllu.parse((SAMPLE / name).read_text(encoding="utf-8"))


def words(sentence: conllu.TokenList) -> list[dict]:
    return [t for t in sentence if isinstance(t["id"], int)]


def surface_text(sentence: conllu.TokenList) -> str:
    """The sentence text rebuilt from its tokens: multiword tokens replace their words,
    and a space follows every token without ``SpaceAfter=No``."""
    out: list[str] = []
    skip_until = 0
    for tok in sentence:
        tid = tok["id"]
        if isinstance(tid, tuple):
            if tid[1] != "-":
                continue  # empty node
            skip_until = tid[2]
        elif tid <= skip_until:
            continue
        space = not (tok["misc"] and tok["misc"].get("SpaceAfter") == "No")
        out.append(tok["form"] + (" " if space else ""))
    return "".join(out).rstrip(" ")


def is_projective(heads: list[int]) -> bool:
    """heads[i - 1] is the head of word i: every word between the ends of an arc must
    descend from its head."""
    for dep, head in enumerate(heads, start=1):
        for k in range(min(head, dep) + 1, max(head, dep)):
            node = k
            while node not in (0, head):
                node = heads[node - 1]
            if node != head:
                return False
    return True


@pytest.fixture(scope="module", params=SPLITS)
def split(request):
    return request.param, parse(request.param)


def test_every_line_has_ten_columns():
    for name in GENERATED:
        for block in raw_blocks(name):
            for line in block:
                if not line.startswith("#"):
                    assert len(line.split("\t")) == 10, (name, line)


def test_comments_and_ids(split):
    name, sentences = split
    assert len(sentences) == len(raw_blocks(name))
    stem = name.split(".")[0]
    ids = [s.metadata["sent_id"] for s in sentences]
    assert ids == [f"sample-{stem}-{i:04d}" for i in range(1, len(sentences) + 1)]
    for s in sentences:
        assert s.metadata["text"] == surface_text(s), s.metadata["sent_id"]


def test_token_ids_are_sequential(split):
    _, sentences = split
    for s in sentences:
        ws = words(s)
        assert [w["id"] for w in ws] == list(range(1, len(ws) + 1)), s.metadata["sent_id"]
        for tok in s:
            if isinstance(tok["id"], tuple):  # multiword token: a range of following words
                first, dash, last = tok["id"]
                assert dash == "-" and 1 <= first < last <= len(ws)
                assert [t["id"] for t in s][s.index(tok) + 1] == first


def test_trees_are_valid(split):
    _, sentences = split
    for s in sentences:
        sid = s.metadata["sent_id"]
        ws = words(s)
        n = len(ws)
        heads = [w["head"] for w in ws]
        assert all(isinstance(h, int) and 0 <= h <= n and h != i
                   for i, h in enumerate(heads, start=1)), sid
        roots = [w for w in ws if w["head"] == 0]
        assert len(roots) == 1 and roots[0]["deprel"] == "root", sid
        assert all((w["deprel"] == "root") == (w["head"] == 0) for w in ws), sid
        for start in range(1, n + 1):  # no cycle: every word reaches the root
            node, steps = start, 0
            while node != 0:
                node, steps = heads[node - 1], steps + 1
                assert steps <= n, f"{sid}: cycle through word {start}"


def test_annotation_vocabulary(split):
    _, sentences = split
    for s in sentences:
        ws = words(s)
        for w in ws:
            sid = (s.metadata["sent_id"], w["id"], w["form"])
            assert w["upos"] in UPOS, sid
            assert w["deprel"].split(":")[0] in UD_RELATIONS, sid
            if w["feats"]:
                names = list(w["feats"])
                assert names == sorted(names, key=str.lower), sid
            if w["upos"] == "PUNCT":
                assert w["deprel"] == "punct", sid
        for w in ws:  # function words and punctuation are leaves
            head = ws[w["head"] - 1] if w["head"] else None
            if head is not None:
                assert head["deprel"].split(":")[0] not in LEAVES, (s.metadata["sent_id"],
                                                                    head["form"])
        # the final punctuation hangs on the root
        assert ws[-1]["upos"] == "PUNCT" and ws[ws[-1]["head"] - 1]["deprel"] == "root"


def test_sizes_and_non_projectivity():
    train, dev = parse("train.conllu"), parse("dev.conllu")
    assert len(train) + len(dev) >= 300
    lengths = [len(words(s)) for s in train + dev]
    assert min(lengths) >= 3 and max(lengths) <= 35
    nonprojective = sum(not is_projective([w["head"] for w in words(s)]) for s in train)
    assert nonprojective >= 0.05 * len(train)
    assert nonprojective <= 0.15 * len(train)  # mostly projective, as English is


def test_texts_are_unique():
    texts = [s.metadata["text"] for name in SPLITS for s in parse(name)]
    assert len(set(texts)) == len(texts)


def test_demo_sentence_is_unparsed():
    [sentence] = parse("sentence.conllu")
    assert sentence.metadata["text"] == surface_text(sentence)
    ws = words(sentence)
    assert len(ws) >= 3
    assert all(w["head"] is None and w["deprel"] == "_" for w in ws)
    assert all(w["upos"] in UPOS for w in ws)


def test_generator_reproduces_the_files(tmp_path):
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], check=True,
                   capture_output=True)
    for name in GENERATED:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name
