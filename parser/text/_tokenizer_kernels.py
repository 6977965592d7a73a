"""Numba kernels of :mod:`parser.text.tokenizer`: hashed feature templates and the averaged
perceptron.

Pure functions over numpy arrays. A feature is a template number mixed with the values
it reads (FNV-1a over 64-bit words), mapped to ``[0, 2**bits)`` by Fibonacci hashing;
the hash only depends on the input, so a model's weight arrays can be saved and read
back by any process.

Character arrays (:func:`char_features`) are indexed by code-point position in the text:
``chars`` holds lowercased code points with every whitespace character replaced by
:data:`SPACE`, ``classes`` the character class of :func:`parser.text.tokenizer.char_class`
(:data:`WHITESPACE` for whitespace). Positions outside the text read as 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from polyparse.corpora._hashing import FNV_OFFSET, FNV_PRIME, GOLDEN

SPACE = 32
WHITESPACE = 1          # class number of whitespace characters
OUTSIDE = 1 << 40       # value of a token attribute before the first or after the last token

N_CHAR_TEMPLATES = 27
N_TOKEN_TEMPLATES = 22
N_TOKEN_ATTRIBUTES = 9
(ATTR_LOWER, ATTR_RAW, ATTR_SHAPE, ATTR_FIRST_CLASS, ATTR_FIRST_CHAR, ATTR_LAST_CHAR,
 ATTR_SPACE_AFTER, ATTR_ABBREVIATION, ATTR_LENGTH) = range(N_TOKEN_ATTRIBUTES)

_MAX_PART = 32          # longest chunk prefix/suffix hashed by the chunk templates


@njit(cache=True, inline="always")
def _mix(h, x):
    return (h ^ np.uint64(x)) * FNV_PRIME


@njit(cache=True, inline="always")
def _start(template):
    return _mix(FNV_OFFSET, template)


@njit(cache=True, inline="always")
def _index(h, bits):
    return np.int32((h * GOLDEN) >> np.uint64(64 - bits))


@njit(cache=True, inline="always")
def _at(values, i):
    return values[i] if 0 <= i < values.shape[0] else 0


@njit(cache=True)
def _substring_hash(chars, start, end):
    h = FNV_OFFSET
    for k in range(start, end):
        h = _mix(h, chars[k])
    return _mix(h, end - start)


@njit(cache=True)
def _shape_hash(classes, start, end):
    """Hash of the chunk's class sequence with runs collapsed ("Xx.", "d,d")."""
    h = FNV_OFFSET
    previous = -1
    for k in range(start, end):
        if classes[k] != previous:
            h = _mix(h, classes[k])
            previous = classes[k]
    return h


@njit(cache=True)
def _web_address(chars, start, end):
    """1 if the chunk looks like a URL or an e-mail address ("://", "www.", "x@y")."""
    for k in range(start, end):
        c = chars[k]
        if c == 58 and k + 2 < end and chars[k + 1] == 47 and chars[k + 2] == 47:    # "://"
            return 1
        if c == 64 and start < k < end - 1:                                        # "@"
            return 1
        if (k == start and k + 3 < end and c == 119 and chars[k + 1] == 119
                and chars[k + 2] == 119 and chars[k + 3] == 46):                    # "www."
            return 1
    return 0


@njit(cache=True, inline="always")
def _is_alnum_class(k):
    return 2 <= k <= 6


@njit(cache=True, inline="always")
def _in_address(c, k):
    """A character of the local part of an e-mail address: letter, digit, ``._%+-'``."""
    return (_is_alnum_class(k) or c == 46 or c == 95 or c == 37 or c == 43 or c == 45
            or c == 39)


@njit(cache=True, inline="always")
def _in_domain(c, k):
    """A character of a domain name: letter, digit, ``.-_``."""
    return _is_alnum_class(k) or c == 46 or c == 45 or c == 95


@njit(cache=True, inline="always")
def _url_end(c):
    """Characters that end a sentence or close a bracket rather than belong to a URL."""
    return (c == 46 or c == 44 or c == 59 or c == 58 or c == 33 or c == 63 or c == 41
            or c == 93 or c == 125 or c == 62 or c == 34 or c == 39)


