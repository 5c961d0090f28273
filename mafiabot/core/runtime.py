"""The runtime: one ``Table`` per game, with its lock, timers, command log and effects.

This is the only layer that knows time. A command goes through the table's lock, the engine
checks and applies it, its events are stored (durable before anything is shown), and only then
the effects run: messages are queued for the presenter, the voice reconciler gets the new desired
state, and the timer for whatever the table now waits for is armed.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import secrets
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from engine import (
    Command,
    Disqualify,
    Event,
    Game,
    GiveFoul,
    Pause,
    Resume,
    Role,
    RulesError,
    Ruleset,
    StartGame,
    Team,
    Timeout,
    Waiting,
    to_data,
)
from engine.errors import RefusalError
from engine.events import GameStarted
from mafiabot.core.clock import Cancellable, LoopClock, TableClock, wall_now
from mafiabot.core.countdown import Countdown
from mafiabot.core.fairplay import Alert, FairPlayWatch, Lapse, unseen
from mafiabot.core.meta import TableMeta
from mafiabot.core.nicks import Blocked, NickEditor, NickLedger, Renames, plan_renames, resume_plan
from mafiabot.core.ports import GameLog, MemberEditor, MuteLedger, Reply
from mafiabot.core.voice import VoiceReconciler, desired_mutes

log = logging.getLogger(__name__)

WARNING_SECONDS = 10
STORE_RETRY_SECONDS = 1.0
"""How soon a timeout the store could not write is tried again."""


class TableError(RefusalError):
    """A refusal from the table itself (not the rules): a stable code plus data, like ``RulesError``."""

    def __init__(self, code: str, **data: Any) -> None:
        self.code = code
        self.data = data
        super().__init__(code)


class Effects(Protocol):
    """What the outside world does about a table's events (the Discord presenter)."""

    def publish(
        self, table: Table, events: Sequence[Event], reply: Reply | None = None,
        shown: Callable[[], None] | None = None,
    ) -> None:
        """Queue the events of one command for rendering, in order.

        ``reply``: the click behind it; ``shown``: called once they are rendered (or failed to be).
        """

    def warn(self, table: Table, seat: int) -> None:
        """The floor holder has ten seconds left."""

    async def finished(self, table: Table) -> None:
        """The game is over and every effect before this one is done."""


class TableListener(Protocol):
    """Whoever runs the table (the table manager), given at construction: told what the table cannot settle alone."""

    def moved(self, table: Table) -> None:
        """A command was accepted, the running timer got more time, or the game closed (streams follow it)."""

    def ended(self, table: Table) -> None:
        """The game is over, stored and shown, and its mutes are lifted: the table may be forgotten."""

    def alert(self, table: Table, alert: Alert) -> None:
        """Tell the judge, privately, of a seated player's lapse (``mafiabot.core.fairplay``)."""

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        """Tell the judge which seats could not be numbered, and why."""

    def opening_waits(self, table: Table) -> None:
        """The opening is shown but Night 0's clock waits for the start mutes."""


class CueSink(Protocol):
    """The host's voice at the table (``mafiabot.host.voicecues.VoiceCues``); every call returns at once."""

    def start(self) -> None:
        """Connect to the table's voice channel, in a task of its own."""

    def on_events(self, events: Sequence[Event]) -> None:
        """Queue the cues of one command's events."""

    def warning(self) -> None:
        """The floor holder has ten seconds left."""

    async def close(self) -> None:
        """The game is over: finish the last cue and leave the channel."""

    def abort(self) -> None:
        """The process is shutting down: stop at once."""


@dataclass(frozen=True, slots=True)
class FixedSeats:
    """A tournament table's seats from its schedule: who may sit there, and at which seat."""

    tournament_id: int
    round: int
    table: int
    players: tuple[int, ...]
    """``players[0]`` sits at seat 1."""


