"""The read-only view: ``GameState`` satisfies it, and it leaves no fact of the state out."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import mypy.api
import pytest

from engine import CLASSIC, GameState, GameView, Timeout, VoteView, legal_targets
from engine.queries import Act
from engine.state import VoteRound
from tests.engine.helpers import start, to_night


def members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def public_methods(cls: type) -> set[str]:
    return {name for name, value in vars(cls).items() if not name.startswith("_") and callable(value)}


def test_the_game_view_names_every_field_and_reader_of_the_state() -> None:
    fields = {f.name for f in dataclasses.fields(GameState)}
    assert members(GameView) == fields | public_methods(GameState) | {"players"}


def test_the_vote_view_names_every_field_of_a_round() -> None:
    assert members(VoteView) == {f.name for f in dataclasses.fields(VoteRound)}


def test_the_game_hands_out_its_own_state_as_the_view() -> None:
    game = start()
    view: GameView = game.state
    assert view is game.state
    game.apply(Timeout())
    assert view.day == 1


def test_the_queries_answer_through_the_view() -> None:
    game = start()
    to_night(game, 1)
    view: GameView = game.state
    assert legal_targets(view, CLASSIC, Act.SHOOT, 1) == tuple(view.alive_seats())


def test_the_state_handed_out_cannot_be_replaced() -> None:
    game = start()
    with pytest.raises(AttributeError):
        game.state = GameState()  # type: ignore[misc]


OUTSIDER = '''
from engine import CLASSIC, Game, Phase

game = Game(CLASSIC)
state = game.state
state.day = 3
state.phase = Phase.ENDED
state.alive.append(True)
state.silenced[1] = 2
state.spoken.add(1)
if state.vote is not None:
    state.vote.votes[1] = 1
game.state = state
'''


def test_mypy_refuses_every_write_through_the_state_handed_out(tmp_path: Path) -> None:
    """Outside the engine the state is read-only by type: each write in ``OUTSIDER`` is one mypy error."""
    outsider = tmp_path / "outsider.py"
    outsider.write_text(OUTSIDER)
    out, _, status = mypy.api.run(["--strict", "--no-incremental", "--follow-imports=silent", str(outsider)])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1
    assert [int(line.split(":")[1]) for line in errors] == [6, 7, 8, 9, 10, 12, 13], out
