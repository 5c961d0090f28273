"""The sender's shutdown ends every worker, also one that swallowed its first cancellation."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from mafiabot.host.sender import Sender


async def stubborn(started: asyncio.Event, cancelled: list[int]) -> None:
    """A worker that, like one inside CPython 3.11's ``wait_for`` at its timeout, survives one cancellation."""
    started.set()
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.append(1)
    await asyncio.Event().wait()


async def idle(started: asyncio.Event) -> None:
    started.set()
    await asyncio.Event().wait()


async def test_close_cancels_again_a_worker_that_swallowed_the_first_cancellation() -> None:
    sender = Sender(cast("Any", None), cast("Any", None))
    cancelled: list[int] = []
    ready = asyncio.Event(), asyncio.Event()
    worker = asyncio.ensure_future(stubborn(ready[0], cancelled))
    side = asyncio.ensure_future(idle(ready[1]))
    sender._workers[1] = worker
    sender._side_workers[1] = side
    await asyncio.wait_for(asyncio.gather(ready[0].wait(), ready[1].wait()), 10)
    closing = asyncio.ensure_future(sender.close())
    done, _ = await asyncio.wait({closing}, timeout=10)  # a bound, not a wait for time: it ends at once
    assert closing in done, "close() still waits for a worker that swallowed its cancellation"
    closing.cancel()
    assert cancelled == [1]
    assert worker.cancelled()
    assert side.cancelled()
