"""Shard leases: how long a dead process's shard waits for another, and what the leases cost the database.

Runs the real ``LeaseKeeper`` against a real PostgreSQL database (``--url``, or the tests' local
server) on a manual clock, so the times are the lease logic's own, without the machine's load:

- failover: a holder and a standby beat with a random phase between them; the holder dies at a
  random moment; the time until the standby holds the shard, over ``--kills`` kills (p50, p99).
  A real takeover adds the resume of the shard's games (connect, replay, re-arm the timers).
- load: the statements each process sends for its leases, per second of its beats.

    python -m benchmarks.leases --kills 20 --ttl 15
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import uuid
from typing import Any

from sqlalchemy import event

from benchmarks._common import throwaway_schema
from mafiabot.core.clock import ManualClock
from mafiabot.core.leases import LeaseKeeper
from mafiabot.store import Store

DEFAULT_URL = "postgresql+psycopg://root@127.0.0.1:5432/test"


async def nothing(_shard: int) -> None:
    """A shard gained or lost: nothing to run here."""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def failover(store: Store, kills: int, ttl: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    times = []
    for _ in range(kills):
        clock = ManualClock()
        holder = LeaseKeeper(store.leases, owner=f"h-{uuid.uuid4().hex[:6]}", shard_count=1, clock=clock, ttl=ttl,
                             gained=nothing, lost=nothing)
        standby = LeaseKeeper(store.leases, owner=f"s-{uuid.uuid4().hex[:6]}", shard_count=1, clock=clock, ttl=ttl,
                              gained=nothing, lost=nothing)
        await holder.beat()
        phase = rng.uniform(0, standby.interval)  # the standby's beats fall anywhere between the holder's
        clock.advance(phase)
        await standby.beat()
        if standby.held:
            raise RuntimeError("the standby took a shard that was held")
        death = clock.time() + rng.uniform(0, holder.interval)  # the holder's last beat was at 0
        next_holder, next_standby = holder.interval, phase + standby.interval
        while not standby.held:
            if next_holder < death and next_holder <= next_standby:
                clock.advance(next_holder - clock.time())
                await holder.beat()
                next_holder += holder.interval
                continue
            clock.advance(next_standby - clock.time())
            await standby.beat()
            next_standby += standby.interval
        times.append(clock.time() - death)
        await standby.stop()
        await holder.stop()
    return times


async def load(url: str, ttl: float, beats: int) -> float:
    """Statements per beat of one process holding its shards, as counted on its own connection."""
    counted: list[int] = [0]

    def count(*_args: Any) -> None:
        counted[0] += 1

    store = await Store.open(url, migrate=False)
    event.listen(store.engine, "before_cursor_execute", count)
    clock = ManualClock()
    keeper = LeaseKeeper(store.leases, owner=f"l-{uuid.uuid4().hex[:6]}", shard_count=4, clock=clock, ttl=ttl,
                         gained=nothing, lost=nothing)
    await keeper.beat()  # the first beat takes the shards
    counted[0] = 0
    for _ in range(beats):
        clock.advance(keeper.interval)
        await keeper.beat()
    per_beat = counted[0] / beats
    await keeper.stop()
    await store.close()
    return per_beat


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_URL)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--ttl", type=float, default=15.0)
    parser.add_argument("--beats", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with throwaway_schema(args.url) as schema:
        store = await Store.open(schema.url)
        times = await failover(store, args.kills, args.ttl, args.seed)
        await store.close()
        per_beat = await load(schema.url, args.ttl, args.beats)
    interval = args.ttl / 3
    print(f"lease_seconds = {args.ttl:g}: a beat every {interval:g} s")
    print(f"failover over {len(times)} kills (lease logic, before the games resume): "
          f"p50 {percentile(times, 0.5):.1f} s, p99 {percentile(times, 0.99):.1f} s, "
          f"max {max(times):.1f} s, mean {statistics.mean(times):.1f} s")
    print(f"lease statements per beat: {per_beat:.1f}; per second per process: {per_beat / interval:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
