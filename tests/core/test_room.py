"""The mafia's room: the difference between the room Discord has and the one the game wants is all that is sent."""

from __future__ import annotations

from mafiabot.core.room import RoomChanges, RoomState, room_changes


def room(*members: int, locked: bool) -> RoomState:
    return RoomState(frozenset(members), locked=locked)


def test_the_same_room_needs_nothing() -> None:
    assert room_changes(room(2, 5, 9, locked=True), room(2, 5, 9, locked=True)) == RoomChanges()
    assert not room_changes(room(2, 5, locked=False), room(2, 5, locked=False))


def test_a_departed_black_seat_leaves_and_the_lock_stays_as_it_is() -> None:
    changes = room_changes(room(2, 5, 9, locked=True), room(2, 9, locked=True))
    assert changes == RoomChanges(drop=frozenset({5}))
    assert changes


def test_a_seat_taken_back_returns_and_night_unlocks_together() -> None:
    changes = room_changes(room(2, 9, locked=True), room(2, 5, 9, locked=False))
    assert changes == RoomChanges(add=frozenset({5}), lock=False)


def test_the_day_locks_a_room_that_also_loses_a_member() -> None:
    assert room_changes(room(2, 5, 9, locked=False), room(2, 5, locked=True)) == RoomChanges(
        drop=frozenset({9}), lock=True)


def test_an_unknown_room_is_taken_to_be_the_wanted_one() -> None:
    """After a restart nothing is known: the room is as the engine left it, and the next change is diffed from there."""
    wanted = room(2, 5, locked=True)
    assert room_changes(None, wanted) == RoomChanges()


def test_once_the_game_is_over_nobody_joins_or_leaves_and_only_the_lock_changes() -> None:
    over = RoomState(frozenset({2, 5, 9}), locked=True, over=True)
    assert room_changes(room(2, 9, locked=True), over) == RoomChanges()
    assert room_changes(room(2, 5, 7, 9, locked=False), over) == RoomChanges(lock=True)
