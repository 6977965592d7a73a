"""Feature extraction (features.vocab, features.templates, features._kernels, features.extractor).

The numba kernel is checked against a plain-Python twin written from the specification
in the ``features._kernels`` docstring; run the suite once with ``NUMBA_DISABLE_JIT=1``
too (the kernel then runs as Python and warns about uint64 wrap-around, which is meant).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.sentence import Sentence
from polyparse.corpora.word_clusters import ClusterTable
from polyparse.decoders.parts import Parts, PartType, arc_parts
from polyparse.features import (FIELDS, LABEL_TEMPLATES, PART_TEMPLATES, FeatureConfig,
                                FeatureExtractor, PartTemplates, Vocabulary)
from polyparse.features import _kernels as K
from polyparse.features.templates import ARC_TEMPLATES, Template, parse_atom
from polyparse.features.vocab import (BOS, CLUSTER_FIELDS, EOS, N_SPECIAL, ROOT_ID, UNK,
                                     cluster_rows, word_shape)

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

REPO = Path(__file__).resolve().parents[1]
from conftest import UD  # noqa: E402  (the shared treebanks, $POLYPARSE_UD)

EN_EWT = UD / "en_ewt" / "train.conllu"
JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") != "1"

# ---------------------------------------------------------------------------------------
# The plain-Python twin of features._kernels.part_features.

M64 = (1 << 64) - 1


def fmix64(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def mix(h: int, a: int) -> int:
    return fmix64(h ^ ((a * int(K.GOLDEN)) & M64))


def distance_bin(h: int, m: int) -> int:
    d = abs(h - m)
    return 7 if d == 0 else d - 1 if d <= 5 else 5 if d <= 10 else 6


def length_bin(h: int, m: int) -> int:
    d = abs(h - m)
    return d if d <= 10 else 11 if d <= 20 else 12 if d <= 30 else 13 if d <= 40 else 14


def twin_part_values(h: int, m: int, x: int, n: int, valency: bool) -> dict[int, int]:
    """The part atoms of ``(h, m, x)`` (or of a valency part ``(h, side, k)``)."""
    if valency:
        return {K.ARC_DIR: m, K.ARC_K: x}
    return {K.ARC_DIR: int(m > h) if m != h else int(x > h),
            K.ARC_DIST: distance_bin(h, m),
            K.ARC_ORDER: 4 * (m > h) + 2 * (x > h) + (x > m),
            K.ARC_XDIST: distance_bin(m, x) if m != h and 0 <= x <= n else 7}


def twin_features(ids: np.ndarray, rows: np.ndarray, templates: tuple[Template, ...],
                  salt: int, bits: int, valency: bool = False
                  ) -> list[list[tuple[str, bool, int]]]:
    """Per part: ``(template spec, conjoined?, index)`` in kernel order; ``valency``
    reads rows as ``(type, h, side, k)`` (``features._kernels.valency_features``)."""
    n = ids.shape[1] - 1

    def word(field: int, p: int) -> int:
        return BOS if p < 0 else EOS if p > n else int(ids[field, p])

    seed = mix(int(K.SEED), salt)
    out = []
    for _, h, m, x in rows.tolist():
        part = twin_part_values(h, m, x, n, valency)
        if not valency:
            part[K.ARC_LEN] = length_bin(h, m)
        where = {K.ANCHOR_H: h, K.ANCHOR_M: m, K.ANCHOR_X: x}
        feats = []

        def value(anchor, offset, field, b):
            if anchor == K.ANCHOR_ARC:
                if field == K.ARC_BCOUNT:  # occurrences of b's value between h and m
                    _, _, bf = t.atoms[t.between]
                    same = sum(word(bf, i) == word(bf, b) for i in range(min(h, m) + 1, max(h, m)))
                    return min(same, K.MAX_BCOUNT)
                return part[field]
            if anchor == K.ANCHOR_M and m == h:
                return K.START
            return word(field, (b if anchor == K.ANCHOR_B else where[anchor]) + offset)

        for t in templates:
            if t.between >= 0:
                seen, bs = set(), []
                _, _, field = t.atoms[t.between]
                for b in range(min(h, m) + 1, max(h, m)):
                    if word(field, b) not in seen:
                        seen.add(word(field, b))
                        bs.append(b)
            else:
                bs = [None]
            for b in bs:
                hv = mix(seed, t.tid)
                for anchor in range(K.N_ANCHORS):
                    group = [a for a in t.atoms if a[0] == anchor]
                    if group:
                        g = int(K.GROUP_SEED)
                        for a in group:
                            g = mix(g, value(*a, b))
                        hv = mix(hv, g)
                feats.append((t.spec, False, hv & ((1 << bits) - 1)))
                if t.conjoin:
                    code = K.N_DISTANCE_BINS * part[K.ARC_DIR] + part[K.ARC_DIST]
                    feats.append((t.spec, True, mix(hv, K.CONJ_BASE + code) & ((1 << bits) - 1)))
        out.append(feats)
    return out


def kernel_rows(matrix: sp.csr_matrix) -> list[list[int]]:
    return [matrix.indices[matrix.indptr[r]:matrix.indptr[r + 1]].tolist()
            for r in range(matrix.shape[0])]


def twin_indices(twin: list[list[tuple[str, bool, int]]]) -> list[list[int]]:
    return [[f[2] for f in row] for row in twin]


# ---------------------------------------------------------------------------------------
# Fixtures


def sentence(words: str, tags: str | None = None) -> Sentence:
    forms = words.split()
    upos = tags.split() if tags else ["X"] * len(forms)
    return Sentence.from_words(forms, lemmas=[f.lower() for f in forms], upos=upos,
                               xpos=[u[:2] for u in upos])


TRAIN = [
    sentence("The dog barked loudly .", "DET NOUN VERB ADV PUNCT"),
    sentence("A cat saw the dog .", "DET NOUN VERB DET NOUN PUNCT"),
    sentence("Dogs bark", "NOUN VERB"),
    sentence("The old man saw a dog in the park yesterday .",
             "DET ADJ NOUN VERB DET NOUN ADP DET NOUN NOUN PUNCT"),
]


@pytest.fixture(scope="module")
def extractor() -> FeatureExtractor:
    return FeatureExtractor(FeatureConfig(bits=20, label_bits=16)).fit(TRAIN)


def random_ids(rng: np.random.Generator, n: int, vocab_size: int = 9) -> np.ndarray:
    ids = rng.integers(0, vocab_size, size=(len(FIELDS) + len(CLUSTER_FIELDS), n + 1)
                       ).astype(np.int32)
    ids[:, 0] = ROOT_ID
    return ids


def en_ewt(limit: int) -> list[Sentence]:
    if not EN_EWT.exists():
        pytest.skip(f"{EN_EWT} is absent")
    return list(itertools.islice(read_conllu(EN_EWT), limit))


# ---------------------------------------------------------------------------------------
# Kernel == twin


def test_fmix64_matches_twin():
    for k in [0, 1, 2**63, M64, 0x123456789ABCDEF0]:
        assert int(K.fmix64(np.uint64(k))) == fmix64(k)
        assert int(K.mix(np.uint64(k), 12345)) == mix(k, 12345)


def test_distance_bins():
    assert [int(K.distance_bin(0, d)) for d in range(0, 14)] == \
        [7, 0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 6, 6, 6]
    assert all(K.distance_bin(9, 9 - d) == K.distance_bin(0, d) for d in range(14))


@pytest.mark.parametrize("template_set", ["full", "reduced", "full+clusters"])
@pytest.mark.parametrize("table", [ARC_TEMPLATES, LABEL_TEMPLATES], ids=["arc", "label"])
def test_kernel_matches_twin_on_random_sentences(table, template_set):
    rng = np.random.default_rng(0)
    for n, bits in [(1, 12), (4, 24), (7 if JIT else 5, 30)]:
        ids = random_ids(rng, n)
        rows = arc_parts(n).index
        rows = rows[rng.permutation(len(rows))]
        indptr, indices = table.features(ids, rows, template_set, bits)
        assert indptr.dtype == indices.dtype == np.int32
        got = [indices[indptr[r]:indptr[r + 1]].tolist() for r in range(len(rows))]
        twin = twin_features(ids, rows, table.templates[template_set], table.salt, bits)
        assert got == twin_indices(twin)


@pytest.mark.realdata
def test_kernel_matches_twin_on_real_sentences():
    sents = [s for s in en_ewt(60) if len(s) <= (20 if JIT else 8)][:4]
    fx = FeatureExtractor(FeatureConfig(bits=24, label_bits=18)).fit(en_ewt(200))
    for s in sents:
        enc = fx.encode(s)
        parts = arc_parts(len(s))
        got = kernel_rows(fx.part_features(enc, parts))
        assert got == twin_indices(twin_features(enc.ids, parts.index,
                                                 ARC_TEMPLATES.templates["full"],
                                                 ARC_TEMPLATES.salt, 24))
        got = kernel_rows(fx.label_features(enc, parts.arcs))
        assert got == twin_indices(twin_features(enc.ids, parts.index,
                                                 LABEL_TEMPLATES.templates["full"],
                                                 LABEL_TEMPLATES.salt, 18))


def test_x_anchor_and_positions_beyond_the_sentence():
    """A template table for (h, m, x) parts, x up to n + 1, as higher-order blocks use."""
    table = PartTemplates("test", full=("x.upos h.upos m.upos", "x-1.form x+2.upos",
                                        "h.upos b.upos x.upos arc.dir", "bias"),
                          reduced=(), conjoin=True)
    rng = np.random.default_rng(1)
    n = 6
    ids = random_ids(rng, n)
    rows = np.array([[1, h, m, x] for h in range(n + 1) for m in range(1, n + 1)
                     for x in (-1, 0, 3, n, n + 1) if h != m], dtype=np.int64)
    indptr, indices = table.features(ids, rows, "full", 20)
    got = [indices[indptr[r]:indptr[r + 1]].tolist() for r in range(len(rows))]
    assert got == twin_indices(twin_features(ids, rows, table.templates["full"], table.salt, 20))


def test_length_and_between_count_atoms():
    """``arc.len`` and ``arc.bcount`` (with its in-between atom), against the twin."""
    table = PartTemplates("test", full=("h.upos b.upos arc.bcount arc.dir", "arc.len",
                                        "b.upos arc.bcount", "m.upos b.xpos arc.len arc.bcount",
                                        "bias"),
                          reduced=(), conjoin=True)
    rng = np.random.default_rng(3)
    for n in (1, 6, 12 if JIT else 7):
        ids = random_ids(rng, n, vocab_size=6)
        rows = arc_parts(n).index
        indptr, indices = table.features(ids, rows, "full", 22)
        got = [indices[indptr[r]:indptr[r + 1]].tolist() for r in range(len(rows))]
        assert got == twin_indices(twin_features(ids, rows, table.templates["full"],
                                                 table.salt, 22))
    assert [int(K.length_bin(0, d)) for d in (0, 1, 10, 11, 20, 21, 31, 40, 41, 99)] == \
        [0, 1, 10, 11, 11, 12, 13, 13, 14, 14]
    # the count tells "one comma between" from "two commas between": tag t at words 2, 4
    ids = np.full((len(FIELDS), 6), N_SPECIAL, dtype=np.int32)
    ids[:, 0] = ROOT_ID
    ids[FIELDS.index("upos"), [2, 4]] = N_SPECIAL + 1
    one = PartTemplates("t2", full=("b.upos arc.bcount",), reduced=(), conjoin=False)
    _, idx = one.features(ids, np.array([[1, 1, 3, -1], [1, 1, 5, -1]]), "full", 20)
    # (1, 3) spans tag t once; (1, 5) spans t twice, then another tag once
    assert len(idx) == 3 and len(set(idx.tolist())) == 3
    with pytest.raises(ValueError):
        PartTemplates("t3", full=("h.upos arc.bcount",), reduced=(), conjoin=False).features(
            ids, np.array([[1, 1, 3, -1]]), "full", 20)


# ---------------------------------------------------------------------------------------
# Template semantics


def test_template_parsing():
    assert parse_atom("h+1.upos") == (K.ANCHOR_H, 1, FIELDS.index("upos"))
    assert parse_atom("m-2.form") == (K.ANCHOR_M, -2, 0)
    assert parse_atom("arc.dist") == (K.ANCHOR_ARC, 0, K.ARC_DIST)
    for bad in ["q.form", "h.colour", "b+1.upos", "arc.size", "hupos"]:
        with pytest.raises(ValueError):
            parse_atom(bad)
    assert parse_atom("arc.order") == (K.ANCHOR_ARC, 0, K.ARC_ORDER)
    assert parse_atom("arc.xdist") == (K.ANCHOR_ARC, 0, K.ARC_XDIST)
    assert parse_atom("arc.k") == (K.ANCHOR_ARC, 0, K.ARC_K)
    with pytest.raises(ValueError):
        Template.parse("t", "h.form h.upos h-1.upos m.form m.upos m+1.upos m.xpos arc.dir", True)
    with pytest.raises(ValueError):
        Template.parse("t", "h.upos b.upos b.xpos", True)
    with pytest.raises(ValueError):
        PartTemplates("t", full=("h.form",), reduced=("m.form",), conjoin=True)
    # template ids depend on the table name and the template's text only
    assert Template.parse("arc", "h.form arc.dir", False).tid == \
        next(t.tid for t in ARC_TEMPLATES.templates["full"] if t.spec == "h.form arc.dir")
    assert Template.parse("arc", "h.form", True).tid != Template.parse("label", "h.form", True).tid


def test_template_counts():
    full, reduced = ARC_TEMPLATES.templates["full"], ARC_TEMPLATES.templates["reduced"]
    assert {t.spec for t in reduced} < {t.spec for t in full}
    assert sum(t.between >= 0 for t in full) == 6  # in-between tags, plain and counted
    assert 60 <= len(full) <= 100 and 40 <= len(LABEL_TEMPLATES.templates["full"]) <= 80
    # TurboParser's arc features: every one carries the direction, none is conjoined
    assert all(t.spec.endswith("arc.dir") and not t.conjoin for t in full)
    assert not any(t.conjoin for t in LABEL_TEMPLATES.templates["full"])


def test_rows_align_with_parts(extractor):
    s = TRAIN[3]
    enc = extractor.encode(s)
    parts = arc_parts(len(s))
    full = kernel_rows(extractor.part_features(enc, parts))
    rng = np.random.default_rng(2)
    perm = rng.permutation(len(parts))
    shuffled = kernel_rows(extractor.part_features(enc, arc_parts(len(s), parts.arcs[perm])))
    assert shuffled == [full[i] for i in perm]
    for i in rng.choice(len(parts), 10, replace=False):
        one = extractor.part_features(enc, arc_parts(len(s), parts.arcs[i:i + 1]))
        assert kernel_rows(one) == [full[i]]


def test_direction_changes_every_arc_feature(extractor):
    """In "x x x x x x x" the arcs (3, 5) and (5, 3) see the same words within two
    positions of h and m: only the direction tells them apart."""
    s = sentence("x x x x x x x")
    enc = extractor.encode(s)
    arcs = np.array([[3, 5], [5, 3]])
    rows = arc_parts(7, arcs).index
    twin = twin_features(enc.ids, rows, ARC_TEMPLATES.templates["full"], ARC_TEMPLATES.salt, 20)
    assert kernel_rows(extractor.part_features(enc, arc_parts(7, arcs))) == twin_indices(twin)
    right, left = ({f[2] for f in row} for row in twin)
    assert len(right & left) <= 1  # disjoint up to a rare hash collision
    # label features see direction through the arc.dir atoms (one word in between: one
    # feature per template)
    lab = kernel_rows(extractor.label_features(enc, arcs))
    specs = [t.spec for t in LABEL_TEMPLATES.templates["full"]]
    assert len(lab[0]) == len(lab[1]) == len(specs)
    differ = {spec for spec, a, b in zip(specs, *lab) if a != b}
    assert differ == {s for s in specs if "arc.dir" in s}


def test_features_depend_on_head_and_modifier(extractor):
    s = TRAIN[3]  # The old man saw a dog in the park yesterday .
    enc = extractor.encode(s)
    arcs = np.array([[3, 4], [3, 6], [1, 6]])  # all to the right
    twin = twin_features(enc.ids, arc_parts(len(s), arcs).index,
                         ARC_TEMPLATES.templates["full"], ARC_TEMPLATES.salt, 20)
    plain = [{spec: i for spec, _, i in row if "b." not in spec} for row in twin]
    # same head: head unigrams agree, modifier unigrams differ
    assert plain[0]["h.form h.upos arc.dir"] == plain[1]["h.form h.upos arc.dir"]
    assert plain[0]["m.form arc.dir"] != plain[1]["m.form arc.dir"]
    # same modifier: the reverse
    assert plain[1]["m.form m.upos arc.dir"] == plain[2]["m.form m.upos arc.dir"]
    assert plain[1]["h.form arc.dir"] != plain[2]["h.form arc.dir"]
    assert plain[0]["arc.len arc.dir"] != plain[1]["arc.len arc.dir"]
    # in-between: one feature per distinct tag strictly between h and m
    between = [[spec for spec, _, _ in row if spec == "h.upos m.upos b.upos arc.dir"]
               for row in twin]
    assert [len(b) for b in between] == [0, 2, 4]  # VERB DET; ADJ NOUN VERB DET


# ---------------------------------------------------------------------------------------
# Extractor: shapes, dtypes, blocks


def test_shapes_and_dtypes(extractor):
    for s in TRAIN:
        enc = extractor.encode(s)
        parts = arc_parts(len(s))
        F = extractor.part_features(enc, parts)
        assert isinstance(F, sp.csr_matrix)
        assert F.shape == (len(parts), 2**20)
        assert F.indices.dtype == F.indptr.dtype == np.int32
        assert F.data.dtype == np.float64 and np.all(F.data == 1.0)
        assert F.indices.min() >= 0 and F.indices.max() < 2**20
        per_arc = np.diff(F.indptr)
        # one feature per template, but none or several per in-between template
        arc_templates = ARC_TEMPLATES.templates["full"]
        assert per_arc.min() >= sum(t.between < 0 for t in arc_templates)
        assert per_arc.max() <= len(arc_templates) + (len(s) - 1) * sum(
            t.between >= 0 for t in arc_templates)
        L = extractor.label_features(enc, parts.arcs)
        assert L.shape == (len(parts), 2**16) and L.indices.dtype == np.int32
        assert np.diff(L.indptr).min() >= sum(
            t.between < 0 for t in LABEL_TEMPLATES.templates["full"])
        w = np.ones(2**20)
        assert np.allclose(F @ w, per_arc)


def test_empty_parts_and_single_word(extractor):
    s = sentence("Hello")
    enc = extractor.encode(s)
    F = extractor.part_features(enc, arc_parts(1, np.zeros((0, 2))))
    assert F.shape == (0, 2**20) and F.nnz == 0
    F = extractor.part_features(enc, arc_parts(1))
    assert F.shape[0] == 1 and F.nnz > 0
    assert extractor.label_features(enc, np.zeros((0, 2), dtype=np.int64)).shape == (0, 2**16)


def test_blocks_of_several_part_types(extractor, monkeypatch):
    grandparent = PartTemplates("test-gp", full=("x.upos h.upos m.upos", "x.form m.form"),
                                reduced=("x.upos h.upos m.upos",), conjoin=True)
    monkeypatch.setitem(PART_TEMPLATES, PartType.GRANDPARENT, grandparent)
    s = TRAIN[0]
    enc = extractor.encode(s)
    arcs = arc_parts(len(s))
    gp = np.array([[PartType.GRANDPARENT, 2, 1, 3], [PartType.GRANDPARENT, 3, 2, 0]])
    parts = Parts(n=len(s), index=np.concatenate([arcs.index, gp]),
                  offsets={PartType.ARC: slice(0, len(arcs)),
                           PartType.GRANDPARENT: slice(len(arcs), len(arcs) + 2)})
    F = kernel_rows(extractor.part_features(enc, parts))
    assert F[:len(arcs)] == kernel_rows(extractor.part_features(enc, arcs))
    assert F[len(arcs):] == twin_indices(twin_features(enc.ids, gp, grandparent.templates["full"],
                                                       grandparent.salt, 20))
    monkeypatch.delitem(PART_TEMPLATES, PartType.GRANDPARENT)
    with pytest.raises(NotImplementedError):
        extractor.part_features(enc, parts)


def test_bad_parts_rejected(extractor):
    enc = extractor.encode(TRAIN[0])  # n = 5
    with pytest.raises(ValueError):
        extractor.part_features(enc, arc_parts(3))
    with pytest.raises(ValueError):
        extractor.part_features(enc, arc_parts(5, np.array([[0, 7]])))
    with pytest.raises(ValueError):
        extractor.label_features(enc, np.array([[-2, 1]]))


def test_reduced_set_is_smaller(extractor):
    fx = FeatureExtractor(FeatureConfig(bits=20, templates="reduced"), extractor.vocab_)
    s = TRAIN[3]
    enc = fx.encode(s)
    parts = arc_parts(len(s))
    assert fx.part_features(enc, parts).nnz < extractor.part_features(enc, parts).nnz / 2


@pytest.mark.realdata
def test_features_per_arc_on_real_text():
    sents = en_ewt(50 if JIT else 3)
    fx = FeatureExtractor().fit(sents)
    nnz = label_nnz = arcs = 0
    for s in sents:
        enc, parts = fx.encode(s), arc_parts(len(s))
        F = fx.part_features(enc, parts)
        nnz, arcs = nnz + F.nnz, arcs + F.shape[0]
        label_nnz += fx.label_features(enc, parts.arcs).nnz
    # the features.templates docstring: 114 arc and 86 label features per arc on en_ewt
    assert 95 <= nnz / arcs <= 135 and 70 <= label_nnz / arcs <= 100


# ---------------------------------------------------------------------------------------
# Determinism and serialization


DETERMINISM_SCRIPT = """
import json, numpy as np
from polyparse.corpora.sentence import Sentence
from polyparse.decoders.parts import arc_parts
from polyparse.features import FeatureConfig, FeatureExtractor
s = Sentence.from_words("The dog saw a cat .".split(), lemmas="the dog see a cat .".split(),
                        upos="DET NOUN VERB DET NOUN PUNCT".split(),
                        xpos="DT NN VBD DT NN .".split())
