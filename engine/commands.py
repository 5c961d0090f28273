"""Commands: what a player, the judge or the clock asks of the game, in the imperative."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import get_args

from engine.ids import Role, Seat

REASON_LIMIT = 200
"""The longest reason the judge may give (a removal, extra points): it is kept with the game and shown."""
EXTRA_POINTS_LIMIT = Decimal(10)
"""Extra points go from ``-EXTRA_POINTS_LIMIT`` to ``+EXTRA_POINTS_LIMIT``: one award, and a seat's game total."""
EXTRA_POINTS_PLACES = 2
"""Extra points have at most this many decimal places (0.25, not 0.125)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartGame:
    """Seat the table and deal: from ``seed`` with a shuffle, or exactly as ``roles`` (seat 1 first)."""

    players: int
    seed: int = 0
    roles: tuple[Role, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EndSpeech:
    """The floor holder says "Thank you" and gives the floor back."""

    seat: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class Nominate:
    """The speaker puts ``target`` up for the vote."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class CastVote:
    """A hand raised for ``candidate``, whose window must be the open one."""

    seat: Seat
    candidate: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class CastLiftVote:
    """A vote on "shall all of them leave?"; silence counts as no."""

    seat: Seat
    yes: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Shoot:
    """A black player's shot for the night."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """The Don's or the Sheriff's check for the night."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class Heal:
    """The Doctor's save for the night."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class ManiacShoot:
    """The maniac fires at ``target``, or passes the night with ``None``."""

    seat: Seat
    target: Seat | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MakeBestMove:
    """The first night's victim names three seats he believes are black (fiim)."""

    seat: Seat
    targets: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class GiveFoul:
    """The judge gives a foul; ``oath`` marks an oath, whose second one removes (classic).

    ``technical`` gives a technical foul instead, counted apart (rules.md#technical-fouls).
    """

    seat: Seat
    oath: bool = False
    technical: bool = False
    left: int | None = None
    """Seconds the floor holder still had, as the runtime measured them: a take back gives them back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RevokeFoul:
    """The judge takes back the seat's last foul, ordinary or technical, whichever came last."""

    seat: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class Disqualify:
    """The judge removes a player at once, with no last word."""

    seat: Seat
    reason: str = ""
    left: int | None = None
    """Seconds the floor holder still had, as the runtime measured them: a take back gives them back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Leave:
    """The player left the table (gave up, or did not come back from a technical pause)."""

    seat: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeout:
    """The current timer ran out; ``step`` guards against a timer that fired for an older state."""

    step: int | None = None
    left: int | None = None
    """Set only by the judge's skip of a floor: the seconds the speaker still had, which a take back gives back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pause:
    """Stop the clock: by the judge, or a technical pause for ``seat`` who left voice."""

    seat: Seat | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Resume:
    """Start the clock again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeclareDraw:
    """The judge ends the game as a draw."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Abandon:
    """The judge ends the game with no result; it counts for no statistics."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AwardPoints:
    """The judge's extra points, positive or negative, with a reason."""

    seat: Seat
    value: str
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TakeBack:
    """The judge takes back the last judge action (a foul, a removal, a skip) before the table moves on.

    ``Game.taking_back`` says what it would take back now; docs/rules.md#taking-back says when it may.
    """


Command = (
    StartGame | EndSpeech | Nominate | CastVote | CastLiftVote | Shoot | Check | Heal | ManiacShoot | MakeBestMove
    | GiveFoul | RevokeFoul | Disqualify | Leave | Timeout | Pause | Resume | DeclareDraw | Abandon | AwardPoints
    | TakeBack
)
"""Every command, the one registry: ``Game`` decides each with a ``match`` that mypy checks is exhaustive."""

COMMAND_TYPES: tuple[type[Command], ...] = get_args(Command)
"""The classes of ``Command``, in its order: what the codec reads and writes."""
