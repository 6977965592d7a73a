"""Checks of a command line that come before any work.

A command names its files by option: ``inputs`` it reads (``{"--train": path}``) and
``outputs`` it writes (``{"--model": path}``; a folder output, ``draw --svg-dir``, is
replaced as a whole). :func:`check_files` refuses, in this order and before any file is
read: an output that cannot be written, an output that is one of the inputs (or of the
other outputs) -- the same file by name, through a symbolic link or as another hard link
-- or a folder output holding an input, standard output redirected into an input, and an
input that cannot be opened. Every refusal is a :class:`UsageError` naming the options.
"""

from __future__ import annotations

import itertools
import os
import stat
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from polyparse.corpora.files import check_writable
from polyparse.decoders import Decoder

from . import model_file
from .config import TrainConfig, config_decoder
from .parser_file import stored_config

Files = dict[str, "str | os.PathLike | None"]
"""Paths by the option that gives them; None for an option not given."""


class UsageError(Exception):
    """A command line that cannot be carried out, refused before any work (the message
    is shown as is)."""


def check_files(inputs: Files, outputs: Files, *, folders: dict[str, str] | None = None
                ) -> None:
    """Refuse, before any work, the files of a command (see the module's docstring).

    ``folders`` maps a folder output's option to the regular expression of the names of
    the files it holds (:func:`~corpora.files.check_writable`)."""
    folders = folders or {}
    inputs = {option: Path(path) for option, path in inputs.items() if path is not None}
    outputs = {option: Path(path) for option, path in outputs.items() if path is not None}
    for option, path in outputs.items():
        check_writable(path, folder=folders.get(option))
    for (first, a), (second, b) in itertools.combinations(outputs.items(), 2):
        if same_file(a, b):
            raise UsageError(f"{first} {a} and {second} {b} are the same file: give each "
                             "output its own file")
    for (out_option, out), (in_option, source) in itertools.product(outputs.items(),
                                                                    inputs.items()):
        if same_file(out, source) or (out_option in folders and _inside(source, out)):
            where = "holds" if out_option in folders else "is the same file as"
            raise UsageError(f"{out_option} {out} {where} {in_option} {source}: polyparse "
                             f"never writes over one of its inputs; give {out_option} "
                             "another path")
    check_stdout(inputs)
    for option, path in inputs.items():
        check_readable(option, path)


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name the same file: the same inode (symbolic and hard
    links) when both exist, else the same path once links are resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:                            # one of them does not exist (yet)
        return a.resolve() == b.resolve()


def _inside(path: Path, folder: Path) -> bool:
    return folder.resolve() in path.resolve().parents


def check_stdout(inputs: dict[str, Path]) -> None:
    """Refuse standard output redirected into an input file (``> in.conllu`` has
    emptied it already; ``>> in.conllu`` would read what is written)."""
    try:
        out = os.fstat(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):     # not a file (a pipe in tests, ...)
        return
    if not stat.S_ISREG(out.st_mode):
        return
    for option, path in inputs.items():
        try:
            source = os.stat(path)
        except OSError:
            continue
        if (source.st_dev, source.st_ino) == (out.st_dev, out.st_ino):
            raise UsageError(f"standard output is redirected into {option} {path}: polyparse "
                             "never writes over one of its inputs; redirect it to another "
                             "file (or give --output)")


def check_readable(option: str, path: Path) -> None:
    """Refuse an input that cannot be opened for reading (missing, a folder, no
    permission), naming its option."""
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        reason = error.strerror or str(error)
        raise UsageError(f"{path}: cannot read {option}: {reason}") from None


def at_least(minimum: int, **options: int | float | None) -> None:
    """Refuse an option given below ``minimum`` (keyword ``max_words`` is
    ``--max-words``)."""
    for name, value in options.items():
        if value is not None and value < minimum:
            raise UsageError(f"--{name.replace('_', '-')} must be at least {minimum}, "
                             f"not {value}")


@dataclass(frozen=True)
class ModelSettings:
    """What a model file says of its model, read without its arrays
    (:func:`~parser.model_file.load_metadata`): enough to check a command's options
    against it before the model is loaded."""

    path: str
    config: TrainConfig
    pruned: bool
    """Whether it has a first-order pruner (whose marginals give a higher-order model's
    head probabilities)."""
    components: frozenset[str]
    """Which of ``tokenizer``, ``tagger`` and ``lemmatizer`` it has."""

    @classmethod
    def read(cls, path: str | os.PathLike) -> "ModelSettings":
        meta = model_file.load_metadata(path)
        config = stored_config(meta, path)
        return cls(os.fspath(path), config, bool(meta.get("pruner")),
                   frozenset(name for name in ("tokenizer", "tagger", "lemmatizer")
                             if meta.get(name)))

    def decoder(self, name: str | None, options: dict) -> Decoder:
        """The decoder ``name`` (default: the model's) with ``options`` added to the
        model's own when it is the model's, as :meth:`Parser.use_decoder` makes it; a
        :class:`UsageError` for an unknown decoder, a value it refuses or one that
        cannot decode the model's parts."""
        name = name or self.config.decoder
        base = self.config.decoder_options if name == self.config.decoder else {}
        try:
            return config_decoder(replace(self.config, decoder=name,
                                          decoder_options={**base, **options}))
        except ValueError as error:
            raise UsageError(f"{self.path}: {error}") from None


def check_solver(name: str | None) -> None:
    """Refuse an ILP ``--solver`` that PuLP does not know or cannot find here (HiGHS
    is always there): without this, a bad name would only fail at the first sentence
    whose LP is fractional."""
    if name is None or name.lower() == "highs":
        return
    from polyparse.decoders.pulp_backend import SOLVER_NAMES, pulp_solver

    try:
        available = pulp_solver(name).available()
    except Exception:                       # PuLP's PulpSolverError, or its own bugs
        raise UsageError(f"--solver {name}: not a solver PuLP knows (highs, "
                         f"{', '.join(SOLVER_NAMES)} or a PuLP solver class name)") from None
    if not available:
        raise UsageError(f"--solver {name}: PuLP finds no {name} solver installed here")
