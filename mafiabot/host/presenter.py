"""The presenter: a table's events, rendered as localized Discord messages, in order.

Each table has one worker that takes the events of one command at a time, so messages appear in
the order things happened even when Discord is slow. Secret events (shots, checks, saves) are
never rendered here: the night controls answer their owner privately instead.

The mafia's room (its lock, unlock, members and archive) changes on a second worker per table,
after the public lines of the command that caused it: Discord may refuse any of it (a server that
requires 2FA for moderation does, when the bot's owner has none), and no public message may wait for
it, be lost by it, or by its timing tell whose departure it follows (see ``mafiabot.host.refusals``).

Every table of a bot shares its token's global limit, so the presenter spends few requests: a
command's texts ride with its next message that has controls, and the messages a public click
causes (the next floor, "Accepted") go as that click's follow-ups, which Discord does not count.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
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
from mafiabot.core.runtime import TableError
from mafiabot.host import i18n
from mafiabot.host.i18n import countdown, join_list, ruleset_name, t
from mafiabot.host.ratelimit import bulk_requests
from mafiabot.host.refusals import Action, refusal_kind, refusal_text

if TYPE_CHECKING:
    from mafiabot.core.ports import Reply as Click
    from mafiabot.core.runtime import Table
    from mafiabot.host.bot import MafiaBot

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
    first: int = 0
    """Where the command's events start in the game's event list (for the vote round they belong to)."""
    room: bool | None = None
    """The mafia's room opens (True) or closes (False) with this command; None: it stays as it was."""


SideJob = tuple[Action, Callable[[], Awaitable[object]]]
"""A best-effort Discord call for the table's side worker, with what it does (for a refusal's notice)."""

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


def vote_round(table: Table, upto: int | None = None) -> int:
    """Which vote round of the game the table is in (after ``upto`` events): 1 for the first."""
    return sum(isinstance(e, ev.VotingStarted | ev.LiftVoteStarted) for e in table.game.events[:upto])


