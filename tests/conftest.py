"""Every test fails if one of its emulator waits held only at its deadline; the longest files start first;
the controller writes the bytecode caches its workers read (``tests/bytecode.py``).

Such a wait slept its whole timeout because nothing woke it when its condition came true: a sleep
standing in for synchronization, and the reason whole tests took 30 or 60 s.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mafiabot.emulator.server import LATE_WAITS
from tests.bytecode import prepare

LONG_FIRST = (
    "tests/bot/test_leases.py",
    "tests/bot/test_kill.py",
    "tests/bot/test_mutes_e2e.py",
    "tests/bot/test_tournament_kill.py",
    "tests/bot/test_shards.py",
    "tests/test_simulate.py",
    "tests/bot/test_demo_cli.py",
    "tests/bot/test_tournament.py",
    "tests/bot/test_tournament_saturday.py",
    "tests/bot/test_nicknames_kill.py",
    "tests/store/test_site.py",
    "tests/bot/test_sigterm.py",
    "tests/store/test_site_browser.py",
    "tests/bot/test_tournament_georgian.py",
)
"""The files whose tests take a worker longest (10 to 90 s each), longest first.

They run before all others: with ``--dist worksteal`` the other worker takes the short tests
still queued, and the run does not end with one worker alone on a minute-long test."""


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", None):
        prepare(config)  # in the controller, before its workers start


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONG_FIRST)))  # stable: files stay whole


@pytest.fixture(autouse=True)
def no_late_waits() -> Iterator[None]:
    LATE_WAITS.clear()
    yield
    assert LATE_WAITS == [], "waits that nothing woke: they passed only on their last look, at their timeout"
