"""The seconds after a restart: a command for a table still being resumed waits for it, and is applied.

The restart happens in the test's own process: the running table is stopped and a second table
manager, built as a restarted bot builds its own, takes its place and recovers the open games from
the store, whose reads the test holds on an ``asyncio.Event``. The bot is handed a clock whose
"two seconds have passed" the test decides, so no test waits for real time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mafiabot.core.runtime import Table
from mafiabot.core.tables import TableManager
from mafiabot.emulator.users import Reply
from mafiabot.host.presenter import custom_id
from mafiabot.testing import Harness, harness, open_table
from tests.bot.test_slow_store import HandedClock, first_speech
from tests.harness import FAST, floor_seat

RESUMING = "The bot has just restarted and is bringing this table back. Try again in a moment."


class HeldReads:
    """One of the store's reads, held until the test lets it through."""

    def __init__(self, read: Callable[..., Awaitable[Any]]) -> None:
        self._read = read
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.entered.set()
        await self.release.wait()
        return await self._read(*args, **kwargs)


async def restart(
    h: Harness, table: Table, read: str,
) -> tuple[TableManager, HeldReads, asyncio.Task[None], HandedClock]:
    """Stop ``table`` as a crash would, and start a restarted bot's recovery with the store's ``read`` held.

    The bot's short waits are handed a fresh clock: ``waiting`` says a command began waiting.
    """
    table.stop()
    await table.voice.close()
    held = HeldReads(getattr(h.store, read))
    setattr(h.store, read, held)
    restarted = h.bot.build_tables()
    h.bot.tables = restarted
    recovering = asyncio.ensure_future(restarted.recover())
    await asyncio.wait_for(held.entered.wait(), 10)
    clock = HandedClock()
    h.bot.sleep = clock.sleep
    return restarted, held, recovering, clock


async def waiting_or_answered(h: Harness, clock: HandedClock, reply: Reply) -> None:
    """Return once the bot waits on its clock for this interaction, or has answered it."""
    waits = [asyncio.ensure_future(clock.waiting.wait()), asyncio.ensure_future(h.wait(lambda: reply.acknowledged))]
    done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        task.result()


async def test_a_judge_command_during_the_resume_waits_for_the_table_and_is_applied() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        table = await open_table(h, "classic", 10)
        await first_speech(h, table)
        restarted, held, recovering, clock = await restart(h, table, "open_games")
        reply = h.judge.command(h.env.text, "mafia foul", seat=3)
        await waiting_or_answered(h, clock, reply)
        assert not reply.acknowledged, reply.content  # not "There is no table in this channel."
        held.release.set()
        await asyncio.wait_for(recovering, 30)
        await h.wait(lambda: reply.acknowledged)
        back = restarted.tables[table.id]
        assert back.game.state.foul_count(3) == 1
        await h.wait(lambda: any("Foul to #3" in m.content for m in h.emu.messages(h.env.text)
                                 if m.ephemeral_for is None))


async def test_a_click_during_the_resume_of_its_table_waits_for_it_and_is_applied() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        table = await open_table(h, "classic", 10)
        speaker, message = await first_speech(h, table)
        seat = floor_seat(table)
        # The open games are read; the table itself is still being rebuilt (its owed mutes are read).
        restarted, held, recovering, clock = await restart(h, table, "owed_mutes")
        reply = speaker.click(message, custom_id("thanks", table.id))
        await waiting_or_answered(h, clock, reply)
        assert not reply.acknowledged, reply.followups
        held.release.set()
        await asyncio.wait_for(recovering, 30)
        await h.wait(lambda: reply.acknowledged)
        back = restarted.tables[table.id]
        await h.wait(lambda: floor_seat(back) != seat)
        assert back.game.state.floor is not None


async def test_a_command_whose_table_is_not_back_in_time_is_told_to_try_again_and_changes_nothing() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        table = await open_table(h, "classic", 10)
        await first_speech(h, table)
        restarted, held, recovering, clock = await restart(h, table, "open_games")
        reply = h.judge.command(h.env.text, "mafia foul", seat=3)
        await waiting_or_answered(h, clock, reply)
        clock.passed.set()  # the table is not back within the wait
        await h.wait(lambda: reply.acknowledged)
        assert reply.ephemeral
        assert reply.content == RESUMING
        held.release.set()
        await asyncio.wait_for(recovering, 30)
        assert restarted.tables[table.id].game.state.foul_count(3) == 0
        # Once it is back, the same command goes through at once.
        again = await h.judge.run_command(h.env.text, "mafia foul", seat=3, timeout=10)
        assert again.ephemeral
        await h.wait(lambda: restarted.tables[table.id].game.state.foul_count(3) == 1)
