"""Exhaustive oracles shared by the decoder tests: every dependency tree of n words."""

from __future__ import annotations

from functools import lru_cache
import itertools

import numpy as np


@lru_cache(maxsize=None)
def all_trees(n: int, single_root: bool) -> np.ndarray:
    """Every arborescence on words 1..n rooted at 0, as ``(T, n + 1)`` head arrays.

    Column 0 is -1. Enumerates all ``(n + 1)^n`` head assignments without self-loops and
    keeps those in which following heads from every word reaches 0 (no cycle).
    """
    choices = [[h for h in range(n + 1) if h != m] for m in range(1, n + 1)]
    heads = np.array(list(itertools.product(*choices)), dtype=np.int64).reshape(-1, n)
    heads = np.concatenate([np.full((heads.shape[0], 1), -1), heads], axis=1)
    # Walk n steps up from every word; in a tree every walk has reached the root 0.
    node = np.tile(np.arange(n + 1), (heads.shape[0], 1))
    rows = np.arange(heads.shape[0])[:, None]
    for _ in range(n):
        node = np.where(node > 0, heads[rows, node], node)
    trees = heads[np.all(node[:, 1:] == 0, axis=1) if n else slice(None)]
    if single_root:
        trees = trees[(trees[:, 1:] == 0).sum(axis=1) == 1]
    trees.setflags(write=False)
    return trees


def tree_scores(scores: np.ndarray, trees: np.ndarray) -> np.ndarray:
    """Arc-factored score of each tree under ``scores[h, m]``."""
    n = trees.shape[1] - 1
    return scores[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1)


@lru_cache(maxsize=None)
def projective_trees(n: int, single_root: bool) -> np.ndarray:
    """The trees of ``all_trees`` in which every word between h and m descends from h.

    The root is word 0 of the sentence, so an arc crossing a root arc is caught too.
    """
    trees = all_trees(n, single_root)
    # ancestor[t, i, j]: i is an ancestor of j (or i == j) in tree t.
    ancestor = np.zeros((trees.shape[0], n + 1, n + 1), dtype=bool)
    rows = np.arange(trees.shape[0])[:, None]
    node = np.tile(np.arange(n + 1), (trees.shape[0], 1))
    for _ in range(n + 1):
        ancestor[rows, node, np.arange(n + 1)] = True
        node = np.where(node > 0, trees[rows, node], 0)
    projective = np.ones(trees.shape[0], dtype=bool)
    for m in range(1, n + 1):
        h = trees[:, m]
        for k in range(1, n + 1):
            between = (np.minimum(h, m) < k) & (k < np.maximum(h, m))
            projective &= ~between | ancestor[np.arange(trees.shape[0]), h, k]
    return trees[projective]
