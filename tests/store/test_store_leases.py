"""Shard leases on a manual clock against the real store: sharing, handing over, taking over, fencing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import create_engine, text

from engine import Role
from mafiabot.core.clock import ManualClock
from mafiabot.core.errors import FencedError
from mafiabot.core.leases import Fence, Fences, LeaseKeeper, shard_of
from mafiabot.store import IdentifyTurns, LeaseRepo, OwnerLock, Store
from mafiabot.store.leases import LOCK_CLASS
from tests.store.conftest import T0, StartScripted, postgres_base_url, postgres_schema

TTL = 15.0
SHARDS = 2
ROLES = [Role.DON, Role.MAFIA, Role.MAFIA, Role.SHERIFF, *[Role.CITIZEN] * 6]


def guild_on(shard: int) -> int:
    """A guild id on ``shard`` of ``SHARDS`` (Discord's formula)."""
    guild = 1 << 22
    while shard_of(guild, SHARDS) != shard:
        guild += 1 << 22
    return guild


class Process:
    """One process's keeper and what it was told to run."""

    def __init__(self, store: Store, clock: ManualClock, name: str) -> None:
        self.running: set[int] = set()
        self.events: list[str] = []
        self.keeper = LeaseKeeper(store.leases, owner=name, shard_count=SHARDS, clock=clock, ttl=TTL,
                                  gained=self.gained, lost=self.lost)

    async def beat(self) -> None:
        """One beat, and the start of every shard it took (which runs outside the beat)."""
        await self.keeper.beat()
        await self.keeper.started()

    async def gained(self, shard: int) -> None:
        self.running.add(shard)
        self.events.append(f"+{shard}")

    async def lost(self, shard: int) -> None:
        self.running.discard(shard)
        self.events.append(f"-{shard}")


async def test_processes_share_the_shards_and_a_standby_waits(store: Store) -> None:
    clock = ManualClock()
    a, b, c = (Process(store, clock, name) for name in "abc")
    await a.beat()
    assert a.running == {0, 1}  # alone, it runs every shard
    await b.beat()
    assert b.running == set()  # nothing free yet
    await a.beat()  # two processes now: a hands one over
    assert a.running == {0}
    assert a.events == ["+0", "+1", "-1"]
    await b.beat()
    assert b.running == {1}
    assert b.keeper.held[1].number == 2  # a new owner: a higher fencing number
    await c.beat()
    await a.beat()
    await b.beat()
    assert c.running == set()  # three processes for two shards: the third stands by
    assert (a.running, b.running) == ({0}, {1})
    await b.keeper.stop()  # a polite stop lets the shard go at once
    await c.beat()
    assert c.running == {1}
    assert c.keeper.held[1].number == 3


async def test_a_shard_with_games_running_is_not_handed_over(store: Store) -> None:
    clock = ManualClock()
    busy: set[int] = set()
    a, b = Process(store, clock, "a"), Process(store, clock, "b")
    a.keeper = LeaseKeeper(store.leases, owner="a", shard_count=SHARDS, clock=clock, ttl=TTL,
                           gained=a.gained, lost=a.lost, busy=busy.__contains__)
    await a.beat()
    busy.update({0, 1})
    await b.beat()
    await a.beat()
    await b.beat()
    assert a.running == {0, 1}  # both shards play: b stands by
    assert b.running == set()
    busy.discard(0)
    await a.beat()
    await b.beat()
    assert a.running == {1}
    assert b.running == {0}


async def test_a_lease_not_renewed_is_taken_over_and_the_old_owner_is_fenced(
    store: Store, start_game: StartScripted,
) -> None:
    clock = ManualClock()
    a, b = Process(store, clock, "a"), Process(store, clock, "b")
    for process in (a, b, a, b):
        await process.beat()
    assert (a.running, b.running) == ({0}, {1})
    guild = guild_on(1)
    game = await start_game(guild, "classic", list(range(101, 111)), ROLES, at=T0)
    store.db.fencing = b.keeper.fences
    await store.append(game.game_id, game.seq + 1, {"type": "Note"}, [], actor_id=None, at=T0)
    stale = b.keeper.fences()
    assert stale.fence_for(guild) == Fence(1, "b", 2)  # a held it first

    # b is paused: a keeps beating; once b's lease ran out a takes shard 1 over.
    clock.advance(TTL / 3)
    await a.beat()
    assert a.running == {0}
    clock.advance(TTL)
    assert not b.keeper.valid(1)  # b's own clock says it may no longer act, whatever the database says
    assert b.keeper.fences().held == {}
    await a.beat()  # b no longer counts as a process: a's share is both shards
    assert a.running == {0, 1}
    assert a.keeper.held[1].number == 3

    # b wakes up with the number it had: the database refuses its append and its mutes.
    store.db.fencing = lambda: stale
    with pytest.raises(FencedError):
        await store.append(game.game_id, game.seq + 2, {"type": "Note"}, [], actor_id=None, at=T0)
    with pytest.raises(FencedError):
        await store.record_mutes(guild, [101], game.game_id)
    assert len(await store.load_log(game.game_id)) == game.seq + 1
    assert await store.owed_mutes(guild) == []
    # A process holding no lease for the guild is refused without asking the database.
    store.db.fencing = lambda: Fences(SHARDS)
    with pytest.raises(FencedError):
        await store.record_mutes(guild, [101], game.game_id)

    # The new owner's writes go through; b's next beat tells it the shard is gone.
    store.db.fencing = a.keeper.fences
    await store.append(game.game_id, game.seq + 2, {"type": "Note"}, [], actor_id=None, at=T0)
    await store.record_mutes(guild, [101], game.game_id)
    assert [m.user_id for m in await store.owed_mutes(guild)] == [101]
    await b.beat()
    assert b.running == set()
    assert b.events == ["+1", "-1"]


async def test_no_leases_no_fencing(store: Store, start_game: StartScripted) -> None:
    """One process on its own (SQLite, or fixed ``shard_ids``) writes without leases, as before."""
    game = await start_game(guild_on(0), "classic", list(range(101, 111)), ROLES, at=T0)
    assert store.db.fencing is None
    await store.record_mutes(guild_on(0), [101], game.game_id)
    assert len(await store.owed_mutes()) == 1


async def test_identify_turns_let_one_process_per_key_through() -> None:
    """Of processes asking for the same rate-limit key at once, one gets the turn; another key is free.

    PostgreSQL only: IDENTIFY turns are for processes that share it (one process on SQLite identifies alone).
    """
    with postgres_schema() as url:
        store = await Store.open(url)
        try:
            first, second = IdentifyTurns(store.db), IdentifyTurns(store.db)
            assert await store.db.call(first._take, 0) == 0.0
            assert await store.db.call(second._take, 0) > 0.0  # key 0 is taken for the next 5.5 s
            assert await store.db.call(second._take, 1) == 0.0
        finally:
            await store.close()


class Locked(Process):
    """A process with its liveness lock on connections of its own, as ``mafiabot run`` has on PostgreSQL."""

    def __init__(self, url: str, clock: ManualClock, name: str) -> None:
        self.url = url
        self.lock = OwnerLock(url, interval=TTL / 3)
        self.woken = asyncio.Event()
        self.lost_lock = asyncio.Event()
        self.name = name
        self.clock = clock

    async def open(self) -> Locked:
        self.store = await Store.open(self.url)
        repo = LeaseRepo(self.store.db, lock=self.lock)
        super().__init__(self.store, self.clock, self.name)
        self.keeper = LeaseKeeper(repo, owner=self.name, shard_count=SHARDS, clock=self.clock, ttl=TTL,
                                  gained=self.gained, lost=self.lost, alive=lambda: self.lock.key is not None)
        await self.lock.acquire(wake=self.woken.set, lost=self.lost_lock.set)
        return self

    async def close(self) -> None:
        await self.lock.release()
        await self.store.close()


async def within(event: asyncio.Event) -> None:
    """Wait for ``event`` (set from another connection's thread); a minute means it never comes."""
    await asyncio.wait_for(event.wait(), 60)


@contextlib.asynccontextmanager
async def locked_pair() -> AsyncIterator[tuple[Locked, Locked, ManualClock]]:
    """Two processes ``a`` and ``b``, each with its liveness lock, on a fresh PostgreSQL schema and one clock."""
    with postgres_schema() as url:
        clock = ManualClock()
        a, b = await Locked(url, clock, "a").open(), await Locked(url, clock, "b").open()
        try:
            yield a, b, clock
        finally:
            await a.close()
            await b.close()


async def test_a_process_whose_liveness_lock_is_free_is_taken_over_at_once() -> None:
    """A process's connection drops (as a killed process's does): its liveness lock is free, the
    process that watches it is woken, and its shards are taken before their leases run out.

    PostgreSQL only: the lock is PostgreSQL's. The clock never moves: expiry plays no part.
    """
    async with locked_pair() as (a, b, clock):
        await a.beat()
        await b.beat()
        await a.beat()  # each watches the other's lock now
        await b.beat()
        await a.beat()
        assert (a.running, b.running) == ({0}, {1})  # a live owner's lease is not taken
        b.woken.clear()
        admin = create_engine(postgres_base_url())
        with admin.begin() as connection:  # a's liveness connection drops, as a SIGKILL drops it
            connection.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                     "AND classid::bigint = :cls AND objid::bigint = :key AND granted"),
                {"cls": LOCK_CLASS, "key": a.lock.key})
        admin.dispose()
        await within(b.woken)  # b's watch saw a's lock go free and told every process to beat
        await within(a.lost_lock)
        assert not a.keeper.valid(0)  # a no longer acts, whatever its own clock says
        assert a.keeper.fences().held == {}
        await b.beat()
        assert b.running == {0, 1}
        assert b.keeper.held[0].number == 2  # a new owner, a higher number
        leases = await b.store.leases.leases()
        assert all(lease.expires_at > clock.wall(clock.time()) + timedelta(seconds=1) for lease in leases)


