"""The simulator: the random strategy against its exact answer, the club strategy against random."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from functools import cache

import pytest

from engine import Game, Role, Ruleset, find_ruleset, from_mapping
from mafiabot.tools.cli import main
from mafiabot.tools.simulate import parse_strategies, play_club_game, simulate, wilson_interval


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


def test_exact_formula_small_cases_by_hand() -> None:
    # 4 alive, 1 black: day removes black w.p. 1/4 (red wins); else 3 alive 1 black at night -> 2 alive, 1 black: lost.
    assert red_wins_by_day(4, 1) == Fraction(1, 4)
    assert red_wins_by_day(3, 1) == Fraction(1, 3)
    assert red_wins_by_day(2, 1) == 0


def _ruleset(players: int, black: int) -> Ruleset:
    if black == find_ruleset("classic").roles_for(players).get(Role.DON, 0) + find_ruleset("classic").roles_for(
        players
    ).get(Role.MAFIA, 0):
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
def test_simulated_red_share_matches_the_exact_answer(players: int, black: int) -> None:
    ruleset = _ruleset(players, black)
    assert sum(n for role, n in ruleset.roles_for(players).items() if role.team.value == "black") == black
    games = 6000
    report = simulate(ruleset, players=players, games=games, seed=players * 1000 + black)
    assert sum(report.results.values()) == games
    assert set(report.results) <= {"red", "black"}
    exact = float(red_wins_by_day(players, black))
    low, high = wilson_interval(report.results.get("red", 0), games, z=3.29)  # 99.9%: a fixed seed, a wide net
    assert low <= exact <= high, (report.results, exact)


@pytest.mark.parametrize("strategy", ["random", "club"])
@pytest.mark.parametrize(("preset", "players"), [("classic", 10), ("georgian", 12), ("fiim", 10)])
def test_simulation_is_deterministic_for_a_seed(strategy: str, preset: str, players: int) -> None:
    ruleset = find_ruleset(preset)
    first = simulate(ruleset, players=players, games=150, seed=7, strategy=strategy)
    second = simulate(ruleset, players=players, games=150, seed=7, strategy=strategy)
    other = simulate(ruleset, players=players, games=150, seed=8, strategy=strategy)
    assert first.results == second.results
    # A different seed deals different games: the same count for every result would be a fluke.
    assert other.results != first.results


def test_club_game_is_the_same_game_for_the_same_random_source() -> None:
    import random

    ruleset = find_ruleset("georgian")
    one = play_club_game(ruleset, 12, random.Random(5))
    two = play_club_game(ruleset, 12, random.Random(5))
    assert one.history == two.history


# classic's gain is two or three points, so it needs many games; georgian's is four times red's share.
@pytest.mark.parametrize(("preset", "players", "games"), [("classic", 10, 8000), ("georgian", 12, 500)])
def test_club_play_wins_more_for_red_than_random_play(preset: str, players: int, games: int) -> None:
    """The Sheriff's opened checks must show: a broken club strategy plays no better than random.

    Both play the same deals; a two-proportion z above 3 (one-sided p < 0.0014) says red's share
    under club play is higher, not a fluke of the seed. The sample sizes keep the expected z well
    clear of 3: classic's 7 % against 9 % gives z = 5.1 at 8000 games (at 4000 it would expect
    3.6, too close); georgian's 5 % against 22 % gave z = 16 at 2000 games, so 500 expect z = 8,
    five standard errors above the bar, while a strategy no better than random expects z = 0.
    """
    import math

    ruleset = find_ruleset(preset)
    random_red = simulate(ruleset, players=players, games=games, seed=11, strategy="random").results.get("red", 0)
    club_red = simulate(ruleset, players=players, games=games, seed=11, strategy="club").results.get("red", 0)
    pooled = (random_red + club_red) / (2 * games)
    z = (club_red - random_red) / games / math.sqrt(pooled * (1 - pooled) * 2 / games)
    assert z > 3, (random_red, club_red, z)


def test_club_play_uses_the_doctor_and_the_maniac() -> None:
    from engine.events import Healed, ManiacActed

    ruleset = find_ruleset("georgian")
    events = [e for seed in range(20) for e in simulate_one(ruleset, seed).events]
    assert any(isinstance(e, Healed) for e in events)
    assert any(isinstance(e, ManiacActed) and e.target is not None for e in events)


def simulate_one(ruleset: Ruleset, seed: int) -> Game:
    import random

    return play_club_game(ruleset, ruleset.default_players, random.Random(seed))


def test_strategy_lists() -> None:
    assert parse_strategies("random") == ("random",)
    assert parse_strategies("club, random") == ("club", "random")
    assert parse_strategies("all") == ("random", "club")
    assert parse_strategies("club,club") == ("club",)
    for bad in ("", "smart", "random,smart", "all,club"):
        with pytest.raises(ValueError):
            parse_strategies(bad)


def test_simulate_refuses_no_games_and_unknown_strategies() -> None:
    with pytest.raises(ValueError):
        simulate(find_ruleset("classic"), players=10, games=0, seed=1)
    with pytest.raises(ValueError):
        simulate(find_ruleset("classic"), players=10, games=1, seed=1, strategy="smart")


@pytest.mark.parametrize("preset", ["classic", "georgian", "fiim"])
def test_every_preset_simulates_to_an_end(preset: str) -> None:
    report = simulate(find_ruleset(preset), players=find_ruleset(preset).default_players, games=200, seed=3)
    assert sum(report.results.values()) == 200
    assert "abandoned" not in report.results


def test_cli_prints_json() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mafiabot", "simulate", "--ruleset", "classic", "--players", "10", "--games", "200",
         "--seed", "1", "--strategy", "random", "--json"],
        check=True, capture_output=True, text=True,
    )
    data = json.loads(out.stdout)
    assert data["games"] == 200
    assert sum(data["results"].values()) == 200
    assert data["games_per_second"] > 0
    assert "baseline, not a prediction" in out.stderr
    assert "[" not in out.stderr  # no progress bar: stderr is not a terminal and none was asked for


def _simulate_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 (our own interpreter and module, no shell)
        [sys.executable, "-m", "mafiabot", "simulate", *args], capture_output=True, text=True, check=False
    )


def test_cli_compares_strategies_in_one_run() -> None:
    out = _simulate_cli("--ruleset", "georgian", "--games", "60", "--strategy", "all", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert list(data["strategies"]) == ["random", "club"]
    for report in data["strategies"].values():
        assert sum(report["results"].values()) == 60
        for share in report["shares"].values():
            assert share["low"] <= share["share"] <= share["high"]
    table = _simulate_cli("--ruleset", "fiim", "--games", "40", "--strategy", "random,club")
    assert table.returncode == 0, table.stderr
    assert "random" in table.stdout.splitlines()[1]
    assert "club" in table.stdout.splitlines()[1]
    assert "95% interval" in table.stdout


def test_cli_draws_a_progress_bar_on_request() -> None:
    out = _simulate_cli("--games", "30", "--strategy", "club", "--progress")
    assert out.returncode == 0, out.stderr
    assert "30/30 games" in out.stderr
    assert "baseline" not in out.stderr  # the warning is about random play only


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("--games", "0"), "--games: 0 is out of range"),
        (("--games", "-5"), "--games: -5 is out of range"),
        (("--games", "many"), "--games"),
        (("--strategy", "smart"), "--strategy: unknown strategy"),
        (("--ruleset", "georgian", "--players", "10"), "georgian seats 11, 12"),
        (("--ruleset", "classic", "--players", "13"), "players"),
    ],
)
def test_cli_refuses_bad_input(args: tuple[str, ...], complaint: str, capsys: pytest.CaptureFixture[str]) -> None:
    # By main in this process: the refusal is main's status and output (a run as a process of its
    # own is test_cli_refuses_an_unsupported_table_size's), and an interpreter for each would only add its start-up.
    try:
        status = main(["simulate", *args])
    except SystemExit as exit_:  # argparse's refusals end the way the process would
        status = exit_.code if isinstance(exit_.code, int) else 1
    out = capsys.readouterr()
    assert status == 2
    assert complaint in out.err
    assert out.out == ""


def test_cli_help_explains_every_option() -> None:
    out = _simulate_cli("--help")
    for option in ("--ruleset", "--players", "--games", "--seed", "--strategy", "--progress", "--json"):
        assert option in out.stdout
    assert "baseline" in out.stdout


def test_cli_refuses_an_unsupported_table_size() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mafiabot", "simulate", "--ruleset", "fiim", "--players", "7", "--games", "1"],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2
    assert "players" in out.stderr


def test_cli_compares_both_strategies_by_default() -> None:
    out = _simulate_cli("--games", "20", "--json")
    assert out.returncode == 0, out.stderr
    assert list(json.loads(out.stdout)["strategies"]) == ["random", "club"]


def test_club_players_do_not_peek_at_the_cards() -> None:
    """Before anyone speaks, the black team cannot know the Sheriff: its first shot and the Don's first
    check find him about as often as a blind pick among the 7 red seats would (1 in 7), not always."""
    import random

    from engine import FloorKind, Role
    from engine.events import DonChecked, FloorGiven, NightResolved

    ruleset = find_ruleset("classic")
    shots, checks = [], []
    for seed in range(700):
        game = play_club_game(ruleset, 10, random.Random(seed))
        sheriff = game.state.roles.index(Role.SHERIFF) + 1
        # A Sheriff who defended himself on Day 1 has told the table who he is: those games show nothing.
        day_one = game.events[: next(i for i, e in enumerate(game.events) if isinstance(e, NightResolved))]
        night_one = next(e for e in game.events if isinstance(e, NightResolved))
        opened = any(
            isinstance(e, FloorGiven)
            and e.turn.seat == sheriff
            and e.turn.kind in (FloorKind.TIE_SPEECH, FloorKind.DEFENSE)
            for e in day_one
        )
        if night_one.mafia_target is not None and not opened:
            shots.append(night_one.mafia_target == sheriff)
        first_check = next((e for e in game.events if isinstance(e, DonChecked)), None)
        if first_check is not None:
            checks.append(first_check.target == sheriff)
    for hits in (shots, checks):
        assert len(hits) > 500
        low, high = wilson_interval(sum(hits), len(hits), z=3.29)
        assert low <= 1 / 7 <= high, (sum(shots), len(shots), sum(checks), len(checks))
