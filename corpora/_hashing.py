"""The hash pieces the numba kernels share (the tokenizer's, the tagger's and the
feature extractor's): MurmurHash3's 64-bit finalizer and the constants of FNV-1a and of
Fibonacci hashing, so that feature ids are the same on every machine and in every
process."""

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
