"""One member's edits go out one at a time: Discord applies two requests in flight in either order.

A spectator's mute still on the wire when the game ends, followed at once by the end's unmute,
left the spectator muted whenever the unmute overtook the mute on the way (two connections, two
tokens: nothing orders them). Here "Discord" is scripted: it holds every edit until the test
answers it, and applies a later edit of the same member first, the worst order the network allows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mafiabot.core.mutes import MuteLifter
from mafiabot.core.nicks import Nickname, Rename, Renames
from mafiabot.core.records import MuteRecord, NickRecord
from mafiabot.core.voice import VoiceReconciler

GUILD, GAME, SPECTATOR, SEAT = 1, 2, 30, 10
AT = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Wire:
    """Member edits on their way to Discord, answered when the test says, the newest of a member applied first."""

    muted: dict[int, bool] = field(default_factory=dict)
    waiting: list[tuple[int, bool, asyncio.Future[None], bool]] = field(default_factory=list)
    """Edits on the wire: member, mute, the answer, whether Discord has applied it already."""
    overlapped: list[int] = field(default_factory=list)
    """Members with a second edit sent while their first was still unanswered."""
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        overtakes = any(user == user_id for user, _, _, _ in self.waiting)
        if overtakes:
            self.overlapped.append(user_id)
            self.muted[user_id] = mute  # applied before the one still on the wire, which lands after it
        answer = asyncio.get_running_loop().create_future()
        self.waiting.append((user_id, mute, answer, overtakes))
        self.arrived.set()
        await answer
        return True

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        return self.muted.get(user_id)

    async def next_edit(self) -> tuple[int, bool]:
        """Wait for an edit to be on the wire; the oldest one unanswered."""
        while not self.waiting:
            self.arrived.clear()
            await self.arrived.wait()
        user, mute, _, _ = self.waiting[0]
        return user, mute

    def answer_oldest(self) -> None:
        """Discord applies the oldest edit on the wire (unless it was applied when it overtook another) and answers."""
        user, mute, answer, applied = self.waiting.pop(0)
        if not applied:
            self.muted[user] = mute
        answer.set_result(None)


@dataclass
class Ledger:
    rows: set[int] = field(default_factory=set)

    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        self.rows.update(user_ids)

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        self.rows.difference_update(user_ids)


async def let_ready_tasks_run() -> None:
    """Let every task that can go on do so until each waits again (loop turns, not time)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_an_unmute_waits_for_the_mute_still_on_the_wire_so_the_end_leaves_nobody_muted() -> None:
    wire, ledger = Wire(muted={SPECTATOR: False, SEAT: False}), Ledger()
    voice = VoiceReconciler(wire, ledger, guild_id=GUILD, game_id=GAME)
    voice.start()
    try:
        voice.update({SEAT: False, SPECTATOR: True}, kind="play")  # the spectator walks in mid-game
        assert await wire.next_edit() == (SPECTATOR, True)
        voice.update({SEAT: False, SPECTATOR: False}, kind="end")  # the result, the mute still unanswered
        await let_ready_tasks_run()
        while wire.waiting:
            wire.answer_oldest()
            await let_ready_tasks_run()
        await asyncio.wait_for(voice.settled(), 5)
        assert wire.muted == {SEAT: False, SPECTATOR: False}
        assert wire.overlapped == []
        assert ledger.rows == set()
    finally:
        await voice.close()


async def test_a_floor_holder_who_passes_at_once_is_muted_after_their_unmute_is_answered() -> None:
    wire, ledger = Wire(muted={SEAT: True}), Ledger()
    voice = VoiceReconciler(wire, ledger, guild_id=GUILD, game_id=GAME)
    voice.recorded_already([SEAT])
    voice.start()
    try:
        voice.update({SEAT: False}, kind="play")  # the floor
        assert await wire.next_edit() == (SEAT, False)
        voice.update({SEAT: True}, kind="play")  # "thank you" before Discord answered
        await let_ready_tasks_run()
        while wire.waiting:
            wire.answer_oldest()
            await let_ready_tasks_run()
        await asyncio.wait_for(voice.settled(), 5)
        assert wire.muted == {SEAT: True}
        assert wire.overlapped == []
    finally:
        await voice.close()


async def test_a_kill_right_after_the_result_leaves_every_mute_discord_has_on_the_ledger() -> None:
    # The ledger is what a restarted bot lifts: a row cleared for an unmute that a mute still on the
    # wire overtook is a member nobody will ever unmute.
    wire, ledger = Wire(muted={SPECTATOR: False, SEAT: False}), Ledger()
    voice = VoiceReconciler(wire, ledger, guild_id=GUILD, game_id=GAME)
    voice.start()
    voice.update({SEAT: True, SPECTATOR: True}, kind="play")  # night falls
    await wire.next_edit()
    await let_ready_tasks_run()
    wire.answer_oldest()  # one of the two mutes answered, the other still on the wire
    await let_ready_tasks_run()
    voice.update({SEAT: False, SPECTATOR: False}, kind="end")  # the night's kill ends the game
    await let_ready_tasks_run()
    while wire.waiting:
        wire.answer_oldest()
        await let_ready_tasks_run()
    await asyncio.wait_for(voice.settled(), 5)
    # SIGKILL: the table is gone; a restarted bot lifts what the ledger says it owes.
    lifting = asyncio.ensure_future(MuteLifter(wire, OwedRows(ledger), list).after_restart(lambda guild_id: True))
    await let_ready_tasks_run()
    while not lifting.done():
        if wire.waiting:
            wire.answer_oldest()
        await let_ready_tasks_run()
    await lifting
    assert {user for user, muted in wire.muted.items() if muted} == set()


