"""Issue 12: the factor-graph trainers against SSG-eta, as objective-versus-time curves.

One command::

    python -m eval run trainers [--treebank tr_imst] [--order 2] [--budget SECONDS]
                            [--trainers ssg dlpw hu bcfw bcfw:pairwise=true extragradient]
                            [--train-decoder ilp|default|NAME] [--out NAME]

Every trainer gets the same training data, features, pruner, ``lambda`` and budget of
training CPU seconds: by default what the first trainer (the reference, SSG-eta=1) takes
for ``--reference-epochs`` epochs (issue 12: "the same budget as SSG-eta=1's 10
epochs"). The common
yardstick is the relaxed primal ``P(w) = (lambda/2)||w||^2 + mean LP-relaxed slack``
(``docs/algorithms.md`` sections 4-5) at each trainer's weights after every epoch, on a
fixed subset of the training sentences (``--yardstick``); evaluating it is not counted
in the curves' seconds. Each trainer runs in a process of its own (forked after the
shared preparation), so its peak memory is its own. Writes
``trainers_{treebank}_order{order}.{json,md,png}`` under ``--results``: P(w) against seconds for
all trainers, each trainer's own certificate (dual value, duality gap, G) against
seconds, and a table of dev UAS/LAS with LP and with ILP decoding, seconds per epoch,
peak memory and state size per sentence. With ``--dev-every K`` the curve also holds dev
UAS (LP) every K epochs, drawn against P(w) in a third panel; ``--replot --compare RUN``
draws several runs' curves in one figure. The table is written again after every epoch
(atomically), the running trainer's row marked *running*, so a run cut short keeps its
curve; ``--append`` drops such rows.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import resource
import time
from pathlib import Path

from ._common import arguments, pyplot, single_thread, treebank, write_table

single_thread()

import numpy as np  # noqa: E402

from polyparse.decoders import make_decoder  # noqa: E402
from polyparse.learning.examples import Examples  # noqa: E402
from polyparse.learning.inference import find_constraint  # noqa: E402
from polyparse.learning.model import LinearModel  # noqa: E402
from polyparse.learning.trainers import TRAINERS, make_trainer  # noqa: E402
from polyparse.parser import training  # noqa: E402
from polyparse.parser.config import (PartsConfig, PrunerConfig, TrainConfig,  # noqa: E402
                                     default_decoder)
from polyparse.parser.evaluate import attachment_scores  # noqa: E402
from polyparse.parser.pipeline import Parser  # noqa: E402

SMOKE = ["--treebank", "sample", "--order", "1", "--trainers", "ssg", "perceptron",
         "--reference-epochs", "1", "--max-epochs", "1", "--max-train", "20", "--max-dev", "5",
         "--yardstick", "5"]
"""The smoke run: SSG and the perceptron at order 1, one epoch on 20 sample sentences."""

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
    "perceptron": "Averaged perceptron (Collins 2002): no objective of its own; the "
                  "order-1 baseline of the extragradient figure.",
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


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"bcfw:pairwise=true,rho=0.1"`` -> ``("bcfw", {"pairwise": True, "rho": 0.1})``."""
    name, _, given = spec.partition(":")
    options = {}
    for item in filter(None, given.split(",")):
        key, _, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return name, options


