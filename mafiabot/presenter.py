"""The presenter: a table's events, rendered as localized Discord messages, in order.

Each table has one worker that takes the events of one command at a time, so messages appear in
the order things happened even when Discord is slow. Secret events (shots, checks, saves) are
never rendered here: the night controls answer their owner privately instead.

Every table of a bot shares its token's global limit, so the presenter spends few requests: a
command's texts ride with its next message that has controls, and the messages a public click
causes (the next floor, "Accepted") go as that click's follow-ups, which Discord does not count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import discord

from engine import (
    Act,
    Event,
    Phase,
    Role,
    Team,
    floor_holder,
    is_speech,
    legal_targets,
    lift_votes_needed,
    mafia_room_open,
    nominations_open,
    shot_targets,
    silent_vote_target,
    vote_totals,
)
from engine import events as ev
from mafiabot import i18n
from mafiabot.i18n import countdown, join_list, ruleset_name, t
from mafiabot.ratelimit import bulk_requests

if TYPE_CHECKING:
    from mafiabot.bot import MafiaBot
    from mafiabot.runtime import Table

log = logging.getLogger(__name__)

VOTE_EMOJI = "\N{RAISED HAND}"
MESSAGE_LIMIT = 2000
"""Characters Discord accepts in one message."""
ACK_WAIT = 3.0
"""Seconds a follow-up waits for its click to be acknowledged (Discord's own limit for that)."""
NAME_LIMIT = 32
"""Characters of a player's name the bot echoes: Discord's own limit for a display name."""


@dataclass(eq=False)
class Reply:
    """A public click (Thank you, a nomination) whose command's messages may go as its follow-ups.

    Discord does not count an interaction's follow-ups against the token's global limit, so on a
    busy evening the messages a click causes need no place in the queue every table shares. Only
    public acts may use it: a follow-up shows whose click it answers, which must never tell of a
    night action.
    """

    followup: discord.Webhook
    channel_id: int
    acknowledged: asyncio.Event = field(default_factory=asyncio.Event)
    usable: bool = True

    @classmethod
    def to(cls, interaction: discord.Interaction) -> Reply:
        """The reply to ``interaction``; the caller sets ``acknowledged`` once it has answered it."""
        return cls(interaction.followup, interaction.channel_id or 0)


@dataclass(frozen=True)
class _Command:
    """One command's events, queued for a table's worker."""

    events: tuple[Event, ...]
    deadline: datetime | None
    reply: Reply | None
    queued_at: float
    shown: Callable[[], None] | None
    room: bool | None = None
    """The mafia's room opens (True) or closes (False) with this command; None: it stays as it was."""


_REPLY: ContextVar[Reply | None] = ContextVar("reply", default=None)
"""The click whose command a table's worker is rendering, if any."""
_END = object()


def role_name(table: Table, role: Role) -> str:
    """The role's name in the table's language (the georgian Sheriff is the Detective)."""
    return i18n.role_name(table.language, table.ruleset, role)


def night_zero_lines(table: Table) -> list[str]:
    """Night 0 in words: the mafia meet, and whoever the ruleset wakes meets the host."""
    lang = table.language
    lines = [t(lang, "night.zero")]
    meeters = table.ruleset.meets_host(len(table.seats))
    if meeters:
        names = [t(lang, "night.zero.role", role=role_name(table, role)) for role in meeters]
        lines.append(t(lang, "night.zero.meet", roles=join_list(lang, names)))
    return lines


def check_lines(table: Table, checks: Sequence[ev.DonChecked | ev.SheriffChecked]) -> list[str]:
    """The night checks of a game, in the ruleset's words (the Detective's "mafia / not mafia")."""
    lang, rules = table.language, table.ruleset
    lines = []
    for check in checks:
        if isinstance(check, ev.DonChecked):
            key = f"end.check.don_yes.{rules.checker}" if check.sheriff else f"end.check.don_no.{rules.checker}"
            lines.append(t(lang, key, seat=check.seat, target=check.target))
        else:
            result = t(lang, f"check.result.{rules.check_result(black=check.black)}")
            lines.append(t(lang, f"end.check.{rules.checker}", seat=check.seat, target=check.target, result=result))
    return lines


def plain(text: str, limit: int) -> str:
    r"""A user's text as the bot may echo it: at most ``limit`` characters, markdown and mentions neutralized.

    >>> plain("*hi* @everyone", 40)
    '\\*hi\\* @\u200beveryone'
    >>> plain("x" * 50, 5)
    'xxxx…'
    """
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return discord.utils.escape_mentions(discord.utils.escape_markdown(cut))


def seat_label(table: Table, seat: int) -> str:
    """``#3 Name``: how the bot names a player at the table (the name echoed safely)."""
    return t(table.language, "seat.label", seat=seat, name=plain(table.name_at(seat), NAME_LIMIT))


def seat_list(table: Table, seats: Sequence[int]) -> str:
    """Seats as ``#2, #5`` (or a dash when there are none)."""
    return ", ".join(f"#{seat}" for seat in seats) if seats else "—"


def current_vote_message(table: Table, target: int | str) -> int | None:
    """The vote message of this round for ``target`` (a candidate seat, or "lift")."""
    votes = table.meta.get("votes", {})
    ids = [m for m in table.meta.get("round", []) if votes.get(str(m)) == target]
    return max(ids) if ids else None


def split_message(content: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """``content`` in as few messages of at most ``limit`` characters as whole lines allow."""
    parts: list[str] = []
    current: str | None = None
    for line in content.split("\n"):
        while len(line) > limit:  # no real line is this long; cut rather than be refused
            if current is not None:
                parts.append(current)
                current = None
            parts.append(line[:limit])
            line = line[limit:]
        if current is None:
            current = line
        elif len(current) + 1 + len(line) > limit:
            parts.append(current)
            current = line
        else:
            current = f"{current}\n{line}"
    parts.append(current or "")
    return parts


def custom_id(action: str, table_id: int, arg: str = "") -> str:
    """The custom id of a table control; the table and action are parsed back from it."""
    return f"mafia:{action}:{table_id}" + (f":{arg}" if arg else "")


class Presenter:
    """Renders every table's events to its text channel and thread."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self._queues: dict[int, asyncio.Queue[Any]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}
        self._room_open: dict[int, bool] = {}
        """Per table, whether the engine last had the mafia's room open (``mafia_room_open``)."""
        self.posted: dict[int, int] = {}
        """Messages posted per table, for reports."""
        self.lateness: deque[float] = deque(maxlen=100_000)
        """Seconds from a command's events to the end of their messages (the newest; openings aside), for reports."""
        self._notes: set[asyncio.Task[None]] = set()

    # -- Effects protocol ------------------------------------------------------------------------

    def publish(
        self, table: Table, events: Sequence[Event], reply: Reply | None = None,
        shown: Callable[[], None] | None = None,
    ) -> None:
        """Queue one command's events.

        ``reply``: the click that made it, to post through; ``shown``: called once they are rendered
        (or failed to be).
        """
        command = _Command(tuple(events), table.deadline(), reply, asyncio.get_running_loop().time(), shown,
                           self._room_change(table, events))
        self._queue(table).put_nowait(("events", command))

    def _room_change(self, table: Table, events: Sequence[Event]) -> bool | None:
        """Whether the command just applied opened or closed the mafia's room (the engine decides when).

        Asked as the command is published, so it reads the state that command left, however late
        its messages go out. A new room is created open.
        """
        was = self._room_open.get(table.id)
        if was is None and any(isinstance(e, ev.GameStarted) for e in events):
            was = True
        now = mafia_room_open(table.game.state)
        self._room_open[table.id] = now
        return None if now == was else now

    def warn(self, table: Table, seat: int) -> None:
        """Queue the ten-seconds warning."""
        self._queue(table).put_nowait(("warn", seat, table.game.state.timer))

    async def drained(self, table_id: int) -> None:
        """Wait until everything queued for the table so far is on Discord (the demo steps on it)."""
        queue = self._queues.get(table_id)
        if queue is not None:
            await queue.join()

    async def finished(self, table: Table) -> None:
        """Wait until everything queued for the table is shown, then close its worker."""
        done = asyncio.get_running_loop().create_future()
        self._queue(table).put_nowait(("end", done))
        await done
        self._queues.pop(table.id, None)
        self._workers.pop(table.id, None)

    def mute_lifted(self, table: Table, user_id: int) -> None:
        """Someone else lifted a seated player's server mute; the bot mutes them again and tells the judge."""
        seat = table.seat_of(user_id)
        if seat is None:
            return
        text = t(table.language, "voice.mute_lifted", player=seat_label(table, seat))
        task = asyncio.get_running_loop().create_task(self._tell_judge(table, text))
        self._notes.add(task)
        task.add_done_callback(self._notes.discard)

    async def _tell_judge(self, table: Table, text: str) -> None:
        """A direct message to the judge, the one private path to them; the table's channel if DMs are closed."""
        mentions = discord.AllowedMentions.none()
        try:
            judge = self.bot.get_user(table.judge_id) or await self.bot.fetch_user(table.judge_id)
            await judge.send(text, allowed_mentions=mentions)
            return
        except discord.HTTPException:
            log.info("table %s: the judge takes no direct messages; telling the table", table.id)
        try:
            await self.channel(table).send(text, allowed_mentions=mentions)
        except discord.HTTPException:
            log.warning("table %s: could not tell anyone that a mute was lifted", table.id)

    def resumed(self, table: Table) -> None:
        """After a restart: say the host is back and show the controls of the current phase again."""
        self._room_open[table.id] = mafia_room_open(table.game.state)  # as it was left before the restart
        self._queue(table).put_nowait(("resumed",))

    async def catch_up_votes(self, table: Table) -> None:
        """Count ✋ reactions added to the open vote message while the bot was away."""
        from cogs.voting import vote_by_reaction

        state = table.game.state
        if state.vote is None:
            return
        current: int | str = "lift" if state.phase is Phase.LIFT_VOTE else state.vote.candidates[state.vote.index]
        message_id = current_vote_message(table, current)
        if message_id is None:
            return
        try:
            message = await self.channel(table).fetch_message(message_id)
        except discord.HTTPException:
            return
        reaction = next((r for r in message.reactions if str(r.emoji) == VOTE_EMOJI), None)
        if reaction is None:
            return
        me = self.bot.user.id if self.bot.user else 0
        async for user in reaction.users():
            seat = table.seat_of(user.id)
            if user.id == me or seat is None or seat in state.vote.votes:
                continue
            await vote_by_reaction(self.bot, table, current, user.id, VOTE_EMOJI, message_id)

    async def close(self) -> None:
        """Stop every worker (the bot is shutting down)."""
        for task in self._workers.values():
            task.cancel()
        for task in list(self._workers.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers.clear()
        self._queues.clear()

    def _queue(self, table: Table) -> asyncio.Queue[Any]:
        queue = self._queues.get(table.id)
        if queue is None:
            queue = self._queues[table.id] = asyncio.Queue()
            self._workers[table.id] = asyncio.get_running_loop().create_task(
                self._work(table, queue), name=f"presenter-{table.id}"
            )
        return queue

    async def _work(self, table: Table, queue: asyncio.Queue[Any]) -> None:
        while True:
            item = await queue.get()
            try:
                if item[0] == "events":
                    await self._show(table, item[1])
                elif item[0] == "warn":
                    state = table.game.state
                    if floor_holder(state) == item[1] and state.timer == item[2]:
                        await self.send(table, t(table.language, "floor.ten_seconds", seat=item[1]))
                elif item[0] == "resumed":
                    await self._show_current(table)
                elif item[0] == "end":
                    await self._archive_thread(table)
                    item[1].set_result(None)
                    return
            except Exception:
                log.exception("table %s: rendering failed", table.id)
                if item[0] == "end":
                    item[1].set_result(None)
                    return
            finally:
                queue.task_done()

    async def _show(self, table: Table, command: _Command) -> None:
        opening = any(isinstance(e, ev.GameStarted) for e in command.events)
        token = _REPLY.set(command.reply)
        try:
            with bulk_requests() if opening else contextlib.nullcontext():
                if command.room is not None:  # before the night's picker is posted in the room
                    await self._lock_thread(table, locked=not command.room)
                await self._render(table, command.events, command.deadline)
        finally:
            _REPLY.reset(token)
            if command.shown is not None:
                command.shown()
        if not opening:
            self.lateness.append(asyncio.get_running_loop().time() - command.queued_at)

    # -- sending ---------------------------------------------------------------------------------

    def channel(self, table: Table) -> discord.abc.Messageable:
        """The table's text channel."""
        channel = self.bot.get_channel(table.channel_id)
        if isinstance(channel, discord.abc.Messageable):
            return channel
        return self.bot.get_partial_messageable(table.channel_id)

    async def send(self, table: Table, content: str, view: discord.ui.View | None = None) -> discord.Message:
        """Post to the table's channel; a text over Discord's length limit goes in several messages.

        Returns the last message, the one that carries ``view``.
        """
        *before, last = split_message(content)
        for part in before:
            await self._post(table, part, None)
        message = await self._post(table, last, view)
        if view is not None:
            view.stop()  # controls are handled by custom id, also after a restart; the view need not stay
        self.posted[table.id] = self.posted.get(table.id, 0) + len(before) + 1
        return message

    async def _post(self, table: Table, content: str, view: discord.ui.View | None) -> discord.Message:
        kwargs: dict[str, Any] = {"allowed_mentions": discord.AllowedMentions.none()}
        if view is not None:
            kwargs["view"] = view
        reply = _REPLY.get()
        if reply is not None and reply.usable and reply.channel_id == table.channel_id:
            try:
                await asyncio.wait_for(reply.acknowledged.wait(), ACK_WAIT)
                return await reply.followup.send(content, wait=True, **kwargs)
            except (discord.HTTPException, TimeoutError) as exc:
                # Expired or refused: the channel still gets the message, in its place in the order.
                reply.usable = False
                log.info("table %s: follow-up refused (%s), posting to the channel", table.id, exc)
        return await self.channel(table).send(content, **kwargs)

    def thread(self, table: Table) -> discord.Thread | None:
        """The mafia's private thread, once created."""
        thread_id = table.meta.get("thread")
        if thread_id is None:
            return None
        channel = self.bot.get_channel(int(thread_id))
        return channel if isinstance(channel, discord.Thread) else None

    # -- rendering -------------------------------------------------------------------------------

    async def _render(self, table: Table, events: Sequence[Event], deadline: datetime | None = None) -> None:
        lang = table.language
        lines: list[str] = []

        held: list[discord.ui.View] = []
        """Controls whose message waits for the texts that follow them in this command."""
        starting: list[Coroutine[Any, Any, None]] = []
        """The mafia's thread, opened while the held start message goes out."""

        async def flush(view: discord.ui.View | None = None) -> discord.Message | None:
            if held:
                first = held.pop()
                sent = await along(self.send(table, take() or "\u200b", first))
                if view is None:
                    return sent
            if not lines and view is None:
                return None
            return await self.send(table, take() or "\u200b", view)

        async def along(sending: Coroutine[Any, Any, discord.Message]) -> discord.Message:
            message = asyncio.ensure_future(sending)
            await asyncio.gather(message, *starting)
            starting.clear()
            return message.result()

        async def heading() -> str:
            # Texts of a command ride with its next message that has controls: one request
            # against the token's global limit instead of two.
            if held:
                await flush()
            return take()

        def take() -> str:
            text = "\n".join(lines)
            lines.clear()
            return text

        for index, event in enumerate(events):
            later = events[index + 1:]
            match event:
                case ev.GameStarted():
                    lines.append(t(lang, "game.started", count=len(table.seats),
                                   ruleset=ruleset_name(lang, table.ruleset)))
                    lines.extend(t(lang, "game.seat", seat=s, user=f"<@{u}>") for s, u in enumerate(table.seats, 1))
                    held.append(self._view((t(lang, "button.card"), custom_id("card", table.id))))
                    starting.append(self._open_thread(table))
                case ev.NightFell(night=0):
                    lines.extend(night_zero_lines(table))
                case ev.NightFell(night=night):
                    lines.append(t(lang, "night.falls", night=night))
                    await flush(self._view((t(lang, "button.night_action"), custom_id("act", table.id))))
                    await self._night_thread(table, night)
                case ev.NightResolved(killed=killed):
                    lines.append(t(lang, "morning.title", day=event.night + 1))
                    if killed:
                        lines.extend(t(lang, "morning.killed", player=seat_label(table, s)) for s in killed)
                        await self._drop_from_thread(table, killed)
                    else:
                        lines.append(t(lang, f"morning.{table.ruleset.miss_announcement}"))
                case ev.DayStarted(day=day) if day == 1:
                    lines.append(t(lang, "day.first", opener=seat_label(table, event.opener)))
                case ev.DayStarted():
                    if event.vote_cancelled:
                        lines.append(t(lang, "day.vote_cancelled"))
                case ev.CriticalFoulsAnnounced(seats=seats):
                    lines.append(t(lang, "morning.critical", seats=seat_list(table, seats)))
                case ev.BestMoveAsked(seat=seat):
                    lines.append(t(lang, "best_move.asked", player=seat_label(table, seat)))
                    await flush(self._view((t(lang, "button.best_move"), custom_id("bestmove", table.id))))
                case ev.BestMoveMade(seat=seat, targets=targets):
                    lines.append(
                        t(lang, "best_move.made", player=seat_label(table, seat), seats=seat_list(table, targets))
                    )
                case ev.FloorGiven(turn=turn):
                    await self._floor(table, turn, deadline, heading=await heading())
                case ev.TurnSkipped(seat=seat, reason="fouls"):
                    lines.append(t(lang, "floor.skipped_fouls", player=seat_label(table, seat)))
                case ev.Nominated(seat=seat, target=target):
                    lines.append(t(lang, "nomination.accepted", target=seat_label(table, target), seat=seat))
                case ev.NomineesRecapped(seats=seats):
                    lines.append(t(lang, "nomination.recap", seats=seat_list(table, seats)))
                case ev.VotingStarted(kind=kind, candidates=candidates):
                    table.meta["round"] = []
                    lines.append(t(lang, f"vote.started.{kind.value}", seats=seat_list(table, candidates)))
                    await self._vote_window(table, candidates[0], deadline, heading=await heading())
                case ev.VoteWindowClosed(candidate=candidate):
                    if not any(isinstance(e, ev.VotingClosed) for e in later):
                        candidates = self._candidates(table)
                        if candidate in candidates and candidates.index(candidate) + 1 < len(candidates):
                            await self._vote_window(table, candidates[candidates.index(candidate) + 1], deadline)
                case ev.VotingClosed(tally=tally, silent=silent):
                    lines.append(t(lang, "vote.result_title"))
                    last = silent_vote_target([candidate for candidate, _voters in tally])
                    for (candidate, voters), (_candidate, count) in zip(tally, vote_totals(tally, silent), strict=True):
                        quiet = silent if candidate == last else ()
                        shown = [seat_list(table, voters)] if voters or not quiet else []
                        if quiet:
                            shown.append(t(lang, "vote.result_silent", seats=seat_list(table, quiet)))
                        lines.append(t(lang, "vote.result_line", target=f"#{candidate}", count=count,
                                       voters="; ".join(shown)))
                    if silent:
                        lines.append(t(lang, "vote.silent", target=f"#{last}", seats=seat_list(table, silent)))
                case ev.TieDeclared(seats=seats):
                    lines.append(t(lang, "vote.tie", seats=seat_list(table, seats)))
                case ev.LiftVoteStarted(seats=seats):
                    needed = lift_votes_needed(table.game.state)
                    lines.append(t(lang, "vote.lift", seats=seat_list(table, seats), count=needed))
                    message = await flush()
                    if message is not None:
                        table.meta.setdefault("votes", {})[str(message.id)] = "lift"
                        table.meta["round"] = [message.id]
                        await table.save_meta()
                        await message.add_reaction(VOTE_EMOJI)
                case ev.LiftVoteClosed(yes=yes, passed=passed):
                    key = "vote.lift_passed" if passed else "vote.lift_failed"
                    lines.append(t(lang, key, count=len(yes), seats=seat_list(table, yes)))
                case ev.PlayersVotedOut(seats=(seat,)) if not any(
                    isinstance(e, ev.VotingClosed | ev.LiftVoteClosed) for e in events[:index]
                ):
                    # No vote closed in this command: the day's only nominee leaves without one.
                    lines.append(t(lang, "vote.lone_nominee", player=seat_label(table, seat)))
                    await self._drop_from_thread(table, (seat,))
                case ev.PlayersVotedOut(seats=seats):
                    lines.extend(t(lang, "vote.out", player=seat_label(table, s)) for s in seats)
                    await self._drop_from_thread(table, seats)
                case ev.NoVoteHeld(reason=reason):
                    lines.append(t(lang, f"vote.none.{reason.value}"))
                case ev.VoteCancelled():
                    lines.append(t(lang, "vote.cancelled"))
                case ev.FoulGiven(seat=seat, oath=oath, total=total):
                    key = "foul.oath" if oath else "foul.given"
                    lines.append(t(lang, key, player=seat_label(table, seat), count=total))
                case ev.FoulRevoked(seat=seat, total=total):
                    lines.append(t(lang, "foul.revoked", player=seat_label(table, seat), count=total))
                case ev.SpeechLost(seat=seat, day=day):
                    lines.append(t(lang, "foul.speech_lost", player=seat_label(table, seat), day=day))
                case ev.SpeechRestored(seat=seat):
                    lines.append(t(lang, "foul.speech_restored", player=seat_label(table, seat)))
                case ev.PlayerRemoved(seat=seat, cause=cause):
                    lines.append(t(lang, f"removal.{cause.value}", player=seat_label(table, seat)))
                    await self._drop_from_thread(table, (seat,))
                case ev.Paused(seat=seat) if seat is None:
                    lines.append(t(lang, "pause.judge"))
                case ev.Paused(seat=int(seat)):
                    seconds = round(table.ruleset.technical_pause_seconds * table.time_scale)
                    lines.append(t(lang, "pause.technical", player=seat_label(table, seat), count=seconds))
                case ev.Resumed():
                    lines.append(t(lang, "pause.resumed"))
                case ev.PointsAwarded(seat=seat, value=value):
                    lines.append(t(lang, "points.awarded", player=seat_label(table, seat), value=value))
                case ev.GameEnded():
                    await flush()
                    lines.extend(self.summary(table))
                    await flush()
                    await self._post_result(table)
                case ev.StageStarted(phase=Phase.FINAL_WORDS):
                    lines.append(t(lang, "end.final_words"))
                case _:
                    pass
        await flush()

    async def _show_current(self, table: Table) -> None:
        # "The host is back" heads the current controls in one message: a restart with many open
        # games then costs one message per game against the global limit, not two.
        state = table.game.state
        back = t(table.language, "game.resumed")
        if state.floor is not None:
            await self._floor(table, state.floor, heading=back)
        elif state.phase is Phase.NIGHT:
            view = self._view((t(table.language, "button.night_action"), custom_id("act", table.id)))
            await self.send(table, f"{back}\n{t(table.language, 'night.falls', night=state.night)}", view)
        else:
            await self.send(table, back)
            if state.phase is Phase.VOTING and state.vote is not None:
                candidate = state.vote.candidates[state.vote.index]
                if current_vote_message(table, candidate) is None:
                    await self._vote_window(table, candidate)

    def _candidates(self, table: Table) -> tuple[int, ...]:
        for event in reversed(table.game.events):
            if isinstance(event, ev.VotingStarted):
                return event.candidates
        return ()

    @staticmethod
    def _view(*buttons: tuple[str, str]) -> discord.ui.View:
        view = discord.ui.View(timeout=None)
        for label, cid in buttons:
            view.add_item(discord.ui.Button(label=label, custom_id=cid, style=discord.ButtonStyle.primary))
        return view

    async def _floor(
        self, table: Table, turn: ev.Turn, deadline: datetime | None = None, *, heading: str = "",
    ) -> None:
        lang = table.language
        ends = countdown(lang, deadline or table.deadline())
        user = f"<@{table.user_at(turn.seat)}>"
        text = t(lang, f"floor.{turn.kind.value}", seat=turn.seat, user=user, count=turn.seconds, countdown=ends)
        view = discord.ui.View(timeout=None)
        view.add_item(discord.ui.Button(label=t(lang, "button.thanks"), custom_id=custom_id("thanks", table.id),
                                        style=discord.ButtonStyle.success))
        state = table.game.state
        # Drawn ahead of its turn's end (``now=False``): the floor may have moved on when it is shown.
        targets = legal_targets(state, table.ruleset, Act.NOMINATE, turn.seat, now=False)
        if is_speech(turn.kind) and nominations_open(state) and targets:
            options = [discord.SelectOption(label=seat_label(table, s)[:100], value=str(s)) for s in targets]
            view.add_item(discord.ui.Select(placeholder=t(lang, "select.nominate"), options=options[:25],
                                            custom_id=custom_id("nominate", table.id)))
        await self.send(table, f"{heading}\n{text}" if heading else text, view)

    async def _vote_window(
        self, table: Table, candidate: int, deadline: datetime | None = None, *, heading: str = "",
    ) -> None:
        ends = countdown(table.language, deadline or table.deadline())
        text = t(table.language, "vote.window", target=seat_label(table, candidate), countdown=ends)
        message = await self.send(table, f"{heading}\n{text}" if heading else text)
        table.meta.setdefault("votes", {})[str(message.id)] = candidate
        table.meta.setdefault("round", []).append(message.id)
        await table.save_meta()
        await message.add_reaction(VOTE_EMOJI)

    async def _post_result(self, table: Table) -> None:
        """Copy the summary to the server's results channel, when it has one besides the table's."""
        settings = await self.bot.guild_settings(table.guild_id)
        channel_id = settings.results_channel_id
        if not channel_id or channel_id == table.channel_id:
            return
        channel = self.bot.get_channel(channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            return
        text = "\n".join([t(table.language, "results.header", channel=f"<#{table.channel_id}>"), *self.summary(table)])
        try:
            await channel.send(text, allowed_mentions=discord.AllowedMentions.none())
        except discord.HTTPException:
            # A results channel the bot may not post in must not stop the table's own summary.
            log.warning("table %s: could not post the result to channel %s", table.id, channel_id)

    def summary(self, table: Table) -> list[str]:
        """The end of the game: the result, every role, departures, checks, fouls and points."""
        lang = table.language
        state = table.game.state
        outcome = state.outcome
        lines = [t(lang, f"end.result.{outcome.result.value}" if outcome else "end.result.abandoned")]
        points = table.game.points()
        lines.append(t(lang, "end.roles_title"))
        for seat in range(1, state.players + 1):
            lines.append(t(lang, "end.role_line", player=seat_label(table, seat),
                           role=role_name(table, state.role(seat)), points=str(points[seat]),
                           count=state.foul_count(seat)))
        if state.departures:
            lines.append(t(lang, "end.departures_title"))
            for d in state.departures:
                lines.append(t(lang, f"end.departure.{d.cause.value}", player=seat_label(table, d.seat)))
        checks = [e for e in table.game.events if isinstance(e, ev.DonChecked | ev.SheriffChecked)]
        if checks:
            lines.append(t(lang, "end.checks_title"))
            lines.extend(check_lines(table, checks))
        return lines

    # -- the mafia's thread ----------------------------------------------------------------------

    async def _open_thread(self, table: Table) -> None:
        channel = self.bot.get_channel(table.channel_id)
        if not isinstance(channel, discord.TextChannel):
            return
        thread = await channel.create_thread(
            name=t(table.language, "thread.name"), type=discord.ChannelType.private_thread,
            invitable=False, auto_archive_duration=1440,
        )
        table.meta["thread"] = thread.id
        await table.save_meta()
        black = table.black_seats()
        # At once, not one after another: when many tables open together each request waits in
        # the token's queue, and the table's game waits for its opening.
        await asyncio.gather(
            *(thread.add_user(discord.Object(id=table.user_at(seat))) for seat in black),
            thread.send(t(table.language, "thread.welcome", seats=seat_list(table, black)),
                        allowed_mentions=discord.AllowedMentions.none()),
        )

    async def _active_or_archived_thread(self, table: Table) -> discord.Thread | None:
        """The mafia's thread, fetched when discord.py dropped it from its cache on archiving."""
        thread = self.thread(table)
        if thread is not None or table.meta.get("thread") is None:
            return thread
        try:
            channel = await self.bot.fetch_channel(int(table.meta["thread"]))
        except (discord.NotFound, discord.Forbidden):
            return None
        return channel if isinstance(channel, discord.Thread) else None

    async def _lock_thread(self, table: Table, *, locked: bool) -> None:
        thread = await self._active_or_archived_thread(table)
        if thread is not None and (thread.locked != locked or thread.archived):
            # Discord edits an archived thread (archived by inactivity, or by a moderator) only in a
            # request that also unarchives it; and the night's message and removals need it active.
            await thread.edit(archived=False, locked=locked)

    async def _night_thread(self, table: Table, night: int) -> None:
        thread = await self._active_or_archived_thread(table)
        if thread is None:
            return
        state = table.game.state
        options = [discord.SelectOption(label=seat_label(table, s)[:100], value=str(s)) for s in shot_targets(state)]
        view = discord.ui.View(timeout=None)
        view.add_item(discord.ui.Select(placeholder=t(table.language, "select.target"), options=options[:25],
                                        custom_id=custom_id("shoot", table.id)))
        await thread.send(t(table.language, "thread.night", night=night), view=view,
                          allowed_mentions=discord.AllowedMentions.none())
        view.stop()

    async def _drop_from_thread(self, table: Table, seats: Sequence[int]) -> None:
        thread = await self._active_or_archived_thread(table)
        if thread is None or table.over:
            return
        for seat in seats:
            if table.role_at(seat).team is Team.BLACK:
                await thread.remove_user(discord.Object(id=table.user_at(seat)))

    async def _archive_thread(self, table: Table) -> None:
        thread = await self._active_or_archived_thread(table)
        if thread is None or (thread.archived and thread.locked):
            return
        if thread.archived:
            await thread.edit(archived=False, locked=True)  # Discord locks only an active thread
        await thread.edit(archived=True, locked=True)
