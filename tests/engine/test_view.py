"""The read-only view: ``GameState`` satisfies it, and it leaves no fact of the state out."""

from __future__ import annotations

import dataclasses

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
    view: GameView = game.view
    assert view is game.state
    game.apply(Timeout())
    assert view.day == 1


def test_the_queries_answer_through_the_view() -> None:
    game = start()
    to_night(game, 1)
    view: GameView = game.view
    assert legal_targets(view, CLASSIC, Act.SHOOT, 1) == tuple(view.alive_seats())