@njit(cache=True)
def _starts_with(chars, k, end, pattern):
    if k + pattern.shape[0] > end:
        return False
    for j in range(pattern.shape[0]):
        if chars[k + j] != pattern[j]:
            return False
    return True


_SLASHES = np.array([ord(c) for c in "://"], np.int64)
_WWW = np.array([ord(c) for c in "www."], np.int64)


@njit(cache=True)
def web_spans(chars, classes):
    """``int64 (n_chars,)``: for each character of a URL or e-mail address, 1 + the
    position where the address starts; 0 elsewhere.

    A URL starts at "http", "https" or any other letters followed by "://", or at
    "www.", not after a letter or digit, and runs to the end of its
    whitespace-delimited chunk less the punctuation that closes a sentence or a bracket
    (``.,;:!?)]}>"'``). An e-mail address is an "@" with letters, digits and ``._%+-'``
    before it and a domain (letters, digits, ``.-_``; not ending in ``.`` or ``-``)
    after it, within the chunk.
    """
    n = chars.shape[0]
    out = np.zeros(n, np.int64)
    i = 0
    while i < n:
        if classes[i] == WHITESPACE:
            i += 1
            continue
        a = i
        while i < n and classes[i] != WHITESPACE:
            i += 1
        b = i
        for k in range(a, b):
            if out[k] != 0:
                continue
            if chars[k] == 64 and a < k < b - 1:                                 # "@"
                left = k
                while left > a and _in_address(chars[left - 1], classes[left - 1]):
                    left -= 1
                right = k + 1
                while right < b and _in_domain(chars[right], classes[right]):
                    right += 1
                while right > k + 1 and (chars[right - 1] == 46 or chars[right - 1] == 45):
                    right -= 1
                if left < k and right > k + 1:
                    out[left:right] = left + 1
            elif k == a or not _is_alnum_class(classes[k - 1]):
                url = _starts_with(chars, k, b, _WWW)
                if not url and _is_alnum_class(classes[k]):
                    j = k
                    while j < b and 2 <= classes[j] <= 4:
                        j += 1
                    url = j > k and _starts_with(chars, j, b, _SLASHES)
                if url:
                    end = b
                    while end > k and _url_end(chars[end - 1]):
                        end -= 1
                    if end > k + 4:
                        out[k:end] = k + 1
    return out


