"""A game's full protocol, built from its seats and event log alone.

This is the judge's sheet after the game: who sat where with which card, every day's speeches,
nominations and votes, every night's shots, checks and saves, fouls and removals, the result and
the points. It holds facts only; the bot turns them into words in the member's language. The
builder is pure, so the bot can also use it on a live ``Game`` at the end, without the store. It is
a projection of the game for the Discord side and the tools, not a storage concern, so it lives in
the table core: the store calls it on a stored game's log for the history and the exports, and
the renderer and the pictures draw from it without the store (the ``pictures-without-the-store``
import contract).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal, TypeAlias, assert_never

from engine import CLASSIC, Result, Role, Ruleset, RulesetError, Team, find_ruleset, vote_totals, winning_team
from engine import events as ev
from mafiabot.core.records import SeatInfo

Seat = int


@dataclass(frozen=True, slots=True)
class Moment:
    """When something happened: night 0 is the acquaintance night, day 1 the first day."""

    kind: Literal["day", "night"]
    number: int


@dataclass(frozen=True, slots=True)
class Departure:
    """How and when a seat left the table."""

    cause: str
    at: Moment


@dataclass(frozen=True, slots=True)
class ProtocolSeat:
    """A seat's line: the player, the card, and how the game went for them."""

    seat: Seat
    user_id: int | None
    display_name: str
    role: str | None
    team: str | None
    fouls: int
    removed: bool
    departure: Departure | None
    points: Decimal | None
    won: bool | None
    technical: int = 0
    """Technical fouls, counted apart from ``fouls``."""


@dataclass(frozen=True, slots=True)
class Speech:
    """One time with the floor; ``kind`` is an ``engine.FloorKind`` value, ``ended`` why it stopped."""

    seat: Seat
    kind: str
    seconds: int
    ended: str | None = None


@dataclass(frozen=True, slots=True)
class Skip:
    """A turn that was not given: ``reason`` is ``fouls``, ``gone`` or ``removed``."""

    seat: Seat
    reason: str


@dataclass(frozen=True, slots=True)
class Nomination:
    """``seat`` put ``target`` up for the vote."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True)
class Tally:
    """One candidate's hands: ``voters`` raised them, ``total`` adds the silent ones for the last candidate."""

    candidate: Seat
    voters: tuple[Seat, ...]
    total: int


@dataclass(frozen=True, slots=True)
class VoteRound:
    """A voting round (``main`` or ``revote``) and its tally."""

    kind: str
    candidates: tuple[Seat, ...]
    tally: tuple[Tally, ...] = ()
    silent: tuple[Seat, ...] = ()
    closed: bool = False


@dataclass(frozen=True, slots=True)
class LiftVote:
    """"Shall all of them leave?"; it passes with more than half of the living."""

    seats: tuple[Seat, ...]
    yes: tuple[Seat, ...]
    alive: int
    passed: bool


@dataclass(slots=True)
class Day:
    """Everything said and decided on one day."""

    number: int
    opener: Seat
    vote_cancelled: bool = False
    critical_fouls: tuple[Seat, ...] = ()
    speeches: list[Speech] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    nominations: list[Nomination] = field(default_factory=list)
    votes: list[VoteRound] = field(default_factory=list)
    ties: list[tuple[Seat, ...]] = field(default_factory=list)
    lift: LiftVote | None = None
    no_vote: str | None = None
    """An ``engine.NoVoteReason`` value when the day ended with nobody voted out."""
    voted_out: tuple[Seat, ...] = ()
    voted_out_cause: str | None = None


@dataclass(frozen=True, slots=True)
class Check:
    """A night check: by the Don (``found`` = is the Sheriff) or the Sheriff (``found`` = is black)."""

    seat: Seat
    target: Seat
    by: str
    found: bool


@dataclass(frozen=True, slots=True)
class BestMove:
    """The first night's victim named three seats; ``black`` of them were black."""

    seat: Seat
    targets: tuple[Seat, ...]
    black: int


@dataclass(slots=True)
class Night:
    """Everything done in one night and how it resolved at dawn."""

    number: int
    shots: list[Nomination] = field(default_factory=list)
    """Each black player's shot, as (shooter, target)."""
    checks: list[Check] = field(default_factory=list)
    heals: list[Nomination] = field(default_factory=list)
    maniac: Nomination | None = None
    maniac_passed: bool = False
    mafia_target: Seat | None = None
    maniac_target: Seat | None = None
    healed: Seat | None = None
    killed: tuple[Seat, ...] = ()
    resolved: bool = False
    best_move_asked: Seat | None = None
    best_move: BestMove | None = None


