"""The mafia's room: who should be in it and whether it is locked, derived from the game state alone.

Like the mutes (``mafiabot.core.voice.desired_mutes``), the host applies only the difference between
this and what the room is; when the room opens or closes the engine decides (``mafia_room_open``).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import GameView, Phase, Team, mafia_room_open


@dataclass(frozen=True)
class RoomState:
    """The room as it should be."""

    members: frozenset[int]
    """Seats."""
    locked: bool


def black_seats(state: GameView) -> list[int]:
    """The black team's seats (secret: for the black team's room and the end summary only)."""
    return [seat for seat, role in enumerate(state.roles, 1) if role.team is Team.BLACK]


def desired_room(state: GameView) -> RoomState:
    """The black players still in the game, in a room open only when the engine says so.

    Once the game is over nobody leaves the room: it is archived as the game left it.
    """
    black = black_seats(state)
    if state.phase is not Phase.ENDED:
        black = [seat for seat in black if state.is_alive(seat)]
    return RoomState(frozenset(black), locked=not mafia_room_open(state))
