"""Shard leases: processes started with the same config share the gateway shards through the database.

Each shard has one lease row (owner, expiry, fencing number). A process renews its leases every
third of the lease time; one that is not renewed in time is taken by another process, whose
fencing number for the shard is one higher. Every write of a game (its log, its mutes) carries the
writer's number and the database refuses an older one (``mafiabot.store.leases``), so a process
that was paused past its lease and wakes up cannot act on games another process now runs.

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
    """One shard's lease as the database holds it; an empty ``owner`` is a free shard."""

    shard_id: int
    owner: str
    expires_at: datetime
    fence: int


class LeaseStore(Protocol):
    """Where the leases live (``mafiabot.store.leases.LeaseRepo``)."""

    async def beat(self, owner: str, *, shard_count: int, at: datetime, ttl: float) -> tuple[list[Lease], int]:
        """Note ``owner`` alive and renew its leases until ``at + ttl``: every lease and the live processes."""

    async def claim(self, shard_id: int, owner: str, *, at: datetime, ttl: float) -> int | None:
        """Take a free or expired lease: its new fencing number, or None if another process has it."""

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
    """

    def __init__(
        self, store: LeaseStore, *, owner: str, shard_count: int, clock: TableClock,
        gained: Gained, lost: Lost, ttl: float = DEFAULT_LEASE_SECONDS,
        busy: Callable[[int], bool] = lambda _shard: False,
    ) -> None:
        self.store = store
        self.owner = owner
        self.shard_count = shard_count
        self.clock = clock
        self.ttl = ttl
        self.interval = ttl / 3
        self._gained = gained
        self._lost = lost
        self._busy = busy
        self.held: dict[int, Fence] = {}
        self._until: dict[int, float] = {}
        self.members = 0
        self._handle: Cancellable | None = None
        self._beat_done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        self.claiming = True
        """False once the process is stopping: it renews what it holds and takes nothing more."""

    def fences(self) -> Fences:
        """The leases held and still valid now: what this process's writes carry."""
        now = self.clock.time()
        return Fences(self.shard_count, {s: f for s, f in self.held.items() if self._until.get(s, 0.0) > now})

    def valid(self, shard_id: int) -> bool:
        """Whether this process may act for ``shard_id`` now."""
        return shard_id in self.held and self._until.get(shard_id, 0.0) > self.clock.time()

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
        mine = {lease.shard_id: lease for lease in leases if lease.owner == self.owner}
        for shard, fence in list(self.held.items()):
            lease = mine.get(shard)
            if lease is None or lease.fence != fence.number:
                await self._drop(shard, "taken by another process")
            else:
                self._until[shard] = started + self.ttl - self.interval
        idle = [shard for shard in self.held if not self._busy(shard)]
        if len(self.held) > self.target() and idle:
            shard = max(idle)
            await self._drop(shard, "handed over to another process")
            await self.store.release(shard, self.owner, at=self.clock.wall(self.clock.time()))
        elif len(self.held) < self.target():
            await self._claim(leases, at, started)
        self._wake()

    async def _claim(self, leases: Sequence[Lease], at: datetime, started: float) -> None:
        """Take free or expired shards, lowest first, up to the target."""
        taken = {lease.shard_id for lease in leases if lease.owner and lease.expires_at > at}
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
            log.info("shard %s is ours now (fence %s)", shard, number)
            await self._gained(shard)

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

    def _schedule(self, delay: float) -> None:
        if not self._stopped:
            self._handle = self.clock.call_later(delay, self._run)

    def _run(self) -> None:
        if self._task is not None and not self._task.done():
            self._schedule(self.interval)
            return
        self._task = asyncio.get_running_loop().create_task(self.beat())
        self._schedule(self.interval)

    async def stop(self) -> None:
        """Stop beating and let the leases go (a polite stop): others take the shards at once."""
        self._stopped = True
        if self._handle is not None:
            self._handle.cancel()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        self.held.clear()
        self._until.clear()
        self._wake()
        await self.store.leave(self.owner, at=self.clock.wall(self.clock.time()))


__all__ = ["DEFAULT_LEASE_SECONDS", "Fence", "Fences", "Lease", "LeaseKeeper", "LeaseStore", "shard_of"]
