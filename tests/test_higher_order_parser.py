"""Higher-order models end to end: pruning, SSG-eta with the LP, the gap report."""

import json

import numpy as np
import pytest

from polyparse.decoders import PartType
from polyparse.parser import model_file
from polyparse.parser.cli import main
from polyparse.parser.config import FeatureConfig, PartsConfig, PrunerConfig
from polyparse.parser.pipeline import Parser, TrainConfig

SMALL = FeatureConfig(bits=18, label_bits=12)


# one xdist worker runs the file, so that the module's fixture (one order-2 model) is
# built once, not once per worker
pytestmark = pytest.mark.xdist_group("order2")


@pytest.fixture(scope="module")
def order2_model(tmp_path_factory, sample_train):
    """Order-2 model, pruned to 3 heads per word, trained with eta = 0.5 for one epoch
    (exact inference by AD3 and branch and bound, order 2's default)."""
    path = tmp_path_factory.mktemp("order2") / "order2.npz"
    config = TrainConfig(epochs=1, decoder="ad3-exact", features=SMALL,
                         trainer_options={"eta": 0.5}, parts=PartsConfig(order="2"),
                         pruner=PrunerConfig(max_heads=3, epochs=1))
    parser = Parser.train(sample_train[:150], config)
    parser.save(path)
    return path


def test_pruned_parts_keep_gold_in_training_and_report_oracle(order2_model, sample_dev):
    parser = Parser.load(order2_model)
    pruner = parser.model.pruner
    assert pruner is not None and pruner.options.max_heads == 3
    oracle = pruner.oracle(sample_dev)
    assert 80.0 <= oracle["oracle_uas"] <= 100.0 and oracle["arcs_per_word"] <= 3.0
    sentence = sample_dev[0]
    arcs = parser.model.candidate_arcs(sentence, gold=True)
    words = np.arange(1, len(sentence) + 1)
    assert set(zip(sentence.heads[1:], words)) <= set(map(tuple, arcs))


def test_pruner_calibration_takes_the_best_oracle_when_the_target_is_out_of_reach(
        order2_model, sample_dev):
    pruner = Parser.load(order2_model).model.pruner
    temperatures = (1.0, 4.0, 16.0, 64.0)
    oracles = []
    for t in temperatures:
        pruner.temperature = t
        oracles.append(pruner.oracle(sample_dev[:40])["oracle_uas"])
    chosen = pruner.calibrate(sample_dev[:40], target=101.0, temperatures=temperatures)
    assert chosen["oracle_uas"] == max(oracles)
    assert pruner.temperature == temperatures[oracles.index(max(oracles))]
    reachable = min(oracles)
    pruner.calibrate(sample_dev[:40], target=reachable, temperatures=temperatures)
    assert pruner.temperature == temperatures[0]


def test_the_pruner_is_unlabeled_and_older_files_keep_their_labeled_one(order2_model,
                                                                        sample_dev, tmp_path):
    pruner = Parser.load(order2_model).model.pruner
    assert not pruner.labeled and pruner.model.dim == pruner.model.part_dim
    # its fused arc scores are the scores of its examples' ARC parts, no label folded in
    sentence = max(sample_dev[:20], key=len)
    S, labels = pruner.model.arc_scores(sentence)
    example = pruner.model.example(sentence, parts=pruner.model.parts(sentence, None))
    parts = pruner.model.scores(example).parts[example.parts.block(PartType.ARC)]
    arcs = example.parts.arcs
    np.testing.assert_allclose(S[arcs[:, 0], arcs[:, 1]], parts, rtol=1e-9, atol=1e-9)
    assert not labels.any() and np.isfinite(parts).all() and parts.std() > 0
    # a file from before unlabeled pruners has no "labeled" entry: its pruner is labeled
    stored = model_file.load(order2_model)
    del stored.metadata["pruner"]["labeled"]
    old = tmp_path / "old.npz"
    model_file.save(old, stored)
    pruner = Parser.load(old).model.pruner
    assert pruner.labeled and pruner.model.labels == Parser.load(order2_model).model.labels


