"""Stats and the league table against numbers worked out by hand from five scripted games.

Guild 1, users 1..10 (user n sits in seat n):

- A, classic, day 1 (T0+1d): seats 1 don, 2 mafia, 3 sheriff, 4-6 citizens. Seat 4 gets a foul;
  1 and 2 are disqualified, so red wins. Points: 3, 4, 5, 6 get 1; 1 and 2 get 0 (classic has no
  removal penalty).
- B, classic, day 2: seats 1-3 citizens, 4 sheriff, 5 don, 6 mafia. The judge gives seat 5 +0.3;
  1 and 2 are disqualified, leaving 2 red against 2 black: black wins. Points: 5 → 1.3, 6 → 1.
- C, fiim, day 3: seats 1 don, 2-3 mafia, 4 sheriff, 5-10 citizens. Night 1 kills 10, whose Best
  Move names 1, 2, 4 (two black: +0.25). Seat 3 fouls out (4 fouls, -0.5); 1 and 2 are disqualified
  (-0.5 each); red wins. Points: 4-9 → 1, 10 → 1.25, 1-3 → -0.5.
- D, classic, day 4: seats as in A; the judge gives seat 3 +1.5, then declares a draw. Points: 3 → 1.5.
- E, classic, day 5: abandoned, counts for nothing. F, guild 2: must not show up in guild 1.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

import pytest

from engine import Abandon, AwardPoints, DeclareDraw, Disqualify, GiveFoul, MakeBestMove, Role, Shoot, Timeout
from mafiabot.store import LeagueRow, Store, WinCount

if TYPE_CHECKING:
    from tests.store.conftest import Scripted, StartScripted

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
DON, MAFIA, SHERIFF, CITIZEN = Role.DON, Role.MAFIA, Role.SHERIFF, Role.CITIZEN
ROLES_A = (DON, MAFIA, SHERIFF, CITIZEN, CITIZEN, CITIZEN)
ROLES_B = (CITIZEN, CITIZEN, CITIZEN, SHERIFF, DON, MAFIA)
ROLES_C = (DON, MAFIA, MAFIA, SHERIFF, *[CITIZEN] * 6)
SIX, TEN = [1, 2, 3, 4, 5, 6], list(range(1, 11))


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


async def play_the_season(start_game: StartScripted) -> dict[str, Scripted]:
    a = await start_game(1, "classic", SIX, ROLES_A, at=day(1))
    await a.run(Timeout(), GiveFoul(seat=4), Disqualify(seat=1), Disqualify(seat=2))
    await a.finish()

    b = await start_game(1, "classic", SIX, ROLES_B, at=day(2))
    await b.run(Timeout(), AwardPoints(seat=5, value="0.3", reason="great defence"), Disqualify(seat=1))
    await b.run(Disqualify(seat=2))
    await b.finish()

    c = await start_game(1, "fiim", TEN, ROLES_C, at=day(3))
    await c.run(Timeout())
    await c.end_floors()
    await c.run(Shoot(seat=1, target=10), Shoot(seat=2, target=10), Shoot(seat=3, target=10), Timeout())
    await c.run(MakeBestMove(seat=10, targets=(1, 2, 4)), *[GiveFoul(seat=3)] * 4, Disqualify(seat=1))
    await c.run(Disqualify(seat=2))
    await c.finish()

    d = await start_game(1, "classic", SIX, ROLES_A, at=day(4))
    await d.run(Timeout(), AwardPoints(seat=3, value="1.5"), DeclareDraw())
    await d.finish()

    e = await start_game(1, "classic", SIX, ROLES_A, at=day(5))
    await e.run(Timeout(), GiveFoul(seat=5), Abandon())
    await e.finish()

    f = await start_game(2, "classic", SIX, ROLES_A, at=day(6))
    await f.run(Timeout(), Disqualify(seat=1), Disqualify(seat=2))
    await f.finish()
    return {"A": a, "B": b, "C": c, "D": d}


def row(rank: int, user: int, games: int, wins: int, points: str, extra: str) -> LeagueRow:
    return LeagueRow(rank, user, f"Player {user}", games, wins, Decimal(points), Decimal(extra), wins / games)


async def test_league_table_stats_and_filters(store: Store, start_game: StartScripted) -> None:
    games = await play_the_season(start_game)
    outcomes = [g.game.state.outcome for g in games.values()]
    assert [o.result.value if o else None for o in outcomes] == ["red", "black", "red", "draw"]

    assert await store.league(1) == [
        row(1, 5, 4, 3, "3.3", "0.3"),
        row(2, 6, 4, 3, "3", "0"),
        row(3, 4, 4, 2, "2", "0"),
        row(4, 3, 4, 1, "2.0", "1.0"),  # as many points as user 4, fewer wins
        row(5, 10, 1, 1, "1.25", "0.25"),
        row(6, 7, 1, 1, "1", "0"),
        row(6, 8, 1, 1, "1", "0"),
        row(6, 9, 1, 1, "1", "0"),
        row(9, 1, 4, 0, "-0.5", "-0.5"),
        row(9, 2, 4, 0, "-0.5", "-0.5"),
    ]
    # A period: games C and D only.
    assert await store.league(1, since=day(3)) == [
        row(1, 10, 1, 1, "1.25", "0.25"),
        row(2, 4, 2, 1, "1", "0"),
        row(2, 5, 2, 1, "1", "0"),
        row(2, 6, 2, 1, "1", "0"),
        row(2, 7, 1, 1, "1", "0"),
        row(2, 8, 1, 1, "1", "0"),
        row(2, 9, 1, 1, "1", "0"),
        row(8, 3, 2, 0, "1.0", "1.0"),
        row(9, 1, 2, 0, "-0.5", "-0.5"),
        row(9, 2, 2, 0, "-0.5", "-0.5"),
    ]
    fiim = await store.league(1, ruleset="fiim")
    assert [(r.rank, r.user_id, r.points) for r in fiim] == [
        (1, 10, Decimal("1.25")),
        *[(2, u, Decimal(1)) for u in range(4, 10)],
        *[(8, u, Decimal("-0.5")) for u in (1, 2, 3)],
    ]
    assert [r.user_id for r in await store.league(1, limit=3)] == [5, 6, 4]
    assert await store.league(1, since=day(7)) == []
    points: list[tuple[int, Decimal | int]] = [(r.user_id, r.points) for r in await store.league(2)]
    assert points == [
        (3, 1), (4, 1), (5, 1), (6, 1), (1, 0), (2, 0),
    ]

    five = await store.player_stats(1, 5)
    assert (five.games, five.wins, five.draws, five.losses, five.win_rate) == (4, 3, 1, 0, 0.75)
    assert (five.points, five.extra_points, five.fouls, five.removals) == (Decimal("3.3"), Decimal("0.3"), 0, 0)
    assert five.by_role == {"citizen": WinCount(3, 2), "don": WinCount(1, 1)}
    assert five.by_team == {"black": WinCount(1, 1), "red": WinCount(3, 2)}
    assert set(five.ratings) == {"classic", "fiim"}

    three = await store.player_stats(1, 3)
    assert (three.games, three.wins, three.draws, three.losses, three.win_rate) == (4, 1, 1, 2, 0.25)
    assert (three.points, three.extra_points, three.fouls, three.removals) == (Decimal(2), Decimal(1), 4, 1)
    assert three.by_role == {"citizen": WinCount(1, 0), "mafia": WinCount(1, 0), "sheriff": WinCount(2, 1)}
    assert three.by_team == {"black": WinCount(1, 0), "red": WinCount(3, 1)}

    ten = await store.player_stats(1, 10)
    assert (ten.games, ten.wins, ten.points, ten.best_moves, ten.best_move_black) == (1, 1, Decimal("1.25"), 1, 2)

    one_classic = await store.player_stats(1, 1, "classic")
    assert (one_classic.games, one_classic.wins, one_classic.draws, one_classic.losses) == (3, 0, 1, 2)
    assert (one_classic.points, one_classic.removals, one_classic.fouls) == (Decimal(0), 2, 0)  # A and B
    assert one_classic.by_role == {"citizen": WinCount(1, 0), "don": WinCount(2, 0)}
    assert set(one_classic.ratings) == {"classic"}

    four = await store.player_stats(1, 4)
    assert (four.fouls, four.points, four.wins) == (1, Decimal(2), 2)  # the foul in the abandoned game E is not counted

    nobody = await store.player_stats(1, 999)
    empty: tuple[object, ...] = (nobody.games, nobody.win_rate, nobody.points, nobody.by_role, nobody.ratings)
    assert empty == (0, 0.0, 0, {}, {})

    classic = {r.user_id: r for r in await store.ratings(1, "classic")}
    assert {u: r.games for u, r in classic.items()} == dict.fromkeys(SIX, 3)
    assert sum(r.rating for r in classic.values()) == pytest.approx(6 * 1500, abs=0.5)
    fiim_ratings = {r.user_id: r.rating for r in await store.ratings(1, "fiim")}
    assert fiim_ratings[4] == pytest.approx(1500 + 20 * 10 / 14 * 0.5)
    assert fiim_ratings[1] == pytest.approx(1500 - 20 * 10 / 6 * 0.5)


async def test_games_left_out_count_in_neither_the_league_nor_a_record(store: Store, start_game: StartScripted) -> None:
    """The club's pages leave out the games of a tournament's held rounds: C, the only fiim game, here."""
    games = await play_the_season(start_game)
    held = {games["C"].game_id}
    assert await store.league(1, leave_out=held) == await store.league(1, ruleset="classic")
    assert await store.league(1, since=day(3), leave_out=held) == await store.league(1, since=day(4))
    assert await store.league(1, ruleset="fiim", leave_out=held) == []
    assert await store.league(1, leave_out=()) == await store.league(1)
    for user in (1, 3, 5):
        record = await store.player_stats(1, user, leave_out=held)
        classic = await store.player_stats(1, user, "classic")
        assert dataclasses.replace(record, ratings={}) == dataclasses.replace(classic, ruleset=None, ratings={})
    assert (await store.player_stats(1, 10, leave_out=held)).games == 0
