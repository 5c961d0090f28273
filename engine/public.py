"""The table as everyone at it may know it: seats, who is out and how, fouls, the ballot, day or night.

A picture posted during the game is drawn from a :class:`PublicTable` alone. Its types hold no
``Role``, no ``Team`` and no night choice (shots, checks, saves), so a drawing made from it cannot
tell what the cards are, whatever it does; ``tests/engine/test_public.py`` walks the field types to
keep it so. How a seat left (killed, voted out, removed) is announced at the table, so it is here.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.ids import Cause, Phase, Seat
from engine.view import GameView

_NIGHT_PHASES = frozenset({Phase.NIGHT_ZERO, Phase.NIGHT, Phase.BEST_MOVE})


@dataclass(frozen=True, slots=True)
class PublicSeat:
    """One seat as the table sees it."""

    seat: Seat
    alive: bool
    left: Cause | None
    """How the seat left the table, once it has."""
    left_at: int | None
    """When: 2·night for a night, 2·day-1 for a day (as ``Departure.at``)."""
    fouls: int
    silenced: bool
    """The seat has lost its next speech to its fouls."""
    nominee: bool
    """The seat is on the ballot."""
    technical: int = 0
    """Technical fouls, counted apart from ``fouls`` (rules.md#technical-fouls)."""


@dataclass(frozen=True, slots=True)
class PublicTable:
    """Everything public about a table at one moment, and nothing secret."""

    seats: tuple[PublicSeat, ...]
    phase: Phase
    day: int
    night: int
    nominees: tuple[Seat, ...]
    """The ballot: the running vote's candidates (the tied ones in a revote), else the day's nominees."""
    floor: Seat | None
    """Who holds the floor, if anyone."""

    @property
    def is_night(self) -> bool:
        """Whether the city sleeps (night 0, a night, the first victim's Best Move before dawn)."""
        return self.phase in _NIGHT_PHASES

    @property
    def alive(self) -> int:
        """How many seats are still at the table."""
        return sum(seat.alive for seat in self.seats)


def public_table(view: GameView) -> PublicTable:
    """The public part of ``view``; it reads no role and no night choice."""
    nominees = tuple(view.vote.candidates) if view.vote is not None else tuple(view.nominees)
    seats = []
    for seat in range(1, len(view.alive) + 1):
        departure = view.departure(seat)
        seats.append(PublicSeat(
            seat=seat,
            alive=view.is_alive(seat),
            left=departure.cause if departure is not None else None,
            left_at=departure.at if departure is not None else None,
            fouls=len(view.fouls[seat - 1]),
            silenced=seat in view.silenced,
            nominee=seat in nominees,
            technical=view.technical_count(seat),
        ))
    return PublicTable(
        seats=tuple(seats),
        phase=view.phase,
        day=view.day,
        night=view.night,
        nominees=nominees,
        floor=view.floor.seat if view.floor is not None else None,
    )
