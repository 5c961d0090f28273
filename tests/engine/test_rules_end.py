"""rules.md#win-check, rules.md#points, rules.md#judge-endings: wins, Best Move, points, draws, pauses, timers."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    Abandon,
    AlreadyActedError,
    AwardPoints,
    CastLiftVote,
    CastVote,
    Cause,
    Check,
    Command,
    DeclareDraw,
    Disqualify,
    EndSpeech,
    FloorKind,
    Game,
    GiveFoul,
    Heal,
    IllegalActionError,
    InvalidCommandError,
    Leave,
    MakeBestMove,
    ManiacShoot,
    Nominate,
    NotYourTurnError,
    Pause,
    Phase,
    Result,
    Resume,
    Role,
    RulesError,
    Ruleset,
    Seat,
    Shoot,
    StartGame,
    Team,
    Timeout,
    WinReason,
    WrongPhaseError,
)
from engine import events as ev
from tests.engine.helpers import (
    CLASSIC_DOCTOR,
    TEN,
    TEN_DOCTOR,
    TWELVE,
    assert_rejected,
    collect,
    end_floors,
    kill,
    lift,
    of_type,
    phase_of,
    play_day,
    roles,
    speeches,
    start,
    start_preset,
    to_day,
    to_night,
    vote,
)

R, B, K = Result.RED, Result.BLACK, Result.MANIAC


# -- win checks ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "seating", "removed", "result", "reason"),
    [
        # classic / fiim: B = 0 -> red; B >= R -> black.
        (CLASSIC, TEN, [1, 2, 3], R, WinReason.ALL_BLACK_GONE),
        (CLASSIC, TEN, [5, 6, 7, 8], B, WinReason.PARITY),
        (CLASSIC, TEN, [2, 5, 6, 7, 8, 9], B, WinReason.PARITY),
        (CLASSIC, TEN, [1, 5, 6, 7, 2, 8, 9, 10], B, WinReason.PARITY),
        (FIIM, TEN, [3, 2, 1], R, WinReason.ALL_BLACK_GONE),
        (FIIM, TEN, [10, 9, 8, 7], B, WinReason.PARITY),
        # georgian: the maniac alive blocks parity and the honest win; K and N <= 2 -> maniac.
        (GEORGIAN, TWELVE, [4, 5, 7, 8, 9, 6], B, WinReason.PARITY),
        (GEORGIAN, TWELVE, [1, 2, 3, 6], R, WinReason.ALL_BLACK_GONE),
        (GEORGIAN, TWELVE, [1, 2, 3, 4, 5, 8, 9, 10, 11, 12], K, WinReason.MANIAC_DUEL),
        (GEORGIAN, TWELVE, [2, 3, 4, 5, 7, 8, 9, 10, 11, 12], K, WinReason.MANIAC_DUEL),
        (GEORGIAN, TWELVE, [4, 5, 7, 8, 9, 10, 11, 12, 2, 3], K, WinReason.MANIAC_DUEL),
        (GEORGIAN, TWELVE, [1, 2, 4, 5, 7, 8, 9, 10, 11, 12], K, WinReason.MANIAC_DUEL),
    ],
)
def test_win_check_runs_after_each_departure(
    ruleset: Ruleset, seating: str, removed: list[Seat], result: Result, reason: WinReason
) -> None:
    game = start(ruleset, seating)
    for seat in removed[:-1]:
        game.apply(Disqualify(seat=seat))
        assert game.outcome() is None, f"ended early after #{seat}"
    events = game.apply(Disqualify(seat=removed[-1]))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=result, reason=reason)]
    assert game.state.phase is Phase.ENDED


def test_georgian_maniac_alive_with_mafia_at_parity_continues() -> None:
    game = start(GEORGIAN, TWELVE)
    for seat in (4, 5, 7, 8, 9):
        game.apply(Disqualify(seat=seat))
    assert game.state.team_alive() == {Team.BLACK: 3, Team.RED: 3, Team.MANIAC: 1}
    assert game.outcome() is None


def test_georgian_all_mafia_dead_with_the_maniac_alive_continues_until_he_is_voted_out() -> None:
    # rules.md#win-georgian: maniac plus 3 honest alive -> continue; the maniac is voted out -> honest win.
    game = start(GEORGIAN, TWELVE)
    for seat in (1, 2, 3, 4, 5, 7, 8, 9):
        game.apply(Disqualify(seat=seat))
    assert game.state.alive_seats() == [6, 10, 11, 12]
    assert game.outcome() is None
    to_day(game, 2)
    events = collect(game, lambda: speeches(game, {10: 6}))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=R, reason=WinReason.ALL_BLACK_GONE)]


def test_classic_parity_after_a_day_vote_ends_the_game_with_no_night() -> None:
    # rules.md#win-classic: Day 3, B = {D#1, M#2, M#3}, R = 4; red #7 is voted out -> black wins at once.
    game = start(CLASSIC)
    game.apply(Timeout())
    play_day(game, {1: 9, 2: 10})  # #10 leaves
    kill(game, 9)
    play_day(game, {2: 8})  # #8 leaves
    game.apply(Timeout())  # Night 2: a miss
    assert game.state.alive_seats() == [1, 2, 3, 4, 5, 6, 7]
    events = collect(game, lambda: speeches(game, {3: 7}))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=B, reason=WinReason.PARITY)]
    assert of_type(events, ev.NightFell) == []
    assert game.state.phase is Phase.FINAL_WORDS
    assert game.state.floor == ev.Turn(7, FloorKind.FAREWELL, 60)
    end_floors(game, Phase.FINAL_WORDS)
    assert phase_of(game) is Phase.ENDED


def test_night_kills_apply_together_before_the_win_check() -> None:
    # Georgian Night 2: the mafia and the maniac each kill; both deaths apply at dawn, then the check runs.
    game = start(GEORGIAN, TWELVE)
    for seat in (7, 8, 9, 10, 11):
        game.apply(Disqualify(seat=seat))
    assert game.state.alive_seats() == [1, 2, 3, 4, 5, 6, 12]
    to_night(game, 2)
    game.apply(Shoot(seat=1, target=4))
    game.apply(ManiacShoot(seat=6, target=12))
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.NightResolved)[0].killed == (4, 12)
    # M3 H1 K1: the maniac blocks parity, so the game goes on.
    assert of_type(events, ev.GameEnded) == []


def test_win_at_dawn_ends_the_game_before_the_day() -> None:
    game = start(CLASSIC)
    for seat in (5, 6, 7):
        game.apply(Disqualify(seat=seat))
    to_night(game, 1)
    events = collect(game, lambda: kill(game, 8))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=B, reason=WinReason.PARITY)]
    assert of_type(events, ev.DayStarted) == []
    assert game.state.phase is Phase.ENDED


# -- fiim Best Move --------------------------------------------------------------------------------------------


def fiim_best_move() -> Game:
    game = start(FIIM)
    to_night(game, 1)
    events = collect(game, lambda: kill(game, 7))
    assert of_type(events, ev.BestMoveAsked) == [ev.BestMoveAsked(seat=7)]
    assert game.state.phase is Phase.BEST_MOVE
    assert game.waiting().actors == frozenset({7})
    return game


@pytest.mark.parametrize(
    ("targets", "black", "bonus"),
    [((1, 2, 3), 3, Decimal("0.4")), ((2, 5, 1), 2, Decimal("0.25")), ((2, 5, 9), 1, 0), ((4, 5, 9), 0, 0)],
)
def test_fiim_best_move_scores_by_black_named(targets: tuple[Seat, ...], black: int, bonus: Decimal | int) -> None:
    # rules.md#best-move: Red later wins -> #7 totals 1.25 with 2 black named, or 1.4 with 3.
    game = fiim_best_move()
    events = collect(game, lambda: game.apply(MakeBestMove(seat=7, targets=targets)))
    assert events[0] == ev.BestMoveMade(seat=7, targets=targets, black=black)
    assert isinstance(events[1], ev.DayStarted)
    assert game.state.floor == ev.Turn(7, FloorKind.LAST_WORD, 60)
    for seat in (1, 2, 3):
        game.apply(Disqualify(seat=seat))
    assert game.state.outcome is not None
    assert game.state.outcome.result is R
    assert game.points()[7] == 1 + bonus


def test_fiim_best_move_is_published_before_the_victims_last_word() -> None:
    game = fiim_best_move()
    events = collect(game, lambda: game.apply(MakeBestMove(seat=7, targets=(1, 2, 3))))
    assert [type(e).__name__ for e in events[:2]] == ["BestMoveMade", "DayStarted"]
    assert game.state.phase is Phase.LAST_WORDS


@pytest.mark.parametrize(
    ("seat", "targets", "error"),
    [
        (7, (1, 2), InvalidCommandError),
        (7, (1, 2, 3, 4), InvalidCommandError),
        (7, (1, 1, 2), InvalidCommandError),
        (7, (7, 1, 2), RulesError),
        (7, (1, 2, 11), InvalidCommandError),
        (5, (1, 2, 3), NotYourTurnError),
    ],
)
def test_fiim_best_move_must_name_three_other_seats(
    seat: Seat, targets: tuple[Seat, ...], error: type[RulesError]
) -> None:
    game = fiim_best_move()
    assert_rejected(game, MakeBestMove(seat=seat, targets=targets), error)


def test_fiim_best_move_timeout_gives_no_best_move() -> None:
    game = fiim_best_move()
    game.apply(Timeout())
    assert game.state.phase is Phase.LAST_WORDS
    for seat in (1, 2, 3):
        game.apply(Disqualify(seat=seat))
    assert game.points()[7] == 1


def test_fiim_no_best_move_after_a_miss() -> None:
    game = start(FIIM)
    to_night(game, 1)
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.BestMoveAsked) == []
    assert game.state.phase is Phase.SPEECHES


def test_fiim_no_best_move_after_night_two() -> None:
    game = start(FIIM)
    to_night(game, 2)
    events = collect(game, lambda: kill(game, 7))
    assert of_type(events, ev.BestMoveAsked) == []


def test_fiim_best_move_voided_after_two_departures_on_day_one() -> None:
    game = start(FIIM)
    game.apply(Timeout())
    speeches(game, {1: 5, 3: 6})
    vote(game, {5: [1, 2, 3, 4, 7]})
    end_floors(game, Phase.TIE_SPEECHES)
    vote(game, {5: [1, 2, 3, 4, 7]})
    lift(game, range(1, 9))
    end_floors(game, Phase.FAREWELL)
    assert not game.state.is_alive(5)
    assert not game.state.is_alive(6)
    events = collect(game, lambda: kill(game, 7))
    assert of_type(events, ev.BestMoveAsked) == []
    assert game.state.phase is Phase.LAST_WORDS


def test_fiim_best_move_kept_after_one_departure_on_day_one() -> None:
    game = start(FIIM)
    game.apply(Timeout())
    play_day(game, {1: 5, 3: 6})
    events = collect(game, lambda: kill(game, 7))
    assert of_type(events, ev.BestMoveAsked) == [ev.BestMoveAsked(seat=7)]


def test_classic_has_no_best_move() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    events = collect(game, lambda: kill(game, 7))
    assert of_type(events, ev.BestMoveAsked) == []


# -- points -----------------------------------------------------------------------------------------------------


def red_win(game: Game) -> None:
    for seat in (1, 2, 3):
        game.apply(Disqualify(seat=seat))
    assert game.state.outcome is not None
    assert game.state.outcome.result is R


def test_points_are_zero_until_the_result_is_fixed() -> None:
    game = start(CLASSIC)
    assert set(game.points().values()) == {Decimal(0)}


def test_classic_win_gives_one_point_to_every_winner_alive_dead_or_removed() -> None:
    game = start(CLASSIC)
    game.apply(Disqualify(seat=9))
    to_night(game, 1)
    kill(game, 10)
    red_win(game)
    points = game.points()
    assert all(points[seat] == 1 for seat in range(4, 11))
    assert all(points[seat] == 0 for seat in (1, 2, 3))


def test_fiim_removal_costs_half_a_point() -> None:
    game = start(FIIM)
    game.apply(Leave(seat=9))
    red_win(game)
    points = game.points()
    assert points[9] == Decimal("0.5")
    assert points[1] == Decimal("-0.5")
    assert points[5] == 1


@pytest.mark.parametrize("cause", ["fouls", "oaths", "disqualified", "left"])
def test_fiim_penalty_applies_to_every_kind_of_removal(cause: str) -> None:
    game = start(FIIM)
    if cause == "fouls":
        for _ in range(4):
            game.apply(GiveFoul(seat=9))
    elif cause == "oaths":
        game.apply(GiveFoul(seat=9, oath=True))
        game.apply(GiveFoul(seat=9, oath=True))
    elif cause == "disqualified":
        game.apply(Disqualify(seat=9))
    else:
        game.apply(Leave(seat=9))
    assert game.state.departure(9).cause is Cause(cause)  # type: ignore[union-attr]
    game.apply(DeclareDraw())
    assert game.points()[9] == Decimal("-0.5")


def test_classic_removal_costs_nothing() -> None:
    game = start(CLASSIC)
    game.apply(Leave(seat=9))
    red_win(game)
    assert game.points()[9] == 1


def test_maniac_win_gives_a_point_to_the_maniac_only() -> None:
    game = start(GEORGIAN, TWELVE)
    for seat in (1, 2, 3, 4, 5, 8, 9, 10, 11, 12):
        game.apply(Disqualify(seat=seat))
    points = game.points()
    assert points[6] == 1
    assert all(value == 0 for seat, value in points.items() if seat != 6)


def test_black_win_gives_a_point_to_each_black_only() -> None:
    game = start(CLASSIC)
    for seat in (5, 6, 7, 8):
        game.apply(Disqualify(seat=seat))
    points = game.points()
    assert [points[seat] for seat in range(1, 11)] == [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]


def test_draw_gives_nobody_points() -> None:
    game = start(CLASSIC)
    game.apply(DeclareDraw())
    assert set(game.points().values()) == {Decimal(0)}


def test_judge_extra_points_are_added_to_the_total() -> None:
    game = start(CLASSIC)
    game.apply(AwardPoints(seat=4, value="0.3", reason="great sheriff play"))
    game.apply(AwardPoints(seat=5, value="-0.2", reason="slow"))
    red_win(game)
    points = game.points()
    assert points[4] == Decimal("1.3")
    assert points[5] == Decimal("0.8")
    assert game.state.extra_points == [(4, "0.3", "great sheriff play"), (5, "-0.2", "slow")]


@pytest.mark.parametrize("value", ["abc", "0", "NaN", "Infinity", ""])
def test_judge_extra_points_must_be_a_finite_non_zero_number(value: str) -> None:
    game = start(CLASSIC)
    assert_rejected(game, AwardPoints(seat=4, value=value), InvalidCommandError, "points.invalid_value")


def test_fiim_total_adds_best_move_penalties_and_extra_points() -> None:
    game = fiim_best_move()
    game.apply(MakeBestMove(seat=7, targets=(1, 2, 3)))
    game.apply(AwardPoints(seat=7, value="0.1"))
    red_win(game)
    assert game.points()[7] == Decimal("1.5")


# -- fiim: no departures -> draw ----------------------------------------------------------------------------------


def test_fiim_draw_after_three_nights_and_two_days_without_departures() -> None:
    # rules.md#draw-no-departures: misses on Nights 1-3, no elimination on Days 2 and 3 -> draw after Night 3.
    game = start(FIIM)
    to_night(game, 3)
    assert game.outcome() is None
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=Result.DRAW, reason=WinReason.NO_DEPARTURES)]
    assert set(game.points().values()) == {Decimal(0)}


def test_fiim_draw_counts_from_a_night_even_after_a_day_one_departure() -> None:
    game = start(FIIM)
    game.apply(Timeout())
    play_day(game, {1: 5, 3: 6})
    to_night(game, 3)
    game.apply(Timeout())
    assert game.state.outcome is not None
    assert game.state.outcome.reason is WinReason.NO_DEPARTURES


def test_fiim_departure_restarts_the_draw_count() -> None:
    game = start(FIIM)
    to_day(game, 3)
    play_day(game, {3: 5})  # Day 3: #5 leaves
    to_night(game, 4)
    game.apply(Timeout())
    assert game.outcome() is None
    to_night(game, 5)
    game.apply(Timeout())
    assert game.state.outcome is not None
    assert game.state.outcome.reason is WinReason.NO_DEPARTURES


def test_fiim_removal_at_night_counts_as_a_departure() -> None:
    game = start(FIIM)
    to_night(game, 2)
    game.apply(Disqualify(seat=9))
    to_night(game, 3)
    game.apply(Timeout())
    assert game.outcome() is None


@pytest.mark.parametrize("ruleset", [CLASSIC, GEORGIAN], ids=["classic", "georgian"])
def test_no_departure_draw_is_fiim_only(ruleset: Ruleset) -> None:
    game = start(ruleset, TEN if ruleset is CLASSIC else TWELVE)
    to_night(game, 6)
    game.apply(Timeout())
    assert game.outcome() is None


# -- pause and resume -------------------------------------------------------------------------------------------


@pytest.fixture
def paused_vote() -> Game:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game, {1: 3, 2: 7})
    game.apply(Pause())
    return game


@pytest.mark.parametrize(
    "command",
    [CastVote(seat=1, candidate=3), Timeout(), Nominate(seat=1, target=2)],
    ids=["vote", "timeout", "nominate"],
)
def test_player_actions_and_timeouts_are_rejected_while_paused(paused_vote: Game, command: Command) -> None:
    assert_rejected(paused_vote, command, RulesError)


def test_paused_vote_reports_why() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game, {1: 3, 2: 7})
    game.apply(Pause())
    assert_rejected(game, CastVote(seat=1, candidate=3), IllegalActionError, "game.paused")
    game.apply(Resume())
    game.apply(CastVote(seat=1, candidate=3))


@pytest.mark.parametrize(
    "command",
    [EndSpeech(seat=1), Nominate(seat=1, target=3), Timeout()],
    ids=["end-speech", "nominate", "timeout"],
)
def test_day_actions_are_rejected_while_paused(command: Command) -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    game.apply(Pause())
    assert_rejected(game, command, IllegalActionError, "game.paused")
    game.apply(Resume())
    game.apply(command)


@pytest.mark.parametrize(
    "command",
    [Shoot(seat=1, target=5), Check(seat=4, target=1), Heal(seat=5, target=6), Timeout()],
    ids=["shoot", "check", "heal", "timeout"],
)
def test_night_actions_are_rejected_while_paused(command: Command) -> None:
    game = start(CLASSIC_DOCTOR, TEN_DOCTOR)
    to_night(game, 1)
    game.apply(Pause())
    assert_rejected(game, command, IllegalActionError, "game.paused")
    game.apply(Resume())
    game.apply(command)


def test_lift_vote_and_best_move_are_rejected_while_paused() -> None:
    game = fiim_best_move()
    game.apply(Pause())
    assert_rejected(game, MakeBestMove(seat=7, targets=(1, 2, 3)), IllegalActionError, "game.paused")
    game.apply(Resume())
    game.apply(MakeBestMove(seat=7, targets=(1, 2, 3)))
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game, {1: 5, 3: 2})
    vote(game, {5: [1, 3, 4, 6, 7]})
    end_floors(game, Phase.TIE_SPEECHES)
    vote(game, {5: [1, 3, 4, 6, 7]})
    game.apply(Pause())
    assert_rejected(game, CastLiftVote(seat=1), IllegalActionError, "game.paused")


def test_judge_may_still_foul_and_remove_while_paused() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    game.apply(Pause(seat=6))
    game.apply(GiveFoul(seat=3))
    game.apply(Leave(seat=6))
    assert game.state.paused
    assert not game.state.is_alive(6)


def test_pause_twice_and_resume_unpaused_are_rejected() -> None:
    game = start(CLASSIC)
    assert_rejected(game, Resume(), IllegalActionError, "game.not_paused")
    game.apply(Pause())
    assert_rejected(game, Pause(), AlreadyActedError, "game.already_paused")
    assert game.apply(Resume()) == (ev.Resumed(),)
    assert not game.state.paused


def test_technical_pause_names_the_seat() -> None:
    game = start(CLASSIC)
    assert game.apply(Pause(seat=6)) == (ev.Paused(seat=6),)
    assert game.state.pause_seat == 6


# -- stale timers -------------------------------------------------------------------------------------------------


def test_timeout_for_the_current_wait_is_accepted() -> None:
    game = start(CLASSIC)
    game.apply(Timeout(step=game.waiting().timer))
    assert game.state.phase is Phase.SPEECHES


def test_stale_timeout_is_rejected() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    step = game.waiting().timer
    game.apply(EndSpeech(seat=1))
    assert_rejected(game, Timeout(step=step), IllegalActionError, "timeout.stale")
    assert game.state.floor is not None
    assert game.state.floor.seat == 2


def test_each_vote_window_has_its_own_timer() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game, {1: 3, 2: 7})
    first = game.waiting().timer
    game.apply(Timeout(step=first))
    assert_rejected(game, Timeout(step=first), IllegalActionError, "timeout.stale")


# -- the judge ends the game ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "result", "reason"),
    [(DeclareDraw(), Result.DRAW, WinReason.DECLARED_DRAW), (Abandon(), Result.ABANDONED, WinReason.ABANDONED)],
)
def test_judge_can_end_the_game(command: Command, result: Result, reason: WinReason) -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    assert game.apply(command) == (ev.GameEnded(result=result, reason=reason),)
    assert game.over
    assert set(game.points().values()) == {Decimal(0)}
    assert_rejected(game, EndSpeech(seat=2), WrongPhaseError)
    assert_rejected(game, DeclareDraw(), WrongPhaseError, "game.over")
    assert_rejected(game, Abandon(), WrongPhaseError, "game.over")
    assert_rejected(game, Timeout(), WrongPhaseError, "game.over")


def test_abandoned_game_gives_no_points_even_with_extra_points() -> None:
    game = start(CLASSIC)
    game.apply(AwardPoints(seat=4, value="1"))
    game.apply(Abandon())
    assert set(game.points().values()) == {Decimal(0)}


# -- starting ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [Timeout(), EndSpeech(seat=1), DeclareDraw(), Pause()])
def test_nothing_happens_before_the_deal(command: Command) -> None:
    game = Game(CLASSIC)
    assert_rejected(game, command, WrongPhaseError, "game.not_started")


def test_game_starts_only_once() -> None:
    game = start(CLASSIC)
    assert_rejected(game, StartGame(players=10), WrongPhaseError, "game.already_started")


@pytest.mark.parametrize(("preset", "players"), [("classic", 5), ("classic", 13), ("georgian", 10), ("fiim", 12)])
def test_unsupported_table_size_is_refused_at_the_start(preset: str, players: int) -> None:
    game = Game(start_preset(preset).ruleset)
    assert_rejected(game, StartGame(players=players), InvalidCommandError, "start.players_not_supported")


def test_explicit_seating_must_match_the_setup() -> None:
    game = Game(CLASSIC)
    assert_rejected(game, StartGame(players=10, roles=roles("DDMSCCCCCC")), InvalidCommandError)


@pytest.mark.parametrize("preset", ["classic", "georgian", "fiim"])
@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_seeded_deal_is_repeatable_and_follows_the_setup(preset: str, seed: int) -> None:
    ruleset = start_preset(preset).ruleset
    players = ruleset.default_players
    first = Game(ruleset)
    first.apply(StartGame(players=players, seed=seed))
    second = Game(ruleset)
    second.apply(StartGame(players=players, seed=seed))
    assert first.state.roles == second.state.roles
    assert Counter(first.state.roles) == Counter(ruleset.roles_for(players))
    assert Role.DON in first.state.roles
