"""rules.md#fouls: fouls, their penalties, removals and how a removal cancels the nearest vote."""

from __future__ import annotations

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    Cause,
    Disqualify,
    EndSpeech,
    FloorKind,
    Game,
    GiveFoul,
    IllegalActionError,
    Leave,
    Nominate,
    NotAlivePlayerError,
    Pause,
    Phase,
    Result,
    Resume,
    RevokeFoul,
    RulesError,
    Ruleset,
    Seat,
    Timeout,
    WinReason,
)
from engine import events as ev
from engine.ids import NoVoteReason
from tests.engine.helpers import (
    TWELVE,
    assert_rejected,
    collect,
    end_floors,
    kill,
    of_type,
    phase_of,
    play_day,
    speeches,
    start,
    start_preset,
    start_table,
    to_day,
    to_night,
    vote,
)


def fouls(game: Game, seat: int, n: int) -> list[ev.Event]:
    events: list[ev.Event] = []
    for _ in range(n):
        events += game.apply(GiveFoul(seat=seat))
    return events


def speak_until(game: Game, seat: int) -> None:
    """Thank-you speeches until ``seat`` holds the floor."""
    while game.state.floor is None or game.state.floor.seat != seat:
        assert game.state.floor is not None
        game.apply(EndSpeech(seat=game.state.floor.seat))


def day_speakers(game: Game) -> list[tuple[int, FloorKind, int]]:
    """Run the morning and the speeches with no nominations; who spoke, how, and for how long."""
    spoken: list[tuple[int, FloorKind, int]] = []
    while game.state.phase in (Phase.LAST_WORDS, Phase.SPEECHES) and game.state.floor is not None:
        turn = game.state.floor
        if turn.kind is not FloorKind.LAST_WORD:
            spoken.append((turn.seat, turn.kind, turn.seconds))
        game.apply(EndSpeech(seat=turn.seat))
    return spoken


def seats(spoken: list[tuple[int, FloorKind, int]]) -> list[int]:
    return [seat for seat, _, _ in spoken]


# -- a foul and its count ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["classic", "georgian", "fiim"])
def test_foul_counts_up(preset: str) -> None:
    game = start_preset(preset)
    assert fouls(game, 3, 2)[-1] == ev.FoulGiven(seat=3, oath=False, total=2)
    assert game.state.foul_count(3) == 2


def test_judge_can_revoke_the_last_foul() -> None:
    game = start(CLASSIC)
    fouls(game, 3, 2)
    assert game.apply(RevokeFoul(seat=3)) == (ev.FoulRevoked(seat=3, total=1),)
    assert game.state.foul_count(3) == 1


def test_nothing_to_revoke_is_rejected() -> None:
    game = start(CLASSIC)
    assert_rejected(game, RevokeFoul(seat=3), IllegalActionError, "foul.nothing_to_revoke")


# -- classic: three fouls -----------------------------------------------------------------------------------------


def test_classic_third_foul_before_his_turn_loses_todays_speech_only() -> None:
    # rules.md#three-fouls, #6.
    game = start(CLASSIC)
    to_day(game, 2)
    events = fouls(game, 6, 3)
    assert ev.SpeechLost(seat=6, day=2) in events
    spoken: list[int] = []
    day2 = collect(game, lambda: spoken.extend(seats(day_speakers(game))))
    assert 6 not in spoken
    assert ev.SpeechPenaltyServed(seat=6, mode="skipped") in day2
    assert ev.TurnSkipped(seat=6, reason="fouls") in day2
    to_day(game, 3)
    assert 6 in seats(day_speakers(game))


def test_classic_third_foul_after_his_turn_loses_the_next_days_speech() -> None:
    # rules.md#three-fouls, #8.
    game = start(CLASSIC)
    to_day(game, 2)
    speak_until(game, 9)
    events = fouls(game, 8, 3)
    assert ev.SpeechLost(seat=8, day=3) in events
    to_day(game, 3)
    assert 8 not in seats(day_speakers(game))
    to_day(game, 4)
    assert 8 in seats(day_speakers(game))


