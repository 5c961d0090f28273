"""The judge's free input is bounded by the engine: reasons by length, extra points by value and places."""

from __future__ import annotations

import pytest

from engine import (
    CLASSIC,
    EXTRA_POINTS_LIMIT,
    REASON_LIMIT,
    AwardPoints,
    Command,
    Disqualify,
    Game,
    InvalidCommandError,
    StartGame,
    parse_points,
    seat_extra_points,
)
from engine import events as ev
from tests.engine.helpers import assert_rejected, start


@pytest.mark.parametrize("text", ["1e5000", "-1E+3", "10.01", "-11", "0.125", "1e-5000", "99999999999999999999",
                                  "1e999999999", "-1E+999999999", "1e-999999999", "-1e-999999999", "0.001",
                                  "1.000000000000000000001"])
def test_points_out_of_range_are_refused(text: str) -> None:
    with pytest.raises(InvalidCommandError) as refused:
        parse_points(text)
    assert refused.value.code == "points.out_of_range"


@pytest.mark.parametrize("text", ["NaN", "sNaN", "inf", "-Infinity", "0", "", "lots", "1,5", "0e999999999",
                                  "-0E-999999999", "0.000", "1_0", "\u0661"])
def test_points_that_are_not_a_number_are_refused(text: str) -> None:
    with pytest.raises(InvalidCommandError) as refused:
        parse_points(text)
    assert refused.value.code == "points.invalid_value"


@pytest.mark.parametrize(("text", "shown"), [("0.25", "0.25"), ("-0.5", "-0.5"), ("10", "10"), ("1e1", "10"),
                                             ("-10.00", "-10.00")])
def test_points_within_the_bounds_are_kept_exactly(text: str, shown: str) -> None:
    game = start()
    (event,) = game.apply(AwardPoints(seat=1, value=text, reason="fair play"))
    assert isinstance(event, ev.PointsAwarded)
    assert event.value == shown
    assert abs(parse_points(text)) <= EXTRA_POINTS_LIMIT


def test_a_reason_over_the_limit_is_refused_and_changes_nothing() -> None:
    game = start()
    before = len(game.history)
    assert_rejected(game, Disqualify(seat=2, reason="x" * (REASON_LIMIT + 1)), InvalidCommandError, "reason.too_long")
    assert_rejected(game, AwardPoints(seat=2, value="0.5", reason="x" * 2500), InvalidCommandError, "reason.too_long")
    assert len(game.history) == before
    game.apply(Disqualify(seat=2, reason="x" * REASON_LIMIT))


def test_a_seats_extra_points_in_one_game_stay_within_the_limit() -> None:
    """The limit holds for the seat's total, not only for each award: thirty awards of 10 are not 300."""
    game = start()
    game.apply(AwardPoints(seat=3, value="10", reason="best game of the night"))
    for value in ("10", "0.01"):
        assert_rejected(game, AwardPoints(seat=3, value=value), InvalidCommandError, "points.seat_limit")
    game.apply(AwardPoints(seat=3, value="-4.5"))
    game.apply(AwardPoints(seat=3, value="4.5", reason="back to the limit"))
    game.apply(AwardPoints(seat=4, value="-10", reason="another seat has its own"))
    assert_rejected(game, AwardPoints(seat=4, value="-0.01"), InvalidCommandError, "points.seat_limit")
    game.apply(AwardPoints(seat=4, value="10", reason="taken back"))
    assert seat_extra_points(game.state, 3) == EXTRA_POINTS_LIMIT
    assert seat_extra_points(game.state, 4) == 0


def test_the_seat_limit_refusal_says_what_the_seat_holds() -> None:
    game = start()
    game.apply(AwardPoints(seat=2, value="-9.75"))
    with pytest.raises(InvalidCommandError) as refused:
        game.apply(AwardPoints(seat=2, value="-0.5"))
    assert refused.value.code == "points.seat_limit"
    assert refused.value.data == {"seat": 2, "total": "-9.75", "value": "-0.5", "low": "-10", "high": "+10"}


def test_a_log_kept_from_before_the_seat_limit_still_replays() -> None:
    """Awards the table already accepted stand when their stored log is replayed (a resumed game, a
    tournament's standings); only a new award is held to the limit."""
    log: list[Command] = [StartGame(players=10, seed=1), *[AwardPoints(seat=3, value="10")] * 2]
    game = Game.replay(CLASSIC, log)
    assert seat_extra_points(game.state, 3) == 20
    assert_rejected(game, AwardPoints(seat=3, value="0.5"), InvalidCommandError, "points.seat_limit")
    assert_rejected(game, AwardPoints(seat=4, value="10.5"), InvalidCommandError, "points.out_of_range")
