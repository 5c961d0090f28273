"""The harness's time: each table on a scripted clock of its own unless the test asks for real time."""

from __future__ import annotations

from engine import Phase
from mafiabot.core.clock import LoopClock
from mafiabot.testing import ScriptedClock, harness, open_table
from tests.harness import FAST, first_speech


async def test_night_zero_ends_only_when_the_test_fires_its_timer() -> None:
    async with harness(10, emulator_config=FAST) as h:
        table = await open_table(h, "classic", 10)
        clock = table.clock
        assert isinstance(clock, ScriptedClock)
        await h.wait(lambda: table.timer_armed)
        await h.bot.presenter.drained(table.id)
        assert table.game.state.phase is Phase.NIGHT_ZERO
        assert clock.time() == 0.0
        await first_speech(h, table)
        assert clock.time() == table.ruleset.night_zero_seconds * table.time_scale


async def test_real_time_runs_the_timers_on_the_event_loop() -> None:
    async with harness(10, emulator_config=FAST, real_time=True) as h:
        table = await open_table(h, "classic", 10)
        assert isinstance(table.clock, LoopClock)
        await first_speech(h, table)
        assert table.game.state.floor is not None
