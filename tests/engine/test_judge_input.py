"""The judge's free input is bounded by the engine: reasons by length, extra points by value and places."""

from __future__ import annotations

import pytest

from engine import (
    EXTRA_POINTS_LIMIT,
    REASON_LIMIT,
    AwardPoints,
    Disqualify,
    InvalidCommandError,
    parse_points,
)
from engine import events as ev
from tests.engine.helpers import assert_rejected, start


@pytest.mark.parametrize("text", ["1e5000", "-1E+3", "10.01", "-11", "0.125", "1e-5000", "99999999999999999999"])
def test_points_out_of_range_are_refused(text: str) -> None:
    with pytest.raises(InvalidCommandError) as refused:
        parse_points(text)
    assert refused.value.code == "points.out_of_range"


@pytest.mark.parametrize("text", ["NaN", "sNaN", "inf", "-Infinity", "0", "", "lots", "1,5"])
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
