"""The presenter: what the table core calls to show a table's events (its ``Effects``).

It hands each command's events to the pure renderer (``mafiabot.host.render``) once the table's
worker gets to them, and what the renderer draws to the sender (``mafiabot.host.sender``), which
posts it in order with few requests: a command's texts ride with its next message that has
controls, and the messages a public click causes go as that click's follow-ups.

The helpers the cogs share (custom ids, seat labels, echoing a name safely) are kept here under
their old names.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from engine import Event, Role, floor_holder
from engine import events as ev
from mafiabot.core.room import RoomState, desired_room
from mafiabot.host import render
from mafiabot.host.fairplay import alert_judges, alert_text, tell_judges, unnumbered_text
from mafiabot.host.ratelimit import bulk_requests
from mafiabot.host.refusals import Action
from mafiabot.host.render import check_lines, custom_id, night_zero_lines
from mafiabot.host.sender import (
    MESSAGE_LIMIT,
    NAME_LIMIT,
    VOTE_EMOJI,
    Client,
    Reply,
    Sender,
    plain,
    split_message,
    table_view,
)
from mafiabot.host.votes import VoteHost, catch_up

if TYPE_CHECKING:
    import discord

    from mafiabot.core.fairplay import Alert
    from mafiabot.core.nicks import Blocked
    from mafiabot.core.ports import Reply as Click
    from mafiabot.core.records import GuildSettings
    from mafiabot.core.runtime import Table

__all__ = [
    "MESSAGE_LIMIT", "VOTE_EMOJI", "Host", "Presenter", "Reply", "check_lines", "current_vote_message", "custom_id",
    "night_zero_lines", "plain", "role_name", "seat_label", "seat_list", "split_message", "vote_round",
]


class Host(Client, VoteHost, Protocol):
    """What the presenter needs of the bot: its client's look-ups, its reaction calls and each server's settings."""

    async def guild_settings(self, guild_id: int) -> GuildSettings:
        """A server's saved settings."""


def role_name(table: render.Seating, role: Role) -> str:
    """The role's name in the table's language (the georgian Sheriff is the Detective)."""
    return render.role_name(table, role)


def seat_label(table: Table, seat: int) -> str:
    """``#3 Name``: how the bot names a player at the table (the name echoed safely)."""
    return render.seat_label(table.language, seat, plain(table.name_at(seat), NAME_LIMIT))


def seat_list(table: Table, seats: Sequence[int]) -> str:
    """Seats as ``#2, #5`` (or a dash when there are none)."""
    return render.seat_list(seats)


def vote_round(table: Table, upto: int | None = None) -> int:
    """Which vote round of the game the table is in (after ``upto`` events): 1 for the first."""
    return render.vote_round(table.game.events, upto)


def current_vote_message(table: Table, target: int | str) -> int | None:
    """The vote message of this round for ``target`` (a candidate seat, or "lift")."""
    return table.meta.window(target, vote_round(table))


@dataclass(frozen=True)
class _Command:
    """One command's events, queued for a table's worker."""

    events: tuple[Event, ...]
    deadline: datetime | None
    reply: Reply | None
    queued_at: float
    """When it was queued, on the table's clock."""
    shown: Callable[[], None] | None
    first: int = 0
    """Where the command's events start in the game's event list (for the vote round they belong to)."""
    room: bool | None = None
    """The mafia's room opens (True) or closes (False) with this command; None: it stays as it was."""
    wanted_room: RoomState | None = None
    """The mafia's room as the state this command left wants it (``mafiabot.core.room.desired_room``)."""


