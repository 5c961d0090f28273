"""Taking back the judge's last action (rules.md#taking-back): each kind, each refusal, and exact replays."""

from __future__ import annotations

import copy
import json
import random

from engine import (
    CLASSIC,
    GEORGIAN,
    Cause,
    Command,
    Disqualify,
    EndSpeech,
    FloorKind,
    Game,
    GiveFoul,
    IllegalActionError,
    Leave,
    Nominate,
    Pause,
    Phase,
    Resume,
    RevokeFoul,
    Shoot,
    StartGame,
    TakeBack,
    Timeout,
    WrongPhaseError,
    command_from_data,
    event_from_data,
    replay_events,
    to_data,
)
from engine import events as ev
from engine.state import copied
from tests.engine.helpers import (
    TEN,
    TWELVE,
    assert_rejected,
    of_type,
    random_game,
    random_step,
    start,
    start_table,
    to_day,
    to_night,
)


def speeches_day(day: int = 1) -> Game:
    """Classic, ``day``'s first speech has the floor (#1 on Day 1)."""
    game = start(CLASSIC, TEN)
    to_day(game, day)
    return game


def snapshot(game: Game) -> str:
    return json.dumps(to_data(game.state))


def exact(game: Game) -> None:
    """The live state is what a replay of the commands and of the events gives."""
    assert Game.replay(game.ruleset, game.history).state == game.state
    assert replay_events(game.events) == game.state
    stored = [command_from_data(json.loads(json.dumps(to_data(c)))) for c in game.history]
    assert Game.replay(game.ruleset, stored).state == game.state
    assert replay_events(event_from_data(json.loads(json.dumps(to_data(e)))) for e in game.events) == game.state


def taken_back(game: Game) -> ev.ActionTakenBack:
    events = game.apply(TakeBack())
    assert [type(e) for e in events] == [ev.ActionTakenBack]
    event = events[0]
    assert isinstance(event, ev.ActionTakenBack)
    return event


# -- each kind ----------------------------------------------------------------------------------------


def test_a_foul_taken_back_leaves_the_state_as_it_was() -> None:
    game = speeches_day()
    before = snapshot(game)
    game.apply(GiveFoul(seat=5))
    assert game.taking_back() == ("foul", 5)
    event = taken_back(game)
    assert (event.kind, event.seat, event.total, event.floor) == ("foul", 5, 0, None)
    assert snapshot(game) == before
    exact(game)


def test_a_second_technical_foul_taken_back_brings_the_player_back_with_one() -> None:
    game = start(CLASSIC.replace(technical_fouls=True), TEN)
    to_day(game, 1)
    game.apply(GiveFoul(seat=5, technical=True))
    before = snapshot(game)
    events = game.apply(GiveFoul(seat=5, technical=True))
    assert of_type(events, ev.PlayerRemoved)[0].cause is Cause.TECHNICAL_FOULS
    event = taken_back(game)
    assert (event.kind, event.total, event.technical) == ("removal", 0, 1)
    assert game.state.is_alive(5)
    assert snapshot(game) == before
    exact(game)


def test_an_oath_foul_taken_back_is_forgotten_so_the_next_oath_is_a_first_one() -> None:
    game = speeches_day()
    game.apply(GiveFoul(seat=5, oath=True))
    taken_back(game)
    assert game.state.fouls[4] == []
    events = game.apply(GiveFoul(seat=5, oath=True))
    assert not of_type(events, ev.PlayerRemoved)
    exact(game)


def test_a_third_foul_taken_back_gives_the_lost_speech_back() -> None:
    game = speeches_day()
    for _ in range(2):
        game.apply(GiveFoul(seat=6))
    before = snapshot(game)
    events = game.apply(GiveFoul(seat=6))
    assert of_type(events, ev.SpeechLost) == [ev.SpeechLost(seat=6, day=1)]
    event = taken_back(game)
    assert event.total == 2
    assert 6 not in game.state.silenced
    assert snapshot(game) == before
    exact(game)


def test_a_fourth_foul_taken_back_brings_the_player_back_with_three_fouls() -> None:
    game = speeches_day()
    for _ in range(3):
        game.apply(GiveFoul(seat=7))
    before = snapshot(game)
    events = game.apply(GiveFoul(seat=7))
    assert of_type(events, ev.PlayerRemoved)[0].cause is Cause.FOULS
    assert game.taking_back() == ("removal", 7)
    event = taken_back(game)
    assert (event.kind, event.total) == ("removal", 3)
    assert game.state.is_alive(7)
    assert game.state.departures == []
    assert not game.state.vote_cancelled
    assert snapshot(game) == before
    exact(game)


