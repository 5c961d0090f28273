"""A table's timers on a manual clock: deadlines, the warning, pause, extend, the store's retry and recovery.

The table is built from the core alone: an in-memory game log (the rows it was asked to append),
effects that note what they were shown, a member editor that always succeeds. Time moves only when
a test advances the clock, so every deadline is met exactly and no test waits on the machine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest

from engine import (
    CLASSIC,
    DeclareDraw,
    EndSpeech,
    Event,
    Game,
    Nominate,
    Pause,
    Phase,
    Resume,
    RulesError,
    StartGame,
    Timeout,
    command_from_data,
)
from engine import events as ev
from mafiabot.core.clock import ManualClock
from mafiabot.core.fairplay import Alert
from mafiabot.core.nicks import Blocked, Rename
from mafiabot.core.ports import Reply
from mafiabot.core.records import JSON, GameFinal, SeatInfo
from mafiabot.core.runtime import STORE_RETRY_SECONDS, WARNING_SECONDS, Lobby, Table

PLAYERS = [(100 + seat, f"player {seat}") for seat in range(1, 11)]
JUDGE = 99
SPEECH = CLASSIC.speech_seconds


@dataclass
class Log:
    """The game log as a list: what was appended, every timer it was told of, and refusals on demand."""

    rows: list[tuple[int, Mapping[str, JSON], datetime]] = field(default_factory=list)
    timers: list[tuple[int, datetime | None, float | None]] = field(default_factory=list)
    refuse: int = 0
    """How many of the next appends fail, as a store that is down would."""
    refused: int = 0
    gate: asyncio.Event | None = None
    """When set, each append waits for it, as a slow store would."""
    timer_gate: asyncio.Event | None = None
    """When set, each timer's write waits for it."""

    async def append(
        self, game_id: int, seq: int, command: Mapping[str, JSON], events: Sequence[Mapping[str, JSON]], *,
        actor_id: int | None, at: datetime,
    ) -> None:
        if self.gate is not None:
            await self.gate.wait()
        if self.refuse:
            self.refuse -= 1
            self.refused += 1
            raise OSError("the database is down")
        assert seq == len(self.rows) + 1
        self.rows.append((seq, command, at))

    async def set_timer(self, game_id: int, timer_id: int, deadline: datetime | None, remaining: float | None) -> None:
        if self.timer_gate is not None:
            await self.timer_gate.wait()
        self.timers.append((timer_id, deadline, remaining))

    async def seat_players(
        self, game_id: int, seats: Sequence[SeatInfo], *, muting_in: int | None = None,
        muting: Sequence[int] | None = None,
    ) -> None:
        pass

    async def set_discord_meta(self, game_id: int, meta: Mapping[str, JSON]) -> None:
        pass

    async def finish_game(self, game_id: int, final: GameFinal) -> None:
        pass

    def commands(self) -> list[str]:
        """The appended commands' types, in order."""
        return [str(command["type"]) for _, command, _ in self.rows]


@dataclass
class Effects:
    """What the table showed: its events, and each ten-second warning with the clock's time."""

    clock: ManualClock
    events: list[Event] = field(default_factory=list)
    warnings: list[tuple[int, float]] = field(default_factory=list)

    def publish(
        self, table: Table, events: Sequence[Event], reply: Reply | None = None,
        shown: Callable[[], None] | None = None,
    ) -> None:
        self.events.extend(events)
        if shown is not None:
            shown()  # shown at once: nothing stands between this table and its players

    def warn(self, table: Table, seat: int) -> None:
        self.warnings.append((seat, self.clock.time()))

    async def finished(self, table: Table) -> None:
        pass


@dataclass
class Listener:
    """What the table told whoever runs it: its moves, its end, its alerts, seats left unnumbered, openings."""

    moves: int = 0
    ends: list[bool] = field(default_factory=list)
    """Once per end: whether ``done`` was already set when the end was told (it is not yet)."""
    alerts: list[Alert] = field(default_factory=list)
    blocked: list[list[tuple[int, Blocked]]] = field(default_factory=list)
    openings: int = 0

    def moved(self, table: Table) -> None:
        self.moves += 1

    def ended(self, table: Table) -> None:
        self.ends.append(table.done.is_set())

    def alert(self, table: Table, alert: Alert) -> None:
        self.alerts.append(alert)

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        self.blocked.append(blocked)

    def opening_waits(self, table: Table) -> None:
        self.openings += 1