def run_trainer(spec: str, prepared: training.Prepared, config: TrainConfig, args,
                dev, stick: list, budget: float, epochs: int, pipe) -> None:
    """Train ``spec`` (a trainer's name, ``:`` and its options, :func:`parse_spec`) for
    ``budget`` CPU seconds or ``epochs`` epochs in this (forked)
    process; send back its curve and final figures. The clock is the process's CPU time
    (one thread: ``single_thread``), which other work on the machine does not stretch
    as it does the wall time (also recorded)."""
    model = LinearModel(prepared.model.extractor, prepared.model.labels,
                        parts=config.parts, pruner=prepared.model.pruner)
    name, options = parse_spec(spec)
    if "lambda_" in TRAINERS[name].settable():
        options.setdefault("lambda_", args.lambda_)
    if name == "ssg":       # SSG-eta=1 unless the spec says otherwise (at order 1,
        options.setdefault("eta", 1.0)   # eta=0's exact MST is the LP's optimum, cheaper)
    trainer = make_trainer(name, epochs=epochs, seed=0, **options)
    decoder = make_decoder(config.decoder, config.single_root)
    lp = make_decoder("lp", config.single_root)
    examples = Examples(model, prepared.train)
    curve, seconds, wall = [], 0.0, 0.0
    runner = trainer.run(examples, model, decoder)
    try:
        while True:
            cpu, start = time.process_time(), time.perf_counter()
            stats = next(runner, None)
            if stats is None:
                break
            seconds += time.process_time() - cpu
            wall += time.perf_counter() - start
            curve.append({"epoch": stats.epoch, "seconds": seconds, "wall": wall,
                          "objective": stats.objective,
                          "P": yardstick(model, stick, lp, args.lambda_, model.weights),
                          **{k: float(v) for k, v in stats.extra.items()}})
            if args.dev_every and stats.epoch % args.dev_every == 0:
                curve[-1]["dev_uas"] = dev_scores(model, config, dev, prepared.dev or dev,
                                                  "lp", args.time_limit)["uas"]
            logging.info("%s epoch %d: %s", spec, stats.epoch, curve[-1])
            pipe.send({"point": curve[-1]})
            if seconds >= budget:
                break
    except ValueError as error:      # e.g. an order the trainer does not support
        pipe.send({"trainer": spec, "error": str(error)})
        return
    state_floats = (sum(trainer.state_size(examples.parts(i)) for i in range(len(examples)))
                    if trainer.stateful else 0)       # after the run: bcfw knows its labels
    row = {**curve_row(spec, curve),
           "state_bytes_per_sentence": 8.0 * state_floats / max(len(examples), 1)}
    for decoder_name in ("lp", "ilp"):
        scores = dev_scores(model, config, dev, prepared.dev or dev, decoder_name,
                            args.time_limit)
        row.update({f"{decoder_name}_{k}": v for k, v in scores.items()})
    row["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.save_models:        # for eval/weight_blocks.py
        Parser(model, config).save(Path(args.save_models) / f"{spec.replace(':', '_')}.npz")
    pipe.send(row)


def curve_row(spec: str, curve: list[dict]) -> dict:
    """A trainer's row as far as its ``curve`` (one point per epoch) goes."""
    last = curve[-1] if curve else {"seconds": 0.0, "wall": 0.0, "P": float("nan")}
    return {"trainer": spec, "epochs": len(curve), "seconds": last["seconds"],
            "wall": last["wall"], "seconds_per_epoch": last["seconds"] / max(len(curve), 1),
            "final_P": last["P"], "curve": curve}


def main(argv: list[str] | None = None) -> None:
    ap = arguments(__name__)
    ap.add_argument("--treebank", default="tr_imst")
    ap.add_argument("--order", choices=["1", "2"], default="2")
    ap.add_argument("--trainers", nargs="+", default=["ssg", "dlpw", "hu", "bcfw",
                                                      "extragradient"],
                    help="trainers, each NAME or NAME:KEY=VALUE,...; the first is the "
                         "reference")
    ap.add_argument("--budget", type=float, default=None,
                    help="training CPU seconds per trainer (evaluation not counted); "
                         "default: what the first trainer takes for --reference-epochs")
    ap.add_argument("--reference-epochs", type=int, default=10)
    ap.add_argument("--max-epochs", type=int, default=100)
    ap.add_argument("--lambda", dest="lambda_", type=float, default=1e-5)
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--max-dev", type=int, default=None)
    ap.add_argument("--max-heads", type=int, default=5)
    ap.add_argument("--train-decoder", default="ilp",
                    help="the trainers' decoder at order 2 (SSG-eta=1's relaxed inference "
                         "follows it: AD3 for ad3 and ad3-exact, HiGHS's LP otherwise); "
                         "'default': the parser's default (ad3-exact); order 1 uses mst")
    ap.add_argument("--yardstick", type=int, default=300,
                    help="training sentences P(w) is evaluated on")
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds per sentence of ILP decoding on dev")
    ap.add_argument("--dev-every", type=int, default=0,
                    help="also parse dev (LP) every K epochs, outside the budget's clock, "
                         "into the curve of OUT.json (dev_uas); 0: only after training")
    ap.add_argument("--out", default=None,
                    help="result name under --results (default trainers_TREEBANK_orderORDER)")
    ap.add_argument("--save-models", metavar="DIR", default=None,
                    help="also write each trainer's model file into DIR (an existing "
                         "folder), named after its spec, for eval/weight_blocks.py")
    ap.add_argument("--append", action="store_true",
                    help="add --trainers to an earlier run's rows in OUT.json (its first row "
                         "stays the reference and sets the budget); same data and options")
    ap.add_argument("--replot", action="store_true",
                    help="only draw OUT.png again from OUT.json")
    ap.add_argument("--compare", nargs="+", default=[], metavar="RUN",
                    help="with --replot: draw the rows of these earlier runs' RUN.json "
                         "in the same figure")
    args = ap.parse_args(argv)
    if args.save_models and not Path(args.save_models).is_dir():
        ap.error(f"--save-models: {args.save_models} is not a folder")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = args.results / (args.out or f"trainers_{args.treebank}_order{args.order}")
    if args.replot:
        runs = [out.with_suffix(".json")] + [Path(p).with_suffix(".json") for p in args.compare]
        plot([r for run in runs for r in json.loads(run.read_text())["rows"]
              if "error" not in r], out)
        return
    train, dev = treebank(args.ud, args.treebank, args.max_train, args.max_dev)
    decoder = args.train_decoder if args.order != "1" else "mst"
    if decoder == "default":
        decoder = default_decoder(PartsConfig(args.order))
    config = TrainConfig(decoder=decoder, tagger=None,
                         tokenizer=None, parts=PartsConfig(args.order),
                         pruner=PrunerConfig(max_heads=args.max_heads))
    start = time.perf_counter()
    prepared = training.prepare(train, config, dev)
    prep_seconds = time.perf_counter() - start
    examples = Examples(prepared.model, prepared.train)
    picks = np.random.default_rng(0).choice(len(examples), min(args.yardstick, len(examples)),
                                            replace=False)
    stick = [examples[int(i)] for i in picks]
    rows = []
    context = multiprocessing.get_context("fork")
    names = list(args.trainers)
    budget = args.budget

    def run(name, budget, epochs):
        """Train ``name`` in a child process; the table is written again after each of
        its epochs, with the trainer's row so far, so that a run cut short leaves its
        curve."""
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=run_trainer, args=(
            name, prepared, config, args, dev, stick, budget, epochs, send))
        load = os.getloadavg()[0]
        shown_budget = budget if np.isfinite(budget) else "(reference)"
        child.start()
        curve = []
        while "point" in (message := receive.recv()):
            curve.append(message["point"])
            publish(rows + [{**curve_row(name, curve), "running": True,
                             "budget": shown_budget, "load": f"{load:.1f} / running"}])
        row = message
        child.join()
        row["load"] = f"{load:.1f} / {os.getloadavg()[0]:.1f}"
        row["budget"] = shown_budget
        logging.info("%s: %s", name, {k: v for k, v in row.items() if k != "curve"})
        return row

    def publish(rows):
        """Write OUT.{json,md,png} for ``rows`` (a running trainer's row included)."""
        reference = rows[0]
        for row in rows:
            if "curve" in row:
                reached = [c["seconds"] for c in row["curve"]
                           if c["P"] <= reference["final_P"]]
                row["reach_s"] = reached[0] if reached else float("nan")
                row["reach_x"] = row["reach_s"] / reference["seconds"]
                if "lp_uas" in row and "lp_uas" in reference:
                    row["uas_vs_reference"] = row["lp_uas"] - reference["lp_uas"]
        notes = (f"Trainers' decoder: {config.decoder}. "
                 f"{len(train)} training sentences, {len(dev)} dev, order {args.order}, at "
                 f"most {args.max_heads} candidate heads per word, lambda {args.lambda_}; "
                 f"budget: CPU seconds of training per trainer, by default the reference "
                 f"{reference['trainer']}'s {reference['epochs']} epochs "
                 f"({reference['seconds']:.0f} s), else as in the budget column; P(w) on "
                 f"{len(stick)} training sentences; preparation (features, pruner) "
                 f"{prep_seconds:.0f} s, shared. *reaches*: CPU seconds until P(w) is at most "
                 f"the reference's final P(w) (checked after each epoch), and that as a "
                 f"multiple of the reference's time; UAS vs reference: dev UAS (LP) minus "
                 f"the reference's; load: the machine's 1-minute load average before / after "
                 f"the trainer's run (2 cores; *running*: the run had not ended, its row is "
                 f"its last epoch's, without dev figures).\n\n"
                 + "\n".join(f"- **{r['trainer']}**: claim: "
                             f"{CLAIMS.get(parse_spec(r['trainer'])[0], '')}"
                             + (f" Not run: {r['error']}" if "error" in r else "")
                             for r in rows))
        table = [r for r in rows if "error" not in r]
        write_table(args, out.name, f"Trainers on {args.treebank}, order {args.order}", table,
                    [("trainer", "trainer"), ("budget", "budget (CPU s)"),
                     ("epochs", "epochs"), ("seconds_per_epoch", "CPU s/epoch"),
                     ("wall", "wall s"), ("final_P", "final P(w)"),
                     ("reach_s", "reaches (CPU s)"), ("reach_x", "reaches (x reference)"),
                     ("uas_vs_reference", "UAS vs reference"),
                     ("lp_uas", "dev UAS (LP)"), ("lp_las", "dev LAS (LP)"),
                     ("ilp_uas", "dev UAS (ILP)"), ("ilp_las", "dev LAS (ILP)"),
                     ("peak_mib", "peak MiB"),
                     ("state_bytes_per_sentence", "state bytes/sentence"), ("load", "load")],
                    notes)
        plot(table, out)

    if args.append:            # an earlier run's rows: its first is the reference
        rows = [r for r in json.loads(out.with_suffix(".json").read_text())["rows"]
                if r["trainer"] not in names[1:] and not r.get("running")]
        names = [n for n in names if n != rows[0]["trainer"]]
        budget = rows[0]["seconds"] if budget is None else budget
        rows[0].setdefault("budget", "(reference)")   # rows written before budgets
        for row in rows[1:]:                           # were recorded per row
            row.setdefault("budget", rows[0]["seconds"])
    elif budget is None:       # the reference's epochs set the budget of the others
        rows.append(run(names[0], float("inf"), args.reference_epochs))
        publish(rows)
        budget = rows[0]["seconds"]
        names = names[1:]
    for name in names:
        rows.append(run(name, budget, args.max_epochs))
        publish(rows)


