"""K-best trees (``decoders.kbest``, the ILP's no-good cuts, ``parse --kbest``) against
brute-force enumeration of every tree."""

from __future__ import annotations

import numpy as np
import pytest

from brute_force import all_trees, tree_scores
from polyparse.decoders import kbest as kbest_module
from polyparse.decoders.kbest import kbest_arborescences
from polyparse.decoders.trees import chu_liu_edmonds
from test_mst import is_tree, random_scores


def assert_top_k(got, own_scores, trees, scores, k, single_root):
    """``got`` (a list of ``(heads, score)``) is a top ``k`` of ``trees`` (brute-force
    ``scores``): as many trees as exist up to k, distinct, each with ``own_scores(heads)``
    as its score, in non-increasing order, with the scores of the brute-force top k and
    every tree that beats the k-th among them (trees tied with the k-th may be any)."""
    order = np.argsort(-scores, kind="stable")
    expected = scores[order[:k]]
    assert len(got) == len(expected)
    heads = [h for h, _ in got]
    got_scores = np.array([s for _, s in got])
    assert len({tuple(h) for h in heads}) == len(heads)
    for h, s in got:
        assert is_tree(h, single_root)
        assert s == pytest.approx(own_scores(h), abs=1e-9)
    np.testing.assert_allclose(got_scores, expected, atol=1e-9)
    assert np.all(np.diff(got_scores) <= 0)
    must = {tuple(trees[i]) for i in order[:k] if scores[i] > expected[-1] + 1e-9}
    assert must <= {tuple(h) for h in heads}


def finite_trees(S, n, single_root):
    trees = all_trees(n, single_root)
    scores = tree_scores(S, trees)
    keep = np.isfinite(scores)
    return trees[keep], scores[keep]


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("pruned", [0.0, 0.35])
@pytest.mark.parametrize("ties", [False, True])
def test_order1_equals_brute_force(single_root, pruned, ties):
    """Random scores (rounded to integers for many ties), every n <= 6, K up to past
    the number of trees of small n."""
    rng = np.random.default_rng(17 + 2 * single_root + 5 * ties + int(pruned * 100))
    for n in range(1, 7):
        for _ in range(12 if n < 6 else 3):
            S = random_scores(rng, n, pruned=pruned, keep_tree=True)
            if ties:
                S = np.round(S)
            trees, scores = finite_trees(S, n, single_root)
            if trees.shape[0] == 0:         # keep_tree keeps a single-root tree only
                continue
            k = int(rng.integers(1, 25))
            got = [(t.heads, t.score) for t in kbest_arborescences(S, k, single_root)]
            assert_top_k(got, lambda h: tree_scores(S, h[None])[0], trees, scores, k,
                         single_root)
            np.testing.assert_array_equal(got[0][0], chu_liu_edmonds(S, single_root))


def test_all_trees_of_a_small_graph_in_order():
    """K far above the number of trees gives every tree once, best first."""
    rng = np.random.default_rng(3)
    S = rng.normal(size=(5, 5))
    trees, scores = finite_trees(S, 4, True)
    got = kbest_arborescences(S, 1000, True)
    assert len(got) == trees.shape[0] == 64
    np.testing.assert_allclose([t.score for t in got], np.sort(scores)[::-1])


def test_tie_fallback_splits_until_the_tree_is_reproduced(monkeypatch):
    """When a pass does not contract along the produced tree (a tie resolved the other
    way), the subproblem is split on an arc of that tree: simulated, in the plain-Python
    kernels, by ignoring the preferred tree every other time; the top K is still exact."""
    kernels = kbest_module._kernels
    calls, diverged = [], []
    real = kernels.mst_swap

    def forgetful(S, prefer, work):
        if not prefer.shape[0]:
            return real(S, prefer, work)
        calls.append(1)
        if len(calls) % 2:
            result = real(S, np.empty(0, dtype=np.int64), work)
            diverged.append(not np.array_equal(result[0], prefer))
            return result
        return real(S, prefer, work)

    for name in ("_rest", "kbest_heads"):
        monkeypatch.setattr(kernels, name, getattr(kernels, name).py_func)
    monkeypatch.setattr(kernels, "mst_swap", forgetful)
    rng = np.random.default_rng(5)
    for single_root in (True, False):
        for _ in range(20):
            S = np.round(rng.normal(size=(6, 6)))           # ties: other trees exist
            trees, scores = finite_trees(S, 5, single_root)
            got = [(t.heads, t.score) for t in kbest_arborescences(S, 12, single_root)]
            assert_top_k(got, lambda h: tree_scores(S, h[None])[0], trees, scores, 12,
                         single_root)
    assert sum(diverged) > 0


