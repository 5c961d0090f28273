"""The token's global limit shared through Redis: requests admitted per second against the limit.

Run: python benchmarks/shared_limit.py [--processes 4] [--limit 50] [--seconds 5] [--redis URL]

Each "process" is a ``GlobalLimit`` with its own ``RedisWindow`` (its own connection) on one key
of the Redis at ``--redis``, flooded by 20 senders that ask without pause (one in five a member
edit, the rest messages). Two scenarios: every process busy, then only the first busy while the
others idle (what a static split would cap at ``limit / processes``). It prints the requests
admitted per second in total and per process, the most admitted in any one window (never above the
limit), and the p50 / p99 of a place's round trip to Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import sys
import time
import uuid
from pathlib import Path

sys.path[:] = [str(Path(__file__).resolve().parent.parent),
               *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]

from benchmarks._common import percentile  # noqa: E402
from mafiabot.host.ratelimit import GlobalLimit  # noqa: E402
from mafiabot.host.shared_limit import RedisWindow  # noqa: E402

SENDERS = 20


class Timed(RedisWindow):
    """A window that notes how long each place took to ask Redis."""

    trips: list[float]

    async def take(self, cap: int, window: float) -> float:
        started = time.perf_counter()
        try:
            return await super().take(cap, window)
        finally:
            self.trips.append(time.perf_counter() - started)


async def flood(limit: GlobalLimit, until: float, granted: list[float], urgent_every: int = 5) -> None:
    async def sender(i: int) -> None:
        n = 0
        while time.time() < until:
            await limit.acquire(urgent=(n + i) % urgent_every == 0)
            granted.append(time.time())
            n += 1

    await asyncio.gather(*(sender(i) for i in range(SENDERS)))


def busiest_window(times: list[float], window: float) -> int:
    ordered = sorted(times)
    return max((bisect.bisect_left(ordered, t + window) - i for i, t in enumerate(ordered)), default=0)


async def scenario(args: argparse.Namespace, busy: int) -> dict[str, object]:
    key = f"bench:global:{uuid.uuid4().hex}"
    windows = [Timed(args.redis, key) for _ in range(args.processes)]
    for window in windows:
        window.trips = []
    limits = [GlobalLimit(args.limit, shared=window) for window in windows]
    granted: list[list[float]] = [[] for _ in limits]
    started = time.time()
    until = started + args.seconds
    await asyncio.gather(*(flood(limits[i], until, granted[i]) for i in range(busy)))
    elapsed = time.time() - started
    for limit in limits:
        await limit.close()
    everything = [t for times in granted for t in times]
    trips = [t for window in windows for t in window.trips]
    return {
        "busy_processes": busy,
        "admitted_per_second": round(len(everything) / elapsed, 1),
        "per_process": [round(len(times) / elapsed, 1) for times in granted],
        "most_in_one_second": busiest_window(everything, 1.0),
        "redis_p50_ms": round(1000 * percentile(trips, 50), 3),
        "redis_p99_ms": round(1000 * percentile(trips, 99), 3),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    print(f"{args.processes} processes, limit {args.limit} per second (window stretched 10%), "
          f"{SENDERS} senders each, {args.seconds:g} s per scenario")
    for busy in (args.processes, 1):
        result = await scenario(args, busy)
        print(f"{busy} busy: {result['admitted_per_second']}/s admitted in total {result['per_process']}, "
              f"at most {result['most_in_one_second']} in any second; Redis p50 {result['redis_p50_ms']} ms, "
              f"p99 {result['redis_p99_ms']} ms")
        print(json.dumps({"benchmark": "shared_limit", "processes": args.processes, "limit": args.limit, **result}))


if __name__ == "__main__":
    asyncio.run(main())
