"""Every test fails if one of its emulator waits held only at its deadline.

Such a wait slept its whole timeout because nothing woke it when its condition came true: a sleep
standing in for synchronization, and the reason whole tests took 30 or 60 s.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mafiabot.emulator.server import LATE_WAITS


@pytest.fixture(autouse=True)
def no_late_waits() -> Iterator[None]:
    LATE_WAITS.clear()
    yield
    assert LATE_WAITS == [], "waits that nothing woke: they passed only on their last look, at their timeout"
