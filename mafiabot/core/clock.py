"""The clock a table's timers run on, handed to the table so tests and the demo can drive time themselves."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol


class Cancellable(Protocol):
    """A scheduled call that can be called off (``asyncio.TimerHandle``)."""

    def cancel(self) -> None:
        """Do not make the call."""


class TableClock(Protocol):
    """The clock a table's timers run on: the event loop's for a real table, a scripted one for the demo."""

    def time(self) -> float:
        """Seconds on this clock's own scale (monotonic)."""

    def wall(self, at: float) -> datetime:
        """The UTC time that ``at`` (a reading of ``time()``) is shown as."""

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Cancellable:
        """Call ``callback(*args)`` once ``delay`` seconds have passed on this clock."""


class LoopClock:
    """The event loop's monotonic clock, shown as UTC with one offset fixed at the first reading.

    Every deadline a table shows is read from the same clock with the same offset, so consecutive
    deadlines never run backwards the way a fresh ``now() + remaining`` per message can.
    """

    def __init__(self) -> None:
        self._offset: float | None = None

    def time(self) -> float:
        """The loop's time."""
        return asyncio.get_running_loop().time()

    def wall(self, at: float) -> datetime:
        """``at`` as UTC, through the offset of the first reading."""
        if self._offset is None:
            self._offset = time.time() - self.time()
        return datetime.fromtimestamp(self._offset + at, UTC)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Cancellable:
        """The loop's ``call_later``."""
        return asyncio.get_running_loop().call_later(delay, callback, *args)
