"""rules.md#night-zero and rules.md#day: Night 0, speeches, nominations, the recap, defenses, single nominees."""

from __future__ import annotations

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    AlreadyActedError,
    Check,
    Command,
    EndSpeech,
    FloorKind,
    Game,
    Heal,
    InvalidCommandError,
    InvalidTargetError,
    ManiacShoot,
    Nominate,
    NotYourTurnError,
    Phase,
    Ruleset,
    Seat,
    Shoot,
    Timeout,
    VoteKind,
    WrongPhaseError,
)
from engine import events as ev
from engine.ids import NoVoteReason
from tests.engine.helpers import (
    CLASSIC_DOCTOR,
    TEN_DOCTOR,
    TWELVE,
    assert_rejected,
    collect,
    end_floors,
    kill,
    of_type,
    phase_of,
    play_day,
    play_night,
    speeches,
    start,
    start_preset,
    to_day,
    to_night,
    to_speeches,
    vote,
)

PRESETS = ["classic", "georgian", "fiim"]


def floor_order(game: Game) -> list[tuple[int, FloorKind]]:
    """Who takes the floor until the day's speeches are over, with no nominations."""
    order = []
    while game.state.phase in (Phase.LAST_WORDS, Phase.SPEECHES) and game.state.floor is not None:
        order.append((game.state.floor.seat, game.state.floor.kind))
        game.apply(EndSpeech(seat=game.state.floor.seat))
    return order


# -- Night 0 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_game_starts_in_night_zero(preset: str) -> None:
    game = start_preset(preset)
    assert game.state.phase is Phase.NIGHT_ZERO
    assert game.state.night == 0
    assert game.waiting().actors == frozenset()


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize(
    "command",
    [Shoot(seat=1, target=5), Shoot(seat=2, target=5), Check(seat=1, target=4), Check(seat=4, target=1)],
    ids=["don-shoots", "mafia-shoots", "don-checks", "sheriff-checks"],
)
def test_night_zero_has_no_kills_or_checks(preset: str, command: Command) -> None:
    game = start_preset(preset)
    assert_rejected(game, command, WrongPhaseError, "night.night_zero")


def test_night_zero_has_no_doctor_save() -> None:
    game = start(CLASSIC_DOCTOR, TEN_DOCTOR)
    assert_rejected(game, Heal(seat=5, target=5), WrongPhaseError, "night.night_zero")


def test_night_zero_has_no_maniac_shot() -> None:
    game = start(GEORGIAN, TWELVE)
    assert_rejected(game, ManiacShoot(seat=6, target=7), WrongPhaseError, "night.night_zero")


@pytest.mark.parametrize(("preset", "players"), [("classic", 10), ("georgian", 12), ("fiim", 10)])
def test_day_one_starts_with_everyone_alive(preset: str, players: int) -> None:
    game = start_preset(preset)
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.DayStarted) == [ev.DayStarted(day=1, opener=1, vote_cancelled=False)]
    assert game.state.alive_seats() == list(range(1, players + 1))
    assert game.state.phase is Phase.SPEECHES


# -- opener and speech order -----------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_day_one_speeches_go_clockwise_from_seat_one(preset: str) -> None:
    game = start_preset(preset)
    game.apply(Timeout())
    players = game.state.players
    assert floor_order(game) == [(seat, FloorKind.SPEECH) for seat in range(1, players + 1)]


@pytest.mark.parametrize("preset", PRESETS)
def test_day_two_opener_is_the_next_seat_and_order_wraps_around(preset: str) -> None:
    game = start_preset(preset)
    to_day(game, 2)
    assert game.state.opener == 2
    players = game.state.players
    assert [seat for seat, _ in floor_order(game)] == [*range(2, players + 1), 1]


def test_day_opener_moves_on_even_if_the_last_opener_died() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game)  # Day 1, opened by #1
    kill(game, 1)
    assert game.state.opener == 2


def test_dead_next_seat_passes_the_opening_to_the_seat_after() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game)
    kill(game, 2)
    assert game.state.day == 2
    assert game.state.opener == 3


