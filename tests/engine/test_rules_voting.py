"""rules.md#voting: sequential voting, silent votes, car crashes, revotes and the lift vote."""

from __future__ import annotations

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    AlreadyActedError,
    CastLiftVote,
    CastVote,
    Cause,
    Disqualify,
    FloorKind,
    Game,
    InvalidTargetError,
    NotAlivePlayerError,
    Phase,
    Result,
    Ruleset,
    Seat,
    Timeout,
    VoteKind,
    WinReason,
    WrongPhaseError,
)
from engine import events as ev
from engine.ids import NoVoteReason
from tests.engine.helpers import (
    TEN,
    assert_rejected,
    collect,
    end_floors,
    kill,
    lift,
    of_type,
    phase_of,
    play_day,
    speeches,
    start,
    to_day,
    vote,
)


def voting_day_one(ruleset: Ruleset = CLASSIC, nominations: dict[Seat, Seat] | None = None, seating: str = TEN) -> Game:
    game = start(ruleset, seating)
    game.apply(Timeout())
    speeches(game, nominations or {1: 3, 2: 7})
    end_floors(game, Phase.DEFENSE)
    assert game.state.phase is Phase.VOTING
    return game


def voted_out(events: list[ev.Event]) -> list[tuple[int, ...]]:
    return [e.seats for e in of_type(events, ev.PlayersVotedOut)]


# -- sequential windows -------------------------------------------------------------------------------------


def test_candidates_are_voted_on_one_window_at_a_time_in_nomination_order() -> None:
    game = voting_day_one()
    assert game.waiting().candidate == 3
    game.apply(Timeout())
    assert game.waiting().candidate == 7


def test_vote_window_lasts_as_the_ruleset_says() -> None:
    game = voting_day_one(CLASSIC.replace(vote_window_seconds=5))
    assert game.waiting().seconds == 5


def test_early_vote_for_a_later_candidate_is_rejected() -> None:
    game = voting_day_one()
    assert_rejected(game, CastVote(seat=1, candidate=7), InvalidTargetError, "vote.window_closed")


def test_late_vote_for_a_closed_window_is_rejected() -> None:
    game = voting_day_one()
    game.apply(Timeout())
    assert_rejected(game, CastVote(seat=1, candidate=3), InvalidTargetError, "vote.window_closed")


def test_second_vote_in_the_same_round_is_rejected() -> None:
    game = voting_day_one()
    game.apply(CastVote(seat=1, candidate=3))
    assert_rejected(game, CastVote(seat=1, candidate=3), AlreadyActedError, "vote.already_voted")
    game.apply(Timeout())
    assert_rejected(game, CastVote(seat=1, candidate=7), AlreadyActedError, "vote.already_voted")


def test_dead_player_cannot_vote() -> None:
    game = start(CLASSIC)
    to_day(game, 1)
    speeches(game)
    kill(game, 5)
    speeches(game, {2: 3, 4: 7})
    assert_rejected(game, CastVote(seat=5, candidate=3), NotAlivePlayerError, "vote.not_alive")


def test_candidate_may_vote_for_himself() -> None:
    game = voting_day_one()
    game.apply(CastVote(seat=3, candidate=3))
    assert game.state.vote is not None
    assert game.state.vote.votes == {3: 3}


def test_no_vote_outside_the_voting_phase() -> None:
    game = start(CLASSIC)
    game.apply(Timeout())
    assert_rejected(game, CastVote(seat=1, candidate=3), WrongPhaseError, "phase.wrong")


# -- counting ---------------------------------------------------------------------------------------------------


def test_silent_players_count_for_the_last_candidate() -> None:
    # rules.md#vote-abstentions: 10 alive, nominees [#3, #7]; 4 vote for #3, nobody for #7 -> 6 for #7 -> #7 leaves.
    game = voting_day_one()
    events = collect(game, lambda: vote(game, {3: [1, 2, 4, 5]}))
    closed = of_type(events, ev.VotingClosed)[0]
    assert closed.tally == ((3, (1, 2, 4, 5)), (7, ()))
    assert closed.silent == (3, 6, 7, 8, 9, 10)
    assert voted_out(events) == [(7,)]
    assert game.state.floor == ev.Turn(7, FloorKind.FAREWELL, 60)


