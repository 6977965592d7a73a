"""Reading and writing treebanks in CoNLL-U and CoNLL-X, streaming and byte-exact.

:func:`read_conllu` is a generator: it holds one sentence (plus the lines that follow it
up to the next sentence's first word) at a time, so memory does not grow with the file.
Every :class:`~corpora.sentence.Sentence` keeps its lines as read and the text around
them (``before``/``after``/``newline``), so :func:`write_conllu` reproduces a file it was
given byte for byte, and a parsed sentence differs from its input only in the HEAD and
DEPREL columns of its word lines.

Malformed input raises :class:`~corpora.errors.CorpusError` naming file, line and problem.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Literal, Union

import numpy as np
from conllu.exceptions import ParseException
from conllu.parser import INTEGER, parse_id_value

from .errors import CorpusError
from .files import atomic_write
from .sentence import DEPREL_COLUMN, HEAD_COLUMN, ROOT, Sentence

Format = Literal["auto", "conllu", "conllx"]
#: A file name, or an open file / iterable yielding lines (``str``, or ``bytes`` in UTF-8).
Source = Union[str, os.PathLike, Iterable[str], Iterable[bytes]]

N_COLUMNS = 10
CONLLX_SUFFIXES = frozenset({".conll", ".conllx"})
BOM = "\ufeff"
#: The start of a token line: a word ID, a multiword token range or an empty node.
TOKEN_ID = re.compile(r"\s*\d+([-.]\d+)?(\s|$)")


def read_conllu(source: Source, *, fmt: Format = "auto", require_tree: bool = False,
                single_root: bool = False) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U or CoNLL-X file.

    Parameters
    ----------
    source:
        A path, or an open file or any iterable of lines (e.g. ``sys.stdin``). Prefer a
        path or a binary stream (``sys.stdin.buffer``): bytes are decoded line by line, so
        bad UTF-8 is reported with its line number, and ``\\r\\n`` is kept. A text stream
        is used as its own decoder delivers it.
    fmt:
        ``"conllu"``, ``"conllx"`` (10 columns, integer IDs only; CPOSTAG is read as
        ``upos``, POSTAG as ``xpos``), or ``"auto"``: CoNLL-X for a ``.conll``/``.conllx``
        file name, CoNLL-U otherwise.
    require_tree:
        Also require every word to have a head and the heads to form a tree rooted at 0
        (training data). Several words with head 0 are allowed unless ``single_root``.
    single_root:
        With ``require_tree``, also require exactly one word with head 0, as Universal
        Dependencies does and as a parser trained for a single root assumes.

    Returns
    -------
    Iterator[Sentence]
        A generator; a sentence is yielded as soon as the first word line of the next one
        (or the end of the input) has been read. The file is opened on the first ``next``.

    Raises
    ------
    CorpusError
        On the first malformed line: wrong number of columns (spaces instead of tabs),
        bad or out-of-sequence IDs, bad multiword-token or empty-node IDs, a HEAD that is
        not an integer or not in ``0..n``, bytes that are not UTF-8, and with
        ``require_tree`` a missing head, a cycle or no root (or, with ``single_root``,
        several roots). Also when a path can't be opened.
    """
    name = _source_name(source)
    conllx = _is_conllx(fmt, name)
    if isinstance(source, (str, os.PathLike)):
        return _read_path(Path(source), conllx, require_tree, single_root)
    return _read_lines(_decoded(source, name), name, conllx, require_tree, single_root)


def read_treebank(path: str | os.PathLike, *, fmt: Format = "auto",
                  require_tree: bool = True, single_root: bool = False) -> list[Sentence]:
    """All sentences of a training or evaluation file, checked to be trees by default.

    Raises
    ------
    CorpusError
        As :func:`read_conllu`, and when the file holds no sentence at all.
    """
    sentences = list(read_conllu(path, fmt=fmt, require_tree=require_tree,
                                 single_root=single_root))
    if not sentences:
        raise CorpusError(os.fspath(path), None,
                          "no sentences found (the file is empty or has only comments)")
    return sentences


