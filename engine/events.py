"""Events: what happened, named in the past tense. They carry every fact, secret ones included.

Events are never shown to players as they are; the bot decides what of each is public.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from engine.ids import Cause, FloorKind, NoVoteReason, Phase, Result, Role, Seat, VoteKind, WinReason


@dataclass(frozen=True, slots=True)
class Turn:
    """One player's time with the floor."""

    seat: Seat
    kind: FloorKind
    seconds: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GameStarted:
    """The table is seated and the cards are dealt."""

    roles: tuple[Role, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class NightFell:
    """Night ``night`` begins (0 is the acquaintance night)."""

    night: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ShotFired:
    """A black player's shot."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class DonChecked:
    """The Don's check: is ``target`` the Sheriff?"""

    seat: Seat
    target: Seat
    sheriff: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SheriffChecked:
    """The Sheriff's (Detective's) check: is ``target`` black?"""

    seat: Seat
    target: Seat
    black: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Healed:
    """The Doctor's pick for the night."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class ManiacActed:
    """The maniac fired at ``target`` or passed (``None``)."""

    seat: Seat
    target: Seat | None


@dataclass(frozen=True, slots=True, kw_only=True)
class NightResolved:
    """Dawn: the night's kills after the Doctor's save; ``killed`` leave the table together."""

    night: int
    mafia_target: Seat | None
    maniac_target: Seat | None
    healed: Seat | None
    killed: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BestMoveAsked:
    """The first night's victim may now name three seats."""

    seat: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class BestMoveMade:
    """The seats the first night's victim named, and how many of them are black."""

    seat: Seat
    targets: tuple[Seat, ...]
    black: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DayStarted:
    """Day ``day`` begins with ``opener``; ``vote_cancelled`` when a removal took today's vote."""

    day: int
    opener: Seat
    vote_cancelled: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CriticalFoulsAnnounced:
    """The morning list of players on the foul limit (georgian)."""

    seats: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageStarted:
    """A new phase with its queue of turns (empty for phases without a floor)."""

    phase: Phase
    turns: tuple[Turn, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FloorGiven:
    """The head of the queue takes the floor."""

    turn: Turn


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSkipped:
    """The head of the queue loses the turn (fouls, or gone from the table)."""

    seat: Seat
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeechPenaltyServed:
    """A three-foul penalty is used up: the speech skipped, silent or short."""

    seat: Seat
    mode: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FloorEnded:
    """The floor holder is done: "thank you", the timer, or a removal."""

    seat: Seat
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Nominated:
    """A nomination accepted ("Accepted: #target")."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class NomineesRecapped:
    """The host reads out the nominees, in nomination order."""

    seats: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class VotingStarted:
    """A voting round over ``candidates``, one window at a time, in this order."""

    kind: VoteKind
    candidates: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteCast:
    """A hand for ``candidate``."""

    seat: Seat
    candidate: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteWindowClosed:
    """The window for ``candidate`` closed; the next one opens."""

    candidate: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class VotingClosed:
    """A round's tally: voters per candidate, the silent ones counted for the last candidate."""

    kind: VoteKind
    tally: tuple[tuple[Seat, tuple[Seat, ...]], ...]
    silent: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TieDeclared:
    """A car crash: these players share the top count."""

    seats: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiftVoteStarted:
    """"Shall all of them leave?" over ``seats``."""

    seats: tuple[Seat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiftVoteCast:
    """A yes or no on the lift vote."""

    seat: Seat
    yes: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class LiftVoteClosed:
    """The lift vote's result: it passes only with more than half of the living saying yes."""

    yes: tuple[Seat, ...]
    alive: int
    passed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class NoVoteHeld:
    """The day ends with nobody voted out."""

    reason: NoVoteReason


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteCancelled:
    """A removal cancelled the vote in progress."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayersVotedOut:
    """These players leave by the vote, at the same moment."""

    seats: tuple[Seat, ...]
    cause: Cause


@dataclass(frozen=True, slots=True, kw_only=True)
class FoulGiven:
    """A foul; ``total`` is the seat's count of that kind (ordinary or ``technical``) after it."""

    seat: Seat
    oath: bool
    total: int
    technical: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FoulRevoked:
    """The judge took the seat's last foul back; ``total`` counts the fouls of its kind left."""

    seat: Seat
    total: int
    technical: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeechLost:
    """Three fouls: the seat loses its speech on ``day``, or (``short``) all of it but the short speech."""

    seat: Seat
    day: int
    short: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeechRestored:
    """A revoked third foul gives the speech back."""

    seat: Seat


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerRemoved:
    """A removal: the player leaves at once with no last word; ``cancels`` says which vote it takes."""

    seat: Seat
    cause: Cause
    cancels: str
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Paused:
    """The clock stopped; ``seat`` is set for a technical pause."""

    seat: Seat | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Resumed:
    """The clock runs again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PointsAwarded:
    """The judge's extra points."""

    seat: Seat
    value: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionTakenBack:
    """The judge took back their last action: the state is as if it had never been.

    ``kind`` is ``foul``, ``removal`` or ``skip``; ``seat`` is whose foul or removal it was, or the
    skipped speaker; ``total`` the seat's fouls now, ``technical`` its technical fouls. ``floor`` is the
    turn given back when the action had moved the floor (with the seconds that were left), else None.
    ``restored`` holds every other field of the state the take back changes, as JSON text of its plain
    data (``to_data``), so the fold only sets them and a replay of the events rebuilds the exact state.
    """

    kind: str
    seat: Seat
    total: int
    floor: Turn | None = None
    restored: tuple[tuple[str, str], ...] = ()
    technical: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEnded:
    """The result, fixed at this moment."""

    result: Result
    reason: WinReason


Event = (
    GameStarted | NightFell | ShotFired | DonChecked | SheriffChecked | Healed | ManiacActed | NightResolved
    | BestMoveAsked | BestMoveMade | DayStarted | CriticalFoulsAnnounced | StageStarted | FloorGiven | TurnSkipped
    | SpeechPenaltyServed | FloorEnded | Nominated | NomineesRecapped | VotingStarted | VoteCast | VoteWindowClosed
    | VotingClosed | TieDeclared | LiftVoteStarted | LiftVoteCast | LiftVoteClosed | NoVoteHeld | VoteCancelled
    | PlayersVotedOut | FoulGiven | FoulRevoked | SpeechLost | SpeechRestored | PlayerRemoved | Paused | Resumed
    | PointsAwarded | GameEnded | ActionTakenBack
)
"""Every event, the one registry: ``match`` over it with ``assert_never`` and mypy names a forgotten case."""

EVENT_TYPES: tuple[type[Event], ...] = get_args(Event)
"""The classes of ``Event``, in its order: what the codec reads and writes."""
