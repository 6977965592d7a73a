"""Past one machine: parsing and parameter-mixing training on a Dask cluster, measured on
this machine and projected to 8, 32 and 128 machines.

    python -m eval run scale [--treebank en_ewt] [--model M] [--parse-sentences N]
                             [--train-sentences 2000] [--ipm-sentences 2000]
                             [--workers 1 2] [--no-ud-rules]

* Parsing: en_ewt train (``--treebank``; ``../shared/ud/en_ewt/train.conllu``, read in
  place; the first
  ``--parse-sentences`` sentences, default all) is parsed by an order-1 model (``--model``,
  or one trained here by ``polyparse``'s Python API on the first ``--train-sentences``
  sentences, 2 epochs, gold tags, kept in ``RESULTS/tmp/``) with one process (what
  ``--jobs 1`` does), then on ``local:1`` and ``local:2`` Dask clusters (``--workers``;
  what ``--dask local:N`` does): tokens/s, speed-up, the seconds to read the input and write the
  output on the client, to ship the model to the workers, and whether the output is
  byte-identical to one process's. ``--no-ud-rules`` parses as ``polyparse parse
  --no-ud-rules`` does: the cheaper decoding per sentence, which makes the cluster's own
  costs (shipping, scheduling) the larger share, so the speed-up is the harder one.
* Training: one epoch of iterative parameter mixing (SSG) on the first
  ``--ipm-sentences`` sentences with 1 shard on ``local:1`` and 2 shards on
  ``local:2`` (``--workers``): the epoch's time, the seconds to ship the weights both
  ways, and to mix.
* A projection to 8, 32 and 128 machines (Amdahl's law from the measured serial part),
  written out as arithmetic under the table.

Writes ``scale.{json,md}`` under ``--results``.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np

from ._common import (arguments, folder, kept_model, require_treebanks, single_thread,
                      write_result)

single_thread()

SMOKE = ["--treebank", "sample", "--train-sentences", "20", "--parse-sentences", "20",
         "--ipm-sentences", "20", "--workers", "1"]
"""The smoke run: 20 sentences of the sample, one worker."""

MACHINES = (8, 32, 128)


def trained_model(args) -> Path:
    from polyparse.corpora.conllu_io import read_treebank
    from polyparse.parser.config import TrainConfig
    from polyparse.parser.pipeline import Parser

    def train(path: Path) -> None:
        sentences = read_treebank(folder(args.ud, args.treebank) / "train.conllu")
        Parser.train(sentences[:args.train_sentences], TrainConfig(epochs=2)).save(path)

    return kept_model(args, f"scale_{args.treebank}_{args.train_sentences}", train)


def timed_parse(parser, text: bytes, client=None, times=None) -> dict:
    """Read CoNLL-U ``text``, parse it (on ``client`` if given), write it: the seconds of
    each stage as seen from the client, and the output."""
    from polyparse.corpora.conllu_io import read_conllu, write_conllu
    from polyparse.parser import cluster, pipeline
    from polyparse.parser.analysis import ParseOptions

    began = time.perf_counter()
    sentences = list(read_conllu(io.BytesIO(text)))
    read = time.perf_counter() - began
    began = time.perf_counter()
    chunks = [sentences[i:i + pipeline.CHUNK] for i in range(0, len(sentences), pipeline.CHUNK)]
    if client is None:
        parsed = [s for chunk in chunks for s in parser.parse_chunk(chunk)]
    else:
        parsed = list(cluster.parse_on_cluster(parser, chunks, client, ParseOptions(),
                                               times=times))
    parse = time.perf_counter() - began
    began = time.perf_counter()
    out = io.StringIO()
    write_conllu(parsed, out)
    write = time.perf_counter() - began
    return {"read_s": read, "parse_s": parse, "write_s": write,
            "tokens": sum(len(s) for s in sentences), "sentences": len(sentences),
            "output": out.getvalue()}


def parse_rows(args, model: Path) -> list[dict]:
    from polyparse.parser import cluster
    from polyparse.parser.pipeline import Parser

    text = (folder(args.ud, args.treebank) / "train.conllu").read_bytes()
    if args.parse_sentences:
        blocks = text.split(b"\n\n")[:args.parse_sentences]
        text = b"\n\n".join(blocks) + b"\n\n"
    parser = Parser.load(model)
    parser.use_ud_rules = not args.no_ud_rules
    timed_parse(parser, text[:20000].rsplit(b"\n\n", 1)[0] + b"\n\n")   # kernels loaded
    rows = []
    alone = timed_parse(parser, text)
    reference = alone.pop("output")
    rows.append({"run": "--jobs 1", "workers": 1, **alone, "model_ship_s": 0.0,
                 "cluster_start_s": 0.0, "identical": True})
    for workers in args.workers:
        began = time.perf_counter()
        with cluster.connect(f"local:{workers}") as client:
            start = time.perf_counter() - began
            times = cluster.ShippingTimes()
            run = timed_parse(parser, text, client, times)
            output = run.pop("output")
            rows.append({"run": f"--dask local:{workers}", "workers": workers, **run,
                         "model_ship_s": times.model, "cluster_start_s": start,
                         "identical": output == reference})
    for row in rows:
        row["total_s"] = row["read_s"] + row["parse_s"] + row["write_s"]
        row["tokens_per_s"] = row["tokens"] / row["total_s"]
        row["speedup"] = row["tokens_per_s"] / rows[0]["tokens_per_s"]
    return rows


def ipm_rows(args) -> list[dict]:
    from polyparse.corpora.conllu_io import read_treebank
    from polyparse.learning.mixing import ParameterMixing, SparseWeights
    from polyparse.learning.trainers import make_trainer
    from polyparse.parser import cluster, training
    from polyparse.parser.config import MixingConfig, TrainConfig
    from polyparse.parser.pipeline import Parser

    train = read_treebank(folder(args.ud, args.treebank) / "train.conllu")[:args.ipm_sentences]
    rows = []
    for shards in args.workers:
        config = TrainConfig(epochs=1, mixing=MixingConfig(shards))
        prepared = training.prepare(train, config)
        parser = Parser(prepared.model, config)
        with cluster.connect(f"local:{shards}") as client:
            with cluster.DaskShards(client, parser, prepared.train) as runner:
                trainer = make_trainer("ssg", epochs=1, seed=0)
                began = time.perf_counter()
                stats = next(ParameterMixing(trainer, shards, runner).run(prepared.model))
                epoch = time.perf_counter() - began
                # the driver's mixing, as ParameterMixing.run does it, on weights as
                # sparse as this epoch's
                sparse = SparseWeights.of(prepared.model.weights)
                mixed, total = np.zeros(prepared.model.dim), np.zeros(prepared.model.dim)
                began = time.perf_counter()
                for _ in range(shards):
                    sparse.add_to(mixed)
                    sparse.add_to(total, 7.0)
                mixed /= shards
                mix = time.perf_counter() - began
                del mixed, total
        rows.append({"run": f"IPM epoch, {shards} shard(s) on local:{shards}",
                     "workers": shards, "sentences": len(train),
                     "tokens": sum(len(s) for s in train), "dim": prepared.model.dim,
                     "weights_mb": prepared.model.dim * 8 / 1e6,
                     "sparse_mb": sparse.nbytes / 1e6,
                     "epoch_s": epoch, "slowest_shard_s": stats.extra["slowest_shard_seconds"],
                     "model_ship_s": runner.times.model, "weights_ship_s": runner.times.weights,
                     "mix_s": mix, "tokens_per_s": sum(len(s) for s in train) / epoch})
    for row in rows:
        row["speedup"] = rows[0]["epoch_s"] / row["epoch_s"]
    return rows


def projection(parse: list[dict], ipm: list[dict]) -> tuple[list[dict], list[str]]:
    """Amdahl's law from the measured parts; the arithmetic as lines of Markdown."""
    one, dask2 = parse[0], parse[-1]
    serial = one["read_s"] + one["write_s"]
    parallel = one["parse_s"]
    overhead = max(0.0, dask2["parse_s"] - parallel / dask2["workers"])  # client, scheduler
    ship = dask2["model_ship_s"]
    tokens = one["tokens"]
    lines = [
        f"Parsing, N machines of one worker each: T(N) = S + O + P / N (from --dask "
        f"local:{dask2['workers']}), where",
        f"S = reading + writing on the client = {one['read_s']:.2f} + {one['write_s']:.2f} "
        f"= {serial:.2f} s, P = parsing in one process = {parallel:.2f} s, and O = what "
        f"local:{dask2['workers']} adds beyond P / {dask2['workers']} (scheduling, sending "
        "chunks and results, shipping the "
        f"model once, {ship:.2f} s of it) = {dask2['parse_s']:.2f} - {parallel:.2f} / "
        f"{dask2['workers']} = "
        f"{overhead:.2f} s, taken as serial (it is the client's). Throughput = "
        f"{tokens} tokens / T(N); it cannot pass {tokens} / (S + O) = "
        f"{tokens / (serial + overhead):,.0f} tokens/s, and half of that ceiling is reached "
        f"at N = P / (S + O) = {parallel / max(serial + overhead, 1e-9):.1f}.",
    ]
    rows = []
    for n in MACHINES:
        total = serial + overhead + parallel / n
        rows.append({"run": f"projected parse, {n} machines", "workers": n,
                     "total_s": total, "tokens_per_s": tokens / total,
                     "speedup": (serial + parallel) / total})
        lines.append(f"* N = {n}: T = {serial:.2f} + {overhead:.2f} + {parallel:.2f} / {n} = "
                     f"{total:.2f} s, {tokens / total:,.0f} tokens/s, speed-up "
                     f"{(serial + parallel) / total:.1f}")
    k1, k2 = ipm[0], ipm[-1]
    work = k1["slowest_shard_s"]            # one epoch's work on one shard
    per_shard = max(k2["weights_ship_s"] / k2["workers"], 1e-6)  # weights out and back
    mix = k2["mix_s"] / k2["workers"]
    lines += [
        "",
        "Parameter mixing, one epoch on K machines: T(K) = W / K + K (c + m), where W = the "
        f"epoch's work on one shard = {work:.2f} s (1 shard), c = shipping one shard's "
        f"weights out and back = {k2['weights_ship_s']:.2f} s / {k2['workers']} = "
        f"{per_shard:.3f} s "
        f"(the nonzero weights, {k2['sparse_mb']:.1f} MB each way, of "
        f"{k2['weights_mb']:.0f} MB dense; the driver sends and "
        f"receives every shard's, so it grows with K), m = mixing one shard's weights on "
        f"the driver = {mix:.4f} s. T(K) is least at K* = sqrt(W / (c + m)) = "
        f"{np.sqrt(work / (per_shard + mix)):.0f}; past it, adding machines slows the epoch.",
    ]
    for k in MACHINES:
        total = work / k + k * (per_shard + mix)
        rows.append({"run": f"projected IPM epoch, {k} shards", "workers": k,
                     "epoch_s": total, "speedup": work / total})
        lines.append(f"* K = {k}: T = {work:.2f} / {k} + {k} x ({per_shard:.3f} + {mix:.4f}) "
                     f"= {total:.2f} s, speed-up {work / total:.1f}")
    return rows, lines


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="en_ewt", help="default en_ewt")
    ap.add_argument("--model", default=None)
    ap.add_argument("--parse-sentences", type=int, default=None)
    ap.add_argument("--train-sentences", type=int, default=2000)
    ap.add_argument("--ipm-sentences", type=int, default=2000)
    ap.add_argument("--no-ud-rules", action="store_true",
                    help="parse without the UD rules (as parse --no-ud-rules)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], metavar="N",
                    help="the local:N clusters measured (default 1 2)")
    args = ap.parse_args(argv)
    require_treebanks(ap, args.ud, [args.treebank])
    model = trained_model(args)
    parse = parse_rows(args, model)
    ipm = ipm_rows(args)
    projected, arithmetic = projection(parse, ipm)
    lines = [f"Model: `{model.name}` (order 1, mst, UD rules "
             f"{'off' if args.no_ud_rules else 'on'}). Input: {args.treebank} train, "
             f"{parse[0]['sentences']} sentences, {parse[0]['tokens']} tokens"
             + (" (capped by --parse-sentences)" if args.parse_sentences else "") + ".", "",
             "| run | workers | tokens/s | speed-up | read s | parse s | write s | model "
             "shipping s | cluster start s | same bytes as --jobs 1 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in parse:
        lines.append(f"| {r['run']} | {r['workers']} | {r['tokens_per_s']:,.0f} | "
                     f"{r['speedup']:.2f} | {r['read_s']:.2f} | {r['parse_s']:.2f} | "
                     f"{r['write_s']:.2f} | {r['model_ship_s']:.2f} | "
                     f"{r['cluster_start_s']:.2f} | {'yes' if r['identical'] else 'NO'} |")
    lines += ["", f"One epoch of iterative parameter mixing (SSG, order 1) on the first "
              f"{ipm[0]['sentences']} sentences ({ipm[0]['tokens']} tokens; "
              f"{ipm[0]['dim']:,} weights, {ipm[0]['weights_mb']:.0f} MB as float64, "
              f"{ipm[-1]['sparse_mb']:.1f} MB as the nonzero ones that travel):", "",
              "| run | epoch s | slowest shard s | speed-up | model+sentences shipping s | "
              "weights shipping s | mixing s |", "|---|---|---|---|---|---|---|"]
    for r in ipm:
        lines.append(f"| {r['run']} | {r['epoch_s']:.2f} | {r['slowest_shard_s']:.2f} | "
                     f"{r['speedup']:.2f} | {r['model_ship_s']:.2f} | "
                     f"{r['weights_ship_s']:.2f} | {r['mix_s']:.4f} |")
    lines += ["", "## Projection (Amdahl's law from the measured serial part)", "",
              *arithmetic, "",
              "Assumptions: one worker per machine, each as fast as this one's process; the "
              "network as fast as the loopback here (a 1 Gbit/s link ships ~120 MB/s, which "
              "would raise c for large weight vectors); the client reads, writes and "
              "schedules alone, so its time is the serial part."]
    table = write_result(args, "scale", "Parsing and training on a Dask cluster: measured, "
                         "then projected", {"model": str(model), "parse": parse, "ipm": ipm,
                                            "projection": projected}, lines)
    print(table.read_text())

