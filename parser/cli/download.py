"""``polyparse download`` and ``polyparse clusters``: a UD treebank fetched into the
cache, or the Brown word clusters of a language written there from spaCy's installed
lookups data."""

from __future__ import annotations

from ..checks import UsageError
from .common import add_cache_flag, add_treebank_flags, cache_dir, fetch_treebank


def add(sub) -> None:
    p = sub.add_parser("download", help="download a Universal Dependencies treebank",
                       description="Fetch a UD treebank's CoNLL-U files over HTTPS into a "
                                   "cache directory, checking SHA-256 sums.")
    p.add_argument("name", help="treebank, e.g. UD_English-EWT")
    add_treebank_flags(p)
    p.set_defaults(run=run)


def run(args) -> None:
    for path in fetch_treebank(args, args.name):
        print(path)


def add_clusters(sub) -> None:
    from polyparse.corpora import word_clusters

    p = sub.add_parser("clusters", help="Brown word clusters of a language for the tagger",
                       description="Write the Brown word clusters of a language, from "
                                   "spaCy's lookups data (installed by "
                                   f"{word_clusters.INSTALL!r}), into the cache as a paths "
                                   "file for 'polyparse train --word-clusters'; prints its "
                                   "path.")
    p.add_argument("lang", help="language code: " + ", ".join(word_clusters.SPACY_LANGUAGES))
    add_cache_flag(p)
    p.set_defaults(run=run_clusters)


def run_clusters(args) -> None:
    from polyparse.corpora import word_clusters

    if args.lang not in word_clusters.SPACY_LANGUAGES:
        raise UsageError(f"no word clusters for {args.lang!r} in spaCy's lookups data: "
                         f"choose from {', '.join(word_clusters.SPACY_LANGUAGES)}")
    print(word_clusters.spacy_word_clusters(args.lang, cache_dir(args)))
