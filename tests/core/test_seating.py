"""The seating schedule: equal games, even meetings, spread seats, forbidden pairs kept apart, reproducible."""

from __future__ import annotations

import csv
import io
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mafiabot.core.seating import (
    Schedule,
    SeatingError,
    make_schedule,
    meetings_bound,
    quality,
    random_schedule,
    to_csv,
)

TWENTY = list(range(101, 121))


def games_of(schedule: Schedule) -> Counter[int]:
    return Counter(p for tables in schedule.rounds for table in tables for p in table)


def meetings(schedule: Schedule) -> Counter[tuple[int, int]]:
    met: Counter[tuple[int, int]] = Counter()
    for tables in schedule.rounds:
        for table in tables:
            met.update(combinations(sorted(table), 2))
    return met


def test_every_round_seats_every_table_full_with_distinct_players() -> None:
    schedule = make_schedule(TWENTY, rounds=4, tables=2, seed=3, iterations=5_000)
    assert len(schedule.rounds) == 4
    for tables in schedule.rounds:
        assert [len(table) for table in tables] == [10, 10]
        flat = [p for table in tables for p in table]
        assert sorted(flat) == TWENTY


def test_sit_outs_are_shared_so_everyone_plays_the_same_number_of_games() -> None:
    # 25 players, one table of 10, 5 rounds: 50 seats, two games each, 15 sit out every round.
    players = list(range(1, 26))
    schedule = make_schedule(players, rounds=5, tables=1, seed=1, iterations=1_000)
    assert set(games_of(schedule).values()) == {2}
    assert all(len(schedule.sitting_out(r)) == 15 for r in range(5))


def test_uneven_games_are_refused_unless_allowed() -> None:
    players = list(range(1, 24))  # 23 players, 2 rounds of 20 seats: 40 is not a multiple of 23
    with pytest.raises(SeatingError) as caught:
        make_schedule(players, rounds=2, tables=2, seed=1)
    assert caught.value.code == "seating.uneven_games"
    schedule = make_schedule(players, rounds=2, tables=2, seed=1, iterations=1_000, allow_uneven=True)
    counts = games_of(schedule)
    assert max(counts.values()) - min(counts[p] for p in players) <= 1


def test_the_optimiser_meets_more_evenly_than_a_random_schedule() -> None:
    players = list(range(1, 51))
    best = quality(make_schedule(players, rounds=10, tables=5, seed=7, iterations=30_000))
    rand = quality(random_schedule(players, rounds=10, tables=5, seed=7))
    assert best.meetings_std < rand.meetings_std
    assert best.pairs_never_met < rand.pairs_never_met
    assert best.meetings_max < rand.meetings_max
    assert best.seat_repeat_max < rand.seat_repeat_max


def test_seats_are_spread_one_each_when_games_equal_seats() -> None:
    # 10 rounds at 10 seats with nobody sitting out: every player can take every seat number once.
    players = list(range(1, 21))
    q = quality(make_schedule(players, rounds=10, tables=2, seed=2, iterations=20_000))
    assert (q.seat_repeat_max, q.distinct_seats_min) == (1, 10)


def test_twenty_players_four_rounds_reach_the_floor_of_evenness() -> None:
    # docs/tournaments.md: counting pairs of rounds, the deviation cannot go below 0.912, and four
    # "which half" choices for 20 players make some pair meet four times.
    q = quality(make_schedule(TWENTY, rounds=4, tables=2, seed=1, iterations=20_000))
    assert q.games_min == q.games_max == 4
    assert q.meetings_std < 0.912
    assert q.meetings_max == q.meetings_max_bound == 4
    assert q.seat_repeat_max == 1


def test_forty_players_three_rounds_at_four_tables_never_meet_three_times() -> None:
    # The Saturday: any two rounds force a pair together twice (a table of 10 over 4 tables),
    # but no pair need share all three tables; the schedule keeps every pair to at most two.
    players = list(range(1, 41))
    for seed in (1, 2, 3):
        q = quality(make_schedule(players, rounds=3, tables=4, seed=seed))
        assert q.meetings_max_bound == 2
        assert q.meetings_max == 2, (seed, q.meetings_counts)


@pytest.mark.parametrize(("players", "rounds", "tables", "seats", "bound"), [
    (20, 4, 2, 10, 4),   # four "which half" choices for 20 players: some two make them alike
    (40, 3, 4, 10, 2),
    (50, 10, 5, 10, 2),
    (49, 8, 7, 7, 1),    # the affine plane of order 7: every pair exactly once
    (24, 3, 2, 12, 3),   # georgian: 12 over 2 tables, 6 over 2, 3 together a third time
    (30, 5, 2, 12, 2),   # six sit out each round, so a chain of three can break up
    (10, 3, 1, 10, 3),
])
def test_the_bound_on_the_most_meetings(players: int, rounds: int, tables: int, seats: int, bound: int) -> None:
    assert meetings_bound(players, rounds=rounds, tables=tables, seats=seats) == bound


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), rounds=st.integers(1, 6), tables=st.integers(1, 4),
       seats=st.integers(6, 12), extra=st.integers(0, 9))
def test_no_schedule_beats_the_bound(seed: int, rounds: int, tables: int, seats: int, extra: int) -> None:
    players = list(range(1, tables * seats + extra + 1))
    for schedule in (random_schedule(players, rounds=rounds, tables=tables, seats=seats, seed=seed),
                     make_schedule(players, rounds=rounds, tables=tables, seats=seats, seed=seed, iterations=300,
                                   allow_uneven=True)):
        q = quality(schedule)
        assert q.meetings_max >= q.meetings_max_bound
        assert q.meetings_max_bound == meetings_bound(len(players), rounds=rounds, tables=tables, seats=seats)
        assert sum(q.meetings_counts) == len(players) * (len(players) - 1) // 2


