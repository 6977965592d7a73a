"""numba's cache lives in polyparse's cache folder, whichever kernel module is imported
first (issue 11: cache files written next to the installed sources outlived
``pip uninstall`` and shadowed a later editable install)."""

import os
import subprocess
import sys

import pytest

from conftest import REPO
from polyparse.corpora.cache import PACKAGES, source_digest

KERNEL_MODULES = sorted(
    "polyparse." + ".".join(path.relative_to(REPO).with_suffix("").parts)
    for package in PACKAGES
    for path in (REPO / package).rglob("*.py")
    if "cache=True" in path.read_text(encoding="utf-8"))

FIRST_PER_PACKAGE = sorted({module.split(".")[1]: module
                            for module in reversed(KERNEL_MODULES)}.values())
"""One kernel module per top-level package: importing any module of a package runs that
package's ``__init__`` first, which is what points numba at the cache (a fresh
interpreter per package, not per module: 1.5 s each)."""


def test_there_are_kernel_modules_to_check():
    assert len(KERNEL_MODULES) >= 6, KERNEL_MODULES


@pytest.mark.parametrize("module", FIRST_PER_PACKAGE)
def test_importing_a_kernel_module_first_points_numba_at_our_cache(module, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["POLYPARSE_CACHE"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", f"import {module}, numba; "
                          "print(numba.config.CACHE_DIR)"], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(tmp_path / "numba" / source_digest(REPO))


def test_the_cache_folder_changes_with_any_source_file(tmp_path):
    """numba checks a cached kernel against its own file only, so a change to a kernel it
    calls from another file (here the TREE factor's MST, called by the cached AD3 loop)
    must lead to another cache folder; an identical copy of the sources to the same one."""
    import shutil

    for package in PACKAGES:
        shutil.copytree(REPO / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    assert source_digest(tmp_path) == source_digest(REPO)
    callee = tmp_path / "decoders" / "_factor_kernels.py"
    callee.write_text(callee.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert source_digest(tmp_path) != source_digest(REPO)