def current_vote_message(table: Table, target: int | str) -> int | None:
    """The vote message of this round for ``target`` (a candidate seat, or "lift")."""
    if table.meta.get("round_no", None) not in (None, vote_round(table)):
        return None  # the round's first window is not shown yet
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
        self._side_queues: dict[int, asyncio.Queue[SideJob | asyncio.Future[None]]] = {}
        self._side_workers: dict[int, asyncio.Task[None]] = {}
        self._catching_up: dict[int, asyncio.Lock] = {}
        self._held_notices: dict[int, list[str]] = {}
        """Public notices to the judge that wait for the end of the game (see ``mafiabot.host.refusals``)."""
        self._room_open: dict[int, bool] = {}
        """Per table, whether the engine last had the mafia's room open (``mafia_room_open``)."""
        self.posted: dict[int, int] = {}
        """Messages posted per table, for reports."""
        self.lateness: deque[float] = deque(maxlen=100_000)
        """Seconds from a command's events to the end of their messages (the newest; openings aside), for reports."""
        self._notes: set[asyncio.Task[None]] = set()

    # -- Effects protocol ------------------------------------------------------------------------

    def publish(
        self, table: Table, events: Sequence[Event], reply: Click | None = None,
        shown: Callable[[], None] | None = None,
    ) -> None:
        """Queue one command's events.

        ``reply``: the click that made it, to post through; ``shown``: called once they are rendered
        (or failed to be).
        """
        first = len(table.game.events) - len(events)
        mine = reply if isinstance(reply, Reply) else None  # the core hands back the Reply a cog gave it
        command = _Command(tuple(events), table.deadline(), mine, asyncio.get_running_loop().time(), shown, first,
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
        self._side_queues.pop(table.id, None)
        self._side_workers.pop(table.id, None)
        self._held_notices.pop(table.id, None)
        self._catching_up.pop(table.id, None)

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
        """After a restart: count or remove every reaction made on this round's vote messages meanwhile.

        A ✋ on the open window counts as if it came live (the rules decide: a dead player's or a
        second one does not); a ✋ on a closed window is late, another emoji is wrong, and each of
        those is removed with its author told why. Hands counted before the crash stay.
        """
        lock = self._catching_up.setdefault(table.id, asyncio.Lock())
        async with lock:  # the resumed controls may start one too: a hand must not be counted, then refused
            await self._catch_up_votes(table)

    async def _catch_up_votes(self, table: Table) -> None:
        from mafiabot.host.votes import refuse_reaction, vote_by_reaction

        state = table.game.state
        round_no = table.meta.get("round_no", vote_round(table))
        if state.vote is not None and round_no == vote_round(table):
            current: int | str | None = (
                "lift" if state.phase is Phase.LIFT_VOTE else state.vote.candidates[state.vote.index]
            )
        else:
            current = None  # the round's windows are all closed
        counted = self._round_votes(table, round_no)
        me = self.bot.user.id if self.bot.user else 0
        votes = table.meta.get("votes", {})
        for message_id in list(table.meta.get("round", [])):
            target = votes.get(str(message_id))
            try:
                message = await self.channel(table).fetch_message(message_id)
            except discord.HTTPException:
                continue
            for reaction in message.reactions:
                emoji = str(reaction.emoji)
                async for user in reaction.users():
                    seat = table.seat_of(user.id)
                    if user.id == me or (emoji == VOTE_EMOJI and seat is not None and counted.get(seat) == target):
                        continue
                    if emoji == VOTE_EMOJI and target == current:
                        if await vote_by_reaction(self.bot, table, target, user.id, reaction.emoji, message_id):
                            counted[seat or 0] = target
                    else:
                        error = (TableError("vote.late") if emoji == VOTE_EMOJI
                                 else TableError("vote.wrong_emoji", emoji=VOTE_EMOJI))
                        await refuse_reaction(self.bot, table, message_id, reaction.emoji, user.id, error)

    @staticmethod
    def _round_votes(table: Table, round_no: int) -> dict[int, int | str]:
        """The hands counted in vote round ``round_no``: seat → candidate (or "lift")."""
        counted: dict[int, int | str] = {}
        seen = 0
        for event in table.game.events:
            if isinstance(event, ev.VotingStarted | ev.LiftVoteStarted):
                seen += 1
            elif seen == round_no and isinstance(event, ev.VoteCast):
                counted[event.seat] = event.candidate
            elif seen == round_no and isinstance(event, ev.LiftVoteCast) and event.yes:
                counted[event.seat] = "lift"
        return counted

    async def close(self) -> None:
        """Stop every worker (the bot is shutting down)."""
        tasks = [*self._workers.values(), *self._side_workers.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers.clear()
        self._queues.clear()
        self._side_workers.clear()
        self._side_queues.clear()

    # -- best-effort side effects ----------------------------------------------------------------

    def side(self, table: Table, *jobs: SideJob) -> None:
        """Queue Discord calls the table's public messages must never wait for, nor be lost by.

        They run one after another in the order queued (the room is unlocked before its picker is
        posted), beside the public messages; a refusal is reported to the judge and skipped.
        """
        if not jobs:
            return
        queue = self._side_queues.get(table.id)
        if queue is None:
            queue = self._side_queues[table.id] = asyncio.Queue()
            # A context of its own: the worker must not inherit the opening's bulk marking, or a reply.
            self._side_workers[table.id] = asyncio.get_running_loop().create_task(
                self._side_work(table, queue), name=f"presenter-side-{table.id}", context=contextvars.Context()
            )
        for job in jobs:
            queue.put_nowait(job)

    async def _side_done(self, table: Table) -> None:
        """Wait until every side effect queued so far has run."""
        if table.id not in self._side_queues:
            return
        done = asyncio.get_running_loop().create_future()
        self._side_queues[table.id].put_nowait(done)
        await done

    async def _side_work(self, table: Table, queue: asyncio.Queue[SideJob | asyncio.Future[None]]) -> None:
        while True:
            item = await queue.get()
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            action, job = item
            try:
                await job()
            except discord.HTTPException as exc:
                await self.refused(table, action, exc)
            except Exception:
                log.exception("table %s: %s failed", table.id, action.value)

    async def refused(self, table: Table, action: Action, exc: discord.HTTPException) -> None:
        """Discord refused a side effect: tell the judge, once per kind of refusal and table, with the fix.

        The notice goes as a direct message to the judge; if the judge's DMs are closed too, to the
        table's channel, addressed to the judge and naming no player, at once or, when its timing
        would tell of a black player (a room member change), with the end of the game.
        """
        kind = refusal_kind(action, exc)
        log.warning("table %s: Discord refused %s (%s, code %s): %s", table.id, action.value, exc.status,
                    exc.code, exc.text)
        told: list[str] = table.meta.setdefault("refused", [])
        if kind in told:
            return
        told.append(kind)
        with contextlib.suppress(Exception):
            await table.save_meta()
        lang = table.language
        reason = refusal_text(lang, kind)
        try:
            judge = self.bot.get_user(table.judge_id) or await self.bot.fetch_user(table.judge_id)
            await judge.send(t(lang, "refusal.to_judge", channel=f"<#{table.channel_id}>", reason=reason))
            return
        except discord.HTTPException as dm_error:
            log.info("table %s: the judge's DMs are closed too (%s); telling the channel", table.id, dm_error)
        notice = t(lang, "refusal.public", reason=reason)
        if action.tells_of_roles and not table.over:
            self._held_notices.setdefault(table.id, []).append(notice)
        else:
            self._queue(table).put_nowait(("notice", notice))

    async def _room_failed(self, table: Table, action: Action, exc: discord.HTTPException) -> None:
        """The mafia's room could not be opened: a game without one is no game, so it is cancelled."""
        from engine import Abandon

        kind = refusal_kind(action, exc)
        log.warning("table %s: the mafia's room could not be opened (%s): cancelled", table.id, exc)
        table.meta.setdefault("refused", []).append(kind)
        self._queue(table).put_nowait(("notice", t(table.language, "room.failed", reason=refusal_text(
            table.language, kind))))

        async def cancel() -> None:
            try:
                await table.submit(Abandon())
            except Exception:
                log.exception("table %s: could not cancel the table without a room", table.id)

        asyncio.get_running_loop().create_task(cancel())

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
                elif item[0] == "notice":
                    await self.send(table, item[1])
                elif item[0] == "end":
                    self.side(table, (Action.ARCHIVE_ROOM, lambda: self._archive_thread(table)))
                    await self._side_done(table)
                    self._side_workers.pop(table.id).cancel()
                    self._side_queues.pop(table.id, None)
                    for notice in self._held_notices.pop(table.id, []):
                        await self.send(table, notice)
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
                await self._render(table, command.events, command.deadline, first=command.first, room=command.room)
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

    async def send(
        self, table: Table, content: str, view: discord.ui.View | None = None, *, nonce: str | None = None,
    ) -> discord.Message:
        """Post to the table's channel; a text over Discord's length limit goes in several messages.

        Returns the last message, the one that carries ``view``; ``nonce`` makes that one idempotent
        (Discord answers a repeat with the first message, as the channel's own post, never a follow-up).
        """
        *before, last = split_message(content)
        for part in before:
            await self._post(table, part, None)
        message = await self._post(table, last, view, nonce=nonce)
        if view is not None:
            view.stop()  # controls are handled by custom id, also after a restart; the view need not stay
        self.posted[table.id] = self.posted.get(table.id, 0) + len(before) + 1
        return message

    async def _post(
        self, table: Table, content: str, view: discord.ui.View | None, *, nonce: str | None = None,
    ) -> discord.Message:
        kwargs: dict[str, Any] = {"allowed_mentions": discord.AllowedMentions.none()}
        if view is not None:
            kwargs["view"] = view
        reply = _REPLY.get()
        if nonce is not None:
            return await self.channel(table).send(content, nonce=nonce, **kwargs)
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
        """The mafia's private thread, once created, if discord.py has it cached."""
        thread_id = table.meta.get("thread")
        if thread_id is None:
            return None
        channel = self.bot.get_channel(int(thread_id))
        return channel if isinstance(channel, discord.Thread) else None

    async def room(self, table: Table) -> discord.Thread | None:
        """The mafia's thread, fetched when not cached: discord.py forgets a thread once it is archived.

        Raises:
            discord.HTTPException: Discord would not show it (deleted, or no access).
        """
        thread = self.thread(table)
        if thread is not None or table.meta.get("thread") is None:
            return thread
        channel = await self.bot.fetch_channel(int(table.meta["thread"]))
        return channel if isinstance(channel, discord.Thread) else None

    # -- rendering -------------------------------------------------------------------------------

    async def _render(
        self, table: Table, events: Sequence[Event], deadline: datetime | None = None, *, first: int = 0,
        room: bool | None = None,
    ) -> None:
        lang = table.language
        lines: list[str] = []

        held: list[discord.ui.View] = []
        """Controls whose message waits for the texts that follow them in this command."""
        starting: list[Coroutine[Any, Any, None]] = []
        """The mafia's thread, opened while the held start message goes out."""
        after: list[SideJob] = []
        """The room's changes, queued once this command's public lines are out: no public message
        waits for them, or is lost by them, and their timing tells nothing about whose they are."""

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
                    after.extend(self._night_thread(table, night))
                case ev.NightResolved(killed=killed):
                    lines.append(t(lang, "morning.title", day=event.night + 1))
                    if killed:
                        lines.extend(t(lang, "morning.killed", player=seat_label(table, s)) for s in killed)
                        after.extend(self._drop_from_thread(table, killed))
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
                    round_no = vote_round(table, first + index + 1)
                    if table.meta.get("round_no") != round_no:
                        table.meta["round"], table.meta["round_no"] = [], round_no
                    lines.append(t(lang, f"vote.started.{kind.value}", seats=seat_list(table, candidates)))
                    await self._vote_window(table, candidates[0], round_no, deadline, heading=await heading())
                case ev.VoteWindowClosed(candidate=candidate):
                    if not any(isinstance(e, ev.VotingClosed) for e in later):
                        candidates = self._candidates(table)
                        if candidate in candidates and candidates.index(candidate) + 1 < len(candidates):
                            await self._vote_window(table, candidates[candidates.index(candidate) + 1],
                                                    vote_round(table, first + index + 1), deadline)
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
                        table.meta["round_no"] = vote_round(table, first + index + 1)
                        await table.save_meta()
                        await self._seed_vote(table, message)
                case ev.LiftVoteClosed(yes=yes, passed=passed):
                    key = "vote.lift_passed" if passed else "vote.lift_failed"
                    lines.append(t(lang, key, count=len(yes), seats=seat_list(table, yes)))
                case ev.PlayersVotedOut(seats=(seat,)) if not any(
                    isinstance(e, ev.VotingClosed | ev.LiftVoteClosed) for e in events[:index]
                ):
                    # No vote closed in this command: the day's only nominee leaves without one.
                    lines.append(t(lang, "vote.lone_nominee", player=seat_label(table, seat)))
                    after.extend(self._drop_from_thread(table, (seat,)))
                case ev.PlayersVotedOut(seats=seats):
                    lines.extend(t(lang, "vote.out", player=seat_label(table, s)) for s in seats)
                    after.extend(self._drop_from_thread(table, seats))
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
                    after.extend(self._drop_from_thread(table, (seat,)))
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
        try:
            await flush()
        finally:
            if room is not None:  # the engine opened or closed the room: before the night's picker goes in
                after.insert(0, self._lock_thread(table, locked=not room))
            self.side(table, *after)

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
                round_no = vote_round(table)
                if table.meta.get("round_no") != round_no:
                    table.meta["round"], table.meta["round_no"] = [], round_no
                message = await self._vote_window(table, state.vote.candidates[state.vote.index], round_no)
                if message is not None and any(r.count > int(r.me) for r in message.reactions):
                    # Posted before the crash (Discord answered with it by its nonce) and voted on since.
                    await self.catch_up_votes(table)

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
        self, table: Table, candidate: int, round_no: int, deadline: datetime | None = None, *, heading: str = "",
    ) -> discord.Message | None:
        """Post a candidate's vote window once per round, also across a restart.

        The window a restarted bot shows may already have gone out after the crash's last stored
        command; the nonce makes Discord answer with that message instead of a second one.
        """
        votes = table.meta.get("votes", {})
        if table.meta.get("round_no") == round_no and any(
            votes.get(str(m)) == candidate for m in table.meta.get("round", [])
        ):
            if heading:
                await self.send(table, heading)
            return None
        ends = countdown(table.language, deadline or table.deadline())
        text = t(table.language, "vote.window", target=seat_label(table, candidate), countdown=ends)
        nonce = f"v{table.id}.{round_no}.{candidate}"[-25:]
        message = await self.send(table, f"{heading}\n{text}" if heading else text, nonce=nonce)
        table.meta.setdefault("votes", {})[str(message.id)] = candidate
        table.meta.setdefault("round", []).append(message.id)
        await table.save_meta()
        await self._seed_vote(table, message)
        return message

    async def _seed_vote(self, table: Table, message: discord.Message) -> None:
        """The ✋ players click; refused, the players can still add it themselves."""
        try:
            await message.add_reaction(VOTE_EMOJI)
        except discord.HTTPException as exc:
            await self.refused(table, Action.SEED_REACTION, exc)

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
        try:
            thread = await channel.create_thread(
                name=t(table.language, "thread.name"), type=discord.ChannelType.private_thread,
                invitable=False, auto_archive_duration=1440,
            )
        except discord.HTTPException as exc:
            await self._room_failed(table, Action.CREATE_ROOM, exc)
            return
        table.meta["thread"] = thread.id
        await table.save_meta()
        black = table.black_seats()
        # At once, not one after another: when many tables open together each request waits in
        # the token's queue, and the table's game waits for its opening.
        results = await asyncio.gather(
            *(thread.add_user(discord.Object(id=table.user_at(seat))) for seat in black),
            thread.send(t(table.language, "thread.welcome", seats=seat_list(table, black)),
                        allowed_mentions=discord.AllowedMentions.none()),
            return_exceptions=True,
        )
        *added, welcome = results
        refused = next((r for r in added if isinstance(r, discord.HTTPException)), None)
        if refused is not None:
            await self._room_failed(table, Action.ADD_TO_ROOM, refused)
        elif isinstance(welcome, discord.HTTPException):
            await self.refused(table, Action.POST_IN_ROOM, welcome)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, discord.HTTPException):
                raise result

    def _lock_thread(self, table: Table, *, locked: bool) -> SideJob:
        async def edit() -> None:
            thread = await self.room(table)
            if thread is None:
                return
            if locked and thread.locked and not thread.archived:
                return
            # ``archived: false`` too: Discord refuses any change to an archived thread that does not unarchive it.
            await thread.edit(archived=False, locked=locked)

        return (Action.LOCK_ROOM if locked else Action.UNLOCK_ROOM), edit

    def _night_thread(self, table: Table, night: int) -> list[SideJob]:
        async def picker() -> None:
            thread = await self.room(table)
            if thread is None:
                return
            state = table.game.state
            options = [discord.SelectOption(label=seat_label(table, s)[:100], value=str(s))
                       for s in shot_targets(state)]
            view = discord.ui.View(timeout=None)
            view.add_item(discord.ui.Select(placeholder=t(table.language, "select.target"), options=options[:25],
                                            custom_id=custom_id("shoot", table.id)))
            try:
                await thread.send(t(table.language, "thread.night", night=night), view=view,
                                  allowed_mentions=discord.AllowedMentions.none())
            finally:
                view.stop()

        return [(Action.POST_IN_ROOM, picker)]

    def _drop_from_thread(self, table: Table, seats: Sequence[int]) -> list[SideJob]:
        """Every departing player gets a job, red or black, so the queue's length tells nothing either."""

        def drop(seat: int) -> SideJob:
            async def remove() -> None:
                thread = await self.room(table)
                if thread is None or table.over or table.role_at(seat).team is not Team.BLACK:
                    return
                await thread.remove_user(discord.Object(id=table.user_at(seat)))

            return Action.REMOVE_FROM_ROOM, remove

        return [drop(seat) for seat in seats]

    async def _archive_thread(self, table: Table) -> None:
        thread = await self.room(table)
        if thread is None or (thread.archived and thread.locked):
            return
        if thread.archived:
            await thread.edit(archived=False, locked=True)  # Discord locks only an active thread
        await thread.edit(archived=True, locked=True)
