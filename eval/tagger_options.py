"""Issue 43 item 3: one of the tagger's options (``--option``: ``endings``, the features
of a word's ending after its stem; ``own_upos``, the word's UPOS conjoined with its
suffixes in the later layers; ``bundles``, XPOS and FEATS held to the treebank's
combinations; ``feats``, one FEATS layer or one per feature), off and on or at each of
its values, on every treebank.

One command::

    python -m eval run tagger_options --option NAME [--treebanks ...] [--max-train N]
                                      [--epochs 8] [--no-clusters] [--out tagger_NAME]

For each treebank (train -> dev, or the last fifth of train held out where there is no
dev split: :func:`eval._common.split`), fits the tagger of the treebank's recipe
(``parser/recipes.py``: its :class:`~parser.text.TaggerOptions`; spaCy's word clusters
where the language has them, unless ``--no-clusters``) twice, with the option off and
on (or at its two values), all else equal (seed 0), and tags the held-out sentences
(gold tokens). With each tagger, a
lemmatizer is fitted on the training sentences with their gold tags and lemmatizes the
held-out ones with the predicted tags (the lemmatizer scores rules on the tagger's
features, the ending features among them when the tagger has them). Reports UPOS, XPOS
and FEATS accuracy (FEATS as sets of ``Name=Value`` pairs), all three right, UPOS on
words unseen in training, lemma accuracy and the tagger's fitting time, and the
difference the option makes. Writes ``OUT.json`` and ``OUT.md`` under
``--results``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, fields, replace

from ._common import (arguments, require_treebanks, single_thread, split, treebanks_argument,
                      word_clusters, write_table)

single_thread()   # one core, as the figures are stated

from polyparse.corpora.word_clusters import read_word_clusters  # noqa: E402
from polyparse.parser.recipes import language, recipe_for  # noqa: E402
from polyparse.parser.text import Lemmatizer, Tagger, TaggerOptions  # noqa: E402
from polyparse.parser.text.tagger import CHOICES  # noqa: E402

from .lemmatizer_bench import accuracy as lemma_accuracy  # noqa: E402
from .tagger_bench import accuracy as tag_accuracy  # noqa: E402

TREEBANKS = ("da_ddt", "en_ewt", "en_gum", "nl_alpino", "sl_ssj", "sv_talbanken", "tr_imst")
SCORES = ("upos", "xpos", "feats", "all", "lemmas")

SMOKE = ["--option", "own_upos", "--treebanks", "sample", "--max-train", "40", "--epochs", "1",
         "--no-clusters"]
"""The smoke run: one epoch on 40 sentences of the sample."""

OPTIONS = {**{f.name: (False, True) for f in fields(TaggerOptions) if f.type in (bool, "bool")},
           **CHOICES}
"""The tagger's on-off options and those that choose a layout of its layers, with the
values compared."""

logger = logging.getLogger("tagger_options")


def run(args, name: str, clusters: str | None) -> list[dict]:
    """The rows of treebank ``name``: its recipe's tagger at each value of
    ``args.option``."""
    train, held_out, how = split(args.ud, name, require_tree=False)
    train = train[:args.max_train]
    table = read_word_clusters(clusters) if clusters else None
    recipe = recipe_for(language(name))[1].tagger
    known = {form for s in train for form in s.forms[1:]}
    rows = []
    for value in OPTIONS[args.option]:
        start = time.process_time()
        tagger = Tagger(replace(recipe, **{args.option: value}), clusters=table).fit(
            train, epochs=args.epochs, seed=0)
        fit_seconds = time.process_time() - start
        tagged = tagger.tag(held_out)
        lemmatizer = Lemmatizer().fit(train, tagger, epochs=args.epochs, seed=0)
        tags = tag_accuracy(held_out, [(s.upos, s.xpos, s.feats) for s in tagged], known)
        lemmas = lemma_accuracy(held_out, lemmatizer.predict(tagged, tagger), known)
        rows.append({"treebank": name, "split": how,
                     "recipe": ", ".join(f"{k}={v}" for k, v in asdict(recipe).items()
                                         if k != args.option and v != getattr(TaggerOptions(), k))
                     or "-", "clusters": "spaCy" if clusters else "-",
                     "option": {False: "off", True: "on"}.get(value, value),
                     **{key: tags[key] for key in SCORES[:4]}, "lemmas": lemmas["all"],
                     "unseen_upos": tags["unseen_upos"], "unseen_share": tags["unseen_share"],
                     "fit_seconds": fit_seconds})
        logger.info("%s %s=%s: %s", name, args.option, value, rows[-1])
    rows[1]["gain"] = " / ".join(f"{rows[1][key] - rows[0][key]:+.2f}" for key in SCORES)
    return rows


COLUMNS = [("treebank", "treebank"), ("split", "split"), ("recipe", "recipe tagger"),
           ("clusters", "clusters"), ("option", "option"), ("upos", "UPOS"),
           ("xpos", "XPOS"), ("feats", "FEATS"), ("all", "all"), ("lemmas", "lemmas"),
           ("unseen_upos", "unseen UPOS"), ("unseen_share", "unseen %"),
           ("fit_seconds", "fit (s)"), ("gain", "gain UPOS / XPOS / FEATS / all / lemmas")]
EXPLAINED = {"endings": "the ending features (`TaggerOptions.endings`: the word's ending "
                        "after the longest training lemma it starts with, and its suffixes "
                        "of 7-9 characters)",
             "own_upos": "the word's own UPOS in the layers after the first, conjoined "
                         "with its form, suffixes and ending features "
                         "(`TaggerOptions.own_upos`)",
             "bundles": "XPOS and FEATS held to the combinations seen in training with "
                        "the word's UPOS (`TaggerOptions.bundles`)",
             "feats": "one FEATS layer (`whole`) and one layer per feature name (`split`)",
             "xpos": "UPOS and XPOS as two layers (`separate`) and one (`joint`)"}
"""What each option is, for the table's notes."""


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__name__)
    parser.add_argument("--option", required=True, choices=list(OPTIONS),
                        help="the TaggerOptions field turned off and on, or set to each of "
                             "its choices")
    parser.add_argument("--out", default=None,
                        help="result name under --results (default tagger_OPTION)")
    treebanks_argument(parser, TREEBANKS)
    parser.add_argument("--max-train", type=int, default=None, metavar="N",
                        help="the first N training sentences (default all)")
    parser.add_argument("--epochs", type=int, default=8,
                        help="tagger and lemmatizer epochs (default 8, the tagger's)")
    parser.add_argument("--no-clusters", action="store_true", help="no word clusters")
    args = parser.parse_args(argv)
    args.out = args.out or f"tagger_{args.option}"
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    require_treebanks(parser, args.ud, args.treebanks)
    rows = [row for name in args.treebanks
            for row in run(args, name, None if args.no_clusters else word_clusters(name))]
    notes = ("Accuracy (%) on held-out sentences with gold tokens. The tagger of each "
             "treebank's recipe (*recipe tagger*: its options other than the plain defaults; "
             "spaCy's word clusters where the language has them), with "
             + EXPLAINED.get(args.option, f"`TaggerOptions.{args.option}`")
             + (" off and on" if OPTIONS[args.option] == (False, True) else "")
             + ", all else equal, seed 0. FEATS compared as sets of "
             "`Name=Value` pairs; *all*: UPOS, XPOS and FEATS right; *lemmas*: a "
             "lemmatizer fitted on the gold tags of the training sentences, given the "
             "predicted tags (a gold `_` counts as right); *unseen UPOS*: UPOS on words not "
             "in the training data (*unseen %* of the held-out words); fit: CPU seconds of "
             "`Tagger.fit`; *gain*: the second row minus the first.")
    table = write_table(args, args.out, f"Tagger option {args.option} (issue 43, item 3)",
                        rows, COLUMNS, notes)
    print(table.read_text())
    return 0
