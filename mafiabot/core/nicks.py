"""Seat numbers in nicknames: "5 · Anya" while the game runs, the old nickname back after it.

A server setting (``seat_nicknames``, off by default). The rename rides on the member edit the table
sends anyway, the start mute (and the end unmute brings the old nickname back), so it costs no
request and no latency of its own; Discord takes both fields in one ``PATCH`` of the member. The
reconciler wants the seat nickname as it wants the mutes: a player no mute edit reaches (already
muted, out of voice) gets it by an edit of its own, and after a restart whoever Discord does not
call by their seat yet is renamed (``resume_plan``). Every rename is on the nickname ledger, with
the nickname to give back (None: the member had none), before it is sent, as every mute is on the
mute ledger: after a crash a resumed table gives them back at its end, and a restarted bot gives
back at once those no table keeps (``restore_owed``).

Discord refuses to rename the server's owner and anyone whose highest role is not below the bot's
(403, code 50013), and a refused rename would take the start mute down with it. So those players are
left as they are, found from what the gateway told the bot (``Nickname.blocked``), and the judge is
told once which seats are not numbered. Discord also refuses names by rules it does not publish
(400/50035): any refusal of an edit carrying a rename makes the Discord side send the mute again
alone (``NickRefusedError``), and that player's rename is not tried again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from mafiabot.core.records import NickRecord

log = logging.getLogger(__name__)

NICK_LIMIT = 32
"""Discord's longest nickname, in characters."""

Blocked = Literal["owner", "role", "permission", "unknown", "refused"]
"""Why the bot may not rename a member: the server's owner, a highest role not below the bot's, no
Manage Nicknames, a member the bot has not seen, or Discord refused it anyway."""


def seat_nick(seat: int, name: str) -> str:
    """The nickname of the player in ``seat``: "5 · Anya", cut to Discord's limit."""
    return f"{seat} · {name}"[:NICK_LIMIT]


@dataclass(frozen=True, slots=True)
class Nickname:
    """A member's name as the bot's cache has it, and whether the bot may change it."""

    nick: str | None
    """The server nickname now; None: the member has none (others see their account's name)."""
    display: str
    """The name others see now."""
    blocked: Blocked | None = None
    account: str = ""
    """The name others would see without a nickname (the account's display name or username)."""


@dataclass(frozen=True, slots=True)
class Rename:
    """A nickname to set in a member edit; ``nick`` None removes the nickname."""

    nick: str | None


class NickRefusedError(Exception):
    """Discord refused the rename of a member edit; the rest of the edit (the mute) was sent without it."""

    def __init__(self, user_id: int, sent: bool) -> None:  # noqa: FBT001
        self.user_id = user_id
        self.sent = sent
        """Whether the edit without the rename went out (False: the state had moved on meanwhile)."""
        super().__init__(f"Discord refused to rename member {user_id}")


class NickEditor(Protocol):
    """What seat nicknames need of the Discord side, beside the member edits that carry them."""

    def nickname(self, guild_id: int, user_id: int) -> Nickname:
        """The member's nickname now, and whether the bot may change it."""

    async def set_nick(self, guild_id: int, user_id: int, nick: str | None) -> None:
        """An edit of the nickname alone (None removes it); it needs no voice connection."""


