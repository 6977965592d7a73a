"""Issue 12: the factor-graph trainers against SSG-eta, as objective-versus-time curves.

One command::

    python eval/trainers.py [--treebank tr_imst] [--order 2] [--budget 600]
                            [--trainers ssg,dlpw,hu,bcfw,extragradient]

Every trainer gets the same training data, features, pruner, ``lambda`` and wall-clock
budget (``--budget`` seconds of training; SSG-eta=1 is the reference). The common
yardstick is the relaxed primal ``P(w) = (lambda/2)||w||^2 + mean LP-relaxed slack``
(``docs/algorithms.md`` sections 4-5) at each trainer's weights after every epoch, on a
fixed subset of the training sentences (``--yardstick``); evaluating it is not counted
in the curves' seconds. Each trainer runs in a process of its own (forked after the
shared preparation), so its peak memory is its own. Writes
``eval/results/trainers_{treebank}_order{order}.{json,md,png}``: P(w) against seconds for
all trainers, each trainer's own certificate (dual value, duality gap, G) against
seconds, and a table of dev UAS/LAS with LP and with ILP decoding, seconds per epoch,
peak memory and state size per sentence.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import resource
import time
from pathlib import Path

from _common import RESULTS, single_thread, treebank, write_table

single_thread()

import numpy as np  # noqa: E402

from polyparse.decoders import make_decoder  # noqa: E402
from polyparse.learning.examples import Examples  # noqa: E402
from polyparse.learning.inference import find_constraint  # noqa: E402
from polyparse.learning.model import LinearModel  # noqa: E402
from polyparse.learning.trainers import TRAINERS, make_trainer  # noqa: E402
from polyparse.parser import training  # noqa: E402
from polyparse.parser.config import TrainConfig  # noqa: E402
from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.pipeline import Parser  # noqa: E402

CLAIMS = {
    "ssg": "SSG-eta (Martins et al. 2009): eta = 1 trains on the relaxation alone at the "
           "LP's cost per step; the reference of every comparison here.",
    "dlpw": "DLPW (Meshi et al. 2010): keeping messages across epochs makes each step far "
            "cheaper than solving the LP, and reaches the objective of subgradient "
            "training with LP inference several times faster.",
    "hu": "Hazan-Urtasun (2010): the epsilon-smoothed dual trains approximate structured "
          "SVMs by cheap closed-form message updates.",
    "bcfw": "Soft-BCFW (Meshi, Srebro, Hazan 2015): soft constraints make block Frank-Wolfe "
            "work on the LP-relaxed dual and converge much faster than the subgradient "
            "and DLPW baselines in time.",
    "extragradient": "Dual extragradient (Taskar et al. 2006): O(1/t) convergence of the gap "
                     "function with exact projections (the matrix-tree marginals in KL "
                     "geometry).",
}


def yardstick(model: LinearModel, examples: list, lp, lambda_: float,
              weights: np.ndarray) -> float:
    """``P(w)``: ``(lambda/2)||w||^2`` plus the mean LP-relaxed slack of ``examples``."""
    slack = np.mean([find_constraint(model, e, lp, weights).slack for e in examples])
    return 0.5 * lambda_ * float(weights @ weights) + float(slack)


def dev_scores(model: LinearModel, config: TrainConfig, dev, dev_input, decoder: str,
               time_limit: float | None) -> dict:
    """Dev UAS and LAS with ``decoder`` (the LP + rounding, or the ILP)."""
    parser = Parser(model, config)
    options = {"time_limit": time_limit} if time_limit else {}
    parser.use_decoder(decoder, **options)
    scores = attachment_scores(dev, parser.parse(dev_input)).all_words
    return {"uas": scores["uas"], "las": scores["las"], "fallbacks": parser.fallbacks}


def run_trainer(name: str, prepared: training.Prepared, config: TrainConfig, args,
                dev, stick: list, pipe) -> None:
    """Train ``name`` for ``args.budget`` seconds in this (forked) process; send back its
    curve and final figures."""
    model = LinearModel(prepared.model.extractor, prepared.model.labels,
                        parts=config.parts, pruner=prepared.model.pruner)
    options = {"lambda_": args.lambda_} if "lambda_" in TRAINERS[name].settable() else {}
    if name == "ssg":
        options["eta"] = 1.0
    trainer = make_trainer(name, epochs=args.max_epochs, seed=0, **options)
    decoder = make_decoder(config.decoder, config.single_root)
    lp = make_decoder("lp", config.single_root)
    examples = Examples(model, prepared.train)
    state_floats = (sum(trainer.state_size(examples.parts(i)) for i in range(len(examples)))
                    if trainer.stateful else 0)
    curve, seconds = [], 0.0
    try:
        for stats in trainer.run(examples, model, decoder):
            seconds += stats.seconds
            curve.append({"epoch": stats.epoch, "seconds": seconds,
                          "objective": stats.objective,
                          "P": yardstick(model, stick, lp, args.lambda_, model.weights),
                          **{k: float(v) for k, v in stats.extra.items()}})
            logging.info("%s epoch %d: %.1f s, P(w) %.4f, %s", name, stats.epoch, seconds,
                         curve[-1]["P"], stats.extra)
            if seconds >= args.budget:
                break
    except ValueError as error:      # e.g. an order the trainer does not support
        pipe.send({"trainer": name, "error": str(error)})
        return
    row = {"trainer": name, "epochs": len(curve), "seconds": seconds,
           "seconds_per_epoch": seconds / max(len(curve), 1),
           "final_P": curve[-1]["P"] if curve else float("nan"),
           "state_bytes_per_sentence": 8.0 * state_floats / max(len(examples), 1),
           "curve": curve}
    for decoder_name in ("lp", "ilp"):
        scores = dev_scores(model, config, dev, prepared.dev or dev, decoder_name,
                            args.time_limit)
        row.update({f"{decoder_name}_{k}": v for k, v in scores.items()})
    row["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pipe.send(row)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--treebank", default="tr_imst")
    ap.add_argument("--order", choices=["1", "2"], default="2")
    ap.add_argument("--trainers", default="ssg,dlpw,hu,bcfw,extragradient")
    ap.add_argument("--budget", type=float, default=600.0,
                    help="training seconds per trainer (evaluation not counted)")
    ap.add_argument("--max-epochs", type=int, default=100)
    ap.add_argument("--lambda", dest="lambda_", type=float, default=1e-5)
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--max-heads", type=int, default=5)
    ap.add_argument("--yardstick", type=int, default=300,
                    help="training sentences P(w) is evaluated on")
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds per sentence of ILP decoding on dev")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    train, dev = treebank(args.treebank)
    train, dev = train[:args.max_train], dev[:args.max_dev]
    config = TrainConfig(decoder="ilp" if args.order != "1" else "mst", tagger=None,
                         tokenizer=None, parts={"order": args.order},
                         pruner={"max_heads": args.max_heads})
    start = time.perf_counter()
    prepared = training.prepare(train, config, dev)
    prep_seconds = time.perf_counter() - start
    examples = Examples(prepared.model, prepared.train)
    picks = np.random.default_rng(0).choice(len(examples), min(args.yardstick, len(examples)),
                                            replace=False)
    stick = [examples[int(i)] for i in picks]
    rows = []
    context = multiprocessing.get_context("fork")
    for name in args.trainers.split(","):
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=run_trainer,
                                args=(name, prepared, config, args, dev, stick, send))
        child.start()
        rows.append(receive.recv())
        child.join()
        logging.info("%s: %s", name, {k: v for k, v in rows[-1].items() if k != "curve"})
    out = Path(args.out) if args.out else RESULTS / f"trainers_{args.treebank}_order{args.order}"
    notes = (f"{len(train)} training sentences, {len(dev)} dev, order {args.order}, at most "
             f"{args.max_heads} candidate heads per word, lambda {args.lambda_}, a budget of "
             f"{args.budget:.0f} s of training per trainer; P(w) on {len(stick)} training "
             f"sentences; preparation (features, pruner) {prep_seconds:.0f} s, shared.\n\n"
             + "\n".join(f"- **{r['trainer']}**: claim: {CLAIMS.get(r['trainer'], '')}"
                         + (f" Not run: {r['error']}" if "error" in r else "")
                         for r in rows))
    table = [r for r in rows if "error" not in r]
    write_table(out, f"Trainers on {args.treebank}, order {args.order}", table,
                [("trainer", "trainer"), ("epochs", "epochs"),
                 ("seconds_per_epoch", "s/epoch"), ("final_P", "final P(w)"),
                 ("lp_uas", "dev UAS (LP)"), ("lp_las", "dev LAS (LP)"),
                 ("ilp_uas", "dev UAS (ILP)"), ("ilp_las", "dev LAS (ILP)"),
                 ("peak_mib", "peak MiB"),
                 ("state_bytes_per_sentence", "state bytes/sentence")], notes)
    plot(table, out)


def plot(rows: list[dict], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for row in rows:
        seconds = [c["seconds"] for c in row["curve"]]
        left.plot(seconds, [c["P"] for c in row["curve"]], marker="o", label=row["trainer"])
        for key in ("duality_gap", "dual_value", "G"):
            values = [c[key] for c in row["curve"] if key in c]
            if values:
                right.plot(seconds[:len(values)], values, marker=".",
                           label=f"{row['trainer']}: {key}")
    left.set(xlabel="training seconds", ylabel="P(w) (relaxed primal)", yscale="log")
    right.set(xlabel="training seconds", ylabel="certificate", yscale="symlog")
    left.legend()
    right.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=110)


if __name__ == "__main__":
    main()