def test_order2_parses_into_trees(order2_model, sample_dev):
    parser = Parser.load(order2_model)
    for sentence in parser.parse(sample_dev[:10]):
        heads = sentence.heads
        assert (heads[1:] == 0).sum() == 1
        for m in range(1, len(heads)):          # every word reaches the root
            seen, node = set(), m
            while node != 0:
                assert node not in seen
                seen.add(node)
                node = heads[node]


def test_gap_command_writes_records_and_summary(order2_model, tmp_path, capsys, sample_dev):
    dev = tmp_path / "dev.conllu"
    dev.write_text("".join(s.to_text() for s in sample_dev[:40]))
    jsonl = tmp_path / "gap.jsonl"
    assert main(["-q", "gap", "--model", str(order2_model), "--input",
                 str(dev), "--jsonl", str(jsonl)]) == 0
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(records) == 40
    keys = {"sent_id", "n", "lp_value", "ilp_value", "rounded_value", "gap", "integral",
            "fractional_arcs", "time_build", "time_lp", "time_round", "time_ilp",
            "ilp_nodes", "fallback", "search_moves"}
    for r in records:
        assert keys <= set(r)
        assert r["lp_value"] >= r["ilp_value"] - 1e-6 * max(1.0, abs(r["ilp_value"]))
        assert r["ilp_value"] >= r["rounded_value"] - 1e-6 * max(1.0, abs(r["ilp_value"]))
        assert r["integral"] == (r["fractional_arcs"] == 0)
    summary = capsys.readouterr().out
    assert "all" in summary and "UAS ILP" in summary
    plain = tmp_path / "plain.jsonl"
    assert main(["-q", "gap", "--model", str(order2_model), "--input",
                 str(dev), "--jsonl", str(plain), "--no-search"]) == 0
    mst_only = [json.loads(line) for line in plain.read_text().splitlines()]
    assert all(r["search_moves"] == 0 for r in mst_only)
    for searched, r in zip(records, mst_only):
        # the search starts from the MST-rounded tree and every move gains
        assert (searched["search_moves"] > 0) == (
            searched["rounded_value"] > r["rounded_value"] + 1e-9)
        assert searched["rounded_value"] >= r["rounded_value"] - 1e-9
def test_gap_compares_ad3_with_highs_on_the_same_sentences(order2_model, tmp_path, capsys,
                                                           sample_dev):
    """``--compare ad3``: every record carries AD3's relaxation beside HiGHS's, whose LP
    value it matches (AD3's is a feasible point's, so at most HiGHS's optimum), and a
    second summary follows; a model whose parts AD3 has no factor for is refused."""
    dev = tmp_path / "dev.conllu"
    dev.write_text("".join(s.to_text() for s in sample_dev[:30]))
    jsonl = tmp_path / "gap.jsonl"
    assert main(["-q", "gap", "--model", str(order2_model), "--input", str(dev),
                 "--jsonl", str(jsonl), "--compare", "ad3"]) == 0
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(records) == 30
    for r in records:
        ad3 = r["compare"]
        assert ad3["decoder"] == "ad3"
        assert set(ad3) - {"decoder"} <= set(r)
        scale = max(1.0, abs(r["lp_value"]))
        assert ad3["lp_value"] <= r["lp_value"] + 1e-6 * scale
        assert ad3["lp_value"] == pytest.approx(r["lp_value"], rel=1e-5, abs=1e-5)
        assert r["ilp_value"] >= ad3["rounded_value"] - 1e-6 * scale
    assert "ad3, the same sentences:" in capsys.readouterr().out


def test_gap_compare_refuses_parts_ad3_has_no_factor_for(tmp_path, sample_train, capsys):
    model = tmp_path / "consecutive.npz"
    config = TrainConfig(epochs=1, decoder="lp", features=SMALL,
                         parts=PartsConfig(order="2", consecutive_siblings=True),
                         pruner=PrunerConfig(max_heads=3, epochs=1))
    Parser.train(sample_train[:20], config).save(model)
    dev = tmp_path / "dev.conllu"
    dev.write_text("".join(s.to_text() for s in sample_train[:2]))
    assert main(["-q", "gap", "--model", str(model), "--input", str(dev),
                 "--compare", "ad3"]) == 2
    assert "decoder 'ad3' cannot decode order 2" in capsys.readouterr().err


