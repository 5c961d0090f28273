"""What players read in the table's channel: silent votes, a lone nominee's departure, one clock."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from mafiabot.core.clock import LoopClock
from mafiabot.core.runtime import Table
from mafiabot.testing import Driver, ScriptedClock, Strategy, harness, open_table, readable
from mafiabot.tools.demo import run_demo
from tests.harness import FAST, play_to_the_end, public


class SilentThenLone(Strategy):
    """Day 1: two nominees and nobody raises a hand. Later days: exactly one nominee."""

    def nominate(self, table: Table, seat: int) -> int | None:
        state = table.game.state
        free = [s for s in state.alive_seats() if s not in state.nominees and s != seat]
        if state.day == 1:
            return free[0] if len(state.nominees) < 2 else None
        return free[0] if not state.nominees else None

    def vote(self, table: Table, seat: int, candidates: tuple[int, ...]) -> int | None:
        return None


async def play(strategy: Strategy) -> list[str]:
    clock = ScriptedClock()
    async with harness(10, time_scale=1.0, rate_scale=0.02, emulator_config=FAST, clock=lambda: clock) as h:
        table = await open_table(h, "classic", 10)
        await play_to_the_end(table, Driver(h, table, strategy, clock=clock))
        return [readable(h, text) for text in public(h)]


async def test_silent_votes_are_shown_as_silent_and_a_lone_nominee_is_told_why_they_leave() -> None:
    channel = "\n".join(await play(SilentThenLone(5)))
    tally = re.search(r"Votes:\n#(\d+): 0 votes \(—\)\n#(\d+): 10 votes \(silent: ([#\d, ]+)\)", channel)
    assert tally, channel
    assert tally[3] == ", ".join(f"#{seat}" for seat in range(1, 11))
    assert not re.search(r"#\d+: [1-9]\d* votes? \(—\)", channel)  # never a count with nobody behind it
    lone = re.search(r"(#\d+ \S+) is the day's only nominee: every vote goes to them, so they leave the table "
                     r"without a vote\.", channel)
    assert lone, channel
    assert f"{lone[1]} leaves the table." not in channel  # said once, with the reason


async def test_every_deadline_reads_on_the_table_clock() -> None:
    report = await run_demo(ruleset="classic", players=10, seed=3, time_scale=0, emulator_config=FAST)
    stamps, floors = [], 0
    for line in report.public_channel:
        stamp = datetime.strptime(line[:8] + "+0000", "%H:%M:%S%z")
        stamps.append(stamp)
        floor = re.search(r"has the floor: (\d+) s, ends (\d\d:\d\d:\d\d)", line)
        if floor:
            floors += 1
            assert datetime.strptime(floor[2] + "+0000", "%H:%M:%S%z") - stamp == timedelta(seconds=int(floor[1])), line
    assert floors >= 10
    assert stamps == sorted(stamps)


def test_the_loop_clock_shows_every_reading_through_one_offset() -> None:
    import asyncio

    async def readings() -> list[datetime]:
        clock = LoopClock()
        at = clock.time()
        return [clock.wall(at), clock.wall(at + 60), clock.wall(at + 30)]

    first, later, between = asyncio.run(readings())
    assert later - first == timedelta(seconds=60)
    assert between - first == timedelta(seconds=30)