def write_conllu(sentences: Iterable[Sentence], target: str | os.PathLike | IO[str]) -> int:
    """Write sentences in the layout they were read in; return how many were written.

    Each sentence is written as :meth:`Sentence.to_text`, so writing what
    :func:`read_conllu` read gives back the same bytes. When sentences from different
    places are combined, a sentence that ended its file without a blank line gets one
    before the next sentence, and a byte-order mark is kept only at the start of the output.

    Parameters
    ----------
    sentences:
        Any iterable, consumed lazily.
    target:
        A path, replaced atomically (see :func:`~corpora.files.atomic_write`) once every
        sentence is written; or an open text file (e.g. ``sys.stdout``), written to as
        sentences arrive.
    """
    if isinstance(target, (str, os.PathLike)):
        with atomic_write(target) as file:
            return _write(sentences, file)
    return _write(sentences, target)


def _write(sentences: Iterable[Sentence], file: IO[str]) -> int:
    """Write each sentence as soon as it arrives; see :func:`write_conllu`."""
    count = 0
    separator = ""
    for sentence in sentences:
        text = sentence.to_text()
        if count:
            text = separator + text.removeprefix(BOM)
        file.write(text)
        separator = _missing_separator(text, sentence.newline)
        count += 1
    return count


def _missing_separator(text: str, newline: str) -> str:
    """What must follow ``text`` for a next sentence to start a new block."""
    if not text.endswith("\n"):
        return newline + newline
    last_line = text[:-1].rstrip("\r").rpartition("\n")[2]
    return newline if last_line.strip() else ""


# --- reading: lines --------------------------------------------------------------------

