"""The club's pages served by the bot's web server: how long a page takes to answer in a league of G games.

Run: python benchmarks/site_served.py [--games 100] [--players 50] [--requests 600] [--seed 1] [--keep FILE]

A SQLite league is filled as ``benchmarks/site.py`` fills it (not timed), the web server listens on
a free loopback port, and one client asks for pages one after another, as a reader clicking through
does: a kind of page (league, game, player, tournament, list) drawn at random, then one page of
that kind in one of the three languages. The league is read as the bot reads it when its web
server starts (``ClubPages.warm``, in the background), timed and printed apart with the event
loop's longest wait meanwhile (a probe asks for the loop every 10 ms: a table's timers and
commands run on that loop); a reader who comes during that read waits for it, at most that long.
The requests are then served from what was read, rendered on request, and their p50, p99 and
worst times are printed, by kind and in all.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.site import GUILD, T0, open_league
from mafiabot.core.clock import ManualClock
from mafiabot.core.runtime import Table
from mafiabot.host.i18n import LANGUAGES
from mafiabot.host.site import Site
from mafiabot.host.web.club import ClubPages
from mafiabot.host.web.server import StreamServer


class _NoTables:
    def running(self, game_id: int, /) -> Table | None:
        return None

    def watch(self, table: Table, woken: Callable[[], None], /) -> Callable[[], None]:
        raise AssertionError("no stream here")


def _kind(path: str) -> str:
    if path.endswith("/index.html") and path.count("/") == 1:
        return "lists"
    return path.split("/")[0] if "/" in path and not path.startswith("league/") else "league"


def _quantile(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _line(kind: str, times: list[float]) -> str:
    ms = [t * 1000 for t in times]
    return (f"{kind:11} {len(ms):5} requests  p50 {statistics.median(ms):6.2f} ms  p99 {_quantile(ms, 0.99):6.2f} ms"
            f"  max {max(ms):6.2f} ms")


async def _longest_wait(task: asyncio.Task[None]) -> float:
    """How late the event loop woke a 10 ms sleep at worst while ``task`` ran: what a table's timer would feel."""
    worst = 0.0
    while not task.done():
        before = time.perf_counter()
        await asyncio.sleep(0.01)
        worst = max(worst, time.perf_counter() - before - 0.01)
    await task
    return worst


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=50)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", metavar="FILE", help="the league's SQLite file: filled if missing, else reused")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        store, fill_seconds = await open_league(Path(folder), args.keep, args.games, args.players, rng)
        try:
            clock = ManualClock(T0 + timedelta(hours=args.games + 24))
            club = ClubPages(store, clock=clock)
            server = StreamServer(store.streams, _NoTables(), clock=clock, club=club)
            port = await server.start("127.0.0.1", 0)
            base = f"http://127.0.0.1:{port}/club/{GUILD}/"
            times: dict[str, list[float]] = {}
            try:
                before = time.perf_counter()
                warming = club.warm()
                lag = await _longest_wait(warming)
                warm = time.perf_counter() - before
                async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
                    before = time.perf_counter()
                    async with http.get(f"{base}en/index.html") as response:
                        await response.read()
                    first = time.perf_counter() - before
                    site: Site = await club.site(str(GUILD))
                    kinds: dict[str, list[str]] = {}
                    for path in site.paths():
                        kinds.setdefault(_kind(path), []).append(path)
                    for _ in range(args.requests):
                        kind = rng.choice(sorted(kinds))  # each kind as often: a league has few league pages
                        path = rng.choice(kinds[kind])
                        language = rng.choice(LANGUAGES)
                        before = time.perf_counter()
                        async with http.get(f"{base}{language}/{path}") as response:
                            await response.read()
                            if response.status != 200:
                                raise SystemExit(f"{path}: {response.status}")
                        times.setdefault(kind, []).append(time.perf_counter() - before)
            finally:
                await server.close()
        finally:
            await store.close()
    print(f"league: {len(site.data.protocols)} games, {len(site.data.leagues['all', 'all'])} members "
          f"(fill {fill_seconds:.1f} s, not counted)")
    print(f"read at the start, in the background: {warm:.2f} s; the event loop's longest wait meanwhile "
          f"{lag * 1000:.1f} ms; the first request after it {first * 1000:.2f} ms")
    for kind in sorted(times):
        print(_line(kind, times[kind]))
    print(_line("all", [t for kind in times.values() for t in kind]))
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    asyncio.run(main())
