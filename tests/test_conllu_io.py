"""Reading, validating and writing CoNLL-U / CoNLL-X (corpora.conllu_io, corpora.files)."""

from __future__ import annotations

import copy
import io
import os
import tracemalloc
import types
from pathlib import Path

import numpy as np
import pytest

from polyparse.corpora.conllu_io import read_conllu, read_treebank, write_conllu
from polyparse.corpora.errors import CorpusError
from polyparse.corpora.files import atomic_write
from polyparse.corpora.sentence import DEPREL_COLUMN, HEAD_COLUMN, ROOT, Sentence

from conftest import UD  # noqa: E402  (the shared treebanks, $POLYPARSE_UD)
UD_FILES = sorted(UD.glob("*/*.conllu"))


def tok(token_id: object, head: object = 0, deprel: str = "dep", form: str = "w") -> str:
    """One 10-column token line."""
    return "\t".join(map(str, (token_id, form, form, "X", "_", "_", head, deprel, "_", "_")))


SENT1 = "\n".join([
    "# sent_id = s1",
    "# text = Dogs bark.",
    "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t2:nsubj\t_",
    "2\tbark\tbark\tVERB\tVBP\tMood=Ind\t0\troot\t0:root\tSpaceAfter=No",
    "3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_",
]) + "\n\n"
SENT2 = "\n".join([
    "# sent_id = s2",
    "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    "1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t3:aux\t_",
    "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t3:advmod\t_",
    "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t0:root\t_",
    "3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t0:root\t_",
]) + "\n\n"


def write(tmp_path: Path, text: str | bytes, name: str = "in.conllu") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def roundtrip(text: str) -> str:
    out = io.StringIO(newline="")
    write_conllu(read_conllu(io.BytesIO(text.encode("utf-8"))), out)
    return out.getvalue()


# --- real treebanks --------------------------------------------------------------------

@pytest.mark.realdata
@pytest.mark.parametrize("path", UD_FILES or [None],
                         ids=lambda path: path and f"{path.parent.name}/{path.name}")
def test_real_treebank_roundtrips_byte_identical(path: Path | None, tmp_path: Path) -> None:
    if path is None:
        pytest.skip(f"no treebanks under {UD}")
    out = tmp_path / "out.conllu"
    count = write_conllu(read_conllu(path, require_tree=True), out)
    assert count > 0
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.realdata
def test_with_tree_changes_only_head_and_deprel_on_real_sentence() -> None:
    path = UD / "en_ewt" / "dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    sentence = next(s for s in read_conllu(path)
                    if any("-" in line.split("\t")[0] for line in s.lines)
                    and any("." in line.split("\t")[0] for line in s.lines))
    n = len(sentence)
    heads = np.arange(-1, n)  # a chain: word i hangs from word i - 1
    deprels = [ROOT] + [f"rel{i}" for i in range(1, n + 1)]
    parsed = sentence.with_tree(heads, deprels)

    words = set(sentence.word_lines[1:].tolist())
    assert len(parsed.lines) == len(sentence.lines)
    for index, (old, new) in enumerate(zip(sentence.lines, parsed.lines)):
        if index not in words:  # comments, multiword tokens, empty nodes
            assert new == old
            continue
        old_cols, new_cols = old.split("\t"), new.split("\t")
        i = int(old_cols[0])
        assert new_cols[HEAD_COLUMN] == str(i - 1)
        assert new_cols[DEPREL_COLUMN] == f"rel{i}"
        keep = [c for c in range(10) if c not in (HEAD_COLUMN, DEPREL_COLUMN)]
        assert [new_cols[c] for c in keep] == [old_cols[c] for c in keep]
    (reread,) = read_conllu(io.StringIO(parsed.to_text()))
    assert reread.heads.tolist() == heads.tolist()
    assert reread.deprels == tuple(deprels)


# --- fields ----------------------------------------------------------------------------

