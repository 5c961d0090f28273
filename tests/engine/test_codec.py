"""JSON round trips of commands, events and states, and malformed command data."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    PRESETS,
    Command,
    Game,
    GiveFoul,
    InvalidCommandError,
    MakeBestMove,
    RevokeFoul,
    TakeBack,
    Timeout,
    command_from_data,
    event_from_data,
    state_from_data,
    to_data,
)
from engine.commands import COMMAND_TYPES
from engine.events import EVENT_TYPES
from tests.engine.helpers import SAMPLE_COMMANDS, TWELVE, kill, random_game, start, to_day, to_night


def through_json(value: Any) -> Any:
    return json.loads(json.dumps(to_data(value)))


def test_samples_cover_every_command_type() -> None:
    assert {type(c) for c in SAMPLE_COMMANDS} == set(COMMAND_TYPES)


@pytest.mark.parametrize("command", SAMPLE_COMMANDS, ids=repr)
def test_command_round_trips_through_json(command: Command) -> None:
    data = through_json(command)
    assert data["type"] == type(command).__name__
    assert command_from_data(data) == command


def game_corpus() -> list[Game]:
    games = [random_game(ruleset, seed) for ruleset in PRESETS.values() for seed in range(12)]
    critical = start(GEORGIAN, TWELVE)
    for _ in range(3):
        critical.apply(GiveFoul(seat=9))
    to_day(critical, 1)
    restored = start(CLASSIC)
    for _ in range(3):
        restored.apply(GiveFoul(seat=4))
    restored.apply(RevokeFoul(seat=4))
    best_move = start(FIIM)
    to_night(best_move, 1)
    kill(best_move, 7)
    best_move.apply(MakeBestMove(seat=7, targets=(1, 2, 9)))
    taken_back = start(CLASSIC)
    to_day(taken_back, 1)
    taken_back.apply(Timeout(step=taken_back.state.timer, left=20))
    taken_back.apply(TakeBack())
    return [*games, critical, restored, best_move, taken_back]


CORPUS = game_corpus()


def test_corpus_covers_every_event_type() -> None:
    seen = {type(e) for game in CORPUS for e in game.events}
    assert seen == set(EVENT_TYPES)


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_events_round_trip_through_json(index: int) -> None:
    events = CORPUS[index].events
    assert [event_from_data(through_json(e)) for e in events] == events


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_command_log_round_trips_and_replays_to_the_same_state(index: int) -> None:
    game = CORPUS[index]
    log = json.loads(json.dumps([to_data(c) for c in game.history]))
    commands = [command_from_data(c) for c in log]
    assert commands == game.history
    assert Game.replay(game.ruleset, commands).state == game.state


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_state_round_trips_through_json_at_every_step(index: int) -> None:
    game = CORPUS[index]
    replayed = Game(game.ruleset)
    for command in game.history:
        replayed.apply(command)
        text = json.dumps(to_data(replayed.state))
        restored = state_from_data(json.loads(text))
        assert restored == replayed.state
        assert json.dumps(to_data(restored)) == text


def test_state_to_data_matches_the_codec() -> None:
    game = start(FIIM)
    assert game.state.to_data() == to_data(game.state)


MALFORMED = [
    pytest.param({}, id="no-type"),
    pytest.param({"type": "Fly", "seat": 1}, id="unknown-type"),
    pytest.param({"type": "GameEnded", "result": "red", "reason": "parity"}, id="event-as-command"),
    pytest.param({"type": 5}, id="type-not-text"),
    pytest.param({"type": "Nominate", "seat": 1}, id="missing-field"),
    pytest.param({"type": "Nominate", "seat": 1, "target": 2, "why": "sus"}, id="unknown-field"),
    pytest.param({"type": "Nominate", "seat": "1", "target": 2}, id="seat-as-text"),
    pytest.param({"type": "Nominate", "seat": 1.0, "target": 2}, id="seat-as-float"),
    pytest.param({"type": "Nominate", "seat": True, "target": 2}, id="seat-as-bool"),
    pytest.param({"type": "Nominate", "seat": None, "target": 2}, id="seat-null"),
    pytest.param({"type": "CastLiftVote", "seat": 1, "yes": "yes"}, id="bool-as-text"),
    pytest.param({"type": "CastLiftVote", "seat": 1, "yes": 1}, id="bool-as-int"),
    pytest.param({"type": "StartGame", "players": 10, "roles": ["don", "wizard"]}, id="unknown-role"),
    pytest.param({"type": "StartGame", "players": 10, "roles": "don"}, id="roles-not-a-list"),
    pytest.param({"type": "MakeBestMove", "seat": 7, "targets": [1, "2", 3]}, id="target-as-text"),
    pytest.param({"type": "MakeBestMove", "seat": 7, "targets": {"a": 1}}, id="targets-not-a-list"),
    pytest.param({"type": "GiveFoul", "seat": [1]}, id="seat-as-list"),
    pytest.param({"type": "AwardPoints", "seat": 1, "value": 0.5}, id="value-not-text"),
    pytest.param({"type": "Timeout", "step": "3"}, id="step-as-text"),
    pytest.param({"type": "ManiacShoot", "seat": 6, "target": "none"}, id="optional-target-as-text"),
]


@pytest.mark.parametrize("data", MALFORMED)
def test_malformed_command_data_is_rejected(data: dict[str, object]) -> None:
    with pytest.raises(InvalidCommandError):
        command_from_data(data)


@pytest.mark.parametrize(
    "data",
    [{}, {"type": "Nominate", "seat": 1, "target": 2}, {"type": "GameEnded", "result": "purple", "reason": "parity"}],
    ids=["no-type", "command-as-event", "bad-enum"],
)
def test_malformed_event_data_is_rejected(data: dict[str, object]) -> None:
    with pytest.raises(InvalidCommandError):
        event_from_data(data)


def test_malformed_command_error_is_a_value_error_with_a_code() -> None:
    with pytest.raises(ValueError, match=r"command\.unknown"):
        command_from_data({"type": "Fly"})
