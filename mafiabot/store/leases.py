"""Shard leases and fencing in the database (``mafiabot.core.leases`` holds the logic and says why).

A write of a game that carries a fence (``check_fence``) locks the shard's lease row for share in
the same transaction and is refused unless the row still names the writer with the same number;
a takeover updates that row, so it waits for such a write to commit, and once it has committed no
write with the old number can.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from mafiabot.core.errors import FencedError
from mafiabot.core.leases import Fences, Lease, shard_of
from mafiabot.store.db import Database, Repository, aware
from mafiabot.store.models import GameRow, LeaseMemberRow, ShardLeaseRow

if TYPE_CHECKING:
    from mafiabot.core.leases import LeaseStore

log = logging.getLogger(__name__)

NEVER = datetime(1970, 1, 1, tzinfo=UTC)
"""The expiry of a lease nobody has held yet."""


class LeaseRepo(Repository):
    """The shard leases and the processes that take part in them."""

    async def beat(self, owner: str, *, shard_count: int, at: datetime, ttl: float) -> tuple[list[Lease], int]:
        """Note ``owner`` alive and renew its leases until ``at + ttl``, in one transaction.

        Returns every shard's lease and how many processes are alive (``owner`` included).
        """
        return await self._db.call(self._beat, owner, shard_count, aware(at, "at"), ttl)

    def _beat(self, owner: str, shard_count: int, at: datetime, ttl: float) -> tuple[list[Lease], int]:
        until = at + timedelta(seconds=ttl)
        with self._db.write() as s, s.begin():
            connection = s.connection()
            insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
            connection.execute(
                insert(ShardLeaseRow).on_conflict_do_nothing(),
                [{"shard_id": i, "owner": "", "expires_at": NEVER, "fence": 0} for i in range(shard_count)],
            )
            connection.execute(
                insert(LeaseMemberRow).values(owner=owner, expires_at=until)
                .on_conflict_do_update(index_elements=["owner"], set_={"expires_at": until})
            )
            connection.execute(delete(LeaseMemberRow).where(col(LeaseMemberRow.expires_at) <= at))
            connection.execute(
                update(ShardLeaseRow).where(col(ShardLeaseRow.owner) == owner).values(expires_at=until)
            )
            leases = [
                Lease(r.shard_id, r.owner, aware(r.expires_at, "expires_at"), r.fence)
                for r in s.exec(select(ShardLeaseRow).order_by(col(ShardLeaseRow.shard_id)))
            ]
            members = s.exec(select(func.count()).select_from(LeaseMemberRow)).one()
            return leases, int(members)

    async def claim(self, shard_id: int, owner: str, *, at: datetime, ttl: float) -> int | None:
        """Take ``shard_id`` if it is free or its lease ran out by ``at``: the new fencing number, or None."""
        return await self._db.call(self._claim, shard_id, owner, aware(at, "at"), ttl)

    def _claim(self, shard_id: int, owner: str, at: datetime, ttl: float) -> int | None:
        with self._db.write() as s, s.begin():
            number = s.connection().execute(
                update(ShardLeaseRow)
                .where(col(ShardLeaseRow.shard_id) == shard_id,
                       (col(ShardLeaseRow.owner) == "") | (col(ShardLeaseRow.expires_at) <= at))
                .values(owner=owner, fence=col(ShardLeaseRow.fence) + 1, expires_at=at + timedelta(seconds=ttl))
                .returning(col(ShardLeaseRow.fence))
            ).scalar()
            return None if number is None else int(number)

    async def release(self, shard_id: int, owner: str, *, at: datetime) -> None:
        """Let ``shard_id`` go now if ``owner`` still holds it; its number stays, the next owner's is higher."""
        await self._db.call(self._release, [shard_id], owner, aware(at, "at"))

    def _release(self, shard_ids: list[int] | None, owner: str, at: datetime) -> None:
        with self._db.write() as s, s.begin():
            query = update(ShardLeaseRow).where(col(ShardLeaseRow.owner) == owner)
            if shard_ids is not None:
                query = query.where(col(ShardLeaseRow.shard_id).in_(shard_ids))
            s.connection().execute(query.values(owner="", expires_at=at))
            if shard_ids is None:
                s.connection().execute(delete(LeaseMemberRow).where(col(LeaseMemberRow.owner) == owner))

    async def leave(self, owner: str, *, at: datetime) -> None:
        """Let every lease of ``owner`` go and stop counting it among the processes."""
        await self._db.call(self._release, None, owner, aware(at, "at"))

    async def leases(self) -> list[Lease]:
        """Every shard's lease, as it stands (for tools and tests)."""
        return await self._db.call(self._leases)

    def _leases(self) -> list[Lease]:
        with self._db.read() as s:
            return [
                Lease(r.shard_id, r.owner, aware(r.expires_at, "expires_at"), r.fence)
                for r in s.exec(select(ShardLeaseRow).order_by(col(ShardLeaseRow.shard_id)))
            ]


