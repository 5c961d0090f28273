"""``within``: a wait bounded on a handed clock, so a test moves the bound instead of waiting it out."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from mafiabot.core.clock import ManualClock, within


@dataclass
class Unanswered:
    """An answer that never comes; says when it is being waited for and whether the wait was called off."""

    waiting: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False

    async def answer(self) -> str:
        self.waiting.set()
        try:
            await asyncio.get_running_loop().create_future()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "never"


async def test_an_answer_before_the_bound_is_returned_and_leaves_nothing_scheduled() -> None:
    clock = ManualClock()
    done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    done.set_result("answered")
    assert await within(clock, 5.0, done) == "answered"
    assert clock.next_at() is None


async def test_the_wait_ends_with_a_timeout_once_the_clock_passes_the_bound_and_the_awaited_is_cancelled() -> None:
    clock, unanswered = ManualClock(), Unanswered()
    waiting = asyncio.create_task(within(clock, 5.0, unanswered.answer()))
    await unanswered.waiting.wait()
    assert clock.next_at() == 5.0
    clock.advance(5.0)
    with pytest.raises(TimeoutError):
        await waiting
    assert unanswered.cancelled


async def test_a_cancelled_wait_stays_cancelled_and_leaves_nothing_scheduled() -> None:
    clock, unanswered = ManualClock(), Unanswered()
    waiting = asyncio.create_task(within(clock, 5.0, unanswered.answer()))
    await unanswered.waiting.wait()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert unanswered.cancelled
    assert clock.next_at() is None
