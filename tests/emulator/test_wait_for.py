"""The emulator's waits: woken by a change, and told apart when only their timeout let them see it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

from mafiabot.emulator import Emulator
from mafiabot.emulator.server import LATE_WAITS


def second_look() -> Callable[[], bool]:
    """A condition that holds from its second look on, without anything telling the emulator."""
    looks = itertools.count()
    return lambda: next(looks) >= 1


async def test_a_wait_that_nothing_woke_is_recorded_as_late() -> None:
    emu = Emulator()
    assert await emu.wait_for(second_look(), timeout=0.01)
    late = list(LATE_WAITS)
    LATE_WAITS.clear()  # this test's own late wait, on purpose
    assert len(late) == 1
    assert "held only at its 0.01 s deadline" in late[0]


async def test_a_wait_woken_by_a_change_is_not_late() -> None:
    emu = Emulator()
    asyncio.get_running_loop().call_soon(emu.changed)
    assert await emu.wait_for(second_look(), timeout=30)
    assert LATE_WAITS == []