def check_fence(s: Session, fences: Fences | None, guild_id: int) -> None:
    """Refuse this transaction's write for ``guild_id`` unless its shard's lease is still the writer's.

    Locks the lease row for share: a takeover of the shard waits for this transaction.

    Raises:
        FencedError: the lease names another owner or a newer number, or the writer holds none.
    """
    if fences is None:
        return
    fence = fences.fence_for(guild_id)
    row = s.exec(
        select(ShardLeaseRow).where(ShardLeaseRow.shard_id == fence.shard_id).with_for_update(read=True)
    ).first()
    if row is None or row.owner != fence.owner or row.fence != fence.number:
        raise FencedError(guild_id, fence.shard_id)


def check_game_fence(s: Session, fences: Fences | None, game_id: int) -> None:
    """``check_fence`` for the guild of ``game_id`` (a game unknown here is left to the write to report)."""
    if fences is None:
        return
    guild_id = s.exec(select(GameRow.guild_id).where(GameRow.id == game_id)).first()
    if guild_id is None:
        return
    check_fence(s, fences, guild_id)




if TYPE_CHECKING:

    def _is_the_core_port(repo: LeaseRepo) -> LeaseStore:
        return repo  # mypy checks here that the repository is the core's ``LeaseStore``


class IdentifyTurns:
    """IDENTIFY in turns across every process of a token: one per rate-limit key per ``window`` seconds.

    Discord lets a token start ``max_concurrency`` sessions per 5 s, one per rate-limit key
    (``shard_id % max_concurrency``), and answers any more with Invalid Session. A turn is one
    conditional update of the key's row in ``identify_turns``, on the database's clock: it moves
    the key's next free moment ``window`` seconds on only if that moment has come, so of processes
    asking at once exactly one gets it. Nothing is held between turns (a lock held for the window
    would stop every other process for as long as its holder is paused).
    """

    POLL = 0.25
    """Seconds between two tries at a turn that is not free yet (at most; the wait is until it is)."""

    def __init__(self, db: Database, *, window: float = 5.5) -> None:
        self._db = db
        self.window = window

    async def turn(self, key: int) -> None:
        """Return once this process may IDENTIFY a shard of rate-limit key ``key``."""
        while True:
            wait = await self._db.call(self._take, key)
            if wait <= 0:
                return
            await asyncio.sleep(min(wait, self.POLL))

    def _take(self, key: int) -> float:
        """Take the turn (0.0), or how many seconds until it is free."""
        with self._db.write() as s, s.begin():
            connection = s.connection()
            connection.execute(
                text("INSERT INTO identify_turns (key, next_at) VALUES (:key, clock_timestamp()) "
                     "ON CONFLICT (key) DO NOTHING"), {"key": key},
            )
            taken = connection.execute(
                text("UPDATE identify_turns SET next_at = clock_timestamp() + make_interval(secs => :window) "
                     "WHERE key = :key AND next_at <= clock_timestamp() RETURNING key"),
                {"key": key, "window": self.window},
            ).first()
            if taken is not None:
                return 0.0
            left = connection.execute(
                text("SELECT EXTRACT(EPOCH FROM next_at - clock_timestamp()) FROM identify_turns WHERE key = :key"),
                {"key": key},
            ).scalar()
            return max(0.01, float(left or 0.0))


__all__ = ["IdentifyTurns", "LeaseRepo", "check_fence", "check_game_fence", "shard_of"]