@dataclass
class OwedRows:
    """The ledger as the restarted bot reads it."""

    ledger: Ledger
    gate: asyncio.Event | None = None
    """When set, a clear waits for it: the test picks the moment the lift's write lands."""

    async def owed_mutes(self, guild_id: int | None = None) -> list[MuteRecord]:
        return [MuteRecord(GUILD, user, GAME, AT) for user in sorted(self.ledger.rows)]

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        if self.gate is not None:
            await self.gate.wait()
        self.ledger.rows.difference_update(user_ids)


@dataclass
class Resumed:
    """A running table as the mute lifter reads it: its guild, seats and reconciler."""

    voice: VoiceReconciler
    guild_id: int = GUILD
    seats: tuple[int, ...] = (SEAT,)
    over: bool = False


async def test_a_spectator_a_resumed_table_keeps_muted_is_not_lifted_under_it_and_is_unmuted_at_the_end() -> None:
    # A restart finds the spectator muted and on the ledger. Lifting that mute "because no table seats
    # them" raced the table, which muted them again: once the lift cleared the row and made the table
    # forget them, the table's own mute came back as someone else's, so the end left them muted.
    wire, ledger = Wire(muted={SPECTATOR: True, SEAT: True}), Ledger(rows={SPECTATOR, SEAT})
    voice = VoiceReconciler(wire, ledger, guild_id=GUILD, game_id=GAME)
    voice.recorded_already(ledger.rows)
    voice.start()
    table = Resumed(voice)
    voice.update({SEAT: True, SPECTATOR: True}, kind="start")
    await let_ready_tasks_run()
    rows = OwedRows(ledger, gate=asyncio.Event())
    lifting = asyncio.ensure_future(MuteLifter(wire, rows, lambda: [table]).after_restart(  # type: ignore[list-item]
        lambda guild_id: True))  # the lifter reads a table's guild_id, seats, over and voice
    await let_ready_tasks_run()
    if wire.waiting:  # the lift's unmute; the gateway reports it as soon as Discord answers
        user, mute = await wire.next_edit()
        wire.answer_oldest()
        voice.observe(user, mute)
        await let_ready_tasks_run()
    assert rows.gate is not None
    rows.gate.set()  # the lift's clear lands while the table's mute is on the wire
    await let_ready_tasks_run()
    while wire.waiting:
        user, mute = await wire.next_edit()
        wire.answer_oldest()
        voice.observe(user, mute)
        await let_ready_tasks_run()
    await lifting
    assert wire.muted[SPECTATOR] is True  # the table keeps them muted while it plays
    voice.update({SEAT: False, SPECTATOR: False}, kind="end")
    await let_ready_tasks_run()
    while wire.waiting:
        wire.answer_oldest()
        await let_ready_tasks_run()
    await asyncio.wait_for(voice.settled(), 5)
    await voice.close()
    assert wire.muted == {SEAT: False, SPECTATOR: False}
    assert ledger.rows == set()


@dataclass
class Names:
    """Discord's nicknames and the nickname ledger, for a table's seat nicknames."""

    nicks: dict[int, str | None] = field(default_factory=dict)
    renamed: list[tuple[int, str | None]] = field(default_factory=list)
    rows: set[int] = field(default_factory=set)

    def nickname(self, guild_id: int, user_id: int) -> Nickname:
        return Nickname(self.nicks.get(user_id), self.nicks.get(user_id) or "")

    async def set_nick(self, guild_id: int, user_id: int, nick: str | None) -> None:
        self.renamed.append((user_id, nick))
        self.nicks[user_id] = nick

    async def record_nicks(self, guild_id: int, old: Sequence[tuple[int, str | None]], game_id: int) -> None:
        self.rows.update(user for user, _ in old)

    async def clear_nicks(self, guild_id: int, user_ids: Iterable[int]) -> None:
        self.rows.difference_update(user_ids)

    async def owed_nicks(self, guild_id: int | None = None) -> list[NickRecord]:
        return [NickRecord(GUILD, user, GAME, None) for user in sorted(self.rows)]


async def test_an_old_nickname_that_reads_like_the_seat_one_is_given_back_once_and_the_end_settles() -> None:
    # A player still called by a number when the game started (a stale name the bot read) has that
    # number as the name to give back. Giving it back looked like numbering them, so the reconciler
    # gave it back again and again, and the table's end never settled.
    wire, ledger = Wire(muted={SEAT: False}), Ledger()
    names = Names(nicks={SEAT: "1 · Anya"}, rows={SEAT})
    voice = VoiceReconciler(wire, ledger, guild_id=GUILD, game_id=GAME)
    voice.renames = Renames(names, names, GUILD, {SEAT: "1 · Anya"}, {SEAT: "1 · Anya"}, applied={SEAT})
    voice.start()
    try:
        voice.update({SEAT: False}, kind="end")  # the holder of the last floor: unmuted already
        await let_ready_tasks_run()
        await asyncio.wait_for(voice.settled(), 5)
        assert names.renamed == [(SEAT, "1 · Anya")]
        assert names.rows == set()
    finally:
        await voice.close()