def plot(rows: list[dict], out: Path) -> None:
    plt = pyplot()
    if plt is None:
        return

    def dev_points(row):
        """(P(w), dev UAS) along the curve (--dev-every) and at the end."""
        points = [(c["P"], c["dev_uas"]) for c in row["curve"] if "dev_uas" in c]
        return points + ([(row["final_P"], row["lp_uas"])] if "lp_uas" in row else [])

    traced = [row for row in rows if dev_points(row)]
    fig, axes = plt.subplots(1, 3 if traced else 2, figsize=(18 if traced else 12, 4.5))
    left, right = axes[:2]
    for i, row in enumerate(rows):      # one colour per trainer in every panel
        color = f"C{i % 10}"
        points = dev_points(row)
        if points:           # how dev UAS moves with the objective
            axes[2].plot(*zip(*points), marker="o", color=color, label=row["trainer"])
        seconds = [c["seconds"] for c in row["curve"]]
        left.plot(seconds, [c["P"] for c in row["curve"]], marker="o", color=color,
                  label=row["trainer"])
        for key, style in (("duality_gap", "-"), ("dual_value", "--"), ("G", ":")):
            values = [c[key] for c in row["curve"] if key in c]
            if values:
                right.plot(seconds[:len(values)], values, style, marker=".", color=color,
                           label=f"{row['trainer']}: {key}")
    if traced:
        axes[2].set(xlabel="P(w) (relaxed primal)", ylabel="dev UAS (LP)", xscale="log")
        axes[2].invert_xaxis()
        axes[2].legend(fontsize="small")
    left.set(xlabel="training CPU seconds", ylabel="P(w) (relaxed primal)", yscale="log")
    right.set(xlabel="training CPU seconds", ylabel="certificate", yscale="symlog")
    left.legend()
    right.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=110)