class Voice:
    """Every member sits in voice unmuted, and every edit goes through; the ledger keeps nothing."""

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        return True

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        return False

    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        pass

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        pass


def make_table(
    clock: ManualClock, log: Log, game: Game | None = None, listener: Listener | None = None,
) -> tuple[Table, Effects]:
    lobby = Lobby(
        id=1, guild_id=10, channel_id=20, voice_channel_id=30, judge_id=JUDGE, ruleset=CLASSIC, language="en",
        seats=len(PLAYERS), players=list(PLAYERS),
    )
    effects = Effects(clock)
    voice = Voice()
    table = Table(
        game_id=1, lobby=lobby, seats=PLAYERS, game=game or Game(CLASSIC), log_store=log, effects=effects,
        listener=listener or Listener(), editor=voice, ledger=voice, time_scale=1.0, clock=clock,
    )
    return table, effects


async def until(predicate: Callable[[], object]) -> None:
    """Let the loop run the table's own tasks (a timeout, a store write) until ``predicate`` holds.

    Nothing here waits on I/O, so a few turns of the loop are enough; no time passes on the clock.
    """
    for _ in range(200):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("the table did not get there")


async def settle() -> None:
    """Let every task the table has started run as far as it can (without the clock moving)."""
    for _ in range(20):
        await asyncio.sleep(0)


def floor_seat(table: Table) -> int | None:
    floor = table.game.state.floor
    return floor.seat if floor is not None else None


def ended(effects: Effects, seat: int) -> list[ev.FloorEnded]:
    return [e for e in effects.events if isinstance(e, ev.FloorEnded) and e.seat == seat]


@dataclass
class Running:
    clock: ManualClock
    log: Log
    table: Table
    effects: Effects


@pytest.fixture
async def day() -> AsyncIterator[Running]:
    """A classic table on the first speech of day 1, reached by night 0's timer running out."""
    clock, log = ManualClock(), Log()
    table, effects = make_table(clock, log)
    table.start_effects(await table.submit_start(StartGame(players=len(PLAYERS), seed=7), PLAYERS))
    assert table.game.state.phase is Phase.NIGHT_ZERO
    await until(lambda: table.timer_armed)  # once the start mutes are answered
    clock.advance(CLASSIC.night_zero_seconds)
    await until(lambda: table.game.state.phase is Phase.SPEECHES)
    await until(lambda: log.timers and log.timers[-1][0] == table.game.state.timer)
    try:
        yield Running(clock, log, table, effects)
    finally:
        table.stop()
        await table.voice.close()


async def test_a_speech_ends_at_its_deadline_and_the_floor_moves_on(day: Running) -> None:
    clock, table, log = day.clock, day.table, day.log
    holder = floor_seat(table)
    assert holder == 1
    started = clock.time()
    assert table.deadline() == clock.wall(started + SPEECH)
    assert table.remaining() == SPEECH
    assert log.timers[-1] == (table.game.state.timer, clock.wall(started + SPEECH), None)

    clock.advance(SPEECH - 1)
    await settle()
    assert floor_seat(table) == holder
    assert table.remaining() == 1
    assert log.commands()[-1] == "Timeout"  # night 0's; this speech's is not stored yet
    stored = len(log.rows)

    clock.advance(1)
    await until(lambda: floor_seat(table) != holder)
    assert floor_seat(table) == 2
    assert len(log.rows) == stored + 1
    assert [e.reason for e in ended(day.effects, holder)] == ["timeout"]
    _, command, at = log.rows[-1]
    step = command["step"]
    assert isinstance(step, int)
    assert command_from_data(command) == Timeout(step=step)
    assert at == clock.wall(started + SPEECH)  # stored at the clock's time, not the machine's
    assert table.deadline() == clock.wall(started + 2 * SPEECH)


