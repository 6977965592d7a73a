"""Higher-order feature templates: the GRANDPARENT, SIBLING, CONSECUTIVE_SIBLING, VALENCY
and NONPROJ blocks of ``decoders.higher_order.build_parts``.

Every kernel output is compared with the plain-Python twin of ``tests/test_features.py``
(written from the ``features._kernels`` docstring); run the suite once with
``NUMBA_DISABLE_JIT=1`` as well.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_features import (JIT, TRAIN, en_ewt, in_another_process, kernel_rows, random_ids,
                           sentence, the_dog, twin_features, twin_indices, twin_part_values)

from polyparse.decoders.higher_order import build_parts
from polyparse.decoders.parts import Parts, PartType, arc_parts
from polyparse.features import PART_TEMPLATES, FeatureConfig, FeatureExtractor, PartTemplates
from polyparse.features import _kernels as K

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

HIGHER_ORDER = (PartType.GRANDPARENT, PartType.SIBLING, PartType.CONSECUTIVE_SIBLING,
                PartType.VALENCY, PartType.NONPROJ)


@pytest.fixture(scope="module")
def extractor() -> FeatureExtractor:
    return FeatureExtractor(FeatureConfig(bits=20, label_bits=16)).fit(TRAIN)


def all_parts(n: int, arcs: np.ndarray | None = None, order: str = "full") -> list[Parts]:
    """``build_parts`` with all-pairs and with consecutive siblings."""
    return [build_parts(n, arcs, order=order, consecutive_siblings=c) for c in (False, True)]


def blocks(parts_list: list[Parts]) -> dict[PartType, np.ndarray]:
    """The index rows of every higher-order type present in ``parts_list``."""
    out = {}
    for parts in parts_list:
        for part_type in HIGHER_ORDER:
            rows = parts.index[parts.block(part_type)]
            if len(rows):
                out[part_type] = rows
    return out


def twin(ids: np.ndarray, part_type: PartType, rows: np.ndarray, template_set: str,
         bits: int) -> list[list[tuple[str, bool, int]]]:
    table = PART_TEMPLATES[part_type]
    return twin_features(ids, rows, table.templates[template_set], table.salt, bits,
                         valency=part_type == PartType.VALENCY)


def block_rows(part_type: PartType, ids: np.ndarray, rows: np.ndarray, template_set: str,
               bits: int) -> list[list[int]]:
    indptr, indices = PART_TEMPLATES[part_type].features(ids, rows, template_set, bits)
    assert indptr.dtype == indices.dtype == np.int32
    return [indices[indptr[r]:indptr[r + 1]].tolist() for r in range(len(rows))]


def random_arcs(rng: np.random.Generator, n: int, heads_per_word: int) -> np.ndarray:
    """``heads_per_word`` random candidate heads per word, as a pruner would leave."""
    arcs = [(h, m) for m in range(1, n + 1)
            for h in rng.choice([h for h in range(n + 1) if h != m],
                                size=min(heads_per_word, n), replace=False)]
    return np.array(sorted(arcs), dtype=np.int64)


# ---------------------------------------------------------------------------------------
# Kernel == twin


def test_part_values_match_twin():
    n = 5
    out = np.zeros(K.N_ARC_FIELDS, dtype=np.int64)
    for h, m, x in itertools.product(range(-1, n + 2), repeat=3):
        K.part_values(h, m, x, n, False, out)
        assert {f: int(out[f]) for f in range(K.ARC_K)} == twin_part_values(h, m, x, n, False)
    for h, side, k in itertools.product(range(n + 1), (0, 1), range(6)):
        K.part_values(h, side, k, n, True, out)
        assert (int(out[K.ARC_DIR]), int(out[K.ARC_K])) == (side, k)


@pytest.mark.parametrize("template_set", ["full", "reduced", "full+clusters"])
def test_kernel_matches_twin_on_random_sentences(template_set):
    rng = np.random.default_rng(0)
    for n, bits, heads in [(1, 12, None), (4, 24, None), (6 if JIT else 5, 30, None),
                           (8 if JIT else 6, 22, 3)]:
        ids = random_ids(rng, n)
        arcs = None if heads is None else random_arcs(rng, n, heads)
        for part_type, rows in blocks(all_parts(n, arcs)).items():
            rows = rows[rng.permutation(len(rows))]
            assert block_rows(part_type, ids, rows, template_set, bits) == \
                twin_indices(twin(ids, part_type, rows, template_set, bits)), part_type.name


def test_kernel_matches_twin_on_hand_made_rows():
    """Boundary rows: the root as grandparent, non-projective grandparent configurations,
    first/last/no-child consecutive siblings, x at -1 and n + 1, a large k."""
    rng = np.random.default_rng(3)
    n = 6
    ids = random_ids(rng, n)
    rows = {
        PartType.GRANDPARENT: [(2, 3, 0), (5, 1, 0), (3, 2, 4), (1, 6, 2), (6, 2, 4)],
        PartType.SIBLING: [(0, 1, 6), (4, 3, 1), (4, 5, 6), (2, 3, 7), (2, 1, -1)],
        PartType.CONSECUTIVE_SIBLING: [(0, 0, 1), (0, 0, n + 1), (3, 3, -1), (3, 3, n + 1),
                                       (3, 3, 2), (3, 1, -1), (3, 6, n + 1), (3, 4, 6)],
        PartType.VALENCY: [(0, 1, 0), (0, 1, 3), (4, 0, 2), (4, 1, 2), (6, 0, 40)],
        PartType.NONPROJ: [(1, 6, -1), (6, 1, -1), (2, 4, -1)],
    }
    for part_type, index in rows.items():
        index = np.array([(part_type, *r) for r in index], dtype=np.int64)
        for template_set in ("full", "reduced", "full+clusters"):
            assert block_rows(part_type, ids, index, template_set, 24) == \
                twin_indices(twin(ids, part_type, index, template_set, 24)), part_type.name


@pytest.mark.realdata
def test_kernel_matches_twin_on_real_sentences():
    sents = [s for s in en_ewt(60) if len(s) <= (16 if JIT else 6)][:3]
    fx = FeatureExtractor(FeatureConfig(bits=24)).fit(en_ewt(200))
    rng = np.random.default_rng(4)
    for s in sents:
        enc = fx.encode(s)
        for parts in all_parts(len(s), random_arcs(rng, len(s), 5)):
            F = kernel_rows(fx.part_features(enc, parts))
            for part_type in HIGHER_ORDER:
                rows = parts.block(part_type)
                assert F[rows] == twin_indices(
                    twin(enc.ids, part_type, parts.index[rows], "full", 24)), part_type.name


# ---------------------------------------------------------------------------------------
# Rows align with parts


@pytest.mark.parametrize("order", ["2", "full"])
def test_rows_align_with_parts(extractor, order):
    s = TRAIN[3]
    n = len(s)
    enc = extractor.encode(s)
    rng = np.random.default_rng(5)
    for parts in all_parts(n, random_arcs(rng, n, 4), order=order):
        F = kernel_rows(extractor.part_features(enc, parts))
        assert len(F) == len(parts)
        arcs = parts.block(PartType.ARC)
        assert F[arcs] == kernel_rows(extractor.part_features(enc, arc_parts(n, parts.arcs)))
        for part_type, rows in parts.offsets.items():
            if part_type == PartType.ARC:
                continue
            index = parts.index[rows]
            assert np.all(index[:, 0] == part_type)
            assert F[rows] == block_rows(part_type, enc.ids, index, "full", 20)
            perm = rng.permutation(len(index))
            assert block_rows(part_type, enc.ids, index[perm], "full", 20) == \
                [F[rows][i] for i in perm]
            for i in rng.choice(len(index), min(5, len(index)), replace=False):
                assert block_rows(part_type, enc.ids, index[i:i + 1], "full", 20) == \
                    [F[rows][i]]


def test_every_part_type_of_build_parts_has_templates(extractor):
    enc = extractor.encode(TRAIN[0])
    for order in ("2", "full"):
        for parts in all_parts(len(TRAIN[0]), order=order):
            F = extractor.part_features(enc, parts)
            assert F.shape == (len(parts), extractor.n_features)
            assert np.all(np.diff(F.indptr) > 0)


# ---------------------------------------------------------------------------------------
# Template semantics


def plain(row: list[tuple[str, bool, int]], specs: set[str] | None = None) -> dict[str, int]:
    return {spec: i for spec, conj, i in row if not conj and (specs is None or spec in specs)}


def test_consecutive_sibling_boundaries_have_their_own_atoms(extractor):
    """In "x x x x x x" every word reads the same ids: only the boundary atoms (START,
    BOS/EOS) and the part atoms tell inner, first-child, last-child and no-child apart."""
    s = sentence("x x x x x x")
    enc = extractor.encode(s)
    n = len(s)
    index = np.array([(PartType.CONSECUTIVE_SIBLING, *r) for r in
                      [(2, 3, 4), (2, 2, 3), (2, 3, n + 1), (2, 2, n + 1),
                       (5, 4, 3), (5, 5, 4), (5, 4, -1), (5, 5, -1)]], dtype=np.int64)
    features = twin(enc.ids, PartType.CONSECUTIVE_SIBLING, index, "full", 20)
    assert block_rows(PartType.CONSECUTIVE_SIBLING, enc.ids, index, "full", 20) == \
        twin_indices(features)
    words_only = {"h.upos m.upos x.upos", "m.form x.form", "m.upos x.upos"}
    right = [plain(row, words_only) for row in features[:4]]
    left = [plain(row, words_only) for row in features[4:]]
    for spec in words_only:
        # inner, first child, last child, no child: four different values on each side
        assert len({r[spec] for r in right}) == 4
        assert len({r[spec] for r in left}) == 4
        # inner pairs look alike on both sides; the ends differ (BOS vs EOS)
        assert right[0][spec] == left[0][spec] and right[1][spec] == left[1][spec]
        assert right[2][spec] != left[2][spec] and right[3][spec] != left[3][spec]
    # the conjoined copies carry the side, also when m == h
    conj = [{spec: i for spec, c, i in row if c and spec == "bias"} for row in features]
    assert conj[1] != conj[5] and conj[3] != conj[7]


def test_grandparent_order_tells_all_configurations_apart(extractor):
    """(g, h, m) over the six orders of positions 1, 2, 3 of identical words."""
    s = sentence("x x x x")
    enc = extractor.encode(s)
    triples = list(itertools.permutations((1, 2, 3)))
    index = np.array([(PartType.GRANDPARENT, h, m, g) for g, h, m in triples], dtype=np.int64)
    features = twin(enc.ids, PartType.GRANDPARENT, index, "full", 20)
    assert block_rows(PartType.GRANDPARENT, enc.ids, index, "full", 20) == twin_indices(features)
    for spec in ("arc.order", "x.upos h.upos m.upos arc.order", "x.form m.form arc.order"):
        assert len({plain(row)[spec] for row in features}) == 6


def test_grandparent_at_the_root(extractor):
    s = TRAIN[1]
    enc = extractor.encode(s)
    # (0, 3, 2) and (1, 3, 2): the same configuration g < m < h, the root as g or a word
    index = np.array([(PartType.GRANDPARENT, 3, 2, 0), (PartType.GRANDPARENT, 3, 2, 1)])
    root, word = (plain(row) for row in twin(enc.ids, PartType.GRANDPARENT, index, "full", 20))
    assert root["x.upos m.upos arc.order"] != word["x.upos m.upos arc.order"]
    assert root["h.upos m.upos arc.order"] == word["h.upos m.upos arc.order"]


def test_valency_features_depend_on_side_and_k(extractor):
    s = TRAIN[0]
    enc = extractor.encode(s)
    parts = build_parts(len(s), order="full", max_valency=3)
    index = parts.index[parts.block(PartType.VALENCY)]
    features = twin(enc.ids, PartType.VALENCY, index, "full", 20)
    assert block_rows(PartType.VALENCY, enc.ids, index, "full", 20) == twin_indices(features)
    by_part = {tuple(r[1:]): plain(row) for r, row in zip(index.tolist(), features)}
    h = 3
    for k in range(4):
        left, right = by_part[(h, 0, k)], by_part[(h, 1, k)]
        assert left["h.upos arc.dir arc.k"] != right["h.upos arc.dir arc.k"]
        assert left["h.upos arc.k"] == right["h.upos arc.k"]
    assert len({by_part[(h, 1, k)]["h.form arc.dir arc.k"] for k in range(4)}) == 4
    # one feature per template, no conjoined copies
    assert all(len(row) == len(PART_TEMPLATES[PartType.VALENCY].full) for row in features)


def test_nonprojective_features_see_the_words_in_between(extractor):
    s = TRAIN[3]  # DET ADJ NOUN VERB DET NOUN ADP DET NOUN NOUN PUNCT
    enc = extractor.encode(s)
    index = np.array([(PartType.NONPROJ, 4, 9, -1), (PartType.NONPROJ, 9, 4, -1),
                      (PartType.NONPROJ, 4, 6, -1)])
    features = twin(enc.ids, PartType.NONPROJ, index, "full", 20)
    assert block_rows(PartType.NONPROJ, enc.ids, index, "full", 20) == twin_indices(features)
    between = [[i for spec, conj, i in row if spec == "h.upos b.upos m.upos" and not conj]
               for row in features]
    assert [len(b) for b in between] == [3, 3, 1]  # DET NOUN ADP; DET NOUN ADP; DET
    right, left = (plain(row) for row in features[:2])
    assert right["h.upos m.upos"] != left["h.upos m.upos"]  # VERB -> NOUN, NOUN -> VERB
    assert right["bias"] == left["bias"]  # the direction is in the conjoined copies only
    conj_bias = [{i for spec, conj, i in row if conj and spec == "bias"} for row in features]
    assert conj_bias[0] != conj_bias[1]


def test_feature_counts_per_part(extractor):
    s = TRAIN[3]
    enc = extractor.encode(s)
    for parts in all_parts(len(s)):
        counts = np.diff(extractor.part_features(enc, parts).indptr)
        for part_type in HIGHER_ORDER:
            rows = parts.block(part_type)
            if rows.stop == rows.start:
                continue
            table = PART_TEMPLATES[part_type]
            fixed = sum(t.between < 0 for t in table.templates["full"]) * (1 + table.conjoin)
            got = counts[rows]
            if part_type == PartType.NONPROJ:
                assert np.all(got >= fixed + 2) and np.all(got <= fixed + 2 * 11)
            else:
                assert np.all(got == fixed), part_type.name
            assert 10 <= got.mean() <= 40, part_type.name


@pytest.mark.realdata
def test_feature_counts_on_real_text():
    sents = [s for s in en_ewt(100) if 5 <= len(s) <= (30 if JIT else 8)][:20 if JIT else 3]
    fx = FeatureExtractor().fit(sents)
    rng = np.random.default_rng(6)
    totals = {t: [0, 0] for t in HIGHER_ORDER}
    for s in sents:
        for parts in all_parts(len(s), random_arcs(rng, len(s), 5)):
            counts = np.diff(fx.part_features(fx.encode(s), parts).indptr)
            for part_type in HIGHER_ORDER:
                rows = parts.block(part_type)
                totals[part_type][0] += counts[rows].sum()
                totals[part_type][1] += rows.stop - rows.start
    for part_type, (nnz, n_parts) in totals.items():
        assert n_parts > 0 and 10 <= nnz / n_parts <= 40, part_type.name


def test_reduced_sets_are_smaller(extractor):
    reduced = FeatureExtractor(FeatureConfig(bits=20, templates="reduced"), extractor.vocab_)
    s = TRAIN[3]
    enc = extractor.encode(s)
    for parts in all_parts(len(s)):
        full = np.diff(extractor.part_features(enc, parts).indptr)
        small = np.diff(reduced.part_features(enc, parts).indptr)
        for part_type in HIGHER_ORDER:
            rows = parts.block(part_type)
            if rows.stop > rows.start:
                assert small[rows].sum() <= full[rows].sum() / 2, part_type.name
                assert np.all(small[rows] > 0)


def test_template_tables():
    for part_type in HIGHER_ORDER:
        table = PART_TEMPLATES[part_type]
        assert set(table.reduced) < set(table.full)
        assert 10 <= len(table.full) <= 20 and 3 <= len(table.reduced) <= 5
    gp = PART_TEMPLATES[PartType.GRANDPARENT].templates["full"]
    assert all(any(a == (K.ANCHOR_ARC, 0, K.ARC_ORDER) for a in t.atoms) for t in gp)
    assert PART_TEMPLATES[PartType.VALENCY].kernel is K.valency_features
    assert not PART_TEMPLATES[PartType.VALENCY].conjoin
    salts = {PART_TEMPLATES[t].salt for t in PART_TEMPLATES}
    assert len(salts) == len(PART_TEMPLATES)  # sibling and consecutive sibling hash apart


# ---------------------------------------------------------------------------------------
# Bad input


def test_valency_kernel_rejects_what_valency_parts_lack():
    rng = np.random.default_rng(7)
    ids = random_ids(rng, 4)
    rows = np.array([[PartType.VALENCY, 2, 1, 1]])
    for spec in ("m.upos arc.k", "x.form", "h.upos b.upos", "arc.dist", "arc.order"):
        table = PartTemplates("bad", full=(spec,), reduced=(), conjoin=False,
                              kernel=K.valency_features)
        with pytest.raises(ValueError):
            table.features(ids, rows, "full", 16)
    conjoined = PartTemplates("bad", full=("h.upos arc.k",), reduced=(), conjoin=True,
                              kernel=K.valency_features)
    with pytest.raises(ValueError):
        conjoined.features(ids, rows, "full", 16)
    valency = PART_TEMPLATES[PartType.VALENCY]
    for bad in ([PartType.VALENCY, 5, 0, 1], [PartType.VALENCY, 2, 2, 1],
                [PartType.VALENCY, 2, 0, -1], [PartType.VALENCY, -1, 0, 0]):
        with pytest.raises(ValueError):
            valency.features(ids, np.array([bad]), "full", 16)


def test_word_part_kernel_rejects_arc_k_and_bad_rows():
    rng = np.random.default_rng(8)
    ids = random_ids(rng, 4)
    table = PartTemplates("bad", full=("h.upos arc.k",), reduced=(), conjoin=True)
    with pytest.raises(ValueError):
        table.features(ids, np.array([[PartType.SIBLING, 1, 2, 3]]), "full", 16)
    sibling = PART_TEMPLATES[PartType.SIBLING]
    for bad in ([PartType.SIBLING, 1, 2, 6], [PartType.SIBLING, 1, -2, 3]):
        with pytest.raises(ValueError):
            sibling.features(ids, np.array([bad]), "full", 16)


# ---------------------------------------------------------------------------------------
# Determinism


DETERMINISM_SCRIPT = """
import json
from polyparse.corpora.sentence import Sentence
from polyparse.corpora.sentence import Sentence
from polyparse.decoders.higher_order import build_parts
from polyparse.features import FeatureConfig, FeatureExtractor
s = Sentence.from_words("The dog saw a cat .".split(), lemmas="the dog see a cat .".split(),
                        upos="DET NOUN VERB DET NOUN PUNCT".split(),
                        xpos="DT NN VBD DT NN .".split())
