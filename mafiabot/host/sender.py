"""The sender: what the renderer drew, posted to Discord in order, with as few requests as it allows.

Each table has one worker that runs its jobs one at a time (a command's messages, the ten-seconds
warning, a notice), so messages appear in the order things happened even when Discord is slow.

The mafia's room (its lock, unlock, members and archive) changes on a second worker per table,
after the public lines of the command that caused it. Like the mutes, the room is reconciled: each
command that may change it hands the room the game wants then (``mafiabot.core.room.desired_room``),
and only its difference from the room Discord is known to have is sent; what Discord refuses stays
known as it was, so the next wanted room sends it again (the judge is told once per kind). Discord
may refuse any of it (a server that requires 2FA for moderation does, when the bot's owner has
none), and no public message may wait for it, be lost by it, or by its timing tell whose departure
it follows (see ``mafiabot.host.refusals``).

Every table of a bot shares its token's global limit: the messages a public click causes (the next
floor, "Accepted") go as that click's follow-ups, which Discord does not count.

A message's pictures are drawn in a thread (drawing takes tens of milliseconds, the event loop
serves every table) and go as its files, in the message's place in the table's order. Discord may
refuse them (too large, alt text too long, no Attach Files permission): the text then goes alone
and the judge is told once, as for any refused side effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import io
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, assert_never

import discord

from engine import Abandon
from mafiabot.core.meta import LIFT
from mafiabot.core.room import RoomChanges, RoomState, desired_room, room_changes
from mafiabot.host.drawing import picture_pool, run_in
from mafiabot.host.i18n import t
from mafiabot.host.ports import guild_channel
from mafiabot.host.refusals import Action, refusal_kind, refusal_text
from mafiabot.host.render import (
    Button,
    Control,
    DropFromRoom,
    LockRoom,
    Menu,
    Outgoing,
    Picture,
    PostPicker,
    ReturnToRoom,
    RoomJob,
    RoomOpening,
    Route,
    Style,
    TableView,
    night_picker,
    room_opening,
)

if TYPE_CHECKING:
    from discord.abc import GuildChannel, PrivateChannel

    from mafiabot.core.records import GuildSettings
    from mafiabot.core.runtime import Table

log = logging.getLogger(__name__)

VOTE_EMOJI = "\N{RAISED HAND}"
MESSAGE_LIMIT = 2000
"""Characters Discord accepts in one message."""
ACK_WAIT = 3.0
"""Seconds a follow-up waits for its click to be acknowledged (Discord's own limit for that)."""
CLOSE_GRACE = 0.5
"""Seconds a worker cancelled at shutdown has to finish before it is cancelled again."""
NAME_LIMIT = 32
"""Characters of a player's name the bot echoes: Discord's own limit for a display name."""
UPLOAD_REFUSALS = (40005, 50035, 50013)
"""Codes with which Discord refuses a message's files (too large, bad alt text, no Attach Files), not its text."""

Drawn = tuple[Picture, bytes]
"""A picture and the bytes it drew."""


class Client(Protocol):
    """The Discord look-ups the sender makes (the bot's client is one)."""

    @property
    def user(self) -> discord.ClientUser | None:
        """The bot's own user, once logged in."""

    def get_channel(self, id: int, /) -> GuildChannel | discord.Thread | PrivateChannel | None:
        """A cached channel or thread."""

    def get_guild(self, id: int, /) -> discord.Guild | None:
        """A cached guild."""

    def get_partial_messageable(
        self, id: int, *, guild_id: int | None = None, type: discord.ChannelType | None = None,
    ) -> discord.PartialMessageable:
        """A channel to post in without its data."""

    async def fetch_channel(self, channel_id: int, /) -> GuildChannel | PrivateChannel | discord.Thread:
        """A channel or thread, asked of Discord."""

    def get_user(self, id: int, /) -> discord.User | None:
        """A cached user."""

    async def fetch_user(self, user_id: int, /) -> discord.User:
        """A user, asked of Discord."""


SettingsLookup = Callable[[int], Awaitable["GuildSettings"]]
"""A server's saved settings by guild id."""


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


Job = Callable[[], Awaitable[None]]
"""One item of a table's worker."""
SideJob = tuple[Action, Callable[[], Awaitable[object]]]
"""A best-effort Discord call for the table's side worker, with what it does (for a refusal's notice)."""

_REPLY: ContextVar[Reply | None] = ContextVar("reply", default=None)
"""The click whose command a table's worker is sending, if any."""


def plain(text: str, limit: int) -> str:
    r"""A user's text as the bot may echo it: at most ``limit`` characters, markdown and mentions neutralized.

    >>> plain("*hi* @everyone", 40)
    '\\*hi\\* @\u200beveryone'
    >>> plain("x" * 50, 5)
    'xxxx…'
    """
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return discord.utils.escape_mentions(discord.utils.escape_markdown(cut))


def table_view(table: Table, deadline: datetime | None = None) -> TableView:
    """What the renderer may read of ``table``; ``deadline``: the command's, else the running timer's."""
    return TableView(
        id=table.id, language=table.language, ruleset=table.ruleset, seats=tuple(table.seats),
        names=tuple(plain(name, NAME_LIMIT) for name in table.names), game=table.game,
        deadline=deadline or table.deadline(), time_scale=table.time_scale, channel_id=table.channel_id,
    )


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


def ui_view(controls: Sequence[Control]) -> discord.ui.View:
    """The renderer's controls as a discord.py view (handled by custom id, so it need not stay)."""
    view = discord.ui.View(timeout=None)
    for control in controls:
        match control:
            case Button(label=label, custom_id=cid, style=style):
                colour = discord.ButtonStyle.success if style is Style.SUCCESS else discord.ButtonStyle.primary
                view.add_item(discord.ui.Button(label=label, custom_id=cid, style=colour))
            case Menu(placeholder=placeholder, custom_id=cid, options=options):
                choices = [discord.SelectOption(label=o.label, value=o.value) for o in options]
                view.add_item(discord.ui.Select(placeholder=placeholder, options=choices, custom_id=cid))
            case _:
                assert_never(control)
    return view


class Sender:
    """Posts every table's messages, in order, and runs its room's side jobs."""

    def __init__(self, client: Client, settings: SettingsLookup) -> None:
        self.client = client
        self.settings = settings
        self._queues: dict[int, asyncio.Queue[Job | asyncio.Future[None]]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}
        self._side_queues: dict[int, asyncio.Queue[SideJob | asyncio.Future[None]]] = {}
        self._side_workers: dict[int, asyncio.Task[None]] = {}
        self._held_notices: dict[int, list[str]] = {}
        """Public notices to the judge that wait for the end of the game (see ``mafiabot.host.refusals``)."""
        self._room_open: dict[int, bool] = {}
        """Per table, whether the engine last had the mafia's room open."""
        self._rooms: dict[int, RoomState] = {}
        """Per table, the mafia's room as Discord is known to have it: what was sent and taken."""
        self._refused_for: dict[int, RoomState] = {}
        """Per table, the wanted room a change was refused for: tried again for a later command's, even an equal one."""
        self.posted: dict[int, int] = {}
        """Messages posted per table, for reports."""
        self.lateness: deque[float] = deque(maxlen=100_000)
        """Seconds from a command's events to the end of their messages (the newest; openings aside), for reports."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._pictures = picture_pool()
        """The tables' own drawing threads: a member's chart never queues in front of a morning card."""

    # -- the table's worker ----------------------------------------------------------------------

    def put(self, table: Table, job: Job) -> None:
        """Queue a job for the table's worker."""
        self._queue(table).put_nowait(job)

    def _queue(self, table: Table) -> asyncio.Queue[Job | asyncio.Future[None]]:
        queue = self._queues.get(table.id)
        if queue is None:
            queue = self._queues[table.id] = asyncio.Queue()
            self._workers[table.id] = asyncio.get_running_loop().create_task(
                self._work(table, queue), name=f"presenter-{table.id}"
            )
        return queue

    async def _work(self, table: Table, queue: asyncio.Queue[Job | asyncio.Future[None]]) -> None:
        while True:
            item = await queue.get()
            try:
                if isinstance(item, asyncio.Future):
                    await self._end(table, item)
                    return
                await item()
            except Exception:
                log.exception("table %s: rendering failed", table.id)
            finally:
                queue.task_done()

    async def _end(self, table: Table, done: asyncio.Future[None]) -> None:
        """Archive the room once its jobs ran, post the notices held for the end, and let the caller go."""
        try:
            self.side(table, (Action.ARCHIVE_ROOM, lambda: self._archive_room(table)))
            await self._side_done(table)
            self._side_workers.pop(table.id).cancel()
            self._side_queues.pop(table.id, None)
            for notice in self._held_notices.pop(table.id, []):
                await self.send(table, notice)
        except Exception:
            log.exception("table %s: rendering failed", table.id)
        finally:
            if not done.done():
                done.set_result(None)

    async def drained(self, table_id: int) -> None:
        """Wait until everything queued for the table so far is on Discord."""
        queue = self._queues.get(table_id)
        if queue is not None:
            await queue.join()

    async def finished(self, table: Table) -> None:
        """Wait until everything queued for the table is shown, then close its workers."""
        done = asyncio.get_running_loop().create_future()
        self._queue(table).put_nowait(done)
        await done
        for table_map in (self._queues, self._workers, self._side_queues, self._side_workers, self._held_notices,
                          self._rooms, self._refused_for):
            table_map.pop(table.id, None)

    async def close(self) -> None:
        """Stop every worker (the bot is shutting down)."""
        self._pictures.shutdown(wait=False, cancel_futures=True)
        pending = {*self._workers.values(), *self._side_workers.values()}
        while pending:
            # CPython 3.11's ``asyncio.wait_for`` can swallow a cancellation that meets its own
            # timeout, leaving a worker waiting on its queue: cancel again until every one is done.
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=CLOSE_GRACE)
        self._workers.clear()
        self._queues.clear()
        self._side_workers.clear()
        self._side_queues.clear()

    def spawn(self, job: Awaitable[None]) -> None:
        """Run ``job`` beside the workers, kept until it is done."""
        task = asyncio.ensure_future(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @contextlib.contextmanager
    def replying(self, reply: Reply | None) -> Iterator[None]:
        """The messages sent inside go as ``reply``'s follow-ups while it is usable."""
        token = _REPLY.set(reply)
        try:
            yield
        finally:
            _REPLY.reset(token)

    # -- a command's messages --------------------------------------------------------------------

    async def deliver(self, table: Table, messages: Sequence[Outgoing]) -> discord.Message | None:
        """Post ``messages`` in order; the last one's message (None if it was not posted)."""
        message: discord.Message | None = None
        for out in messages:
            message = await self._deliver(table, out)
        return message

    async def _deliver(self, table: Table, out: Outgoing) -> discord.Message | None:
        match out.route:
            case Route.RESULTS:
                await self._post_result(table, out.text, out.pictures)
                return None
            case Route.JUDGE:
                await self.tell_judge(table, out.text)
                return None
            case Route.ROOM:
                await self._post_in_room(table, lambda: out)
                return None
            case Route.CHANNEL:
                if out.vote is not None:
                    return await self._vote_window(table, out)
                if out.room is not None:
                    return await self._along(table, out, out.room)
                return await self.send(table, out.text, out.controls, pictures=out.pictures)
            case _:
                assert_never(out.route)

    async def _along(self, table: Table, out: Outgoing, room: RoomOpening) -> discord.Message:
        """The message and the room's creation at once: the game waits for its opening."""
        message = asyncio.ensure_future(self.send(table, out.text, out.controls, pictures=out.pictures))
        await asyncio.gather(message, self._open_room(table, room))
        return message.result()

    async def _vote_window(self, table: Table, out: Outgoing) -> discord.Message | None:
        """Post a vote window once per round, also across a restart; its ✋ seeded, its id kept.

        The window a restarted bot shows may already have gone out after the crash's last stored
        command; the nonce makes Discord answer with that message instead of a second one.
        """
        vote = out.vote
        pictures = out.pictures
        if vote is None:
            return await self.send(table, out.text, out.controls, pictures=pictures)
        if vote.target == LIFT:
            message = await self.send(table, out.text, out.controls, pictures=pictures)
            table.meta.open_lift(message.id, vote.round_no)
        else:
            if vote.new_round:
                table.meta.start_round(vote.round_no)
            if table.meta.shows(vote.target, vote.round_no):
                if vote.heading:
                    await self.send(table, vote.heading, pictures=pictures)
                return None
            nonce = f"v{table.id}.{vote.round_no}.{vote.target}"[-25:]
            message = await self.send(table, out.text, nonce=nonce, pictures=pictures)
            table.meta.add_window(message.id, vote.target)
        await table.save_meta()
        await self._seed_vote(table, message)
        return message

    async def _seed_vote(self, table: Table, message: discord.Message) -> None:
        """The ✋ players click; refused, the players can still add it themselves."""
        try:
            await message.add_reaction(VOTE_EMOJI)
        except discord.HTTPException as exc:
            await self.refused(table, Action.SEED_REACTION, exc)

    async def _post_result(self, table: Table, text: str, pictures: Sequence[Picture] = ()) -> None:
        """Copy the summary to the server's results channel, when it has one besides the table's."""
        settings = await self.settings(table.guild_id)
        channel_id = settings.results_channel_id
        if not channel_id or channel_id == table.channel_id:
            return
        channel = self.client.get_channel(channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            return
        drawn = await self._draw(table, pictures)
        try:
            try:
                await channel.send(text, allowed_mentions=discord.AllowedMentions.none(), **_with_files(drawn))
            except discord.HTTPException as exc:
                if not drawn or exc.code not in UPLOAD_REFUSALS:
                    raise
                await channel.send(text, allowed_mentions=discord.AllowedMentions.none())
                await self.refused(table, Action.ATTACH_PICTURE, exc)
        except discord.HTTPException:
            # A results channel the bot may not post in must not stop the table's own summary.
            log.warning("table %s: could not post the result to channel %s", table.id, channel_id)

    # -- sending ---------------------------------------------------------------------------------

    def channel(self, table: Table) -> discord.abc.Messageable:
        """The table's text channel."""
        channel = guild_channel(self.client, table.guild_id, table.channel_id)
        if isinstance(channel, discord.abc.Messageable):
            return channel
        return self.client.get_partial_messageable(table.channel_id)

    async def send(
        self,
        table: Table,
        content: str,
        controls: Sequence[Control] = (),
        *,
        nonce: str | None = None,
        pictures: Sequence[Picture] = (),
    ) -> discord.Message:
        """Post to the table's channel; a text over Discord's length limit goes in several messages.

        Returns the last message, the one that carries ``controls`` and ``pictures``; ``nonce`` makes
        that one idempotent (Discord answers a repeat with the first message, as the channel's own
        post, never a follow-up). The pictures are drawn off the event loop before the text goes, so
        the message keeps its place in the table's order; refused, the text goes without them.
        """
        drawn = await self._draw(table, pictures)
        *before, last = split_message(content)
        for part in before:
            await self._post(table, part, None)
        view = ui_view(controls) if controls else None
        message = await self._with_pictures(table, last, view, nonce, drawn)
        if view is not None:
            view.stop()  # controls are handled by custom id, also after a restart; the view need not stay
        self.posted[table.id] = self.posted.get(table.id, 0) + len(before) + 1
        return message

    async def _draw(self, table: Table, pictures: Sequence[Picture]) -> list[Drawn]:
        """Each picture's bytes, drawn in threads at once; a drawing that fails costs only the pictures."""
        if not pictures:
            return []
        try:
            drawn = await asyncio.gather(*(run_in(self._pictures, picture.draw) for picture in pictures))
        except Exception:
            log.exception("table %s: drawing a picture failed; the text goes alone", table.id)
            return []
        return list(zip(pictures, drawn, strict=True))

    async def _with_pictures(
        self, table: Table, content: str, view: discord.ui.View | None, nonce: str | None, drawn: Sequence[Drawn]
    ) -> discord.Message:
        """Post with the drawn pictures; if Discord refuses the files, the text alone, and the judge is told.

        Discord's refusal of the files (413/40005 too large, 50035 bad alt text, 50013 no Attach
        Files) posts nothing, so the text is sent again without them; a refusal that also meets the
        text is the text's own and is raised.
        """
        if not drawn:
            return await self._post(table, content, view, nonce=nonce)
        try:
            return await self._post(table, content, view, nonce=nonce, drawn=drawn)
        except discord.HTTPException as exc:
            if exc.code not in UPLOAD_REFUSALS:
                raise
            message = await self._post(table, content, view, nonce=nonce)
            await self.refused(table, Action.ATTACH_PICTURE, exc)
            return message

    async def _post(
        self,
        table: Table,
        content: str,
        view: discord.ui.View | None,
        *,
        nonce: str | None = None,
        drawn: Sequence[Drawn] = (),
    ) -> discord.Message:
        kwargs: dict[str, Any] = {"allowed_mentions": discord.AllowedMentions.none()}
        if view is not None:
            kwargs["view"] = view
        if drawn:
            kwargs["files"] = _files(drawn)
        reply = _REPLY.get()
        if nonce is not None:
            return await self.channel(table).send(content, nonce=nonce, **kwargs)
        if reply is not None and reply.usable and reply.channel_id == table.channel_id:
            try:
                await asyncio.wait_for(reply.acknowledged.wait(), ACK_WAIT)
                return await reply.followup.send(content, wait=True, **kwargs)
            except (discord.HTTPException, TimeoutError) as exc:
                if drawn and isinstance(exc, discord.HTTPException) and exc.code in UPLOAD_REFUSALS:
                    raise  # the files, not the follow-up: the text goes again as a follow-up
                # Expired or refused: the channel still gets the message, in its place in the order.
                reply.usable = False
                log.info("table %s: follow-up refused (%s), posting to the channel", table.id, exc)
                if drawn:
                    kwargs["files"] = _files(drawn)  # the follow-up's are spent
        return await self.channel(table).send(content, **kwargs)

    async def tell_judge(self, table: Table, text: str) -> None:
        """A direct message to the judge, the one private path to them; the table's channel if DMs are closed."""
        mentions = discord.AllowedMentions.none()
        try:
            judge = self.client.get_user(table.judge_id) or await self.client.fetch_user(table.judge_id)
            await judge.send(text, allowed_mentions=mentions)
            return
        except discord.HTTPException:
            log.info("table %s: the judge takes no direct messages; telling the table", table.id)
        try:
            await self.channel(table).send(text, allowed_mentions=mentions)
        except discord.HTTPException:
            log.warning("table %s: could not tell anyone that a mute was lifted", table.id)

    # -- refusals --------------------------------------------------------------------------------

    async def refused(self, table: Table, action: Action, exc: discord.HTTPException) -> None:
        """Discord refused a side effect: tell the judge, once per kind of refusal and table, with the fix.

        The notice goes as a direct message to the judge; if the judge's DMs are closed too, to the
        table's channel, addressed to the judge and naming no player, at once or, when its timing
        would tell of a black player (a room member change), with the end of the game.
        """
        kind = refusal_kind(action, exc)
        log.warning("table %s: Discord refused %s (%s, code %s): %s", table.id, action.value, exc.status,
                    exc.code, exc.text)
        if kind in table.meta.refused:
            return
        table.meta.refused.append(kind)
        with contextlib.suppress(Exception):
            await table.save_meta()
        lang = table.language
        reason = refusal_text(lang, kind)
        try:
            judge = self.client.get_user(table.judge_id) or await self.client.fetch_user(table.judge_id)
            await judge.send(t(lang, "refusal.to_judge", channel=f"<#{table.channel_id}>", reason=reason))
            return
        except discord.HTTPException as dm_error:
            log.info("table %s: the judge's DMs are closed too (%s); telling the channel", table.id, dm_error)
        notice = t(lang, "refusal.public", reason=reason)
        if action.tells_of_roles and not table.over:
            self._held_notices.setdefault(table.id, []).append(notice)
        else:
            self.notice(table, notice)

    def notice(self, table: Table, text: str) -> None:
        """Queue a text for the table's channel, in its place among the table's messages."""

        async def post() -> None:
            await self.send(table, text)

        self.put(table, post)

    async def _room_failed(self, table: Table, action: Action, exc: discord.HTTPException) -> None:
        """The mafia's room could not be opened: a game without one is no game, so it is cancelled."""
        kind = refusal_kind(action, exc)
        log.warning("table %s: the mafia's room could not be opened (%s): cancelled", table.id, exc)
        table.meta.refused.append(kind)
        self.notice(table, t(table.language, "room.failed", reason=refusal_text(table.language, kind)))

        async def cancel() -> None:
            try:
                await table.submit(Abandon())
            except Exception:
                log.exception("table %s: could not cancel the table without a room", table.id)

        self.spawn(cancel())

    # -- the mafia's room ------------------------------------------------------------------------

    def room_change(self, table: Table, wanted: RoomState, *, started: bool) -> bool | None:
        """Whether the command just applied opened (True) or closed (False) the room; None: neither.

        Asked as the command is published, with the room the state that command left wants, however
        late its messages go out. A new room (``started``) is created open.
        """
        was = self._room_open.get(table.id)
        if was is None and started:
            was = True
        now = not wanted.locked
        self._room_open[table.id] = now
        return None if now == was else now

    def room_was(self, table: Table) -> None:
        """After a restart: the room is as the engine left it before."""
        room = desired_room(table.game.state)
        self._room_open[table.id] = not room.locked
        self._rooms[table.id] = room

    async def refill_room(self, table: Table) -> None:
        """After a restart: the room has every black player it should, even if a crash cut its opening short.

        A SIGKILL right after the deal may come before the room exists, or before everyone was
        added to it; then a black player could not see the night's picker. Adding a member twice
        changes nothing on Discord.
        """
        state = table.game.state
        if table.game.over:
            return
        room = desired_room(state)
        if table.meta.thread is None:
            await self._open_room(table, room_opening(table_view(table)))
            if room.locked:
                await self._lock_room(table, locked=True)
            return
        thread = await self.room(table)
        if thread is None:
            return
        await asyncio.gather(*(thread.add_user(discord.Object(id=table.user_at(seat))) for seat in room.members))
        self._rooms[table.id] = RoomState(room.members, locked=self._rooms.get(table.id, room).locked)

    def thread(self, table: Table) -> discord.Thread | None:
        """The mafia's private thread, once created, if discord.py has it cached."""
        if table.meta.thread is None:
            return None
        channel = guild_channel(self.client, table.guild_id, table.meta.thread)
        return channel if isinstance(channel, discord.Thread) else None

    async def room(self, table: Table) -> discord.Thread | None:
        """The mafia's thread, fetched when not cached: discord.py forgets a thread once it is archived.

        Raises:
            discord.HTTPException: Discord would not show it (deleted, or no access).
        """
        thread = self.thread(table)
        if thread is not None or table.meta.thread is None:
            return thread
        channel = await self.client.fetch_channel(table.meta.thread)
        return channel if isinstance(channel, discord.Thread) else None

    async def _open_room(self, table: Table, opening: RoomOpening) -> None:
        channel = guild_channel(self.client, table.guild_id, table.channel_id)
        if not isinstance(channel, discord.TextChannel):
            return
        try:
            thread = await channel.create_thread(
                name=opening.name, type=discord.ChannelType.private_thread, invitable=False,
                auto_archive_duration=1440,
            )
        except discord.HTTPException as exc:
            await self._room_failed(table, Action.CREATE_ROOM, exc)
            return
        table.meta.thread = thread.id
        self._rooms[table.id] = RoomState(frozenset(), locked=False)
        await table.save_meta()
        # At once, not one after another: when many tables open together each request waits in
        # the token's queue, and the table's game waits for its opening.
        results = await asyncio.gather(
            *(thread.add_user(discord.Object(id=user)) for user in opening.members),
            thread.send(opening.welcome, allowed_mentions=discord.AllowedMentions.none()),
            return_exceptions=True,
        )
        await self._opened(table, opening, results)

    async def _opened(self, table: Table, opening: RoomOpening, results: Sequence[object]) -> None:
        """Report what of the room's opening Discord refused; anything else that went wrong is raised."""
        *added, welcome = results
        joined = {table.seat_of(user) for user, result in zip(opening.members, added, strict=True)
                  if not isinstance(result, BaseException)}
        self._rooms[table.id] = RoomState(frozenset(seat for seat in joined if seat is not None), locked=False)
        refused = next((r for r in added if isinstance(r, discord.HTTPException)), None)
        if refused is not None:
            await self._room_failed(table, Action.ADD_TO_ROOM, refused)
        elif isinstance(welcome, discord.HTTPException):
            await self.refused(table, Action.POST_IN_ROOM, welcome)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, discord.HTTPException):
                raise result

    def room_jobs(self, table: Table, jobs: Sequence[RoomJob], wanted: RoomState) -> list[SideJob]:
        """The room's jobs a command drew, as side jobs; ``wanted``: the room the state that command left wants.

        Every change of the room (a lock, a departure, a return; red or black, so the jobs tell
        nothing of who is who) reconciles the room with ``wanted``: the first sends the difference,
        the others of the same command find none.
        """
        return [self._room_job(table, job, wanted) for job in jobs]

    def _room_job(self, table: Table, job: RoomJob, wanted: RoomState) -> SideJob:
        match job:
            case LockRoom(locked=locked):
                action = Action.LOCK_ROOM if locked else Action.UNLOCK_ROOM
            case PostPicker(night=night):
                return Action.POST_IN_ROOM, lambda: self._post_in_room(
                    table, lambda: night_picker(table_view(table), night))
            case DropFromRoom():
                action = Action.REMOVE_FROM_ROOM
            case ReturnToRoom():
                action = Action.ADD_TO_ROOM
            case _:
                assert_never(job)
        return action, lambda: self._reconcile_room(table, wanted)

    async def _reconcile_room(self, table: Table, wanted: RoomState) -> None:
        """Send the difference between the room Discord is known to have and ``wanted``: the lock, then the members.

        A change Discord refuses leaves the known room as it was, and the judge is told once per
        kind; it is sent again for the next command's wanted room, never twice for the same command.
        """
        known = self._rooms.get(table.id)
        changes = room_changes(known, wanted)
        if known is None or not changes or self._refused_for.get(table.id) is wanted:
            return
        thread = await self.room(table)
        if thread is None:
            return
        if changes.lock is not None:
            action = Action.LOCK_ROOM if changes.lock else Action.UNLOCK_ROOM
            if await self._room_step(table, action, self._lock_thread(thread, locked=changes.lock)):
                known = self._rooms[table.id] = RoomState(known.members, locked=changes.lock)
        members = await self._change_members(table, thread, changes, known.members)
        known = self._rooms[table.id] = RoomState(members, locked=known.locked)
        if room_changes(known, wanted):
            self._refused_for[table.id] = wanted
        else:
            self._refused_for.pop(table.id, None)

    async def _change_members(
        self, table: Table, thread: discord.Thread, changes: RoomChanges, members: frozenset[int],
    ) -> frozenset[int]:
        """Drop and add the seats ``changes`` names, the thread unarchived first (50083); the members it then has."""
        if not (changes.drop or changes.add) or not await self._room_step(
                table, Action.REMOVE_FROM_ROOM if changes.drop else Action.ADD_TO_ROOM, _unarchive(thread)):
            return members
        now = set(members)
        for seat in sorted(changes.drop):
            if await self._room_step(table, Action.REMOVE_FROM_ROOM,
                                     thread.remove_user(discord.Object(id=table.user_at(seat)))):
                now.discard(seat)
        for seat in sorted(changes.add):
            if await self._room_step(table, Action.ADD_TO_ROOM,
                                     thread.add_user(discord.Object(id=table.user_at(seat)))):
                now.add(seat)
        return frozenset(now)

    async def _room_step(self, table: Table, action: Action, step: Awaitable[None]) -> bool:
        """Make one change of the room; whether Discord took it (a refusal is told to the judge, once per kind)."""
        try:
            await step
        except discord.HTTPException as exc:
            await self.refused(table, action, exc)
            return False
        return True

    async def _lock_room(self, table: Table, *, locked: bool) -> None:
        thread = await self.room(table)
        if thread is None:
            return
        await self._lock_thread(thread, locked=locked)
        self._rooms[table.id] = RoomState(self._rooms.get(table.id, desired_room(table.game.state)).members, locked)

    @staticmethod
    async def _lock_thread(thread: discord.Thread, *, locked: bool) -> None:
        if locked and thread.locked and not thread.archived:
            return
        # ``archived: false`` too: Discord refuses any change to an archived thread that does not unarchive it.
        await thread.edit(archived=False, locked=locked)

    async def _post_in_room(self, table: Table, draw: Callable[[], Outgoing]) -> None:
        """Post in the room what ``draw`` makes of the state as it is once the room is found."""
        thread = await self.room(table)
        if thread is None:
            return
        out = draw()
        view = ui_view(out.controls)
        try:
            await thread.send(out.text, view=view, allowed_mentions=discord.AllowedMentions.none())
        finally:
            view.stop()

    async def _archive_room(self, table: Table) -> None:
        thread = await self.room(table)
        if thread is None or (thread.archived and thread.locked):
            return
        if thread.archived:
            await thread.edit(archived=False, locked=True)  # Discord locks only an active thread
        await thread.edit(archived=True, locked=True)

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


def _files(drawn: Sequence[Drawn]) -> list[discord.File]:
    """Fresh ``discord.File`` objects for drawn pictures (discord.py closes a file once it is sent)."""
    return [
        discord.File(io.BytesIO(data), picture.filename, description=picture.description) for picture, data in drawn
    ]


def _with_files(drawn: Sequence[Drawn]) -> dict[str, Any]:
    """``files=`` for a send, only when there are any (an empty list would still send ``attachments``)."""
    return {"files": _files(drawn)} if drawn else {}


async def _unarchive(thread: discord.Thread) -> None:
    """Reopen a thread Discord archived for inactivity: it adds or removes no member while archived (50083).

    Only ``archived`` is sent, so a locked room stays locked.
    """
    if thread.archived:
        await thread.edit(archived=False)
