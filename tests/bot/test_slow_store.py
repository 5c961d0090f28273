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
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.host.presenter import custom_id
from mafiabot.host.settings import HostedSettings
from mafiabot.store import Store, StoreUnavailableError
from mafiabot.testing import Harness, harness, has_component, open_table
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
        h.bot.tables.records = down  # the manager writes lobbies, the settings cog through the bot's settings
        h.bot.settings = HostedSettings(down, h.bot.config.game)
        reply = await h.judge.run_command(h.env.text, "mafia new", seats=6, timeout=10)
        assert reply.ephemeral
        assert reply.content == DATABASE_DOWN
        assert h.bot.tables.lobby_in(h.env.text.id) is None
        reply = await admin_of(h).run_command(h.env.text, "mafia settings", language="ru", timeout=10)
        assert reply.ephemeral
        assert reply.content == DATABASE_DOWN
        assert (await real.get_settings(h.env.guild.id)).language != "ru"


# -- Discord's three seconds count from the interaction's arrival, whatever comes before the answer --


class Gate:
    """Holds one async method of the real store (or bot) until ``release``: a read that takes its time."""

    def __init__(self, owner: Any, name: str) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        real = getattr(owner, name)

        async def held(*args: Any, **kwargs: Any) -> Any:
            self.entered.set()
            await self.release.wait()
            return await real(*args, **kwargs)

        setattr(owner, name, held)


async def deferred_while_held(h: Harness, clock: HandedClock, gate: Gate, reply: Any) -> None:
    """The read is still running when the bot's two seconds pass: the interaction is deferred at once."""
    await asyncio.wait_for(gate.entered.wait(), 30)
    assert not reply.acknowledged
    clock.passed.set()
    await h.wait(lambda: reply.acknowledged)
    assert reply.response_type == DEFERRED_MESSAGE
    gate.release.set()


async def test_a_slow_staff_check_defers_mafia_start_from_its_arrival() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        lobby = (await h.judge.run_command(h.env.text, "mafia new", ruleset="classic", seats=10)).message
        assert lobby is not None
        join = next(c["custom_id"] for row in lobby.components for c in row["components"] if ":join:" in c["custom_id"])
        for person in h.players:
            assert not (await person.press(lobby, join)).ephemeral
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        gate = Gate(h.bot, "guild_settings")  # is_staff reads the server's judge role
        reply = h.judge.command(h.env.text, "mafia start")
        await deferred_while_held(h, clock, gate, reply)
        assert reply.ephemeral
        final = await reply.wait_final(timeout=10)
        assert final.content.startswith("Dealing the cards")
        assert reply.followups == []  # the answer took the thinking message's place


async def test_a_slow_read_defers_mafia_new_publicly_and_the_lobby_is_the_thinking_message() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.5) as h:
        h.judge.join_voice(h.env.voice)
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        gate = Gate(h.bot.store.tournaments, "table_at")  # is this channel a tournament's table?
        reply = h.judge.command(h.env.text, "mafia new", ruleset="classic", seats=10)
        await deferred_while_held(h, clock, gate, reply)
        assert not reply.ephemeral
        final = await reply.wait_final(timeout=10)
        lobby = h.bot.tables.lobby_in(h.env.text.id)
        assert lobby is not None
        assert lobby.message_id == final.id
        assert final.components  # the Join and Leave buttons are on it
        assert reply.followups == []
        join = next(c["custom_id"] for row in final.components for c in row["components"] if ":join:" in c["custom_id"])
        h.players[0].join_voice(h.env.voice)
        assert not (await h.players[0].press(final, join)).ephemeral


async def test_a_slow_read_defers_mafia_game_and_the_answer_replaces_the_thinking() -> None:
    async with harness(2, emulator_config=FAST) as h:
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        gate = Gate(h.store, "game_protocol")
        reply = h.judge.command(h.env.text, "mafia game", id=99)
        await deferred_while_held(h, clock, gate, reply)
        assert reply.ephemeral
        final = await reply.wait_final(timeout=10)
        assert final.content == t("en", "protocol.not_found", id=99)
        assert reply.followups == []


async def seated_tournament(h: Harness) -> ScriptedUser:
    """A one-table tournament announced, joined by every player and seated; its organiser."""
    admin = admin_of(h)
    announced = await admin.run_command(h.env.text, "mafia tournament new", title="Cup", ruleset="fiim",
                                        rounds=1, tables=1)
    assert announced.message is not None, announced.content
    (tm,) = await h.store.guild_tournaments(h.env.guild.id)
    for person in h.players:
        pressed = await person.press(announced.message, custom_id("tjoin", tm.id))
        assert pressed.followups or await pressed.wait_followups()
    seated = await admin.run_command(h.env.text, "mafia tournament seat")
    await seated.wait_final(timeout=60)
    return admin


async def test_a_slow_read_defers_tournament_round_publicly_and_the_round_takes_its_place() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin = await seated_tournament(h)
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        gate = Gate(h.store.tournaments, "guild_tournaments")
        channels: dict[str, Any] = {"text-1": h.env.text, "voice-1": h.env.voice, "judge-1": h.judge}
        reply = admin.command(h.env.text, "mafia tournament round", **channels)
        await deferred_while_held(h, clock, gate, reply)
        assert not reply.ephemeral
        final = await reply.wait_final(timeout=30)
        assert t("en", "tournament.round.title", name="Cup", round=1, rounds=1) in final.content
        told = await reply.wait_followups()
        assert told[-1].content == t("en", "tournament.round.told_all", round=1)


async def test_a_slow_read_defers_tournament_standings_publicly() -> None:
    async with harness(10, emulator_config=FAST) as h:
        await seated_tournament(h)
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        gate = Gate(h.store.tournaments, "guild_tournaments")
        reply = h.players[0].command(h.env.text, "mafia tournament standings")
        await deferred_while_held(h, clock, gate, reply)
        assert not reply.ephemeral
        final = await reply.wait_final(timeout=30)
        assert "Cup" in final.content


async def test_a_slow_read_that_ends_in_a_refusal_answers_privately_after_a_public_deferral() -> None:
    async with harness(2, emulator_config=FAST) as h:
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        gate = Gate(h.store.tournaments, "guild_tournaments")
        reply = h.players[0].command(h.env.text, "mafia tournament standings")
        await deferred_while_held(h, clock, gate, reply)
        assert not reply.ephemeral  # the public "thinking" goes, and the refusal is told privately
        (refused,) = await reply.wait_followups(1, timeout=10)
        assert refused.ephemeral_for == h.players[0].id
        assert refused.content.startswith("This server has no tournament yet")
        await h.wait(lambda: reply.message is not None and reply.message.deleted)