fx = FeatureExtractor(FeatureConfig(bits=22, label_bits=18)).fit([s])
enc = fx.encode(s)
F = fx.part_features(enc, arc_parts(len(s)))
L = fx.label_features(enc, arc_parts(len(s)).arcs)
print(json.dumps([F.indices.tolist(), F.indptr.tolist(), L.indices.tolist()]))
"""


def the_dog() -> Sentence:
    """The sentence of the determinism scripts."""
    return Sentence.from_words("The dog saw a cat .".split(), lemmas="the dog see a cat .".split(),
                               upos="DET NOUN VERB DET NOUN PUNCT".split(),
                               xpos="DT NN VBD DT NN .".split())


def in_another_process(script: str, hash_seed: str):
    """The JSON that ``script`` prints, run by a fresh interpreter whose str hashes are
    salted with ``hash_seed``."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONHASHSEED=hash_seed)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=REPO, env=env, check=True)
    return json.loads(result.stdout)


def test_hashes_identical_in_another_process():
    theirs = in_another_process(DETERMINISM_SCRIPT, "12345")
    s = the_dog()
    fx = FeatureExtractor(FeatureConfig(bits=22, label_bits=18)).fit([s])
    enc = fx.encode(s)
    F = fx.part_features(enc, arc_parts(len(s)))
    L = fx.label_features(enc, arc_parts(len(s)).arcs)
    assert theirs == [F.indices.tolist(), F.indptr.tolist(), L.indices.tolist()]
    # Pinned value: changing the hash, a template id or the vocabulary order breaks every
    # trained model, and must show up here.
    assert theirs[0][:4] == PINNED_FIRST_FEATURES