fx = FeatureExtractor(FeatureConfig(bits=22)).fit([s])
out = []
for consecutive in (False, True):
    F = fx.part_features(fx.encode(s), build_parts(len(s), order="full",
                                                   consecutive_siblings=consecutive))
    out.append([F.indices.tolist(), F.indptr.tolist()])
print(json.dumps(out))
"""


def first_features(F, parts: Parts) -> dict[str, list[int]]:
    """The first two features (plain, conjoined or next template) of each higher-order block."""
    out = {}
    for part_type in HIGHER_ORDER:
        rows = parts.block(part_type)
        if rows.stop > rows.start:
            out[part_type.name] = F.indices[F.indptr[rows.start]:F.indptr[rows.start] + 2].tolist()
    return out


# Changing the hash, a template string or the part atoms breaks every trained model and
# must show up here.
PINNED_FIRST_FEATURES = {
    "GRANDPARENT": [1328071, 2812092], "SIBLING": [166307, 3492505],
    "CONSECUTIVE_SIBLING": [1186734, 2850988], "VALENCY": [755973, 411246],
    "NONPROJ": [3682374, 1247444],
}


def test_hashes_identical_in_another_process():
    theirs = in_another_process(DETERMINISM_SCRIPT, "54321")
    s = the_dog()
    fx = FeatureExtractor(FeatureConfig(bits=22)).fit([s])
    pinned = {}
    for consecutive, (indices, indptr) in zip((False, True), theirs):
        parts = build_parts(len(s), order="full", consecutive_siblings=consecutive)
        F = fx.part_features(fx.encode(s), parts)
        assert [F.indices.tolist(), F.indptr.tolist()] == [indices, indptr]
        assert np.array_equal(F.indices, fx.part_features(fx.encode(s), parts).indices)
        pinned.update(first_features(F, parts))
    assert pinned == PINNED_FIRST_FEATURES