async def test_a_polite_stop_wakes_the_standby_at_once() -> None:
    """A process that lets its leases go tells the others (NOTIFY): the standby beats now, not at its
    next beat. PostgreSQL only."""
    async with locked_pair() as (a, b, _clock):
        await a.beat()
        await b.beat()
        b.woken.clear()
        await a.keeper.stop()
        await within(b.woken)
        await b.beat()
        assert b.running == {0, 1}


async def test_a_keeper_comes_back_when_the_lease_it_would_take_runs_out(store: Store) -> None:
    """A paused process's lease runs out at a known moment: the keeper beats then, not up to
    ``ttl / 3`` later at its next periodic beat."""
    clock = ManualClock()
    a, b = Process(store, clock, "a"), Process(store, clock, "b")
    for process in (a, b, a, b):
        await process.beat()
    assert (a.running, b.running) == ({0}, {1})
    b_expires = (await store.leases.leases())[1].expires_at
    clock.advance(1.0)
    a.keeper.start()  # b is paused from now on; a beats on its own schedule
    await clock_turn(clock, a)
    assert clock.time() == 1.0
    until_expiry = (b_expires - clock.wall(clock.time())).total_seconds()
    assert until_expiry < a.keeper.interval * 3  # b's lease runs out before a's third periodic beat
    while 1 not in a.running:
        await clock_turn(clock, a)
    assert clock.wall(clock.time()) - b_expires < timedelta(seconds=0.01)  # at the expiry, not a beat later
    await a.keeper.stop()


