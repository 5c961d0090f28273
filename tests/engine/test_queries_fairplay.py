"""The fair-play queries: when the town sleeps, and when the table listens to a speaker."""

from __future__ import annotations

import pytest

from engine import CLASSIC, FloorKind, Phase, eyes_closed, presence_required, someone_speaks
from engine import events as ev
from tests.engine.helpers import TEN, kill, start, to_day, to_night
from tests.engine.test_queries import state_of


def test_the_town_sleeps_at_night_zero_and_each_night_only() -> None:
    game = start()
    assert eyes_closed(game.state)  # the acquaintance night
    to_day(game, 1)
    assert not eyes_closed(game.state)
    to_night(game, 1)
    assert eyes_closed(game.state)
    kill(game, 7)  # the dawn's command leaves the night behind
    assert not eyes_closed(game.state)


@pytest.mark.parametrize("phase", list(Phase))
def test_eyes_closed_by_phase(phase: Phase) -> None:
    state = state_of(TEN)
    state.phase = phase
    assert eyes_closed(state) is (phase in (Phase.NIGHT_ZERO, Phase.NIGHT))


def test_the_table_listens_while_a_speaker_holds_the_floor() -> None:
    game = start()
    assert not someone_speaks(game.state)  # night zero: nobody has the floor
    to_day(game, 1)
    assert game.state.floor is not None
    assert someone_speaks(game.state)


@pytest.mark.parametrize("kind", list(FloorKind))
def test_a_silenced_turn_has_nobody_to_listen_to(kind: FloorKind) -> None:
    state = state_of(TEN)
    state.phase = Phase.SPEECHES
    state.floor = ev.Turn(3, kind, 60)
    assert someone_speaks(state) is (kind is not FloorKind.SILENT)
    state.phase = Phase.ENDED
    assert not someone_speaks(state)


def test_presence_is_wanted_on_the_floor_or_all_day_and_never_at_night() -> None:
    for presence, wanted in (("off", set()), ("floor", {1}), ("day", set(range(1, 11)))):
        rules = CLASSIC.replace(presence=presence)
        game = start(rules)
        assert not any(presence_required(game.state, rules, seat) for seat in range(1, 11))  # night 0
        to_day(game, 1)
        assert {seat for seat in range(1, 11) if presence_required(game.state, rules, seat)} == wanted