async def test_the_table_is_quiet_only_once_a_fired_timeout_is_applied_and_stored(day: Running) -> None:
    """Between a timer firing and its command stored, the state has moved but the table is not quiet.

    A driver reads the state and the clock only when the table is quiet: mid-command it would see
    the next floor holder with no speech timer armed yet.
    """
    clock, table, log = day.clock, day.table, day.log
    assert table.idle
    holder = floor_seat(table)
    log.gate = asyncio.Event()
    clock.advance(SPEECH)
    assert not table.idle  # the timeout is on its way before any of it has run
    quiet = asyncio.ensure_future(table.quiet())
    await settle()
    assert floor_seat(table) != holder  # applied, not yet stored
    assert not table.timer_armed
    assert not quiet.done()
    log.gate.set()
    await quiet
    assert table.idle
    assert table.timer_armed


async def test_the_table_is_quiet_only_once_its_new_timer_is_stored(day: Running) -> None:
    """The stored game holds the running timer's deadline: a reader of the store once the table is quiet
    (a test comparing every row before and after a refusal) must not see it land later."""
    clock, table, log = day.clock, day.table, day.log
    log.timer_gate = asyncio.Event()
    stored = len(log.timers)
    clock.advance(SPEECH)
    quiet = asyncio.ensure_future(table.quiet())
    await until(lambda: table.timer_armed)
    await settle()
    assert len(log.timers) == stored  # the next speech's timer is armed, its write held back
    assert not quiet.done()
    assert not table.idle
    log.timer_gate.set()
    await quiet
    assert len(log.timers) > stored


async def test_the_warning_comes_ten_seconds_before_the_end(day: Running) -> None:
    clock, table, effects = day.clock, day.table, day.effects
    started = clock.time()
    assert table.warning_armed
    clock.advance(SPEECH - WARNING_SECONDS - 0.5)
    await settle()
    assert effects.warnings == []
    clock.advance(0.5)
    assert effects.warnings == [(1, started + SPEECH - WARNING_SECONDS)]
    assert not table.warning_armed
    assert table.timer_armed
    clock.advance(WARNING_SECONDS)
    await until(lambda: floor_seat(table) == 2)
    # The next speaker's warning comes ten seconds before their own end.
    clock.advance(SPEECH - WARNING_SECONDS)
    assert effects.warnings[-1] == (2, started + 2 * SPEECH - WARNING_SECONDS)


async def test_pause_stops_every_timer_and_resume_goes_on_with_the_time_left(day: Running) -> None:
    clock, table, log = day.clock, day.table, day.log
    started, step = clock.time(), table.game.state.timer
    clock.advance(20)
    await table.submit(Pause(), actor=JUDGE)
    assert table.game.state.paused
    assert table.deadline() is None
    assert not table.timer_armed
    assert not table.warning_armed
    assert clock.next_at() is None  # nothing at all is scheduled on the clock
    assert table.remaining() == SPEECH - 20
    await until(lambda: log.timers[-1] == (step, None, SPEECH - 20))
    assert not table.extend(30)  # no timer runs to extend

    # Long past the moment the speech would have ended: nothing moved on.
    clock.advance(10 * SPEECH)
    await settle()
    assert floor_seat(table) == 1
    assert table.game.state.timer == step
    assert ended(day.effects, 1) == []
    assert day.effects.warnings == []

    await table.submit(Resume(), actor=JUDGE)
    resumed = clock.time()
    assert table.deadline() == clock.wall(resumed + SPEECH - 20)
    assert table.remaining() == SPEECH - 20
    assert table.warning_armed
    clock.advance(SPEECH - 20 - WARNING_SECONDS)
    assert day.effects.warnings == [(1, resumed + SPEECH - 20 - WARNING_SECONDS)]
    clock.advance(WARNING_SECONDS)
    await until(lambda: floor_seat(table) == 2)
    assert [e.reason for e in ended(day.effects, 1)] == ["timeout"]
    assert log.rows[-1][2] == clock.wall(resumed + SPEECH - 20)  # the pause's own time was not counted
    assert started + SPEECH < resumed


async def test_extend_gives_the_running_timer_more_time(day: Running) -> None:
    clock, table = day.clock, day.table
    started = clock.time()
    before = table.deadline()
    assert before == clock.wall(started + SPEECH)
    clock.advance(5)
    assert table.extend(20)
    assert table.deadline() == before + timedelta(seconds=20)
    assert table.remaining() == SPEECH - 5 + 20
    await until(lambda: day.log.timers[-1][1] == before + timedelta(seconds=20))

    clock.advance(SPEECH - 5)  # the old deadline: still speaking
    await settle()
    assert floor_seat(table) == 1
    clock.advance(20)
    await until(lambda: floor_seat(table) == 2)
    assert [e.reason for e in ended(day.effects, 1)] == ["timeout"]


