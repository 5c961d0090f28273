"""A member spamming ``/mafia top`` while a table plays: floor changes and the table's pictures, with and without.

Run: python benchmarks/charts.py [--scale 0.25] [--latency-ms 50] [--interval 0.2] [--spammers 1] [--phases ...]

The emulator runs in another process (as in benchmarks/floor.py); the real bot runs here. Each
guild's league is filled first with five finished games of ten members each, so every ``/mafia top``
there has a 50-row chart to draw. Then one 12-player classic table plays a whole game per phase,
each phase in a guild of its own:

- ``quiet``: nobody asks for a chart;
- ``spam``: the judge sends ``/mafia top`` again as soon as each answer is in (after ``--interval``
  seconds), with the bot as it ships: one chart per member per ``Charts.cooldown``, one chart worker;
- ``spam-no-cooldown``: the same with the cooldown set to 0, so every request draws a 50-row chart
  (the worst a crowd of members could do, one worker still keeping it off the tables' threads);
- ``spam-shared-threads``: the arrangement before charts had their own worker, for comparison:
  charts and the tables' pictures share one pool of six threads (what ``asyncio.to_thread`` gave on
  this two-core machine), with no cooldown and no bound on the charts' line.

Floor-change latency is measured as in floor.py. Picture latency is the time the sender takes to
draw a message's pictures (``Sender._draw``: the morning and vote cards), from the call to the
bytes. ``/mafia top`` latency is from the command to its first answer (its words, or its
deferral), as the control API sees it; "charts drawn" counts the charts the bot drew.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (
    Driver,
    EmulatorProcess,
    GuildInfo,
    Pace,
    open_table,
    print_table,
    start_bot,
    summary_ms,
)
from engine import Game, StartGame, find_ruleset, to_data
from mafiabot.core.records import SeatInfo
from mafiabot.store import Store, final_from_game, sqlite_url
from mafiabot.testing.hands import EnginePlayer, seeded

PHASES = ("quiet", "spam", "spam-no-cooldown", "spam-shared-threads")
LEAGUE_GAMES = 5
"""Finished games of ten members each: a 50-row league."""


async def fill_league(url: str, guild_id: int, channel_id: int, seed: int) -> None:
    """``LEAGUE_GAMES`` whole games of fresh members, stored as the bot stores them."""
    store = await Store.open(url)
    rules = find_ruleset("classic")
    try:
        for number in range(LEAGUE_GAMES):
            rng = random.Random(f"{seed}:{guild_id}:{number}")
            at = datetime.now(UTC) - timedelta(days=1, hours=number)
            game_id = await store.create_game(guild_id=guild_id, channel_id=channel_id, ruleset=rules,
                                              judge_id=1, created_at=at)
            game = Game(rules)
            events = game.apply(StartGame(players=10, seed=rng.getrandbits(32)))
            users = [guild_id % 1_000_000 * 100 + number * 10 + seat for seat in range(1, 11)]
            await store.seat_players(game_id, [SeatInfo(s, u, f"member {number}-{s}", game.state.roles[s - 1].value)
                                               for s, u in enumerate(users, 1)])
            await store.append(game_id, 1, to_data(game.history[0]), [to_data(e) for e in events], actor_id=1, at=at)
            player = EnginePlayer(rng.getrandbits(32))
            while not game.over:
                command = player.next(game)
                events = game.apply(command)
                at += timedelta(seconds=10)
                await store.append(game_id, len(game.history), to_data(command), [to_data(e) for e in events],
                                   actor_id=None, at=at)
            await store.finish_game(game_id, final_from_game(game), at=at)
    finally:
        await store.close()


def timed_draws(sender: Any, into: list[float]) -> None:
    """Record how long each of the sender's picture draws takes, from the call to the bytes."""
    draw: Callable[..., Awaitable[Any]] = sender._draw

    async def measured(table: Any, pictures: Any) -> Any:
        started = time.perf_counter()
        drawn = await draw(table, pictures)
        if pictures:
            into.append(time.perf_counter() - started)
        return drawn

    sender._draw = measured


async def spam(run: Any, g: GuildInfo, member: int, interval: float, stop: asyncio.Event,
               out: dict[str, Any]) -> None:
    """``/mafia top`` from ``member`` until ``stop``: the answers' latency."""
    while not stop.is_set():
        started = time.perf_counter()
        await run.control.act(member, "command", channel_id=str(g.text), name="mafia top", timeout=60)
        out["latency"].append(time.perf_counter() - started)
        out["requests"] += 1
        await asyncio.sleep(interval)  # pacing, as a member's clicks are paced


