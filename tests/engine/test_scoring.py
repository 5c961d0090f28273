"""FIIM scoring versions and tournament standings, against the hand computations in docs/tournaments.md."""

from __future__ import annotations

import doctest
from decimal import Decimal
from pathlib import Path

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    AwardPoints,
    Disqualify,
    Game,
    GiveFoul,
    Leave,
    MakeBestMove,
    Result,
    Role,
    RulesetError,
    scoring,
)
from engine.scoring import (
    FIIM_LATEST,
    SCORINGS,
    SeatPoints,
    TournamentGame,
    ci_per_game,
    find_scoring,
    protocol_version,
    seat_points,
    standings,
    tournament_game,
)
from tests.engine.helpers import TWELVE, kill, start, to_night

D = Decimal
# Seats: D#1 M#2 M#3 S#4, citizens #5-#10 (helpers.TEN).
GAME_ONE_PLAYERS = tuple(range(101, 111))
GAME_TWO_PLAYERS = (104, 105, 106, 101, 102, 103, 107, 108, 109, 110)


def game_one() -> Game:
    """Night 1 shoots #7, who names #1 #2 #5 (two black); #1 #2 disqualified, #3 four fouls: red wins."""
    game = start(FIIM)
    to_night(game, 1)
    kill(game, 7)
    game.apply(MakeBestMove(seat=7, targets=(1, 2, 5)))
    game.apply(AwardPoints(seat=4, value="0.4", reason="found the Don"))
    game.apply(Disqualify(seat=1))
    game.apply(Disqualify(seat=2))
    for _ in range(4):
        game.apply(GiveFoul(seat=3))
    assert game.state.outcome is not None
    assert game.state.outcome.result is Result.RED
    return game


def game_two() -> Game:
    """Night 1 shoots #5 (no black named); #8 leaves, #9 disqualified, #10 four fouls: black wins."""
    game = start(FIIM)
    to_night(game, 1)
    kill(game, 5)
    game.apply(MakeBestMove(seat=5, targets=(4, 6, 8)))
    game.apply(AwardPoints(seat=1, value="-0.3", reason="auto-bonus removed"))
    game.apply(Leave(seat=8))
    game.apply(Disqualify(seat=9))
    for _ in range(4):
        game.apply(GiveFoul(seat=10))
    assert game.state.outcome is not None
    assert game.state.outcome.result is Result.BLACK
    return game


def by_seat(points: tuple[SeatPoints, ...]) -> dict[int, Decimal]:
    return {p.seat: p.total for p in points}


def test_versions_hold_the_sites_numbers() -> None:
    assert list(SCORINGS) == ["fiim-2", "fiim-3", "fiim-4", "fiim-5", "fiim-6", "fiim-7"]
    best_moves = {name: (v.best_move_three, v.best_move_two) for name, v in SCORINGS.items()}
    assert best_moves["fiim-3"] == (D("0.4"), D("0.25"))
    assert best_moves["fiim-5"] == (D("0.5"), D("0.3"))
    assert best_moves["fiim-7"] == (D("0.7"), D("0.5"))
    assert SCORINGS["fiim-2"].left_penalty == 0
    assert SCORINGS["fiim-3"].left_penalty == D("0.5")
    assert [v.auto_bonus for v in SCORINGS.values()] == [0, 0, D("0.3"), D("0.3"), D("0.3"), D("0.3")]
    assert [v.ci_cap for v in SCORINGS.values()] == [D("0.4")] * 5 + [D("0.5")]
    assert find_scoring(" FIIM-7 ") is FIIM_LATEST
    with pytest.raises(RulesetError):
        find_scoring("fiim-1")


def test_game_points_follow_the_protocol_version() -> None:
    # Game.points is the protocol version: FIIM version 3's best move, the ruleset's removal penalty.
    game = game_one()
    points = game.points()
    assert points[7] == 1 + D("0.25")
    assert points[4] == 1 + D("0.4")
    assert points[1] == points[2] == points[3] == D("-0.5")
    assert protocol_version(CLASSIC).best_move_three == 0


def test_game_one_by_hand_in_the_latest_version() -> None:
    # docs/tournaments.md, example game 1: win 1, best move for two black 0.5, auto-bonus 0.3, removal -0.5.
    points = by_seat(seat_points(game_one().state, FIIM_LATEST))
    assert points == {
        1: D("-0.2"), 2: D("-0.2"), 3: D("-0.2"),
        4: D("1.7"), 5: D("1.3"), 6: D("1.3"), 7: D("1.8"), 8: D("1.3"), 9: D("1.3"), 10: D("1.3"),
    }


def test_game_two_by_hand_in_the_latest_version() -> None:
    lines = seat_points(game_two().state, FIIM_LATEST)
    assert by_seat(lines) == {
        1: D("1.0"), 2: D("1.3"), 3: D("1.3"),
        4: D("0.3"), 5: D("0.3"), 6: D("0.3"), 7: D("0.3"), 8: D("-0.2"), 9: D("-0.2"), 10: D("-0.2"),
    }
    shot = [p.seat for p in lines if p.ci_eligible]
    assert shot == [5]