class Presenter:
    """Renders every table's events to its text channel and the mafia's room."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.sender = Sender(host, host.guild_settings)
        self._catching_up: dict[int, asyncio.Lock] = {}
        self.listeners: list[Callable[[Table], None]] = []
        """Told once a command's public messages are out (the judge's console), never before them."""

    @property
    def posted(self) -> dict[int, int]:
        """Messages posted per table, for reports."""
        return self.sender.posted

    @property
    def lateness(self) -> deque[float]:
        """Seconds from a command's events to the end of their messages (openings aside), on each table's clock."""
        return self.sender.lateness

    @property
    def _queues(self) -> dict[int, asyncio.Queue[Any]]:
        return self.sender._queues  # the benchmarks read the backlog

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
        started = any(isinstance(e, ev.GameStarted) for e in events)
        wanted = desired_room(table.game.state)
        command = _Command(tuple(events), table.deadline(), mine, table.clock.time(), shown, first,
                           self.sender.room_change(table, wanted, started=started), wanted)

        async def show() -> None:
            await self._show(table, command)

        self.sender.put(table, show)

    def warn(self, table: Table, seat: int) -> None:
        """Queue the ten-seconds warning (unless the floor has moved on by the time it is its turn)."""
        timer = table.game.state.timer

        async def warn() -> None:
            state = table.game.state
            if floor_holder(state) == seat and state.timer == timer:
                await self.sender.send(table, render.ten_seconds(table.language, seat).text)

        self.sender.put(table, warn)

    async def drained(self, table_id: int) -> None:
        """Wait until everything queued for the table so far is on Discord (the demo steps on it)."""
        await self.sender.drained(table_id)

    async def finished(self, table: Table) -> None:
        """Wait until everything queued for the table is shown, then close its workers."""
        await self.sender.finished(table)
        self._catching_up.pop(table.id, None)

    def fair_play(self, table: Table, alert: Alert) -> None:
        """A seated player's lapse (a camera at night, a mute lifted by someone else, ...): the judges are told."""
        self.sender.spawn(alert_judges(self.sender, table, alert, alert_text(table_view(table), alert)))

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        """Seat nicknames are on, but Discord would refuse renaming these seats: the judges are told once."""
        self.sender.spawn(tell_judges(self.sender, table, unnumbered_text(table_view(table), blocked)))

    def tell_judges(self, table: Table, text: str) -> None:
        """A note for the table's judges (the judge's usual way, and each side judge's DMs)."""
        self.sender.spawn(tell_judges(self.sender, table, text))

    def resumed(self, table: Table) -> None:
        """After a restart: say the host is back and show the controls of the current phase again."""
        self.sender.room_was(table)  # as it was left before the restart
        self.sender.side(table, (Action.ADD_TO_ROOM, lambda: self.sender.refill_room(table)))

        async def show() -> None:
            await self._show_current(table)

        self.sender.put(table, show)

    async def catch_up_votes(self, table: Table) -> None:
        """After a restart: count or remove every reaction made on this round's vote messages meanwhile.

        A ✋ on the open window counts as if it came live (the rules decide: a dead player's or a
        second one does not); a ✋ on a closed window is late, another emoji is wrong, and each of
        those is removed with its author told why. Hands counted before the crash stay.
        """
        lock = self._catching_up.setdefault(table.id, asyncio.Lock())
        async with lock:  # the resumed controls may start one too: a hand must not be counted, then refused
            me = self.host.user.id if self.host.user else 0
            await catch_up(self.host, table, self.sender.channel(table), me)

    async def refused(self, table: Table, action: Action, exc: discord.HTTPException) -> None:
        """Discord refused a side effect: the judge is told (see ``Sender.refused``)."""
        await self.sender.refused(table, action, exc)

    async def close(self) -> None:
        """Stop every worker (the bot is shutting down)."""
        await self.sender.close()

    def summary(self, table: Table) -> list[str]:
        """The end of the game: the result, every role, departures, checks, fouls and points."""
        return render.summary(table_view(table))

    # -- the worker's jobs -----------------------------------------------------------------------

    async def _show(self, table: Table, command: _Command) -> None:
        opening = any(isinstance(e, ev.GameStarted) for e in command.events)
        try:
            with self.sender.replying(command.reply), bulk_requests() if opening else contextlib.nullcontext():
                drawn = render.render(table_view(table, command.deadline), command.events, first=command.first)
                jobs: list[render.RoomJob] = list(drawn.room)
                if command.room is not None:  # the engine opened or closed the room: before the night's picker
                    jobs.insert(0, render.LockRoom(locked=not command.room))
                try:
                    await self.sender.deliver(table, drawn.messages)
                finally:
                    if command.wanted_room is not None:
                        self.sender.side(table, *self.sender.room_jobs(table, jobs, command.wanted_room))
        finally:
            if command.shown is not None:
                command.shown()
            for listener in self.listeners:
                listener(table)
        if not opening:
            self.lateness.append(table.clock.time() - command.queued_at)

    async def _show_current(self, table: Table) -> None:
        shown = render.resumed(table_view(table))
        message = await self.sender.deliver(table, shown)
        if shown[-1].vote is not None and message is not None and any(r.count > int(r.me) for r in message.reactions):
            # Posted before the crash (Discord answered with it by its nonce) and voted on since.
            await self.catch_up_votes(table)