async def test_a_timeout_the_store_could_not_write_is_tried_again(day: Running) -> None:
    clock, table, log = day.clock, day.table, day.log
    stored = len(log.rows)
    log.refuse = 1
    clock.advance(SPEECH)
    await until(lambda: log.refused == 1 and table.timer_armed)
    # Not stored, so not accepted: the floor stays, and the timeout is due again after the retry delay.
    assert floor_seat(table) == 1
    assert len(log.rows) == stored
    assert clock.next_at() == clock.time() + STORE_RETRY_SECONDS

    clock.advance(STORE_RETRY_SECONDS - 0.1)
    await settle()
    assert floor_seat(table) == 1
    clock.advance(0.1)
    await until(lambda: floor_seat(table) == 2)
    assert log.commands()[stored:] == ["Timeout"]
    assert [e.reason for e in ended(day.effects, 1)] == ["timeout"]


async def restart(day: Running) -> tuple[Table, Effects]:
    """The process stops; a new one rebuilds the table from the log on the same clock."""
    day.table.stop()
    await day.table.voice.close()
    game = Game.replay(CLASSIC, [command_from_data(command) for _, command, _ in day.log.rows])
    table, effects = make_table(day.clock, day.log, game)
    return table, effects


async def test_recovery_re_arms_a_running_timer_with_the_time_that_was_left(day: Running) -> None:
    """A speech 15 s in when the bot stopped, down for ten minutes: the speaker gets the rest of it."""
    clock, log = day.clock, day.log
    started = clock.time()
    await until(lambda: log.timers[-1][1] == clock.wall(started + SPEECH))
    step, deadline, remaining = log.timers[-1]
    assert remaining is None
    clock.advance(15)
    stopped = clock.wall(clock.time())
    restarted, effects = await restart(day)
    clock.advance(600)  # the bot was down: none of it is the speaker's time
    try:
        restarted.start_effects(())
        restarted.recover_timer(step, remaining=remaining, deadline=deadline, stopped=stopped)
        back = clock.time()
        assert restarted.remaining() == SPEECH - 15
        assert restarted.deadline() == clock.wall(back + SPEECH - 15)
        clock.advance(SPEECH - 15 - WARNING_SECONDS)
        assert effects.warnings == [(1, back + SPEECH - 15 - WARNING_SECONDS)]
        clock.advance(WARNING_SECONDS - 1)
        await settle()
        assert floor_seat(restarted) == 1
        clock.advance(1)
        await until(lambda: floor_seat(restarted) == 2)
        assert [e.reason for e in ended(effects, 1)] == ["timeout"]
        assert log.rows[-1][2] == clock.wall(back + SPEECH - 15)
    finally:
        restarted.stop()
        await restarted.voice.close()


async def test_recovery_without_a_known_stop_counts_the_downtime_as_spent(day: Running) -> None:
    """A game stored before stops were noted: the deadline is all there is, read against now."""
    clock, log = day.clock, day.log
    started = clock.time()
    await until(lambda: log.timers[-1][1] == clock.wall(started + SPEECH))
    step, deadline, remaining = log.timers[-1]
    clock.advance(15)
    restarted, _ = await restart(day)
    clock.advance(10)
    try:
        restarted.start_effects(())
        restarted.recover_timer(step, remaining=remaining, deadline=deadline, stopped=None)
        assert restarted.deadline() == deadline
        assert restarted.remaining() == SPEECH - 25
    finally:
        restarted.stop()
        await restarted.voice.close()


async def run_until(day: Running, phase: Phase) -> None:
    """Let every timer run out, one at a time, until the table reaches ``phase``."""
    table = day.table
    for _ in range(100):
        if table.game.state.phase is phase and table.timer_armed:
            await until(lambda: day.log.timers and day.log.timers[-1][0] == table.game.state.timer)
            return
        if table.timer_armed:
            day.clock.fire_next()
        await settle()
    raise AssertionError(f"the table never reached {phase}")


