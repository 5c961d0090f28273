"""The league table's order (rules.md#league-table): points, then wins, then extra points; equal lines share a rank."""

from __future__ import annotations

from dataclasses import dataclass

from mafiabot.store.history import league_table


@dataclass(frozen=True)
class Line:
    """One member's result in one game, with only the columns the league counts."""

    user_id: int
    won: bool
    points: str
    extra_points: str = "0"
    display_name: str = ""
    role: str = "citizen"
    team: str = "red"
    draw: bool = False
    fouls: int = 0
    best_move_black: int | None = None
    removed: bool = False


def ranks(lines: list[Line]) -> list[tuple[int, int]]:
    return [(row.rank, row.user_id) for row in league_table(lines)]


def test_points_come_first_even_over_more_wins() -> None:
    # 1 won once with 1.5 (an extra half); 2 won twice... with 0.5 taken off in each: 1.0.
    lines = [Line(1, True, "1.5", "0.5"), Line(1, False, "0"),
             Line(2, True, "0.5", "-0.5"), Line(2, True, "0.5", "-0.5")]
    assert ranks(lines) == [(1, 1), (2, 2)]


def test_equal_points_go_to_more_wins() -> None:
    # Both 2 points: 1 from two wins, 2 from one win and a whole extra point.
    lines = [Line(1, True, "1"), Line(1, True, "1"), Line(2, True, "2", "1"), Line(2, False, "0")]
    assert ranks(lines) == [(1, 1), (2, 2)]


def test_equal_points_and_wins_go_to_more_extra_points() -> None:
    # Both 1.4 points from one win: 1's extra 0.4 is the judge's, 2's the ruleset's own (a Best Move).
    lines = [Line(2, True, "1.4", "0"), Line(1, True, "1.4", "0.4")]
    assert ranks(lines) == [(1, 1), (2, 2)]


def test_equal_lines_share_a_rank_and_the_next_one_counts_them() -> None:
    lines = [Line(3, True, "1"), Line(2, True, "1"), Line(1, True, "2", "1"), Line(4, False, "0")]
    assert ranks(lines) == [(1, 1), (2, 2), (2, 3), (4, 4)]