def test_opener_follows_the_previous_opener_not_the_previous_day_start() -> None:
    # Day 2 is opened by #2, who is voted out on Day 2: Day 3 opens with #3.
    game = start(CLASSIC)
    to_day(game, 2)
    play_day(game, {3: 2, 4: 6}, {2: [1, 2, 3, 4, 5, 6]})
    assert not game.state.is_alive(2)
    kill(game, 9)
    assert game.state.day == 3
    assert game.state.opener == 3


def test_night_victims_last_words_come_before_the_speeches() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game)
    kill(game, 5)
    order = floor_order(game)
    assert order[0] == (5, FloorKind.LAST_WORD)
    assert order[1:] == [(seat, FloorKind.SPEECH) for seat in (2, 3, 4, 6, 7, 8, 9, 10, 1)]


def test_two_night_victims_speak_in_seat_order() -> None:
    game = start(GEORGIAN, TWELVE)
    to_night(game, 2)
    # Night 2: the mafia kill #9 and the maniac #7.
    play_night(game, shots={1: 9, 2: 9, 3: 9}, maniac=(6, 7))
    assert game.state.last_killed == (7, 9)
    order = floor_order(game)
    assert order[:2] == [(7, FloorKind.LAST_WORD), (9, FloorKind.LAST_WORD)]
    assert order[2][0] == 3


@pytest.mark.parametrize(("preset", "seconds"), [("classic", 60), ("georgian", 60), ("fiim", 60)])
def test_day_speech_lasts_sixty_seconds(preset: str, seconds: int) -> None:
    game = start_preset(preset)
    game.apply(Timeout())
    assert game.waiting().seconds == seconds
    assert game.state.floor == ev.Turn(1, FloorKind.SPEECH, seconds)


def test_speech_timer_ends_the_speech() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.FloorEnded) == [ev.FloorEnded(seat=1, reason="timeout")]
    assert game.state.floor is not None
    assert game.state.floor.seat == 2


def test_only_the_floor_holder_can_end_the_speech() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    assert_rejected(game, EndSpeech(seat=2), NotYourTurnError, "speech.not_floor_holder")


# -- nominations ------------------------------------------------------------------------------------------


@pytest.fixture
def day_one() -> Game:
    game = start(CLASSIC)
    game.apply(Timeout())
    return game


def test_speaker_nominates_and_it_is_accepted(day_one: Game) -> None:
    events = day_one.apply(Nominate(seat=1, target=5))
    assert events == (ev.Nominated(seat=1, target=5),)
    assert day_one.state.nominees == [5]


def test_only_the_speaker_can_nominate(day_one: Game) -> None:
    assert_rejected(day_one, Nominate(seat=3, target=5), NotYourTurnError, "nomination.not_your_speech")


def test_one_nomination_per_speech(day_one: Game) -> None:
    day_one.apply(Nominate(seat=1, target=5))
    assert_rejected(day_one, Nominate(seat=1, target=6), AlreadyActedError, "nomination.one_per_speech")


def test_already_nominated_target_is_rejected_and_does_not_use_up_the_nomination(day_one: Game) -> None:
    day_one.apply(Nominate(seat=1, target=5))
    day_one.apply(EndSpeech(seat=1))
    assert_rejected(day_one, Nominate(seat=2, target=5), InvalidTargetError, "nomination.already_nominated")
    day_one.apply(Nominate(seat=2, target=7))
    assert day_one.state.nominees == [5, 7]


def test_nomination_of_a_dead_seat_is_rejected() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game)
    kill(game, 5)
    to_speeches(game)
    assert_rejected(game, Nominate(seat=2, target=5), InvalidTargetError, "nomination.target_not_alive")


@pytest.mark.parametrize("target", [0, 11, -1])
def test_nomination_of_an_unknown_seat_is_malformed(day_one: Game, target: Seat) -> None:
    assert_rejected(day_one, Nominate(seat=1, target=target), InvalidCommandError, "seat.unknown")


def test_self_nomination_is_allowed_by_default(day_one: Game) -> None:
    day_one.apply(Nominate(seat=1, target=1))
    assert day_one.state.nominees == [1]


