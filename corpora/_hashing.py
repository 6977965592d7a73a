"""The hash pieces the numba kernels share (the tokenizer's, the tagger's and the
feature extractor's): MurmurHash3's 64-bit finalizer, the constants of FNV-1a and of
Fibonacci hashing, seeded FNV-1a hashes of strings and the look-up of sorted hash keys,
so that feature ids and tables are the same on every machine and in every process."""

from __future__ import annotations

import numpy as np
from numba import njit

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
"""2^64 divided by the golden ratio (Fibonacci hashing, Knuth, TAOCP 3, 6.4)."""
M1 = np.uint64(0xFF51AFD7ED558CCD)
M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


@njit(cache=True)
def fmix64(k):
    """MurmurHash3's 64-bit finalizer (uint64 -> uint64): a bijection that mixes every
    bit into every bit."""
    k ^= k >> _S33
    k *= M1
    k ^= k >> _S33
    k *= M2
    k ^= k >> _S33
    return k


@njit(cache=True)
def combine(seed, a, b):
    """Hash of the ordered pair ``(a, b)`` under template ``seed`` (all ``uint64``)."""
    return fmix64(fmix64(seed ^ a) * GOLDEN ^ b)


@njit(cache=True)
def hash_strings(buf, offsets, seeds):
    """Seeded FNV-1a-64 of byte strings ``buf[offsets[s]:offsets[s + 1]]``.

    ``buf`` is ``uint8``, ``offsets`` ``int64 (S + 1,)``, ``seeds`` ``uint64 (S,)``
    (the template of each string). Returns ``uint64 (S,)``.
    """
    out = np.empty(seeds.shape[0], dtype=np.uint64)
    for s in range(seeds.shape[0]):
        h = fmix64(seeds[s] ^ FNV_OFFSET)
        for k in range(offsets[s], offsets[s + 1]):
            h ^= np.uint64(buf[k])
            h *= FNV_PRIME
        out[s] = fmix64(h)
    return out


def string_hashes(strings: list[str], seeds: np.ndarray | int) -> np.ndarray:
    """``uint64`` hash of each string (UTF-8) under its seed (one seed for all, or one
    per string): :func:`hash_strings`."""
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    seeds = np.broadcast_to(np.asarray(seeds, dtype=np.uint64), (len(encoded),))
    with np.errstate(over="ignore"):
        return hash_strings(buf, offsets, np.ascontiguousarray(seeds))


def sorted_lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray,
                  default) -> np.ndarray:
    """``values[i]`` where ``queries == keys[i]`` (``keys`` sorted), else ``default``."""
    if keys.shape[0] == 0:
        return np.full(queries.shape[0], default, dtype=values.dtype)
    rows = np.minimum(np.searchsorted(keys, queries), keys.shape[0] - 1)
    return np.where(keys[rows] == queries, values[rows], default).astype(values.dtype)
