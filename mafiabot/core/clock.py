"""The clock a table's timers run on, handed to the table so tests and the demo can drive time themselves."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar

Awaited = TypeVar("Awaited")


class Cancellable(Protocol):
    """A scheduled call that can be called off (``asyncio.TimerHandle``)."""

    def cancel(self) -> None:
        """Do not make the call."""


class TableClock(Protocol):
    """The clock a table's timers run on: the event loop's for a real table, a manual one for tests and the demo."""

    def time(self) -> float:
        """Seconds on this clock's own scale (monotonic)."""

    def wall(self, at: float) -> datetime:
        """The UTC time that ``at`` (a reading of ``time()``) is shown as."""

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Cancellable:
        """Call ``callback(*args)`` once ``delay`` seconds have passed on this clock."""


def loop_time() -> float:
    """The running event loop's monotonic time: what a real table's clock and Discord's windows are read on."""
    return asyncio.get_running_loop().time()


def wall_now(clock: TableClock) -> datetime:
    """The clock's present moment as UTC: what a stored command's time or a shown deadline is read from."""
    return clock.wall(clock.time())


class LoopClock:
    """The event loop's monotonic clock, shown as UTC with one offset fixed at the first reading.

    Every deadline a table shows is read from the same clock with the same offset, so consecutive
    deadlines never run backwards the way a fresh ``now() + remaining`` per message can.
    """

    def __init__(self) -> None:
        self._offset: float | None = None

    def time(self) -> float:
        """The loop's time."""
        return loop_time()

    def wall(self, at: float) -> datetime:
        """``at`` as UTC, through the offset of the first reading."""
        if self._offset is None:
            self._offset = time.time() - self.time()
        return datetime.fromtimestamp(self._offset + at, UTC)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Cancellable:
        """The loop's ``call_later``."""
        return asyncio.get_running_loop().call_later(delay, callback, *args)


async def within(clock: TableClock, seconds: float, awaitable: Awaitable[Awaited]) -> Awaited:
    """``awaitable``'s result, if it comes before ``seconds`` pass on ``clock`` (``asyncio.wait_for`` on its time).

    Raises:
        TimeoutError: ``seconds`` passed on ``clock`` first; the awaitable was cancelled.
    """
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(None) as timeout:

        def expire() -> None:
            timeout.reschedule(loop.time())  # the loop's own timeout then cancels the wait, as wait_for would

        handle = clock.call_later(seconds, expire)
        try:
            return await awaitable
        finally:
            handle.cancel()


START = datetime(2026, 1, 1, tzinfo=UTC)
"""Where a manual clock's wall time starts unless told otherwise: fixed, so every run reads the same."""


@dataclass(order=True)
class ManualCall:
    """A call scheduled on a ``ManualClock``; ordered by when it is due, then by when it was made."""

    at: float
    order: int
    callback: Callable[..., object] = field(compare=False)
    args: tuple[Any, ...] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        """Do not make the call."""
        self.cancelled = True


class ManualClock:
    """A table clock whose time moves only when its driver moves it (``advance``, ``fire_next``).

    Nothing that takes time on the machine takes time on this clock, so a timer fires exactly when
    the test or the demo says, and the same script reads the same times on every run. Due calls are
    made in deadline order (ties in the order they were scheduled), each at its own moment.
    """

    def __init__(self, start: datetime = START) -> None:
        self.start = start
        self.now = 0.0
        self._calls: list[ManualCall] = []
        self._order = itertools.count()

    def time(self) -> float:
        """Seconds since ``start``."""
        return self.now

    def wall(self, at: float) -> datetime:
        """``at`` as UTC: ``start`` plus ``at`` seconds."""
        return self.start + timedelta(seconds=at)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> ManualCall:
        """Schedule ``callback(*args)`` ``delay`` seconds from now on this clock (a negative delay: now)."""
        call = ManualCall(self.now + max(0.0, delay), next(self._order), callback, args)
        heapq.heappush(self._calls, call)
        return call

    def _prune(self) -> None:
        while self._calls and self._calls[0].cancelled:
            heapq.heappop(self._calls)

    def next_at(self) -> float | None:
        """When the next scheduled call is due, if any."""
        self._prune()
        return self._calls[0].at if self._calls else None

    def last_at(self) -> float | None:
        """When the last scheduled call is due (a table's own timer, after its warning)."""
        live = [c.at for c in self._calls if not c.cancelled]
        return max(live) if live else None

    def fire_next(self) -> None:
        """Move to the next scheduled call and make it.

        Raises:
            LookupError: nothing is scheduled.
        """
        self._prune()
        if not self._calls:
            raise LookupError("nothing is scheduled on this clock")
        call = heapq.heappop(self._calls)
        self.now = max(self.now, call.at)
        call.callback(*call.args)

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass, making every call that falls due on the way, at its own moment.

        A call scheduled by one of them that falls due before the end is made too.
        """
        until = self.now + seconds
        while (at := self.next_at()) is not None and at <= until:
            self.fire_next()
        self.now = until


__all__ = [
    "START", "Cancellable", "LoopClock", "ManualCall", "ManualClock", "TableClock", "loop_time", "wall_now", "within",
]
