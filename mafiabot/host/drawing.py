"""Where pictures are drawn: the tables' on a pool of their own, the members' charts on one worker of theirs.

A table's card and sheet are part of the game: they go out with the morning's message, in order,
so they must never wait behind anything a member asked for. A chart (``/mafia top``, ``/mafia
stats``) is a member's own request and costs seconds of CPU for a 50-row league. So charts draw on
one worker, at most ``CHART_BACKLOG`` of them wait for it (past that the answer goes without its
picture), and a member draws one chart per ``CHART_COOLDOWN`` seconds. Python's default executor,
which ``asyncio.to_thread`` shares with everything else, is used by neither.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

PICTURE_WORKERS = 2
"""Threads for the tables' pictures: a card takes tens of milliseconds; two tables' mornings overlap."""
CHART_WORKERS = 1
CHART_BACKLOG = 2
"""Charts that may wait for the chart worker; another one is not drawn (its answer goes as text)."""
CHART_COOLDOWN = 15.0
"""Seconds between two charts drawn for the same member of a server."""
_FORGET_AFTER = 512
"""Members remembered before the expired ones are dropped."""


async def run_in(pool: ThreadPoolExecutor, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on ``pool``, with the caller's context (as ``asyncio.to_thread`` keeps it)."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, fn, *args)
    return await asyncio.get_running_loop().run_in_executor(pool, call)


def picture_pool() -> ThreadPoolExecutor:
    """A pool for one sender's table pictures."""
    return ThreadPoolExecutor(max_workers=PICTURE_WORKERS, thread_name_prefix="mafiabot-pictures")


class Charts:
    """The members' charts: one worker, a short queue, and a cooldown per member on ``clock``."""

    def __init__(self, clock: Callable[[], float], *, cooldown: float = CHART_COOLDOWN,
                 backlog: int = CHART_BACKLOG) -> None:
        self.clock = clock
        """Seconds, monotonic: the event loop's time in the bot; tests hand their own."""
        self.cooldown = cooldown
        self.backlog = backlog
        self._pool = ThreadPoolExecutor(max_workers=CHART_WORKERS, thread_name_prefix="mafiabot-charts")
        self._pending = 0
        self._next: dict[tuple[int, int], float] = {}
        self.skipped = 0
        """Charts not drawn because the queue was full, for reports."""

    def wait_for(self, guild_id: int, member_id: int) -> int:
        """Whole seconds until ``member_id`` may have a chart here; 0: now, and his next wait starts."""
        now = self.clock()
        key = (guild_id, member_id)
        ready = self._next.get(key, now)
        if ready > now:
            return max(1, math.ceil(ready - now))
        if len(self._next) >= _FORGET_AFTER:
            self._next = {k: at for k, at in self._next.items() if at > now}
        self._next[key] = now + self.cooldown
        return 0

    async def draw(self, fn: Callable[..., T], *args: object) -> T | None:
        """``fn(*args)`` on the chart worker; None when ``backlog`` charts are already in line."""
        if self._pending > self.backlog:
            self.skipped += 1
            return None
        return await self.in_line(fn, *args)

    async def in_line(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` on the chart worker, however long the line: a picture the answer needs."""
        self._pending += 1
        try:
            return await run_in(self._pool, fn, *args)
        finally:
            self._pending -= 1

    def close(self) -> None:
        """Drop the charts still waiting; the one being drawn finishes in its thread."""
        self._pool.shutdown(wait=False, cancel_futures=True)
