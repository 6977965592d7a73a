"""``polyparse train --treebank NAME``: from a treebank's name to a scored model in one
command, offline, against a local HTTP server laid out as ``download`` expects; the
recipes of parser/recipes.py; the error without network."""

from __future__ import annotations

import socket
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from polyparse.corpora.download import MANIFEST, TREEBANKS
from polyparse.corpora.word_clusters import spacy_clusters_installed
from polyparse.parser.checks import ModelSettings
from polyparse.parser.cli import build_parser, main
from polyparse.parser.cli.train import train_config
from polyparse.parser.recipes import FAMILIES, PLAIN, language, recipe_for

from conftest import SAMPLE

NAME = "UD_English-EWT"
TAG = "r9.9"
SENTENCES = {"train": 60, "dev": 20}
"""The first sentences of the sample's train and dev files that the server holds."""


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """The base URL of a server holding a small UD_English-EWT (train and dev, made of
    the sample) at ``NAME/TAG/en_ewt-ud-SPLIT.conllu``."""
    root = tmp_path_factory.mktemp("remote")
    folder = root / NAME / TAG
    folder.mkdir(parents=True)
    for split, count in SENTENCES.items():
        blocks = (SAMPLE / f"{split}.conllu").read_text(encoding="utf-8").split("\n\n")
        (folder / f"en_ewt-ud-{split}.conllu").write_text("\n\n".join(blocks[:count]) + "\n\n",
                                                          encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def closed_port() -> int:
    """A local port that nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def small_run(base_url: str, cache: Path, model: Path, *extra: str) -> list[str]:
    return ["train", "--treebank", NAME, "--base-url", base_url, "--tag", TAG,
            "--cache", str(cache), "--model", str(model), "--epochs", "1",
            "--jackknife", "2", "--tagger-epochs", "1", *extra]


@pytest.mark.slow
def test_from_a_clean_cache_to_a_scored_model_in_one_command(remote, tmp_path, capsys):
    cache, model = tmp_path / "cache", tmp_path / "en.npz"
    assert main(small_run(remote, cache, model, "--order", "1")) == 0
    out = capsys.readouterr().out
    # the dev split scored as `polyparse eval --model` does, from the raw text
    assert out.startswith("from text:")
    scores = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    assert float(scores["Tokens"][2]) > 90 and 20 < float(scores["UAS"][2]) <= 100
    assert int(scores["all"][1]) == sum(  # "all words": every dev word scored
        1 for line in (cache / NAME / TAG / "en_ewt-ud-dev.conllu").read_text().splitlines()
        if line[:1].isdigit() and "-" not in line.split("\t")[0])
    # the splits in the cache, recorded in its manifest; no test split asked for
    # (and English word clusters, where spaCy's lookups data is installed)
    files = sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file())
    clusters = ["clusters/en-brown.paths"] if spacy_clusters_installed() else []
    assert files == [MANIFEST, f"{NAME}/{TAG}/en_ewt-ud-dev.conllu",
                     f"{NAME}/{TAG}/en_ewt-ud-train.conllu", *clusters]
    # --order 1 given overrides the Germanic recipe's order 2
    settings = ModelSettings.read(model)
    assert settings.config.order == "1"
    assert settings.config.word_clusters == (str(cache / clusters[0]) if clusters else None)
    assert settings.config.features.clusters == bool(clusters)
    assert settings.components == {"tokenizer", "tagger", "lemmatizer"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "en.npz"]


def test_without_network_a_clear_error_and_nothing_left(tmp_path, capsys):
    cache, model = tmp_path / "cache", tmp_path / "out" / "en.npz"
    model.parent.mkdir()
    url = f"http://127.0.0.1:{closed_port()}"
    status = main(small_run(url, cache, model))
    err = capsys.readouterr().err
    assert status == 2
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"polyparse: error: cannot download treebank {NAME} from "
                           f"{url.removeprefix('http://')}: {url}/{NAME}/{TAG}/")
    assert "cannot connect" in last
    assert not cache.exists() and list(model.parent.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (["--treebank", "UD_Nowhere-X"], "--treebank UD_Nowhere-X: unknown treebank"),
    (["--treebank", NAME, "--dev", "d.conllu"], "--dev: --treebank trains on"),
    (["--train", "t.conllu", "--tag", "r2.14"], "--tag: for --treebank only"),
    (["--train", "t.conllu", "--cache", "c", "--base-url", "u"],
     "--cache, --base-url: for --treebank only"),
    (["--train", "t.conllu", "--lang", "EN"], "--lang EN: not an ISO 639 language code"),
    (["--treebank", "UD_English-EWT", "--lang", "en"], "--lang: --treebank names the language"),
    (["--train", "t.conllu", "--lang", "xx", "--no-word-clusters", "--cluster-features"],
     "--no-word-clusters: drop --word-clusters and --cluster-features"),
])
def test_treebank_and_language_options_refused_before_any_work(argv, message, tmp_path, capsys):
    assert main(["train", *argv, "--model", str(tmp_path / "m.npz")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        f"polyparse: error: {message}")
    assert list(tmp_path.iterdir()) == []


def config_of(*argv: str):
    """The training settings ``polyparse train ARGV`` would run with (nothing read)."""
    from polyparse.parser.cli.train import treebank_recipe

    args = build_parser().parse_args(["train", *argv, "--model", "m.npz"])
    return train_config(args, treebank_recipe(args)[0])


def test_a_treebank_trains_with_its_familys_recipe():
    turkish = config_of("--treebank", "UD_Turkish-IMST")
    assert (turkish.order, turkish.features.morphology, turkish.tagger.feats,
            turkish.tagger.endings) == ("2", True, "split", True)
    english = config_of("--treebank", "UD_English-EWT")
    assert (english.order, english.tagger.endings) == ("2", False)
    slovenian = config_of("--treebank", "UD_Slovenian-SSJ")
    assert (slovenian.order, slovenian.tagger.endings) == ("2", False)
    danish = config_of("--treebank", "UD_Danish-DDT")
    assert [c.tagger.second_pass for c in (turkish, english, slovenian, danish)] == \
        [False, True, True, False]
    assert english.order == danish.order == "2"


def test_a_language_code_trains_a_file_with_its_familys_recipe():
    turkish = config_of("--train", "t.conllu", "--lang", "tr")
    assert (turkish.order, turkish.features.morphology, turkish.tagger.feats) == \
        ("2", True, "split")


def test_options_given_override_the_recipe():
    turkish = config_of("--treebank", "UD_Turkish-IMST", "--order", "1", "--no-morphology",
                        "--second-pass")
    assert (turkish.order, turkish.features.morphology, turkish.tagger.feats,
            turkish.tagger.second_pass) == ("1", False, "split", True)
    assert not config_of("--treebank", "UD_Slovenian-SSJ",
                         "--no-second-pass").tagger.second_pass


def test_a_language_in_no_family_and_a_file_get_the_plain_defaults():
    assert recipe_for("ja") == (None, PLAIN)
    plain, japanese = config_of("--train", "t.conllu"), config_of("--treebank",
                                                                    "UD_Japanese-GSD")
    assert plain.to_json() == japanese.to_json()
    assert (plain.order, plain.features.morphology, plain.tagger.feats) == \
        ("1", False, "whole")


def test_families_do_not_overlap_and_cover_the_benchmarked_treebanks():
    seen: dict[str, str] = {}
    for name, family in FAMILIES.items():
        for code in family.languages:
            assert code not in seen, f"{code} in {seen.get(code)} and {name}"
            seen[code] = name
    benchmarked = {"en_ewt", "en_gum", "da_ddt", "nl_alpino", "sl_ssj", "sv_talbanken",
                   "tr_imst"}                      # eval/results/defaults.md
    assert {language(prefix) for prefix in benchmarked} <= set(seen)
    assert benchmarked <= set(TREEBANKS.values())
