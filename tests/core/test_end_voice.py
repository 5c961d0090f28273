"""An ended game's unmutes wait for its result message, whatever asks the table for its mutes meanwhile.

A voice update that arrives between the game's end and the result's post (the echo of the last
speaker's mute, a spectator walking in) used to unmute the table before it saw the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

import pytest

from engine import CLASSIC, DeclareDraw, Event, Game, Phase, StartGame
from mafiabot.core.clock import ManualClock
from mafiabot.core.nicks import Rename
from mafiabot.core.ports import Reply
from mafiabot.core.runtime import Lobby, Table
from tests.core.test_timers import JUDGE, PLAYERS, Effects, Listener, Log, Voice, settle, until


@dataclass
class HeldEffects(Effects):
    """Effects whose result message is not posted until the test says so (the sender drains after it)."""

    held: list[Callable[[], None]] = field(default_factory=list)
    posted: asyncio.Event = field(default_factory=asyncio.Event)

    def post(self) -> None:
        """The result message is out."""
        self.held.pop()()
        self.posted.set()

    async def finished(self, table: Table) -> None:
        await self.posted.wait()

    def publish(
        self,
        table: Table,
        events: Sequence[Event],
        reply: Reply | None = None,
        shown: Callable[[], None] | None = None,
    ) -> None:
        self.events.extend(events)
        if shown is not None:
            if table.over:
                self.held.append(shown)
            else:
                shown()


class NotedVoice(Voice):
    """Every edit goes through and is noted: (member, mute)."""

    def __init__(self) -> None:
        self.edits: list[tuple[int, bool]] = []

    async def set_mute(
        self,
        guild_id: int,
        user_id: int,
        *,
        mute: bool,
        still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None,
        table: int | None = None,
        batch: bool = False,
    ) -> bool:
        self.edits.append((user_id, mute))
        return True


@dataclass
class Ending:
    table: Table
    effects: HeldEffects
    voice: NotedVoice


@pytest.fixture
async def ending() -> AsyncIterator[Ending]:
    """A classic table in Night 0 with its start mutes sent."""
    clock, log, voice = ManualClock(), Log(), NotedVoice()
    lobby = Lobby(
        id=1,
        guild_id=10,
        channel_id=20,
        voice_channel_id=30,
        judge_id=JUDGE,
        ruleset=CLASSIC,
        language="en",
        seats=len(PLAYERS),
        players=list(PLAYERS),
    )
    effects = HeldEffects(clock)
    table = Table(
        game_id=1,
        lobby=lobby,
        seats=PLAYERS,
        game=Game(CLASSIC),
        log_store=log,
        effects=effects,
        listener=Listener(),
        editor=voice,
        ledger=voice,
        time_scale=1.0,
        clock=clock,
    )
    table.start_effects(await table.submit_start(StartGame(players=len(PLAYERS), seed=7), PLAYERS))
    assert table.game.state.phase is Phase.NIGHT_ZERO
    await until(lambda: table.timer_armed)
    try:
        yield Ending(table, effects, voice)
    finally:
        table.stop()
        await table.voice.close()


async def test_a_voice_update_before_the_result_unmutes_nobody(ending: Ending) -> None:
    table, effects, voice = ending.table, ending.effects, ending.voice
    assert {user for user, mute in voice.edits if mute} == {user for user, _ in PLAYERS}
    before = len(voice.edits)

    await table.submit(DeclareDraw(), actor=JUDGE)
    await settle()
    assert table.over
    assert len(effects.held) == 1
    table.refresh_voice()  # what a voice update in the table's channel does
    await settle()
    assert voice.edits[before:] == [], "the table was unmuted before the result was posted"

    effects.post()
    await until(lambda: len(voice.edits) >= before + len(PLAYERS))
    assert {user for user, mute in voice.edits[before:] if not mute} == {user for user, _ in PLAYERS}
