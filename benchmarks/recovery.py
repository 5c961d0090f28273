"""Recovery: how long a restarted bot takes to resume open games.

Run: python benchmarks/recovery.py [--games 100] [--commands 30] [--database-url URL] [--latency-ms 50]

The store (a fresh SQLite file, or ``--database-url``) is filled before the bot starts: for each
of ``--games`` guilds an open game, its seating and the command log of a game played partway by
the engine alone (``StartGame`` and then ``--commands`` commands of the ``random`` strategy of
``mafiabot.tools.simulate``, through nominations, speeches, votes and nights), each appended with
``Store.append`` as a table does, and the running timer stored with ``Store.set_timer``. Every
player is in the guild's voice channel (the control API), as when the bot went down: server-muted
(and the mute in the bot's ledger) except the one who holds the floor, since server mutes stay
on while the bot is away. ``--unmuted`` leaves everyone unmuted instead (a moderator lifted the
mutes meanwhile), so the bot must mute each table again while it resumes.

Then the real bot starts in this process against the emulator process. Per game, the time is from
the start (before the login) until the game is resumed: its table exists, its timer is armed, and
the presenter has posted "the host is back" (``game.resumed``) and the current phase's controls
again. The total is until the last game is resumed; a game whose posts failed (discord.py gives
up after repeated 429s) counts as failed, and then there is no total.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import EmulatorProcess, GuildInfo, print_table, start_bot, summary_ms
from engine import Game, StartGame, find_ruleset, to_data
from mafiabot.core.records import SeatInfo
from mafiabot.core.runtime import Table
from mafiabot.core.voice import desired_mutes
from mafiabot.host.presenter import Presenter
from mafiabot.store import Store, sqlite_url
from mafiabot.testing.hands import EnginePlayer


async def fill(
    url: str, guilds: list[GuildInfo], commands: int, seed: int, *, muted: bool,
) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """An open game per guild, played ``commands`` commands past the deal.

    Returns game id -> log length, and the (guild, member) pairs the bot had server-muted.
    """
    store = await Store.open(url)
    ruleset = find_ruleset("classic")
    lengths: dict[int, int] = {}
    mutes: list[tuple[int, int]] = []
    try:
        for i, g in enumerate(guilds):
            game_id = await store.create_game(guild_id=g.guild_id, channel_id=g.text, voice_channel_id=g.voice,
                                              judge_id=g.judge, ruleset=ruleset)
            game = Game(ruleset)
            rng = random.Random(f"{seed}:{i}")
            at = datetime.now(UTC) - timedelta(minutes=30)
            events = game.apply(StartGame(players=len(g.players), seed=rng.getrandbits(32)))
            await store.seat_players(game_id, [SeatInfo(s, u, f"player {s}", game.state.roles[s - 1].value)
                                               for s, u in enumerate(g.players, 1)])
            await store.append(game_id, 1, to_data(game.history[0]), [to_data(e) for e in events],
                               actor_id=g.judge, at=at)
            player = EnginePlayer(rng.getrandbits(32))
            for _ in range(commands):
                if game.over:
                    break
                command = player.next(game)
                events = game.apply(command)
                at += timedelta(seconds=rng.uniform(5, 60))
                await store.append(game_id, len(game.history), to_data(command), [to_data(e) for e in events],
                                   actor_id=None, at=at)
            waiting = game.waiting()
            if waiting.seconds is not None:
                await store.set_timer(game_id, waiting.timer, datetime.now(UTC) + timedelta(seconds=waiting.seconds))
            lengths[game_id] = len(game.history)
            if muted:
                left = [user for user, mute in desired_mutes(game, g.players, judge_id=g.judge).items() if mute]
                await store.record_mutes(g.guild_id, left, game_id)
                mutes += [(g.guild_id, user) for user in left]
    finally:
        await store.close()
    return lengths, mutes


async def measure(args: argparse.Namespace, info: dict[str, Any]) -> dict[str, Any]:
    guilds = [GuildInfo.of(g) for g in info["guilds"][: args.games]]
    tmp = None
    url = args.database_url
    if url is None:
        tmp = tempfile.TemporaryDirectory()
        url = sqlite_url(Path(tmp.name) / "recovery.sqlite3")
    began = time.monotonic()
    lengths, mutes = await fill(url, guilds, args.commands, args.seed, muted=not args.unmuted)
    filled = time.monotonic() - began
    # Everyone sits in voice while the bot is away (the control API needs no bot).
    import aiohttp

    async with aiohttp.ClientSession() as session:
        sem = asyncio.Semaphore(64)

        async def join(user: int, channel: int) -> None:
            async with sem, session.post(f"{info['url']}/_emulator/users/{user}/act",
                                         json={"action": "join_voice", "channel_id": str(channel)}) as r:
                await r.read()

        await asyncio.gather(*(join(u, g.voice) for g in guilds for u in [*g.players, g.judge]))

        async def mute(guild: int, user: int) -> None:
            async with sem, session.post(f"{info['url']}/_emulator/guilds/{guild}/members/{user}/mute",
                                         json={"mute": True}) as r:
                await r.read()

        await asyncio.gather(*(mute(g, u) for g, u in mutes))

    shown: dict[int, float] = {}
    failed: dict[int, str] = {}
    original = Presenter._show_current

    async def show_current(self: Presenter, table: Table) -> None:
        try:
            await original(self, table)
        except Exception as exc:
            failed[table.id] = type(exc).__name__
            raise
        shown[table.id] = time.monotonic()

    Presenter._show_current = show_current  # type: ignore[method-assign]
    start = time.monotonic()
    run = await start_bot(info, time_scale=1.0, database=url)
    ready = time.monotonic() - start
    try:
        resumed: dict[int, float] = {}
        deadline = start + args.timeout
        while len(resumed) + len(failed) < len(lengths) and time.monotonic() < deadline:
            now = time.monotonic()
            for game_id in lengths:
                table = run.bot.tables.tables.get(game_id)
                if game_id not in resumed and table is not None and game_id in shown \
                        and table.timer_armed:
                    resumed[game_id] = max(shown[game_id], now) - start
            await asyncio.sleep(0.005)
        per_game = sorted(resumed.values())
        requests = await run.control.get("requests/counts")
    finally:
        await run.close()
        Presenter._show_current = original  # type: ignore[method-assign]
        if tmp is not None:
            tmp.cleanup()
    return {
        "games": len(lengths), "resumed": len(per_game), "failed": len(failed), "fill_s": round(filled, 1),
        "log_commands_mean": round(sum(lengths.values()) / max(len(lengths), 1), 1),
        "ready_ms": round(ready * 1000, 1), "per_game_ms": summary_ms(per_game),
        "total_ms": round(max(per_game, default=float("nan")) * 1000, 1) if not failed else None,
        "database": "sqlite" if args.database_url is None else args.database_url.split(":", 1)[0],
        "players_muted_at_start": len(mutes),
        "requests": dict(sorted(requests.items(), key=lambda kv: -kv[1])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--commands", type=int, default=30, help="commands after the deal in each game's log")
    parser.add_argument("--database-url", default=None, help="an empty database; a fresh SQLite file by default")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--global-limit", default="50/1", help="the bot's requests per window, all routes")
    parser.add_argument("--timeout", type=float, default=90.0, help="give up on games not resumed by then")
    parser.add_argument("--unmuted", action="store_true", help="the players' mutes were lifted while the bot was away")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    emulator = EmulatorProcess(guilds=args.games, latency_ms=args.latency_ms, global_limit=args.global_limit,
                               no_spec_check=True)
    with emulator:
        r = asyncio.run(measure(args, emulator.info))
    lat = r["per_game_ms"]
    print(f"recovery of {r['games']} open games ({r['log_commands_mean']} commands each, {r['database']}, "
          f"{r['players_muted_at_start']} players still muted): RTT {args.latency_ms:g} ms, global {args.global_limit}")
    print_table("", ["games", "resumed", "failed", "bot ready ms", "p50 ms", "p95 ms", "max ms", "total ms"],
                [[r["games"], r["resumed"], r["failed"], r["ready_ms"], lat["p50"], lat["p95"], lat["max"],
                  r["total_ms"]]])
    print(json.dumps({"benchmark": "recovery", "rtt_ms": args.latency_ms, "global_limit": args.global_limit, **r}))


if __name__ == "__main__":
    main()