def test_a_second_oath_taken_back_brings_the_player_back_with_the_first_oath() -> None:
    game = speeches_day()
    game.apply(GiveFoul(seat=3, oath=True))
    game.apply(EndSpeech(seat=1))
    before = snapshot(game)
    events = game.apply(GiveFoul(seat=3, oath=True))
    assert of_type(events, ev.PlayerRemoved)[0].cause is Cause.OATHS
    event = taken_back(game)
    assert (event.kind, event.seat, event.total) == ("removal", 3, 1)
    assert snapshot(game) == before
    exact(game)


def test_a_disqualification_taken_back_restores_the_vote_it_cancelled() -> None:
    game = speeches_day()
    before = snapshot(game)
    events = game.apply(Disqualify(seat=8, reason="insults"))
    assert of_type(events, ev.PlayerRemoved)[0].cancels == "today"
    assert game.state.vote_cancelled
    taken_back(game)
    assert not game.state.vote_cancelled
    assert game.state.is_alive(8)
    assert snapshot(game) == before
    # Nominations are open again: the cancelled vote was the removal's.
    game.apply(Nominate(seat=1, target=4))
    exact(game)


def test_a_removal_at_night_taken_back_gives_back_the_shot_it_voided() -> None:
    game = start(CLASSIC, TEN)
    to_night(game, 1)
    game.apply(Shoot(seat=2, target=5))
    game.apply(Disqualify(seat=2))
    assert 2 not in game.state.shots
    assert game.state.cancel_next_vote
    game.apply(Shoot(seat=1, target=5))  # another shooter acts meanwhile: it stands
    taken_back(game)
    assert game.state.shots == {2: 5, 1: 5}
    assert not game.state.cancel_next_vote
    assert game.state.is_alive(2)
    game.apply(Shoot(seat=3, target=5))
    game.apply(Timeout())  # the checks are not made: dawn
    assert not game.state.is_alive(5)  # all three shot #5: the kill goes through
    exact(game)


def test_a_skip_taken_back_gives_the_floor_back_with_the_time_that_was_left() -> None:
    game = speeches_day()
    timer = game.state.timer
    game.apply(Nominate(seat=1, target=4))
    game.apply(Timeout(step=timer, left=23))
    assert game.state.floor is not None
    assert game.state.floor.seat == 2
    assert game.taking_back() == ("skip", 1)
    event = taken_back(game)
    assert event.floor == ev.Turn(1, FloorKind.SPEECH, 23)
    state = game.state
    assert state.floor == ev.Turn(1, FloorKind.SPEECH, 23)
    assert state.queue[0].seat == 2
    assert state.nominees == [4]
    assert state.nominated  # the speaker's one nomination is still spent
    assert 1 not in state.spoken
    assert state.timer > timer + 1  # a timer armed for the next speaker is stale now
    waiting = game.waiting()
    assert (waiting.floor, waiting.seconds) == (state.floor, 23)
    assert_rejected(game, Timeout(step=timer + 1), IllegalActionError, "timeout.stale")
    game.apply(Timeout(step=waiting.timer))
    assert game.state.floor is not None
    assert game.state.floor.seat == 2
    exact(game)


def test_removing_the_speaker_taken_back_gives_them_the_floor_back() -> None:
    game = speeches_day()
    game.apply(Disqualify(seat=1, left=41))
    assert game.state.floor is not None
    assert game.state.floor.seat == 2
    event = taken_back(game)
    assert (event.kind, event.floor) == ("removal", ev.Turn(1, FloorKind.SPEECH, 41))
    assert game.state.is_alive(1)
    assert not game.state.vote_cancelled
    exact(game)


def test_a_skip_passes_the_speeches_penalty_and_the_take_back_restores_it() -> None:
    game = speeches_day()
    for _ in range(3):
        game.apply(GiveFoul(seat=2))  # loses today's speech
    events = game.apply(Timeout(step=game.state.timer, left=30))
    assert of_type(events, ev.SpeechPenaltyServed) == [ev.SpeechPenaltyServed(seat=2, mode="skipped")]
    taken_back(game)
    assert game.state.silenced == {2: 1}
    assert 2 not in game.state.silence_used
    exact(game)


def test_a_take_back_works_while_the_game_is_paused_and_keeps_the_pause() -> None:
    game = speeches_day()
    game.apply(GiveFoul(seat=4))
    game.apply(Pause())
    taken_back(game)
    assert game.state.paused
    assert game.state.fouls[3] == []
    game.apply(Resume())
    exact(game)


def test_the_georgian_critical_foul_taken_back() -> None:
    game = start(GEORGIAN, TWELVE)
    to_day(game, 1)
    before = snapshot(game)
    game.apply(GiveFoul(seat=9))
    taken_back(game)
    assert snapshot(game) == before


# -- refusals -----------------------------------------------------------------------------------------


def test_nothing_to_take_back_before_any_judge_action() -> None:
    game = speeches_day()
    assert game.taking_back() is None
    assert_rejected(game, TakeBack(), IllegalActionError, "take_back.nothing")


