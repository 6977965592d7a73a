"""The README's two set-up commands, run as a newcomer runs them: on a fresh clone, in a
fresh virtual environment, in either order, then ``polyparse parse`` once more.

This is the regression test of issue 11's first report: ``pip install .`` followed by
``pip install -e '.[test]'`` left numba cache folders in ``site-packages`` that shadowed
the editable install, and every later ``polyparse`` command failed to import.

It installs the package and its dependencies twice and trains on the sample, so it takes
minutes: it is marked ``readme`` and left out of the default run; ``.ci/run`` runs it
after the suite (``python -m pytest -q -m readme``). The test command's own
``python -m pytest -q`` is run on one small test file, not the whole suite again.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.readme

SUITE = "python -m pytest -q"
ONE_TEST_FILE = "python -m pytest -q -p no:cacheprovider tests/test_parts.py"


def setup_commands() -> tuple[str, str]:
    """The two shell commands of the README's "Set up" section: (main job, tests)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)
    assert len(commands) == 2, "the README's Set up section holds exactly two commands"
    main_job, tests = commands
    assert tests.endswith(SUITE), tests
    return main_job, tests[: -len(SUITE)] + ONE_TEST_FILE


def fresh_clone_and_venv(tmp_path: Path) -> dict:
    """A clone of the committed repository and a new virtual environment; returns the
    environment in which the venv is active (as ``. v/bin/activate`` makes it)."""
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the git repository to clone")
    clone, venv = tmp_path / "clone", tmp_path / "venv"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
               POLYPARSE_CACHE=str(tmp_path / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("POLYPARSE_REHEARSE", None)     # a newcomer's first run rehearses
    return {"cwd": clone, "env": env}


def run(command: str, where: dict) -> None:
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, **where)
    assert result.returncode == 0, (f"{command}\nexit {result.returncode}\n"
                                    f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


@pytest.mark.parametrize("order", ["main job first", "tests first"])
def test_both_readme_commands_leave_a_working_cli(order, tmp_path):
    main_job, tests = setup_commands()
    where = fresh_clone_and_venv(tmp_path)
    for command in ((main_job, tests) if order == "main job first" else (tests, main_job)):
        run(command, where)
    # The CLI still works afterwards, also from outside the clone.
    parse = ("polyparse parse --model sample.npz --text 'The dog barked at the cat.' "
             "--output parsed.conllu")
    run(parse, where)
    words = [line for line in (where["cwd"] / "parsed.conllu").read_text().splitlines()
             if line and line[0].isdigit()]
    assert len(words) == 7
    run(f"cd {tmp_path} && polyparse parse --model {where['cwd'] / 'sample.npz'} "
        "--text 'It purred.'", where)
    site = subprocess.run(["python", "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True,
                          **where).stdout.strip()
    leftovers = sorted(str(p.relative_to(site)) for p in Path(site).glob("polyparse/**/*.nb*"))
    assert not leftovers, f"numba cache files inside site-packages: {leftovers[:5]}"

