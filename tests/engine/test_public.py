"""The public view of a table: its types cannot hold a card or a night choice, and it reads none."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import pytest

from engine import Cause, Game, GameView, GiveFoul, Phase, Role, Team
from engine.public import PublicSeat, PublicTable, public_table
from tests.engine.helpers import end_floors, kill, play_day, speeches, start_table, to_day, to_speeches

SECRET_TYPES = (Role, Team)
SECRET_WORDS = ("role", "team", "shot", "check", "heal", "maniac", "target", "black", "red")
"""Field names a public type must not have: a seat number under such a name would be a night choice."""


def _types_in(annotation: Any) -> set[Any]:
    """Every type an annotation names, through unions, tuples and other generics."""
    found = {annotation}
    origin = typing.get_origin(annotation)
    if origin is not None:
        found.add(origin)
    for arg in typing.get_args(annotation):
        found |= _types_in(arg)
    return found


def _field_types(cls: type, seen: set[type] | None = None) -> dict[str, set[Any]]:
    """Each field of ``cls`` and of every dataclass its fields hold, with the types it names."""
    seen = seen if seen is not None else set()
    seen.add(cls)
    hints = typing.get_type_hints(cls)
    fields: dict[str, set[Any]] = {}
    for field in dataclasses.fields(cls):
        named = _types_in(hints[field.name])
        fields[f"{cls.__name__}.{field.name}"] = named
        for kind in named:
            if dataclasses.is_dataclass(kind) and isinstance(kind, type) and kind not in seen:
                fields |= _field_types(kind, seen)
    return fields


def test_the_public_types_hold_no_role_team_or_night_choice() -> None:
    fields = _field_types(PublicTable)
    assert "PublicSeat.seat" in fields  # the walk reached the seats
    for name, named in fields.items():
        assert not named & set(SECRET_TYPES), name
        classes = {kind for kind in named if isinstance(kind, type) and typing.get_origin(kind) is None}
        assert classes <= {int, bool, str, tuple, types.NoneType, types.UnionType, Cause, Phase, PublicSeat}, name
        assert not any(word in name.split(".")[1] for word in SECRET_WORDS), name


def test_the_public_types_are_frozen() -> None:
    table = public_table(start_table("DMMSCCCCCC").state)
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.day = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.seats[0].alive = False  # type: ignore[misc]


class _Guarded:
    """A game view that refuses every read of a card or a night choice."""

    SECRET = frozenset({"roles", "role", "team_alive", "shots", "checks", "heal", "heals", "maniac_target",
                        "maniac_acted", "best_move_black", "to_data", "players"})

    def __init__(self, state: GameView) -> None:
        self._state = state

    def __getattr__(self, name: str) -> Any:
        if name in self.SECRET:
            raise AssertionError(f"the public view read {name}")
        return getattr(self._state, name)


def _played(seating: str) -> Game:
    """Day 1 with a foul and a vote, a night kill, and the second morning."""
    game = start_table(seating)
    to_day(game, 1)
    game.apply(GiveFoul(seat=4))
    game.apply(GiveFoul(seat=4))
    play_day(game, {2: 7, 5: 3}, {7: [1, 2, 3, 4, 5, 6]})
    kill(game, 10)
    to_speeches(game)
    return game


def test_the_public_table_reads_no_card_or_night_choice() -> None:
    game = _played("DMMSCCCCCC")
    assert public_table(_Guarded(game.state)) == public_table(game.state)


def test_the_public_table_shows_departures_fouls_and_the_day() -> None:
    game = _played("DMMSCCCCCC")
    table = public_table(game.state)
    assert (table.phase, table.day, table.is_night) == (Phase.SPEECHES, 2, False)
    assert [s.seat for s in table.seats] == list(range(1, 11))
    assert table.seats[6].left is Cause.VOTED_OUT
    assert table.seats[9].left is Cause.KILLED
    assert not table.seats[6].alive
    assert not table.seats[9].alive
    assert table.seats[3].fouls == 2
    assert table.alive == 8
    assert table.nominees == ()
    assert game.state.floor is not None
    assert table.floor == game.state.floor.seat


def test_the_ballot_is_the_running_votes_candidates() -> None:
    game = start_table("DMMSCCCCCC")
    to_day(game, 1)
    speeches(game, {2: 7, 5: 3})
    end_floors(game, Phase.DEFENSE)
    table = public_table(game.state)
    assert table.phase is Phase.VOTING
    assert table.nominees == (7, 3)
    assert [s.seat for s in table.seats if s.nominee] == [3, 7]


@pytest.mark.parametrize("hidden", ["CCSCMDCCMC", "CMCCDCMSCC"])
def test_the_same_public_history_gives_the_same_public_table_whatever_the_cards(hidden: str) -> None:
    shown, other = _played("DMMSCCCCCC"), _played(hidden)
    assert shown.state.roles != other.state.roles
    assert shown.events != other.events  # the shots came from other seats
    assert public_table(shown.state) == public_table(other.state)