def test_self_nomination_can_be_switched_off() -> None:
    game = start(CLASSIC.replace(self_nomination=False))
    game.apply(Timeout())
    assert_rejected(game, Nominate(seat=1, target=1), InvalidTargetError, "nomination.self_not_allowed")


def test_nomination_right_comes_back_with_each_new_speech(day_one: Game) -> None:
    day_one.apply(Nominate(seat=1, target=5))
    day_one.apply(EndSpeech(seat=1))
    day_one.apply(Nominate(seat=2, target=6))
    assert day_one.state.nominees == [5, 6]


def test_no_nomination_after_the_speech_ended(day_one: Game) -> None:
    day_one.apply(EndSpeech(seat=1))
    assert_rejected(day_one, Nominate(seat=1, target=5), NotYourTurnError)


def test_no_nomination_in_a_last_word() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game)
    kill(game, 5)
    assert game.state.floor == ev.Turn(5, FloorKind.LAST_WORD, 60)
    assert_rejected(game, Nominate(seat=5, target=1), WrongPhaseError, "nomination.not_now")


def test_no_nomination_in_a_farewell() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    speeches(game, {2: 7})
    assert game.state.phase is Phase.FAREWELL
    assert_rejected(game, Nominate(seat=7, target=1), WrongPhaseError, "nomination.not_now")


def test_no_nomination_in_a_defense_speech() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(Timeout())
    speeches(game, {1: 7, 2: 8})
    assert game.state.phase is Phase.DEFENSE
    assert_rejected(game, Nominate(seat=7, target=9), WrongPhaseError, "nomination.not_now")


def test_no_nomination_in_a_tie_speech(day_one: Game) -> None:
    speeches(day_one, {1: 5, 2: 6})
    vote(day_one, {5: [1, 2, 3, 4, 7]})
    assert day_one.state.phase is Phase.TIE_SPEECHES
    assert_rejected(day_one, Nominate(seat=5, target=9), WrongPhaseError, "nomination.not_now")


def test_no_nomination_at_night() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game)
    assert_rejected(game, Nominate(seat=1, target=5), WrongPhaseError, "nomination.not_now")


# -- the nominee recap ----------------------------------------------------------------------------------------


def test_georgian_recaps_nominees_before_the_last_speaker_and_before_the_vote() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(Timeout())
    events = collect(game, lambda: speeches(game, {1: 9, 4: 7}))
    recaps = [i for i, e in enumerate(events) if isinstance(e, ev.NomineesRecapped)]
    assert len(recaps) == 1
    assert events[recaps[0]] == ev.NomineesRecapped(seats=(9, 7))
    assert events[recaps[0] + 1] == ev.FloorGiven(turn=ev.Turn(12, FloorKind.SPEECH, 60))
    events = collect(game, lambda: end_floors(game, Phase.DEFENSE))
    assert of_type(events, ev.NomineesRecapped) == [ev.NomineesRecapped(seats=(9, 7))]
    assert isinstance(events[-1], ev.VotingStarted)
    assert isinstance(events[-2], ev.NomineesRecapped)


def test_georgian_recap_includes_only_nominations_made_before_the_last_speaker() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(Timeout())
    events = collect(game, lambda: speeches(game, {3: 8, 12: 10}))
    assert of_type(events, ev.NomineesRecapped)[0] == ev.NomineesRecapped(seats=(8,))


def test_georgian_last_speaker_recap_is_skipped_when_the_last_alive_seat_is_not_last_in_order() -> None:
    # Day 2 opens with #2, so #1 speaks last.
    game = start(GEORGIAN, TWELVE)
    to_day(game, 2)
    events = collect(game, lambda: speeches(game, {2: 9, 5: 7}))
    recap = next(i for i, e in enumerate(events) if isinstance(e, ev.NomineesRecapped))
    assert events[recap + 1] == ev.FloorGiven(turn=ev.Turn(1, FloorKind.SPEECH, 60))