async def stop_and_come_back(day: Running, *, into: float, down: float) -> tuple[Table, Effects, float]:
    """The bot stops ``into`` seconds after the current timer started and is down for ``down`` seconds.

    Returns the restarted table, its effects and the full length of the timer that was running.
    """
    clock, log = day.clock, day.log
    step, deadline, remaining = log.timers[-1]
    assert deadline is not None
    assert remaining is None
    length = (deadline - clock.wall(clock.time())).total_seconds()
    clock.advance(into)
    stopped = clock.wall(clock.time())
    restarted, effects = await restart(day)
    clock.advance(down)
    restarted.start_effects(())
    restarted.recover_timer(step, remaining=remaining, deadline=deadline, stopped=stopped)
    return restarted, effects, length


async def test_recovery_keeps_what_was_left_of_a_night(day: Running) -> None:
    """A night 20 s in when the bot stopped: its actors still have the rest of it after the restart."""
    await run_until(day, Phase.NIGHT)
    restarted, _, night = await stop_and_come_back(day, into=20, down=900)
    try:
        assert restarted.game.state.phase is Phase.NIGHT
        assert restarted.remaining() == night - 20
        day.clock.advance(night - 21)
        await settle()
        assert restarted.game.state.phase is Phase.NIGHT
    finally:
        restarted.stop()
        await restarted.voice.close()


async def test_recovery_keeps_what_was_left_of_a_vote_window(day: Running) -> None:
    """A vote window 3 s in when the bot stopped: the hands still have the rest of it after the restart."""
    table = day.table
    await table.submit(Nominate(seat=1, target=3), actor=PLAYERS[0][0])
    await table.submit(EndSpeech(seat=1), actor=PLAYERS[0][0])
    await until(lambda: floor_seat(table) == 2)
    await table.submit(Nominate(seat=2, target=4), actor=PLAYERS[1][0])
    await run_until(day, Phase.VOTING)
    restarted, _, window = await stop_and_come_back(day, into=3, down=300)
    try:
        assert restarted.game.state.phase is Phase.VOTING
        assert restarted.remaining() == window - 3
    finally:
        restarted.stop()
        await restarted.voice.close()


async def test_recovery_keeps_a_paused_timer_with_the_time_that_was_left(day: Running) -> None:
    clock, log = day.clock, day.log
    clock.advance(40)
    await day.table.submit(Pause(), actor=JUDGE)
    await until(lambda: log.timers[-1][2] is not None)
    step, deadline, remaining = log.timers[-1]
    assert (deadline, remaining) == (None, SPEECH - 40)
    restarted, effects = await restart(day)
    clock.advance(3600)  # down for an hour: a paused timer loses nothing
    try:
        restarted.start_effects(())
        restarted.recover_timer(step, remaining=remaining, deadline=deadline)
        assert restarted.deadline() is None
        assert restarted.remaining() == SPEECH - 40
        assert clock.next_at() is None
        await restarted.submit(Resume(), actor=JUDGE)
        resumed = clock.time()
        assert restarted.deadline() == clock.wall(resumed + SPEECH - 40)
        clock.advance(SPEECH - 40)
        await until(lambda: floor_seat(restarted) == 2)
        assert [e.reason for e in ended(effects, 1)] == ["timeout"]
    finally:
        restarted.stop()
        await restarted.voice.close()


async def test_the_listener_given_at_construction_hears_each_command_and_the_end_once() -> None:
    clock, log, listener = ManualClock(), Log(), Listener()
    table, _ = make_table(clock, log, listener=listener)
    table.start_effects(await table.submit_start(StartGame(players=len(PLAYERS), seed=7), PLAYERS))
    assert listener.moves == 1  # the deal shown
    await until(lambda: table.timer_armed)
    clock.advance(CLASSIC.night_zero_seconds)
    await until(lambda: listener.moves == 2)
    await table.submit(EndSpeech(seat=1))
    assert (listener.moves, listener.ends) == (3, [])
    with pytest.raises(RulesError):
        await table.submit(EndSpeech(seat=1))
    assert listener.moves == 3  # a refused command moves nothing
    await table.submit(DeclareDraw(), actor=JUDGE)
    await table.done.wait()
    assert listener.ends == [False]  # told before ``done``, so the manager forgets the table first
    assert listener.moves == 5  # the draw, then the close
    await table.voice.close()
