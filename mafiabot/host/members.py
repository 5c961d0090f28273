"""Member edits on Discord: server mutes, a seat nickname riding along, through the bot's and every helper token."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
import discord
import discord.http

from mafiabot.core.clock import loop_time
from mafiabot.core.nicks import Nickname, NickRefusedError, Rename
from mafiabot.core.ports import EditRefusedError, refused
from mafiabot.core.voice import EditBudget, NotInVoiceError
from mafiabot.host.ratelimit import FairQueue, GlobalLimit, retry_seconds

if TYPE_CHECKING:
    from mafiabot.host.ports import GuildLookup, Identity

log = logging.getLogger(__name__)

NOT_CONNECTED_TO_VOICE = 40032
HTTP_TOO_MANY = 429
HTTP_FORBIDDEN = 403
HELPER_REFUSALS = (401, 403, 404)
"""Answers that mean a helper token may not edit this guild's members (not invited, or no Mute Members)."""


class MemberEditError(discord.DiscordException, EditRefusedError):
    """Discord refused a member edit for a reason other than the member being out of voice."""

    def __init__(self, status: int, code: int, message: str) -> None:
        self.status = status
        self.code = code
        super().__init__(f"{status} (code {code}): {message}")


Number = TypeVar("Number", int, float)


def _header(headers: Mapping[str, str], name: str, kind: Callable[[str], Number]) -> Number | None:
    """A numeric header, or None when it is absent or malformed."""
    value = headers.get(name)
    try:
        return kind(value) if value is not None else None
    except ValueError:
        return None


def _is_global(status: int, headers: Mapping[str, str]) -> bool:
    """A 429 of the token's global limit, not of the member-edit bucket."""
    return status == HTTP_TOO_MANY and headers.get("X-RateLimit-Global", "").lower() == "true"


def _reset_after(status: int, headers: Mapping[str, str]) -> float | None:
    """When the bucket fills again; a 429 without the bucket's headers says it in ``Retry-After``."""
    reset_after = _header(headers, "X-RateLimit-Reset-After", float)
    if status == HTTP_TOO_MANY and reset_after is None:
        reset_after = _header(headers, "Retry-After", float)
    return reset_after


def _error(data: Any) -> tuple[int, str]:
    """Discord's error code and message from an error answer's body."""
    if not isinstance(data, dict):
        return 0, ""
    return int(data.get("code", 0)), str(data.get("message", ""))


FLOOR_LANE, BATCH_LANE = 0, 1
"""A guild's waiting edits: floor changes (a table waits for them), then the edits of starts and ends."""

ANSWER_TIMEOUT = 1.0
"""How soon a guild's queue looks again when only answers still on their way can free its budget
(each answer looks at once; this is for one that never comes)."""


@dataclass(eq=False)
class _Ticket:
    """One edit waiting for a token: resolved with the token, or None once it is no longer wanted."""

    future: asyncio.Future[int | None]
    still_wanted: Callable[[], bool] | None
    queued: float
    skip: frozenset[int] = frozenset()
    """Tokens this edit may not go with (helpers Discord refused a rename to)."""

    def stale(self) -> bool:
        return self.still_wanted is not None and not self.still_wanted()


@dataclass
class _GuildEdits:
    """The edits of one guild's tables waiting for its member-edit budget, and when to look again."""

    queue: FairQueue[_Ticket] = field(default_factory=FairQueue)
    timer: asyncio.TimerHandle | None = None