PINNED_FIRST_FEATURES = [1329218, 98698, 837643, 3456141]  # arc (0, 1): arc.dir, h.upos arc.dir


def test_vocabulary_json_round_trip():
    vocab = Vocabulary.fit(TRAIN, min_count=2)
    text = json.dumps(vocab.to_json())
    again = Vocabulary.from_json(json.loads(text))
    assert again == vocab
    for s in TRAIN:
        assert np.array_equal(again.encode(s).ids, vocab.encode(s).ids)
    with pytest.raises(ValueError):
        Vocabulary.from_json({"fields": ["form"], "strings": {"form": []}})


def test_extractor_json_round_trip(extractor):
    d = json.loads(json.dumps(extractor.to_json()))
    again = FeatureExtractor.from_json(d)
    assert again.config == extractor.config and again.vocab_ == extractor.vocab_
    s = TRAIN[1]
    parts = arc_parts(len(s))
    a = extractor.part_features(extractor.encode(s), parts)
    b = again.part_features(again.encode(s), parts)
    assert (a != b).nnz == 0
    assert FeatureExtractor.from_json(FeatureExtractor().to_json()).vocab_ is None


def test_config_validation():
    assert FeatureConfig.from_json(FeatureConfig(bits=18).to_json()) == FeatureConfig(bits=18)
    for bad in [dict(bits=0), dict(bits=31), dict(label_bits=40), dict(min_count=0),
                dict(templates="huge")]:
        with pytest.raises(ValueError):
            FeatureConfig(**bad)
    with pytest.raises(RuntimeError):
        FeatureExtractor().encode(TRAIN[0])