@dataclass(frozen=True, slots=True)
class Foul:
    """A foul (``oath`` for an oath) or, with ``revoked``, the judge taking one back; ``total`` after it.

    A ``technical`` foul is counted apart, so its ``total`` counts technical fouls only.
    """

    seat: Seat
    total: int
    at: Moment
    oath: bool = False
    revoked: bool = False
    technical: bool = False


@dataclass(frozen=True, slots=True)
class Removal:
    """A removal (fouls, oaths, disqualification, leaving) and which vote it cancelled."""

    seat: Seat
    cause: str
    at: Moment
    cancels: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ExtraPoints:
    """The judge's extra points for a seat, with the written reason."""

    seat: Seat
    value: Decimal
    reason: str
    at: Moment


@dataclass(frozen=True, slots=True)
class PauseRecord:
    """A pause; ``seat`` is set for a technical pause."""

    seat: Seat | None
    at: Moment


@dataclass(frozen=True, slots=True)
class GameHeader:
    """The facts about a game that are not in its event log."""

    id: int | None = None
    guild_id: int | None = None
    channel_id: int | None = None
    judge_id: int | None = None
    ruleset_name: str = ""
    ruleset: Ruleset | None = None
    """The game's rules, for its own words (the Detective's checks); None if they no longer read back."""
    status: str = "open"
    created_at: datetime | None = None
    finished_at: datetime | None = None


ProtestStatus = Literal["open", "upheld", "rejected"]


@dataclass(frozen=True, slots=True)
class Protest:
    """A player's protest of the game (``during_game`` or after it, within the ruleset's window) and its ruling."""

    id: int
    game_id: int
    user_id: int
    seat: int
    text: str
    filed_at: datetime
    during_game: bool
    status: ProtestStatus = "open"
    note: str = ""
    ruled_by: int | None = None
    ruled_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ProtestedGame:
    """A protest with who may rule on it: the game's judge, and at a tournament its organiser."""

    protest: Protest
    guild_id: int
    channel_id: int
    judge_id: int | None
    organiser_id: int | None
    language: str


@dataclass(frozen=True, slots=True)
class Protocol:
    """The whole game, in order; ``result`` is None while the game is still open."""

    game: GameHeader
    seats: tuple[ProtocolSeat, ...]
    nights: tuple[Night, ...]
    days: tuple[Day, ...]
    fouls: tuple[Foul, ...]
    removals: tuple[Removal, ...]
    extra_points: tuple[ExtraPoints, ...]
    pauses: tuple[PauseRecord, ...]
    result: str | None
    reason: str | None
    protests: tuple[Protest, ...] = ()
    """Kept apart from the game's log (``mafiabot.store.protests``), joined in when the protocol is read."""

    def rules(self) -> Ruleset:
        """The rules the game was played by: as stored, else the preset of its name, else classic's words."""
        if self.game.ruleset is not None:
            return self.game.ruleset
        try:
            return find_ruleset(self.game.ruleset_name)
        except RulesetError:
            return CLASSIC


NightEvent: TypeAlias = (
    ev.NightFell | ev.ShotFired | ev.DonChecked | ev.SheriffChecked | ev.Healed | ev.ManiacActed | ev.NightResolved
    | ev.BestMoveAsked | ev.BestMoveMade
)
"""What happens at night: shots, checks, saves, the dawn, the first victim's Best Move."""
DayEvent: TypeAlias = (
    ev.DayStarted | ev.CriticalFoulsAnnounced | ev.FloorGiven | ev.FloorEnded | ev.TurnSkipped | ev.Nominated
)
"""What happens in a day before the vote: the floor and nominations."""
VoteEvent: TypeAlias = (
    ev.VotingStarted | ev.VotingClosed | ev.TieDeclared | ev.LiftVoteStarted | ev.LiftVoteClosed | ev.NoVoteHeld
    | ev.VoteCancelled | ev.PlayersVotedOut
)
"""How a day's vote went."""
JudgeEvent: TypeAlias = (
    ev.FoulGiven | ev.FoulRevoked | ev.PlayerRemoved | ev.Paused | ev.PointsAwarded | ev.ActionTakenBack
)
"""The judge's hand: fouls, removals, pauses, extra points, and what the judge took back."""
UnrecordedEvent: TypeAlias = (
    ev.StageStarted | ev.SpeechPenaltyServed | ev.NomineesRecapped | ev.VoteCast | ev.VoteWindowClosed
    | ev.LiftVoteCast | ev.SpeechLost | ev.SpeechRestored | ev.Resumed
)
"""Stage boundaries, recaps, single hands, penalties served, resumes: implied by the rest of the protocol."""


