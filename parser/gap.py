"""Relaxation gap against runtime (Martins, Smith, Xing, ICML 2009, experiment 2;
``docs/algorithms.md`` section 3).

Every sentence is decoded twice under the model's scores: by the LP relaxation plus
MST rounding, and exactly by the ILP. One record per sentence says what the relaxation
cost (the gap ``lp_value - ilp_value``, fractional arcs) and saved (time).
"""

from __future__ import annotations

import time
from typing import Iterable, Iterator

import numpy as np

from polyparse.corpora.sentence import Sentence
from polyparse.decoders import Decoder

from polyparse.learning.model import LinearModel

LENGTH_BINS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, 10 ** 9))


def measure(model: LinearModel, sentences: Iterable[Sentence], lp: Decoder,
            ilp: Decoder, compare: Decoder | None = None) -> Iterator[dict]:
    """One record per sentence (keys as in ``polyparse gap --help``). With ``compare``
    (a second relaxation, e.g. AD3 beside HiGHS), the record's ``compare`` holds the
    same relaxation keys for it, and its ``decoder`` name."""
    for index, sentence in enumerate(sentences, 1):
        if len(sentence) == 0:
            continue
        start = time.perf_counter()
        example = model.example(sentence)
        scores = model.scores(example).parts
        time_features = time.perf_counter() - start
        exact = ilp.decode(example.parts, scores)
        relaxed, fields = _relaxation(lp, example.parts, scores, exact, sentence)
        stages = [f"{name}:{result.stats.fallback_stage}"
                  for name, result in (("lp", relaxed), ("ilp", exact))
                  if result.stats.fallback]
        record = {
            "sent_id": sentence.sent_id or str(index), "n": len(sentence),
            "ilp_value": exact.value, **fields, "time_features": time_features,
            "time_ilp": exact.stats.time_ilp, "ilp_nodes": exact.stats.ilp_nodes,
            "fallback": bool(stages), "fallback_stage": ",".join(stages) or None,
        }
        if sentence.has_tree():
            record["correct_ilp"] = int(np.sum(exact.heads[1:] == sentence.heads[1:]))
        if compare is not None:
            _, fields = _relaxation(compare, example.parts, scores, exact, sentence)
            record["compare"] = {"decoder": compare.name, **fields}
        yield record


def _relaxation(decoder: Decoder, parts, scores: np.ndarray, exact, sentence: Sentence
                ) -> tuple:
    """``decoder``'s result on one sentence and its keys of a record: the LP value (None
    when it ran out of time), the rounded tree's score and search moves, the gap to the
    ILP value, integrality, times and correct heads (``correct_lp``, with gold)."""
    start = time.perf_counter()
    relaxed = decoder.decode(parts, scores)
    elapsed = time.perf_counter() - start
    stats = relaxed.stats
    out = stats.fallback                    # no LP optimum: no gap to report
    time_build = stats.time_build or 0.0
    fields = {
        "lp_value": None if out else relaxed.value,
        "rounded_value": relaxed.value if out else stats.rounded_value,
        "search_moves": 0 if out else stats.search_moves,
        "gap": None if out else relaxed.value - exact.value,
        "integral": False if out else bool(stats.integral),
        "fractional_arcs": None if out else int(stats.fractional_arcs),
        "time_build": time_build,
        "time_lp": elapsed - time_build if stats.time_lp is None else stats.time_lp,
        "time_round": stats.time_round or 0.0,
    }
    if sentence.has_tree():
        fields["correct_lp"] = int(np.sum(relaxed.heads[1:] == sentence.heads[1:]))
    return relaxed, fields


def compared(records: list[dict]) -> list[dict]:
    """The records with the compared relaxation's keys in place of the first one's, for
    :func:`summarize` (empty when there was no ``compare``)."""
    return [{**r, **r["compare"]} for r in records if "compare" in r]


def relative_gap(record: dict) -> float | None:
    """The relaxation gap relative to the ILP value, ``(lp_value - ilp_value) /
    |ilp_value|`` (``docs/algorithms.md`` section 3 defines the absolute gap), or None
    when the ILP value is 0 and the ratio is undefined, or the LP ran out of time."""
    ilp = abs(record["ilp_value"])
    return record["gap"] / ilp if ilp > 0 and record["gap"] is not None else None


