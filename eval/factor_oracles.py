"""Cost of the TREE factor's oracles per sentence (issue 12): max-marginals in one numba call
against ``|A|`` constrained maximum spanning trees called from Python.

One command::

    python -m eval run factor_oracles [--sizes 10 20 30 40] [--heads 5 10] [--sentences 30]

For every sentence length n and number K of candidate heads per word: arc scores pruned to
the K heads of largest matrix-tree marginal per word (as the parser's pruning,
``docs/algorithms.md`` section 6), one and several root children. Two kinds of scores:
``random`` (Gaussian, scale 2: the greedy graph is rarely a tree, the kernel's worst case)
and ``peaked`` (Gaussian, scale 1, plus 3 on the arcs of a random tree, as a trained
model's scores: the MST is then mostly the greedy graph and the kernel's exact shortcut
answers most arcs without an MST). Times per
sentence (mean over ``--sentences`` sentences, best of 3 runs each, one core) of: one MST
(MAP), all max-marginals by :meth:`FactorGraph.tree_max_marginals` (one kernel call), the
same ``|A|`` constrained trees by :func:`decoders.trees.chu_liu_edmonds` from a Python loop
(the baseline of ``docs/algorithms.md`` section 5b; its values are checked to agree), and
one matrix-tree (marginals and log-partition at temperature 1). Random sentences: no
treebank. Writes ``factor_oracles.{json,md}`` under ``--results``.
"""

from __future__ import annotations

import time

import numpy as np

from ._common import arguments, single_thread, write_table

single_thread()

from polyparse.decoders.factor_graph import FactorGraph  # noqa: E402
from polyparse.decoders.matrix_tree import prune_arcs  # noqa: E402
from polyparse.decoders.trees import chu_liu_edmonds  # noqa: E402
from polyparse.decoders.parts import arc_parts  # noqa: E402

SMOKE = ["--sizes", "8", "--heads", "3", "--sentences", "2"]
"""The smoke run: two sentences of 8 words, 3 heads per word."""


def python_max_marginals(graph: FactorGraph, theta: np.ndarray) -> np.ndarray:
    """The baseline: the same constrained trees as the kernel, one Python call each."""
    S = np.full((graph.n + 1, graph.n + 1), -np.inf)
    S[graph.arc_h, graph.arc_m] = theta
    heads = chu_liu_edmonds(S, graph.single_root)
    words = np.arange(1, graph.n + 1)
    best = S[heads[1:], words].sum()
    mm = np.full((graph.n_arcs, 2), -np.inf)
    for a, (h, m) in enumerate(zip(graph.arc_h, graph.arc_m)):
        W = S.copy()
        in_tree = heads[m] == h
        if in_tree:
            W[h, m] = -np.inf
        else:
            W[:, m] = -np.inf
            W[h, m] = S[h, m]
        try:
            other = chu_liu_edmonds(W, graph.single_root)
            value = W[other[1:], words].sum()
        except ValueError:
            value = -np.inf
        mm[a] = (value, best) if in_tree else (best, value)
    return mm


def best_of(runs: int, fn, *args) -> tuple[float, object]:
    """Smallest wall time of ``runs`` calls, and the last result."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return min(times), result


def random_tree(rng: np.random.Generator, n: int) -> np.ndarray:
    """Heads of a random tree with one root child."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1)
    heads[order[0]] = 0
    for i in range(1, n):
        heads[order[i]] = order[rng.integers(i)]
    return heads