def test_no_tree_and_bad_k_raise():
    S = np.full((3, 3), -np.inf)
    with pytest.raises(ValueError, match="no spanning tree"):
        kbest_arborescences(S, 2, True)
    with pytest.raises(ValueError, match="at least 1"):
        kbest_arborescences(np.zeros((3, 3)), 0, True)


@pytest.mark.ilp
@pytest.mark.parametrize("order", ["2", "full"])
@pytest.mark.parametrize("single_root", [True, False])
def test_ilp_no_good_cuts_equal_brute_force(order, single_root):
    """Order 2 and full: the K best trees under all the part scores, n <= 5 (full: 4)."""
    from polyparse.decoders.higher_order import build_parts
    from polyparse.decoders.ilp import ILPDecoder
    from test_ilp import random_scores as part_scores

    rng = np.random.default_rng(11 + single_root + 3 * (order == "full"))
    decoder = ILPDecoder(single_root=single_root, time_limit=None)
    for n in ([3, 4, 5] if order == "2" else [3, 4]):
        parts = build_parts(n, order=order)
        trees = all_trees(n, single_root)
        z = np.stack([parts.from_heads(h) for h in trees])
        for _ in range(2):
            scores = part_scores(parts, rng, higher_order_scale=0.5)
            k = int(rng.integers(2, 8))
            got = [(t.heads, t.score) for t in decoder.kbest(parts, scores, k)]
            assert_top_k(got, lambda h: scores @ parts.from_heads(h), trees, z @ scores, k,
                         single_root)


def test_kbest_refused_by_relaxed_decoders():
    from polyparse.decoders import make_decoder
    from polyparse.decoders.higher_order import build_parts

    assert make_decoder("mst").gives_kbest and make_decoder("ilp").gives_kbest
    lp = make_decoder("lp")
    assert not lp.gives_kbest
    with pytest.raises(ValueError, match="cannot give the k best"):
        lp.kbest(build_parts(3, order="2"), np.zeros(len(build_parts(3, order="2"))), 2)


def _blocks(text):
    return [b for b in text.split("\n\n") if b.strip()]


