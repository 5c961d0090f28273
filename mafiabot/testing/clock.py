"""The scripted clock a harnessed table's timers run on: time moves only when the test or its driver moves it."""

from __future__ import annotations

from datetime import UTC, datetime

from mafiabot.core.clock import ManualClock

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


__all__ = ["EVENING", "ScriptedClock"]
