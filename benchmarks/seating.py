"""Seating quality: the optimised schedule beside a random one (a seeded shuffle per round), and the time taken.

Run: python benchmarks/seating.py [--seed 1] [--iterations N]
Prints one table per event size (20 players x 4 rounds at 2 tables, 40 x 3 at 4, 50 x 10 at 5, and
49 x 8 at 7 tables of 7), each with the least "most meetings" any schedule can have, and one JSON
line. Where a known optimal design exists for the sizes (49 x 8 x 7: the affine plane of order 7, a
resolvable design in which every pair meets exactly once) it is printed beside them.
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
    Schedule,
    SeatingQuality,
    make_schedule,
    quality,
    random_schedule,
)

SIZES = ((20, 4, 2, 10), (40, 3, 4, 10), (50, 10, 5, 10), (49, 8, 7, 7))
FIGURES: tuple[tuple[str, Callable[[SeatingQuality], str]], ...] = (
    ("games per player (min-max)", lambda q: f"{q.games_min}-{q.games_max}"),
    ("pair meetings (min-max)", lambda q: f"{q.meetings_min}-{q.meetings_max}"),
    ("  at best (min <=, max >=)", lambda q: f"{q.ideal_meetings_min}-{q.meetings_max_bound}"),
    ("pairs meeting 0, 1, 2, ... times", lambda q: ",".join(map(str, q.meetings_counts))),
    ("pair meetings std", lambda q: f"{q.meetings_std:.3f}"),
    ("pairs who never meet", lambda q: str(q.pairs_never_met)),
    ("most times in one seat", lambda q: str(q.seat_repeat_max)),
    ("distinct seats (min / mean)", lambda q: f"{q.distinct_seats_min} / {q.distinct_seats_mean:.2f}"),
)


def affine_plane(q: int) -> Schedule:
    """AG(2, q) for a prime q: q² players (x, y), q + 1 rounds; round m < q seats the line y = m·x + b
    at table b, the last round the column x = c at table c. Two points share exactly one line."""
    def player(x: int, y: int) -> int:
        return 1 + x * q + y

    rounds = [tuple(tuple(player(x, (m * x + b) % q) for x in range(q)) for b in range(q)) for m in range(q)]
    rounds.append(tuple(tuple(player(c, y) for y in range(q)) for c in range(q)))
    return Schedule(players=tuple(range(1, q * q + 1)), rounds=tuple(rounds), seats=q)


KNOWN_DESIGNS: dict[tuple[int, int, int, int], Callable[[], Schedule]] = {(49, 8, 7, 7): lambda: affine_plane(7)}


def row(label: str, *cells: str) -> str:
    return f"{label:<34}" + "".join(f"  {cell:>20}" for cell in cells)


def compare(players: int, rounds: int, tables: int, seats: int, seed: int, iterations: int) -> dict[str, object]:
    ids = list(range(1, players + 1))
    started = time.perf_counter()
    best = quality(make_schedule(ids, rounds=rounds, tables=tables, seats=seats, seed=seed, iterations=iterations))
    took = time.perf_counter() - started
    rand: SeatingQuality = quality(random_schedule(ids, rounds=rounds, tables=tables, seats=seats, seed=seed))
    columns = {"optimised": best, "random": rand}
    design = KNOWN_DESIGNS.get((players, rounds, tables, seats))
    if design is not None:
        columns["known design"] = quality(design())
    print(f"\n{players} players x {rounds} rounds x {tables} tables of {seats} (seed {seed}, {iterations} steps)")
    print(row("", *columns))
    for label, figure in FIGURES:
        print(row(label, *(figure(q) for q in columns.values())))
    print(row("time (s)", f"{took:.2f}"))
    return {
        "players": players, "rounds": rounds, "tables": tables, "seats": seats, "seconds": round(took, 3),
        **{name.replace(" ", "_"): dataclasses.asdict(q) for name, q in columns.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    args = parser.parse_args()
    results = [compare(*size, args.seed, args.iterations) for size in SIZES]
    print(json.dumps(results))


if __name__ == "__main__":
    main()