def test_classic_foul_during_his_own_speech_counts_as_after_and_does_not_cut_it() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    speak_until(game, 6)
    events = fouls(game, 6, 3)
    assert ev.SpeechLost(seat=6, day=3) in events
    assert game.state.floor == ev.Turn(6, FloorKind.SPEECH, 60)
    game.apply(Nominate(seat=6, target=2))
    to_day(game, 3)
    assert 6 not in seats(day_speakers(game))


def test_classic_third_foul_at_night_loses_the_next_days_speech() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    assert ev.SpeechLost(seat=7, day=2) in fouls(game, 7, 3)
    game.apply(Timeout())
    assert 7 not in seats(day_speakers(game))


def test_classic_third_foul_after_the_speeches_loses_the_next_days_speech() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game, {1: 3, 2: 7})
    assert game.state.phase is Phase.VOTING
    assert ev.SpeechLost(seat=1, day=2) in fouls(game, 1, 3)


def test_classic_speech_penalty_applies_once_only() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    fouls(game, 6, 3)
    day_speakers(game)
    game.apply(RevokeFoul(seat=6))
    events = fouls(game, 6, 1)
    assert of_type(events, ev.SpeechLost) == []
    to_day(game, 3)
    assert 6 in seats(day_speakers(game))


def test_revoked_third_foul_gives_the_speech_back() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    fouls(game, 6, 3)
    assert game.apply(RevokeFoul(seat=6)) == (ev.FoulRevoked(seat=6, total=2), ev.SpeechRestored(seat=6))
    assert 6 in seats(day_speakers(game))


def test_classic_lost_speech_does_not_touch_the_tie_speech() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    fouls(game, 5, 3)  # loses his Day 2 speech
    game.apply(Timeout())
    speeches(game, {2: 5, 3: 6})
    vote(game, {5: [1, 2, 3, 4, 7]})
    assert end_floors(game, Phase.TIE_SPEECHES) == [5, 6]


def test_classic_lost_speech_does_not_touch_the_last_word() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    fouls(game, 5, 3)
    kill(game, 5)
    assert game.state.floor == ev.Turn(5, FloorKind.LAST_WORD, 60)


def test_classic_muted_player_cannot_nominate() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    fouls(game, 6, 3)
    speak_until(game, 5)
    game.apply(EndSpeech(seat=5))
    assert game.state.floor is not None
    assert game.state.floor.seat == 7
    assert_rejected(game, Nominate(seat=6, target=2), RulesError)


# -- fiim: three fouls -------------------------------------------------------------------------------------------


def test_fiim_three_fouls_give_a_silent_turn_that_may_nominate() -> None:
    game = start(FIIM)
    to_night(game, 1)
    fouls(game, 5, 3)
    game.apply(Timeout())
    speak_until(game, 5)
    assert game.state.floor == ev.Turn(5, FloorKind.SILENT, FIIM.silent_turn_seconds)
    game.apply(Nominate(seat=5, target=2))
    assert game.state.nominees == [2]
    to_day(game, 3)
    assert (5, FloorKind.SPEECH, 60) in day_speakers(game)


def fiim_with_alive(alive_after_removals: list[int]) -> Game:
    game = start(FIIM)
    for seat in range(1, 11):
        if seat not in alive_after_removals:
            game.apply(Disqualify(seat=seat))
    assert game.state.alive_seats() == alive_after_removals
    assert game.outcome() is None
    return game


