"""Shard leases and fencing in the database (``mafiabot.core.leases`` holds the logic and says why).

A write of a game that carries a fence (``check_fence``) locks the shard's lease row for share in
the same transaction and is refused unless the row still names the writer with the same number;
a takeover updates that row, so it waits for such a write to commit, and once it has committed no
write with the old number can.

On PostgreSQL each process also holds a liveness lock for its life (``OwnerLock``): a session-level
advisory lock on a connection of its own, which PostgreSQL frees the moment that connection drops
(a process killed closes its sockets). A lease whose owner's lock is free is taken over at once,
without waiting for it to run out; the taker's fencing number is higher as in any takeover.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import create_engine, delete, make_url, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from mafiabot.core.errors import FencedError, StoreUnavailableError
from mafiabot.core.leases import Fences, Lease, shard_of
from mafiabot.store.db import Database, Repository, aware
from mafiabot.store.models import GameRow, LeaseMemberRow, ShardLeaseRow

if TYPE_CHECKING:
    from mafiabot.core.leases import LeaseStore

log = logging.getLogger(__name__)

NEVER = datetime(1970, 1, 1, tzinfo=UTC)
"""The expiry of a lease nobody has held yet."""

LOCK_CLASS = 0x4D414649
"""The first key of every liveness lock ("MAFI"); the second is the process's ``lease_members.lock_key``."""

CHANNEL = "'mafiabot_leases_' || left(md5(coalesce(current_schema(), '')), 16)"
"""SQL for the channel the processes of one schema are woken on (NOTIFY): a lease let go, a process gone."""