@njit(cache=True)
def char_features(chars, classes, gaps, bits):
    """Features of the gaps between two non-space characters.

    Parameters
    ----------
    chars, classes:
        ``int64 (n_chars,)`` as described in the module docstring.
    gaps:
        ``int64 (n_gaps,)``: gap ``i`` lies between characters ``i - 1`` and ``i``,
        both not whitespace.
    bits:
        Size of the weight vector is ``2**bits``.

    Returns
    -------
    ``int32 (n_gaps, N_CHAR_TEMPLATES)`` weight indices: character n-grams up to 4
    around the gap, class n-grams, the (lowercased) part of the whitespace-delimited
    chunk left and right of the gap, the whole chunk with the gap's position, the
    chunk's shape with the position, whether the chunk is a web address.
    """
    n = chars.shape[0]
    chunk_start = np.zeros(n, np.int64)
    chunk_end = np.zeros(n, np.int64)
    s = 0
    for i in range(n):
        if classes[i] == WHITESPACE:
            s = i + 1
        chunk_start[i] = s
    e = n
    for i in range(n - 1, -1, -1):
        if classes[i] == WHITESPACE:
            e = i
        chunk_end[i] = e
    out = np.empty((gaps.shape[0], N_CHAR_TEMPLATES), np.int32)
    for g in range(gaps.shape[0]):
        i = gaps[g]
        a = chunk_start[i]
        b = chunk_end[i]
        c_3, c_2, c_1 = _at(chars, i - 3), _at(chars, i - 2), _at(chars, i - 1)
        c0, c1, c2 = _at(chars, i), _at(chars, i + 1), _at(chars, i + 2)
        k_3, k_2, k_1 = _at(classes, i - 3), _at(classes, i - 2), _at(classes, i - 1)
        k0, k1, k2 = _at(classes, i), _at(classes, i + 1), _at(classes, i + 2)
        left = _substring_hash(chars, max(a, i - _MAX_PART), i)
        right = _substring_hash(chars, i, min(b, i + _MAX_PART))
        whole = _substring_hash(chars, a, b)
        shape = _shape_hash(classes, a, b)
        to_left = min(i - a, 8)
        to_right = min(b - i, 8)
        row = out[g]
        row[0] = _index(_start(0), bits)
        row[1] = _index(_mix(_start(1), c_3), bits)
        row[2] = _index(_mix(_start(2), c_2), bits)
        row[3] = _index(_mix(_start(3), c_1), bits)
        row[4] = _index(_mix(_start(4), c0), bits)
        row[5] = _index(_mix(_start(5), c1), bits)
        row[6] = _index(_mix(_start(6), c2), bits)
        row[7] = _index(_mix(_mix(_start(7), c_2), c_1), bits)
        row[8] = _index(_mix(_mix(_start(8), c_1), c0), bits)
        row[9] = _index(_mix(_mix(_start(9), c0), c1), bits)
        row[10] = _index(_mix(_mix(_mix(_start(10), c_3), c_2), c_1), bits)
        row[11] = _index(_mix(_mix(_mix(_start(11), c_2), c_1), c0), bits)
        row[12] = _index(_mix(_mix(_mix(_start(12), c_1), c0), c1), bits)
        row[13] = _index(_mix(_mix(_mix(_start(13), c0), c1), c2), bits)
        row[14] = _index(_mix(_mix(_mix(_mix(_start(14), c_2), c_1), c0), c1), bits)
        h = _start(15)
        for k in (k_3, k_2, k_1, k0, k1, k2):
            h = _mix(h, k)
        row[15] = _index(h, bits)
        row[16] = _index(_mix(_mix(_start(16), k_1), k0), bits)
        row[17] = _index(_mix(_mix(_mix(_mix(_start(17), k_2), k_1), k0), k1), bits)
        row[18] = _index(_mix(_start(18), left), bits)
        row[19] = _index(_mix(_start(19), right), bits)
        row[20] = _index(_mix(_mix(_start(20), whole), i - a), bits)
        row[21] = _index(_mix(_mix(_mix(_start(21), shape), to_left), to_right), bits)
        row[22] = _index(_mix(_mix(_mix(_mix(_start(22), min(to_left, 5)), min(to_right, 5)),
                                   c_1), c0), bits)
        row[23] = _index(_mix(_mix(_start(23), left), c0), bits)
        row[24] = _index(_mix(_mix(_start(24), c_1), right), bits)
        row[25] = _index(_mix(_mix(_mix(_start(25), k_1), c0), min(to_right, 5)), bits)
        row[26] = _index(_mix(_mix(_mix(_start(26), _web_address(chars, a, b)), k_1), k0), bits)
    return out


@njit(cache=True, inline="always")
def _attr(attrs, t, j):
    return attrs[t, j] if 0 <= t < attrs.shape[0] else OUTSIDE + j


