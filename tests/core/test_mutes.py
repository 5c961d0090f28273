"""Owed mutes after a crash: which are lifted, when, and what a failed lift leaves on the ledger."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mafiabot.core.mutes import MuteLifter, owed_unmutes
from mafiabot.core.nicks import Rename
from mafiabot.core.records import MuteRecord
from mafiabot.core.voice import NotInVoiceError

AT = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Ledger:
    """The mute ledger as a set of (guild, member) rows."""

    rows: set[tuple[int, int]] = field(default_factory=set)

    async def owed_mutes(self, guild_id: int | None = None) -> list[MuteRecord]:
        return [MuteRecord(g, u, None, AT) for g, u in sorted(self.rows) if guild_id in (None, g)]

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        self.rows -= {(guild_id, u) for u in user_ids}


@dataclass
class Editor:
    """Discord's member edits: who is out of voice, whose edit fails, and every unmute sent."""

    away: set[int] = field(default_factory=set)
    broken: set[int] = field(default_factory=set)
    unmuted: list[tuple[int, int]] = field(default_factory=list)

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        assert not mute
        assert batch, "no table waits for a lifted mute: it goes behind the guild's floor changes"
        if user_id in self.away:
            raise NotInVoiceError
        if user_id in self.broken:
            raise RuntimeError("Discord answered 500")
        self.unmuted.append((guild_id, user_id))
        return True

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        return None if user_id in self.away else True


@dataclass
class Voice:
    forgotten: list[int] = field(default_factory=list)
    adopted: list[int] = field(default_factory=list)
    muted: set[int] = field(default_factory=set)
    """Members the table wants muted now (its spectators; its seats are ``Seating.seats``)."""

    def forget(self, user_id: int) -> None:
        self.forgotten.append(user_id)

    def keeps_muted(self, user_id: int) -> bool:
        return user_id in self.muted

    def adopt(self, user_id: int) -> None:
        self.adopted.append(user_id)


@dataclass
class Seating:
    """What the lifter reads of a running table."""

    guild_id: int
    seats: list[int]
    over: bool = False
    voice: Voice = field(default_factory=Voice)


def lifter(ledger: Ledger, editor: Editor, tables: list[Seating]) -> MuteLifter:
    running: Any = tables  # the lifter reads only guild_id, seats, over and voice of a table
    return MuteLifter(editor, ledger, lambda: running)


def test_after_a_restart_every_mute_no_table_keeps_is_owed_on_this_process_guilds() -> None:
    owed = [MuteRecord(1, 10, 5, AT), MuteRecord(1, 11, 5, AT), MuteRecord(2, 10, 6, AT), MuteRecord(3, 12, 7, AT)]
    tables: Any = [Seating(1, [11, 13])]
    assert owed_unmutes(owed, tables, owns_guild=lambda g: g != 3) == [(1, 10), (2, 10)]


async def test_an_owed_mute_is_lifted_then_cleared_and_a_seated_one_is_left_to_its_table() -> None:
    ledger, editor = Ledger({(1, 10), (1, 11), (2, 12)}), Editor()
    table = Seating(1, [11])
    await lifter(ledger, editor, [table]).after_restart(lambda g: True)
    assert editor.unmuted == [(1, 10), (2, 12)]
    assert ledger.rows == {(1, 11)}
    assert table.voice.forgotten == [10]  # the table sorts the member's next mute anew


async def test_a_spectator_a_running_table_keeps_muted_is_left_to_it_and_its_row_becomes_the_tables() -> None:
    ledger, editor = Ledger({(1, 30), (1, 31)}), Editor()
    table = Seating(1, [11], voice=Voice(muted={30}))  # 30 watches in the table's channel, 31 left long ago
    lifts = lifter(ledger, editor, [table])
    await lifts.after_restart(lambda g: True)
    assert editor.unmuted == [(1, 31)]
    assert ledger.rows == {(1, 30)}
    await lifts.returned(1, 30, muted=True)  # walks back in: still the table's, whose end lifts it
    assert editor.unmuted == [(1, 31)]
    assert table.voice.adopted == [30]


async def test_a_member_out_of_voice_keeps_the_row_and_is_lifted_on_return_only_if_muted() -> None:
    ledger, editor = Ledger({(1, 10)}), Editor(away={10})
    lifts = lifter(ledger, editor, [])
    await lifts.lift(1, 10)
    assert ledger.rows == {(1, 10)}
    editor.away.clear()
    await lifts.returned(1, 10, muted=False)
    assert editor.unmuted == []
    await lifts.returned(1, 11, muted=True)  # not the bot's mute
    assert editor.unmuted == []
    await lifts.returned(1, 10, muted=True)
    assert editor.unmuted == [(1, 10)]
    assert ledger.rows == set()


async def test_a_failed_lift_keeps_the_row_and_a_finished_table_no_longer_holds_the_mute() -> None:
    ledger, editor = Ledger({(1, 10)}), Editor(broken={10})
    table = Seating(1, [10])
    lifts = lifter(ledger, editor, [table])
    await lifts.lift(1, 10)
    assert editor.unmuted == []  # seated at a running table: its reconciler decides
    table.over = True
    await lifts.lift(1, 10)
    assert ledger.rows == {(1, 10)}  # the edit failed: still owed
    editor.broken.clear()
    await lifts.lift(1, 10)
    assert editor.unmuted == [(1, 10)]
    assert ledger.rows == set()
