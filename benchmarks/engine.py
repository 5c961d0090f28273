"""Engine speed: whole random-strategy games per second on one core.

Run: python benchmarks/engine.py [--games N] [--ruleset classic] [--players 10] [--seed 1]
Prints a table and one JSON line. Plays through the real engine (every command checked and
folded into the state), exactly as ``mafiabot simulate`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

# This script shares its name with the engine package: keep its own folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from engine import find_ruleset  # noqa: E402
from mafiabot.tools.simulate import play_random_game  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="repeat the run and report each")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the goal states
    ruleset = find_ruleset(args.ruleset)
    rates = []
    commands = 0
    for round_no in range(args.rounds):
        rng = random.Random(args.seed + round_no)
        started = time.perf_counter()
        total_commands = 0
        for _ in range(args.games):
            game = play_random_game(ruleset, args.players, rng)
            total_commands += len(game.history)
        elapsed = time.perf_counter() - started
        rates.append(args.games / elapsed)
        commands = total_commands
    best = max(rates)
    print(f"engine: {args.ruleset}, {args.players} players, random strategy, {args.games} games x {args.rounds}")
    print(f"python {platform.python_version()} on {platform.machine()}, one core")
    print(f"{'round':>6}{'games/s':>12}")
    for i, rate in enumerate(rates, 1):
        print(f"{i:>6}{rate:>12,.0f}")
    print(f"commands per game: {commands / args.games:.1f}; commands/s at best: {best * commands / args.games:,.0f}")
    print(json.dumps({
        "benchmark": "engine",
        "ruleset": args.ruleset,
        "players": args.players,
        "games": args.games,
        "games_per_second": [round(r, 1) for r in rates],
        "best_games_per_second": round(best, 1),
        "commands_per_game": round(commands / args.games, 1),
    }))


if __name__ == "__main__":
    main()