def test_fields_of_a_sentence(tmp_path: Path) -> None:
    path = write(tmp_path, SENT1 + SENT2)
    first, second = read_conllu(path)
    assert first.forms == (ROOT, "Dogs", "bark", ".")
    assert first.lemmas == (ROOT, "dog", "bark", ".")
    assert first.upos == (ROOT, "NOUN", "VERB", "PUNCT")
    assert first.xpos == (ROOT, "NNS", "VBP", ".")
    assert first.feats == (ROOT, "Number=Plur", "Mood=Ind", "_")
    assert first.heads.dtype == np.int64 and first.heads.tolist() == [-1, 2, 0, 2]
    assert first.deprels == (ROOT, "nsubj", "root", "punct")
    assert first.word_lines.tolist() == [-1, 2, 3, 4]
    assert (first.source, first.first_line, first.sent_id, first.text) == (
        str(path), 1, "s1", "Dogs bark.")
    # The multiword token and the empty node are kept in lines only.
    assert second.forms == (ROOT, "do", "n't", "go")
    assert second.heads.tolist() == [-1, 3, 3, 0]
    assert second.word_lines.tolist() == [-1, 2, 3, 4]
    assert second.lines[1].startswith("1-2\t") and second.lines[5].startswith("3.1\t")
    assert second.first_line == 7


def test_missing_heads_are_minus_one_and_allowed_without_require_tree(tmp_path: Path) -> None:
    (sentence,) = read_conllu(write(tmp_path, tok(1, "_", "_") + "\n" + tok(2, "_", "_") + "\n"))
    assert sentence.heads.tolist() == [-1, -1, -1]
    assert not sentence.has_tree()


def test_several_root_children_are_allowed(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join([tok(1, 0), tok(2, 0), tok(3, 2)]) + "\n\n")
    assert read_treebank(path)[0].heads.tolist() == [-1, 0, 0, 2]


def test_conllx(tmp_path: Path) -> None:
    text = "\n".join([
        "1\tHan\than\tPO\tPO\tPP|NOM\t2\tSS\t_\t_",
        "2\tkom\tkomma\tVV\tVVIMP\t_\t0\tROOT\t_\t_",
        "3\t.\t.\tIP\tIP\t_\t0\tIP\t_\t_",
    ]) + "\n\n"
    path = write(tmp_path, text, "train.conll")
    (sentence,) = read_treebank(path)  # fmt="auto" picks CoNLL-X by the suffix
    assert sentence.forms == (ROOT, "Han", "kom", ".")
    assert sentence.upos == (ROOT, "PO", "VV", "IP")  # CPOSTAG
    assert sentence.xpos == (ROOT, "PO", "VVIMP", "IP")  # POSTAG
    assert sentence.feats == (ROOT, "PP|NOM", "_", "_")
    assert sentence.heads.tolist() == [-1, 2, 0, 0]
    assert sentence.deprels == (ROOT, "SS", "ROOT", "IP")
    out = io.StringIO(newline="")
    write_conllu([sentence.with_tree(sentence.heads, sentence.deprels)], out)
    assert out.getvalue() == text


def test_conllx_rejects_multiword_tokens(tmp_path: Path) -> None:
    path = write(tmp_path, SENT2, "dev.conllx")
    with pytest.raises(CorpusError) as caught:
        list(read_conllu(path))
    assert caught.value.line == 2
    assert "CoNLL-X allows only integer word IDs" in caught.value.message
    assert len(list(read_conllu(path, fmt="conllu"))) == 1


def test_bad_fmt_is_rejected_at_call_time() -> None:
    with pytest.raises(ValueError, match="fmt"):
        read_conllu(io.StringIO(SENT1), fmt="conll09")


# --- malformed input -------------------------------------------------------------------