# ---------------------------------------------------------------------------------------
# Vocabulary


def test_encode_ids_root_and_unk():
    vocab = Vocabulary.fit(TRAIN)
    enc = vocab.encode(sentence("The zebra barked", "DET NOUN INTJ"))
    assert enc.ids.dtype == np.int32 and enc.ids.shape == (len(FIELDS), 4)
    assert np.all(enc.ids[:, 0] == ROOT_ID) and len(enc) == 3
    assert enc.form[1] == vocab.id("form", "the") >= N_SPECIAL  # forms are lowercased
    assert enc.form[2] == UNK and enc.lemma[2] == UNK  # unseen word
    assert enc.upos[3] == UNK and enc.upos[2] == vocab.id("upos", "NOUN")  # unseen tag
    assert enc.prefix[3] == vocab.id("prefix", "barke")
    assert enc.suffix[3] == vocab.id("suffix", "ked")
    assert enc.shape[1] == vocab.id("shape", "Xx")
    assert vocab.string("form", int(enc.form[1])) == "the" and vocab.string("form", UNK) == "<unk>"
    assert {UNK, ROOT_ID, BOS, EOS} == set(range(N_SPECIAL))


def test_min_count_applies_to_forms_only():
    vocab = Vocabulary.fit(TRAIN, min_count=2)
    assert vocab.id("form", "dog") != UNK  # 3 times
    assert vocab.id("form", "barked") == UNK  # once
    assert vocab.id("lemma", "barked") != UNK and vocab.id("prefix", "barke") != UNK
    with pytest.raises(ValueError):
        Vocabulary.fit(TRAIN, min_count=0)