def arc_scores(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "random":
        return rng.normal(scale=2.0, size=(n + 1, n + 1))
    S = rng.normal(size=(n + 1, n + 1))
    S[random_tree(rng, n)[1:], np.arange(1, n + 1)] += 3.0
    return S


def nearly_greedy(graph: FactorGraph, theta: np.ndarray, heads: np.ndarray) -> bool:
    """At most one word's MST head is not its best head (the kernel's shortcut)."""
    S = np.full((graph.n + 1, graph.n + 1), -np.inf)
    S[graph.arc_h, graph.arc_m] = theta
    words = np.arange(1, graph.n + 1)
    return int((S[:, 1:].max(axis=0) > S[heads[1:], words]).sum()) <= 1


def measure(kind: str, n: int, heads: int, single_root: bool, sentences: int,
            rng: np.random.Generator) -> dict:
    totals = {"mst": 0.0, "kernel": 0.0, "python": 0.0, "matrix_tree": 0.0}
    n_arcs = 0
    n_greedy = 0
    for _ in range(sentences):
        S = arc_scores(kind, n, rng)
        arcs = prune_arcs(S, single_root, threshold=0.0, max_heads=heads)
        theta = S[arcs[:, 0], arcs[:, 1]]
        graph = FactorGraph.from_parts(arc_parts(n, arcs), theta, single_root=single_root)
        n_arcs += graph.n_arcs
        seconds, (tree, _) = best_of(3, graph.tree_map, theta)
        totals["mst"] += seconds
        n_greedy += nearly_greedy(graph, theta, tree)
        seconds, (mm, _) = best_of(3, graph.tree_max_marginals, theta)
        totals["kernel"] += seconds
        seconds, baseline = best_of(3, python_max_marginals, graph, theta)
        totals["python"] += seconds
        np.testing.assert_allclose(mm, baseline, rtol=0, atol=1e-9)
        seconds, _ = best_of(3, graph.tree_marginals, theta, 1.0)
        totals["matrix_tree"] += seconds
    row = {"scores": kind, "n": n, "K": heads, "single_root": single_root,
           "arcs": n_arcs / sentences, "nearly_greedy": n_greedy / sentences}
    row.update({f"{key}_ms": 1e3 * value / sentences for key, value in totals.items()})
    row["speedup"] = row["python_ms"] / row["kernel_ms"]
    row["kernel_mst_us"] = 1e6 * totals["kernel"] / n_arcs
    return row


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 40])
    ap.add_argument("--heads", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--sentences", type=int, default=30)
    ap.add_argument("--scores", nargs="+", choices=["random", "peaked"],
                    default=["random", "peaked"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="factor_oracles", help="result name under --results")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    warm = np.random.default_rng(1)  # compile the kernels outside the timings
    measure("random", 6, 3, True, 1, warm)
    measure("random", 6, 3, False, 1, warm)
    rows = []
    for kind in args.scores:
        for single_root in (True, False):
            for heads in args.heads:
                for n in args.sizes:
                    rows.append(measure(kind, n, heads, single_root, args.sentences, rng))
                    print(rows[-1], flush=True)
    notes = (f"{args.sentences} random sentences per row (scores `random`: Gaussian, scale "
             "2; `peaked`: Gaussian, scale 1, plus 3 on a random tree's arcs; pruned to the "
             "K heads of largest marginal per word); mean time per sentence, best of 3 runs "
             "each; one core. `nearly greedy`: share of sentences whose MST is the greedy "
             "graph but for at most one word (the kernel's exact shortcut then answers "
             "the arcs without an MST). `max-marginals` is one numba call "
             "(`FactorGraph.tree_max_marginals`), `|A| MSTs from Python` the same |A| "
             "constrained trees by `chu_liu_edmonds` in a Python loop (values checked equal).")
    write_table(args, args.out, "TREE factor oracles: time per sentence", rows,
                [("scores", "scores"), ("n", "n"), ("K", "K"),
                 ("single_root", "single root"), ("arcs", "arcs |A|"),
                 ("nearly_greedy", "nearly greedy"), ("mst_ms", "MAP (1 MST) ms"),
                 ("kernel_ms", "max-marginals ms"), ("kernel_mst_us", "us per arc"),
                 ("python_ms", "|A| MSTs from Python ms"), ("speedup", "speed-up"),
                 ("matrix_tree_ms", "matrix-tree ms")], notes=notes)

