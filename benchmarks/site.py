"""The club's pages: how long ``mafiabot site build`` takes for a league of G games among P members.

Run: python benchmarks/site.py [--games 100] [--players 50] [--new 20] [--seed 1] [--workers N] [--keep FILE]

A SQLite database is filled with whole classic games played by the engine's random strategy (ten
members drawn from P per game, stored in the rows the bot writes, each game's protocol kept as it
ends; ``--keep FILE`` keeps the league for the next run, ``benchmarks/site_served.py`` included).
Then the build's three steps run as ``build_site`` runs them, each timed:

- read: the league from the store (``read_site``);
- pages: every page rendered in three languages and written (``write_site_pages``);
- files: each game's protocol sheet (a picture per language) and JSON and CSV exports (``write_files``).
  A club builds into the same folder each time and a file is named by what it holds, so a build
  makes only the files of games that are new since the last one: the folder is given the files of
  an earlier build for all games but the newest ``--new`` (stand-in bytes under their names, not
  timed: drawing 30,000 sheets would take hours), and the build draws and writes those games' files.

The build's seconds are read + pages + files. The first build of a league, into an empty folder,
makes every game's files: its cost is printed apart, from the seconds per new game measured here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
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
            started, cpu = time.perf_counter(), time.process_time()
            with holding_league():  # as build_site reads
                data = await read_site(store, GUILD, now=T0 + timedelta(hours=args.games + 24))
            if data is None:
                raise SystemExit("the pages are off: the fill did not turn them on")
            read, read_cpu = time.perf_counter(), time.process_time()
            site = Site(data)
            pages = await asyncio.to_thread(write_site_pages, site, out, workers=args.workers)
            rendered = time.perf_counter()
            new = set(list(data.protocols)[:args.new])  # newest first
            for name, (game_id, _kind, _language) in site.game_files().items():
                if game_id not in new:  # an earlier build's file, as the club's folder holds it
                    (out / name).parent.mkdir(parents=True, exist_ok=True)
                    (out / name).write_bytes(b"")
            before_files = time.perf_counter()
            kept = await write_files(store, site, out)
            made = time.perf_counter()
        finally:
            await store.close()
    games = len(data.protocols)
    files_seconds = made - before_files
    build = (read - started) + (rendered - read) + files_seconds
    per_new = files_seconds / max(len(new), 1)
    print(f"league: {games} games, {len(data.leagues['all', 'all'])} members (fill {fill_seconds:.1f} s, not counted)")
    print(f"read {read - started:.2f} s (cpu {read_cpu - cpu:.2f} s) · pages {rendered - read:.2f} s for {pages} files "
          f"({args.workers or 'default'} workers)")
    print(f"files {files_seconds:.2f} s: {len(new)} new games' files made, {kept} files in the folder")
    print(f"build {build:.2f} s: {build / games * 1000:.1f} ms per game")
    print(f"first build into an empty folder: every game's files, {per_new:.2f} s per game: "
          f"{per_new * games:.0f} s more ({per_new * games / 3600:.1f} h)")
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    asyncio.run(main())
