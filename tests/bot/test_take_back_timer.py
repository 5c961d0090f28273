"""Taking back on a table's clock (a manual one): the floor comes back with the seconds that were left.

The runtime measures the speaker's time left when the judge skips or removes them, and the engine
gives exactly that back; the table's timer then runs for it, also when the take back came in a pause.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from engine import CLASSIC, Disqualify, GiveFoul, Pause, Phase, Resume, StartGame, TakeBack
from mafiabot.core.clock import ManualClock
from tests.core.test_timers import PLAYERS, Log, Running, floor_seat, make_table, settle, until

SPEECH = CLASSIC.speech_seconds


@pytest.fixture
async def day() -> AsyncIterator[Running]:
    """A classic table on the first speech of day 1."""
    clock, log = ManualClock(), Log()
    table, effects = make_table(clock, log)
    table.start_effects(await table.submit_start(StartGame(players=len(PLAYERS), seed=7), PLAYERS))
    await until(lambda: table.timer_armed)  # Night 0's clock starts once the start mutes are answered
    clock.advance(CLASSIC.night_zero_seconds)
    await until(lambda: table.game.state.phase is Phase.SPEECHES)
    try:
        yield Running(clock, log, table, effects)
    finally:
        table.stop()
        await table.voice.close()


async def test_a_skip_taken_back_runs_the_time_that_was_left(day: Running) -> None:
    clock, table, log = day.clock, day.table, day.log
    assert floor_seat(table) == 1
    clock.advance(20)
    await settle()
    await table.submit(table.skip_command())
    assert log.rows[-1][1]["left"] == SPEECH - 20
    assert floor_seat(table) == 2
    clock.advance(5)
    await settle()
    await table.submit(TakeBack())
    assert floor_seat(table) == 1
    assert table.remaining() == SPEECH - 20
    clock.advance(SPEECH - 21)
    await settle()
    assert floor_seat(table) == 1
    clock.advance(1)
    await until(lambda: floor_seat(table) == 2)
    assert table.remaining() == SPEECH  # #2's own minute, afresh


async def test_a_removal_of_the_speaker_in_a_pause_taken_back(day: Running) -> None:
    clock, table, log = day.clock, day.table, day.log
    clock.advance(15)
    await settle()
    await table.submit(Pause())
    clock.advance(100)  # the clock stands still in a pause
    await settle()
    await table.submit(Disqualify(seat=1, reason="wrong seat"))
    assert log.rows[-1][1]["left"] == SPEECH - 15  # the runtime stamped the time the speaker had
    assert floor_seat(table) == 2
    await table.submit(TakeBack())
    assert floor_seat(table) == 1
    assert table.game.state.is_alive(1)
    await table.submit(Resume())
    assert table.remaining() == SPEECH - 15
    clock.advance(SPEECH - 15)
    await until(lambda: floor_seat(table) == 2)


async def test_a_foul_of_another_seat_carries_no_time(day: Running) -> None:
    table, log = day.table, day.log
    await table.submit(GiveFoul(seat=4))
    assert log.rows[-1][1]["left"] is None
    await table.submit(GiveFoul(seat=1))
    assert log.rows[-1][1]["left"] == SPEECH