class LeaseRepo(Repository):
    """The shard leases and the processes that take part in them.

    With ``lock`` (PostgreSQL), every beat notes the process's liveness lock with its membership, and
    refuses to beat while the lock is not held: a lease is only ever renewed by a process that holds it.
    """

    def __init__(self, db: Database, *, lock: OwnerLock | None = None) -> None:
        super().__init__(db)
        self.lock = lock

    async def beat(self, owner: str, *, shard_count: int, at: datetime, ttl: float) -> tuple[list[Lease], int]:
        """Note ``owner`` alive and renew its leases until ``at + ttl``, in one transaction.

        Returns every shard's lease and how many processes are alive (``owner`` included).
        """
        key = None
        if self.lock is not None:
            key = self.lock.key
            if key is None:
                raise StoreUnavailableError("this process does not hold its liveness lock")
        leases, members, keys = await self._db.call(self._beat, owner, shard_count, aware(at, "at"), ttl, key)
        if self.lock is not None and key is not None:
            self.lock.watch(successor(key, keys))
        return leases, members

    def _beat(
        self, owner: str, shard_count: int, at: datetime, ttl: float, key: int | None,
    ) -> tuple[list[Lease], int, list[int]]:
        until = at + timedelta(seconds=ttl)
        with self._db.write() as s, s.begin():
            connection = s.connection()
            postgres = connection.dialect.name == "postgresql"
            insert = postgresql.insert if postgres else sqlite.insert
            connection.execute(
                insert(ShardLeaseRow).on_conflict_do_nothing(),
                [{"shard_id": i, "owner": "", "expires_at": NEVER, "fence": 0} for i in range(shard_count)],
            )
            connection.execute(
                insert(LeaseMemberRow).values(owner=owner, expires_at=until, lock_key=key)
                .on_conflict_do_update(index_elements=["owner"], set_={"expires_at": until, "lock_key": key})
            )
            connection.execute(delete(LeaseMemberRow).where(col(LeaseMemberRow.expires_at) <= at))
            if postgres:  # a process whose liveness lock is free is gone, whatever its expiry says
                connection.execute(
                    text("DELETE FROM lease_members WHERE owner <> :owner AND lock_key IS NOT NULL "
                         "AND pg_try_advisory_xact_lock_shared(:cls, lock_key)"),
                    {"owner": owner, "cls": LOCK_CLASS},
                )
            connection.execute(
                update(ShardLeaseRow).where(col(ShardLeaseRow.owner) == owner).values(expires_at=until)
            )
            members = {r.owner: r.lock_key for r in s.exec(select(LeaseMemberRow))}
            leases = [
                Lease(r.shard_id, r.owner, aware(r.expires_at, "expires_at"), r.fence,
                      gone=bool(r.owner) and r.owner not in members)
                for r in s.exec(select(ShardLeaseRow).order_by(col(ShardLeaseRow.shard_id)))
            ]
            keys = [k for o, k in members.items() if k is not None and o != owner]
            return leases, len(members), keys

    async def claim(self, shard_id: int, owner: str, *, at: datetime, ttl: float) -> int | None:
        """Take ``shard_id`` if it is free or its lease ran out by ``at``: the new fencing number, or None."""
        return await self._db.call(self._claim, shard_id, owner, aware(at, "at"), ttl)

    def _claim(self, shard_id: int, owner: str, at: datetime, ttl: float) -> int | None:
        """Free, run out, or its owner gone: no longer a member (run out, left, or its liveness lock free)."""
        with self._db.write() as s, s.begin():
            number = s.connection().execute(
                update(ShardLeaseRow)
                .where(col(ShardLeaseRow.shard_id) == shard_id,
                       (col(ShardLeaseRow.owner) == "") | (col(ShardLeaseRow.expires_at) <= at)
                       | col(ShardLeaseRow.owner).not_in(select(LeaseMemberRow.owner)))
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
            if s.connection().dialect.name == "postgresql":  # the others take it at once, not at their next beat
                s.connection().execute(text(f"SELECT pg_notify({CHANNEL}, '')"))

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




def successor(key: int, keys: list[int]) -> int | None:
    """The liveness lock this process watches: the next key after its own, round the ring of processes.

    Each process is watched by exactly one other, so a death wakes someone at once however many there are.
    """
    if not keys:
        return None
    later = [k for k in keys if k > key]
    return min(later) if later else min(keys)


class OwnerLock:
    """This process's liveness lock, and its watch on the next process's, on two connections of their own.

    The holder connection takes a session-level advisory lock (``LOCK_CLASS``, a random key) and
    LISTENs on the schema's channel; PostgreSQL frees the lock as soon as the connection drops, so a
    killed process is known to be gone at once (a paused one keeps its connection, and its leases
    run out as before). The watcher connection waits to take the next process's lock for share:
    it gets it the moment that process is gone, and NOTIFYs every process to beat at once.

    ``key`` is None once the holder connection is lost: from then on this process must not act on
    any shard (another may already have taken them), and ``lost`` is called.
    """

    POLL = 0.25
    """Seconds between two looks at whether to stop, while waiting for a notification."""

    def __init__(self, url: str, *, interval: float) -> None:
        """``url`` is the store's; ``interval`` bounds a wait on a lock before looking again whom to watch."""
        parsed = make_url(url)
        engine = create_engine(parsed)
        args, params = engine.dialect.create_connect_args(parsed)
        params.pop("context", None)
        engine.dispose()
        self._connect_args: tuple[list[Any], dict[str, Any]] = (list(args), dict(params))
        self.interval = interval
        self.key: int | None = None
        self._holder: Any = None
        self._watching: int | None = None
        self._watch_changed = threading.Event()
        self._stopped = threading.Event()
        self._watcher: Any = None
        self._threads: list[threading.Thread] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: Callable[[], None] = lambda: None
        self._lost: Callable[[], None] = lambda: None

    def _connection(self) -> Any:
        import psycopg

        args, params = self._connect_args
        return psycopg.connect(*args, **params, autocommit=True)

    async def acquire(self, *, wake: Callable[[], None], lost: Callable[[], None]) -> int:
        """Take a lock no other process holds, LISTEN, and start watching: its key.

        ``wake`` is called (on the event loop) when another process is gone or let a lease go; ``lost``
        once this lock is lost.
        """
        if self._threads:  # a lock lost before: its watch must end before another starts
            await self.release()
        self._loop = asyncio.get_running_loop()
        self._wake, self._lost = wake, lost
        self._stopped.clear()
        key = await asyncio.to_thread(self._take)
        holder = threading.Thread(target=self._hold, name="mafiabot-liveness", daemon=True)
        watcher = threading.Thread(target=self._watch, name="mafiabot-watch", daemon=True)
        self._threads = [holder, watcher]
        holder.start()
        watcher.start()
        return key

    def _take(self) -> int:
        from psycopg import sql

        connection = self._connection()
        try:
            while True:
                key = random.randrange(1, 2**31)
                if connection.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, key)).fetchone()[0]:
                    break
            channel = connection.execute(f"SELECT {CHANNEL}").fetchone()[0]
            connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except BaseException:
            connection.close()
            raise
        self._holder = connection
        self.key = key
        return key

    def _call(self, fn: Callable[[], None]) -> None:
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody to tell
                self._loop.call_soon_threadsafe(fn)

    def _hold(self) -> None:
        import psycopg

        connection = self._holder
        try:
            while not self._stopped.is_set():
                for _notice in connection.notifies(timeout=self.POLL):
                    self._call(self._wake)
        except psycopg.Error as exc:
            if not self._stopped.is_set():
                self.key = None
                log.warning("lost the liveness lock's connection (%s): this process stops acting on its shards",
                            str(exc).strip())
                self._call(self._lost)
        finally:
            self.key = None
            with contextlib.suppress(Exception):
                connection.close()

    def watch(self, key: int | None) -> None:
        """Watch the process whose liveness lock is ``key`` (None: nobody)."""
        if key != self._watching:
            self._watching = key
            self._watch_changed.set()

    def _watch(self) -> None:
        import psycopg
        from psycopg import errors

        connection = None
        while not self._stopped.is_set():
            key = self._watching
            if key is None:
                self._watch_changed.wait(self.interval)
                self._watch_changed.clear()
                continue
            try:
                if connection is None:
                    connection = self._connection()
                    connection.execute(f"SET lock_timeout = {int(self.interval * 1000)}")
                    self._watcher = connection
                connection.execute("SELECT pg_advisory_lock_shared(%s, %s)", (LOCK_CLASS, key))
                connection.execute("SELECT pg_advisory_unlock_shared(%s, %s)", (LOCK_CLASS, key))
                if self._watching == key:
                    self._watching = None
                if not self._stopped.is_set():
                    connection.execute(f"SELECT pg_notify({CHANNEL}, '')")
            except (errors.LockNotAvailable, errors.QueryCanceled):
                continue  # still alive (or told to stop): look again whom to watch
            except psycopg.Error as exc:
                log.warning("the watch on another process's liveness failed (%s); retrying", str(exc).strip())
                with contextlib.suppress(Exception):
                    connection.close()  # type: ignore[union-attr]
                connection = self._watcher = None
                self._stopped.wait(self.interval)
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()

    async def release(self) -> None:
        """Stop watching and let the lock go (a polite stop: the leases were let go already)."""
        self._stopped.set()
        self._watch_changed.set()
        watcher = self._watcher
        if watcher is not None:
            with contextlib.suppress(Exception):
                watcher.cancel()
        for thread in self._threads:
            await asyncio.to_thread(thread.join, self.interval + 1.0)
        self._threads = []


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


__all__ = ["IdentifyTurns", "LeaseRepo", "OwnerLock", "check_fence", "check_game_fence", "shard_of", "successor"]
