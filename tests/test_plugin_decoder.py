"""A new relaxation plugs in by one class: registered and declared once, the command
line, the relaxation pictures, relaxed training and constrained decoding take it from
its declaration, with no edit anywhere else (issue 42)."""

import numpy as np
import pytest

from conftest import SAMPLE
from polyparse.corpora.conllu_io import read_treebank
from polyparse.decoders import DECODERS, Certificate, DecodeResult, DecodeStats, Decoder, register
from polyparse.decoders.trees import chu_liu_edmonds
from polyparse.parser.cli import main
from polyparse.parser.pipeline import Parser


class HeadSelection(Decoder):
    """The head-selection relaxation of an arc-factored problem: every word takes its
    best head, the tree constraint dropped; its value bounds every tree's score, and the
    maximum spanning tree under its point rounds it.

    Parameters
    ----------
    margin:
        Added to the upper bound (a toy option, to show that options are declared).
    """

    exact = False

    def __init__(self, *, single_root: bool = True, margin: float = 0.0,
                 time_limit: float | None = None) -> None:
        super().__init__(single_root=single_root, time_limit=time_limit)
        self.margin = margin

    def decode(self, parts, scores) -> DecodeResult:
        S = parts.arc_matrix(scores)
        point = np.zeros_like(S)
        best = np.argmax(S[:, 1:], axis=0)
        point[best, np.arange(1, S.shape[0])] = 1.0
        heads = chu_liu_edmonds(np.where(np.isfinite(S), point + 1e-3 * np.tanh(S), -np.inf),
                                self.single_root)
        output = parts.from_heads(heads)
        bound = float(S[best, np.arange(1, S.shape[0])].sum()) + self.margin
        return DecodeResult(output=output, heads=heads, value=float(scores @ output),
                            stats=DecodeStats(upper_bound=bound))

    def certificate(self, result: DecodeResult) -> Certificate:
        return Certificate("rounded", result.value, upper_bound=result.stats.upper_bound)


@pytest.fixture
def head_selection():
    register("head-selection")(HeadSelection)
    yield HeadSelection
    del DECODERS["head-selection"]


def test_a_relaxation_plugs_in_by_its_declaration(head_selection, sample_model_path,
                                                  tmp_path):
    out = tmp_path / "out.conllu"
    assert main(["-q", "parse", "--model", str(sample_model_path), "--input",
                 str(SAMPLE / "dev.conllu"), "--output", str(out), "--certify",
                 "--decoder", "head-selection", "--margin", "2.5"]) == 0
    parsed = read_treebank(out)
    assert out.read_text().count("# decoding = rounded") == len(parsed) > 0

    parser = Parser.load(sample_model_path)
    parser.use_decoder("head-selection", margin=1.0)
    assert parser.decoder.margin == 1.0
    sentence = read_treebank(SAMPLE / "dev.conllu")[0]
    relaxation = parser.relax(sentence)          # a relaxation is its own relaxation
    assert relaxation.decoder == "head-selection"
    certificate = relaxation.analysis.certificate
    assert certificate.upper_bound >= certificate.score
    assert parser.decoder.relaxed_twin() is parser.decoder      # SSG's relaxed steps
    assert parser.decoder.for_constraints().name == "ilp"       # it honors no constraint
    with pytest.raises(ValueError, match="margin"):
        parser.use_decoder("head-selection", margin="wide")
