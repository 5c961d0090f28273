"""The club's pages: how long ``mafiabot site build`` takes for a league of G games among P members.

Run: python benchmarks/site.py [--games 100] [--players 50] [--new 20] [--seed 1] [--workers N] [--keep FILE]

A SQLite database is filled with whole classic games played by the engine's random strategy (ten
members drawn from P per game, stored in the rows the bot writes, each game's protocol kept as it
ends; ``--keep FILE`` keeps the league for the next run, ``benchmarks/site_served.py`` included).
Then the build's three steps run as ``build_site`` runs them, each timed:

- read: the league from the store (``read_site``);
- pages: every page rendered in three languages and written (``write_site_pages``);
- files: each game's protocol sheet (an SVG per language) and JSON and CSV exports (``write_files``).

Twice: first into an empty folder, as a club's first build, which makes every game's files; then
again into the same folder once the files of the newest ``--new`` games are deleted, as the next
build after those games were played (a file is named by what it holds, so a build makes only the
files a folder lacks). A build's seconds are read + pages + files.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert, update
from sqlmodel import col

from engine import CLASSIC, Game, to_data
from mafiabot.core.records import GuildSettings
from mafiabot.host.site import Site, holding_league, read_site, write_files, write_site_pages
from mafiabot.store import SeatInfo, Store, final_from_game, sqlite_url
from mafiabot.store.models import CommandRow, EventRow, GameRow
from mafiabot.tools.simulate import play_random_game

GUILD = 1_000_000_000_000_000_001
T0 = datetime(2026, 1, 1, 19, 0, tzinfo=UTC)


async def fill(store: Store, games: int, players: int, rng: random.Random) -> None:
    """Play and store ``games`` games; a game's log goes in one transaction (the bot's: one per command).

    The rows are the ones ``GameLogRepo.append`` writes, and the seats, the result and the ratings go
    through the store itself; only the transactions are fewer, so 10,000 games fill in minutes, not an hour.
    """
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    members = [2_000_000_000_000_000_000 + i for i in range(players)]
    for n in range(games):
        at = T0 + timedelta(hours=n)
        played = play_random_game(CLASSIC, 10, rng)
        game_id = await store.create_game(guild_id=GUILD, channel_id=5, ruleset=CLASSIC, judge_id=9, created_at=at)
        seated = rng.sample(members, 10)
        await store.seat_players(game_id, [SeatInfo(i, u, f"Member {u % 10_000}", r.value) for i, (u, r)
                                           in enumerate(zip(seated, played.state.roles, strict=True), 1)])
        replay = Game(CLASSIC)
        commands, events = [], []
        for seq, command in enumerate(played.history, start=1):
            commands.append({"game_id": game_id, "seq": seq, "command": to_data(command), "actor_id": None,
                             "at": at + timedelta(seconds=seq)})
            events += [{"game_id": game_id, "seq": seq, "position": i, "type": e["type"], "event": e}
                       for i, e in enumerate(to_data(e) for e in replay.apply(command))]
        with store.engine.begin() as connection:
            connection.execute(insert(CommandRow), commands)
            connection.execute(insert(EventRow), events)
            connection.execute(update(GameRow).where(col(GameRow.id) == game_id).values(last_seq=len(commands)))
        await store.finish_game(game_id, final_from_game(played), at=at + timedelta(hours=1))


async def open_league(folder: Path, keep: str | None, games: int, players: int,
                      rng: random.Random) -> tuple[Store, float]:
    """The league's store, filled now, or as kept by an earlier run (``--keep FILE``); the fill's seconds."""
    path = Path(keep) if keep else folder / "league.db"
    fresh = not path.exists()
    store = await Store.open(sqlite_url(path))
    started = time.perf_counter()
    if fresh:
        await fill(store, games, players, rng)
    return store, time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=50)
    parser.add_argument("--new", type=int, default=20, help="games new since the last build (their files are made)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None, help="rendering processes (default: the cores, at most 8)")
    parser.add_argument("--keep", metavar="FILE", help="the league's SQLite file: filled if missing, else reused")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "site"
        store, fill_seconds = await open_league(Path(folder), args.keep, args.games, args.players,
                                                random.Random(args.seed))
        try:
            first = await build(store, out, args.games, args.workers)
            site = first.site
            new = set(list(site.data.protocols)[:args.new])  # newest first
            for name, (game_id, _kind, _language) in site.game_files().items():
                if game_id in new:
                    (out / name).unlink()
            again = await build(store, out, args.games, args.workers)
        finally:
            await store.close()
    data = site.data
    games = len(data.protocols)
    print(f"league: {games} games, {len(data.leagues['all', 'all'])} members (fill {fill_seconds:.1f} s, not counted)"
          f" · {args.workers or 'default'} workers")
    first.report(f"first build into an empty folder, every game's files made: {first.made}", games)
    again.report(f"next build, {len(new)} new games' files made: {again.made}", games)
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


@dataclass
class Timed:
    """One build's steps, in seconds."""

    site: Site
    read: float
    read_cpu: float
    pages: float
    pages_cpu: float
    written: int
    files: float
    files_cpu: float
    kept: int
    made: int

    def report(self, title: str, games: int) -> None:
        total = self.read + self.pages + self.files
        cpu = self.read_cpu + self.pages_cpu + self.files_cpu
        print(f"{title}\n  read {self.read:.2f} s (cpu {self.read_cpu:.2f} s) · pages {self.pages:.2f} s "
              f"(cpu {self.pages_cpu:.2f} s) for {self.written} files · files {self.files:.2f} s "
              f"(cpu {self.files_cpu:.2f} s; {self.kept} in the folder)\n"
              f"  build {total:.2f} s: {total / games * 1000:.1f} ms per game; cpu {cpu:.2f} s in all processes")


def _game_files(out: Path) -> set[Path]:
    """The games' files (sheets and exports) in the folder."""
    return {p for p in out.glob("**/games/*") if not p.name.endswith(".html")}


async def build(store: Store, out: Path, games: int, workers: int | None) -> Timed:
    """``build_site``'s steps, each timed."""
    before = _game_files(out)
    started, cpu = time.perf_counter(), _cpu()
    with holding_league():  # as build_site reads
        data = await read_site(store, GUILD, now=T0 + timedelta(hours=games + 24))
    if data is None:
        raise SystemExit("the pages are off: the fill did not turn them on")
    read, read_cpu = time.perf_counter(), _cpu()
    site = Site(data)
    written = await asyncio.to_thread(write_site_pages, site, out, workers=workers)
    rendered, rendered_cpu = time.perf_counter(), _cpu()
    kept = await write_files(store, site, out, workers=workers)
    done, done_cpu = time.perf_counter(), _cpu()
    made = len(_game_files(out) - before)
    return Timed(site, read - started, read_cpu - cpu, rendered - read, rendered_cpu - read_cpu, written,
                 done - rendered, done_cpu - rendered_cpu, kept, made)


def _cpu() -> float:
    """CPU seconds (user and system) of this process and of the rendering processes it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    asyncio.run(main())