@dataclass
class Lobby:
    """A table being formed: who joined, in which order, before the cards are dealt."""

    id: int
    guild_id: int
    channel_id: int
    voice_channel_id: int
    judge_id: int
    ruleset: Ruleset
    language: str
    seats: int
    players: list[tuple[int, str]] = field(default_factory=list)
    message_id: int | None = None
    powers: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """Seated players who could read the mafia's room or lift their own mute, with those powers, for the notice."""
    strict: bool = False
    """Refuse those players a seat instead (the server's ``strict_tables``; tournament tables always)."""
    tournament: bool = False
    fixed: FixedSeats | None = None
    """A tournament table's schedule: only its players sit, each at their own seat."""
    starting: bool = False
    """``/mafia start`` is dealing this lobby's cards: a second start, a join or a leave must wait."""
    token: int = 0
    """Counts the lobby's activity, so an idle timer armed before the latest activity does nothing."""

    def has(self, user_id: int) -> bool:
        """Whether ``user_id`` has joined."""
        return any(user == user_id for user, _ in self.players)


class Table:
    """One running game."""

    def __init__(
        self,
        *,
        game_id: int,
        lobby: Lobby,
        seats: Sequence[tuple[int, str]],
        game: Game,
        log_store: GameLog,
        effects: Effects,
        listener: TableListener,
        editor: MemberEditor,
        ledger: MuteLedger,
        time_scale: float,
        spectators: Callable[[], Sequence[int]] = tuple,
        mute_spectators: bool = False,
        clock: TableClock | None = None,
        renamer: NickEditor | None = None,
        nick_ledger: NickLedger | None = None,
        seat_nicknames: bool = False,
        cues: Callable[[Table], CueSink] | None = None,
        meta: TableMeta | None = None,
    ) -> None:
        """``cues``: makes the table's voice cues, when it plays them; ``meta``: a resumed table's Discord ids."""
        self.id = game_id
        self.guild_id = lobby.guild_id
        self.channel_id = lobby.channel_id
        self.voice_channel_id = lobby.voice_channel_id
        self.judge_id = lobby.judge_id
        self.ruleset = lobby.ruleset
        self.language = lobby.language
        self.seats = [user for user, _ in seats]
        self.names = [name for _, name in seats]
        self.game = game
        self.moments: list[datetime] = []
        """When each command of ``game.history`` was stored (the log's times): a stream rebuilds its delayed frames."""
        self.lock = asyncio.Lock()
        self.time_scale = time_scale
        self.clock: TableClock = clock or LoopClock()
        self.meta = meta or TableMeta()
        """Discord ids the presenter needs again after a restart (thread, vote messages)."""
        self._log = log_store
        self._effects = effects
        self._listener = listener
        self._spectators = spectators
        self._mute_spectators = mute_spectators
        self.voice = VoiceReconciler(editor, ledger, guild_id=lobby.guild_id, game_id=game_id)
        self.voice.seats = frozenset(self.seats)
        self.voice.on_lifted = self._mute_lifted
        self._renamer = renamer
        self._nick_ledger = nick_ledger
        self.seat_nicknames = seat_nicknames
        """Whether the server puts seat numbers in nicknames (``mafiabot.core.nicks``)."""
        self.fair_play = FairPlayWatch()
        """The fair-play alerts the judge has had, so each comes once per player, kind and phase."""
        self.told: set[int] = set()
        """Members told once already why their reaction was removed: later ones are removed silently."""
        self._countdown = Countdown(self.clock, self._fire, self._warn)
        self._grace: dict[int, Cancellable] = {}
        self._owed = 0
        self._owing: set[asyncio.Task[None]] = set()
        self._quiet = asyncio.Event()
        self._quiet.set()
        self._closed = False
        self._released = False
        self._result_unseen = False
        self.done = asyncio.Event()
        self.caught_up = asyncio.Event()
        """Cleared while a restarted bot counts what happened meanwhile: until then no time runs out."""
        self.caught_up.set()
        self._opening_step: int | None = None
        """The first timer (Night 0's), held while the start mutes are not all confirmed (``opening``)."""
        self.cues: CueSink | None = cues(self) if cues is not None else None
        """Sound in the voice channel, when voice cues are on for this table."""

    # -- lookups ---------------------------------------------------------------------------------

    def seat_of(self, user_id: int) -> int | None:
        """The seat of ``user_id``, if seated."""
        try:
            return self.seats.index(user_id) + 1
        except ValueError:
            return None

    def user_at(self, seat: int) -> int:
        """The user in ``seat``."""
        return self.seats[seat - 1]

    def name_at(self, seat: int) -> str:
        """The display name of the player in ``seat``."""
        return self.names[seat - 1]

    def black_seats(self) -> list[int]:
        """The black team's seats (secret: for the black team and the end summary only)."""
        return [seat for seat, role in enumerate(self.game.state.roles, 1) if role.team is Team.BLACK]

    def role_at(self, seat: int) -> Role:
        """The card in ``seat`` (secret)."""
        return self.game.state.role(seat)

    def deadline(self) -> datetime | None:
        """When the running timer ends, as a UTC time (None while paused or with no timer)."""
        return self._countdown.wall_deadline()

    def remaining(self) -> float | None:
        """Seconds left on the table's timer: on the clock while it runs, as kept while paused; None without one."""
        return self._countdown.left()

    def floor_left(self) -> int | None:
        """Game seconds the floor holder still has, rounded up; None when nobody holds the floor or no timer runs.

        A judge's skip or removal of the speaker carries them, so taking it back gives them back.
        """
        floor = self.game.state.floor
        if floor is None:
            return None
        if self._countdown.step != self.game.waiting().timer:
            return floor.seconds  # this floor's timer has not started yet (the opening, or paused since)
        remaining = self.remaining()
        return None if remaining is None else math.ceil(remaining / self.time_scale)

    def skip_command(self) -> Timeout:
        """The judge's skip: the current timer run out now, with the speaker's time left (see ``floor_left``)."""
        return Timeout(step=self.game.waiting().timer, left=self.floor_left())

    def _with_time_left(self, command: Command) -> Command:
        """A foul or removal of the floor holder, with the seconds they had left (for a take back)."""
        floor = self.game.state.floor
        if isinstance(command, GiveFoul | Disqualify) and command.left is None and floor is not None \
                and floor.seat == command.seat:
            return replace(command, left=self.floor_left())
        return command

    @property
    def judges(self) -> frozenset[int]:
        """Everyone who judges this table: its judge and the side judges (``/mafia judge add``)."""
        return frozenset((self.judge_id, *self.meta.judges))

    @property
    def timer_armed(self) -> bool:
        """Whether a call is scheduled on the clock for the table's timer (a timeout, or its retry)."""
        return self._countdown.armed

    @property
    def warning_armed(self) -> bool:
        """Whether the floor holder's ten-second warning is scheduled on the clock."""
        return self._countdown.warning_armed

    @property
    def mute_spectators(self) -> bool:
        """Whether spectators in the table's voice channel are muted during play."""
        return self._mute_spectators

    @property
    def over(self) -> bool:
        """Whether the game has ended (final words included)."""
        return self.game.over

    # -- commands --------------------------------------------------------------------------------

    async def submit(
        self, command: Command, *, actor: int | None = None, reply: Reply | None = None,
    ) -> tuple[Event, ...]:
        """Apply ``command``: checked, stored, then shown (through ``reply``, a public click, if given).

        Raises:
            RulesError: the rules reject it; nothing changed.
            TableError: the game is already closed, or the store could not write it (``store.unavailable``);
                nothing changed.
        """
        self._begin()
        try:
            async with self.lock:
                if self._closed:
                    raise TableError("table.closed")
                command = self._with_time_left(command)
                events = self.game.apply(command)
                at = wall_now(self.clock)
                try:
                    await self._log.append(
                        self.id, len(self.game.history), to_data(command), [to_data(e) for e in events],
                        actor_id=actor, at=at,
                    )
                except BaseException as exc:
                    # Not durable, so not accepted: rebuild the state without it.
                    self.game = Game.replay(self.ruleset, self.game.history[:-1])
                    if isinstance(exc, Exception):
                        log.exception("table %s: the store refused a command; nothing changed", self.id)
                        raise TableError("store.unavailable") from exc
                    raise
                self.moments.append(at)
                self._react(events, reply)
        finally:
            self._end()
        return events

    async def submit_start(self, command: StartGame, seats: Sequence[tuple[int, str]]) -> tuple[Event, ...]:
        """Deal the cards: the seating and the roles are stored with the first command."""
        from mafiabot.core.records import SeatInfo

        self._begin()
        try:
            async with self.lock:
                events = self.game.apply(command)
                roles = self.game.state.roles
                # The seated players the bot will mute go on the mute ledger with their seats, so the
                # start mutes wait for no write. One already muted is someone else's: not on the ledger.
                muting = [user for user, _ in seats if user != self.judge_id and self.voice.unmuted_now(user)]
                await self._log.seat_players(
                    self.id, [SeatInfo(i, user, name, roles[i - 1].value) for i, (user, name) in enumerate(seats, 1)],
                    muting_in=self.guild_id, muting=muting,
                )
                self.voice.recorded_already(muting)
                await self._plan_renames()
                at = wall_now(self.clock)
                await self._log.append(
                    self.id, 1, to_data(command), [to_data(e) for e in events], actor_id=self.judge_id, at=at,
                )
                self.moments.append(at)
        finally:
            self._end()
        return events

    async def _plan_renames(self) -> None:
        """With seat nicknames on: who is renamed to what, on the ledger before any rename goes with the start mutes."""
        if not self.seat_nicknames or self._renamer is None or self._nick_ledger is None:
            return
        numbered, old, blocked = plan_renames(
            self._renamer, self.seats, self.names, guild_id=self.guild_id, skip=[self.judge_id],
        )
        if old:
            await self._nick_ledger.record_nicks(self.guild_id, list(old.items()), self.id)
        self.voice.renames = Renames(self._renamer, self._nick_ledger, self.guild_id, numbered, old,
                                     on_refused=self._rename_refused)
        if blocked:
            self._listener.unnumbered(self, blocked)

    def _rename_refused(self, user_id: int) -> None:
        seat = self.seat_of(user_id)
        if seat is not None:
            self._listener.unnumbered(self, [(seat, "refused")])

    def resume_renames(self, owed: Sequence[tuple[int, str | None]]) -> None:
        """After a restart: the seated players the ledger says are renamed, with their old nicknames.

        A crash right after the start may come before Discord took some of the renames: the reconciler
        wants the seat nickname as it wants the mutes, so whoever is not called by their seat now is
        renamed (``resume_plan``), and the judge hears of any seat the bot may not rename. The end gives
        every old nickname back either way.
        """
        if self._renamer is None or self._nick_ledger is None:
            return
        numbered, old, applied, blocked = resume_plan(
            self._renamer, self.seats, self.names, owed, guild_id=self.guild_id,
        )
        if not old:
            return
        self.voice.renames = Renames(self._renamer, self._nick_ledger, self.guild_id, numbered, old,
                                     applied=applied, on_refused=self._rename_refused)
        if blocked:
            self._listener.unnumbered(self, blocked)

    async def save_meta(self) -> None:
        """Store the presenter's Discord ids for this table."""
        await self._log.set_discord_meta(self.id, self.meta.to_json())

    def stop(self) -> None:
        """Stop every clock of this table (the process is shutting down; the state is stored)."""
        self._closed = True
        self._stop_timers()
        if self.cues is not None:
            self.cues.abort()
        for handle in self._grace.values():
            handle.cancel()
        self._grace.clear()

    def release_voice(self) -> None:
        """The bot is stopping politely mid-game: lift the table's mutes (a restart mutes again as it resumes).

        Players must not sit server-muted, unable to speak, for as long as the bot is away.
        """
        self.stop()
        self._released = True
        self.voice.release()

    def start_effects(self, events: Sequence[Event]) -> None:
        """Show what already happened (the deal, or a recovered game's current phase) and arm the clock.

        A new game's clock starts once its opening is shown: at a busy hour the opening may wait
        for the token's global limit, and Night 0 must not run out before the players see the table.
        """
        self.voice.start()
        if self.cues is not None:
            self.cues.start()
        self._react(events, opening=any(isinstance(e, GameStarted) for e in events))

    def _react(self, events: Sequence[Event], reply: Reply | None = None, *, opening: bool = False) -> None:
        over = self.game.over
        # The table hears the result as it sees it: the end's unmutes follow the result message.
        ending = over and bool(events)
        if not ending:
            self.refresh_voice()
        if over:
            self._stop_timers()
            self._closed = True
        elif self.game.state.paused:
            self._pause_timers()
        elif not opening and self.game.waiting().timer != self._opening_step:
            self._arm(self.game.waiting())
        # Published after the timer is armed, so the messages show the deadline they belong to.
        if ending:
            self._result_unseen = True
        if events:
            shown = self.result_seen if ending else (self._shown if opening else None)
            self._effects.publish(self, events, reply, shown)
            if self.cues is not None:
                self.cues.on_events(events)
        self._listener.moved(self)
        if over:
            asyncio.get_running_loop().create_task(self._finish())

    def _mute_lifted(self, user_id: int) -> None:
        self.lapse(user_id, Lapse.MUTE_LIFTED)

    def lapse(self, user_id: int, lapse: Lapse) -> Alert | None:
        """Someone did ``lapse``: the judge is told if a seated player did it when it matters, once per phase.

        Once per player, kind and phase: a player who keeps toggling a camera must not flood the judge.
        """
        alert = self.fair_play.observe(self.game.state, self.seat_of(user_id), lapse)
        if alert is not None:
            self._listener.alert(self, alert)
        return alert

    def presence(self, user_id: int, *, camera: bool) -> Alert | None:
        """A seated player's camera as Discord shows it now: off while the rules want it on is a lapse."""
        seat = self.seat_of(user_id)
        if seat is None:
            return None
        state = self.game.state
        lapsing = not self.over and unseen(state, self.ruleset, seat, camera=camera)
        self.fair_play.camera(seat, lapsing=lapsing, fouls=state.foul_count(seat))
        return self.lapse(user_id, Lapse.CAMERA_OFF) if lapsing else None

    def camera_off(self) -> tuple[int, ...]:
        """The seats whose camera is off now while the rules want it on, with no foul for it yet (the console's)."""
        return self.fair_play.unanswered(self.game.state)

    def refresh_voice(self) -> None:
        """Recompute who should be muted and let the reconciler catch up (nothing once the bot is stopping).

        An ended game's unmutes wait for its result message: a voice update arriving in between (the
        echo of the last mute, a spectator joining) must not unmute the table before it sees the result.
        """
        if self._released or (self.game.over and self._result_unseen):
            return
        desired = desired_mutes(
            self.game, self.seats, judge_id=self.judge_id,
            spectators=self._spectators(), mute_spectators=self._mute_spectators, judges=self.meta.judges,
        )
        kind = "end" if self.game.over else ("start" if self.voice.stats.kinds == {} else "play")
        self.voice.update(desired, kind=kind)

    def result_seen(self) -> None:
        """The result message is posted (or could not be, or the bot is stopping): the end's unmutes go."""
        self._result_unseen = False
        self.refresh_voice()

    async def _finish(self) -> None:
        from mafiabot.core.records import final_from_game

        try:
            await self._log.finish_game(self.id, final_from_game(self.game))
        except Exception:
            log.exception("table %s: could not store the result", self.id)
        await self._effects.finished(self)
        self.result_seen()  # the result is out (or could not be): the end's unmutes, if not sent yet
        if self.cues is not None:
            try:
                await self.cues.close()
            except Exception:
                log.exception("table %s: closing the voice cues failed", self.id)
        try:
            await asyncio.wait_for(self.voice.settled(), timeout=60)
        except TimeoutError:
            log.warning("table %s: voice did not settle after the game", self.id)
        await self.voice.close()
        self._listener.ended(self)
        self.done.set()
        self._listener.moved(self)

    # -- timers ----------------------------------------------------------------------------------

    def _stop_timers(self) -> None:
        self._countdown.stop()

    def _pause_timers(self) -> None:
        self._persist_timer(None, self._countdown.pause())

    def _arm(self, waiting: Waiting, *, remaining: float | None = None) -> None:
        countdown = self._countdown
        if waiting.seconds is None:
            countdown.untimed(waiting.timer)
            return
        if waiting.timer == countdown.step:
            if countdown.armed:
                return
            if countdown.kept is not None:
                remaining = countdown.kept
        seconds = remaining if remaining is not None else waiting.seconds * self.time_scale
        warn = waiting.floor.seat if waiting.floor is not None and waiting.seconds > WARNING_SECONDS else None
        deadline = countdown.start(waiting.timer, seconds, warn=warn, warn_before=WARNING_SECONDS * self.time_scale)
        self._persist_timer(self.clock.wall(deadline), None)

    @property
    def opening(self) -> bool:
        """Whether the opening is shown and Night 0's clock waits for the start mutes to be confirmed."""
        return self._opening_step is not None

    def _shown(self) -> None:
        """The table's opening is on Discord: start its clock once every start mute is confirmed.

        Night 0 must not run while a seated player can still be heard: when many tables start in
        one server, their start mutes share its member-edit budget and take windows to go out. The
        clock waits until the reconciler has every mute answered (or found impossible: a player out
        of voice is muted when they come in); the judge is told when that wait is long.
        """
        if self._closed or self.game.state.paused:
            return
        if self.voice.idle:
            self._arm(self.game.waiting())
            return
        self._opening_step = self.game.waiting().timer
        asyncio.get_running_loop().create_task(self._open_when_muted())
        self._listener.opening_waits(self)

    async def _open_when_muted(self) -> None:
        """Start the clock held by ``_shown`` once the start mutes are confirmed, unless a command moved on."""
        try:
            await self.voice.settled()
        finally:
            step, self._opening_step = self._opening_step, None
        if not self._closed and not self.game.state.paused and self.game.waiting().timer == step:
            self._arm(self.game.waiting())

    def _warn(self, seat: int) -> None:
        self._effects.warn(self, seat)
        if self.cues is not None:
            self.cues.warning()

    def extend(self, seconds: float) -> bool:
        """Give the running timer ``seconds`` more (real seconds, not scaled); False if none runs."""
        countdown = self._countdown
        if not countdown.armed or countdown.deadline is None or countdown.step is None:
            return False
        remaining = countdown.deadline - self.clock.time() + seconds
        countdown.stop()
        self._arm(self.game.waiting(), remaining=remaining)
        self._listener.moved(self)  # no engine event says so: the stream's countdown must show the new end now
        return True

    def recover_timer(
        self, timer_id: int, *, remaining: float | None, deadline: datetime | None, stopped: datetime | None = None,
    ) -> None:
        """After a restart: re-arm the stored timer ``timer_id`` with the time that was left.

        A paused timer was stored with its ``remaining`` seconds; a running one with its ``deadline``,
        read against ``stopped``, the last moment the game was known to run (so the time the bot was
        down is nobody's: a speech, a night or a vote window goes on with what it had). Without a
        known stop the deadline is read against now, and the downtime is counted as spent.
        """
        if remaining is None and deadline is not None:
            now = wall_now(self.clock)
            since = now if stopped is None else min(stopped, now)
            remaining = (deadline - since).total_seconds()
        if remaining is not None:
            self.resume_timer(timer_id, remaining)

    def resume_timer(self, timer_id: int, remaining: float) -> None:
        """After a restart: the stored timer ``timer_id`` had ``remaining`` seconds left."""
        waiting = self.game.waiting()
        if waiting.timer == timer_id and not self.game.state.paused:
            self._stop_timers()
            self._arm(waiting, remaining=max(0.0, remaining))
        elif self.game.state.paused:
            self._countdown.keep(timer_id, remaining)

    def _persist_timer(self, deadline: datetime | None, remaining: float | None) -> None:
        step = self._countdown.step
        timer_id = step if step is not None else 0
        task = asyncio.get_running_loop().create_task(self._log.set_timer(self.id, timer_id, deadline, remaining))
        task.add_done_callback(_log_failure)
        self._begin()  # a timer not yet stored is part of the game not yet stored: the table is not quiet
        task.add_done_callback(lambda _: self._end())

    def _fire(self, timer_id: int) -> None:
        self._owe(self._timeout(timer_id))

    def _owe(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work``, which will change the game, beside the caller: the table is not quiet until it is done."""
        self._begin()
        task = asyncio.get_running_loop().create_task(work)
        self._owing.add(task)
        task.add_done_callback(self._paid)

    def _paid(self, task: asyncio.Task[None]) -> None:
        self._owing.discard(task)
        self._end()

    def _begin(self) -> None:
        self._owed += 1
        self._quiet.clear()

    def _end(self) -> None:
        self._owed -= 1
        if not self._owed:
            self._quiet.set()

    @property
    def idle(self) -> bool:
        """Whether the table is quiet now (see ``quiet``)."""
        return not self._owed

    async def quiet(self) -> None:
        """Wait until no command or timer deadline is being applied or stored and no timeout or removal is on its way.

        The game's state then matches its timers and what was sent to be shown: a driver that reads
        the state mid-command would see a new floor holder whose speech timer is not armed yet.
        """
        while self._owed:
            await self._quiet.wait()

    async def _timeout(self, timer_id: int) -> None:
        # A window whose time ran out while the bot was down closes only once the hands raised
        # meanwhile are counted.
        await self.caught_up.wait()
        try:
            await self.submit(Timeout(step=timer_id))
        except TableError as exc:
            if exc.code == "store.unavailable" and not self._closed:
                # Time is up but not stored: try again, or the table would wait for ever.
                self._countdown.retry(STORE_RETRY_SECONDS, timer_id)
        except RulesError:
            pass  # a stale timer: something else moved the table on first
        except Exception:
            log.exception("table %s: timeout failed", self.id)

    # -- technical pause -------------------------------------------------------------------------

    async def player_left_voice(self, user_id: int) -> None:
        """A seated, living player left the voice channel: a technical pause with a grace period."""
        seat = self.seat_of(user_id)
        if seat is None or self.over or not self.game.state.is_alive(seat) or seat in self._grace:
            return
        # The grace period is registered before any await, so a quick return is never missed.
        grace = self.ruleset.technical_pause_seconds * self.time_scale
        self._grace[seat] = self.clock.call_later(grace, self._grace_over, seat)
        if not self.game.state.paused:
            await self.submit(Pause(seat=seat))

    async def player_returned(self, user_id: int) -> None:
        """A player in a technical pause came back in time."""
        seat = self.seat_of(user_id)
        handle = self._grace.pop(seat, None) if seat is not None else None
        if handle is None:
            return
        handle.cancel()
        async with self.lock:
            pass  # let a pause still being stored land first
        if self.game.state.paused and self.game.state.pause_seat == seat and not self._grace:
            await self.submit(Resume())

    def _grace_over(self, seat: int) -> None:
        self._grace.pop(seat, None)
        self._owe(self._remove_absent(seat))

    async def _remove_absent(self, seat: int) -> None:
        from engine import Leave

        try:
            await self.submit(Leave(seat=seat))
            if self.game.state.paused and not self._grace:
                await self.submit(Resume())
        except (RulesError, TableError):
            pass
        except Exception:
            log.exception("table %s: removing absent seat %s failed", self.id, seat)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background store write failed", exc_info=task.exception())


def deal_seats(lobby: Lobby, *, order: str, seed: int) -> list[tuple[int, str]]:
    """Seat the lobby's players: at their scheduled seats, in join order, or shuffled with ``seed``."""
    players = list(lobby.players)
    if lobby.fixed is not None:
        scheduled = lobby.fixed.players
        return sorted(players, key=lambda p: scheduled.index(p[0]))
    if order == "random":
        random.Random(seed).shuffle(players)
    return players


def new_seed() -> int:
    """A fresh seed for seating and dealing; stored with the game, so replay never rolls again."""
    return secrets.randbits(32)


def start_command(lobby: Lobby, seed: int) -> StartGame:
    """The engine command that deals the cards for ``lobby``."""
    return StartGame(players=len(lobby.players), seed=seed)


__all__ = [
    "CueSink", "Effects", "FixedSeats", "GameLog", "Lobby", "Table", "TableError", "TableListener", "deal_seats",
    "new_seed",
    "start_command",
]