class _Builder:
    """Walks the events once, keeping the day or night they belong to."""

    def __init__(self) -> None:
        self.roles: tuple[Role, ...] = ()
        self.nights: list[Night] = []
        self.days: list[Day] = []
        self.moment = Moment("night", 0)
        self.fouls: list[Foul] = []
        self.fouls_held: dict[Seat, int] = {}
        self.technical_held: dict[Seat, int] = {}
        self.removals: list[Removal] = []
        self.departures: dict[Seat, Departure] = {}
        self.departed_before: dict[Seat, Departure | None] = {}
        """A removed seat's departure before its removal (none, or voted out), for a take back."""
        self.extra: list[ExtraPoints] = []
        self.pauses: list[PauseRecord] = []
        self.result: str | None = None
        self.reason: str | None = None

    @property
    def night(self) -> Night:
        if not self.nights:
            self.nights.append(Night(0))
        return self.nights[-1]

    @property
    def day(self) -> Day:
        if not self.days:
            self.days.append(Day(0, 0))
        return self.days[-1]

    def leave(self, seat: Seat, cause: str) -> None:
        self.departures.setdefault(seat, Departure(cause, self.moment))

    def feed(self, event: ev.Event) -> None:
        """Record one event in the day or night it belongs to; a new event type must be placed here."""
        match event:
            case ev.GameStarted(roles=roles):
                self.roles = roles
            case ev.GameEnded(result=result, reason=reason):
                self.result = result.value
                self.reason = reason.value
            case (ev.NightFell() | ev.ShotFired() | ev.DonChecked() | ev.SheriffChecked() | ev.Healed()
                  | ev.ManiacActed() | ev.NightResolved() | ev.BestMoveAsked() | ev.BestMoveMade()):
                self._night(event)
            case (ev.DayStarted() | ev.CriticalFoulsAnnounced() | ev.FloorGiven() | ev.FloorEnded()
                  | ev.TurnSkipped() | ev.Nominated()):
                self._day(event)
            case (ev.VotingStarted() | ev.VotingClosed() | ev.TieDeclared() | ev.LiftVoteStarted()
                  | ev.LiftVoteClosed() | ev.NoVoteHeld() | ev.VoteCancelled() | ev.PlayersVotedOut()):
                self._vote(event)
            case (ev.FoulGiven() | ev.FoulRevoked() | ev.PlayerRemoved() | ev.Paused() | ev.PointsAwarded()
                  | ev.ActionTakenBack()):
                self._judge(event)
            case (ev.StageStarted() | ev.SpeechPenaltyServed() | ev.NomineesRecapped() | ev.VoteCast()
                  | ev.VoteWindowClosed() | ev.LiftVoteCast() | ev.SpeechLost() | ev.SpeechRestored()
                  | ev.Resumed()):
                pass
            case _:
                assert_never(event)

    def _night(self, event: NightEvent) -> None:
        match event:
            case ev.NightFell(night=n):
                self.nights.append(Night(n))
                self.moment = Moment("night", n)
            case ev.ShotFired(seat=seat, target=target):
                self.night.shots.append(Nomination(seat, target))
            case ev.DonChecked(seat=seat, target=target, sheriff=found):
                self.night.checks.append(Check(seat, target, Role.DON.value, found))
            case ev.SheriffChecked(seat=seat, target=target, black=found):
                self.night.checks.append(Check(seat, target, Role.SHERIFF.value, found))
            case ev.Healed(seat=seat, target=target):
                self.night.heals.append(Nomination(seat, target))
            case ev.ManiacActed(seat=seat, target=target):
                self._maniac(seat, target)
            case ev.NightResolved():
                self._dawn(event)
            case ev.BestMoveAsked(seat=seat):
                self.night.best_move_asked = seat
            case ev.BestMoveMade(seat=seat, targets=targets, black=black):
                self.night.best_move = BestMove(seat, targets, black)
            case _:
                assert_never(event)

    def _maniac(self, seat: Seat, target: Seat | None) -> None:
        if target is None:
            self.night.maniac_passed = True
        else:
            self.night.maniac = Nomination(seat, target)

    def _dawn(self, event: ev.NightResolved) -> None:
        night = self.night
        night.mafia_target = event.mafia_target
        night.maniac_target = event.maniac_target
        night.healed = event.healed
        night.killed = event.killed
        night.resolved = True
        for seat in event.killed:
            self.leave(seat, "killed")

    def _day(self, event: DayEvent) -> None:
        match event:
            case ev.DayStarted(day=d, opener=opener, vote_cancelled=cancelled):
                self.days.append(Day(d, opener, vote_cancelled=cancelled))
                self.moment = Moment("day", d)
            case ev.CriticalFoulsAnnounced(seats=seats):
                self.day.critical_fouls = seats
            case ev.FloorGiven(turn=turn):
                self.day.speeches.append(Speech(turn.seat, turn.kind.value, turn.seconds))
            case ev.FloorEnded(seat=seat, reason=reason):
                self._floor_ended(seat, reason)
            case ev.TurnSkipped(seat=seat, reason=reason):
                self.day.skipped.append(Skip(seat, reason))
            case ev.Nominated(seat=seat, target=target):
                self.day.nominations.append(Nomination(seat, target))
            case _:
                assert_never(event)

    def _floor_ended(self, seat: Seat, reason: str) -> None:
        speeches = self.day.speeches
        if speeches and speeches[-1].seat == seat and speeches[-1].ended is None:
            last = speeches[-1]
            speeches[-1] = Speech(last.seat, last.kind, last.seconds, reason)

    def _vote(self, event: VoteEvent) -> None:
        match event:
            case ev.VotingStarted(kind=kind, candidates=candidates):
                self.day.votes.append(VoteRound(kind.value, candidates))
            case ev.VotingClosed(kind=kind, tally=tally, silent=silent):
                self._close_vote(kind.value, tally, silent)
            case ev.TieDeclared(seats=seats):
                self.day.ties.append(seats)
            case ev.LiftVoteStarted(seats=seats):
                self.day.lift = LiftVote(seats, (), 0, passed=False)
            case ev.LiftVoteClosed(yes=yes, alive=alive, passed=passed):
                seats = self.day.lift.seats if self.day.lift is not None else ()
                self.day.lift = LiftVote(seats, yes, alive, passed)
            case ev.NoVoteHeld(reason=reason):
                self.day.no_vote = reason.value
            case ev.VoteCancelled():
                self.day.no_vote = "cancelled"
            case ev.PlayersVotedOut(seats=seats, cause=cause):
                self._voted_out(seats, cause.value)
            case _:
                assert_never(event)

    def _voted_out(self, seats: tuple[Seat, ...], cause: str) -> None:
        self.day.voted_out = seats
        self.day.voted_out_cause = cause
        for seat in seats:
            self.leave(seat, cause)

    def _judge(self, event: JudgeEvent) -> None:
        match event:
            case ev.FoulGiven(seat=seat, oath=oath, total=total, technical=technical):
                self.fouls.append(Foul(seat, total, self.moment, oath=oath, technical=technical))
                (self.technical_held if technical else self.fouls_held)[seat] = total
            case ev.FoulRevoked(seat=seat, total=total, technical=technical):
                self.fouls.append(Foul(seat, total, self.moment, revoked=True, technical=technical))
                (self.technical_held if technical else self.fouls_held)[seat] = total
            case ev.PlayerRemoved(seat=seat, cause=cause, cancels=cancels, reason=reason):
                self.removals.append(Removal(seat, cause.value, self.moment, cancels, reason))
                self.departed_before[seat] = self.departures.get(seat)
                self.departures[seat] = Departure(cause.value, self.moment)
            case ev.Paused(seat=seat):
                self.pauses.append(PauseRecord(seat, self.moment))
            case ev.PointsAwarded(seat=seat, value=value, reason=reason):
                self.extra.append(ExtraPoints(seat, Decimal(value), reason, self.moment))
            case ev.ActionTakenBack():
                self._taken_back(event)
            case _:
                assert_never(event)

    def _taken_back(self, event: ev.ActionTakenBack) -> None:
        """A foul taken back reads as revoked; a removal taken back is struck; a floor given back is a speech."""
        seat = event.seat
        if self.fouls_held.get(seat, 0) != event.total:
            self.fouls.append(Foul(seat, event.total, self.moment, revoked=True))
            self.fouls_held[seat] = event.total
        if self.technical_held.get(seat, 0) != event.technical:
            self.fouls.append(Foul(seat, event.technical, self.moment, revoked=True, technical=True))
            self.technical_held[seat] = event.technical
        if event.kind == "removal":
            index = max(i for i, removal in enumerate(self.removals) if removal.seat == seat)
            del self.removals[index]
            earlier = self.departed_before.pop(seat, None)
            if earlier is None:
                self.departures.pop(seat, None)
            else:
                self.departures[seat] = earlier
        if event.floor is not None:
            turn = event.floor
            self.day.speeches.append(Speech(turn.seat, turn.kind.value, turn.seconds))

    def _close_vote(
        self, kind: str, tally: tuple[tuple[Seat, tuple[Seat, ...]], ...], silent: tuple[Seat, ...]
    ) -> None:
        votes = self.day.votes
        index = next((i for i in range(len(votes) - 1, -1, -1) if not votes[i].closed), None)
        candidates = tuple(c for c, _ in tally)
        rows = tuple(
            Tally(c, voters, total) for (c, voters), (_c, total) in zip(tally, vote_totals(tally, silent), strict=True)
        )
        closed = VoteRound(kind, candidates, rows, silent, closed=True)
        if index is None:
            votes.append(closed)
        else:
            votes[index] = closed

    def seat_row(self, seat: Seat, info: SeatInfo | None, points: Mapping[Seat, Decimal] | None) -> ProtocolSeat:
        """The protocol's line of one seat."""
        role_value = self._role(seat, info)
        team = Role(role_value).team if role_value else None
        return ProtocolSeat(
            seat=seat,
            user_id=info.user_id if info is not None else None,
            display_name=info.display_name if info is not None else "",
            role=role_value,
            team=team.value if team is not None else None,
            fouls=self.fouls_held.get(seat, 0),
            removed=any(r.seat == seat for r in self.removals),
            departure=self.departures.get(seat),
            points=points.get(seat) if points is not None else None,
            won=self._won(team),
            technical=self.technical_held.get(seat, 0),
        )

    def _role(self, seat: Seat, info: SeatInfo | None) -> str | None:
        """The seat's card: from the seating, else from the deal in the log; None before the deal."""
        if info is not None and info.role:
            return info.role
        return self.roles[seat - 1].value if seat <= len(self.roles) else None

    def _won(self, team: Team | None) -> bool | None:
        """Whether ``team`` won; None while the game is open, for an abandoned game, or for an empty seat."""
        if self.result is None or team is None or self.result == Result.ABANDONED:
            return None
        return team is winning_team(Result(self.result))


