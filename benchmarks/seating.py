"""Seating quality: the optimised schedule beside a random one (a seeded shuffle per round), and the time taken.

Run: python benchmarks/seating.py [--seed 1] [--iterations N]
Prints one table per event size (20 players x 4 rounds at 2 tables, 50 x 10 at 5) and one JSON line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

# benchmarks/engine.py shares its name with the engine package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from mafiabot.core.seating import (  # noqa: E402
    DEFAULT_ITERATIONS,
    SeatingQuality,
    make_schedule,
    quality,
    random_schedule,
)

SIZES = ((20, 4, 2), (50, 10, 5))
FIGURES: tuple[tuple[str, Callable[[SeatingQuality], str]], ...] = (
    ("games per player (min-max)", lambda q: f"{q.games_min}-{q.games_max}"),
    ("pair meetings (min-max)", lambda q: f"{q.meetings_min}-{q.meetings_max}"),
    ("  the mean, rounded down and up", lambda q: f"{q.ideal_meetings_min}-{q.ideal_meetings_max}"),
    ("pair meetings std", lambda q: f"{q.meetings_std:.3f}"),
    ("pairs who never meet", lambda q: str(q.pairs_never_met)),
    ("most times in one seat", lambda q: str(q.seat_repeat_max)),
    ("distinct seats (min / mean)", lambda q: f"{q.distinct_seats_min} / {q.distinct_seats_mean:.2f}"),
)


def row(label: str, best: str, rand: str) -> str:
    return f"{label:<34}{best:>14}{rand:>14}"


def compare(players: int, rounds: int, tables: int, seed: int, iterations: int) -> dict[str, object]:
    ids = list(range(1, players + 1))
    started = time.perf_counter()
    best = quality(make_schedule(ids, rounds=rounds, tables=tables, seed=seed, iterations=iterations))
    took = time.perf_counter() - started
    rand: SeatingQuality = quality(random_schedule(ids, rounds=rounds, tables=tables, seed=seed))
    print(f"\n{players} players x {rounds} rounds x {tables} tables (seed {seed}, {iterations} steps)")
    print(row("", "optimised", "random"))
    for label, figure in FIGURES:
        print(row(label, figure(best), figure(rand)))
    print(row("time (s)", f"{took:.2f}", ""))
    return {
        "players": players, "rounds": rounds, "tables": tables, "seconds": round(took, 3),
        "optimised": dataclasses.asdict(best), "random": dataclasses.asdict(rand),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    args = parser.parse_args()
    results = [compare(p, r, t, args.seed, args.iterations) for p, r, t in SIZES]
    print(json.dumps(results))


if __name__ == "__main__":
    main()
