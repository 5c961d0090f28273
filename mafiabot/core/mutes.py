"""How a mute is lifted after a crash: every server mute the bot makes is on the mute ledger before it is sent.

A member stays on the ledger until the bot lifts the mute. After a restart, a resumed table takes its
guild's ledger rows as its own mutes (its reconciler lifts them at the game's end), and so does a
running table for a spectator in its channel it wants muted (``keeping``); every other row is owed
(``owed_unmutes``) and lifted at once (``MuteLifter.lift``: unmute, then clear the row). A member out
of voice keeps the row and is unmuted when they next join a channel muted (``MuteLifter.returned``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from mafiabot.core.ports import MemberEditor
from mafiabot.core.records import MuteRecord
from mafiabot.core.voice import NotInVoiceError

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table

log = logging.getLogger(__name__)


class OwedLedger(Protocol):
    """The mute ledger as recovery reads it (the store)."""

    async def owed_mutes(self, guild_id: int | None = None) -> list[MuteRecord]:
        """Every mute the bot still has to lift, on one server or on all of them."""

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget mutes once they are lifted."""


def keeping(tables: Iterable[Table], guild_id: int, user_id: int) -> list[Table]:
    """The running tables of the guild that own the member's mute: they seat them, or want them muted now.

    A spectator in a table's voice channel is that table's too: lifting their mute under it raced
    the table, which muted them again, and once the lift had cleared the row the table took its own
    mute for someone else's and left it at the game's end.
    """
    return [tb for tb in tables if tb.guild_id == guild_id and not tb.over
            and (user_id in tb.seats or tb.voice.keeps_muted(user_id))]


def seated(tables: Iterable[Table], guild_id: int, user_id: int) -> bool:
    """Whether a running table of the guild owns the member's mute (``keeping``): then its reconciler decides."""
    return bool(keeping(tables, guild_id, user_id))


def owed_unmutes(
    owed: Iterable[MuteRecord], tables: Iterable[Table], *, owns_guild: Callable[[int], bool],
) -> list[tuple[int, int]]:
    """The (guild, member) mutes to lift after a restart: on this process's guilds, of members no table keeps."""
    tables = list(tables)
    return [
        (m.guild_id, m.user_id) for m in owed
        if owns_guild(m.guild_id) and not any(tb.guild_id == m.guild_id and m.user_id in tb.seats for tb in tables)
        and not seated(tables, m.guild_id, m.user_id)
    ]


class MuteLifter:
    """Lifts the mutes the ledger says the bot still owes, outside any table's reconciler."""

    def __init__(self, editor: MemberEditor, ledger: OwedLedger, tables: Callable[[], Iterable[Table]]) -> None:
        self.editor = editor
        self.ledger = ledger
        self.tables = tables
        """The running tables, read anew each time (they come and go while a lift waits for Discord)."""

    async def ours(self, guild_id: int) -> list[int]:
        """Members of the guild on the ledger: a table starting or resumed there takes their mutes as its own."""
        return [m.user_id for m in await self.ledger.owed_mutes(guild_id)]

    async def after_restart(self, owns_guild: Callable[[int], bool]) -> None:
        """Lift every owed mute of this process's guilds that no resumed table keeps."""
        for guild_id, user_id in owed_unmutes(await self.ledger.owed_mutes(), self.tables(), owns_guild=owns_guild):
            await self.lift(guild_id, user_id)

    async def returned(self, guild_id: int, user_id: int, *, muted: bool) -> None:
        """A member joined a voice channel: unmute them if the mute they carry is one the bot still owes."""
        if muted and user_id in await self.ours(guild_id):
            await self.lift(guild_id, user_id)

    async def lift(self, guild_id: int, user_id: int) -> None:
        """Unmute a member no running table needs muted, then clear the row (out of voice: later, on return)."""
        keepers = keeping(self.tables(), guild_id, user_id)
        if keepers:
            for table in keepers:
                table.voice.adopt(user_id)  # the row is the table's now: its end lifts the mute
            return
        try:
            # No table waits for it: it takes its turn behind the guild's floor changes.
            await self.editor.set_mute(guild_id, user_id, mute=False, batch=True)
        except NotInVoiceError:
            return
        except Exception:
            log.exception("could not lift the mute of %s in %s", user_id, guild_id)
            return
        await self.ledger.clear_mutes(guild_id, [user_id])
        for table in self.tables():
            if table.guild_id == guild_id:
                table.voice.forget(user_id)


__all__ = ["MuteLifter", "OwedLedger", "keeping", "owed_unmutes", "seated"]