async def clock_turn(clock: ManualClock, process: Process) -> None:
    """Make the clock's next call (the keeper's next beat) and let that beat and its starts finish."""
    if process.keeper._task is None or process.keeper._task.done():
        clock.fire_next()
    await asyncio.sleep(0)
    assert process.keeper._task is not None
    await process.keeper._task
    await process.keeper.started()


async def test_a_slow_start_does_not_hold_up_the_beat(store: Store) -> None:
    """A shard's start (building its bot) runs outside the beat: the beat that took it ends, and the
    next one renews every lease while the start is still under way."""
    clock = ManualClock()
    release = asyncio.Event()
    started: list[int] = []

    async def slow(shard: int) -> None:
        started.append(shard)
        await release.wait()

    async def lost(_shard: int) -> None:
        return None

    keeper = LeaseKeeper(store.leases, owner="a", shard_count=SHARDS, clock=clock, ttl=TTL, gained=slow, lost=lost)
    try:
        await asyncio.wait_for(keeper.beat(), 60)  # the old keeper waited here for every start
        assert set(keeper.held) == {0, 1}
        clock.advance(TTL / 3)
        await asyncio.wait_for(keeper.beat(), 60)
        clock.advance(TTL / 3)
        assert keeper.valid(0)
        assert keeper.valid(1)
        await asyncio.sleep(0)
        assert sorted(started) == [0, 1]
    finally:
        release.set()
        await keeper.stop()
