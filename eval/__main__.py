"""``python -m eval list``: every benchmark's name and what it measures.
``python -m eval run NAME [--smoke] [ARGS...]``: run benchmark NAME with its arguments
(``python -m eval run NAME --help`` lists them); ``--smoke`` runs it on the sample
treebank in seconds with its ``SMOKE`` arguments, its tables written into a temporary
folder and printed."""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

from . import benchmark, description, names


def smoke(name: str, results: Path, extra: list[str] = ()) -> list[Path]:
    """Run benchmark ``name`` with its ``SMOKE`` arguments (``{results}`` in them stands
    for ``results``), then ``extra``, its tables into ``results``; returns the Markdown
    tables it wrote."""
    module = benchmark(name)
    given = [arg.replace("{results}", str(results)) for arg in module.SMOKE]
    module.main([*given, *extra, "--results", str(results)])
    return sorted(Path(results).rglob("*.md"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    commands = ap.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="name and describe every benchmark")
    run = commands.add_parser("run", add_help=False,
                              help="run a benchmark: python -m eval run NAME [--smoke] [ARGS]")
    run.add_argument("name", choices=names(), metavar="NAME")
    run.add_argument("--smoke", action="store_true",
                     help="on the sample treebank in seconds, tables into a temporary folder")
    args, rest = ap.parse_known_args(argv)
    if args.command == "list":
        if rest:
            ap.error(f"list takes no arguments: {' '.join(rest)}")
        width = max(map(len, names()))
        for name in names():
            lines = textwrap.wrap(description(name), 100 - width - 2) or [""]
            print(f"{name:<{width}}  {lines[0]}")
            for line in lines[1:]:
                print(" " * (width + 2) + line)
        return 0
    if not args.smoke:
        benchmark(args.name).main(rest)
        return 0
    with tempfile.TemporaryDirectory(prefix=f"eval-{args.name}-") as results:
        for table in smoke(args.name, Path(results), rest):
            print(table.read_text())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:         # the reader went away (python -m eval list | head)
        sys.stderr.close()          # nothing left to say, and no traceback saying it
        sys.exit(1)