def summarize(records: list[dict]) -> list[dict]:
    """Per length bin (and overall): share integral; mean gap, absolute (``lp_value -
    ilp_value``) and relative (:func:`relative_gap`, in %, over the sentences whose ILP
    value is not 0; None when there is none); mean, median, 90th and 99th-percentile LP
    and ILP times; UAS with the ILP and with LP+rounding."""
    rows = []
    bins = [(f"{lo}-{hi}" if hi < 10 ** 9 else f"{lo}+", lo, hi) for lo, hi in LENGTH_BINS]
    for name, lo, hi in bins + [("all", 1, 10 ** 9)]:
        group = [r for r in records if lo <= r["n"] <= hi]
        if not group:
            continue
        words = sum(r["n"] for r in group)
        relative = [g for g in map(relative_gap, group) if g is not None]
        row = {"length": name, "sentences": len(group),
               "integral": 100.0 * np.mean([r["integral"] for r in group]),
               "mean_gap": float(np.mean([r["gap"] for r in group if r["gap"] is not None]
                                         or [np.nan])),
               "mean_relative_gap": 100.0 * float(np.mean(relative)) if relative else None,
               "fallbacks": sum(r["fallback"] for r in group)}
        for key in ("time_lp", "time_ilp"):
            values = [r[key] for r in group]
            row[f"{key}_mean"] = float(np.mean(values))
            row[f"{key}_median"] = float(np.median(values))
            row[f"{key}_p90"] = float(np.percentile(values, 90))
            row[f"{key}_p99"] = float(np.percentile(values, 99))
        if all("correct_ilp" in r for r in group):
            row["uas_ilp"] = 100.0 * sum(r["correct_ilp"] for r in group) / words
            row["uas_lp"] = 100.0 * sum(r["correct_lp"] for r in group) / words
        rows.append(row)
    return rows


def format_summary(rows: list[dict]) -> str:
    """The rows of :func:`summarize` as a table; ``rel gap%`` is the mean relative gap
    in percent."""
    header = (f"{'length':>8} {'sents':>6} {'integral%':>9} {'mean gap':>9} {'rel gap%':>9} "
              f"{'LP s':>8} {'LP p90':>8} {'ILP s':>8} {'ILP med':>8} {'ILP p90':>8} "
              f"{'ILP p99':>8} {'UAS ILP':>8} {'UAS LP':>8}")
    lines = [header]
    for r in rows:
        uas = (f"{r['uas_ilp']:8.2f} {r['uas_lp']:8.2f}" if "uas_ilp" in r
               else f"{'-':>8} {'-':>8}")
        relative = (f"{'-':>9}" if r["mean_relative_gap"] is None
                    else f"{r['mean_relative_gap']:9.4f}")
        lines.append(f"{r['length']:>8} {r['sentences']:6d} {r['integral']:9.1f} "
                     f"{r['mean_gap']:9.4f} {relative} {r['time_lp_mean']:8.4f} "
                     f"{r['time_lp_p90']:8.4f} {r['time_ilp_mean']:8.4f} "
                     f"{r['time_ilp_median']:8.4f} {r['time_ilp_p90']:8.4f} "
                     f"{r['time_ilp_p99']:8.4f} {uas}")
    return "\n".join(lines)


def plot(records: list[dict], path: str) -> None:
    """ILP time against gap, and LP and ILP time against length, side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from polyparse.corpora.files import atomic_write

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    gap = [max(r["gap"], 1e-9) for r in records]
    left.scatter(gap, [r["time_ilp"] for r in records], s=8, alpha=0.6)
    left.set(xscale="log", yscale="log", xlabel="relaxation gap (LP - ILP value)",
             ylabel="ILP time (s)", title="ILP time vs relaxation gap")
    n = [r["n"] for r in records]
    right.scatter(n, [r["time_ilp"] for r in records], s=8, alpha=0.6, label="ILP")
    right.scatter(n, [r["time_lp"] + r["time_round"] for r in records], s=8, alpha=0.6,
                  label="LP + rounding")
    right.set(yscale="log", xlabel="sentence length", ylabel="time (s)",
              title="decoding time vs length")
    right.legend()
    fig.tight_layout()
    with atomic_write(path, mode="wb", encoding=None) as out:
        fig.savefig(out, format="png", dpi=110)
    plt.close(fig)
