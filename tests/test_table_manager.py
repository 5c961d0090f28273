"""The table manager on its ports alone: no Discord, no database, time on a manual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import Game, Ruleset, StartGame, find_ruleset
from mafiabot.core.errors import ChannelTakenError
from mafiabot.core.fairplay import Alert
from mafiabot.core.nicks import Blocked, Rename
from mafiabot.core.records import GuildSettings, MuteRecord, StoredGame
from mafiabot.core.runtime import CueSink, Effects, Lobby, Table, TableError
from mafiabot.core.tables import (
    OPENING_NOTICE_SECONDS,
    Seated,
    TableManager,
    TableOptions,
    helpers_for,
    opening_seconds,
)

GUILD, TEXT, VOICE, JUDGE = 1, 10, 20, 100


@dataclass
class Handle:
    at: float
    call: Callable[[], object]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A ``TableClock`` that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pending: list[Handle] = []

    def time(self) -> float:
        return self.now

    def wall(self, at: float) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=at)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Handle:
        handle = Handle(self.now + delay, lambda: callback(*args))
        self.pending.append(handle)
        return handle

    def advance(self, seconds: float) -> int:
        """Move on by ``seconds`` and make the calls that fell due; how many there were."""
        self.now += seconds
        due = [h for h in self.pending if h.at <= self.now and not h.cancelled]
        self.pending = [h for h in self.pending if h not in due and not h.cancelled]
        for handle in due:
            handle.call()
        return len(due)


@dataclass
class Records:
    """The store's table rows, in memory."""

    next_id: int = 1
    lobbies: dict[int, tuple[int, int]] = field(default_factory=dict)
    dropped: list[int] = field(default_factory=list)

    async def open_lobby(
        self, *, guild_id: int, channel_id: int, voice_channel_id: int, judge_id: int, ruleset: Ruleset,
        language: str = "en",
    ) -> int:
        for text, voice in self.lobbies.values():
            if voice == voice_channel_id:
                raise ChannelTakenError("voice")
            if text == channel_id:
                raise ChannelTakenError("channel")
        game_id, self.next_id = self.next_id, self.next_id + 1
        self.lobbies[game_id] = (channel_id, voice_channel_id)
        return game_id

    async def start_lobby(self, game_id: int) -> bool:
        return self.lobbies.pop(game_id, None) is not None

    async def drop_lobby(self, game_id: int) -> None:
        self.lobbies.pop(game_id, None)
        self.dropped.append(game_id)

    async def drop_lobbies(
        self, guild_filter: Callable[[int], bool] | None = None, *, keep: Iterable[int] = ()
    ) -> None:
        kept = set(keep)
        self.lobbies = {k: v for k, v in self.lobbies.items() if k in kept}

    async def abandon_unstarted(
        self, guild_filter: Callable[[int], bool] | None = None, *, keep: Iterable[int] = ()
    ) -> list[int]:
        return []

    async def release_channel(self, channel_id: int, *, unstarted_only: bool = False) -> list[int]:
        return []

    async def open_games(self, guild_filter: Callable[[int], bool] | None = None) -> list[StoredGame]:
        return []

    async def owed_mutes(self, guild_id: int | None = None) -> list[MuteRecord]:
        return []

    async def clear_mute(self, guild_id: int, user_id: int) -> None:
        pass

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        pass


@dataclass(frozen=True)
class Named:
    key: str
    ruleset: Ruleset


class Rulesets:
    async def find(self, guild_id: int, name: str) -> Named | None:
        return Named("classic", find_ruleset("classic")) if name == "classic" else None

    async def available(self, guild_id: int) -> Sequence[Named]:
        return [Named("classic", find_ruleset("classic"))]


@dataclass
class Settings:
    settings: GuildSettings

    async def guild_settings(self, guild_id: int) -> GuildSettings:
        return self.settings


@dataclass
class Places:
    missing: list[str] = field(default_factory=list)

    def missing_permissions(self, guild_id: int, channel_id: int, voice_id: int) -> list[str]:
        return self.missing

    def spectators(self, guild_id: int, voice_channel_id: int) -> list[int]:
        return []

    async def powers(
        self, guild_id: int, channel_id: int, voice_id: int, user_ids: Sequence[int],
    ) -> dict[int, tuple[str, ...]]:
        return {}


class Side:
    """The Discord side, as far as lobbies go: it hears of expired lobbies and names powers."""

    def __init__(self) -> None:
        self.expired: asyncio.Queue[tuple[int, int]] = asyncio.Queue()

    @property
    def effects(self) -> Effects:
        raise AssertionError("no table is built in these tests")

    def fair_play(self, table: Table, alert: Alert) -> None:
        raise AssertionError("no table is built in these tests")

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        raise AssertionError("no table is built in these tests")

    def cues(self, table: Table) -> CueSink:
        raise AssertionError("no table is built in these tests")

    def resumed(self, table: Table) -> None:
        raise AssertionError("no table is built in these tests")

    async def catch_up_votes(self, table: Table) -> None:
        raise AssertionError("no table is built in these tests")

    def powers_text(self, language: str, powers: Sequence[str]) -> str:
        return f"{language}:{'+'.join(powers)}"

    def holders_text(self, language: str, holders: Sequence[tuple[int, Sequence[str]]]) -> str:
        return "; ".join(f"{user}={self.powers_text(language, powers)}" for user, powers in holders)

    async def lobby_expired(self, lobby: Lobby, minutes: int) -> None:
        await self.expired.put((lobby.id, minutes))

    def slow_opening(self, table: Table, *, tables: int, seconds: int, helpers: int) -> None:
        raise AssertionError("no table is built in these tests")


