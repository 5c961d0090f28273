"""An Elo-style rating for a team game with uneven sides, kept per server and per ruleset.

The formula and a worked example are in ``docs/ratings.md``; a test reads that page's example
tables and checks them against :func:`rate`, so the page and the code cannot drift apart.

Why not plain Elo for every player: a ten-seat table has seven red players against three black,
and plain per-player Elo would hand out seven gains for three losses whenever red wins, so ratings
would drift with the red side's win rate. Weighting each player's change by ``N / (2 · n_side)``
makes every side's total stake the same (half the table), which keeps the sum of all ratings
constant when the players of a side are rated alike. A black player then moves more than a
citizen, which matches how much one seat weighs on each side. The maniac is a side of his own:
every pair of sides is scored as one Elo game, and a pair where neither side won counts as a draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEFAULT_RATING = 1500.0
"""Where every player starts on a server and ruleset."""
K_FACTOR = 20.0
"""The largest change a single pairing can make before the side weight."""
SCALE = 400.0
"""The rating gap at which the stronger side is expected to score ten times as often."""


@dataclass(frozen=True, slots=True)
class RatedPlayer:
    """A player going into a game: who, on which side, and rated how before it."""

    player: int
    team: str
    rating: float = DEFAULT_RATING


def expected(rating: float, opponent: float) -> float:
    """The expected score of ``rating`` against ``opponent`` (0 to 1).

    >>> expected(1500, 1500)
    0.5
    >>> round(expected(1600, 1500), 4)
    0.6401
    """
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / SCALE))


def pair_score(team: str, other: str, winner: str | None) -> float:
    """What ``team`` scored against ``other``: 1 won, 0 lost, 0.5 when neither of them won."""
    if winner == team:
        return 1.0
    if winner == other:
        return 0.0
    return 0.5


def rate(players: Sequence[RatedPlayer], winner: str | None, *, k: float = K_FACTOR) -> dict[int, float]:
    """Every player's rating change for one game.

    Args:
        players: everyone who was dealt a card, with their rating before the game.
        winner: the winning side (``red``, ``black``, ``maniac``), or None for a draw.
        k: the K-factor.

    Returns:
        The change per player; all of them are computed from the ratings before the game.
    """
    sides: dict[str, list[RatedPlayer]] = {}
    for p in players:
        sides.setdefault(p.team, []).append(p)
    if len(sides) < 2:
        return {p.player: 0.0 for p in players}
    average = {team: sum(p.rating for p in members) / len(members) for team, members in sides.items()}
    total = len(players)
    pairings = len(sides) - 1
    deltas: dict[int, float] = {}
    for team, members in sides.items():
        weight = total / (2 * len(members))
        for p in members:
            surprise = sum(
                pair_score(team, other, winner) - expected(p.rating, average[other]) for other in sides if other != team
            )
            deltas[p.player] = k * weight * surprise / pairings
    return deltas


def updated(ratings: Mapping[int, float], teams: Mapping[int, str], winner: str | None) -> dict[int, float]:
    """The ratings after one game; players missing from ``ratings`` start at ``DEFAULT_RATING``."""
    players = [RatedPlayer(p, team, ratings.get(p, DEFAULT_RATING)) for p, team in teams.items()]
    deltas = rate(players, winner)
    return {p.player: p.rating + deltas[p.player] for p in players}