def counted_charts(charts: Any, out: dict[str, Any]) -> None:
    """Count the charts the bot really drew (an answer may come after the command's deferral)."""
    draw: Callable[..., Awaitable[Any]] = charts.draw

    async def counting(*args: Any) -> Any:
        drawn = await draw(*args)
        out["charts"] += drawn is not None
        return drawn

    charts.draw = counting


def share_threads(run: Any) -> None:
    """The arrangement before: charts and table pictures on one pool of six threads, no cooldown, no bound."""
    shared = ThreadPoolExecutor(max_workers=6, thread_name_prefix="shared")
    run.bot.presenter.sender._pictures = shared
    run.bot.charts._pool = shared
    run.bot.charts.backlog = 10**9


async def phase(run: Any, g: GuildInfo, name: str, args: argparse.Namespace) -> dict[str, Any]:
    draws: list[float] = []
    timed_draws(run.bot.presenter.sender, draws)
    run.bot.charts.cooldown = 0.0 if name in ("spam-no-cooldown", "spam-shared-threads") else args.cooldown
    if name == "spam-shared-threads":
        share_threads(run)
    table = await open_table(run, g)
    driver = Driver(run, g, table, seeded(args.seed, 0), Pace(speech=args.speech * args.scale))
    stop = asyncio.Event()
    asked: dict[str, Any] = {"latency": [], "charts": 0, "requests": 0}
    skipped = run.bot.charts.skipped
    counted_charts(run.bot.charts, asked)
    members = [g.judge, *g.players][: args.spammers] if name != "quiet" else []
    spammers = [asyncio.create_task(spam(run, g, m, args.interval, stop, asked)) for m in members]
    try:
        await asyncio.wait_for(driver.play(), args.timeout)
    finally:
        stop.set()
        await asyncio.gather(*spammers)
    await asyncio.wait_for(table.voice.settled(), 120)
    play = table.voice.stats.latencies_of("play")
    return {"phase": name, "floor_change_ms": summary_ms(play), "picture_ms": summary_ms(draws),
            "top_requests": asked["requests"], "top_with_chart": asked["charts"],
            "top_ms": summary_ms(asked["latency"]), "charts_skipped_full_line": run.bot.charts.skipped - skipped}


async def main_async(args: argparse.Namespace, info: dict[str, Any]) -> list[dict[str, Any]]:
    guilds = [GuildInfo.of(g) for g in info["guilds"]]
    folder = tempfile.TemporaryDirectory()
    url = sqlite_url(Path(folder.name) / "charts.sqlite3")
    for g in guilds:
        await fill_league(url, g.guild_id, g.text, args.seed)
    run = await start_bot(info, time_scale=0.5 * args.scale, database=url)
    try:
        return [await phase(run, g, name, args) for g, name in zip(guilds, args.phases, strict=False)]
    finally:
        await run.close()
        folder.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--speech", type=float, default=10.0, help="seconds a speaker holds the floor")
    parser.add_argument("--scale", type=float, default=0.25, help="shrinks speeches, timers and the edit window")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between the spammer's answer and his next")
    parser.add_argument("--cooldown", type=float, default=15.0, help="the chart cooldown of the 'spam' phase")
    parser.add_argument("--spammers", type=int, default=1, help="members spamming at once: the judge, then players")
    parser.add_argument("--phases", type=lambda text: text.split(","), default=list(PHASES),
                        help=f"a comma-separated choice of: {', '.join(PHASES)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    window = 5 * args.scale
    emulator = EmulatorProcess(guilds=len(args.phases), latency_ms=args.latency_ms, member_edits=f"5/{window:g}",
                               reactions="1/0.25")
    with emulator:
        results = asyncio.run(main_async(args, emulator.info))
    print(f"one table per phase, 12 players, classic; RTT {args.latency_ms:g} ms; speeches "
          f"{args.speech * args.scale:g} s (scale {args.scale:g}); a 50-row league; {args.spammers} member(s) "
          f"spamming, each {args.interval:g} s after each answer")
    rows = []
    for r in results:
        floor, pictures, top = r["floor_change_ms"], r["picture_ms"], r["top_ms"]
        rows.append([r["phase"], floor["n"], floor["p50"], floor["p99"], pictures["n"], pictures["p50"],
                     pictures["p99"], pictures["max"], r["top_requests"], r["top_with_chart"], top["p50"], top["p99"]])
    header = ["phase", "floor changes", "floor p50 ms", "floor p99 ms", "pictures", "picture p50 ms",
              "picture p99 ms", "picture max ms", "/mafia top", "charts drawn", "top p50 ms", "top p99 ms"]
    print_table("", header, rows)
    print(json.dumps({"benchmark": "charts", "rtt_ms": args.latency_ms, "scale": args.scale,
                      "interval_s": args.interval, "cooldown_s": args.cooldown, "spammers": args.spammers,
                      "phases": results}))


if __name__ == "__main__":
    main()