def test_cli_writes_k_copies_in_order_first_equal_to_parse(sample_model_path, tmp_path):
    from polyparse.parser.cli import main
    from polyparse.parser.pipeline import Parser
    from polyparse.parser.training import without_lemmas
    from conftest import SAMPLE

    source = tmp_path / "in.conllu"
    source.write_text("".join(block + "\n\n"
                              for block in _blocks((SAMPLE / "dev.conllu").read_text())[:25]))
    plain, kbest = tmp_path / "plain.conllu", tmp_path / "kbest.conllu"
    model = str(sample_model_path)
    assert main(["-q", "parse", "--model", model, "--input", str(source),
                 "--output", str(plain)]) == 0
    assert main(["-q", "parse", "--model", model, "--input", str(source),
                 "--output", str(kbest), "--kbest", "4"]) == 0
    inputs, parsed, copies = (_blocks(source.read_text()), _blocks(plain.read_text()),
                              _blocks(kbest.read_text()))
    parser = Parser.load(sample_model_path)
    at = 0
    for given, best in zip(inputs, parsed):
        group = []
        while at < len(copies) and (not group or "# kbest_rank = 1\n" not in copies[at]):
            group.append(copies[at])
            at += 1
        assert 1 <= len(group) <= 4
        scores, trees = [], []
        for rank, copy in enumerate(group, 1):
            lines = copy.split("\n")
            assert f"# kbest_rank = {rank}" in lines
            score_line = next(line for line in lines if line.startswith("# kbest_score = "))
            scores.append(float(score_line.split("= ")[1]))
            rest = [line for line in lines if not line.startswith("# kbest_")]
            words = [line.split("\t") for line in rest if line[:1].isdigit()]
            given_words = [line.split("\t") for line in given.split("\n") if line[:1].isdigit()]
            assert [w[:6] + w[8:] for w in words] == [w[:6] + w[8:] for w in given_words]
            trees.append(tuple(w[6] for w in words if "-" not in w[0] and "." not in w[0]))
            if rank == 1:
                assert "\n".join(rest) == best           # the first copy is parse's output
        assert scores == sorted(scores, reverse=True)
        assert len(set(trees)) == len(trees)
        sentence = _sentences_of(given)[0]
        if not parser.config.uses_lemmas:
            sentence = without_lemmas(sentence)
        S, _ = parser.model.arc_scores(sentence)
        heads = np.array([-1] + [int(h) for h in trees[0]])
        assert scores[0] == pytest.approx(tree_scores(S, heads[None])[0], abs=1e-5)
    assert at == len(copies) and len(parsed) == len(inputs)
    assert len(copies) > len(inputs)                     # sentences with several trees
    on_two = tmp_path / "jobs2.conllu"
    assert main(["-q", "parse", "--model", model, "--input", str(source),
                 "--output", str(on_two), "--kbest", "4", "--jobs", "2"]) == 0
    assert on_two.read_text() == kbest.read_text()


def _sentences_of(block):
    from polyparse.corpora.conllu_io import read_conllu
    import io

    return list(read_conllu(io.BytesIO((block + "\n\n").encode())))


@pytest.mark.parametrize("args,message", [
    (["--kbest", "0"], "--kbest must be at least 1"),
])
def test_cli_rejects_bad_kbest_before_any_work(sample_model_path, tmp_path, capsys, args,
                                               message):
    from polyparse.parser.cli import main
    from conftest import SAMPLE

    out = tmp_path / "out.conllu"
    assert main(["-q", "parse", "--model", str(sample_model_path), "--input",
                 str(SAMPLE / "dev.conllu"), "--output", str(out), *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("args", [["--decoder", "eisner"], ["--decoder", "lp"],
                                  ["--keep-given"]])
def test_cli_kbest_with_any_decoder_and_constraints_starts_with_parses_tree(
        sample_model_path, tmp_path, args):
    """--kbest goes with every decoder and with constraints: its first copy of each
    sentence is what parse writes with the same options."""
    from polyparse.parser.cli import main
    from conftest import SAMPLE

    blocks = _blocks((SAMPLE / "dev.conllu").read_text())[:6]
    if "--keep-given" in args:        # every other word's head and relation given
        blocks = [_half_given(block) for block in blocks]
    source = tmp_path / "in.conllu"
    source.write_text("".join(block + "\n\n" for block in blocks))
    plain, kbest = tmp_path / "plain.conllu", tmp_path / "kbest.conllu"
    model = str(sample_model_path)
    assert main(["-q", "parse", "--model", model, "--input", str(source),
                 "--output", str(plain), *args]) == 0
    assert main(["-q", "parse", "--model", model, "--input", str(source),
                 "--output", str(kbest), "--kbest", "3", *args]) == 0
    firsts = [block for block in _blocks(kbest.read_text()) if "# kbest_rank = 1\n" in block]
    assert ["\n".join(line for line in block.split("\n") if not line.startswith("# kbest_"))
            for block in firsts] == _blocks(plain.read_text())
    assert len(_blocks(kbest.read_text())) > len(firsts)


def _half_given(block):
    """``block`` with the HEAD and DEPREL of every even word made ``_``."""
    lines = []
    for line in block.split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and int(cols[0]) % 2 == 0:
            cols[6] = cols[7] = "_"
        lines.append("\t".join(cols))
    return "\n".join(lines)
