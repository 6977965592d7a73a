"""What the tokenizer and the multiword lexicon see of characters and words: a
character's class, its script, a word's shape, a hash that is stable across runs."""

from __future__ import annotations

import functools
import itertools
import unicodedata
import zlib
from collections import Counter

from polyparse.parser.text import _tokenizer_kernels as kernels

APOSTROPHES = frozenset("'`´‘’")
_QUOTES = frozenset('"“”„«»‹›')
_CATEGORY_CLASS = {"Lu": 2, "Lt": 2, "Ll": 3, "Lm": 4, "Lo": 4, "Nd": 5, "Nl": 6, "No": 6,
                   "Pd": 11, "Ps": 12, "Pe": 13, "Pi": 10, "Pf": 10, "Po": 15, "Pc": 15,
                   "Sm": 16, "Sc": 16, "Sk": 16, "So": 16, "Mn": 17, "Mc": 17, "Me": 17}
_SPECIAL_CLASS = {".": 7, ",": 8, "!": 14, "?": 14}


@functools.lru_cache(maxsize=65536)
def char_class(c: str) -> int:
    """A small integer class of one character, for features.

    1 whitespace, 2 uppercase letter, 3 lowercase letter, 4 other letter, 5 digit,
    6 other number, 7 ``.``, 8 ``,``, 9 apostrophe, 10 quotation mark, 11 dash,
    12 opening bracket, 13 closing bracket, 14 ``!`` or ``?``, 15 other punctuation,
    16 symbol, 17 combining mark, 18 anything else.
    """
    if c.isspace():
        return kernels.WHITESPACE
    if c in _SPECIAL_CLASS:
        return _SPECIAL_CLASS[c]
    if c in APOSTROPHES:
        return 9
    if c in _QUOTES:
        return 10
    return _CATEGORY_CLASS.get(unicodedata.category(c), 18)


def stable_hash(s: str) -> int:
    """A hash of ``s`` that is the same in every process (unlike :func:`hash`)."""
    return zlib.crc32(s.encode("utf-8", "surrogatepass"))


# First words of Unicode character names that name a script (a letter's name starts with
# its script: "LATIN SMALL LETTER A", "CJK UNIFIED IDEOGRAPH-4E00", "HANGUL SYLLABLE GA").
_SCRIPT_WORDS = frozenset(
    "LATIN GREEK COPTIC CYRILLIC GLAGOLITIC ARMENIAN HEBREW ARABIC SYRIAC THAANA NKO "
    "SAMARITAN DEVANAGARI BENGALI GURMUKHI GUJARATI ORIYA TAMIL TELUGU KANNADA MALAYALAM "
    "SINHALA THAI LAO TIBETAN MYANMAR GEORGIAN HANGUL ETHIOPIC CHEROKEE CANADIAN OGHAM RUNIC "
    "TAGALOG KHMER MONGOLIAN LIMBU BUGINESE BALINESE SUNDANESE JAVANESE HIRAGANA KATAKANA "
    "BOPOMOFO CJK YI VAI BAMUM TIFINAGH".split())
_SCRIPT_DISPLAY = {"CJK": "Han", "NKO": "N'Ko", "CANADIAN": "Canadian syllabics"}
#: Share of a script among the training text's script characters below which the
#: tokenizer is taken not to know it (en_gum has 25 CJK characters in 660,000 letters).
MIN_SCRIPT_SHARE = 0.001
#: Share of a script unseen in training among a text's script characters from which the
#: text is warned about (one emoji in a 2,001-sentence file is not worth a warning).
MIN_UNSEEN_SHARE = 0.05


@functools.lru_cache(maxsize=65536)
def script_of(c: str) -> str | None:
    """The writing system of character ``c``: its script for a letter (from the first
    word of its Unicode name, as Python's :mod:`unicodedata` has no script property),
    ``"Emoji"`` for a pictograph, else None (digits, punctuation, spaces and marks are
    shared by all scripts).

    Examples
    --------
    >>> [script_of(c) for c in "aЖ中한😀1."]
    ['Latin', 'Cyrillic', 'Han', 'Hangul', 'Emoji', None, None]
    """
    category = unicodedata.category(c)
    if category == "So":
        code = ord(c)
        return "Emoji" if 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF else None
    if not category.startswith("L"):
        return None
    word = unicodedata.name(c, "").partition(" ")[0]
    if word not in _SCRIPT_WORDS:
        return None
    return _SCRIPT_DISPLAY.get(word, word.title())


def first_place(text: str, script: str) -> str:
    """``line L, column C`` (from 1) of the first character of ``script`` in ``text``."""
    at = next(i for i, c in enumerate(text) if script_of(c) == script)
    line_start = text.rfind("\n", 0, at) + 1
    return f"line {text.count(chr(10), 0, at) + 1}, column {at - line_start + 1}"


def script_counts(text: str) -> Counter:
    """How many characters of ``text`` belong to each script (:func:`script_of`)."""
    counts: Counter = Counter()
    for c, n in Counter(text).items():
        script = script_of(c)
        if script is not None:
            counts[script] += n
    return counts


def word_shape(form: str) -> str:
    """The classes of ``form``'s characters as letters, runs collapsed: "Dr." -> "CD" + "H"."""
    return "".join(letter for letter, _ in itertools.groupby(chr(64 + char_class(c))
                                                             for c in form))
