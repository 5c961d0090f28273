"""Shard leases on a manual clock against the real store: sharing, handing over, taking over, fencing."""

from __future__ import annotations

import pytest

from engine import Role
from mafiabot.core.clock import ManualClock
from mafiabot.core.errors import FencedError
from mafiabot.core.leases import Fence, Fences, LeaseKeeper, shard_of
from mafiabot.store import IdentifyTurns, Store
from tests.store.conftest import T0, StartScripted, postgres_schema

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

    async def gained(self, shard: int) -> None:
        self.running.add(shard)
        self.events.append(f"+{shard}")

    async def lost(self, shard: int) -> None:
        self.running.discard(shard)
        self.events.append(f"-{shard}")


async def test_processes_share_the_shards_and_a_standby_waits(store: Store) -> None:
    clock = ManualClock()
    a, b, c = (Process(store, clock, name) for name in "abc")
    await a.keeper.beat()
    assert a.running == {0, 1}  # alone, it runs every shard
    await b.keeper.beat()
    assert b.running == set()  # nothing free yet
    await a.keeper.beat()  # two processes now: a hands one over
    assert a.running == {0}
    assert a.events == ["+0", "+1", "-1"]
    await b.keeper.beat()
    assert b.running == {1}
    assert b.keeper.held[1].number == 2  # a new owner: a higher fencing number
    await c.keeper.beat()
    await a.keeper.beat()
    await b.keeper.beat()
    assert c.running == set()  # three processes for two shards: the third stands by
    assert (a.running, b.running) == ({0}, {1})
    await b.keeper.stop()  # a polite stop lets the shard go at once
    await c.keeper.beat()
    assert c.running == {1}
    assert c.keeper.held[1].number == 3


async def test_a_shard_with_games_running_is_not_handed_over(store: Store) -> None:
    clock = ManualClock()
    busy: set[int] = set()
    a, b = Process(store, clock, "a"), Process(store, clock, "b")
    a.keeper = LeaseKeeper(store.leases, owner="a", shard_count=SHARDS, clock=clock, ttl=TTL,
                           gained=a.gained, lost=a.lost, busy=busy.__contains__)
    await a.keeper.beat()
    busy.update({0, 1})
    await b.keeper.beat()
    await a.keeper.beat()
    await b.keeper.beat()
    assert a.running == {0, 1}  # both shards play: b stands by
    assert b.running == set()
    busy.discard(0)
    await a.keeper.beat()
    await b.keeper.beat()
    assert a.running == {1}
    assert b.running == {0}


async def test_a_lease_not_renewed_is_taken_over_and_the_old_owner_is_fenced(
    store: Store, start_game: StartScripted,
) -> None:
    clock = ManualClock()
    a, b = Process(store, clock, "a"), Process(store, clock, "b")
    for process in (a, b, a, b):
        await process.keeper.beat()
    assert (a.running, b.running) == ({0}, {1})
    guild = guild_on(1)
    game = await start_game(guild, "classic", list(range(101, 111)), ROLES, at=T0)
    store.db.fencing = b.keeper.fences
    await store.append(game.game_id, game.seq + 1, {"type": "Note"}, [], actor_id=None, at=T0)
    stale = b.keeper.fences()
    assert stale.fence_for(guild) == Fence(1, "b", 2)  # a held it first

    # b is paused: a keeps beating; once b's lease ran out a takes shard 1 over.
    clock.advance(TTL / 3)
    await a.keeper.beat()
    assert a.running == {0}
    clock.advance(TTL)
    assert not b.keeper.valid(1)  # b's own clock says it may no longer act, whatever the database says
    assert b.keeper.fences().held == {}
    await a.keeper.beat()  # b no longer counts as a process: a's share is both shards
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
    await b.keeper.beat()
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