@pytest.mark.parametrize(
    ("alive", "expected"),
    [
        ([1, 4, 9, 10], (9, FloorKind.SPEECH, 30)),
        ([1, 4, 8, 9, 10], (9, FloorKind.SILENT, FIIM.silent_turn_seconds)),
    ],
    ids=["4-alive", "5-alive"],
)
def test_fiim_three_fouls_at_four_alive_give_a_thirty_second_speech(
    alive: list[Seat], expected: tuple[Seat, FloorKind, int]
) -> None:
    game = fiim_with_alive(alive)
    fouls(game, 9, 3)
    game.apply(Timeout())
    assert expected in day_speakers(game)


# -- georgian: critical fouls ----------------------------------------------------------------------------------------


def test_georgian_three_fouls_are_announced_each_morning_without_losing_a_speech() -> None:
    # rules.md#critical-fouls.
    game = start(GEORGIAN, TWELVE)
    to_day(game, 2)
    assert of_type(fouls(game, 10, 3), ev.SpeechLost) == []
    assert 10 in seats(day_speakers(game))
    assert game.state.phase is Phase.NIGHT
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.CriticalFoulsAnnounced) == [ev.CriticalFoulsAnnounced(seats=(10,))]
    assert 10 in seats(day_speakers(game))
    to_day(game, 4)
    assert of_type(game.events, ev.CriticalFoulsAnnounced)[-1] == ev.CriticalFoulsAnnounced(seats=(10,))
    assert of_type(fouls(game, 10, 1), ev.PlayerRemoved)[0].cause is Cause.FOULS


def test_georgian_morning_without_critical_fouls_announces_nothing() -> None:
    game = start(GEORGIAN, TWELVE)
    fouls(game, 7, 2)
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.CriticalFoulsAnnounced) == []


@pytest.mark.parametrize("ruleset", [CLASSIC, FIIM], ids=["classic", "fiim"])
def test_classic_and_fiim_do_not_announce_critical_fouls(ruleset: Ruleset) -> None:
    game = start(ruleset)
    fouls(game, 7, 3)
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.CriticalFoulsAnnounced) == []


# -- removal by fouls and oaths ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["classic", "georgian", "fiim"])
def test_fourth_foul_removes(preset: str) -> None:
    game = start_preset(preset)
    game.apply(Timeout())
    events = fouls(game, 9, 4)
    assert of_type(events, ev.PlayerRemoved) == [ev.PlayerRemoved(seat=9, cause=Cause.FOULS, cancels="today")]
    assert not game.state.is_alive(9)
    assert game.state.removed(9)


def test_classic_second_oath_removes_whatever_the_foul_total() -> None:
    # rules.md#oaths: #3 has 1 foul, swears (foul 2), swears again -> removed with 2 fouls.
    game = start(CLASSIC)
    game.apply(Timeout())
    fouls(game, 3, 1)
    assert game.apply(GiveFoul(seat=3, oath=True)) == (ev.FoulGiven(seat=3, oath=True, total=2),)
    events = game.apply(GiveFoul(seat=3, oath=True))
    assert of_type(events, ev.PlayerRemoved)[0].cause is Cause.OATHS
    assert of_type(events, ev.FoulGiven) == []
    assert game.state.foul_count(3) == 2
    assert not game.state.is_alive(3)


def test_georgian_oath_is_just_one_foul() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(GiveFoul(seat=3, oath=True))
    events = game.apply(GiveFoul(seat=3, oath=True))
    assert events == (ev.FoulGiven(seat=3, oath=True, total=2),)
    assert game.state.is_alive(3)


def test_removed_player_gets_no_further_fouls() -> None:
    game = start(CLASSIC)
    game.apply(Disqualify(seat=3))
    assert_rejected(game, GiveFoul(seat=3), NotAlivePlayerError, "player.removed")


def test_dead_player_off_the_floor_gets_no_fouls() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    kill(game, 5)
    game.apply(EndSpeech(seat=5))
    assert_rejected(game, GiveFoul(seat=5), NotAlivePlayerError, "player.not_at_table")


# -- removal: no last word, win check, cancelled vote ---------------------------------------------------------------