def test_quality_counts_by_hand() -> None:
    # Two rounds of one six-seat table, players 1..6 both times, seats reversed in round 2.
    schedule = Schedule(players=(1, 2, 3, 4, 5, 6), rounds=(((1, 2, 3, 4, 5, 6),), ((6, 5, 4, 3, 2, 1),)), seats=6)
    q = quality(schedule, forbidden=[(1, 2)])
    assert (q.games_min, q.games_max) == (2, 2)
    assert (q.meetings_min, q.meetings_max, q.meetings_std) == (2, 2, 0.0)
    assert (q.meetings_counts, q.meetings_max_bound) == ((0, 0, 15), 2)
    assert (q.seat_repeat_max, q.distinct_seats_min) == (1, 2)
    assert q.forbidden_meetings == 2


def test_same_seed_same_schedule_other_seed_other_schedule() -> None:
    first = make_schedule(TWENTY, rounds=4, tables=2, seed=11, iterations=3_000)
    again = make_schedule(TWENTY, rounds=4, tables=2, seed=11, iterations=3_000)
    other = make_schedule(TWENTY, rounds=4, tables=2, seed=12, iterations=3_000)
    assert first == again
    assert first != other


def test_csv_export_has_one_row_per_seat() -> None:
    schedule = make_schedule(TWENTY, rounds=2, tables=2, seed=1, iterations=1_000)
    rows = list(csv.reader(io.StringIO(to_csv(schedule))))
    assert rows[0] == ["round", "table", "seat", "player"]
    assert len(rows) == 1 + 2 * 20
    assert rows[1][:3] == ["1", "1", "1"]
    assert [int(v) for v in rows[1]] == [1, 1, 1, schedule.rounds[0][0][0]]
    assert [int(v) for v in rows[-1]] == [2, 2, 10, schedule.rounds[1][1][9]]


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"players": TWENTY, "rounds": 0, "tables": 2}, "seating.rounds"),
        ({"players": TWENTY, "rounds": 2, "tables": 0}, "seating.tables"),
        ({"players": TWENTY, "rounds": 2, "tables": 1, "seats": 13}, "seating.seats"),
        ({"players": TWENTY[:19], "rounds": 2, "tables": 2}, "seating.too_few_players"),
        ({"players": [*TWENTY[:19], 101], "rounds": 2, "tables": 2}, "seating.duplicate_player"),
        ({"players": TWENTY, "rounds": 2, "tables": 2, "forbidden": [(101, 999)]}, "seating.unknown_player"),
        ({"players": TWENTY, "rounds": 2, "tables": 2, "forbidden": [(101, 101)]}, "seating.self_pair"),
    ],
)
def test_impossible_requests_are_refused_with_a_code(kwargs: dict[str, object], code: str) -> None:
    with pytest.raises(SeatingError) as caught:
        make_schedule(**kwargs)  # type: ignore[arg-type]
    assert caught.value.code == code


def test_three_players_who_must_not_meet_cannot_fit_two_tables() -> None:
    # Everyone plays every round at two tables, so two of any three share a table: a clear error.
    with pytest.raises(SeatingError) as caught:
        make_schedule(TWENTY, rounds=1, tables=2, forbidden=[(101, 102), (102, 103), (101, 103)], iterations=2_000)
    assert caught.value.code == "seating.forbidden_unavoidable"
    assert caught.value.data["pairs"]


def test_georgian_tables_of_twelve() -> None:
    players = list(range(1, 25))
    schedule = make_schedule(players, rounds=3, tables=2, seats=12, seed=5, iterations=3_000)
    assert all(len(table) == 12 for tables in schedule.rounds for table in tables)
    assert set(games_of(schedule).values()) == {3}


@st.composite
def matchings(draw: st.DrawFn) -> list[tuple[int, int]]:
    """Up to six disjoint forbidden pairs: always possible to keep apart at two or more tables."""
    order = draw(st.permutations(TWENTY))
    k = draw(st.integers(min_value=0, max_value=6))
    return [(order[2 * i], order[2 * i + 1]) for i in range(k)]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), forbidden=matchings(), rounds=st.integers(1, 4))
def test_forbidden_pairs_never_meet_and_games_are_equal(
    seed: int, forbidden: list[tuple[int, int]], rounds: int
) -> None:
    schedule = make_schedule(TWENTY, rounds=rounds, tables=2, forbidden=forbidden, seed=seed, iterations=2_000)
    met = meetings(schedule)
    assert all(met[(min(a, b), max(a, b))] == 0 for a, b in forbidden)
    assert set(games_of(schedule).values()) == {rounds}
    assert quality(schedule, forbidden).forbidden_meetings == 0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), forbidden=matchings())
def test_sitting_out_players_still_keep_forbidden_pairs_apart(seed: int, forbidden: list[tuple[int, int]]) -> None:
    players = [*TWENTY, *range(201, 206)]  # 25 players, 2 tables of 10, 5 rounds: 4 games each
    schedule = make_schedule(players, rounds=5, tables=2, forbidden=forbidden, seed=seed, iterations=2_000)
    assert all(meetings(schedule)[(min(a, b), max(a, b))] == 0 for a, b in forbidden)
    assert set(games_of(schedule).values()) == {4}


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_same_seed_gives_the_same_schedule(seed: int) -> None:
    kwargs = {"rounds": 3, "tables": 2, "seed": seed, "iterations": 1_000}
    assert make_schedule(TWENTY, **kwargs) == make_schedule(TWENTY, **kwargs)  # type: ignore[arg-type]
