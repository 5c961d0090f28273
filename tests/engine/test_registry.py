"""One registry of events and one of commands: the unions, the classes the modules define and the codec agree.

``match`` over ``Event`` (or ``Command``) with ``assert_never`` lets mypy name a forgotten class; these
tests make sure no class is left out of the union itself, nor out of the codec that stores it.
"""

from __future__ import annotations

import inspect
import json
from types import ModuleType
from typing import cast, get_args

import pytest

from engine import CLASSIC, FloorKind, Game, command_from_data, event_from_data, to_data
from engine import commands as cmd
from engine import events as ev
from engine.commands import COMMAND_TYPES, Command
from engine.errors import InvalidCommandError
from engine.events import EVENT_TYPES, Event
from tests.engine.helpers import ONE_OF_EACH_EVENT, SAMPLE_COMMANDS

PARTS = {ev.Turn}
"""Classes of ``engine.events`` that are parts of events, not events."""


def defined_in(module: ModuleType) -> set[type]:
    return {cls for _name, cls in inspect.getmembers(module, inspect.isclass) if cls.__module__ == module.__name__}


def test_the_event_union_holds_every_event_class_defined() -> None:
    assert set(get_args(Event)) == defined_in(ev) - PARTS
    assert get_args(Event) == EVENT_TYPES
    assert len(set(EVENT_TYPES)) == len(EVENT_TYPES)


def test_the_command_union_holds_every_command_class_defined() -> None:
    assert set(get_args(Command)) == defined_in(cmd)
    assert get_args(Command) == COMMAND_TYPES
    assert len(set(COMMAND_TYPES)) == len(COMMAND_TYPES)


def test_the_samples_hold_one_of_each_event() -> None:
    assert [type(e) for e in ONE_OF_EACH_EVENT] == list(EVENT_TYPES)


@pytest.mark.parametrize("event", ONE_OF_EACH_EVENT, ids=lambda e: type(e).__name__)
def test_the_codec_reads_back_every_event_by_its_name(event: Event) -> None:
    data = json.loads(json.dumps(to_data(event)))
    assert data["type"] == type(event).__name__
    assert event_from_data(data) == event
    with pytest.raises(InvalidCommandError):
        command_from_data(data)


@pytest.mark.parametrize("command", SAMPLE_COMMANDS, ids=repr)
def test_the_codec_reads_no_command_as_an_event(command: Command) -> None:
    with pytest.raises(InvalidCommandError):
        event_from_data(to_data(command))


def test_a_part_of_an_event_is_no_event() -> None:
    turn = ev.Turn(2, FloorKind.SPEECH, 60)
    assert "type" not in to_data(turn)


def test_a_value_that_is_no_command_is_refused_not_crashed_on() -> None:
    # mypy proves the dispatch's last arm unreachable for commands; a caller that is not type-checked
    # still gets a refusal there.
    game = Game(CLASSIC)
    stray = cast(Command, ev.Resumed())
    with pytest.raises(InvalidCommandError) as caught:
        game.apply(stray)
    assert caught.value.code == "command.unknown"
    assert not game.is_legal(stray)
    assert game.history == []