@njit(cache=True)
def token_features(attrs, candidates, bits):
    """Features of a sentence boundary after each candidate token.

    Parameters
    ----------
    attrs:
        ``int64 (n_tokens, N_TOKEN_ATTRIBUTES)``: per token of the text, the columns
        ``ATTR_*`` (hashes of the lowercased form, of the form and of its shape; class of
        the first character; first and last code point; whitespace after it, 0 none,
        1 space, 2 paragraph break; 1 if a known abbreviation; length up to 10).
    candidates:
        ``int64 (n_candidates,)`` token indices.

    Returns
    -------
    ``int32 (n_candidates, N_TOKEN_TEMPLATES)`` weight indices over a window of two
    tokens before and two after the candidate.
    """
    out = np.empty((candidates.shape[0], N_TOKEN_TEMPLATES), np.int32)
    for c in range(candidates.shape[0]):
        t = candidates[c]
        low_p, low_t, low_n, low_nn = (_attr(attrs, t - 1, ATTR_LOWER), _attr(attrs, t, ATTR_LOWER),
                                       _attr(attrs, t + 1, ATTR_LOWER),
                                       _attr(attrs, t + 2, ATTR_LOWER))
        raw_n = _attr(attrs, t + 1, ATTR_RAW)
        shape_p, shape_t = _attr(attrs, t - 1, ATTR_SHAPE), _attr(attrs, t, ATTR_SHAPE)
        shape_n, shape_nn = _attr(attrs, t + 1, ATTR_SHAPE), _attr(attrs, t + 2, ATTR_SHAPE)
        first_n = _attr(attrs, t + 1, ATTR_FIRST_CLASS)
        char_n = _attr(attrs, t + 1, ATTR_FIRST_CHAR)
        last_t = _attr(attrs, t, ATTR_LAST_CHAR)
        space_t = _attr(attrs, t, ATTR_SPACE_AFTER)
        abbr_t = _attr(attrs, t, ATTR_ABBREVIATION)
        length_t = _attr(attrs, t, ATTR_LENGTH)
        row = out[c]
        row[0] = _index(_start(0), bits)
        row[1] = _index(_mix(_start(1), low_t), bits)
        row[2] = _index(_mix(_start(2), low_n), bits)
        row[3] = _index(_mix(_start(3), raw_n), bits)
        row[4] = _index(_mix(_start(4), low_p), bits)
        row[5] = _index(_mix(_mix(_start(5), low_p), low_t), bits)
        row[6] = _index(_mix(_mix(_start(6), low_t), low_n), bits)
        row[7] = _index(_mix(_mix(_start(7), low_t), first_n), bits)
        row[8] = _index(_mix(_start(8), shape_t), bits)
        row[9] = _index(_mix(_start(9), shape_n), bits)
        row[10] = _index(_mix(_mix(_start(10), shape_t), shape_n), bits)
        row[11] = _index(_mix(_mix(_mix(_start(11), shape_p), shape_t), shape_n), bits)
        row[12] = _index(_mix(_mix(_mix(_start(12), last_t), space_t), first_n), bits)
        row[13] = _index(_mix(_mix(_mix(_start(13), abbr_t), first_n), space_t), bits)
        row[14] = _index(_mix(_start(14), low_nn), bits)
        row[15] = _index(_mix(_mix(_start(15), shape_n), shape_nn), bits)
        row[16] = _index(_mix(_mix(_mix(_start(16), length_t), last_t), first_n), bits)
        row[17] = _index(_mix(_mix(_start(17), low_t), space_t), bits)
        row[18] = _index(_mix(_mix(_start(18), raw_n), space_t), bits)
        row[19] = _index(_mix(_mix(_start(19), char_n), last_t), bits)
        row[20] = _index(_mix(_mix(_mix(_start(20), low_p), low_t), first_n), bits)
        row[21] = _index(_mix(_mix(_mix(_start(21), shape_t), raw_n), space_t), bits)
    return out


@njit(cache=True)
def perceptron_fit(features, labels, orders, bits):
    """Averaged perceptron (Collins, 2002) for a binary decision.

    Parameters
    ----------
    features:
        ``int32 (n, k)`` weight indices of each example (a feature's value is 1).
    labels:
        ``bool (n,)``: True for the positive class (score > 0).
    orders:
        ``int64 (epochs, n)``: the order in which each pass visits the examples.
    bits:
        There are ``2**bits`` weights.

    Returns
    -------
    ``float32 (2**bits,)``: the average of the weight vector over all steps, computed
    with the usual trick ``w - u / c`` where ``u`` sums ``c * update``.
    """
    w = np.zeros(1 << bits, np.float64)
    u = np.zeros(1 << bits, np.float64)
    c = 1.0
    for epoch in range(orders.shape[0]):
        for j in orders[epoch]:
            score = 0.0
            for f in features[j]:
                score += w[f]
            if (score > 0.0) != labels[j]:
                step = 1.0 if labels[j] else -1.0
                for f in features[j]:
                    w[f] += step
                    u[f] += c * step
            c += 1.0
    return (w - u / c).astype(np.float32)


@njit(cache=True)
def perceptron_scores(features, weights):
    """``float64 (n,)``: the sum of the weights of each example's features."""
    out = np.zeros(features.shape[0], np.float64)
    for j in range(features.shape[0]):
        for f in features[j]:
            out[j] += weights[f]
    return out
