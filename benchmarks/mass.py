"""Mass edits: ten speakers who pass at once, and game start and end (mute and unmute 12), by helper count.

Run: python benchmarks/mass.py [--helpers 0,1,3] [--rounds 5] [--latency-ms 50]

For each helper count a fresh emulator process (Discord's 5 member edits per 5 s per guild per
token, the round trip of ``--latency-ms``) and the real bot in this process with that many helper
tokens:

- start/end: in each of ``--rounds`` guilds, 12 players in voice are muted at once (game start)
  and, a window later, unmuted at once (game end), through the bot's reconciler and editor, with
  the players put on the mute ledger first, as a table's start does with their seats;
- ten instant passes: a real game in each of ``--rounds`` guilds; on day 1 the first ten speakers
  each say "Thank you" the moment the floor reaches them (a click through the emulator), counting
  the ten floor changes after the day's first floor. Twice: (a) from the start of the day, so the
  first speaker's unmute falls in the same 5 s window as the 20 edits of the passes (21 edits);
  (b) the first speaker holds the floor ``--first-speech`` seconds (6 by default, more than a
  window) and then she and the next nine pass at once (20 edits in one window).

Latency of a change: from the reconciler getting the new state to Discord's answer to the last
edit it needed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
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
from engine import Phase, find_ruleset
from mafiabot.core.voice import VoiceReconciler
from mafiabot.testing.hands import seeded

WINDOW = 5.0


async def start_end(info: dict[str, Any], helpers: int, rounds: int) -> dict[str, Any]:
    run = await start_bot(info, helpers=helpers)
    starts: list[float] = []
    ends: list[float] = []
    try:
        guilds = [GuildInfo.of(g) for g in info["guilds"][:rounds]]
        for g in guilds:
            await asyncio.gather(*(run.control.act(u, "join_voice", channel_id=str(g.voice)) for u in g.players))
        guild_objects = [run.bot.get_guild(g.guild_id) for g in guilds]
        for _ in range(400):
            if all(o is not None and all((m := o.get_member(u)) and m.voice for u in g.players)
                   for o, g in zip(guild_objects, guilds, strict=True)):
                break
            await asyncio.sleep(0.05)
        for g in guilds:
            game_id = await run.store.create_game(guild_id=g.guild_id, channel_id=g.text, judge_id=g.judge,
                                                  ruleset=find_ruleset("classic"))
            # As a table's start does: its players go on the mute ledger with their seats.
            await run.store.record_mutes(g.guild_id, g.players, game_id)
            voice = VoiceReconciler(run.bot.editor, run.store, guild_id=g.guild_id, game_id=game_id)
            voice.recorded_already(g.players)
            voice.start()
            voice.update(dict.fromkeys(g.players, True), kind="start")
            await asyncio.wait_for(voice.settled(), 60)
            await asyncio.sleep(WINDOW + 0.2)  # the game in between: every bucket refills
            voice.update(dict.fromkeys(g.players, False), kind="end")
            await asyncio.wait_for(voice.settled(), 60)
            await voice.close()
            starts += voice.stats.latencies_of("start")
            ends += voice.stats.latencies_of("end")
        return {"start": starts, "end": ends, "rate_limited": run.bot.editor.rate_limited,
                "waited": run.bot.editor.waited}
    finally:
        await run.close()


async def passes(info: dict[str, Any], helpers: int, rounds: int, first_holds: float, block: int) -> dict[str, Any]:
    run = await start_bot(info, helpers=helpers, time_scale=0.5)
    try:
        guilds = [GuildInfo.of(g) for g in info["guilds"][block * rounds: (block + 1) * rounds]]
        tables = [await open_table(run, g) for g in guilds]
        drivers = [Driver(run, g, t, seeded(7, i), Pace(speech=0.0, instant_first=10, first_holds=first_holds))
                   for i, (g, t) in enumerate(zip(guilds, tables, strict=True))]

        async def day_one(d: Driver) -> int:
            """Play day 1's first ten floors; the voice generation before them."""
            await d.until(lambda: d.table.game.state.day == 1 and d.table.game.state.floor is not None, 120)
            generation = d.table.voice._generation
            while d.floors < 10 and d.table.game.state.phase is Phase.SPEECHES:
                marker = len(d.table.game.events)
                await d.act()
                await d.until(d.moved_since(marker))
            await asyncio.wait_for(d.table.voice.settled(), 30)
            await asyncio.sleep(0.3)
            return generation

        start_waited = run.bot.editor.waited
        firsts = await asyncio.gather(*(day_one(d) for d in drivers))
        latencies: list[float] = []
        edits: list[int] = []
        burst: list[int] = []  # edits of the ten changes, plus the day's first unmute when it shares their window
        for d, first in zip(drivers, firsts, strict=True):
            stats = d.table.voice.stats
            latencies += [s for g, s in stats.latencies.items() if g > first and stats.kinds[g] == "play"]
            mine = [n for g, n in stats.edits.items() if g > first and stats.kinds[g] == "play"]
            edits += mine
            burst.append(sum(mine) + (stats.edits.get(first, 0) if first_holds < WINDOW else 0))
        gaps = [b - a for d in drivers for a, b in zip(d.pass_times, d.pass_times[1:], strict=False)]
        return {"passes": latencies, "edits": edits, "burst": max(burst, default=0),
                "rate_limited": run.bot.editor.rate_limited, "waited": run.bot.editor.waited - start_waited,
                "gap_ms": round(1000 * sum(gaps) / max(len(gaps), 1), 1)}
    finally:
        await run.close()


