"""The controller's bytecode pass: what it writes is what a worker would have made, and takes."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, get_cache_dir

from tests.bytecode import prepare, rewritten_by_pytest


def test_the_files_pytest_rewrites_are_the_test_modules_and_conftests() -> None:
    assert rewritten_by_pytest(Path("tests/bot/test_kill.py"))
    assert rewritten_by_pytest(Path("tests/conftest.py"))
    assert not rewritten_by_pytest(Path("tests/harness.py"))
    assert not rewritten_by_pytest(Path("tests/bot/test_data.json"))


def test_each_test_module_is_cached_as_pytest_would_rewrite_it(pytestconfig: pytest.Config) -> None:
    prepare(pytestconfig)
    here = Path(__file__)
    pyc = get_cache_dir(here) / (here.name[:-3] + PYC_TAIL)
    cached = _read_pyc(here, pyc, lambda *args: None)
    assert cached is not None  # a worker importing this module takes the cache
    _, made = _rewrite_test(here, pytestconfig)
    assert cached.co_consts == made.co_consts
    assert cached.co_code == made.co_code
    modules = [p for p in (pytestconfig.rootpath / "tests").rglob("*.py") if rewritten_by_pytest(p)]
    assert all((get_cache_dir(p) / (p.name[:-3] + PYC_TAIL)).is_file() for p in modules)
