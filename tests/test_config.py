"""Typed training settings (parser/config.py): a misspelt setting fails where it is made
or read, the model file keeps its JSON shape, and files written before still load."""

import json
from dataclasses import asdict

import pytest

from polyparse.decoders import OptionError
from polyparse.parser import model_file
from polyparse.parser.cli import main
from polyparse.parser.config import (ConfigError, FeatureConfig, LemmatizerConfig,
                                     MixingConfig, PartsConfig, PrunerConfig, TaggerConfig,
                                     TokenizerOptions, TrainConfig)
from polyparse.parser.pipeline import Parser

TYPED = {"features": FeatureConfig, "parts": PartsConfig, "pruner": PrunerConfig,
         "tokenizer": TokenizerOptions, "tagger": TaggerConfig,
         "lemmatizer": LemmatizerConfig, "mixing": MixingConfig}


@pytest.mark.parametrize("kind", sorted(TYPED.values(), key=lambda kind: kind.__name__))
def test_a_misspelt_option_fails_when_the_settings_are_made(kind):
    with pytest.raises(TypeError, match="max_head"):
        kind(**({"shards": 2} if kind is MixingConfig else {}), max_head=3)


def test_a_dict_is_not_taken_for_typed_settings():
    with pytest.raises(TypeError, match="TrainConfig.parts is a PartsConfig, not dict"):
        TrainConfig(parts={"order": "2"})


def test_the_options_of_the_trainer_and_decoder_are_checked_against_their_declarations():
    with pytest.raises(OptionError, match=r"trainer 'ssg' does not take option\(s\): etaa"):
        TrainConfig(trainer_options={"etaa": 0.5})
    with pytest.raises(OptionError, match="does not take option"):
        TrainConfig(decoder="mst", decoder_options={"max_iterations": 5})
    with pytest.raises(OptionError, match="takes float or 'sqrt'"):
        TrainConfig(trainer_options={"eta": "often"})
    assert TrainConfig(parts=PartsConfig("2")).decoder == "ad3-exact"


def test_values_are_checked_when_the_settings_are_made():
    with pytest.raises(ValueError, match="order must be one of"):
        PartsConfig("3")
    with pytest.raises(ValueError, match="shards must be >= 1"):
        MixingConfig(0)
    with pytest.raises(ValueError, match="xpos must be one of"):
        TaggerConfig(xpos="both")
    with pytest.raises(ValueError, match="tree features are its second pass"):
        TaggerConfig(tree=True)
    with pytest.raises(ValueError, match="char_bits=40 is outside"):
        TokenizerOptions(char_bits=40)


def test_the_json_is_plain_objects_of_every_field_and_reads_back():
    config = TrainConfig(parts=PartsConfig("2", consecutive_siblings=True),
                         pruner=PrunerConfig(max_heads=5, labeled=True),
                         tagger=TaggerConfig(epochs=3), word_clusters="paths",
                         features=FeatureConfig(bits=18, clusters=True), mixing=MixingConfig(2),
                         trainer_options={"eta": 0.5})
    stored = json.loads(json.dumps(config.to_json()))
    assert stored["parts"] == {"order": "2", "consecutive_siblings": True, "max_valency": 3}
    assert stored["pruner"] == {"threshold": 1e-4, "max_heads": 5, "epochs": 2,
                                "labeled": True}
    assert stored["mixing"] == {"shards": 2, "mixing": "uniform"}
    assert stored["tagger"]["epochs"] == 3 and stored["word_clusters"] == "paths"
    assert stored["features"]["clusters"] is True
    assert stored["tagger"]["xpos"] == "separate"
    assert stored["trainer_options"] == {"eta": 0.5}
    assert TrainConfig.from_json(stored) == config


def test_the_settings_of_older_files_still_read():
    """Files before typed settings held only the options given; before tokenizers,
    taggers and lemmatizers were stored, none; before SSG-eta declared its relaxed
    decoder, a ``relaxed_decoder``."""
    config = TrainConfig.from_json({
        "trainer": "ssg", "decoder": "ad3-exact", "single_root": True, "epochs": 3,
        "seed": 0, "trainer_options": {"eta": 0.5}, "decoder_options": {},
        "features": {"bits": 18, "label_bits": 12, "min_count": 1, "templates": "full",
                     "morphology": False},
        "parts": {"order": "2"}, "prune": None, "pruner": {"max_heads": 3},
        "jackknife": 10, "lemmas": None, "mixing": {"shards": 2, "mixing": "uniform"},
        "relaxed_decoder": "lp"})
    assert config.parts == PartsConfig("2") and config.pruner == PrunerConfig(max_heads=3)
    assert config.trainer_options == {"eta": 0.5, "relaxed": "lp"}
    assert config.tokenizer is config.tagger is config.lemmatizer is None
    assert config.mixing == MixingConfig(2) and config.features.bits == 18
    with_seed = TrainConfig.from_json({"tokenizer": {"seed": 3, "epochs": 2},
                                       "tagger": {"epochs": 3, "clusters": "paths"}})
    assert with_seed.tokenizer == TokenizerOptions(epochs=2)
    # before the parser read word clusters, they were the tagger's
    assert with_seed.tagger == TaggerConfig(epochs=3) and with_seed.word_clusters == "paths"
    assert not with_seed.features.clusters
    with pytest.raises(ValueError, match="cluster features need word clusters"):
        TrainConfig(features=FeatureConfig(clusters=True))


@pytest.mark.parametrize("settings, message", [
    ({"tagger": {"epoch": 3}}, "unknown tagger option 'epoch'"),
    ({"parts": {"order": "2", "siblings": True}}, "unknown parts option 'siblings'"),
    ({"pruner": {"max_heads": 3, "heads": 2}}, "unknown pruner option 'heads'"),
    ({"tokenizer_options": {}}, "unknown training setting 'tokenizer_options'"),
    ({"trainer_options": {"etaa": 1.0}}, "trainer 'ssg' does not take option"),
    ({"parts": {"order": 2}}, "parts settings: order must be one of"),
])
def test_unknown_stored_settings_are_named(settings, message):
    with pytest.raises(ConfigError, match=message):
        TrainConfig.from_json(settings)


def test_a_model_file_with_an_unknown_option_is_an_error_naming_file_and_option(
        sample_model_path, tmp_path, capsys):
    stored = model_file.load(sample_model_path)
    stored.metadata["training"]["tagger"]["beam"] = 4
    bad = tmp_path / "bad.npz"
    model_file.save(bad, stored)
    with pytest.raises(model_file.ModelFileError,
                       match=f"{bad}: cannot read its training settings: unknown tagger "
                             "option 'beam'"):
        Parser.load(bad)
    conllu = tmp_path / "in.conllu"
    conllu.write_text("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n")
    assert main(["-q", "parse", "--model", str(bad), "--input", str(conllu)]) == 2
    err = capsys.readouterr().err
    assert f"polyparse: error: {bad}: cannot read its training settings" in err
    assert "'beam'" in err and "Traceback" not in err


def test_a_saved_parser_keeps_its_settings(sample_model_path):
    parser = Parser.load(sample_model_path)
    assert isinstance(parser.config.tagger, TaggerConfig)
    assert parser.config.tagger.epochs == 4 and parser.config.jackknife == 3
    assert parser.config.features.bits is not None      # sized when it was trained
    trained = {k: v for k, v in asdict(parser.config.tagger).items()
               if k not in ("epochs", "second_pass")}
    assert parser.tagger.get_params() == trained
    assert parser.retagger.get_params() == {**trained, "tree": True}
