"""The engine's queries: what the bot asks instead of knowing the rules, and that decide agrees."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    Act,
    CastLiftVote,
    CastVote,
    Check,
    Command,
    DeclareDraw,
    Disqualify,
    EndSpeech,
    FloorKind,
    Game,
    GameState,
    GiveFoul,
    Heal,
    ManiacShoot,
    Nominate,
    Pause,
    Phase,
    Result,
    Role,
    Ruleset,
    Seat,
    Shoot,
    StartGame,
    Team,
    Timeout,
    WinReason,
    critical_foul_count,
    critical_fouls,
    floor_holder,
    is_speech,
    legal_targets,
    lift_votes_needed,
    mafia_room_open,
    night_actors,
    nominations_open,
    shot_targets,
    silent_vote_target,
    vote_totals,
    win_by_count,
    winners,
    winning_team,
)
from engine import events as ev
from engine.errors import RulesError
from engine.queries import require_voter
from engine.view import GameView
from tests.engine.helpers import (
    PRESET_SEATINGS,
    TEN,
    TEN_DOCTOR,
    TWELVE,
    collect,
    end_floors,
    kill,
    lift,
    of_type,
    play_night,
    random_step,
    roles,
    speeches,
    start,
    start_table,
    to_day,
    to_night,
    vote,
)

ALL_TEN = tuple(range(1, 11))


def night_one(ruleset: Ruleset = CLASSIC, seating: str = TEN) -> Game:
    """Night 1 after a quiet first day."""
    game = start(ruleset, seating)
    to_night(game, 1)
    return game


def state_of(seating: str, dead: tuple[Seat, ...] = ()) -> GameState:
    """A bare state with the cards of ``seating`` and ``dead`` gone."""
    dealt = roles(seating)
    return GameState(roles=dealt, phase=Phase.SPEECHES, alive=[seat not in dead for seat in range(1, len(dealt) + 1)])


# -- legal targets ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "seat", "expected"),
    [
        (Act.SHOOT, 1, ALL_TEN),  # the don may shoot anyone alive, his own team included
        (Act.SHOOT, 2, ALL_TEN),
        (Act.CHECK, 1, tuple(s for s in ALL_TEN if s != 1)),
        (Act.CHECK, 4, tuple(s for s in ALL_TEN if s != 4)),
        (Act.SHOOT, 4, ()),  # the sheriff does not shoot
        (Act.CHECK, 2, ()),  # a plain mafioso does not check
        (Act.HEAL, 5, ()),  # no doctor at this table
        (Act.MANIAC, 6, ()),
        (Act.NOMINATE, 1, ()),  # no floor at night
        (Act.BEST_MOVE, 1, ()),
    ],
)
def test_night_one_targets_per_actor(action: Act, seat: Seat, expected: tuple[Seat, ...]) -> None:
    game = night_one()
    assert legal_targets(game.state, game.ruleset, action, seat) == expected


def test_the_dead_are_no_shot_but_may_still_be_checked() -> None:
    game = night_one()
    kill(game, 7)
    to_night(game, 2)
    assert legal_targets(game.state, game.ruleset, Act.SHOOT, 1) == (1, 2, 3, 4, 5, 6, 8, 9, 10)
    assert legal_targets(game.state, game.ruleset, Act.CHECK, 4) == (1, 2, 3, 5, 6, 7, 8, 9, 10)
    assert legal_targets(game.state, game.ruleset, Act.SHOOT, 7) == ()  # the dead do not act


@pytest.mark.parametrize(
    ("done", "action", "seat"),
    [
        (Shoot(seat=1, target=5), Act.SHOOT, 1),
        (Check(seat=1, target=5), Act.CHECK, 1),
        (Check(seat=4, target=5), Act.CHECK, 4),
    ],
)
def test_an_act_taken_leaves_no_targets_for_it(done: Command, action: Act, seat: Seat) -> None:
    game = night_one()
    game.apply(done)
    assert legal_targets(game.state, game.ruleset, action, seat) == ()


def test_no_targets_at_night_zero_or_during_a_pause() -> None:
    game = start()
    assert legal_targets(game.state, game.ruleset, Act.SHOOT, 1) == ()
    to_night(game, 1)
    game.apply(GiveFoul(seat=9))  # a judge's act keeps the night going
    game.apply(Pause())
    assert legal_targets(game.state, game.ruleset, Act.SHOOT, 1) == ()


DOCTOR = CLASSIC.replace(doctor=True, doctor_no_repeat_target=False, doctor_self_limit=None)


@pytest.mark.parametrize(
    ("rules", "saves", "expected"),
    [
        # The doctor (#5) saved #7 on night 1, then himself on night 2; these are night 3's choices.
        (DOCTOR, (7, 5), ALL_TEN),
        (DOCTOR.replace(doctor_no_repeat_target=True), (7, 5), (1, 2, 3, 4, 6, 7, 8, 9, 10)),
        (DOCTOR.replace(doctor_self_limit=1), (7, 5), (1, 2, 3, 4, 6, 7, 8, 9, 10)),
        (DOCTOR.replace(doctor_self_limit=2), (7, 5), ALL_TEN),
        (DOCTOR.replace(doctor_each_seat_once=True), (7, 5), (1, 2, 3, 4, 6, 8, 9, 10)),
    ],
)
def test_the_doctor_may_name_only_the_seats_his_limits_leave(
    rules: Ruleset, saves: tuple[Seat, Seat], expected: tuple[Seat, ...]
) -> None:
    game = night_one(rules, TEN_DOCTOR)
    for night, target in enumerate(saves, start=1):
        # The black shoot the seat the doctor saves: nobody dies, and the day passes quietly.
        play_night(game, shots={1: target, 2: target, 3: target}, heal=(5, target))
        to_night(game, night + 1)
    assert legal_targets(game.state, game.ruleset, Act.HEAL, 5) == expected


def test_the_maniac_names_anyone_alive_but_himself_once_his_first_kill_night_comes() -> None:
    game = night_one(GEORGIAN, TWELVE)
    assert GEORGIAN.maniac_first_kill_night == 2
    assert legal_targets(game.state, game.ruleset, Act.MANIAC, 6) == ()
    play_night(game, maniac=None)
    to_night(game, 2)
    alive = game.state.alive_seats()
    assert legal_targets(game.state, game.ruleset, Act.MANIAC, 6) == tuple(s for s in alive if s != 6)


@pytest.mark.parametrize(
    ("rules", "first_names", "expected"),
    [
        (CLASSIC, None, ALL_TEN),  # the speaker may put himself up
        (CLASSIC.replace(self_nomination=False), None, (1, 3, 4, 5, 6, 7, 8, 9, 10)),
        (CLASSIC, 4, (1, 2, 3, 5, 6, 7, 8, 9, 10)),  # #4 is up already
    ],
)
def test_the_speaker_nominates_the_living_not_yet_nominated(
    rules: Ruleset, first_names: Seat | None, expected: tuple[Seat, ...]
) -> None:
    game = start(rules)
    to_day(game, 1)
    if first_names is not None:
        game.apply(Nominate(seat=1, target=first_names))
    game.apply(EndSpeech(seat=1))
    assert floor_holder(game.state) == 2
    assert legal_targets(game.state, game.ruleset, Act.NOMINATE, 2) == expected
    assert legal_targets(game.state, game.ruleset, Act.NOMINATE, 3) == ()  # not his floor


def test_a_speaker_who_nominated_has_no_second_nomination() -> None:
    game = start()
    to_day(game, 1)
    speaker = game.state.floor
    assert speaker is not None
    game.apply(Nominate(seat=speaker.seat, target=3))
    assert legal_targets(game.state, game.ruleset, Act.NOMINATE, speaker.seat) == ()


def test_no_nominations_on_a_day_whose_vote_a_removal_cancelled() -> None:
    game = start()
    to_day(game, 1)
    assert nominations_open(game.state)
    game.apply(Disqualify(seat=9, reason="insults"))
    assert game.state.vote_cancelled
    assert not nominations_open(game.state)
    holder = floor_holder(game.state)
    assert holder is not None
    assert legal_targets(game.state, game.ruleset, Act.NOMINATE, holder) == ()


def test_targets_not_now_are_those_of_a_turn_drawn_ahead() -> None:
    # A menu drawn for #1's speech keeps its seats after #1 nominated #3: only #3 is gone from it.
    game = start()
    to_day(game, 1)
    game.apply(Nominate(seat=1, target=3))
    expected = (1, 2, 4, 5, 6, 7, 8, 9, 10)
    assert legal_targets(game.state, game.ruleset, Act.NOMINATE, 1, now=False) == expected
    assert legal_targets(game.state, game.ruleset, Act.NOMINATE, 5, now=False) == expected
    night = start()
    assert legal_targets(night.state, night.ruleset, Act.SHOOT, 2, now=False) == ALL_TEN


def test_shot_targets_are_the_living() -> None:
    game = night_one()
    assert shot_targets(game.state) == ALL_TEN
    kill(game, 7)
    assert shot_targets(game.state) == (1, 2, 3, 4, 5, 6, 8, 9, 10)


def test_the_best_move_names_any_seat_but_ones_own() -> None:
    game = night_one(FIIM)
    kill(game, 7)
    assert game.state.phase is Phase.BEST_MOVE
    assert legal_targets(game.state, game.ruleset, Act.BEST_MOVE, 7) == (1, 2, 3, 4, 5, 6, 8, 9, 10)
    assert legal_targets(game.state, game.ruleset, Act.BEST_MOVE, 8) == ()


def _command(action: Act, seat: Seat, target: Seat) -> Command:
    makers: dict[Act, Callable[[Seat, Seat], Command]] = {
        Act.SHOOT: lambda s, t: Shoot(seat=s, target=t),
        Act.CHECK: lambda s, t: Check(seat=s, target=t),
        Act.HEAL: lambda s, t: Heal(seat=s, target=t),
        Act.MANIAC: lambda s, t: ManiacShoot(seat=s, target=t),
        Act.NOMINATE: lambda s, t: Nominate(seat=s, target=t),
    }
    return makers[action](seat, target)


def _random_game(name: str, seed: int, steps: int = 400) -> Iterator[Game]:
    """A random game of preset ``name``, yielded before each of its steps until it ends."""
    ruleset, _seating = PRESET_SEATINGS[name]
    rng = random.Random(seed)
    game = Game(ruleset)
    game.apply(StartGame(players=ruleset.default_players, seed=seed))
    for _ in range(steps):
        if game.over:
            return
        yield game
        game.apply(random_step(game, rng))


@pytest.mark.parametrize("name", sorted(PRESET_SEATINGS))
@pytest.mark.parametrize("seed", [3, 11])
def test_legal_targets_are_exactly_what_the_engine_accepts_throughout_random_games(name: str, seed: int) -> None:
    checked = 0
    for game in _random_game(name, seed):
        state, ruleset = game.state, game.ruleset
        seats = range(1, state.players + 1)
        for action in (Act.SHOOT, Act.CHECK, Act.HEAL, Act.MANIAC, Act.NOMINATE):
            for seat in seats:
                accepted = tuple(t for t in seats if game.is_legal(_command(action, seat, t)))
                assert legal_targets(state, ruleset, action, seat) == accepted, (action, seat, state.phase)
                checked += len(accepted)
    assert checked > 0


# -- night actors and the floor ----------------------------------------------------------------------------


def test_night_actors_are_those_with_an_act_left() -> None:
    game = night_one()
    assert night_actors(game.state, game.ruleset) == (1, 2, 3, 4)
    game.apply(Shoot(seat=1, target=9))
    assert night_actors(game.state, game.ruleset) == (1, 2, 3, 4)  # the don still checks
    game.apply(Check(seat=1, target=4))
    assert night_actors(game.state, game.ruleset) == (2, 3, 4)
    assert game.waiting().actors == frozenset(night_actors(game.state, game.ruleset))


@pytest.mark.parametrize("phase", [Phase.NIGHT_ZERO, Phase.SPEECHES, Phase.BEST_MOVE, Phase.ENDED])
def test_no_night_actors_outside_the_night(phase: Phase) -> None:
    state = state_of(TEN)
    state.phase = phase
    assert night_actors(state, CLASSIC) == ()


def test_floor_holder_follows_the_floor() -> None:
    game = start()
    assert floor_holder(game.state) is None
    to_day(game, 1)
    assert floor_holder(game.state) == game.state.opener == 1
    game.apply(Timeout())
    assert floor_holder(game.state) == 2
    to_night(game, 1)
    assert floor_holder(game.state) is None


@pytest.mark.parametrize(
    ("kind", "speech"),
    [
        (FloorKind.SPEECH, True),
        (FloorKind.SILENT, True),
        (FloorKind.LAST_WORD, False),
        (FloorKind.DEFENSE, False),
        (FloorKind.TIE_SPEECH, False),
        (FloorKind.FAREWELL, False),
    ],
)
def test_is_speech(kind: FloorKind, speech: bool) -> None:
    assert is_speech(kind) is speech


# -- votes ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("alive", "needed"), [(10, 6), (9, 5), (8, 5), (7, 4), (4, 3), (3, 2)])
def test_lift_votes_needed_is_more_than_half_of_the_living(alive: int, needed: int) -> None:
    state = state_of(TEN, dead=tuple(range(alive + 1, 11)))
    assert lift_votes_needed(state) == needed


@pytest.mark.parametrize("yes", [5, 6])
def test_the_lift_vote_passes_exactly_at_the_queried_threshold(yes: int) -> None:
    game = start()
    game.apply(Timeout())
    speeches(game, {1: 5, 3: 2})
    end_floors(game, Phase.DEFENSE)
    vote(game, {5: [1, 3, 4, 6, 7]})
    end_floors(game, Phase.TIE_SPEECHES)
    vote(game, {5: [1, 3, 4, 6, 7]})
    needed = lift_votes_needed(game.state)
    events = collect(game, lambda: lift(game, range(1, yes + 1)))
    assert of_type(events, ev.LiftVoteClosed)[0].passed is (yes >= needed)


@pytest.mark.parametrize(
    ("candidates", "target"),
    [((3,), 3), ((3, 7), 7), ((7, 3), 3), ((2, 5, 9), 9)],
)
def test_silent_votes_go_to_the_last_candidate(candidates: tuple[Seat, ...], target: Seat) -> None:
    assert silent_vote_target(candidates) == target


@pytest.mark.parametrize(
    ("tally", "silent", "totals"),
    [
        (((3, (1, 2)), (7, (4,))), (5, 6), ((3, 2), (7, 3))),
        (((3, ()), (7, ())), (), ((3, 0), (7, 0))),
        (((3, (1, 2, 4, 5, 6, 8, 9, 10)), (7, ())), (7,), ((3, 8), (7, 1))),
    ],
)
def test_vote_totals_add_the_silent_to_the_last(
    tally: tuple[tuple[Seat, tuple[Seat, ...]], ...], silent: tuple[Seat, ...], totals: tuple[tuple[Seat, int], ...]
) -> None:
    assert vote_totals(tally, silent) == totals


def test_vote_totals_agree_with_who_the_engine_votes_out() -> None:
    game = start()
    game.apply(Timeout())
    speeches(game, {1: 3, 2: 7})
    events = collect(game, lambda: vote(game, {3: [1, 2, 4, 5]}))
    closed = of_type(events, ev.VotingClosed)[0]
    totals = dict(vote_totals(closed.tally, closed.silent))
    assert totals == {3: 4, 7: 6}
    assert of_type(events, ev.PlayersVotedOut)[0].seats == (7,)


def _voter(state: GameView, seat: Seat, candidate: Seat | None) -> bool:
    try:
        require_voter(state, seat, candidate)
    except RulesError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(PRESET_SEATINGS))
@pytest.mark.parametrize("seed", [5, 17])
def test_who_may_vote_is_exactly_whom_the_engine_lets_vote_throughout_random_games(name: str, seed: int) -> None:
    voted = 0
    for game in _random_game(name, seed):
        state = game.state
        seats = range(1, state.players + 1)
        for seat in seats:
            assert _voter(state, seat, None) == game.is_legal(CastLiftVote(seat=seat, yes=True)), (seat, state.phase)
            for candidate in seats:
                accepted = game.is_legal(CastVote(seat=seat, candidate=candidate))
                assert _voter(state, seat, candidate) == accepted, (seat, candidate, state.phase)
                voted += accepted
    assert voted > 0


# -- fouls ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("removal_at", "critical"), [(4, 3), (3, 2), (1, 0)])
def test_critical_foul_count_is_one_short_of_removal(removal_at: int, critical: int) -> None:
    assert critical_foul_count(CLASSIC.replace(foul_removal_at=removal_at)) == critical


@pytest.mark.parametrize(
    ("fouls", "dead", "expected"),
    [
        ({}, (), ()),
        ({2: 2, 5: 3}, (), (5,)),
        ({2: 3, 5: 3, 8: 1}, (), (2, 5)),
        ({2: 3, 5: 3}, (5,), (2,)),  # a seat gone from the table is nobody's worry
    ],
)
def test_critical_fouls_are_the_living_one_foul_from_removal(
    fouls: dict[Seat, int], dead: tuple[Seat, ...], expected: tuple[Seat, ...]
) -> None:
    state = state_of(TEN, dead)
    state.fouls = [[False] * fouls.get(seat, 0) for seat in ALL_TEN]
    assert critical_fouls(state, CLASSIC) == expected


def test_the_morning_announces_the_critical_fouls_the_query_names() -> None:
    game = start(GEORGIAN, TWELVE)
    for _ in range(3):
        game.apply(GiveFoul(seat=8))
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.CriticalFoulsAnnounced)[0].seats == critical_fouls(game.state, GEORGIAN) == (8,)


# -- the result ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seating", "dead", "expected"),
    [
        (TEN, (), None),
        (TEN, (1, 2, 3), (Result.RED, WinReason.ALL_BLACK_GONE)),
        (TEN, (5, 6, 7), None),  # three black against four red: not yet
        (TEN, (5, 6, 7, 8), (Result.BLACK, WinReason.PARITY)),  # as many black as red
        (TWELVE, (1, 2, 3, 7, 8, 9, 10, 11, 12), None),  # the maniac still plays
        (TWELVE, (1, 2, 3, 4, 5, 7, 8, 9, 10, 11), (Result.MANIAC, WinReason.MANIAC_DUEL)),
        (TEN, ALL_TEN, (Result.DRAW, WinReason.EVERYONE_GONE)),
    ],
)
def test_win_by_count(seating: str, dead: tuple[Seat, ...], expected: tuple[Result, WinReason] | None) -> None:
    assert win_by_count(state_of(seating, dead)) == expected


@pytest.mark.parametrize(
    ("result", "team"),
    [
        (Result.RED, Team.RED),
        (Result.BLACK, Team.BLACK),
        (Result.MANIAC, Team.MANIAC),
        (Result.DRAW, None),
        (Result.ABANDONED, None),
    ],
)
def test_winning_team(result: Result, team: Team | None) -> None:
    assert winning_team(result) is team


def test_winners_are_the_seats_of_the_winning_side_alive_or_not() -> None:
    game = start()
    assert winners(game.state) == ()
    to_day(game, 1)
    for seat in (1, 2, 3):
        game.apply(Disqualify(seat=seat))
    assert game.state.outcome is not None
    assert game.state.outcome.result is Result.RED
    assert winners(game.state) == (4, 5, 6, 7, 8, 9, 10)
    assert all(game.state.role(seat) is not Role.DON for seat in winners(game.state))


def test_nobody_wins_a_draw() -> None:
    game = start()
    game.apply(DeclareDraw())
    assert winners(game.state) == ()


# -- the mafia's room ----------------------------------------------------------------------------------------


def test_the_mafia_room_opens_for_the_nights_only() -> None:
    game = Game(CLASSIC)
    assert not mafia_room_open(game.state)
    game = start()
    assert mafia_room_open(game.state)  # the acquaintance night
    to_day(game, 1)
    assert not mafia_room_open(game.state)
    to_night(game, 1)
    assert mafia_room_open(game.state)
    kill(game, 7)  # the dawn's command leaves the night behind
    assert game.state.phase is Phase.LAST_WORDS
    assert not mafia_room_open(game.state)


def test_the_mafia_room_closes_for_the_best_move() -> None:
    game = night_one(FIIM)
    kill(game, 7)
    assert game.state.phase is Phase.BEST_MOVE
    assert not mafia_room_open(game.state)


@pytest.mark.parametrize("phase", list(Phase))
def test_mafia_room_open_by_phase(phase: Phase) -> None:
    state = state_of(TEN)
    state.phase = phase
    assert mafia_room_open(state) is (phase in (Phase.NIGHT_ZERO, Phase.NIGHT))


def test_queries_answer_on_a_custom_table_too() -> None:
    game = start_table("DSCCCC")
    to_night(game, 1)
    assert night_actors(game.state, game.ruleset) == (1, 2)
    assert legal_targets(game.state, game.ruleset, Act.CHECK, 2) == (1, 3, 4, 5, 6)
