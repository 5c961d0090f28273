"""The club's pages' game files: how long a build takes to write the protocol sheets and the exports.

Run: python benchmarks/site_files.py [--games 20] [--players 50] [--seed 1]

Fills a SQLite league as ``benchmarks/site.py`` does (not timed), then times ``write_files`` twice
into the same folder: the first build writes every game's sheet in three languages (SVG) and its
JSON and CSV files; the second finds them all and makes nothing, as a build after a game night does
for every game but the night's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.site import GUILD, T0, fill
from mafiabot.host.site import Site, read_site, write_files
from mafiabot.store import Store, sqlite_url


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(sqlite_url(Path(folder) / "league.db"))
        try:
            await fill(store, args.games, args.players, random.Random(args.seed))
            data = await read_site(store, GUILD, now=T0 + timedelta(days=365))
            if data is None:
                raise SystemExit("the pages are off: the fill did not turn them on")
            site = Site(data)
            out = Path(folder) / "site"
            started = time.perf_counter()
            files = await write_files(store, site, out)
            first = time.perf_counter()
            await write_files(store, site, out)
            second = time.perf_counter()
        finally:
            await store.close()
    print(f"league: {args.games} games, {args.players} members; load average {os.getloadavg()[0]:.2f}")
    print(f"first build {first - started:.2f} s for {files} files: {(first - started) / args.games * 1000:.0f} ms "
          "per game (three sheets, three exports)")
    print(f"next build {second - first:.2f} s: nothing to make")


if __name__ == "__main__":
    asyncio.run(main())