HEADER = "# sent_id = bad"
MALFORMED = {
    # name: (lines after the header, line of the error, wording)
    "nine_columns": (["1\tA\ta\tX\t_\t_\t0\troot\t_"], 2,
                     "expected 10 tab-separated columns, found 9"),
    "eleven_columns": ([tok(1) + "\t"], 2, "expected 10 tab-separated columns, found 11"),
    "spaces": (["1 A a X _ _ 0 root _ _"], 2, "columns are separated by spaces instead of tabs"),
    "some_spaces": (["1\tA\ta X _ _ 0\troot\t_\t_"], 2,
                    "found 6; some columns seem to be separated by spaces instead of tabs"),
    "head_not_integer": ([tok(1), tok(2, "x")], 3, "HEAD 'x' is not an integer"),
    "head_too_big": ([tok(1), tok(2, 3)], 3,
                     "HEAD 3 is out of range: the sentence has 2 words, so HEAD must be in 0..2"),
    "head_negative": ([tok(1, -1)], 2, "HEAD -1 is out of range"),
    "duplicate_id": ([tok(1), tok(1, 1)], 3, "duplicate word ID 1 (expected 2)"),
    "id_gap": ([tok(1), tok(3, 1)], 3, "word IDs must be sequential: expected 2, found 3"),
    "id_zero": ([tok(0)], 2, "word ID 0 is reserved for the root"),
    "id_not_a_number": ([tok(1), tok("two", 1)], 3, "invalid ID 'two'"),
    "id_leading_zero": ([tok(1), tok("02", 1)], 3, "invalid ID '02'"),
    "range_backwards": ([tok("2-1"), tok(1), tok(2, 1)], 2, "invalid ID '2-1'"),
    "range_one_word": ([tok("1-1"), tok(1)], 2, "multiword token 1-1 must span at least two"),
    "range_out_of_place": ([tok(1), tok("1-2"), tok(2, 1)], 3,
                           "multiword token 1-2 is out of place: it must come right before "
                           "word 1, not after word 1"),
    "range_overlap": ([tok("1-2"), tok(1), tok("2-3"), tok(2, 1), tok(3, 1)], 4,
                      "multiword token 2-3 overlaps the one ending at word 2"),
    "range_past_end": ([tok("1-3"), tok(1), tok(2, 1)], 2,
                       "multiword token 1-3 goes past the last word of the sentence (2)"),
    "empty_node_gap": ([tok(1), tok("1.2", "_")], 3,
                       "empty node 1.2 is out of sequence: expected 1.1 after word 1"),
    "empty_node_misplaced": ([tok(1), tok(2, 1), tok("1.1", "_")], 4,
                             "empty node 1.1 is out of sequence: expected 2.1 after word 2"),
    "empty_node_bad_id": ([tok(1), tok("1.0", "_")], 3, "invalid ID '1.0'"),
    "no_words": ([tok("0.1", "_")], 1, "the sentence has no word lines"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_input_names_file_line_and_problem(case: str, tmp_path: Path) -> None:
    lines, line, wording = MALFORMED[case]
    # A valid sentence first, so that the line numbers are file-wide, not per block.
    path = write(tmp_path, SENT1 + "\n".join([HEADER, *lines]) + "\n\n" + SENT1)
    line += SENT1.count("\n")
    with pytest.raises(CorpusError) as caught:
        list(read_conllu(path))
    error = caught.value
    assert (error.path, error.line) == (str(path), line)
    assert wording in error.message
    assert str(error) == f"{path}:{line}: {error.message}"


TREE_ERRORS = {
    "missing_head": ([tok(1), tok(2, "_")], 3, "word 2 has no head ('_')"),
    "cycle": ([tok(1), tok(2, 3), tok(3, 2)], 3, "the heads form a cycle (2 -> 3 -> 2)"),
    "self_loop": ([tok(1), tok(2, 2)], 3, "the heads form a cycle (2 -> 2)"),
    "no_root": ([tok(1, 2), tok(2, 1)], 2, "no root: no word of the sentence has HEAD 0"),
}


@pytest.mark.parametrize("case", TREE_ERRORS)
def test_require_tree(case: str, tmp_path: Path) -> None:
    lines, line, wording = TREE_ERRORS[case]
    path = write(tmp_path, "\n".join([HEADER, *lines]) + "\n\n")
    assert len(list(read_conllu(path))) == 1  # a graph, but not a tree: fine to parse
    with pytest.raises(CorpusError) as caught:
        read_treebank(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert wording in caught.value.message


def test_invalid_utf8_is_reported_with_its_line(tmp_path: Path) -> None:
    data = (HEADER + "\n" + tok(1) + "\n").encode() + tok(2, 1, form="caf\xe9").encode("latin-1")
    path = write(tmp_path, data + b"\n\n")
    with pytest.raises(CorpusError) as caught:
        list(read_conllu(path))
    assert caught.value.line == 3
    assert "not valid UTF-8 (byte 0xe9 at byte 6 of the line)" in caught.value.message


def test_invalid_utf8_from_a_text_stream_names_the_stream() -> None:
    stream = io.TextIOWrapper(io.BytesIO(SENT1.encode() + b"1\tcaf\xe9"), encoding="utf-8")
    with pytest.raises(CorpusError, match="must be UTF-8"):
        list(read_conllu(stream))


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"],
                         ids=["empty", "blank", "comment"])
def test_read_treebank_rejects_a_file_without_sentences(text: str, tmp_path: Path) -> None:
    path = write(tmp_path, text)
    assert list(read_conllu(path)) == []
    with pytest.raises(CorpusError, match="no sentences found") as caught:
        read_treebank(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="cannot open: No such file"):
        list(read_conllu(tmp_path / "nope.conllu"))


# --- layout: exact round trips ---------------------------------------------------------

LAYOUTS = {
    "plain": SENT1 + SENT2,
    "crlf": (SENT1 + SENT2).replace("\n", "\r\n"),
    "no_final_newline": SENT1 + SENT2.rstrip("\n"),
    "no_final_blank_line": SENT1 + SENT2[:-1],
    "extra_blank_lines": "\n\n" + SENT1 + "\n\n" + SENT2 + "\n\n",
    "whitespace_only_separator": SENT1[:-1] + " \t\n" + SENT2,
    "comment_only_blocks": "# newdoc id = d1\n\n" + SENT1 + "# note\n\n" + SENT2 + "# end\n\n",
    "trailing_comment_without_newline": SENT1 + SENT2 + "# end",
    "byte_order_mark": "\ufeff" + SENT1 + SENT2,
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layout_roundtrips(layout: str) -> None:
    text = LAYOUTS[layout]
    sentences = list(read_conllu(io.BytesIO(text.encode())))
    assert [s.sent_id for s in sentences] == ["s1", "s2"]
    assert [len(s) for s in sentences] == [3, 3]
    assert roundtrip(text) == text


def test_combining_sentences_keeps_blocks_apart(tmp_path: Path) -> None:
    (unterminated,) = read_conllu(io.StringIO(SENT2.rstrip("\n")))
    (with_bom,) = read_conllu(io.BytesIO(("\ufeff" + SENT1).encode()))
    out = tmp_path / "out.conllu"
    write_conllu([unterminated, with_bom, unterminated], out)
    assert out.read_text(encoding="utf-8") == SENT2 + SENT1 + SENT2.rstrip("\n")
    assert [s.sent_id for s in read_conllu(out)] == ["s2", "s1", "s2"]


def test_text_stream_and_name() -> None:
    stream = io.StringIO(SENT1)
    stream.name = "<stdin>"
    (sentence,) = read_conllu(stream)
    assert sentence.source == "<stdin>"
    assert sentence.forms[1] == "Dogs"


# --- sentences built from words --------------------------------------------------------

def test_from_words_is_writable_and_parsable() -> None:
    sentence = Sentence.from_words(["Dogs", "bark", "."], upos=["NOUN", "VERB", "PUNCT"])
    assert sentence.forms == (ROOT, "Dogs", "bark", ".")
    assert sentence.lemmas == (ROOT, "_", "_", "_")
    assert sentence.heads.tolist() == [-1, -1, -1, -1]
    (unparsed,) = read_conllu(io.StringIO(sentence.to_text()))
    assert unparsed.lines == sentence.lines and unparsed.heads.tolist() == [-1] * 4

    parsed = sentence.with_tree([-1, 2, 0, 2], ["_", "nsubj", "root", "punct"])
    out = io.StringIO()
    write_conllu([parsed, parsed], out)
    first, second = read_conllu(io.StringIO(out.getvalue()), require_tree=True)
    assert first.heads.tolist() == [-1, 2, 0, 2]
    assert first.deprels == (ROOT, "nsubj", "root", "punct")
    assert first.upos == sentence.upos


@pytest.mark.parametrize("kwargs, problem", [
    (dict(forms=["a", "b"], upos=["X"]), "upos has 1 entries for 2 words"),
    (dict(forms=["a\tb"]), "cannot be written"),
    (dict(forms=[""]), "cannot be written"),
    (dict(forms=[]), "at least one word"),
])
def test_from_words_rejects_unwritable_input(kwargs: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Sentence.from_words(**kwargs)


# --- streaming -------------------------------------------------------------------------

def numbered_sentences(count: int, pulled: list[int] | None = None):
    """Lines of ``count`` 10-word sentences, recording in ``pulled`` the ones started."""
    for number in range(1, count + 1):
        if pulled is not None:
            pulled.append(number)
        yield f"# sent_id = {number}\n"
        yield tok(1) + "\n"
        for word in range(2, 11):
            yield tok(word, 1, form=f"word{word}") + "\n"
        yield "\n"


def test_read_conllu_yields_before_reading_the_rest() -> None:
    pulled: list[int] = []
    sentences = read_conllu(numbered_sentences(10**9, pulled))
    assert isinstance(sentences, types.GeneratorType)
    assert pulled == []  # nothing read before the first next()
    assert next(sentences).sent_id == "1"
    assert pulled == [1, 2]  # a sentence is complete once the next one has begun
    assert next(sentences).sent_id == "2"
    assert pulled == [1, 2, 3]


def test_memory_stays_flat_over_a_big_input() -> None:
    count = 1500  # about 0.8 MB of text
    tracemalloc.start()
    try:
        for sentence in read_conllu(numbered_sentences(count)):
            assert len(sentence) == 10
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sentence.sent_id == str(count)
    assert peak < 100_000  # the whole input, or its sentences, would take megabytes


# --- atomic writing --------------------------------------------------------------------

def test_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = write(tmp_path, "old content\n", "out.conllu")
    (sentence,) = read_conllu(io.StringIO(SENT1))

    def crash_midway():
        yield sentence
        raise RuntimeError("parser crashed")

    with pytest.raises(RuntimeError, match="parser crashed"):
        write_conllu(crash_midway(), target)
    assert target.read_text() == "old content\n"
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind


def test_atomic_write_binary_and_permissions(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    reference.write_bytes(b"")
    target = tmp_path / "model.npz"
    with atomic_write(target, "wb") as file:
        file.write(b"\x00\x01\r\n")
        assert not target.exists()  # nothing visible before the block ends
    assert target.read_bytes() == b"\x00\x01\r\n"
    assert (os.stat(target).st_mode & 0o777) == (os.stat(reference).st_mode & 0o777)
    with pytest.raises(ValueError, match="mode"):
        with atomic_write(target, "a"):
            pass


def test_corpus_error_format() -> None:
    assert str(CorpusError("a.conllu", 3, "bad")) == "a.conllu:3: bad"
    assert str(CorpusError("a.conllu", None, "bad")) == "a.conllu: bad"
    error = CorpusError("a.conllu", 3, "bad")
    assert (error.path, error.line, error.message) == ("a.conllu", 3, "bad")
    copied = copy.copy(error)  # rebuilt from its arguments, as when crossing processes
    assert (copied.path, copied.line, copied.message) == ("a.conllu", 3, "bad")
