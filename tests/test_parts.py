"""Higher-order parts: the candidate sets of ``build_parts`` and the indicator functions of
``Parts.from_heads``, each against a slow pure-Python definition."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest

from brute_force import all_trees
from polyparse.decoders import PartType, higher_order
from polyparse.decoders.higher_order import ancestor_matrix, build_parts
from polyparse.decoders.parts import register_indicator

# ---- slow definitions (docs/algorithms.md section 1), one tree and one part at a time ----


def children(heads, h):
    return [c for c in range(1, len(heads)) if heads[c] == h]


def is_ancestor(heads, i, j):
    """i is an ancestor of j or i == j."""
    while j != -1:
        if j == i:
            return True
        j = heads[j]
    return False


def slow_indicator(part, heads, max_valency):
    """Value of one part ``(type, h, m, x)`` on the tree ``heads``."""
    t, h, m, x = (int(v) for v in part)
    n = len(heads) - 1
    if t == PartType.ARC:
        return heads[m] == h
    if t == PartType.GRANDPARENT:
        return heads[m] == h and heads[h] == x
    if t == PartType.SIBLING:
        return heads[m] == h and heads[x] == h
    if t == PartType.CONSECUTIVE_SIBLING:
        right = x > h
        side = [c for c in children(heads, h) if (c > h) == right]
        chain = [h] + sorted(side, key=lambda c: abs(c - h)) + [n + 1 if right else -1]
        return any(chain[i] == m and chain[i + 1] == x for i in range(len(chain) - 1))
    if t == PartType.VALENCY:
        count = sum(1 for c in children(heads, h) if (c > h) == bool(m))
        return count >= x if x == max_valency else count == x
    if t == PartType.NONPROJ:
        between = range(min(h, m) + 1, max(h, m))
        return heads[m] == h and any(not is_ancestor(heads, h, j) for j in between)
    raise AssertionError(t)


def slow_from_heads(parts, heads, max_valency=3):
    return np.array([slow_indicator(p, heads, max_valency) for p in parts.index], dtype=float)


def slow_candidates(n, arcs, order, consecutive, max_valency=3):
    """The set of parts ``build_parts`` should return, enumerated naively."""
    arcs = {(int(h), int(m)) for h, m in arcs}
    out = {(PartType.ARC, h, m, -1) for h, m in arcs}
    if order == "1":
        return out
    out |= {(PartType.GRANDPARENT, h, m, g) for (g, h) in arcs for (h2, m) in arcs
            if h2 == h and m != g}
    for (h, m), (h2, s) in itertools.product(arcs, arcs):
        if h == h2 and (h < m < s or s < m < h):
            out.add((PartType.CONSECUTIVE_SIBLING if consecutive else PartType.SIBLING,
                     h, m, s))
    if consecutive:
        for h, m in arcs:
            end = n + 1 if m > h else -1
            out |= {(PartType.CONSECUTIVE_SIBLING, h, h, m),
                    (PartType.CONSECUTIVE_SIBLING, h, m, end)}
        out |= {(PartType.CONSECUTIVE_SIBLING, h, h, end) for h in range(n + 1)
                for end in (-1, n + 1) if not (h == 0 and end == -1)}
    if order == "full":
        out |= {(PartType.VALENCY, h, side, k) for h in range(n + 1) for side in (0, 1)
                for k in range(max_valency + 1) if not (h == 0 and side == 0)}
        out |= {(PartType.NONPROJ, h, m, -1) for h, m in arcs if h > 0 and abs(h - m) > 1}
    return out


def random_tree(n, rng):
    """A uniformly random labelled tree shape: attach words in random order."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1)
    placed = [0]
    for w in order:
        heads[w] = rng.choice(placed)
        placed.append(w)
    return heads


def pruned_arcs(n, rng, heads_per_word=3):
    """Random candidate arcs, a random tree's arcs always among them."""
    tree = random_tree(n, rng)
    arcs = {(int(tree[m]), m) for m in range(1, n + 1)}
    for m in range(1, n + 1):
        others = [h for h in range(n + 1) if h != m]
        arcs |= {(int(h), m) for h in rng.choice(others, size=min(heads_per_word - 1, n),
                                                  replace=False)}
    return np.array(sorted(arcs))