def test_a_red_win_after_being_shot_earns_no_ci() -> None:
    lines = seat_points(game_one().state, FIIM_LATEST)
    assert [p.seat for p in lines if p.shot_first_night] == [7]
    assert not any(p.ci_eligible for p in lines)


@pytest.mark.parametrize(
    ("games", "shot", "cap", "expected"),
    [
        (2, 1, "0.5", "0.500"),   # round(0.8) = 1: 0.5 * 1 / 1
        (10, 2, "0.5", "0.250"),  # round(4) = 4: 0.5 * 2 / 4
        (10, 2, "0.4", "0.200"),
        (10, 5, "0.4", "0.400"),  # 0.4 * 5 / 4 = 0.5, capped at 0.4
        (4, 1, "0.4", "0.200"),   # round(1.6) = 2
        (8, 1, "0.4", "0.133"),   # round(3.2) = 3: 0.1333...
        (1, 1, "0.4", "0.400"),   # round(0.4) = 0: the cap
        (10, 0, "0.4", "0"),
    ],
)
def test_ci_formula(games: int, shot: int, cap: str, expected: str) -> None:
    version = SCORINGS["fiim-6"] if cap == "0.4" else FIIM_LATEST
    assert ci_per_game(version, games=games, shot_first_night=shot) == D(expected)


def test_standings_of_the_worked_example() -> None:
    # docs/tournaments.md: game 1 in round 1, game 2 in round 2 counted at 1.5.
    games = [
        tournament_game(game_one().state, FIIM_LATEST, round_number=1, players=GAME_ONE_PLAYERS),
        tournament_game(game_two().state, FIIM_LATEST, round_number=2, players=GAME_TWO_PLAYERS),
    ]
    rows = standings(games, {2: D("1.5")})
    table = [(r.place, r.player, r.total) for r in rows]
    assert table == [
        (1, 105, D("3.25")), (1, 106, D("3.25")),
        (3, 104, D("3.2")),
        (4, 107, D("2.25")),
        (5, 102, D("1.0")),
        (6, 108, D("1.0")), (6, 109, D("1.0")), (6, 110, D("1.0")),
        (9, 101, D("0.25")), (9, 103, D("0.25")),
    ]
    ci = {r.player: r.ci for r in rows}
    assert ci[102] == D("0.75")
    assert ci[107] == 0  # shot on Night 1 in game 1, but red won it
    row_104 = next(r for r in rows if r.player == 104)
    assert (row_104.win, row_104.extra, row_104.penalty) == (D("2.5"), D("0.7"), D(0))


def doc_standings() -> list[tuple[int, int, Decimal, Decimal, int]]:
    """The worked example's standings table in docs/tournaments.md: place, player, total, tie-break, wins."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "tournaments.md").read_text(encoding="utf-8")
    table = text.split("**Standings.**", 1)[1].split("\n\n", 2)[1]
    rows = []
    for raw in table.splitlines()[2:]:
        cells = [c.strip().replace("\u2212", "-") for c in raw.strip("|").split("|")]
        rows.append((int(cells[0]), int(cells[1]), D(cells[5]), D(cells[6]), int(cells[7])))
    return rows


def test_the_docs_standings_table_is_what_standings_computes() -> None:
    games = [
        tournament_game(game_one().state, FIIM_LATEST, round_number=1, players=GAME_ONE_PLAYERS),
        tournament_game(game_two().state, FIIM_LATEST, round_number=2, players=GAME_TWO_PLAYERS),
    ]
    computed = [
        (r.place, r.player, r.total, r.extra + r.penalty + r.best_move, r.wins)
        for r in standings(games, {2: D("1.5")})
    ]
    documented = doc_standings()
    assert len(documented) == 10
    assert computed == documented


def line(seat: int, role: Role, *, won: bool, extra: str = "0", penalty: str = "0", best: str = "0") -> SeatPoints:
    return SeatPoints(
        seat, role, won=won, lost=not won, shot_first_night=False,
        win=D(1) if won else D(0), extra=D(extra), penalty=D(penalty), best_move=D(best),
    )


def test_tie_break_order_extra_then_wins_then_sheriff_or_don_wins() -> None:
    # Four players on 1.0 each (club scoring, no auto-bonus): see docs/tournaments.md, tie-breaks.
    games = [
        TournamentGame(1, (1, 2, 3, 4), (
            line(1, Role.CITIZEN, won=False, extra="1.0"),            # 1.0, all of it extra
            line(2, Role.CITIZEN, won=True),                          # a win
            line(3, Role.SHERIFF, won=True),                          # a win as the Sheriff
            line(4, Role.CITIZEN, won=False, extra="0.5", best="0.5"),  # extra and best move: 1.0 in the tie-break
        )),
    ]
    rows = standings(games, version=scoring.CLUB)
    assert [r.player for r in rows] == [1, 4, 3, 2]
    assert [r.place for r in rows] == [1, 1, 3, 4]
    assert all(r.total == 1 for r in rows)


def test_more_times_shot_first_night_breaks_the_last_tie() -> None:
    shot = SeatPoints(1, Role.CITIZEN, won=True, lost=False, shot_first_night=True, win=D(1))
    plain = SeatPoints(2, Role.CITIZEN, won=True, lost=False, shot_first_night=False, win=D(1))
    rows = standings([TournamentGame(1, (20, 10), (shot, plain))], version=scoring.CLUB)
    assert [(r.place, r.player) for r in rows] == [(1, 20), (2, 10)]


def test_an_unfinished_or_abandoned_game_gives_nothing() -> None:
    game = start(FIIM)
    assert all(p.total == 0 and not p.won for p in seat_points(game.state, FIIM_LATEST))


def test_players_must_name_every_seat_once() -> None:
    with pytest.raises(RulesetError):
        tournament_game(game_one().state, FIIM_LATEST, round_number=1, players=GAME_ONE_PLAYERS[:9])
    with pytest.raises(RulesetError):
        tournament_game(game_one().state, FIIM_LATEST, round_number=1, players=(101,) * 10)


def test_the_modules_examples_hold() -> None:
    result = doctest.testmod(scoring)
    assert result.attempted >= 1
    assert result.failed == 0


def test_a_black_player_shot_on_night_one_keeps_his_best_move_in_the_game_but_not_in_a_tournament() -> None:
    """The mafia shoot their own #3, who names #1 #2 #4 (two black): rules.md#points pays him, the site does not."""
    game = start(FIIM)
    to_night(game, 1)
    kill(game, 3)
    game.apply(MakeBestMove(seat=3, targets=(1, 2, 4)))
    game.apply(Disqualify(seat=1))
    game.apply(Disqualify(seat=2))
    assert game.state.role(3) is Role.MAFIA
    assert game.state.outcome is not None
    assert game.state.outcome.result is Result.RED
    assert game.points()[3] == D("0.25")
    assert by_seat(seat_points(game.state, FIIM_LATEST))[3] == FIIM_LATEST.auto_bonus


