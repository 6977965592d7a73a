"""Certificates (``Decoder.certificate``, ``parse --certify``) against the decoders' own
stats and, for the exact kinds, against every tree of small sentences."""

from __future__ import annotations

import re

import numpy as np
import pytest

from polyparse.decoders import Certificate, CertificateCounts, make_decoder
from polyparse.decoders.higher_order import build_parts
from brute_force import all_trees
from test_ilp import random_scores


def best_tree_score(parts, scores, single_root=True):
    """The best score over every tree of ``parts``' words (all candidate arcs)."""
    return max(float(scores @ parts.from_heads(t)) for t in all_trees(parts.n, single_root))


def fractional_instance(n=5):
    """An order-2 instance (all-pairs siblings) whose LP optimum is fractional: the first
    seed of a fixed sequence that gives one."""
    parts = build_parts(n, order="2")
    for seed in range(100):
        scores = random_scores(parts, np.random.default_rng(seed), higher_order_scale=0.5)
        if not make_decoder("lp").decode(parts, scores).stats.integral:
            return parts, scores
    raise AssertionError("no fractional LP among 100 seeds")


def test_integral_lp_is_certified_lp_integral_with_the_optimal_score():
    rng = np.random.default_rng(0)
    parts = build_parts(5)                              # arc-factored: the LP is tight
    scores = rng.normal(size=len(parts))
    for name in ("lp", "ad3"):
        result = make_decoder(name).decode(parts, scores)
        certificate = make_decoder(name).certificate(result)
        assert certificate.kind == "lp-integral" and certificate.optimal
        assert certificate.upper_bound is None and certificate.gap is None
        assert certificate.score == pytest.approx(result.stats.rounded_value)
        assert certificate.score == pytest.approx(best_tree_score(parts, scores), abs=1e-6)
        assert certificate.comment() == f"# decoding = lp-integral; score = {certificate.score:.6f}"


def test_fractional_lp_is_rounded_with_the_decoders_bound_and_score():
    parts, scores = fractional_instance()
    best = best_tree_score(parts, scores)
    lp = make_decoder("lp")
    result = lp.decode(parts, scores)
    certificate = lp.certificate(result)
    assert certificate.kind == "rounded"
    assert certificate.upper_bound == result.stats.lp_value
    assert certificate.score == result.stats.rounded_value
    assert certificate.score == pytest.approx(float(scores @ parts.from_heads(result.heads)))
    assert certificate.upper_bound >= best - 1e-6 >= certificate.score - 2e-6
    assert certificate.gap == pytest.approx(certificate.upper_bound - certificate.score)
    assert certificate.optimal == (certificate.gap <= 1e-6 * max(1, abs(certificate.upper_bound)))
    comment = certificate.comment()
    match = re.fullmatch(r"# decoding = rounded; upper_bound = (\S+); score = (\S+); "
                         r"gap = (\S+)", comment)
    assert match, comment
    assert [float(g) for g in match.groups()] == pytest.approx(
        [certificate.upper_bound, certificate.score, certificate.gap], abs=1e-6)
    ad3 = make_decoder("ad3")
    result = ad3.decode(parts, scores)
    certificate = ad3.certificate(result)
    assert certificate.kind == ("lp-integral" if result.stats.certified else "rounded")
    assert certificate.kind == "rounded"                    # same LP: fractional too
    assert certificate.upper_bound == result.stats.dual_value >= best - 1e-6


@pytest.mark.parametrize("name", ["ilp", "ad3-exact"])
def test_exact_decoders_are_certified_exact_at_the_brute_force_optimum(name):
    decoder = make_decoder(name, time_limit=None)      # exactness, however loaded the machine
    for seed, n in ((0, 3), (1, 4), (2, 5)):
        parts = build_parts(n, order="2")
        scores = random_scores(parts, np.random.default_rng(seed), higher_order_scale=0.5)
        result = decoder.decode(parts, scores)
        certificate = decoder.certificate(result)
        assert certificate.kind == "exact" and certificate.optimal
        assert not result.stats.fallback
        assert certificate.score == pytest.approx(best_tree_score(parts, scores), abs=1e-6)
    parts, scores = fractional_instance()                   # exact where the LP is not
    assert decoder.certificate(decoder.decode(parts, scores)).score == pytest.approx(
        best_tree_score(parts, scores), abs=1e-6)


@pytest.mark.parametrize("name,stages", [("ilp", {"build", "lp", "ilp"}),
                                         ("lp", {"build", "lp"}),
                                         ("ad3-exact", {"lp", "branch"})])
def test_time_limit_fallback_names_the_decoders_stage(name, stages):
    parts, scores = fractional_instance()
    decoder = make_decoder(name, time_limit=1e-9)
    result = decoder.decode(parts, scores)
    assert result.stats.fallback and result.stats.fallback_stage in stages
    certificate = decoder.certificate(result)
    assert certificate.kind == "time-limit" and not certificate.optimal
    assert certificate.stage == f"{name}:{result.stats.fallback_stage}"
    assert certificate.score == pytest.approx(float(scores @ parts.from_heads(result.heads)))
    stats = result.stats
    bound = stats.lp_value if stats.dual_value is None else stats.dual_value
    assert certificate.upper_bound == bound
    assert certificate.comment().startswith(
        f"# decoding = time-limit; stage = {certificate.stage}; ")