def test_removed_player_leaves_at_once_with_no_last_word() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    events = collect(game, lambda: game.apply(Disqualify(seat=7, reason="insults")))
    assert events == [ev.PlayerRemoved(seat=7, cause=Cause.DISQUALIFIED, cancels="today", reason="insults")]
    assert 7 not in seats(day_speakers(game))
    assert of_type(game.events, ev.StageStarted)[-1].phase is not Phase.FAREWELL


def test_player_removed_at_night_gets_no_last_word_in_the_morning() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    game.apply(Disqualify(seat=7))
    game.apply(Timeout())
    assert of_type(game.events, ev.StageStarted)[-2] == ev.StageStarted(phase=Phase.LAST_WORDS, turns=())


def test_removal_of_the_floor_holder_ends_his_speech() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    events = collect(game, lambda: game.apply(Disqualify(seat=1)))
    assert ev.FloorEnded(seat=1, reason="removed") in events
    assert game.state.floor is not None
    assert game.state.floor.seat == 2


def test_removal_runs_the_win_check_at_once_at_night() -> None:
    game = start(CLASSIC, "DMSCCC")
    to_night(game, 1)
    game.apply(Disqualify(seat=4))
    assert game.outcome() is None
    events = collect(game, lambda: game.apply(Leave(seat=5)))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=Result.BLACK, reason=WinReason.PARITY)]
    assert game.state.phase is Phase.ENDED


def test_removal_runs_the_win_check_at_once_during_a_speech() -> None:
    game = start_table("DSCCCC")
    game.apply(Timeout())
    events = collect(game, lambda: game.apply(Disqualify(seat=1)))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=Result.RED, reason=WinReason.ALL_BLACK_GONE)]
    assert game.state.phase is Phase.ENDED


def test_removal_during_the_speeches_disables_nominations_and_the_vote() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    game.apply(Nominate(seat=1, target=7))
    game.apply(EndSpeech(seat=1))
    game.apply(Disqualify(seat=9))
    assert_rejected(game, Nominate(seat=2, target=8), IllegalActionError, "nomination.disabled")
    events = collect(game, lambda: speeches(game))
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.CANCELLED)]
    assert game.state.is_alive(7)
    assert game.state.phase is Phase.NIGHT


@pytest.mark.parametrize("phase", [Phase.VOTING, Phase.TIE_SPEECHES, Phase.LIFT_VOTE])
def test_removal_stops_a_vote_in_progress(phase: Phase) -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    speeches(game, {1: 5, 3: 2})
    if phase is not Phase.VOTING:
        vote(game, {5: [1, 3, 4, 6, 7]})
    if phase is Phase.LIFT_VOTE:
        end_floors(game, Phase.TIE_SPEECHES)
        vote(game, {5: [1, 3, 4, 6, 7]})
    assert game.state.phase is phase
    events = fouls(game, 9, 4)
    assert ev.VoteCancelled() in events
    assert game.state.phase is Phase.NIGHT
    assert game.state.is_alive(2)
    assert game.state.is_alive(5)


def test_removal_during_georgian_defense_stops_the_vote() -> None:
    game = start(GEORGIAN, TWELVE)
    game.apply(Timeout())
    speeches(game, {1: 9, 4: 2})
    assert game.state.phase is Phase.DEFENSE
    events = collect(game, lambda: game.apply(Disqualify(seat=11)))
    assert ev.VoteCancelled() in events
    assert phase_of(game) is Phase.NIGHT


def test_removal_at_night_cancels_the_next_days_vote() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    removal = game.apply(Disqualify(seat=9))[0]
    assert isinstance(removal, ev.PlayerRemoved)
    assert removal.cancels == "next"
    game.apply(Timeout())
    assert of_type(game.events, ev.DayStarted)[-1] == ev.DayStarted(day=2, opener=2, vote_cancelled=True)
    events = collect(game, lambda: speeches(game))
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.CANCELLED)]
    to_day(game, 3)
    assert not game.state.vote_cancelled