def _source_name(source: Source) -> str:
    """The name used in error messages and as :attr:`Sentence.source`."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def _is_conllx(fmt: str, name: str) -> bool:
    """Whether ``fmt`` (``"auto"`` deciding by the suffix of ``name``) means CoNLL-X."""
    if fmt == "auto":
        return Path(name).suffix.lower() in CONLLX_SUFFIXES
    if fmt not in ("conllu", "conllx"):
        raise ValueError(f"fmt must be 'auto', 'conllu' or 'conllx', not {fmt!r}")
    return fmt == "conllx"


def _read_path(path: Path, conllx: bool, require_tree: bool,
               single_root: bool) -> Iterator[Sentence]:
    """Open ``path`` in binary (UTF-8 is checked per line) and stream its sentences."""
    try:
        file = open(path, "rb")
    except OSError as error:
        raise CorpusError(str(path), None, f"cannot open: {error.strerror}") from None
    with file:
        yield from _read_lines(_decoded(file, str(path)), str(path), conllx, require_tree,
                               single_root)


def _decoded(lines: Iterable[str] | Iterable[bytes], name: str) -> Iterator[str]:
    """``lines`` as text, terminators kept; invalid UTF-8 becomes a located CorpusError."""
    lineno = 0
    try:
        for line in lines:
            lineno += 1
            if isinstance(line, bytes):
                try:
                    line = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise CorpusError(name, lineno, _utf8_problem(error)) from None
            yield line
    except UnicodeDecodeError as error:  # from a text stream's own decoder
        raise CorpusError(name, None, f"cannot decode the text after line {lineno} "
                                      f"({error.reason}); the input must be UTF-8") from None


def _utf8_problem(error: UnicodeDecodeError) -> str:
    bad = error.object[error.start]
    return (f"not valid UTF-8 (byte 0x{bad:02x} at byte {error.start + 1} of the line); "
            "the file must be encoded in UTF-8")


def _split_terminator(line: str) -> tuple[str, str]:
    """``line`` without, and its line terminator (``"\\n"``, ``"\\r\\n"`` or ``""``)."""
    if line.endswith("\n"):
        if line.endswith("\r\n"):
            return line[:-2], "\r\n"
        return line[:-1], "\n"
    return line, ""


# --- reading: blocks -------------------------------------------------------------------

def _read_lines(lines: Iterable[str], name: str, conllx: bool, require_tree: bool,
                single_root: bool) -> Iterator[Sentence]:
    """Group lines into blocks and blocks into sentences, keeping the text between them.

    A block is a run of non-blank lines; it is a sentence if it has a line that is not a
    comment. Blank lines beyond a sentence's separator and comment-only blocks go into
    the next sentence's ``before``, or into the last sentence's ``after`` at the end.
    """
    before: list[str] = []    # raw text since the last sentence that belongs to none
    block: list[str] = []     # the current block's lines, without terminators
    endings: list[str] = []   # and their terminators
    first = 0                 # line number of block[0]
    is_sentence = False       # the block has a token line
    previous: Sentence | None = None  # complete; yielded once a next sentence shows up
    for lineno, line in enumerate(lines, start=1):
        body, newline = _split_terminator(line)
        if lineno == 1 and body.startswith(BOM):
            before.append(BOM)
            body = body[1:]
        if body.strip():
            if not block:
                first = lineno
            block.append(body)
            endings.append(newline)
            if not is_sentence and not body.startswith("#"):
                is_sentence = True
                if previous is not None:
                    yield previous
                    previous = None
        elif is_sentence:
            previous = _sentence(block, endings, first, name, conllx, require_tree,
                                 single_root, before="".join(before),
                                 after=endings[-1] + body + newline)
            before, block, endings, is_sentence = [], [], [], False
        else:
            before.extend(map(str.__add__, block, endings))
            before.append(body + newline)
            block, endings = [], []
    if is_sentence:
        yield _sentence(block, endings, first, name, conllx, require_tree, single_root,
                        before="".join(before), after=endings[-1])
    elif previous is not None:
        tail = "".join(before) + "".join(map(str.__add__, block, endings))
        yield replace(previous, after=previous.after + tail)


def _sentence(block: list[str], endings: list[str], first: int, name: str, conllx: bool,
              require_tree: bool, single_root: bool, *, before: str, after: str) -> Sentence:
    """Check one sentence block and build its :class:`Sentence`."""
    words, positions = _word_columns(block, first, name, conllx)
    n = len(words)
    heads = [_head(columns[HEAD_COLUMN], n, first + position, name)
             for columns, position in zip(words, positions)]
    if require_tree:
        _check_tree(heads, [first + p for p in positions], name, single_root)
    fields = list(zip(*words))
    return Sentence(
        forms=(ROOT, *fields[1]), lemmas=(ROOT, *fields[2]), upos=(ROOT, *fields[3]),
        xpos=(ROOT, *fields[4]), feats=(ROOT, *fields[5]),
        heads=np.array([-1, *heads], dtype=np.int64), deprels=(ROOT, *fields[DEPREL_COLUMN]),
        lines=tuple(block), word_lines=np.array([-1, *positions], dtype=np.int64),
        source=name, first_line=first, before=before, after=after,
        newline=endings[0] or "\n")


def _word_columns(block: list[str], first: int, name: str,
                  conllx: bool) -> tuple[list[list[str]], list[int]]:
    """The columns of the syntactic words of ``block`` and their indices in it.

    Checks the column count of every token line, that word IDs run 1, 2, ..., n, and that
    multiword tokens ``a-b`` and empty nodes ``a.b`` are well-formed and in place.
    """
    words: list[list[str]] = []
    positions: list[int] = []
    span = (0, 0, 0)  # the last multiword token: first word, last word, line number
    empty = (0, 0)    # the last empty node: word it follows, its number
    for index, line in enumerate(block):
        if line.startswith("#"):
            continue
        lineno = first + index
        columns = line.split("\t")
        if len(columns) != N_COLUMNS:
            raise CorpusError(name, lineno, _columns_problem(line, len(columns)))
        n = len(words)
        if columns[0] == str(n + 1):
            words.append(columns)
            positions.append(index)
            continue
        token_id = _token_id(columns[0], name, lineno)
        if isinstance(token_id, int):
            raise CorpusError(name, lineno, _word_id_problem(token_id, n))
        if conllx:
            raise CorpusError(name, lineno, f"ID {columns[0]!r}: CoNLL-X allows only integer "
                                            "word IDs (is this a CoNLL-U file? use fmt='conllu')")
        start, kind, end = token_id
        if kind == "-":
            _check_span(start, end, n, span[1], name, lineno)
            span = (start, end, lineno)
        else:
            _check_empty_node(start, end, n, empty, name, lineno)
            empty = (start, end)
    if not words:
        raise CorpusError(name, first, "the sentence has no word lines (IDs 1, 2, ...)")
    if span[1] > len(words):
        raise CorpusError(name, span[2], f"multiword token {span[0]}-{span[1]} goes past "
                                         f"the last word of the sentence ({len(words)})")
    return words, positions


def _columns_problem(line: str, found: int) -> str:
    if "\t" not in line and not TOKEN_ID.match(line):
        return (f"expected {N_COLUMNS} tab-separated columns: this looks like plain text, "
                "not CoNLL-U (raw text is parsed with --format text, or from a .txt file)")
    if "\t" not in line and " " in line:
        return (f"columns are separated by spaces instead of tabs "
                f"(expected {N_COLUMNS} tab-separated columns)")
    problem = f"expected {N_COLUMNS} tab-separated columns, found {found}"
    if found < N_COLUMNS and " " in line:
        problem += "; some columns seem to be separated by spaces instead of tabs"
    return problem


def _token_id(value: str, name: str, lineno: int) -> int | tuple[int, str, int]:
    """An ID parsed by the ``conllu`` library: ``3``, ``(1, "-", 2)`` or ``(3, ".", 1)``."""
    try:
        token_id = parse_id_value(value)
    except ParseException:
        token_id = None
    if token_id is None:
        raise CorpusError(name, lineno, f"invalid ID {value!r} (expected a word ID like 3, "
                                        "a multiword token like 3-4 or an empty node like 3.1)")
    return token_id


def _word_id_problem(word: int, n: int) -> str:
    if word == 0:
        return "word ID 0 is reserved for the root"
    if word <= n:
        return f"duplicate word ID {word} (expected {n + 1})"
    return f"word IDs must be sequential: expected {n + 1}, found {word}"


def _check_span(start: int, end: int, n: int, last_end: int, name: str, lineno: int) -> None:
    """A multiword token ``start-end`` must cover 2+ words and come right before ``start``."""
    token = f"multiword token {start}-{end}"
    if end == start:
        raise CorpusError(name, lineno, f"{token} must span at least two words")
    if start <= last_end:
        raise CorpusError(name, lineno, f"{token} overlaps the one ending at word {last_end}")
    if start != n + 1:
        raise CorpusError(name, lineno, f"{token} is out of place: it must come right "
                                        f"before word {start}, not after word {n}")


def _check_empty_node(word: int, number: int, n: int, last: tuple[int, int],
                      name: str, lineno: int) -> None:
    """Empty nodes after word ``n`` must be numbered ``n.1``, ``n.2``, ..."""
    expected = last[1] + 1 if last[0] == n else 1
    if (word, number) != (n, expected):
        raise CorpusError(name, lineno, f"empty node {word}.{number} is out of sequence: "
                                        f"expected {n}.{expected} after word {n}")


def _head(value: str, n: int, lineno: int, name: str) -> int:
    """HEAD as an int in ``0..n``, or -1 for ``_``."""
    if value == "_":
        return -1
    if not INTEGER.fullmatch(value):  # the ``conllu`` library's pattern
        raise CorpusError(name, lineno, f"HEAD {value!r} is not an integer "
                                        "(or '_' for no head)")
    head = int(value)
    if not 0 <= head <= n:
        raise CorpusError(name, lineno, f"HEAD {head} is out of range: the sentence has "
                                        f"{n} words, so HEAD must be in 0..{n}")
    return head


def _check_tree(heads: list[int], lines: list[int], name: str, single_root: bool) -> None:
    """Require ``heads`` (of words 1..n; ``lines`` are theirs) to be a tree rooted at 0,
    with a single word attached to 0 if ``single_root``."""
    for word, head in enumerate(heads, start=1):
        if head < 0:
            raise CorpusError(name, lines[word - 1],
                              f"word {word} has no head ('_'); a tree is required here")
    if 0 not in heads:
        raise CorpusError(name, lines[0], "no root: no word of the sentence has HEAD 0")
    roots = [word for word, head in enumerate(heads, start=1) if head == 0]
    if single_root and len(roots) > 1:
        raise CorpusError(name, lines[roots[1] - 1],
                          f"{len(roots)} roots: words {', '.join(map(str, roots))} have HEAD 0, "
                          "but a single root is required (a parser for several roots per "
                          "sentence, as in CoNLL-X data, is trained with --multi-root)")
    cycle = _find_cycle(heads)
    if cycle:
        path = " -> ".join(map(str, cycle + cycle[:1]))
        raise CorpusError(name, lines[cycle[0] - 1],
                          f"the heads form a cycle ({path}), not a tree")


def _find_cycle(heads: list[int]) -> list[int]:
    """Words on a cycle of ``heads`` (word i's head is ``heads[i - 1]``), or ``[]``.

    Examples
    --------
    >>> _find_cycle([0, 3, 2])
    [2, 3]
    >>> _find_cycle([2, 0, 2])
    []
    """
    state = [0] * (len(heads) + 1)  # 0 unseen, 1 on the current walk, 2 reaches the root
    for start in range(1, len(heads) + 1):
        walk = []
        word = start
        while word > 0 and state[word] == 0:
            state[word] = 1
            walk.append(word)
            word = heads[word - 1]
        if word > 0 and state[word] == 1:
            return walk[walk.index(word):]
        for visited in walk:
            state[visited] = 2
    return []