def test_candidates_themselves_are_counted_silent_for_the_last_candidate() -> None:
    game = voting_day_one(nominations={1: 7, 2: 3})
    # Everyone but the two candidates votes for #7; the candidates' silence goes to #3, 8 to 2.
    events = collect(game, lambda: vote(game, {7: [1, 2, 4, 5, 6, 8, 9, 10]}))
    assert voted_out(events) == [(7,)]


def test_unique_top_count_leaves() -> None:
    game = voting_day_one(nominations={1: 3, 2: 7, 4: 9})
    events = collect(game, lambda: vote(game, {3: [1, 2], 7: [4, 5, 6, 8, 9]}))
    assert voted_out(events) == [(7,)]


def test_voting_closes_as_soon_as_every_alive_player_has_voted() -> None:
    game = voting_day_one()
    events = collect(game, lambda: [game.apply(CastVote(seat=s, candidate=3)) for s in range(1, 11)])
    assert of_type(events, ev.VotingClosed)
    assert voted_out(events) == [(3,)]


def test_classic_day_two_vote_leads_to_a_last_word_then_night() -> None:
    game = start(CLASSIC)
    to_day(game, 2)
    play_day(game, {2: 5, 3: 6}, {5: [1, 2, 3, 4, 6, 7]})
    assert not game.state.is_alive(5)
    assert game.state.phase is Phase.NIGHT
    assert game.state.night == 2


# -- car crash -----------------------------------------------------------------------------------------------


def test_tie_gives_the_tied_players_thirty_seconds_each_in_voting_order_then_a_revote() -> None:
    # rules.md#vote-tie: nominees [#2, #5, #8] get 4/4/2 -> #2 and #5 speak -> revote 6/4 -> #2 leaves.
    game = voting_day_one(nominations={1: 2, 3: 5, 4: 8})
    events = collect(game, lambda: vote(game, {2: [1, 3, 4, 6], 5: [7, 9, 10, 2]}))
    assert of_type(events, ev.TieDeclared) == [ev.TieDeclared(seats=(2, 5))]
    assert game.state.phase is Phase.TIE_SPEECHES
    assert game.state.floor == ev.Turn(2, FloorKind.TIE_SPEECH, 30)
    assert end_floors(game, Phase.TIE_SPEECHES) == [2, 5]
    assert game.state.vote is not None
    assert game.state.vote.kind is VoteKind.REVOTE
    assert game.state.vote.candidates == (2, 5)
    events = collect(game, lambda: vote(game, {2: [1, 3, 4, 6, 7, 8]}))
    assert voted_out(events) == [(2,)]


def test_revote_silence_goes_to_the_last_tied_player() -> None:
    game = voting_day_one(nominations={1: 2, 3: 5, 4: 8})
    vote(game, {2: [1, 3, 4, 6], 5: [7, 9, 10, 2]})
    end_floors(game, Phase.TIE_SPEECHES)
    events = collect(game, lambda: vote(game, {2: [1, 3, 4]}))
    assert voted_out(events) == [(5,)]


def test_tie_speech_has_no_revote_of_untied_nominees() -> None:
    game = voting_day_one(nominations={1: 2, 3: 5, 4: 8})
    vote(game, {2: [1, 3, 4, 6], 5: [7, 9, 10, 2]})
    end_floors(game, Phase.TIE_SPEECHES)
    assert_rejected(game, CastVote(seat=1, candidate=8), InvalidTargetError)


