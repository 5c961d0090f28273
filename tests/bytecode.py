"""Compile the project and rewrite the test modules once, in the controller, before the workers start.

Each xdist worker imports every test module, and pytest rewrites a test module's asserts on import
(about half of a worker's collection). Python caches neither when ``PYTHONDONTWRITEBYTECODE`` is
set, nor usefully in a fresh clone where all workers start together: each worker, and each
``mafiabot run`` or CLI process a test starts, compiled everything again. Written once here, the
workers and the child processes read the caches (reading is allowed whatever the variable says).
"""

from __future__ import annotations

import compileall
from pathlib import Path

import pytest

PACKAGES = ("engine", "mafiabot", "cogs", "tests")


def rewritten_by_pytest(path: Path) -> bool:
    """The files pytest rewrites in this project: its test modules and conftest files."""
    return path.name == "conftest.py" or (path.name.startswith("test_") and path.suffix == ".py")


def prepare(config: pytest.Config) -> int:
    """Write the bytecode caches the workers will read; the test modules rewritten here, their count.

    The rewrite goes through pytest's own functions, with its own cache names and checked source
    hashes, so a worker takes a cached module only if it is exactly the one it would have made. A
    pytest without those functions (they are internal) leaves the rewriting to the workers.
    """
    root = config.rootpath
    for package in PACKAGES:
        compileall.compile_dir(root / package, quiet=2, workers=1)  # writes whatever sys.dont_write_bytecode says
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
    except ImportError:
        return 0
    state = config.stash.get(assertstate_key, None)
    if state is None:  # --assert=plain: nothing is rewritten
        return 0
    count = 0
    for path in sorted((root / "tests").rglob("*.py")):
        if not rewritten_by_pytest(path):
            continue
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc, state.trace) is not None:
            continue
        source_hash, code = _rewrite_test(path, config)
        cache.mkdir(exist_ok=True)
        _write_pyc(state, code, source_hash, pyc)
        count += 1
    return count
