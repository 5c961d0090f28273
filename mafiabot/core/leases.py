"""Shard leases: processes started with the same config share the gateway shards through the database.

Each shard has one lease row (owner, expiry, fencing number). A process renews its leases every
third of the lease time; one that is not renewed in time is taken by another process, whose
fencing number for the shard is one higher. Every write of a game (its log, its mutes) carries the
writer's number and the database refuses an older one (``mafiabot.store.leases``), so a process
that was paused past its lease and wakes up cannot act on games another process now runs.

A lease is also taken at once, without waiting for it to run out, when the store knows its owner
is gone (``Lease.gone``: on PostgreSQL, the owner's liveness lock is free because its connection
dropped, as a killed process's does). A process that is only paused keeps its connection, so its
leases run out as before, and it stops acting before another may start.

The keeper is pure logic on a clock handed to it (``TableClock``): tests drive it on a
``ManualClock`` against a real store, and the bot runs it on the event loop's clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from mafiabot.core.clock import Cancellable, TableClock
from mafiabot.core.errors import FencedError

log = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 15.0
"""How long a lease lasts without renewal: the longest a dead process's games wait for another."""


def shard_of(guild_id: int, shard_count: int) -> int:
    """The shard Discord sends ``guild_id``'s events on."""
    return (guild_id >> 22) % shard_count


@dataclass(frozen=True)
class Fence:
    """The turn of ``owner`` at running ``shard_id``: ``number`` grows with each new owner."""

    shard_id: int
    owner: str
    number: int


@dataclass(frozen=True)
class Fences:
    """The leases a process holds at one moment: what every write of a game is checked against."""

    shard_count: int
    held: Mapping[int, Fence] = field(default_factory=dict)

    def fence_for(self, guild_id: int) -> Fence:
        """The fence for ``guild_id``'s shard.

        Raises:
            FencedError: this process does not hold that shard's lease (or no longer knows it does).
        """
        shard = shard_of(guild_id, self.shard_count)
        fence = self.held.get(shard)
        if fence is None:
            raise FencedError(guild_id, shard)
        return fence


@dataclass(frozen=True)
class Lease:
    """One shard's lease as the database holds it; an empty ``owner`` is a free shard.

    ``gone``: its owner is no longer a live process (its liveness lock is free, or it left), so the
    lease may be taken before ``expires_at``.
    """

    shard_id: int
    owner: str
    expires_at: datetime
    fence: int
    gone: bool = False


class LeaseStore(Protocol):
    """Where the leases live (``mafiabot.store.leases.LeaseRepo``)."""

    async def beat(self, owner: str, *, shard_count: int, at: datetime, ttl: float) -> tuple[list[Lease], int]:
        """Note ``owner`` alive and renew its leases until ``at + ttl``: every lease and the live processes."""

    async def claim(self, shard_id: int, owner: str, *, at: datetime, ttl: float) -> int | None:
        """Take a free, expired or gone owner's lease: its new fencing number, or None if another process has it."""

    async def release(self, shard_id: int, owner: str, *, at: datetime) -> None:
        """Let a lease go now (if still ours): another process may take it at once."""

    async def leave(self, owner: str, *, at: datetime) -> None:
        """Let every lease of ``owner`` go and stop counting it as a process."""


Gained = Callable[[int], Awaitable[None]]
Lost = Callable[[int], Awaitable[None]]