@pytest.mark.parametrize(
    ("ruleset", "seating", "main", "revote"),
    [
        (CLASSIC, TEN, {2: [1, 3, 4], 5: [6, 7, 10], 8: [2, 5, 9]}, {2: [1, 2, 3, 4], 5: [5, 6, 7, 10]}),
        (
            GEORGIAN,
            "DMMSHKCCCCCC",
            {2: [1, 3, 4, 7], 5: [6, 10, 11, 12], 8: [2, 5, 9, 8]},
            {2: [1, 2, 3, 4, 5], 5: [6, 7, 8, 9, 10]},
        ),
    ],
    ids=["classic", "georgian"],
)
def test_second_tie_goes_straight_to_the_lift_vote_in_classic_and_georgian(
    ruleset: Ruleset, seating: str, main: dict[Seat, list[Seat]], revote: dict[Seat, list[Seat]]
) -> None:
    game = voting_day_one(ruleset, {1: 2, 3: 5, 4: 8, 6: 9}, seating)
    vote(game, main)
    assert game.state.last_tie == (2, 5, 8)
    end_floors(game, Phase.TIE_SPEECHES)
    # The revote among #2, #5 and #8 ties #2 and #5: the literal rule lifts the revote's tied set.
    events = collect(game, lambda: vote(game, revote))
    assert of_type(events, ev.TieDeclared) == []
    assert of_type(events, ev.LiftVoteStarted) == [ev.LiftVoteStarted(seats=(2, 5))]
    assert game.state.phase is Phase.LIFT_VOTE


def test_classic_same_two_tie_twice_goes_to_the_lift_vote() -> None:
    game = voting_day_one(nominations={1: 2, 3: 5})
    vote(game, {2: [1, 3, 4, 6, 7]})
    end_floors(game, Phase.TIE_SPEECHES)
    events = collect(game, lambda: vote(game, {2: [1, 3, 4, 6, 7]}))
    assert of_type(events, ev.LiftVoteStarted) == [ev.LiftVoteStarted(seats=(2, 5))]


def test_fiim_shrinking_tie_gets_another_round_of_speeches_and_a_revote() -> None:
    game = voting_day_one(FIIM, {1: 2, 3: 5, 4: 8, 6: 9})
    vote(game, {2: [1, 3, 4], 5: [6, 7, 10], 8: [2, 5, 9]})
    end_floors(game, Phase.TIE_SPEECHES)
    # The revote ties #2 and #5 only: the set shrank, so they speak again and are voted on again.
    events = collect(game, lambda: vote(game, {2: [1, 3, 4, 6], 5: [7, 10, 2, 5]}))
    assert of_type(events, ev.TieDeclared) == [ev.TieDeclared(seats=(2, 5))]
    assert of_type(events, ev.LiftVoteStarted) == []
    assert end_floors(game, Phase.TIE_SPEECHES) == [2, 5]
    assert game.state.vote is not None
    assert game.state.vote.candidates == (2, 5)
    # The same set ties again: now the lift vote.
    events = collect(game, lambda: vote(game, {2: [1, 3, 4, 6, 7]}))
    assert of_type(events, ev.LiftVoteStarted) == [ev.LiftVoteStarted(seats=(2, 5))]


def test_fiim_shrunk_tie_can_be_resolved_by_the_next_revote() -> None:
    game = voting_day_one(FIIM, {1: 2, 3: 5, 4: 8, 6: 9})
    vote(game, {2: [1, 3, 4], 5: [6, 7, 10], 8: [2, 5, 9]})
    end_floors(game, Phase.TIE_SPEECHES)
    vote(game, {2: [1, 3, 4, 6], 5: [7, 10, 2, 5]})
    end_floors(game, Phase.TIE_SPEECHES)
    events = collect(game, lambda: vote(game, {2: [1, 3, 4, 6, 7, 8]}))
    assert voted_out(events) == [(2,)]


def test_fiim_same_set_tied_twice_goes_to_the_lift_vote() -> None:
    game = voting_day_one(FIIM, {1: 2, 3: 5})
    vote(game, {2: [1, 3, 4, 6, 7]})
    end_floors(game, Phase.TIE_SPEECHES)
    events = collect(game, lambda: vote(game, {2: [1, 3, 4, 6, 7]}))
    assert of_type(events, ev.LiftVoteStarted) == [ev.LiftVoteStarted(seats=(2, 5))]


# -- the lift vote ------------------------------------------------------------------------------------------------