def test_removal_after_todays_result_cancels_the_next_days_vote() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    speeches(game, {2: 7})
    assert game.state.phase is Phase.FAREWELL
    removal = game.apply(Disqualify(seat=9))[0]
    assert isinstance(removal, ev.PlayerRemoved)
    assert removal.cancels == "next"
    end_floors(game, Phase.FAREWELL)
    game.apply(Timeout())
    assert of_type(game.events, ev.DayStarted)[-1].vote_cancelled is True


def test_removal_of_the_player_already_leaving_by_the_vote_cancels_nothing() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    speeches(game, {2: 7})
    assert game.state.floor == ev.Turn(7, FloorKind.FAREWELL, 60)
    events = fouls(game, 7, 4)
    assert of_type(events, ev.PlayerRemoved)[0].cancels == "none"
    assert game.state.phase is Phase.NIGHT
    game.apply(Timeout())
    assert of_type(game.events, ev.DayStarted)[-1].vote_cancelled is False


def test_removal_of_a_night_victim_during_his_last_word_cancels_nothing() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    kill(game, 5)
    events = game.apply(Disqualify(seat=5))
    assert of_type(events, ev.PlayerRemoved)[0].cancels == "none"
    assert ev.FloorEnded(seat=5, reason="removed") in events
    speeches(game, {2: 3})
    assert game.state.phase is Phase.FAREWELL


def test_without_vote_cancellation_the_removed_nominee_is_dropped() -> None:
    ruleset = CLASSIC.replace(removal_cancels_vote=False)
    game = start(ruleset)
    to_day(game, 2)
    speeches(game, {2: 7, 3: 8})
    assert game.state.phase is Phase.VOTING
    events = collect(game, lambda: game.apply(Disqualify(seat=7)))
    assert events[0].cancels == "none"  # type: ignore[union-attr]
    # One nominee is left on Day 2: he leaves (rules.md#single-nominee).
    assert of_type(events, ev.PlayersVotedOut) == [ev.PlayersVotedOut(seats=(8,), cause=Cause.VOTED_OUT)]


def test_without_vote_cancellation_day_one_single_nominee_rule_applies_to_the_rest() -> None:
    ruleset = CLASSIC.replace(removal_cancels_vote=False)
    game = start(ruleset)
    game.apply(Timeout())
    game.apply(Nominate(seat=1, target=7))
    game.apply(EndSpeech(seat=1))
    game.apply(Nominate(seat=2, target=8))
    game.apply(Disqualify(seat=7))
    events = collect(game, lambda: speeches(game))
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.SINGLE_NOMINEE_DAY_ONE)]


def test_without_vote_cancellation_the_remaining_nominees_are_voted_on() -> None:
    ruleset = CLASSIC.replace(removal_cancels_vote=False)
    game = start(ruleset)
    to_day(game, 2)
    speeches(game, {2: 7, 3: 8, 4: 9})
    game.apply(Disqualify(seat=7))
    assert game.state.vote is not None
    assert game.state.vote.candidates == (8, 9)
    play_day(game, ballots={8: [1, 2, 3, 4, 5, 6]})
    assert not game.state.is_alive(8)


def test_disconnect_pause_then_removal_cancels_todays_vote() -> None:
    # rules.md#technical-pause: #6 leaves voice on Day 3, not back after 120 s -> removed, no last word, no vote.
    game = start(CLASSIC)
    to_day(game, 3)
    game.apply(Nominate(seat=3, target=8))
    game.apply(Pause(seat=6))
    assert game.state.pause_seat == 6
    assert game.ruleset.technical_pause_seconds == 120
    events = collect(game, lambda: game.apply(Leave(seat=6)))
    assert events == [ev.PlayerRemoved(seat=6, cause=Cause.LEFT, cancels="today")]
    game.apply(Resume())
    events = collect(game, lambda: speeches(game))
    assert 6 not in [e.turn.seat for e in of_type(events, ev.FloorGiven)]
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.CANCELLED)]
    assert game.state.is_alive(8)