class LeaseKeeper:
    """Keeps this process's share of the shards: renews, takes over expired leases, lets extra ones go.

    Each beat (every ``ttl / 3``) renews the process's leases in one transaction and reads them all.
    A process wants ``ceil(shard_count / processes)`` shards: it takes free or expired shards while
    it has fewer, and lets one go per beat while it has more (a process that joined gets its share),
    but never a ``busy`` one: a shard with games or lobbies running stays until they are over, since
    a click that arrives during a handover is lost to its player.
    ``gained`` runs a shard (connects, resumes its games); ``lost`` stops it without touching its
    games, which are another process's now.

    A lease counts as held only until ``ttl - ttl / 3`` after the start of the beat that renewed
    it, on this process's clock: a process paused longer stops acting before another may start.
    It counts as held only while ``alive`` says so (the process holds its liveness lock): once that
    is lost another process may take the shards at once.

    ``gained`` runs outside the beat (a shard's bot takes a while to build and start, and the beat
    that claimed it must renew the other leases meanwhile); ``poke`` beats at once (another process
    is gone or let a lease go), and a beat that sees a lease it would take run out before the next
    beat comes back at that moment.
    """

    def __init__(
        self, store: LeaseStore, *, owner: str, shard_count: int, clock: TableClock,
        gained: Gained, lost: Lost, ttl: float = DEFAULT_LEASE_SECONDS,
        busy: Callable[[int], bool] = lambda _shard: False, alive: Callable[[], bool] = lambda: True,
        settle: bool = False,
    ) -> None:
        """A keeper for ``owner``; ``settle`` makes its first beat only note the process alive.

        So processes started together count each other before any takes a shard (else the first to
        beat takes them all, and shards with games running are never handed over).
        """
        self.store = store
        self.owner = owner
        self.shard_count = shard_count
        self.clock = clock
        self.ttl = ttl
        self.interval = ttl / 3
        self._gained = gained
        self._lost = lost
        self._busy = busy
        self._alive = alive
        self._settling = settle
        self.held: dict[int, Fence] = {}
        self._until: dict[int, float] = {}
        self.members = 0
        self._handle: Cancellable | None = None
        self._beat_done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._next_expiry: float | None = None
        """When (on the clock) a lease this process would take runs out before the next beat."""
        self._starting: set[asyncio.Task[None]] = set()
        self._starting_shards: set[int] = set()
        self._stopped = False
        self.claiming = True
        """False once the process is stopping: it renews what it holds and takes nothing more."""

    def fences(self) -> Fences:
        """The leases held and still valid now: what this process's writes carry."""
        now = self.clock.time()
        if not self._alive():
            return Fences(self.shard_count)
        return Fences(self.shard_count, {s: f for s, f in self.held.items() if self._until.get(s, 0.0) > now})

    def valid(self, shard_id: int) -> bool:
        """Whether this process may act for ``shard_id`` now."""
        return shard_id in self.held and self._until.get(shard_id, 0.0) > self.clock.time() and self._alive()

    async def confirmed(self, shard_id: int) -> bool:
        """Wait until the lease of ``shard_id`` is valid again (True) or lost (False)."""
        while not self.valid(shard_id):
            if shard_id not in self.held or self._stopped:
                return False
            await self._beat_done.wait()
        return True

    def target(self) -> int:
        """How many shards this process should hold with the processes counted at the last beat."""
        return math.ceil(self.shard_count / max(1, self.members))

    async def beat(self) -> None:
        """One round: renew, notice lost leases, then take or let go of one shard to reach the target."""
        started = self.clock.time()
        at = self.clock.wall(started)
        try:
            leases, self.members = await self.store.beat(self.owner, shard_count=self.shard_count, at=at, ttl=self.ttl)
        except Exception as exc:
            log.warning("could not renew the shard leases (%s); they stay valid until they run out", exc)
            self._wake()
            return
        await self._renew(leases, started)
        await self._balance(leases, at, started)
        self._settling = False
        self._next_expiry = self._first_expiry(leases, at, started) if self.claiming else None
        self._wake()

    async def _renew(self, leases: Sequence[Lease], started: float) -> None:
        """Count the held shards renewed until the next beat; drop those another process took."""
        mine = {lease.shard_id: lease for lease in leases if lease.owner == self.owner}
        for shard, fence in list(self.held.items()):
            lease = mine.get(shard)
            if lease is None or lease.fence != fence.number:
                await self._drop(shard, "taken by another process")
            else:
                self._until[shard] = started + self.ttl - self.interval

    async def _balance(self, leases: Sequence[Lease], at: datetime, started: float) -> None:
        """Hand over one idle shard above the target, or take shards up to it."""
        idle = [shard for shard in self.held if not self._busy(shard) and shard not in self._starting_shards]
        if len(self.held) > self.target() and idle:
            shard = max(idle)
            await self._drop(shard, "handed over to another process")
            await self.store.release(shard, self.owner, at=self.clock.wall(self.clock.time()))
        elif len(self.held) < self.target() and not self._settling:
            await self._claim(leases, at, started)

    def _first_expiry(self, leases: Sequence[Lease], at: datetime, started: float) -> float | None:
        """When the first lease another live owner holds runs out, on this keeper's clock.

        A lease not renewed runs out at a known moment: be there, not at the next beat. (A live
        owner renews every ``ttl / 3``, so its lease never runs out before this keeper's next beat.)
        """
        ends = [(lease.expires_at - at).total_seconds() for lease in leases
                if lease.owner and lease.owner != self.owner and not lease.gone and lease.expires_at > at]
        return started + min(ends) + 0.001 if ends else None

    async def _claim(self, leases: Sequence[Lease], at: datetime, started: float) -> None:
        """Take free, expired or gone owners' shards, lowest first, up to the target."""
        taken = {lease.shard_id for lease in leases if lease.owner and lease.expires_at > at and not lease.gone}
        why = {lease.shard_id: "its process is gone" if lease.gone and lease.expires_at > at
               else "its lease ran out" if lease.owner else "it was free" for lease in leases}
        for shard in range(self.shard_count):
            if len(self.held) >= self.target() or not self.claiming:
                return
            if shard in taken or shard in self.held:
                continue
            number = await self.store.claim(shard, self.owner, at=at, ttl=self.ttl)
            if number is None:
                continue
            self.held[shard] = Fence(shard, self.owner, number)
            self._until[shard] = started + self.ttl - self.interval
            log.info("shard %s is ours now (fence %s): %s", shard, number, why.get(shard, "it was free"))
            self._starting_shards.add(shard)
            task = asyncio.get_running_loop().create_task(self._start(shard))
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    async def _start(self, shard: int) -> None:
        try:
            if shard in self.held:  # not lost meanwhile
                await self._gained(shard)
        except Exception:
            log.exception("shard %s could not be started", shard)
        finally:
            self._starting_shards.discard(shard)

    async def reset(self, owner: str) -> None:
        """Let every shard go here and carry on as ``owner``, a new process to the others.

        For a process that lost its liveness lock: the others may have taken its shards already.
        """
        for shard in list(self.held):
            await self._drop(shard, "given up: this process lost its liveness lock")
        self.owner = owner

    async def started(self) -> None:
        """Wait until every shard gained so far has been handed to ``gained`` (for tests and tools)."""
        while self._starting:
            await asyncio.gather(*self._starting, return_exceptions=True)

    async def _drop(self, shard: int, why: str) -> None:
        self.held.pop(shard, None)
        self._until.pop(shard, None)
        log.warning("shard %s: lease %s; its games are left alone here", shard, why)
        await self._lost(shard)

    def _wake(self) -> None:
        self._beat_done.set()
        self._beat_done = asyncio.Event()

    def start(self) -> None:
        """Beat now and every ``ttl / 3`` on the clock until ``stop``."""
        self._schedule(0.0)

    def poke(self) -> None:
        """Beat at once (or right after the beat under way): another process is gone or let a lease go."""
        if self._stopped:
            return
        if self._task is not None and not self._task.done():
            self._again = True
        else:
            self._schedule(0.0)

    def _schedule(self, delay: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if not self._stopped:
            self._handle = self.clock.call_later(delay, self._run)

    def _run(self) -> None:
        self._handle = None
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.get_running_loop().create_task(self._beat_and_schedule())

    async def _beat_and_schedule(self) -> None:
        started = self.clock.time()
        try:
            await self.beat()
        except Exception:
            log.exception("a lease beat failed")
        finally:
            now = self.clock.time()
            delay = max(0.0, started + self.interval - now)
            if self._next_expiry is not None:
                delay = min(delay, max(0.0, self._next_expiry - now))
            if self._again:
                self._again = False
                delay = 0.0
            self._schedule(delay)

    async def stop(self) -> None:
        """Stop beating and let the leases go (a polite stop): others take the shards at once."""
        self._stopped = True
        if self._handle is not None:
            self._handle.cancel()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        await self.started()
        self.held.clear()
        self._until.clear()
        self._wake()
        await self.store.leave(self.owner, at=self.clock.wall(self.clock.time()))


__all__ = ["DEFAULT_LEASE_SECONDS", "Fence", "Fences", "Lease", "LeaseKeeper", "LeaseStore", "shard_of"]
