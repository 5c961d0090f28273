"""The mute ledger: every server mute the bot made and has not lifted yet, across restarts.

This is the store's side of ``mafiabot.core.ports.MuteLedger``: a mute is noted before it is sent,
so a crash between the two leaves a mute the bot knows it owes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sqlmodel import col, select

from mafiabot.core.records import MuteRecord, NickRecord
from mafiabot.store.db import Repository, aware, now
from mafiabot.store.leases import check_fence
from mafiabot.store.models import MuteLedgerRow, NickLedgerRow

if TYPE_CHECKING:
    from mafiabot.core.leases import Fences
    from mafiabot.core.nicks import NickLedger
    from mafiabot.core.ports import MuteLedger


class MuteLedgerRepo(Repository):
    """The mutes the bot owes: noted before they are sent, forgotten once lifted."""

    async def record_mute(
        self, guild_id: int, user_id: int, game_id: int | None, *, at: datetime | None = None
    ) -> None:
        """Remember that the bot server-muted this member, before the mute is sent."""
        await self.record_mutes(guild_id, [user_id], game_id, at=at)

    async def record_mutes(
        self, guild_id: int, user_ids: Iterable[int], game_id: int | None, *, at: datetime | None = None
    ) -> None:
        """Remember several mutes in one transaction: a whole table's mutes cost one commit, not twelve.

        When processes share the shards, a mute is claimed only while the guild's shard is leased to
        this process (``mafiabot.store.leases.check_fence``, in the same transaction).

        Raises:
            FencedError: another process holds the guild's shard now; nothing is noted, so nothing is sent.
        """
        when = aware(at or now(), "at")
        rows = [MuteLedgerRow(guild_id=guild_id, user_id=u, game_id=game_id, muted_at=when) for u in user_ids]
        await self._db.call(self._merge_all, guild_id, rows, self._db.fences())

    def _merge_all(self, guild_id: int, rows: Sequence[MuteLedgerRow], fences: Fences | None) -> None:
        with self._db.write() as s, s.begin():
            check_fence(s, fences, guild_id)
            for row in rows:
                s.merge(row)

    async def clear_mute(self, guild_id: int, user_id: int) -> None:
        """Forget a mute once it is lifted; forgetting one that is not there is fine."""
        await self.clear_mutes(guild_id, [user_id])

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget several mutes in one transaction."""
        await self._db.call(self._clear_mutes, guild_id, list(user_ids))

    def _clear_mutes(self, guild_id: int, user_ids: Sequence[int]) -> None:
        with self._db.write() as s, s.begin():
            for user_id in user_ids:
                row = s.get(MuteLedgerRow, (guild_id, user_id))
                if row is not None:
                    s.delete(row)

    async def owed_mutes(self, guild_id: int | None = None) -> list[MuteRecord]:
        """Every mute the bot still has to lift, on one server or on all of them."""
        return await self._db.call(self._owed_mutes, guild_id)

    def _owed_mutes(self, guild_id: int | None) -> list[MuteRecord]:
        with self._db.read() as s:
            query = select(MuteLedgerRow).order_by(col(MuteLedgerRow.guild_id), col(MuteLedgerRow.user_id))
            if guild_id is not None:
                query = query.where(MuteLedgerRow.guild_id == guild_id)
            return [MuteRecord(r.guild_id, r.user_id, r.game_id, r.muted_at) for r in s.exec(query)]


class NickLedgerRepo(Repository):
    """The seat nicknames the bot owes taking back (``mafiabot.core.nicks``).

    Noted with the old nickname before the rename is sent, forgotten once it is given back.
    """

    async def record_nicks(self, guild_id: int, old: Sequence[tuple[int, str | None]], game_id: int | None) -> None:
        """Remember the nicknames to give back, (member, nickname or None), in one transaction.

        A member already on the ledger keeps the nickname noted first: that one is theirs, a later one
        may be a seat nickname a crash left behind.
        """
        when = now()
        await self._db.call(self._add_new, [
            NickLedgerRow(guild_id=guild_id, user_id=u, game_id=game_id, nick=nick, renamed_at=when) for u, nick in old
        ])

    def _add_new(self, rows: Sequence[NickLedgerRow]) -> None:
        with self._db.write() as s, s.begin():
            for row in rows:
                if s.get(NickLedgerRow, (row.guild_id, row.user_id)) is None:
                    s.add(row)

    async def clear_nicks(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget nicknames once they are given back, in one transaction."""
        await self._db.call(self._clear, guild_id, list(user_ids))

    def _clear(self, guild_id: int, user_ids: Sequence[int]) -> None:
        with self._db.write() as s, s.begin():
            for user_id in user_ids:
                row = s.get(NickLedgerRow, (guild_id, user_id))
                if row is not None:
                    s.delete(row)

    async def owed_nicks(self, guild_id: int | None = None) -> list[NickRecord]:
        """Every nickname the bot still has to give back, on one server or on all of them."""
        return await self._db.call(self._owed, guild_id)

    def _owed(self, guild_id: int | None) -> list[NickRecord]:
        with self._db.read() as s:
            query = select(NickLedgerRow).order_by(col(NickLedgerRow.guild_id), col(NickLedgerRow.user_id))
            if guild_id is not None:
                query = query.where(NickLedgerRow.guild_id == guild_id)
            return [NickRecord(r.guild_id, r.user_id, r.game_id, r.nick) for r in s.exec(query)]


if TYPE_CHECKING:

    def _is_the_core_port(repo: MuteLedgerRepo) -> MuteLedger:
        return repo  # mypy checks here that the repository is the core's ``MuteLedger``

    def _is_the_nick_port(repo: NickLedgerRepo) -> NickLedger:
        return repo  # and here that this one is the core's ``NickLedger``