def test_ids_ordered_by_frequency():
    vocab = Vocabulary.fit(TRAIN)
    assert vocab.id("form", "the") == N_SPECIAL  # "the"/"The" is the most frequent form
    assert vocab.size("upos") == N_SPECIAL + len({u for s in TRAIN for u in s.upos[1:]})


def test_word_shape():
    assert word_shape("McDonald") == "XxXx"
    assert word_shape("1,000") == "dpd"
    assert word_shape("") == "" and word_shape("Ünïcode") == "Xx"


def test_morphology_refines_the_fine_tag_by_the_features():
    """With ``morphology`` a word's XPOS templates read ``XPOS|FEATS``: two sentences that
    differ only in one word's FEATS then differ in that word's fine tag and in part and
    label features; without it they are the same."""
    words = dict(lemmas="the dog see a cat .".split(), upos="DET NOUN VERB DET NOUN PUNCT".split(),
                 xpos="DT NN VBD DT NN .".split())
    nom = Sentence.from_words("The dog saw a cat .".split(), **words,
                              feats=["_", "Case=Nom", "_", "_", "_", "_"])
    acc = Sentence.from_words("The dog saw a cat .".split(), **words,
                              feats=["_", "Case=Acc", "_", "_", "_", "_"])
    arcs = arc_parts(len(nom))
    for morphology in (False, True):
        fx = FeatureExtractor(FeatureConfig(bits=22, label_bits=18, morphology=morphology)
                              ).fit([nom, acc])
        enc_nom, enc_acc = fx.encode(nom), fx.encode(acc)
        assert (enc_nom.xpos != enc_acc.xpos).tolist() == [False, False, morphology] + [False] * 4
        for features in (fx.part_features, fx.label_features):
            rows = arcs if features == fx.part_features else arcs.arcs
            a, b = features(enc_nom, rows), features(enc_acc, rows)
            differs = np.array([set(a[r].indices) != set(b[r].indices) for r in range(len(rows))])
            assert differs.any() == morphology