class Editor:
    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        raise AssertionError("no mute is lifted in these tests")

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        return None


class Log:
    async def append(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("no game is played in these tests")

    async def set_timer(self, *args: Any) -> None:
        raise AssertionError("no game is played in these tests")

    async def seat_players(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("no game is played in these tests")

    async def set_discord_meta(self, *args: Any) -> None:
        raise AssertionError("no game is played in these tests")

    async def finish_game(self, *args: Any) -> None:
        raise AssertionError("no game is played in these tests")

    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        raise AssertionError("no mute is made in these tests")

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        raise AssertionError("no mute is made in these tests")


@dataclass
class World:
    manager: TableManager
    clock: ManualClock
    records: Records
    side: Side
    places: Places


def world(*, strict: bool = False, idle_minutes: float = 30.0) -> World:
    clock, records, side, places, log = ManualClock(), Records(), Side(), Places(), Log()
    manager = TableManager(
        records=records, game_log=log, ledger=log, editor=Editor(),
        settings=Settings(GuildSettings(GUILD, strict_tables=strict)), rulesets=Rulesets(), places=places,
        side=side, options=TableOptions(lobby_idle_minutes=idle_minutes), clock=clock, table_clock=ManualClock,
        owns_guild=lambda guild_id: True,
    )
    return World(manager, clock, records, side, places)


async def open_lobby(w: World, **kwargs: Any) -> Lobby:
    options: dict[str, Any] = {
        "guild_id": GUILD, "channel_id": TEXT, "voice_channel_id": None, "judge": Seated(JUDGE, "judge", VOICE),
        "ruleset_name": None, "seats": None,
    }
    return await w.manager.open_lobby(**(options | kwargs))


async def test_an_idle_lobby_closes_on_the_managers_clock_and_a_join_starts_its_time_again() -> None:
    w = world(idle_minutes=2)
    lobby = await open_lobby(w)
    lobby.message_id = 555
    assert w.clock.advance(90) == 0
    w.manager.join(lobby.id, Seated(1, "one", VOICE))
    assert w.clock.advance(60) == 0  # two minutes since the lobby opened, one and a half since the join
    assert w.manager.lobbies == {lobby.id: lobby}
    assert w.clock.advance(60) == 1
    assert await w.side.expired.get() == (lobby.id, 2)
    assert w.manager.lobbies == {}
    assert w.records.dropped == [lobby.id]


async def test_a_lobby_refuses_a_second_table_in_its_channels() -> None:
    w = world()
    await open_lobby(w)
    with pytest.raises(TableError) as busy:
        await open_lobby(w)
    assert busy.value.code == "lobby.channel_busy"
    with pytest.raises(TableError) as voice:
        await open_lobby(w, channel_id=TEXT + 1)
    assert (voice.value.code, voice.value.data) == ("lobby.voice_busy", {"voice": VOICE})


async def test_a_lobby_needs_a_known_ruleset_then_the_bots_permissions() -> None:
    w = world()
    w.places.missing = ["manage_threads"]
    with pytest.raises(TableError) as unknown:
        await open_lobby(w, ruleset_name="nonesuch")
    assert (unknown.value.code, unknown.value.data) == (
        "lobby.unknown_ruleset", {"ruleset": "nonesuch", "known": "classic"}
    )
    with pytest.raises(TableError) as missing:
        await open_lobby(w)
    assert (missing.value.code, missing.value.data) == ("lobby.missing_permissions", {"permissions": "manage_threads"})
    assert w.manager.lobbies == {}


async def test_the_creator_must_sit_in_the_voice_channel_unless_they_may_manage_it() -> None:
    w = world()
    elsewhere = Seated(JUDGE, "judge", VOICE + 1)
    with pytest.raises(TableError) as refused:
        await open_lobby(w, voice_channel_id=VOICE, judge=elsewhere)
    assert (refused.value.code, refused.value.data) == ("lobby.creator_not_in_voice", {"voice": VOICE})
    lobby = await open_lobby(w, voice_channel_id=VOICE, judge=elsewhere, manage_channels=True)
    assert lobby.voice_channel_id == VOICE


async def test_a_strict_table_refuses_a_player_with_powers_in_the_tables_language() -> None:
    w = world(strict=True)
    lobby = await open_lobby(w)
    with pytest.raises(TableError) as refused:
        w.manager.join(lobby.id, Seated(1, "admin", VOICE, powers=("administrator",)))
    assert (refused.value.code, refused.value.data) == ("lobby.strict", {"powers": "en:administrator"})
    assert w.manager.join(lobby.id, Seated(2, "plain", VOICE)).players == [(2, "plain")]


def test_a_rounds_start_mutes_take_a_window_per_bucketful_and_helpers_share_them() -> None:
    """Discord's 5 member edits per 5 s per token and guild: the figures the judge is told."""
    assert opening_seconds(10, 1) == 5.0  # one table of ten: the second five wait one window
    assert opening_seconds(40, 1) == 35.0  # four tables starting in the same second, one token
    assert opening_seconds(40, 4) == 5.0
    assert opening_seconds(120, 1) == 115.0
    assert opening_seconds(0, 1) == 0.0
    assert helpers_for(40) == 1  # 4 windows in 15 s: 20 edits per token
    assert helpers_for(48) == 2
    assert helpers_for(120) == 5
    assert helpers_for(20) == 0
    for edits in (12, 40, 48, 100, 120):
        assert opening_seconds(edits, 1 + helpers_for(edits)) <= OPENING_NOTICE_SECONDS
        assert opening_seconds(edits, helpers_for(edits)) > OPENING_NOTICE_SECONDS or helpers_for(edits) == 0


class Opening:
    """The ports a few tables need to open: Discord answers no member edit until ``answer`` is set."""

    def __init__(self) -> None:
        self.answer = asyncio.Event()
        self.told: list[tuple[int, int, int, int]] = []

    # the member editor: everyone is in voice and unmuted; an edit waits for Discord's answer
    async def set_mute(self, guild_id: int, user_id: int, **kwargs: Any) -> bool:
        await self.answer.wait()
        return True

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        return False

    # the ledger and the game log: kept nowhere
    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        pass

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        pass

    async def append(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def set_timer(self, *args: Any) -> None:
        pass

    async def seat_players(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def set_discord_meta(self, *args: Any) -> None:
        pass

    async def finish_game(self, *args: Any) -> None:
        pass

    # the presenter: the opening is on Discord at once
    def publish(self, table: Table, events: Sequence[Any], reply: Any = None,
                shown: Callable[[], None] | None = None) -> None:
        if shown is not None:
            shown()

    def warn(self, table: Table, seat: int) -> None:
        pass

    async def finished(self, table: Table) -> None:
        pass


class OpeningSide(Side):
    def __init__(self, opening: Opening) -> None:
        super().__init__()
        self.opening = opening

    @property
    def effects(self) -> Effects:
        return self.opening

    def slow_opening(self, table: Table, *, tables: int, seconds: int, helpers: int) -> None:
        self.opening.told.append((table.id, tables, seconds, helpers))


async def open_round(count: int, helpers: int) -> tuple[list[Table], Opening]:
    """``count`` ten-seat tables of one guild start in the same second; their start mutes stay unanswered."""
    opening = Opening()
    manager = TableManager(
        records=Records(), game_log=opening, ledger=opening, editor=opening, settings=Settings(GuildSettings(GUILD)),
        rulesets=Rulesets(), places=Places(), side=OpeningSide(opening),
        options=TableOptions(helper_tokens=helpers), clock=ManualClock(), table_clock=ManualClock,
        owns_guild=lambda guild_id: True,
    )
    classic = find_ruleset("classic")
    tables = []
    for i in range(count):
        seats = [(1000 * (i + 1) + s, f"p{s}") for s in range(1, 11)]
        lobby = Lobby(id=i + 1, guild_id=GUILD, channel_id=TEXT + i, voice_channel_id=VOICE + 100 + i, judge_id=JUDGE,
                      ruleset=classic, language="en", seats=10, players=seats)
        table = manager._make_table(i + 1, lobby, seats, Game(classic), GuildSettings(GUILD))
        manager.tables.add(table)
        table.start_effects(await table.submit_start(StartGame(players=10, seed=i), seats))
        tables.append(table)
    return tables, opening


async def close_round(tables: list[Table], opening: Opening) -> None:
    opening.answer.set()
    for table in tables:
        table.stop()
        await table.voice.close()


async def test_night_zero_waits_for_the_start_mutes_and_a_long_wait_is_told_with_the_helpers_it_needs() -> None:
    tables, opening = await open_round(4, helpers=0)
    try:
        assert all(t.opening and not t.timer_armed for t in tables)  # shown, but the players can still talk
        # 10, 20, 30, 40 start mutes on one token: 5, 15, 25, 35 s. Past 15 s the judges hear of it,
        # those of the tables that started first too: taking turns, they wait as long as the last.
        assert opening.told == [(1, 3, 25, 1), (2, 3, 25, 1), (3, 3, 25, 1), (4, 4, 35, 1)]
        opening.answer.set()
        for table in tables:
            await table.voice.settled()
        for _ in range(20):
            await asyncio.sleep(0)
        assert all(t.timer_armed and not t.opening for t in tables)
    finally:
        await close_round(tables, opening)


async def test_a_round_the_helpers_open_in_time_is_not_told() -> None:
    tables, opening = await open_round(4, helpers=1)
    try:
        assert all(t.opening for t in tables)
        assert opening.told == []
    finally:
        await close_round(tables, opening)
