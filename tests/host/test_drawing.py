"""Members' charts never hold up a table's pictures: each has its own threads, and charts wait in a short line.

Threads are held by ``threading.Event`` gates the test opens itself; no test depends on how fast
anything draws. A hang is the failure: ``asyncio.wait_for`` only bounds it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

from mafiabot.host.drawing import CHART_BACKLOG, Charts
from mafiabot.host.render import Picture
from mafiabot.host.sender import Sender

HANG = 60.0
"""Seconds after which a draw that should have finished counts as stuck."""


@pytest.fixture
async def gate() -> AsyncIterator[threading.Event]:
    """Opened at the end of the test, so no thread is left waiting."""
    gate = threading.Event()
    try:
        yield gate
    finally:
        gate.set()


async def test_a_table_picture_draws_while_every_shared_thread_and_the_chart_worker_are_busy(
    gate: threading.Event,
) -> None:
    loop = asyncio.get_running_loop()
    shared = [loop.run_in_executor(None, gate.wait) for _ in range(64)]  # asyncio.to_thread's threads, all held
    charts = Charts(lambda: 0.0)
    chart = asyncio.ensure_future(charts.draw(gate.wait))  # a 50-row league, still drawing
    sender = Sender(cast("Any", None), cast("Any", None))
    try:
        card = Picture("card.png", "the table", lambda: b"card")
        drawn = await asyncio.wait_for(sender._draw(cast("Any", None), [card]), HANG)
        assert drawn == [(card, b"card")]
        assert not chart.done()
    finally:
        gate.set()
        await asyncio.gather(*shared, chart)
        await sender.close()
        charts.close()


async def test_charts_wait_in_a_short_line_and_the_next_one_goes_without_its_picture(gate: threading.Event) -> None:
    charts = Charts(lambda: 0.0)
    try:
        line = [asyncio.ensure_future(charts.draw(gate.wait)) for _ in range(1 + CHART_BACKLOG)]
        await asyncio.sleep(0)  # each has taken its place
        assert await charts.draw(lambda: "a chart") is None
        assert charts.skipped == 1
        gate.set()
        assert await asyncio.wait_for(asyncio.gather(*line), HANG) == [True] * (1 + CHART_BACKLOG)
        assert await charts.draw(lambda: "a chart") == "a chart"
        assert await charts.in_line(lambda: "a sheet") == "a sheet"
    finally:
        charts.close()


def test_one_chart_per_member_per_cooldown_on_the_clock_it_is_handed() -> None:
    now = [100.0]
    charts = Charts(lambda: now[0], cooldown=15)
    try:
        assert charts.wait_for(1, 7) == 0
        assert charts.wait_for(1, 7) == 15
        assert charts.wait_for(1, 8) == 0  # another member
        assert charts.wait_for(2, 7) == 0  # the same member on another server
        now[0] += 14.2
        assert charts.wait_for(1, 7) == 1
        now[0] += 0.8
        assert charts.wait_for(1, 7) == 0
    finally:
        charts.close()