def test_a_take_back_is_taken_once() -> None:
    game = speeches_day()
    game.apply(GiveFoul(seat=5))
    game.apply(GiveFoul(seat=6))
    taken_back(game)
    assert game.state.fouls[4] == [False]  # only the last one
    assert_rejected(game, TakeBack(), IllegalActionError, "take_back.nothing")


def test_a_foul_stands_once_the_floor_has_changed() -> None:
    game = speeches_day()
    game.apply(GiveFoul(seat=5))
    game.apply(EndSpeech(seat=1))
    assert game.taking_back() is None
    error = assert_rejected(game, TakeBack(), IllegalActionError, "take_back.too_late")
    assert error.data == {"kind": "foul", "seat": 5}


def test_a_skip_stands_once_the_next_speaker_has_acted() -> None:
    game = speeches_day()
    game.apply(Timeout(step=game.state.timer, left=30))
    game.apply(Nominate(seat=2, target=6))
    assert_rejected(game, TakeBack(), IllegalActionError, "take_back.moved_on")


def test_a_skip_that_ended_the_speeches_stands() -> None:
    game = speeches_day()
    game.apply(Nominate(seat=1, target=4))
    for seat in range(1, 10):
        game.apply(EndSpeech(seat=seat))
    game.apply(Nominate(seat=10, target=6))
    game.apply(Timeout(step=game.state.timer, left=12))
    assert game.state.phase is Phase.VOTING
    assert_rejected(game, TakeBack(), IllegalActionError, "take_back.stage_over")


def test_a_removal_that_ended_the_game_stands() -> None:
    game = start_table("DCCCCS")
    to_day(game, 1)
    events = game.apply(Disqualify(seat=1))
    assert of_type(events, ev.GameEnded)
    assert_rejected(game, TakeBack(), WrongPhaseError, "take_back.game_over")


def test_an_unfoul_or_a_leave_after_the_action_leaves_nothing_to_take_back() -> None:
    game = speeches_day()
    game.apply(GiveFoul(seat=5))
    game.apply(RevokeFoul(seat=5))
    assert_rejected(game, TakeBack(), IllegalActionError, "take_back.nothing")
    game.apply(GiveFoul(seat=6))
    game.apply(Pause(seat=7))
    game.apply(Leave(seat=7))
    assert_rejected(game, TakeBack(), IllegalActionError, "take_back.nothing")


def test_a_skipped_vote_window_is_not_taken_back() -> None:
    game = speeches_day()
    game.apply(Nominate(seat=1, target=4))
    game.apply(EndSpeech(seat=1))
    game.apply(Nominate(seat=2, target=5))
    for seat in range(2, 11):
        game.apply(EndSpeech(seat=seat))
    assert game.state.phase is Phase.VOTING
    game.apply(Timeout(step=game.state.timer, left=3))
    assert_rejected(game, TakeBack(), IllegalActionError, "take_back.nothing")


def test_no_take_back_before_the_deal() -> None:
    assert_rejected(Game(CLASSIC), TakeBack(), WrongPhaseError, "game.not_started")


# -- random play ----------------------------------------------------------------------------------------


def judge_moves(game: Game, rng: random.Random) -> list[Command]:
    state = game.state
    seats = list(range(1, state.players + 1))
    holder = state.floor.seat if state.floor is not None else rng.choice(seats)
    return [
        Timeout(step=state.timer, left=rng.randint(0, 60)),
        Disqualify(seat=holder, left=rng.randint(0, 60)),
        GiveFoul(seat=rng.choice(seats), left=rng.randint(0, 60)),
        TakeBack(),
        TakeBack(),
        TakeBack(),
    ]


def test_random_play_with_take_backs_replays_exactly() -> None:
    taken = 0
    for seed in range(24):
        rng = random.Random(seed)
        ruleset = (CLASSIC, GEORGIAN)[seed % 2]
        game = Game(ruleset)
        game.apply(StartGame(players=ruleset.default_players, seed=seed))
        for _ in range(3000):
            if game.over:
                break
            moves = [c for c in judge_moves(game, rng) if game.is_legal(c)] if rng.random() < 0.15 else []
            command = rng.choice(moves) if moves else random_step(game, rng, judge_rate=0.05)
            before = copy.deepcopy(game.state)
            game.apply(command)
            if isinstance(command, TakeBack):
                taken += 1
                assert game.state != before
        exact(game)
    assert taken >= 12, taken


def test_a_copied_state_shares_nothing_mutable() -> None:
    for seed in range(6):
        game = random_game(CLASSIC, seed, limit=60)
        before = snapshot(game)
        twin = Game(CLASSIC)
        twin._state = copied(game._state)
        assert twin.state == game.state
        rng = random.Random(seed)
        for _ in range(400):  # play on with the copy: votes, nights, fouls, removals
            if twin.over:
                break
            twin.apply(random_step(twin, rng, judge_rate=0.2))
        assert snapshot(game) == before
