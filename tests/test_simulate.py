"""The simulator against the exact answer for the random strategy (issue: simulator)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from functools import cache

import pytest

from engine import find_ruleset, from_mapping
from mafiabot.simulate import simulate, wilson_interval


@cache
def red_wins_by_day(n: int, m: int) -> Fraction:
    """P(red wins) with n alive, m black, a day coming first."""
    if m == 0:
        return Fraction(1)
    if m >= n - m:
        return Fraction(0)
    return Fraction(m, n) * red_wins_by_night(n - 1, m - 1) + Fraction(n - m, n) * red_wins_by_night(n - 1, m)


@cache
def red_wins_by_night(n: int, m: int) -> Fraction:
    """P(red wins) with n alive, m black, a night coming first (a red seat dies)."""
    if m == 0:
        return Fraction(1)
    if m >= n - m:
        return Fraction(0)
    return red_wins_by_day(n - 1, m)


def test_exact_formula_small_cases_by_hand():
    # 4 alive, 1 black: day removes black w.p. 1/4 (red wins); else 3 alive 1 black at night -> 2 alive, 1 black: lost.
    assert red_wins_by_day(4, 1) == Fraction(1, 4)
    assert red_wins_by_day(3, 1) == Fraction(1, 3)
    assert red_wins_by_day(2, 1) == 0


def _ruleset(players: int, black: int):
    if black == find_ruleset("classic").roles_for(players).get("don", 0) + find_ruleset("classic").roles_for(
        players
    ).get("mafia", 0):
        return find_ruleset("classic")
    red = players - black
    return from_mapping(
        {
            "base": "classic",
            "name": f"custom-{players}-{black}",
            "default_players": players,
            "setups": {str(players): {"don": 1, "mafia": black - 1, "sheriff": 1, "citizen": red - 1}},
        }
    )


@pytest.mark.parametrize(("players", "black"), [(6, 2), (8, 2), (10, 3), (12, 3), (10, 2), (9, 1), (11, 4)])
def test_simulated_red_share_matches_the_exact_answer(players, black):
    ruleset = _ruleset(players, black)
    assert sum(n for role, n in ruleset.roles_for(players).items() if role.team.value == "black") == black
    games = 6000
    report = simulate(ruleset, players=players, games=games, seed=players * 100 + black)
    assert sum(report.results.values()) == games
    assert set(report.results) <= {"red", "black"}
    exact = float(red_wins_by_day(players, black))
    low, high = wilson_interval(report.results.get("red", 0), games, z=3.29)  # 99.9%: a fixed seed, a wide net
    assert low <= exact <= high, (report.results, exact)


def test_simulation_is_deterministic_for_a_seed():
    ruleset = find_ruleset("classic")
    first = simulate(ruleset, players=10, games=300, seed=7)
    second = simulate(ruleset, players=10, games=300, seed=7)
    assert first.results == second.results


@pytest.mark.parametrize("preset", ["classic", "georgian", "fiim"])
def test_every_preset_simulates_to_an_end(preset):
    report = simulate(find_ruleset(preset), players=find_ruleset(preset).default_players, games=200, seed=3)
    assert sum(report.results.values()) == 200
    assert "abandoned" not in report.results


def test_cli_prints_json():
    out = subprocess.run(
        [sys.executable, "-m", "mafiabot", "simulate", "--ruleset", "classic", "--players", "10", "--games", "200",
         "--seed", "1", "--strategy", "random", "--json"],
        check=True, capture_output=True, text=True,
    )
    data = json.loads(out.stdout)
    assert data["games"] == 200
    assert sum(data["results"].values()) == 200
    assert data["games_per_second"] > 0


def test_cli_refuses_an_unsupported_table_size():
    out = subprocess.run(
        [sys.executable, "-m", "mafiabot", "simulate", "--ruleset", "fiim", "--players", "7", "--games", "1"],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2
    assert "players" in out.stderr
