"""A table's one timer: which step of the game it times, when it ends, what it kept while paused, its warning.

The table waits for one thing at a time (a speech, a vote window, a night), so it has one timer;
the engine numbers each wait (``Waiting.timer``) and a timeout names the wait it ends, so a stale
one is refused. This keeps the timer's facts together and its calls on the table's clock, so the
table decides only which wait to time and for how long.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mafiabot.core.clock import Cancellable, TableClock


class Countdown:
    """The table's timer on a clock: running (a deadline), paused (seconds kept), or stopped."""

    __slots__ = ("_alarm", "_clock", "_deadline", "_kept", "_on_time", "_on_warning", "_step", "_warning")

    def __init__(self, clock: TableClock, on_time: Callable[[int], None], on_warning: Callable[[int], None]) -> None:
        """``on_time(step)`` is called when the time of ``step`` is up, ``on_warning(seat)`` before it ends."""
        self._clock = clock
        self._on_time = on_time
        self._on_warning = on_warning
        self._step: int | None = None
        self._deadline: float | None = None
        self._kept: float | None = None
        self._alarm: Cancellable | None = None
        self._warning: Cancellable | None = None

    @property
    def step(self) -> int | None:
        """The engine's number of the wait this timer times (``Waiting.timer``); None before the first."""
        return self._step

    @property
    def deadline(self) -> float | None:
        """When the running time ends, on the clock; None while paused or stopped."""
        return self._deadline

    @property
    def kept(self) -> float | None:
        """The seconds a paused timer keeps for when it runs again; None while it runs or has none."""
        return self._kept

    @property
    def armed(self) -> bool:
        """Whether the end of the time (or its retry) is scheduled on the clock."""
        return self._alarm is not None

    @property
    def warning_armed(self) -> bool:
        """Whether the floor holder's warning is scheduled on the clock."""
        return self._warning is not None

    def left(self) -> float | None:
        """Seconds left: on the clock while it runs, as kept while paused; None without a time."""
        if self._deadline is not None:
            return max(0.0, self._deadline - self._clock.time())
        return self._kept

    def wall_deadline(self) -> datetime | None:
        """When the running time ends, as a UTC time (never in the past); None while paused or stopped."""
        if self._deadline is None:
            return None
        return self._clock.wall(max(self._deadline, self._clock.time()))

    def start(self, step: int, seconds: float, *, warn: int | None = None, warn_before: float = 0.0) -> float:
        """Time ``step`` for ``seconds``, warning seat ``warn`` ``warn_before`` seconds before the end.

        No warning when ``warn`` is None or the time is not longer than ``warn_before``. Returns the
        deadline on the clock.
        """
        self.stop()
        self._kept = None
        self._step = step
        self._deadline = deadline = self._clock.time() + seconds
        self._alarm = self._clock.call_later(seconds, self._up, step)
        if warn is not None and seconds - warn_before > 0:
            self._warning = self._clock.call_later(seconds - warn_before, self._warn, warn)
        return deadline

    def untimed(self, step: int) -> None:
        """The table waits for ``step`` with no time limit: nothing runs."""
        self.stop()
        self._step = step

    def pause(self) -> float | None:
        """Stop the clock and keep what was left; returns the seconds kept (None: there was no time)."""
        if self._deadline is not None:
            self._kept = max(0.0, self._deadline - self._clock.time())
        self.stop()
        return self._kept

    def keep(self, step: int, seconds: float) -> None:
        """A paused ``step`` with ``seconds`` left (a paused game after a restart): nothing runs until it resumes."""
        self._step, self._kept = step, seconds

    def retry(self, seconds: float, step: int) -> None:
        """The time of ``step`` was up but could not be counted: say so again in ``seconds``."""
        self._alarm = self._clock.call_later(seconds, self._up, step)

    def stop(self) -> None:
        """Call off the end and the warning; the step and the seconds kept stay."""
        for handle in (self._alarm, self._warning):
            if handle is not None:
                handle.cancel()
        self._alarm = self._warning = None
        self._deadline = None

    def _up(self, step: int) -> None:
        self._alarm = None
        self._on_time(step)

    def _warn(self, seat: int) -> None:
        self._warning = None
        self._on_warning(seat)


__all__ = ["Countdown"]
