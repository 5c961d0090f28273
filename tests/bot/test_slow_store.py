"""A slow or failing store behind the real bot: Discord's 3 seconds are kept, and nothing half-happens.

The store is wrapped so its command write blocks on an ``asyncio.Event`` (or raises, for an
outage), and the bot is handed a clock whose "2 seconds have passed" the test decides, so no
test waits for real time.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from engine import Phase
from mafiabot.core.runtime import Table
from mafiabot.host.presenter import custom_id
from mafiabot.store import Store, StoreUnavailableError
from mafiabot.tools.demo import Harness, harness, has_component, open_table
from tests.harness import FAST, admin_of, floor_seat

DEFERRED_UPDATE = 6
DEFERRED_MESSAGE = 5
NOTHING_CHANGED = "The game's record could not be saved just now, so nothing changed."
DATABASE_DOWN = "The bot's database could not be reached just now, so nothing changed. Try again in a moment."


class StalledStore:
    """The real store, except that a command's write waits for ``release`` (or fails while ``down``)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._append = store.append
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.down = False

    async def append(self, *args: Any, **kwargs: Any) -> None:
        self.entered.set()
        if self.down:
            raise ConnectionError("the database is unreachable")
        await self.release.wait()
        await self._append(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class HandedClock:
    """The bot's ``sleep``: a wait ends when the test says its time has passed."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()
        self.passed = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        self.waiting.set()
        await self.passed.wait()


async def first_speech(h: Harness, table: Table) -> tuple[Any, Any]:
    await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
    assert (await h.judge.run_command(h.env.text, "mafia skip")).ephemeral
    await h.wait(lambda: table.game.state.phase is Phase.SPEECHES and table.game.state.floor is not None)
    thanks = custom_id("thanks", table.id)
    message = await h.wait(lambda: h.latest(h.env.text, lambda m: has_component(m, thanks)))
    speaker = h.user(table.user_at(floor_seat(table)))
    return speaker, message


def stall(h: Harness) -> StalledStore:
    """Stall the command writes of the bot's store, which every table is handed as its game log."""
    stalled = StalledStore(h.store)
    h.store.append = stalled.append  # type: ignore[method-assign]
    return stalled


async def test_a_slow_write_defers_the_click_and_the_speech_ends_when_it_lands() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        table = await open_table(h, "classic", 10)
        speaker, message = await first_speech(h, table)
        seat = floor_seat(table)
        stalled = stall(h)
        reply = speaker.click(message, custom_id("thanks", table.id))
        await asyncio.wait_for(stalled.entered.wait(), 10)
        await asyncio.wait_for(clock.waiting.wait(), 10)
        assert not reply.acknowledged
        clock.passed.set()  # two seconds, as far as the bot can tell, and the write is still running
        await h.wait(lambda: reply.acknowledged)
        assert reply.response_type == DEFERRED_UPDATE
        thanks = custom_id("thanks", table.id)

        def next_floor() -> bool:
            return any(has_component(m, thanks) for m in h.emu.messages(h.env.text) if m.id > message.id)

        assert not next_floor()  # nothing is shown before it is stored
        stalled.release.set()
        await h.wait(next_floor)
        assert table.game.state.floor is None or table.game.state.floor.seat != seat
        stored = await h.store.get_game(table.id)
        assert stored.last_seq == len(table.game.history)


async def test_a_slow_write_defers_a_judge_command_privately_and_answers_after() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        table = await open_table(h, "classic", 10)
        await first_speech(h, table)
        stalled = stall(h)
        reply = h.judge.command(h.env.text, "mafia foul", seat=3)
        await asyncio.wait_for(stalled.entered.wait(), 10)
        clock.passed.set()
        await h.wait(lambda: reply.acknowledged)
        assert reply.response_type == DEFERRED_MESSAGE
        assert reply.ephemeral
        assert not any("Foul to #3" in m.content for m in h.emu.messages(h.env.text))  # not shown before stored
        stalled.release.set()
        final = await reply.wait_final(timeout=10)
        assert "Foul to #3" in final.content
        assert table.game.state.foul_count(3) == 1
        await h.wait(lambda: any("Foul to #3" in m.content for m in h.emu.messages(h.env.text)
                                 if m.ephemeral_for is None))


async def test_a_store_outage_answers_privately_that_nothing_changed() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        table = await open_table(h, "classic", 10)
        speaker, message = await first_speech(h, table)
        seat = floor_seat(table)
        history = len(table.game.history)
        stalled = stall(h)
        stalled.down = True
        stalled.release.set()
        reply = await h.judge.run_command(h.env.text, "mafia foul", seat=3, timeout=10)
        assert reply.ephemeral
        assert reply.content.startswith(NOTHING_CHANGED)
        assert table.game.state.foul_count(3) == 0
        reply = await speaker.press(message, custom_id("thanks", table.id), timeout=10)
        answer = await h.wait(lambda: reply.followups or (reply.ephemeral and [reply.message]))
        assert answer[-1].ephemeral_for == speaker.id
        assert answer[-1].content.startswith(NOTHING_CHANGED)
        assert floor_seat(table) == seat
        assert len(table.game.history) == history
        stalled.down = False  # the database is back: the same command goes through
        reply = await h.judge.run_command(h.env.text, "mafia foul", seat=3, timeout=10)
        assert "Foul to #3" in reply.content
        assert table.game.state.foul_count(3) == 1


class SlowCreate:
    """The real store, except that opening a lobby's game at start waits for ``release``."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def start_lobby(self, *args: Any, **kwargs: Any) -> bool:
        self.entered.set()
        await self.release.wait()
        return bool(await self._store.start_lobby(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


async def test_a_slow_start_defers_privately_and_the_game_starts() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        lobby = (await h.judge.run_command(h.env.text, "mafia new", ruleset="classic", seats=10)).message
        assert lobby is not None
        join = next(c["custom_id"] for row in lobby.components for c in row["components"] if ":join:" in c["custom_id"])
        for person in h.players:
            assert not (await person.press(lobby, join)).ephemeral
        slow = SlowCreate(h.bot.store)
        h.bot.tables.records = slow  # the table manager opens the game
        reply = h.judge.command(h.env.text, "mafia start")
        await asyncio.wait_for(slow.entered.wait(), 10)
        clock.passed.set()
        await h.wait(lambda: reply.acknowledged)
        assert reply.response_type == DEFERRED_MESSAGE
        assert reply.ephemeral
        slow.release.set()
        final = await reply.wait_final(timeout=10)
        assert final.content.startswith("Dealing the cards")
        table = await h.wait(h.table)
        await h.wait(lambda: any(c.startswith("The game begins") for c in
                                 (m.content for m in h.emu.messages(h.env.text))))
        assert table.game.state.phase is Phase.NIGHT_ZERO


class DownStore:
    """The real store for reads; every write of a lobby or of settings finds the database gone."""

    def __init__(self, store: Any) -> None:
        self._store = store

    async def open_lobby(self, *_args: Any, **_kwargs: Any) -> int:
        raise StoreUnavailableError("connection refused")

    async def save_settings(self, *_args: Any, **_kwargs: Any) -> None:
        raise StoreUnavailableError("connection refused")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


async def test_a_store_outage_on_new_and_settings_answers_privately_that_nothing_changed() -> None:
    async with harness(2) as h:
        h.judge.join_voice(h.env.voice)
        real = h.bot.store
        down = cast(Store, DownStore(real))
        h.bot.store = h.bot.tables.records = down  # the cogs write settings, the manager lobbies
        reply = await h.judge.run_command(h.env.text, "mafia new", seats=6, timeout=10)
        assert reply.ephemeral
        assert reply.content == DATABASE_DOWN
        assert h.bot.tables.lobby_in(h.env.text.id) is None
        reply = await admin_of(h).run_command(h.env.text, "mafia settings", language="ru", timeout=10)
        assert reply.ephemeral
        assert reply.content == DATABASE_DOWN
        assert (await real.get_settings(h.env.guild.id)).language != "ru"