async def one(helpers: int, args: argparse.Namespace) -> dict[str, Any]:
    with EmulatorProcess(guilds=3 * args.rounds, helpers=max(args.helper_counts), latency_ms=args.latency_ms,
                         member_edits="5/5") as emulator:
        se = await start_end(emulator.info, helpers, args.rounds)
        ps = await passes(emulator.info, helpers, args.rounds, 0.0, 1)
        after = await passes(emulator.info, helpers, args.rounds, args.first_speech, 2)
    return {
        "helpers": helpers,
        "start_ms": summary_ms(se["start"]), "end_ms": summary_ms(se["end"]),
        "start_end_429": se["rate_limited"], "start_end_waited_s": round(se["waited"], 2),
        "passes_ms": summary_ms(ps["passes"]), "pass_changes": len(ps["passes"]),
        "pass_edits_max": max(ps["edits"], default=0), "pass_429": ps["rate_limited"],
        "pass_waited_s": round(ps["waited"], 2), "mean_gap_between_passes_ms": ps["gap_ms"],
        "edit_slots_per_window": 5 * (helpers + 1), "pass_window_edits": ps["burst"],
        "after_speech_window_edits": after["burst"],
        "after_speech_ms": summary_ms(after["passes"]), "after_speech_changes": len(after["passes"]),
        "after_speech_edits_max": max(after["edits"], default=0), "after_speech_429": after["rate_limited"],
        "after_speech_waited_s": round(after["waited"], 2),
        "after_speech_gap_ms": after["gap_ms"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--helpers", default="0,1,3", help="helper counts to compare")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--first-speech", type=float, default=6.0,
                        help="seconds the day's first speaker holds the floor before the burst, in case (b)")
    args = parser.parse_args()
    args.helper_counts = [int(h) for h in args.helpers.split(",")]
    results = [asyncio.run(one(h, args)) for h in args.helper_counts]
    print(f"mass edits: RTT {args.latency_ms:g} ms, member edits 5 per 5 s per guild per token, 12 players")
    print_table("game start and end (12 edits at once):",
                ["helpers", "start p50", "p99", "max", "end p50", "p99", "max", "429s", "waited s"],
                [[r["helpers"], r["start_ms"]["p50"], r["start_ms"]["p99"], r["start_ms"]["max"], r["end_ms"]["p50"],
                  r["end_ms"]["p99"], r["end_ms"]["max"], r["start_end_429"], r["start_end_waited_s"]]
                 for r in results])
    columns = ["helpers", "changes", "p50 ms", "p95 ms", "p99 ms", "max ms", "max edits", "429s", "waited s",
               "edits in window / slots"]
    print_table("(a) ten speakers who pass at once from the start of day 1:", columns,
                [[r["helpers"], r["pass_changes"], r["passes_ms"]["p50"], r["passes_ms"]["p95"],
                  r["passes_ms"]["p99"], r["passes_ms"]["max"], r["pass_edits_max"], r["pass_429"],
                  r["pass_waited_s"], f"{r['pass_window_edits']} / {r['edit_slots_per_window']}"] for r in results])
    print_table(f"(b) the same after the first speaker held the floor {args.first_speech:g} s:", columns,
                [[r["helpers"], r["after_speech_changes"], r["after_speech_ms"]["p50"], r["after_speech_ms"]["p95"],
                  r["after_speech_ms"]["p99"], r["after_speech_ms"]["max"], r["after_speech_edits_max"],
                  r["after_speech_429"], r["after_speech_waited_s"],
                  f"{r['after_speech_window_edits']} / {r['edit_slots_per_window']}"] for r in results])
    print(json.dumps({"benchmark": "mass", "rtt_ms": args.latency_ms, "rounds": args.rounds, "results": results}))


if __name__ == "__main__":
    main()