@pytest.mark.parametrize("ruleset", [CLASSIC, FIIM], ids=["classic", "fiim"])
def test_classic_and_fiim_recap_only_before_the_vote_in_nomination_order(ruleset: Ruleset) -> None:
    game = start(ruleset)
    game.apply(Timeout())
    events = collect(game, lambda: speeches(game, {1: 9, 4: 7, 6: 2}))
    assert of_type(events, ev.NomineesRecapped) == [ev.NomineesRecapped(seats=(9, 7, 2))]
    assert names_tail(events, 2) == ["NomineesRecapped", "VotingStarted"]
    assert events[-1] == ev.VotingStarted(kind=VoteKind.MAIN, candidates=(9, 7, 2))


def names_tail(events: list[ev.Event], n: int) -> list[str]:
    return [type(e).__name__ for e in events[-n:]]


# -- after the speeches: no nominations, single nominee, defense -------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("day", [1, 2])
def test_no_nominations_means_no_vote_and_night_falls(preset: str, day: int) -> None:
    game = start_preset(preset)
    to_day(game, day)
    alive = game.state.alive_seats()
    events = collect(game, lambda: speeches(game))
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.NO_NOMINATIONS)]
    assert of_type(events, ev.VotingStarted) == []
    assert game.state.phase is Phase.NIGHT
    assert game.state.night == day
    assert game.state.alive_seats() == alive


@pytest.mark.parametrize("preset", ["classic", "fiim"])
def test_single_nominee_on_day_one_means_no_vote_in_classic_and_fiim(preset: str) -> None:
    game = start_preset(preset)
    game.apply(Timeout())
    events = collect(game, lambda: speeches(game, {3: 4}))
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.SINGLE_NOMINEE_DAY_ONE)]
    assert game.state.phase is Phase.NIGHT
    assert game.state.is_alive(4)


@pytest.mark.parametrize("preset", ["classic", "fiim"])
def test_single_nominee_on_day_two_leaves_with_a_last_word(preset: str) -> None:
    game = start_preset(preset)
    to_day(game, 2)
    events = collect(game, lambda: speeches(game, {3: 4}))
    assert of_type(events, ev.VotingStarted) == []
    assert of_type(events, ev.PlayersVotedOut)[0].seats == (4,)
    assert game.state.phase is Phase.FAREWELL
    assert game.state.floor == ev.Turn(4, FloorKind.FAREWELL, 60)
    assert not game.state.is_alive(4)
    assert end_floors(game, Phase.FAREWELL) == [4]
    assert phase_of(game) is Phase.NIGHT


def test_georgian_single_nominee_leaves_even_on_day_one_without_a_defense() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(Timeout())
    events = collect(game, lambda: speeches(game, {2: 5}))
    assert of_type(events, ev.StageStarted)[-1].phase is Phase.FAREWELL
    assert all(e.phase is not Phase.DEFENSE for e in of_type(events, ev.StageStarted))
    assert of_type(events, ev.PlayersVotedOut)[0].seats == (5,)
    assert not game.state.is_alive(5)


def test_georgian_nominees_get_a_thirty_second_defense_in_nomination_order_before_the_vote() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(Timeout())
    speeches(game, {1: 9, 4: 2})
    assert game.state.phase is Phase.DEFENSE
    assert game.state.floor == ev.Turn(9, FloorKind.DEFENSE, 30)
    assert [t.seat for t in game.state.queue] == [2]
    assert end_floors(game, Phase.DEFENSE) == [9, 2]
    assert phase_of(game) is Phase.VOTING
    assert game.state.vote is not None
    assert game.state.vote.candidates == (9, 2)


@pytest.mark.parametrize("ruleset", [CLASSIC, FIIM], ids=["classic", "fiim"])
def test_classic_and_fiim_have_no_defense_speech(ruleset: Ruleset) -> None:
    game = start(ruleset)
    game.apply(Timeout())
    speeches(game, {1: 9, 4: 2})
    assert game.state.phase is Phase.VOTING


def test_defense_timer_ends_the_defense() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(Timeout())
    speeches(game, {1: 9, 4: 2})
    game.apply(Timeout())
    assert game.state.floor == ev.Turn(2, FloorKind.DEFENSE, 30)