class DiscordMemberEditor:
    """Server mutes through the bot's own token and every helper token (the reconciler's ``MemberEditor``).

    Each token has its own member-edit bucket per guild (5 per 5 s observed), shared by every
    table of that guild. The editor reads each answer's ``X-RateLimit-*`` headers into an
    ``EditBudget`` and sends every edit with the token that has budget left, so the edits of a
    mass mute go out together instead of one window after another. When no token has budget the
    guild's edits queue in a ``FairQueue``: floor changes first, and the tables take turns, so one
    table's start (twelve edits) delays another table's floor change by one slot at most. A token
    whose global limit has a queue (the bot's own, while tables open) is taken only when no other
    token has budget. It speaks ``PATCH /guilds/{guild}/members/{user}`` itself (with
    discord.py's base URL and user agent) because discord.py keeps the headers to itself and
    sleeps out a 429 inside the call; here a 429 only moves the edit to another token. Each
    token's requests also wait for its ``GlobalLimit`` (the bot's own shared with discord.py),
    ahead of any queued message, since a floor change is what the table waits for.
    """

    def __init__(
        self, identity: Identity, guilds: GuildLookup, helper_tokens: Sequence[str] = (), *,
        global_limit: GlobalLimit | None = None, global_rate: int = 50, now: Callable[[], float] = loop_time,
        traces: Sequence[aiohttp.TraceConfig] = (), limit_for: Callable[[str], GlobalLimit] | None = None,
    ) -> None:
        """``limit_for`` makes a helper token's global limit (shared through Redis, if it is in use)."""
        self.identity = identity
        self._traces = list(traces)
        self._now = now
        """Monotonic seconds the budget's windows and the waits are counted in; the queue's next look is
        scheduled on the loop, so this keeps the loop's pace (Discord's windows are real time)."""
        self.guilds = guilds
        self.helper_tokens = list(helper_tokens)
        self.budget = EditBudget(1 + len(self.helper_tokens))
        make = limit_for or (lambda _token: GlobalLimit(global_rate))
        self.global_limits = [global_limit or GlobalLimit(global_rate)]
        self.global_limits += [make(token) for token in self.helper_tokens]
        """Each token's global limit; the bot's own is shared with discord.py's requests."""
        self.sent = 0
        """Member edits sent, retries after a 429 included."""
        self.sent_by_token = [0] * self.budget.tokens
        self.rate_limited = 0
        """429 answers to member edits (each cost a retry, on another token if one had room)."""
        self.waited = 0.0
        """Seconds edits spent waiting because no token had budget left."""
        self.sent_by_lane = [0, 0]
        """Edits granted a token, floor changes and batches (retries included)."""
        self.waited_by_lane = [0.0, 0.0]
        """Of ``waited``, the floor changes' and the batches' seconds."""
        self._guilds: dict[int, _GuildEdits] = {}
        self._no_renames: set[tuple[int, int]] = set()
        """(helper, guild): helpers Discord refused a rename to; edits with a nickname go with another token."""
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    def _token(self, index: int) -> str:
        if index == 0:
            token = self.identity.token
            if token is None:
                raise RuntimeError("the bot is not logged in")
            return token
        return self.helper_tokens[index - 1]

    def _http(self) -> aiohttp.ClientSession:
        if self._closed:
            # A session opened now would never be closed: the bot is shutting down.
            raise RuntimeError("the member editor is closed")
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0), cookie_jar=aiohttp.DummyCookieJar(),
                trace_configs=self._traces or None,
            )
        return self._session

    async def close(self) -> None:
        """Close the editor's HTTP connections; later edits are refused instead of opening new ones."""
        self._closed = True
        if self._session is not None:
            await self._session.close()
        for limit in self.global_limits[1:]:  # the helpers' own; the bot's is its owner's to close
            await limit.close()

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        """PATCH the member with whichever token has budget; Discord's 40032 becomes ``NotInVoiceError``.

        An edit is dropped (False) if ``still_wanted`` says the state moved on before it got a token.
        ``nick`` rides in the same request (a seat nickname, or the old one back). ``table`` and
        ``batch`` place it in the guild's queue (see the class).

        Raises:
            NotInVoiceError: the member is not connected to voice.
            MemberEditError: Discord refused the edit with every token that may edit this guild.
            NickRefusedError: Discord refused the edit with the rename (any 4xx) and the mute was sent without
                it (``sent`` says so).
        """
        fields: dict[str, Any] = {"mute": mute}
        if nick is not None:
            fields["nick"] = nick.nick
        lane = BATCH_LANE if batch else FLOOR_LANE
        try:
            return await self._edit(guild_id, user_id, fields, still_wanted, lane=lane, table=table)
        except MemberEditError as exc:
            if nick is None or not refused(exc):
                raise
            reason = f"{exc.status} (code {exc.code})"
        # Any refusal may be the rename's (the owner, a role not below the bot's, a name Discord's unpublished
        # rules refuse with 400/50035): the mute must not fall with it. A mute refused alone raises as before.
        log.warning("guild %s refused to rename %s: %s; the edit goes without the nickname", guild_id, user_id, reason)
        sent = await self._edit(guild_id, user_id, {"mute": mute}, still_wanted, lane=lane, table=table)
        raise NickRefusedError(user_id, sent)

    async def set_nick(self, guild_id: int, user_id: int, nick: str | None) -> None:
        """Rename a member (None removes the nickname): the edit of a nickname alone needs no voice connection.

        Raises:
            MemberEditError: Discord refused it (the owner, a role not below the bot's, no Manage Nicknames).
        """
        await self._edit(guild_id, user_id, {"nick": nick}, None)

    def nickname(self, guild_id: int, user_id: int) -> Nickname:
        """The member's nickname as the gateway told the bot, and whether Discord lets the bot change it.

        Discord renames nobody who owns the server or whose highest role is not below the bot's highest
        (Permission Hierarchy in Discord's docs), and needs Manage Nicknames.
        """
        guild = self.guilds.get_guild(guild_id)
        member = guild.get_member(user_id) if guild is not None else None
        if guild is None or member is None:
            return Nickname(None, "", "unknown")
        now = Nickname(member.nick, member.display_name, account=member.global_name or member.name)
        me = guild.me
        if user_id == guild.owner_id:
            return dataclasses.replace(now, blocked="owner")
        if not me.guild_permissions.manage_nicknames:
            return dataclasses.replace(now, blocked="permission")
        if member.top_role >= me.top_role:
            return dataclasses.replace(now, blocked="role")
        return now

    async def _edit(
        self, guild_id: int, user_id: int, fields: dict[str, Any], still_wanted: Callable[[], bool] | None, *,
        lane: int = FLOOR_LANE, table: int | None = None,
    ) -> bool:
        """PATCH the member with ``fields``, with whichever token the guild's queue hands it (see ``set_mute``)."""
        url = f"{discord.http.Route.BASE}/guilds/{guild_id}/members/{user_id}"
        body = json.dumps(fields)
        renames = "nick" in fields
        retry = False
        while True:
            skip = frozenset(t for t, g in self._no_renames if g == guild_id) if renames else frozenset()
            token = await self._take_token(guild_id, still_wanted, lane=lane, table=table, retry=retry, skip=skip)
            if token is None:
                return False
            status, headers, data = await self._send(token, guild_id, url, body)
            if self._settled(token, guild_id, user_id, status, headers, data, renames=renames):
                if renames:
                    self._remember_nick(guild_id, user_id, fields["nick"])
                return True
            retry = True

    def _remember_nick(self, guild_id: int, user_id: int, nick: str | None) -> None:
        """Discord took a rename: the cache says so at once.

        Without the members intent the gateway never tells the bot of a nickname change, its own
        included; a restarted bot that gave the names back would otherwise read the seat nicknames it
        found at connect as the players' own, and give those back at the next game's end.
        """
        guild = self.guilds.get_guild(guild_id)
        member = guild.get_member(user_id) if guild is not None else None
        if member is not None:
            member.nick = nick

    async def _take_token(
        self, guild_id: int, still_wanted: Callable[[], bool] | None, *, lane: int, table: int | None, retry: bool,
        skip: frozenset[int] = frozenset(),
    ) -> int | None:
        """A token with budget and room under its global limit; None once the edit is no longer wanted."""
        ticket = _Ticket(asyncio.get_running_loop().create_future(), still_wanted, self._now(), skip)
        guild = self._guilds.setdefault(guild_id, _GuildEdits())
        guild.queue.push(ticket, lane=lane, table=table, at=ticket.queued, front=retry)
        self._dispatch(guild_id)
        waiting = not ticket.future.done()
        choice: int | None = None
        try:
            choice = await ticket.future
            if waiting:
                waited = self._now() - ticket.queued
                self.waited += waited
                self.waited_by_lane[lane] += waited
            if choice is None:
                return None
            self.sent_by_lane[lane] += 1
            await self.global_limits[choice].acquire(urgent=True)
        except BaseException:
            granted = choice
            if granted is None and ticket.future.done() and not ticket.future.cancelled():
                # Cancelled after the token was handed over but before this task ran again.
                granted = None if ticket.future.exception() is not None else ticket.future.result()
            if granted is not None:
                self._unanswered(granted, guild_id)
            raise
        if ticket.stale():
            self._unanswered(choice, guild_id)
            return None
        return choice

    def _dispatch(self, guild_id: int) -> None:
        """Hand the guild's waiting edits tokens while any has budget, in the queue's order."""
        guild = self._guilds.get(guild_id)
        if guild is None:
            return
        if guild.timer is not None:
            guild.timer.cancel()
            guild.timer = None
        loop = asyncio.get_running_loop()
        busy = {i for i, limit in enumerate(self.global_limits) if limit.queued}
        while guild.queue:
            now = self._now()
            ticket = guild.queue.peek(now)
            if ticket.future.done() or ticket.stale():  # cancelled, or the state moved on while it waited
                guild.queue.pop(now)
                if not ticket.future.done():
                    ticket.future.set_result(None)
                continue
            try:
                choice = self.budget.pick(guild_id, now, ticket.skip, busy=busy)
            except LookupError as exc:  # no token may edit this guild: every waiting edit fails alike
                while guild.queue:
                    waiting = guild.queue.pop(now)
                    if not waiting.future.done():
                        waiting.future.set_exception(exc)
                return
            if isinstance(choice, float):
                wait = self.budget.next_reset(guild_id, now)
                guild.timer = loop.call_later(ANSWER_TIMEOUT if wait is None else wait, self._dispatch, guild_id)
                return
            guild.queue.pop(now)
            ticket.future.set_result(choice)

    def _unanswered(self, token: int, guild_id: int) -> None:
        """Give back the budget ``pick`` reserved for an edit that got no usable answer."""
        self.budget.answered(token, guild_id, self._now(), limit=None, remaining=None, reset_after=None)
        self._dispatch(guild_id)

    async def _send(self, token: int, guild_id: int, url: str, body: str) -> tuple[int, Mapping[str, str], Any]:
        """One PATCH with ``token``: the status, the headers and (for an error) the body."""
        headers = {
            "Authorization": f"Bot {self._token(token)}",
            "User-Agent": self.identity.user_agent,
            "Content-Type": "application/json",
        }
        self.sent += 1
        self.sent_by_token[token] += 1
        try:
            async with self._http().patch(url, data=body, headers=headers) as response:
                status, answer = response.status, response.headers
                data = await response.json(content_type=None) if status >= 300 else None
        except BaseException:
            self._unanswered(token, guild_id)
            raise
        return status, answer, data

    def _settled(
        self, token: int, guild_id: int, user_id: int, status: int, headers: Mapping[str, str], data: Any, *,
        renames: bool = False,
    ) -> bool:
        """Book the answer in the budget: True when the edit is done, False when it is to be sent again.

        Raises:
            NotInVoiceError: the member is not connected to voice.
            MemberEditError: Discord refused the edit for good.
        """
        if _is_global(status, headers):
            self.rate_limited += 1
            self.global_limits[token].hold(retry_seconds(headers))
            self._unanswered(token, guild_id)
            return False
        self.budget.answered(
            token, guild_id, self._now(), limit=_header(headers, "X-RateLimit-Limit", int),
            remaining=0 if status == HTTP_TOO_MANY else _header(headers, "X-RateLimit-Remaining", int),
            reset_after=_reset_after(status, headers),
        )
        self._dispatch(guild_id)
        if status < 300:
            return True
        if status == HTTP_TOO_MANY:
            self.rate_limited += 1
            return False
        code, message = _error(data)
        if code == NOT_CONNECTED_TO_VOICE:
            raise NotInVoiceError(user_id)
        if token > 0 and renames and status == HTTP_FORBIDDEN:
            # The helper may mute but not rename (its role is not above the player's): renames go elsewhere.
            log.warning("helper token %d cannot rename members of guild %s: %s", token, guild_id, message)
            self._no_renames.add((token, guild_id))
            return False
        if token > 0 and status in HELPER_REFUSALS:
            log.warning("helper token %d cannot edit members of guild %s: %s", token, guild_id, message)
            self.budget.bar(token, guild_id)
            return False
        raise MemberEditError(status, code, message)

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        """The member's server mute from the gateway's voice states; None when out of voice."""
        guild = self.guilds.get_guild(guild_id)
        member = guild.get_member(user_id) if guild else None
        if member is None or member.voice is None or member.voice.channel is None:
            return None
        return member.voice.mute


__all__ = ["DiscordMemberEditor", "MemberEditError"]
