"""The scripted clock a harnessed table's timers run on: time moves only when the test or its driver moves it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from mafiabot.core.clock import ManualCall, ManualClock

EVENING = datetime(2026, 1, 9, 19, 0, tzinfo=UTC)
"""Where a scripted clock starts: a club evening, the same for every run."""


class ScriptedClock(ManualClock):
    """A manual table clock that moves only when a driver (or the test) moves it, from a club evening on.

    The players' actions take no time on it, and a timer fires only once the driver has done all
    it plans for the step, so how fast the machine answers never changes the game: the same seed
    and options play the same game, with the same times on every message.
    """

    def __init__(self, start: datetime = EVENING) -> None:
        super().__init__(start)
        self.on_schedule: list[Callable[[], None]] = []
        """Called whenever a timer is set: whoever waits to move the clock then knows there is a timer to fire."""

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> ManualCall:
        """Schedule ``callback(*args)`` ``delay`` seconds from now on this clock, and tell ``on_schedule``."""
        call = super().call_later(delay, callback, *args)
        for listener in self.on_schedule:
            listener()
        return call


__all__ = ["EVENING", "ScriptedClock"]