@pytest.mark.parametrize("name", ["mst", "eisner"])
def test_first_order_exact_decoders_say_their_algorithm(name):
    rng = np.random.default_rng(4)
    parts = build_parts(5)
    scores = rng.normal(size=len(parts))
    decoder = make_decoder(name)
    result = decoder.decode(parts, scores)
    certificate = decoder.certificate(result)
    assert certificate.kind == name and certificate.optimal
    assert certificate.score == result.value
    if name == "mst":
        assert certificate.score == pytest.approx(best_tree_score(parts, scores))
    S = parts.arc_matrix(scores)
    assert decoder.certificate(decoder.decode_arcs(S)).score == pytest.approx(result.value)


def test_counts_add_merge_and_summarize():
    counts = CertificateCounts()
    for certificate in (Certificate("exact", 1.0), Certificate("rounded", 1.0, 1.5),
                        Certificate("rounded", 1.0, 1.0), Certificate("time-limit", 0.0,
                                                                      stage="ilp:ilp")):
        counts.add(certificate)
    before = counts.copy()
    counts.add(Certificate("exact", 2.0))
    assert counts.since(before).kinds["exact"] == 1 and counts.since(before).optimal == 1
    merged = CertificateCounts()
    merged.merge(counts)
    assert merged == counts
    assert counts.summary() == ("decoding: 60.0% of 5 sentences certified optimal "
                                "(exact 2, rounded 2, time-limit 1)")
    with pytest.raises(ValueError, match="unknown certificate kind"):
        Certificate("close enough", 0.0)


def _blocks(text):
    return [b for b in text.split("\n\n") if b.strip()]


def test_cli_certify_adds_one_comment_per_sentence_and_a_summary(sample_model_path, tmp_path,
                                                                 capsys):
    from polyparse.parser.cli import main
    from polyparse.parser.pipeline import Parser
    from conftest import SAMPLE

    source = tmp_path / "in.conllu"
    source.write_text("".join(b + "\n\n" for b in _blocks((SAMPLE / "dev.conllu").read_text())[:30]))
    plain, certified = tmp_path / "plain.conllu", tmp_path / "certified.conllu"
    model = str(sample_model_path)
    assert main(["-q", "parse", "--model", model, "--input", str(source),
                 "--output", str(plain)]) == 0
    capsys.readouterr()
    for decoder, kind in (("mst", "mst"), ("ilp", "exact")):
        assert main(["-q", "parse", "--model", model, "--input", str(source), "--output",
                     str(certified), "--certify", "--decoder", decoder]) == 0
        assert capsys.readouterr().err.strip() == (
            f"decoding: 100.0% of 30 sentences certified optimal ({kind} 30)")
        parser = Parser.load(sample_model_path)
        for given, parsed in zip(_blocks(plain.read_text()), _blocks(certified.read_text())):
            lines = parsed.split("\n")
            ours = [line for line in lines if line.startswith("# decoding")]
            assert len(ours) == 1 and ours[0].startswith(f"# decoding = {kind}; score = ")
            at = lines.index(ours[0])
            assert all(line.startswith("#") for line in lines[:at])
            assert not lines[at + 1].startswith("#")
            assert "\n".join(lines[:at] + lines[at + 1:]) == given
        # the score is the model's score of the tree written
        from test_kbest import _sentences_of
        from polyparse.parser.training import without_lemmas
        sentence = _sentences_of(_blocks(certified.read_text())[0])[0]
        score = float(_blocks(certified.read_text())[0].split("score = ")[1].split("\n")[0])
        S, _ = parser.model.arc_scores(without_lemmas(sentence)
                                       if not parser.config.uses_lemmas else sentence)
        n = len(sentence)
        assert score == pytest.approx(S[sentence.heads[1:], np.arange(1, n + 1)].sum(),
                                      abs=1e-5)


def test_certify_counts_from_python_and_on_two_processes(sample_model_path, sample_dev):
    from polyparse.parser.pipeline import Parser

    parser = Parser.load(sample_model_path)
    parser.use_decoder("lp", time_limit=1e-9)          # every sentence falls back
    serial = [s.to_text() for s in parser.parse(sample_dev[:20], certify=True)]
    assert parser.decodings.kinds["time-limit"] == 20 == parser.fallbacks
    assert all("# decoding = time-limit; stage = lp:" in text for text in serial)
    two = Parser.load(sample_model_path)
    two.use_decoder("lp", time_limit=1e-9)
    assert [s.to_text() for s in two.parse(sample_dev[:20], certify=True, jobs=2)] == serial
    assert two.decodings == parser.decodings
    analysis = Parser.load(sample_model_path).analyze(sample_dev[0])
    assert analysis.certificate.kind == "mst"
    assert analysis.head_probs is None