# ---------------------------------------------------------------------------------------
# Word clusters (Koo, Carreras and Collins 2008)

def test_cluster_rows_are_the_prefixes_and_the_whole_string():
    table = ClusterTable.of({"a": "0110101", "b": "01101", "c": "011", "d": "0110100"})
    rows = cluster_rows(*table.lookup(["a", "b", "c", "zzz", "d"]))
    c4, c6, whole = rows[:, 1:].tolist()
    assert rows[:, 0].tolist() == [ROOT_ID] * 3
    # 4-bit prefixes: a, b and d share 0110, c (3 bits) is a cluster of its own
    assert c4 == [N_SPECIAL + 0b10110, N_SPECIAL + 0b10110, N_SPECIAL + 0b1110, UNK,
                  N_SPECIAL + 0b10110]
    assert c6[0] == c6[4] != c6[1] and c6[3] == UNK          # 011010 against 01101
    assert len({whole[i] for i in (0, 1, 2, 4)}) == 4 and whole[3] == UNK
    assert all(N_SPECIAL <= v < K.START for v in c4 + c6 + whole if v != UNK)


def _one_arc_corpus(rng, n_words: int) -> tuple[list[Sentence], dict[str, str]]:
    """Two-word sentences of random words, all of one tag: the word whose cluster starts
    with 0 heads the other, whichever comes first. Only the clusters tell."""
    words = ["".join(rng.choice(list("bcdfgklmnprstvz"), size=7)) for _ in range(n_words)]
    clusters = {w: ("0" if i % 2 else "1") + "".join(rng.choice(["0", "1"], size=7))
                for i, w in enumerate(words)}
    heads, deps = [w for w in words if clusters[w][0] == "0"], \
        [w for w in words if clusters[w][0] == "1"]
    sentences = []
    for j, (h, d) in enumerate(zip(heads, deps)):
        forms, tree = ([h, d], [-1, 0, 1]) if j % 2 else ([d, h], [-1, 2, 0])
        words = sentence(" ".join(forms))
        sentences.append(words.with_tree(np.array(tree), ["_"] + [
            "root" if head == 0 else "dep" for head in tree[1:]]))
    return sentences, clusters


def test_cluster_features_attach_words_never_seen_in_training():
    from polyparse.decoders import make_decoder
    from polyparse.learning.examples import Examples
    from polyparse.learning.inference import predict
    from polyparse.learning.model import LinearModel
    from polyparse.learning.trainers import make_trainer

    sentences, clusters = _one_arc_corpus(np.random.default_rng(0), 160)
    train, unseen = sentences[:60], sentences[60:]
    table = ClusterTable.of(clusters)
    correct = {}
    for with_clusters in (False, True):
        fx = FeatureExtractor(FeatureConfig(bits=16, label_bits=8, clusters=with_clusters),
                              clusters=table if with_clusters else None).fit(train)
        model = LinearModel(fx, ["dep", "root"])
        decoder = make_decoder("mst", True)
        make_trainer("perceptron", epochs=3, seed=0).fit(Examples(model, train), model,
                                                         decoder)
        correct[with_clusters] = np.mean([
            (predict(model, model.example(s), decoder)[0].heads == s.heads).all()
            for s in unseen])
    assert correct[True] == 1.0 and correct[False] < 0.8, correct