class NickLedger(Protocol):
    """Remembers every rename the bot made and has not taken back, across restarts (the store)."""

    async def record_nicks(self, guild_id: int, old: Sequence[tuple[int, str | None]], game_id: int) -> None:
        """Note the nicknames to give back, (member, nickname or None), before the renames are sent."""

    async def clear_nicks(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget renames once they are taken back, or were never sent."""

    async def owed_nicks(self, guild_id: int | None = None) -> list[NickRecord]:
        """Every nickname the bot still has to give back, on one server or on all of them."""


@dataclass
class Renames:
    """One table's seat nicknames: what each player is to be called, and what to give back at the end."""

    editor: NickEditor
    ledger: NickLedger
    guild_id: int
    numbered: dict[int, str] = field(default_factory=dict)
    """The nickname each renamed player gets, by user id."""
    old: dict[int, str | None] = field(default_factory=dict)
    """The nickname to give back, by user id (on the ledger)."""
    applied: set[int] = field(default_factory=set)
    """Players whom Discord calls by their seat now: a rename was sent (or, after a crash, the cache says so, or
    the bot may not rename them now and cannot tell)."""
    given_back: set[int] = field(default_factory=set)
    refused: set[int] = field(default_factory=set)
    """Players whose rename Discord refused: not tried again."""
    on_refused: Callable[[int], None] | None = None

    def to_send(self, user: int, *, ending: bool) -> Rename | None:
        """The rename the next edit of ``user`` should carry, if any."""
        if user in self.refused or user not in self.old:
            return None
        if ending:
            return Rename(self.old[user]) if user in self.applied and user not in self.given_back else None
        if user in self.applied or user not in self.numbered:
            return None
        return Rename(self.numbered[user])

    def due_alone(self, busy: Callable[[int], bool]) -> list[int]:
        """During the game, players still to be numbered whom no edit of theirs is carrying a rename to."""
        skip = self.applied | self.refused | self.given_back
        return [u for u in self.numbered if u not in skip and not busy(u)]

    def owed_alone(self, busy: Callable[[int], bool]) -> list[int]:
        """At the end, players whose nickname must go back by an edit of its own: no other edit of theirs is coming."""
        return [u for u in self.applied if u not in self.given_back and u not in self.refused and not busy(u)]

    def never_sent(self) -> list[int]:
        """Players on the ledger whose rename never went out: their rows need no edit, only clearing."""
        return [u for u in self.old if u not in self.applied and u not in self.given_back]

    def sent(self, user: int, rename: Rename) -> None:
        """Discord took ``rename`` for ``user``."""
        if user in self.numbered and rename.nick == self.numbered[user] and user not in self.given_back:
            self.applied.add(user)
        else:
            self.given_back.add(user)

    def refuse(self, user: int) -> None:
        """Discord refused to rename ``user``: leave them as they are, and say so."""
        self.refused.add(user)
        if self.on_refused is not None:
            self.on_refused(user)

    async def refuse_numbering(self, user: int) -> None:
        """Discord refused the seat nickname of ``user``: say so, and take them off the ledger.

        Their nickname never changed, so there is nothing to give back, and a restarted bot does not
        try the refused name again.
        """
        self.refuse(user)
        self.given_back.add(user)
        try:
            await self.ledger.clear_nicks(self.guild_id, [user])
        except Exception:
            log.exception("could not clear the nickname ledger of %s in guild %s", user, self.guild_id)


def resume_plan(
    editor: NickEditor, seats: Sequence[int], names: Sequence[str], owed: Sequence[tuple[int, str | None]], *,
    guild_id: int,
) -> tuple[dict[int, str], dict[int, str | None], set[int], list[tuple[int, Blocked]]]:
    """After a restart, what each seated player on the ledger is to be called, and who is called so already.

    The seat nickname is made again from what the start made it of: the nickname given back at the end
    or, with none, the account's name. A player whose nickname now is that seat nickname is numbered;
    one the bot may not rename now (the owner, a role not below the bot's, no Manage Nicknames) counts
    as maybe numbered, so the end still gives the old nickname back, and their seat is returned with
    why. Everyone else is still to be numbered: the crash came before Discord took their rename (or the
    cache does not know them, and a rename needs no voice connection).
    """
    numbered: dict[int, str] = {}
    old: dict[int, str | None] = {}
    applied: set[int] = set()
    blocked: list[tuple[int, Blocked]] = []
    for user, nick in owed:
        if user not in seats:
            continue
        seat = seats.index(user) + 1
        now = editor.nickname(guild_id, user)
        numbered[user] = seat_nick(seat, nick or now.account or names[seat - 1])
        old[user] = nick
        if now.nick == numbered[user]:
            applied.add(user)
        elif now.blocked not in (None, "unknown"):
            applied.add(user)
            blocked.append((seat, now.blocked))
    return numbered, old, applied, blocked


def plan_renames(
    editor: NickEditor, seats: Sequence[int], names: Sequence[str], *, guild_id: int, skip: Iterable[int] = (),
) -> tuple[dict[int, str], dict[int, str | None], list[tuple[int, Blocked]]]:
    """Who gets which seat nickname, what each had, and the seats the bot may not rename (with why).

    ``names`` are the names the table knows the players by, used when the cache has none; ``skip``:
    members not to touch (the judge).
    """
    numbered: dict[int, str] = {}
    old: dict[int, str | None] = {}
    blocked: list[tuple[int, Blocked]] = []
    skipped = set(skip)
    for seat, (user, name) in enumerate(zip(seats, names, strict=True), 1):
        if user in skipped:
            continue
        now = editor.nickname(guild_id, user)
        if now.blocked is not None:
            blocked.append((seat, now.blocked))
            continue
        numbered[user] = seat_nick(seat, now.display or name)
        old[user] = now.nick
    return numbered, old, blocked


async def restore_owed(
    editor: NickEditor, ledger: NickLedger, *, kept: Callable[[int, int], bool], owns_guild: Callable[[int], bool],
) -> None:
    """After a restart: give back every nickname of this process's guilds that no resumed table keeps."""
    for record in await ledger.owed_nicks():
        if not owns_guild(record.guild_id) or kept(record.guild_id, record.user_id):
            continue
        try:
            await editor.set_nick(record.guild_id, record.user_id, record.nick)
        except Exception:
            log.exception("could not give back the nickname of %s in %s", record.user_id, record.guild_id)
            continue
        await ledger.clear_nicks(record.guild_id, [record.user_id])


__all__ = [
    "NICK_LIMIT", "Blocked", "NickEditor", "NickLedger", "NickRefusedError", "Nickname", "Rename", "Renames",
    "plan_renames", "restore_owed", "resume_plan", "seat_nick",
]