# -- three sides: the georgian table (docs/tournaments.md, "Georgian tournaments") ------------------------------


def maniac_game() -> Game:
    """Georgian, D#1 M#2 M#3 detective #4 doctor #5 maniac #6: the mafia shoot #7 on Night 1, then removals
    leave the maniac face to face with #8 (rules: "1x1"), and he wins alone."""
    game = start(GEORGIAN, TWELVE)
    to_night(game, 1)
    kill(game, 7)
    for seat in (1, 2, 3, 4, 5, 9, 10, 11, 12):
        game.apply(Disqualify(seat=seat))
    assert game.state.outcome is not None
    assert game.state.outcome.result is Result.MANIAC
    return game


def test_a_maniacs_win_pays_him_alone_and_every_other_seat_lost() -> None:
    points = seat_points(maniac_game().state, FIIM_LATEST)
    maniac = points[5]
    assert (maniac.role, maniac.won, maniac.win) == (Role.MANIAC, True, FIIM_LATEST.win)
    assert [p.seat for p in points if p.won] == [6]
    assert all(p.lost and p.win == 0 for p in points if p.seat != 6)
    # The red #7 shot on Night 1 lost too: his game earns Ci as a black win would.
    assert points[6].shot_first_night
    assert points[6].ci_eligible


def test_a_maniacs_win_is_a_special_role_win_in_the_tie_break() -> None:
    games = [TournamentGame(1, (1, 2), (
        SeatPoints(1, Role.CITIZEN, won=True, lost=False, shot_first_night=False, win=D(1)),
        SeatPoints(2, Role.MANIAC, won=True, lost=False, shot_first_night=False, win=D(1)),
    ))]
    rows = standings(games, version=scoring.CLUB)
    assert [(r.place, r.player, r.special_role_wins) for r in rows] == [(1, 2, 1), (2, 1, 0)]


def test_a_maniac_named_in_a_best_move_is_not_black() -> None:
    # A club's georgian ruleset with the best move: #7 names the Don, a mafioso and the maniac.
    game = start(GEORGIAN.replace(best_move=True), TWELVE)
    to_night(game, 1)
    kill(game, 7)
    game.apply(MakeBestMove(seat=7, targets=(1, 2, 6)))
    assert game.state.best_move_black == 2
    assert by_seat(seat_points(game.state, FIIM_LATEST)) == dict.fromkeys(range(1, 13), 0)  # no result yet
    for seat in (1, 2, 3):
        game.apply(Disqualify(seat=seat))
    game.apply(Disqualify(seat=6))
    assert game.state.outcome is not None
    assert game.state.outcome.result is Result.RED
    assert by_seat(seat_points(game.state, FIIM_LATEST))[7] == 1 + FIIM_LATEST.best_move_two + FIIM_LATEST.auto_bonus
