"""Property tests: random legal play under each ruleset (hypothesis picks the seeds, deterministically)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    Abandon,
    CastLiftVote,
    CastVote,
    Cause,
    Check,
    Command,
    DeclareDraw,
    EndSpeech,
    FloorKind,
    Game,
    GameState,
    GameView,
    Heal,
    MakeBestMove,
    ManiacShoot,
    Nominate,
    Phase,
    Result,
    Role,
    RulesError,
    Ruleset,
    Shoot,
    StartGame,
    Team,
    WinReason,
    command_from_data,
    evolve,
    replay_events,
    to_data,
)
from engine import events as ev
from tests.engine.helpers import CLASSIC_DOCTOR, candidate_commands, random_step

RULESETS = {
    "classic": CLASSIC,
    "georgian": GEORGIAN,
    "fiim": FIIM,
    "classic-doctor": CLASSIC_DOCTOR,
    "flags-flipped": CLASSIC_DOCTOR.replace(
        removal_cancels_vote=False,
        self_nomination=False,
        last_word_after_end=False,
        revote_when_tie_shrinks=True,
        muted_can_nominate=True,
        short_speech_alive=5,
    ),
    "georgian-variant": GEORGIAN.replace(
        mafia_kill="unanimous", defense_before_vote=False, first_day_single_nominee_no_vote=True, maniac_shots=1
    ),
}

COMMAND_LIMIT = 3000
PROPERTY_SETTINGS = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PLAYER_ACTIONS = (Nominate, CastVote, CastLiftVote, Shoot, Check, Heal, ManiacShoot)


def spec_winner(state: GameView) -> tuple[Result, WinReason] | None:
    """rules.md#win-check, written out independently of the engine."""
    alive = [role for role, living in zip(state.roles, state.alive, strict=True) if living]
    black = sum(1 for r in alive if r.team is Team.BLACK)
    red = sum(1 for r in alive if r.team is Team.RED)
    maniac = sum(1 for r in alive if r is Role.MANIAC)
    if Role.MANIAC in state.roles:  # georgian formula
        total = black + red + maniac
        if total == 0:
            return Result.DRAW, WinReason.EVERYONE_GONE
        if maniac and total <= 2:
            return Result.MANIAC, WinReason.MANIAC_DUEL
        if not maniac and black == 0:
            return Result.RED, WinReason.ALL_BLACK_GONE
        if not maniac and black >= red:
            return Result.BLACK, WinReason.PARITY
        return None
    if black == 0 and red == 0:
        return Result.DRAW, WinReason.EVERYONE_GONE
    if black == 0:
        return Result.RED, WinReason.ALL_BLACK_GONE
    if black >= red:
        return Result.BLACK, WinReason.PARITY
    return None


def assert_actor_may_act(state: GameView, command: Command) -> None:
    """Dead and removed players never act; the dead only finish a last word or the best move."""
    if isinstance(command, EndSpeech):
        assert state.floor is not None
        assert state.floor.seat == command.seat
        assert not state.removed(command.seat)
        if state.floor.kind not in (FloorKind.LAST_WORD, FloorKind.FAREWELL):
            assert state.is_alive(command.seat)
    elif isinstance(command, MakeBestMove):
        departure = state.departure(command.seat)
        assert departure is not None
        assert departure.cause is Cause.KILLED
        assert departure.at == 2  # Night 1
    elif isinstance(command, PLAYER_ACTIONS):
        assert state.is_alive(command.seat), f"#{command.seat} is gone but did {command!r}"


def probe_illegal(game: Game, rng: random.Random) -> None:
    """A random command the engine calls illegal is refused and changes nothing, to the byte."""
    play, judge = candidate_commands(game, rng)
    players = game.state.players
    play += [Nominate(seat=0, target=1), CastVote(seat=players + 1, candidate=1), StartGame(players=10)]
    illegal = [c for c in play + judge if not game.is_legal(c)]
    if not illegal:
        return
    command = rng.choice(illegal)
    before = json.dumps(to_data(game.state), sort_keys=True)
    sizes = (len(game.history), len(game.events))
    with pytest.raises(RulesError):
        game.apply(command)
    assert json.dumps(to_data(game.state), sort_keys=True) == before
    assert (len(game.history), len(game.events)) == sizes


def play(ruleset: Ruleset, seed: int, *, probe: bool) -> Game:
    rng = random.Random(seed)
    game = Game(ruleset)
    game.apply(StartGame(players=rng.choice(ruleset.player_counts), seed=seed))
    targets: dict[int, int] = {}
    for _ in range(COMMAND_LIMIT):
        if game.over:
            break
        if probe and rng.random() < 0.3:
            probe_illegal(game, rng)
        night = game.state.night
        if night not in targets and game.state.phase is Phase.NIGHT:
            targets[night] = rng.choice(game.state.alive_seats())
        command = random_step(game, rng, team_target=targets.get(night))
        assert_actor_may_act(game.state, command)
        game.apply(command)
    return game


def assert_result_follows_spec(game: Game) -> None:
    ended = [e for e in game.events if isinstance(e, ev.GameEnded)]
    assert len(ended) == 1, "exactly one result"
    end = game.events.index(ended[0])
    state = GameState()
    for event in game.events[:end]:
        # The result is fixed at once: it may be due only after the event just before GameEnded.
        assert spec_winner(state) is None or state.roles == (), f"a result was due before {event!r}"
        evolve(state, event)
    result = ended[0]
    if result.reason in (WinReason.DECLARED_DRAW, WinReason.ABANDONED):
        assert spec_winner(state) is None
        assert result.result is (Result.DRAW if result.reason is WinReason.DECLARED_DRAW else Result.ABANDONED)
        assert any(isinstance(c, DeclareDraw | Abandon) for c in game.history)
    elif result.reason is WinReason.NO_DEPARTURES:
        assert spec_winner(state) is None
        assert game.ruleset.no_departure_draw
        assert state.night >= 3
        assert all(d.at < 2 * state.night - 4 for d in state.departures)
    else:
        assert spec_winner(state) == (result.result, result.reason)


@pytest.mark.parametrize("name", list(RULESETS))
@PROPERTY_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_legal_play_ends_with_one_result_that_follows_the_spec(name: str, seed: int) -> None:
    game = play(RULESETS[name], seed, probe=False)
    assert game.over, f"no end after {COMMAND_LIMIT} commands"
    assert_result_follows_spec(game)


@pytest.mark.parametrize("name", list(RULESETS))
@PROPERTY_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_replays_rebuild_the_same_state(name: str, seed: int) -> None:
    ruleset = RULESETS[name]
    game = play(ruleset, seed, probe=False)
    assert Game.replay(ruleset, game.history).state == game.state
    assert replay_events(game.events) == game.state
    log = json.loads(json.dumps([to_data(c) for c in game.history]))
    replayed = Game.replay(ruleset, [command_from_data(c) for c in log])
    assert replayed.state == game.state
    assert json.dumps(to_data(replayed.state)) == json.dumps(to_data(game.state))


@pytest.mark.parametrize("name", ["classic", "georgian", "fiim"])
@PROPERTY_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_illegal_commands_are_refused_without_changing_the_state(name: str, seed: int) -> None:
    game = play(RULESETS[name], seed, probe=True)
    assert game.over
    assert Game.replay(game.ruleset, game.history).state == game.state