CONFIGS = [("1", False), ("2", False), ("2", True), ("full", False), ("full", True)]

# ---- tests ----


@pytest.mark.parametrize("order,consecutive", CONFIGS)
@pytest.mark.parametrize("pruned", [False, True])
def test_candidate_sets(order, consecutive, pruned):
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 8):
        arcs = pruned_arcs(n, rng) if pruned else None
        parts = build_parts(n, arcs, order=order, consecutive_siblings=consecutive)
        rows = {tuple(int(v) for v in r) for r in parts.index}
        assert len(rows) == len(parts)  # no duplicates
        assert rows == slow_candidates(n, parts.arcs, order, consecutive)
        # contiguous blocks whose rows all carry their block's type
        covered = 0
        for part_type, block in parts.offsets.items():
            assert np.all(parts.index[block, 0] == part_type)
            covered += block.stop - block.start
        assert covered == len(parts)


@pytest.mark.parametrize("order,consecutive", CONFIGS)
@pytest.mark.parametrize("single_root", [False, True])
def test_from_heads_on_all_trees(order, consecutive, single_root):
    n = 5 if single_root else 4
    parts = build_parts(n, order=order, consecutive_siblings=consecutive)
    for heads in all_trees(n, single_root):
        np.testing.assert_array_equal(parts.from_heads(heads), slow_from_heads(parts, heads))


@pytest.mark.parametrize("max_valency", [1, 2, 4])
def test_from_heads_random_larger_trees(max_valency):
    rng = np.random.default_rng(1)
    for n in (9, 14):
        for consecutive in (False, True):
            arcs = pruned_arcs(n, rng, heads_per_word=4)
            parts = build_parts(n, arcs, order="full", consecutive_siblings=consecutive,
                                max_valency=max_valency)
            for _ in range(10):
                heads = random_tree(n, rng)
                np.testing.assert_array_equal(parts.from_heads(heads),
                                              slow_from_heads(parts, heads, max_valency))


def test_every_type_is_exercised():
    """The trees above make every part type both 0 and 1 somewhere (no vacuous test)."""
    parts = build_parts(4, order="full")
    seen = np.zeros((len(parts), 2), dtype=bool)
    parts_cs = build_parts(4, order="2", consecutive_siblings=True)
    seen_cs = np.zeros((len(parts_cs), 2), dtype=bool)
    for heads in all_trees(4, False):
        z = parts.from_heads(heads).astype(int)
        seen[np.arange(len(parts)), z] = True
        z = parts_cs.from_heads(heads).astype(int)
        seen_cs[np.arange(len(parts_cs)), z] = True
    for p, s in ((parts, seen), (parts_cs, seen_cs)):
        for part_type, block in p.offsets.items():
            assert s[block, 1].any() and s[block, 0].any(), part_type.name


def test_valency_one_bin_per_side():
    parts = build_parts(6, order="full")
    block = parts.block(PartType.VALENCY)
    rng = np.random.default_rng(2)
    for _ in range(20):
        v = parts.from_heads(random_tree(6, rng))[block]
        # each (h, side) has exactly one active bin
        assert v.reshape(-1, 4).sum(axis=1).tolist() == [1.0] * 13


def test_ancestor_matrix():
    rng = np.random.default_rng(3)
    for n in (1, 4, 10):
        heads = random_tree(n, rng)
        expected = [[is_ancestor(heads, i, j) for j in range(n + 1)] for i in range(n + 1)]
        np.testing.assert_array_equal(ancestor_matrix(heads), expected)


def test_bad_arguments():
    with pytest.raises(ValueError):
        build_parts(3, order="3")
    with pytest.raises(ValueError):
        build_parts(3, order="full", max_valency=0)
    with pytest.raises(ValueError):
        register_indicator(PartType.SIBLING)(lambda rows, heads: rows)


def test_docstring_examples():
    assert doctest.testmod(higher_order).failed == 0