def test_leaving_player_must_be_at_the_table() -> None:
    game = start(CLASSIC)
    to_night(game, 1)
    kill(game, 5)
    assert_rejected(game, Leave(seat=5), NotAlivePlayerError)


def test_removal_during_the_final_words_does_not_change_the_result() -> None:
    # rules.md#final-words: the last black is voted out; a 4th foul during his last word changes nothing.
    game = start_table("DSCCCC")
    game.apply(Timeout())
    fouls(game, 3, 3)
    speeches(game, {1: 1, 2: 3})
    vote(game, {1: [1, 2, 3, 4, 5, 6]})
    assert game.outcome() is not None
    assert game.state.phase is Phase.FINAL_WORDS
    events = fouls(game, 3, 1)
    assert of_type(events, ev.PlayerRemoved)[0].cancels == "none"
    assert of_type(events, ev.GameEnded) == []
    fouls(game, 1, 4)
    assert game.outcome() is not None
    assert game.outcome().result is Result.RED  # type: ignore[union-attr]
    assert phase_of(game) is Phase.ENDED


# -- technical fouls and the short speech (rules.md#technical-fouls, rules.md#three-fouls) -------------

def test_a_technical_foul_is_refused_where_the_ruleset_has_none() -> None:
    game = start()
    to_day(game, 1)
    assert_rejected(game, GiveFoul(seat=5, technical=True), IllegalActionError, "foul.no_technical")
    assert game.state.technical_count(5) == 0


def test_technical_fouls_neither_count_towards_the_foul_limit_nor_cost_a_speech() -> None:
    game = start(CLASSIC.replace(technical_fouls=True, technical_foul_removal_at=3))
    to_day(game, 1)
    fouls(game, 6, 3)
    events: list[ev.Event] = []
    for _ in range(2):
        events += game.apply(GiveFoul(seat=6, technical=True))
    assert not of_type(events, ev.SpeechLost)
    assert not of_type(events, ev.PlayerRemoved)
    assert (game.state.foul_count(6), game.state.technical_count(6)) == (3, 2)
    removal = of_type(game.apply(GiveFoul(seat=6, technical=True)), ev.PlayerRemoved)
    assert [(r.seat, r.cause) for r in removal] == [(6, Cause.TECHNICAL_FOULS)]


def test_unfoul_takes_back_the_seats_last_foul_whatever_its_kind() -> None:
    game = start(CLASSIC.replace(technical_fouls=True))
    to_day(game, 1)
    game.apply(GiveFoul(seat=4))
    game.apply(GiveFoul(seat=4, technical=True))
    game.apply(GiveFoul(seat=4))
    kinds = [
        next(e.technical for e in game.apply(RevokeFoul(seat=4)) if isinstance(e, ev.FoulRevoked))
        for _ in range(3)
    ]
    assert kinds == [False, True, False]
    assert_rejected(game, RevokeFoul(seat=4), IllegalActionError, "foul.nothing_to_revoke")


def test_short_speech_penalty_cuts_the_speech_once_and_an_unfoul_restores_it() -> None:
    game = start(CLASSIC.replace(three_foul_penalty="short_speech"))
    to_day(game, 1)
    lost = of_type(fouls(game, 7, 3), ev.SpeechLost)
    assert lost == [ev.SpeechLost(seat=7, day=1, short=True)]
    game.apply(RevokeFoul(seat=7))
    assert 7 not in game.state.silenced
    fouls(game, 7, 1)
    speak_until(game, 7)
    floor = game.state.floor
    assert floor is not None
    assert (floor.seat, floor.seconds) == (7, CLASSIC.short_speech_seconds)
