"""The mafia's room: who should be in it and whether it is locked, derived from the game state alone.

Like the mutes (``mafiabot.core.voice.desired_mutes``), the host sends only the difference between
this and the room it knows Discord has (``room_changes``); what Discord refuses stays in the
difference, so the next change of the room sends it again. When the room opens or closes the
engine decides (``mafia_room_open``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine import GameView, Phase, Team, mafia_room_open


@dataclass(frozen=True)
class RoomState:
    """The room as it should be."""

    members: frozenset[int]
    """Seats."""
    locked: bool
    over: bool = False
    """The game is over: nobody joins or leaves any more, the room is archived as the game left it."""


def black_seats(state: GameView) -> list[int]:
    """The black team's seats (secret: for the black team's room and the end summary only)."""
    return [seat for seat, role in enumerate(state.roles, 1) if role.team is Team.BLACK]


def desired_room(state: GameView) -> RoomState:
    """The black players still in the game, in a room open only when the engine says so.

    Once the game is over nobody leaves the room: it is archived as the game left it.
    """
    black = black_seats(state)
    over = state.phase is Phase.ENDED
    if not over:
        black = [seat for seat in black if state.is_alive(seat)]
    return RoomState(frozenset(black), locked=not mafia_room_open(state), over=over)


@dataclass(frozen=True)
class RoomChanges:
    """What turns the known room into the wanted one; false when nothing does."""

    add: frozenset[int] = field(default_factory=frozenset)
    """Seats to add."""
    drop: frozenset[int] = field(default_factory=frozenset)
    """Seats to remove."""
    lock: bool | None = None
    """Lock (True) or unlock (False); None: the lock stays as it is."""

    def __bool__(self) -> bool:
        return bool(self.add or self.drop or self.lock is not None)


def room_changes(known: RoomState | None, wanted: RoomState) -> RoomChanges:
    """The changes that make ``known`` (what Discord has, None: not known) the ``wanted`` room.

    An unknown room (a restarted bot has not seen it) is taken to be the wanted one: the room is
    as the engine left it, and later changes are diffed from there. Once the game is over only
    the lock may change: a black player who left in the last command is not sent out, and none
    who left before comes back.
    """
    if known is None:
        return RoomChanges()
    if wanted.over:
        return RoomChanges(lock=None if wanted.locked == known.locked else wanted.locked)
    return RoomChanges(
        add=wanted.members - known.members,
        drop=known.members - wanted.members,
        lock=None if wanted.locked == known.locked else wanted.locked,
    )