def lift_vote_day_one(ruleset: Ruleset = CLASSIC) -> Game:
    game = voting_day_one(ruleset, {1: 5, 3: 2})
    vote(game, {5: [1, 3, 4, 6, 7]})
    end_floors(game, Phase.TIE_SPEECHES)
    vote(game, {5: [1, 3, 4, 6, 7]})
    assert game.state.phase is Phase.LIFT_VOTE
    return game


@pytest.mark.parametrize(("yes", "passes"), [(0, False), (4, False), (5, False), (6, True), (9, True), (10, True)])
def test_lift_passes_only_with_more_than_half_of_the_living(yes: int, passes: bool) -> None:
    # rules.md#lift-vote: 10 alive, exactly 5 yes -> everyone stays.
    game = lift_vote_day_one()
    events = collect(game, lambda: lift(game, range(1, yes + 1)))
    closed = of_type(events, ev.LiftVoteClosed)[0]
    assert closed.alive == 10
    assert closed.passed is passes
    assert len(closed.yes) == yes
    assert game.state.is_alive(2) is not passes
    assert game.state.is_alive(5) is not passes
    if not passes:
        assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.LIFT_FAILED)]
        assert game.state.phase is Phase.NIGHT


def test_no_counts_against_the_lift() -> None:
    game = lift_vote_day_one()
    for seat in range(1, 6):
        game.apply(CastLiftVote(seat=seat, yes=True))
    for seat in range(6, 11):
        game.apply(CastLiftVote(seat=seat, yes=False))
    assert game.state.is_alive(2)
    assert game.state.phase is Phase.NIGHT


def test_lift_vote_is_one_per_player_and_only_for_the_living() -> None:
    game = lift_vote_day_one()
    game.apply(CastLiftVote(seat=1))
    assert_rejected(game, CastLiftVote(seat=1, yes=False), AlreadyActedError, "vote.already_voted")


@pytest.mark.parametrize("ruleset", [CLASSIC, FIIM], ids=["classic", "fiim"])
def test_lift_passed_all_tied_leave_together_with_last_words_in_seat_order(ruleset: Ruleset) -> None:
    game = lift_vote_day_one(ruleset)
    events = collect(game, lambda: lift(game, range(1, 7)))
    assert of_type(events, ev.PlayersVotedOut) == [ev.PlayersVotedOut(seats=(2, 5), cause=Cause.LIFTED)]
    assert game.state.phase is Phase.FAREWELL
    assert end_floors(game, Phase.FAREWELL) == [2, 5]
    assert phase_of(game) is Phase.NIGHT


def test_lift_departures_are_checked_for_a_win_together() -> None:
    # 6 seats: D#1 M#2 S#3 and citizens. #3 and #4 are lifted: B2 R2 -> black wins, both give final words.
    game = start(CLASSIC, "DMSCCC")
    game.apply(Timeout())
    speeches(game, {1: 3, 2: 4})
    vote(game, {3: [1, 2, 5]})
    end_floors(game, Phase.TIE_SPEECHES)
    vote(game, {3: [1, 2, 5]})
    events = collect(game, lambda: lift(game, [1, 2, 5, 6]))
    assert of_type(events, ev.PlayersVotedOut) == [ev.PlayersVotedOut(seats=(3, 4), cause=Cause.LIFTED)]
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=Result.BLACK, reason=WinReason.PARITY)]
    assert game.state.phase is Phase.FINAL_WORDS
    assert end_floors(game, Phase.FINAL_WORDS) == [3, 4]
    assert phase_of(game) is Phase.ENDED


def three_alive_day_three() -> Game:
    """6 seats D#1 M#2 S#3 C#4-#6, played down to D#1, S#3 and C#6 (B1 R2) on Day 3."""
    game = start(CLASSIC, "DMSCCC")
    game.apply(Timeout())
    play_day(game, {1: 4, 3: 2})  # everyone silent: #2, the last nominee, leaves
    kill(game, 4)
    play_day(game, {3: 5})  # Day 2 single nominee leaves
    game.apply(Timeout())  # Night 2: a miss
    assert game.state.day == 3
    assert game.state.alive_seats() == [1, 3, 6]
    return game


