"""The club's pages: how long ``mafiabot site build`` takes for a league of G games among P members.

Run: python benchmarks/site.py [--games 100] [--players 50] [--seed 1]

A SQLite database is filled with whole classic games played by the engine's random strategy (ten
members drawn from P per game, stored command by command as the bot stores them), then the site is
read from the store (``read_site``) and rendered in three languages (``build_pages``) and written.
Each step's seconds are printed, with the files written and the seconds per game, so a bigger
league's build can be estimated from a run of this size.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import CLASSIC, Game, to_data
from mafiabot.core.records import GuildSettings
from mafiabot.host.site import build_pages, read_site, write_site
from mafiabot.store import SeatInfo, Store, final_from_game, sqlite_url
from mafiabot.tools.simulate import play_random_game

GUILD = 1_000_000_000_000_000_001
T0 = datetime(2026, 1, 1, 19, 0, tzinfo=UTC)


async def fill(store: Store, games: int, players: int, rng: random.Random) -> None:
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    members = [2_000_000_000_000_000_000 + i for i in range(players)]
    for n in range(games):
        at = T0 + timedelta(hours=n)
        played = play_random_game(CLASSIC, 10, rng)
        game_id = await store.create_game(guild_id=GUILD, channel_id=5, ruleset=CLASSIC, judge_id=9, created_at=at)
        seated = rng.sample(members, 10)
        replay = Game(CLASSIC)
        for seq, command in enumerate(played.history, start=1):
            events = [to_data(e) for e in replay.apply(command)]
            if seq == 2:
                await store.seat_players(game_id, [SeatInfo(i, u, f"Member {u % 10_000}", r.value) for i, (u, r)
                                                   in enumerate(zip(seated, played.state.roles, strict=True), 1)])
            await store.append(game_id, seq, to_data(command), events, actor_id=None,
                               at=at + timedelta(seconds=seq))
        await store.finish_game(game_id, final_from_game(played), at=at + timedelta(hours=1))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(sqlite_url(Path(folder) / "league.db"))
        try:
            started = time.perf_counter()
            await fill(store, args.games, args.players, random.Random(args.seed))
            filled = time.perf_counter()
            data = await read_site(store, GUILD, now=T0 + timedelta(days=365))
            if data is None:
                raise SystemExit("the pages are off: the fill did not turn them on")
            read = time.perf_counter()
            pages = build_pages(data)
            rendered = time.perf_counter()
            files = write_site(pages, Path(folder) / "site")
            written = time.perf_counter()
        finally:
            await store.close()
    build = written - filled
    print(f"league: {args.games} games, {args.players} members (fill {filled - started:.1f} s, not counted)")
    print(f"read {read - filled:.2f} s · render {rendered - read:.2f} s · write {written - rendered:.2f} s")
    print(f"build {build:.2f} s for {files} files: {build / args.games * 1000:.1f} ms per game")


if __name__ == "__main__":
    asyncio.run(main())
