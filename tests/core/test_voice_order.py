"""One member's edits go out one at a time: Discord applies two requests in flight in either order.

A spectator's mute still on the wire when the game ends, followed at once by the end's unmute,
left the spectator muted whenever the unmute overtook the mute on the way (two connections, two
tokens: nothing orders them). Here "Discord" is scripted: it holds every edit until the test
answers it, and applies a later edit of the same member first, the worst order the network allows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mafiabot.core.nicks import Rename
from mafiabot.core.voice import VoiceReconciler

GUILD, GAME, SPECTATOR, SEAT = 1, 2, 30, 10


@dataclass
class Wire:
    """Member edits on their way to Discord, answered when the test says, the newest of a member applied first."""

    muted: dict[int, bool] = field(default_factory=dict)
    waiting: list[tuple[int, bool, asyncio.Future[None]]] = field(default_factory=list)
    overlapped: list[int] = field(default_factory=list)
    """Members with a second edit sent while their first was still unanswered."""
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        if any(user == user_id for user, _, _ in self.waiting):
            self.overlapped.append(user_id)
            self.muted[user_id] = mute  # it overtakes the one still on the wire
        answer = asyncio.get_running_loop().create_future()
        self.waiting.append((user_id, mute, answer))
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
        user, mute, _ = self.waiting[0]
        return user, mute

    def answer_oldest(self) -> None:
        """Discord applies the oldest edit on the wire (unless a newer one of the member overtook it) and answers."""
        user, mute, answer = self.waiting.pop(0)
        if user not in self.overlapped:
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
        assert wire.overlapped == []
        assert wire.muted == {SEAT: False, SPECTATOR: False}
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
        assert wire.overlapped == []
        assert wire.muted == {SEAT: True}
    finally:
        await voice.close()