def test_no_lift_vote_when_every_alive_player_is_tied() -> None:
    # rules.md#lift-exceptions: 3 alive (B1 R2), each nominated, 1/1/1 twice -> no lift vote, nobody leaves.
    game = three_alive_day_three()
    speeches(game, {6: 1, 1: 3, 3: 6})
    vote(game, {1: [3], 3: [6], 6: [1]})
    assert game.state.last_tie == (1, 3, 6)
    end_floors(game, Phase.TIE_SPEECHES)
    events = collect(game, lambda: vote(game, {1: [3], 3: [6], 6: [1]}))
    assert of_type(events, ev.LiftVoteStarted) == []
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.ALL_ALIVE_TIED)]
    assert game.state.alive_seats() == [1, 3, 6]
    assert game.state.phase is Phase.NIGHT


def nine_alive_day_two(ruleset: Ruleset) -> Game:
    game = start(ruleset)
    game.apply(Timeout())
    play_day(game, {1: 9, 2: 10})  # #10 leaves
    game.apply(Timeout())  # Night 1: a miss
    assert len(game.state.alive_seats()) == 9
    return game


def three_way_tie_twice_at_nine(game: Game) -> list[ev.Event]:
    speeches(game, {2: 1, 3: 4, 4: 6})
    ballots = {1: [1, 2, 3], 4: [4, 5, 6]}  # #7-#9 silent for #6
    vote(game, ballots)
    assert game.state.last_tie == (1, 4, 6)
    end_floors(game, Phase.TIE_SPEECHES)
    return collect(game, lambda: vote(game, ballots))


def test_fiim_holds_no_lift_vote_with_three_tied_at_nine() -> None:
    # rules.md#lift-exceptions.
    game = nine_alive_day_two(FIIM)
    events = three_way_tie_twice_at_nine(game)
    assert of_type(events, ev.LiftVoteStarted) == []
    assert of_type(events, ev.NoVoteHeld) == [ev.NoVoteHeld(reason=NoVoteReason.THREE_TIED_AT_NINE)]
    assert len(game.state.alive_seats()) == 9


def test_classic_lifts_three_tied_at_nine() -> None:
    game = nine_alive_day_two(CLASSIC)
    events = three_way_tie_twice_at_nine(game)
    assert of_type(events, ev.LiftVoteStarted) == [ev.LiftVoteStarted(seats=(1, 4, 6))]


def four_alive_fiim_lift() -> Game:
    """fiim down to D#1, S#4, #9 and #10 (by removals on Night 0), with #9 and #10 tied twice on Day 2."""
    game = start(FIIM)
    for seat in (2, 3, 5, 6, 7, 8):
        game.apply(Disqualify(seat=seat))
    to_day(game, 2)  # Day 1's vote was cancelled by the removals
    speeches(game, {4: 9, 9: 10})
    vote(game, {9: [1, 4]})
    end_floors(game, Phase.TIE_SPEECHES)
    vote(game, {9: [1, 4]})
    assert game.state.phase is Phase.LIFT_VOTE
    return game


@pytest.mark.parametrize(("yes", "passes"), [(2, False), (3, True)])
def test_fiim_two_two_tie_at_four_alive_is_lifted_normally(yes: int, passes: bool) -> None:
    game = four_alive_fiim_lift()
    events = collect(game, lambda: lift(game, [1, 4, 9][:yes]))
    assert of_type(events, ev.LiftVoteClosed)[0].passed is passes
    if passes:
        assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=Result.BLACK, reason=WinReason.PARITY)]
    else:
        assert game.state.alive_seats() == [1, 4, 9, 10]


def test_without_last_word_after_the_end_the_game_ends_at_once() -> None:
    game = start(CLASSIC.replace(last_word_after_end=False))
    game.apply(Disqualify(seat=5))  # on Night 0: Day 1's vote is cancelled
    to_day(game, 2)
    play_day(game, {2: 6})
    kill(game, 7)
    events = collect(game, lambda: speeches(game, {3: 8}))
    assert of_type(events, ev.GameEnded) == [ev.GameEnded(result=Result.BLACK, reason=WinReason.PARITY)]
    assert game.state.phase is Phase.ENDED
