"""Where ``mafiabot demo``'s time goes: reading pauses, Discord's rate limits, or the bot.

Run: python benchmarks/demo_time.py [--seed 1] [--ruleset classic]

Plays the demo's game three times in this process (the same seed: the same game each time) and
prints the wall time of each:

- ``default``: as ``mafiabot demo`` runs, reading pauses of 0.02 s per second of the game;
- ``time-scale 0``: no reading pauses (``mafiabot demo --time-scale 0``);
- ``time-scale 0, no rate limits``: the same, with the emulator's Discord rate limits lifted, which
  the demo never does (the emulator is never kinder than Discord): what is left is the bot's and the
  emulator's own work.

It also prints the game's length on its scripted clock (from the first to the last message's stamp)
and the pauses that length makes at the default pace, and the member edits the game sent (the route
Discord limits to 5 per 5 s in a guild).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import print_table
from mafiabot.emulator import EmulatorConfig, RateLimitConfig
from mafiabot.tools.demo import DemoReport, run_demo

NO_LIMITS = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(1000, 1.0), reactions=(1000, 1.0),
                                                        global_limit=(10000, 1.0)))
MEMBER_EDITS = "PATCH /guilds/{guild_id}/members/{user_id}"


def _game_seconds(report: DemoReport) -> float:
    stamps = [_seconds(line[:8]) for line in report.public_channel if line[:2].isdigit()]
    return float(stamps[-1] - stamps[0]) if stamps else 0.0


def _seconds(stamp: str) -> int:
    hours, minutes, seconds = (int(part) for part in stamp.split(":"))
    return hours * 3600 + minutes * 60 + seconds


async def _timed(args: argparse.Namespace, pace: float, config: EmulatorConfig | None) -> tuple[float, DemoReport]:
    started = time.perf_counter()
    report = await run_demo(ruleset=args.ruleset, players=0, seed=args.seed, time_scale=pace, emulator_config=config)
    return time.perf_counter() - started, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ruleset", default="classic")
    args = parser.parse_args()
    runs = {
        "default": asyncio.run(_timed(args, 0.02, None)),
        "time-scale 0": asyncio.run(_timed(args, 0.0, None)),
        "time-scale 0, no rate limits": asyncio.run(_timed(args, 0.0, NO_LIMITS)),
    }
    report = runs["default"][1]
    game = _game_seconds(report)
    edits = report.requests_by_route.get(MEMBER_EDITS, 0)
    rows = [[name, f"{seconds:.1f}", len(run.public_channel)] for name, (seconds, run) in runs.items()]
    print_table(f"mafiabot demo --seed {args.seed} --ruleset {args.ruleset}: wall time "
                f"(game {game:.0f} s on its clock, {game * 0.02:.1f} s of reading pauses at 0.02; "
                f"{edits} member edits)", ["run", "wall s", "public messages"], rows)
    print(json.dumps({"benchmark": "demo_time", "game_seconds": game, "member_edits": edits,
                      "wall_s": {name: round(seconds, 1) for name, (seconds, _run) in runs.items()}}))


if __name__ == "__main__":
    main()
