"""``polyparse download`` and ``polyparse download-clusters``: a UD treebank, or the
Brown word clusters of a language, fetched into the cache."""

from __future__ import annotations

import sys

from ..checks import UsageError
from .common import add_cache_flag, cache_dir

def add(sub) -> None:
    from polyparse.corpora import download

    p = sub.add_parser("download", help="download a Universal Dependencies treebank",
                       description="Fetch a UD treebank's CoNLL-U files over HTTPS into a "
                                   "cache directory, checking SHA-256 sums.")
    p.add_argument("name", help="treebank, e.g. UD_English-EWT")
    add_cache_flag(p)
    p.add_argument("--base-url", default=download.DEFAULT_BASE_URL,
                   help="where treebanks are served from")
    p.set_defaults(run=run)


def run(args) -> None:
    from polyparse.corpora import download

    for path in download.download_treebank(args.name, cache_dir(args), base_url=args.base_url,
                                           progress=sys.stderr.isatty()):
        print(path)


def add_clusters(sub) -> None:
    from polyparse.corpora import word_clusters

    p = sub.add_parser("download-clusters", help="download Brown word clusters for the tagger",
                       description="Fetch the Brown word clusters of a language from spaCy's "
                                   "lookups data (PyPI, about 100 MB, SHA-256 checked) into "
                                   "the cache as a paths file, for 'polyparse train "
                                   "--word-clusters'; prints its path.")
    p.add_argument("lang", help="language code: " + ", ".join(word_clusters.SPACY_LANGUAGES)
                   + " (those with clusters in spaCy's lookups data)")
    add_cache_flag(p)
    p.add_argument("--url", default=word_clusters.SPACY_LOOKUPS_URL,
                   help="where spaCy's lookups data wheel is served from")
    p.set_defaults(run=run_clusters)


def run_clusters(args) -> None:
    from polyparse.corpora import word_clusters

    if (args.url == word_clusters.SPACY_LOOKUPS_URL
            and args.lang not in word_clusters.SPACY_LANGUAGES):
        raise UsageError(f"no word clusters for {args.lang!r} in spaCy's lookups data: "
                         f"choose from {', '.join(word_clusters.SPACY_LANGUAGES)}")
    print(word_clusters.fetch_spacy_clusters(args.lang, cache_dir(args), url=args.url,
                                             progress=sys.stderr.isatty()))