def build_protocol(
    header: GameHeader,
    seats: Sequence[SeatInfo],
    events: Iterable[ev.Event],
    points: Mapping[Seat, Decimal] | None = None,
) -> Protocol:
    """Build the protocol of a game from its seats and events.

    Args:
        header: the game's facts that are not events (ids, ruleset, status, times).
        seats: who sat where; roles come from the log when the seats do not name them.
        events: the whole event log, in order.
        points: each seat's points once the game is over (``Game.points()`` or the stored results).
    """
    builder = _Builder()
    for event in events:
        builder.feed(event)
    return _built(builder, header, seats, points)


def _built(builder: _Builder, header: GameHeader, seats: Sequence[SeatInfo],
           points: Mapping[Seat, Decimal] | None) -> Protocol:
    by_seat = {s.seat: s for s in seats}
    count = max([len(builder.roles), *by_seat]) if (builder.roles or by_seat) else 0
    return Protocol(
        game=header,
        seats=tuple(builder.seat_row(seat, by_seat.get(seat), points) for seat in range(1, count + 1)),
        nights=tuple(builder.nights),
        days=tuple(builder.days),
        fouls=tuple(builder.fouls),
        removals=tuple(builder.removals),
        extra_points=tuple(builder.extra),
        pauses=tuple(builder.pauses),
        result=builder.result,
        reason=builder.reason,
    )


class ProtocolFollower:
    """The protocol of a running game, fed only the events added since it was last read.

    A table's stream draws a frame after every command: building the protocol from the first event
    each time cost the whole log per command, most of a late frame's drawing in a long game. A
    protocol it returns shares its days and nights with the next one: read it before asking again.
    """

    def __init__(self) -> None:
        self._builder = _Builder()
        self._events: Sequence[ev.Event] | None = None
        self._fed = 0

    def protocol(self, events: Sequence[ev.Event], header: GameHeader | None = None) -> Protocol:
        """The protocol of ``events``: a game's event list, which only grows (another list starts afresh)."""
        if events is not self._events or len(events) < self._fed:
            self._builder, self._events, self._fed = _Builder(), events, 0
        for event in events[self._fed:]:
            self._builder.feed(event)
        self._fed = len(events)
        return _built(self._builder, header or GameHeader(), (), None)
