"""The game state and ``evolve``: how each event changes it.

``evolve`` never raises and never decides anything: every fact it needs is in the event. That is
what lets a stored event log rebuild the exact state (``replay_events``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from engine import events as ev
from engine.codec import from_data, to_data
from engine.ids import Cause, Phase, Result, Role, Seat, Team, VoteKind, WinReason

_NIGHT_PHASES = frozenset({Phase.NIGHT, Phase.NIGHT_ZERO, Phase.BEST_MOVE})


@dataclass(slots=True)
class VoteRound:
    """An open voting round; ``kind`` is None for the lift vote, whose votes are 1 (yes) or 0 (no)."""

    kind: VoteKind | None
    candidates: tuple[Seat, ...]
    index: int = 0
    votes: dict[Seat, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Departure:
    """A player gone from the table, and when: ``at`` is 2·night for nights and 2·day-1 for days."""

    seat: Seat
    cause: Cause
    at: int


@dataclass(frozen=True, slots=True)
class Outcome:
    """The fixed result of a game."""

    result: Result
    reason: WinReason


@dataclass(slots=True)
class GameState:
    """Everything the rules need to know, and nothing about time or Discord."""

    roles: tuple[Role, ...] = ()
    phase: Phase = Phase.NEW
    day: int = 0
    night: int = 0
    opener: Seat = 0
    alive: list[bool] = field(default_factory=list)
    departures: list[Departure] = field(default_factory=list)
    fouls: list[list[bool]] = field(default_factory=list)
    """Per seat (index seat-1), one entry per foul: True where the foul was an oath."""
    silenced: dict[Seat, int] = field(default_factory=dict)
    silence_used: set[Seat] = field(default_factory=set)
    queue: list[ev.Turn] = field(default_factory=list)
    floor: ev.Turn | None = None
    spoken: set[Seat] = field(default_factory=set)
    nominees: list[Seat] = field(default_factory=list)
    nominated: bool = False
    vote_cancelled: bool = False
    cancel_next_vote: bool = False
    vote: VoteRound | None = None
    last_tie: tuple[Seat, ...] = ()
    shots: dict[Seat, Seat] = field(default_factory=dict)
    checks: dict[Seat, Seat] = field(default_factory=dict)
    heal: Seat | None = None
    maniac_acted: bool = False
    maniac_target: Seat | None = None
    heals: list[tuple[int, Seat, Seat]] = field(default_factory=list)
    """Every save ever made: (night, doctor seat, target)."""
    maniac_shots_used: int = 0
    last_killed: tuple[Seat, ...] = ()
    last_departure_at: int = -1
    best_move_seat: Seat | None = None
    best_move: tuple[Seat, ...] = ()
    best_move_black: int = 0
    extra_points: list[tuple[Seat, str, str]] = field(default_factory=list)
    outcome: Outcome | None = None
    paused: bool = False
    pause_seat: Seat | None = None
    timer: int = 0
    """Bumped whenever the table starts waiting for something new, so a stale timer can be told apart."""

    @property
    def players(self) -> int:
        """How many seats the table has."""
        return len(self.roles)

    def role(self, seat: Seat) -> Role:
        """The card dealt to ``seat``."""
        return self.roles[seat - 1]

    def is_alive(self, seat: Seat) -> bool:
        """Whether ``seat`` is still at the table."""
        return self.alive[seat - 1]

    def alive_seats(self) -> list[Seat]:
        """The seats still at the table, in seat order."""
        return [i + 1 for i, a in enumerate(self.alive) if a]

    def foul_count(self, seat: Seat) -> int:
        """How many fouls ``seat`` holds."""
        return len(self.fouls[seat - 1])

    def departure(self, seat: Seat) -> Departure | None:
        """How and when ``seat`` left, if it has."""
        for d in self.departures:
            if d.seat == seat:
                return d
        return None

    def removed(self, seat: Seat) -> bool:
        """Whether ``seat`` was removed (fouls, oaths, disqualification, leaving)."""
        return any(d.seat == seat and d.cause.is_removal for d in self.departures)

    def team_alive(self) -> dict[Team, int]:
        """How many of each side are still at the table."""
        counts = {Team.RED: 0, Team.BLACK: 0, Team.MANIAC: 0}
        for role, alive in zip(self.roles, self.alive, strict=True):
            if alive:
                counts[role.team] += 1
        return counts

    def to_data(self) -> dict[str, Any]:
        """A JSON-ready snapshot (sets sorted, enums by value)."""
        return {name: to_data(getattr(self, name)) for name in self.__slots__ if not name.startswith("_")}


def _depart(state: GameState, seat: Seat, cause: Cause) -> None:
    if state.alive[seat - 1]:
        state.alive[seat - 1] = False
    at = 2 * state.night if state.phase in _NIGHT_PHASES else 2 * state.day - 1
    state.departures.append(Departure(seat, cause, at))
    state.last_departure_at = at


def _game_started(s: GameState, e: ev.GameStarted) -> None:
    s.roles = e.roles
    s.alive = [True] * len(e.roles)
    s.fouls = [[] for _ in e.roles]


def _night_fell(s: GameState, e: ev.NightFell) -> None:
    s.phase = Phase.NIGHT_ZERO if e.night == 0 else Phase.NIGHT
    s.night = e.night
    s.floor = None
    s.queue = []
    s.vote = None
    s.shots = {}
    s.checks = {}
    s.heal = None
    s.maniac_acted = False
    s.maniac_target = None
    s.timer += 1


def _healed(s: GameState, e: ev.Healed) -> None:
    s.heal = e.target
    s.heals.append((s.night, e.seat, e.target))


def _maniac_acted(s: GameState, e: ev.ManiacActed) -> None:
    s.maniac_acted = True
    s.maniac_target = e.target
    if e.target is not None:
        s.maniac_shots_used += 1


def _night_resolved(s: GameState, e: ev.NightResolved) -> None:
    for seat in e.killed:
        _depart(s, seat, Cause.KILLED)
    s.last_killed = e.killed


def _best_move_asked(s: GameState, e: ev.BestMoveAsked) -> None:
    s.phase = Phase.BEST_MOVE
    s.best_move_seat = e.seat
    s.timer += 1


def _best_move_made(s: GameState, e: ev.BestMoveMade) -> None:
    s.best_move = e.targets
    s.best_move_black = e.black


def _day_started(s: GameState, e: ev.DayStarted) -> None:
    s.day = e.day
    s.opener = e.opener
    s.vote_cancelled = e.vote_cancelled
    s.cancel_next_vote = False
    s.spoken = set()
    s.nominees = []
    s.nominated = False
    s.last_tie = ()


def _penalty_served(s: GameState, e: ev.SpeechPenaltyServed) -> None:
    s.silence_used.add(e.seat)
    s.silenced.pop(e.seat, None)


def _nominated(s: GameState, e: ev.Nominated) -> None:
    s.nominees.append(e.target)
    s.nominated = True


def _voting_started(s: GameState, e: ev.VotingStarted) -> None:
    s.phase = Phase.VOTING
    s.vote = VoteRound(e.kind, e.candidates)
    s.floor = None
    s.queue = []
    s.timer += 1


def _window_closed(s: GameState, e: ev.VoteWindowClosed) -> None:
    assert s.vote is not None  # noqa: S101
    s.vote.index += 1
    s.timer += 1


def _lift_started(s: GameState, e: ev.LiftVoteStarted) -> None:
    s.phase = Phase.LIFT_VOTE
    s.vote = VoteRound(None, e.seats)
    s.floor = None
    s.queue = []
    s.timer += 1


def _lift_cast(s: GameState, e: ev.LiftVoteCast) -> None:
    assert s.vote is not None  # noqa: S101
    s.vote.votes[e.seat] = int(e.yes)


def _voted_out(s: GameState, e: ev.PlayersVotedOut) -> None:
    for seat in e.seats:
        _depart(s, seat, e.cause)


def _removed(s: GameState, e: ev.PlayerRemoved) -> None:
    _depart(s, e.seat, e.cause)
    if e.cancels == "today":
        s.vote_cancelled = True
    elif e.cancels == "next":
        s.cancel_next_vote = True
    s.shots.pop(e.seat, None)
    if s.vote is not None:
        s.vote.votes.pop(e.seat, None)


def _paused(s: GameState, e: ev.Paused) -> None:
    s.paused = True
    s.pause_seat = e.seat


def _resumed(s: GameState, e: ev.Resumed) -> None:
    s.paused = False
    s.pause_seat = None


def _ended(s: GameState, e: ev.GameEnded) -> None:
    s.outcome = Outcome(e.result, e.reason)
    s.phase = Phase.ENDED
    s.floor = None
    s.queue = []
    s.vote = None
    s.timer += 1


def evolve(state: GameState, event: ev.Event) -> None:
    """Apply one event to ``state`` in place; it never raises for events ``decide`` produced.

    The most frequent events come first, and are folded right here: a ``match`` tries its arms in
    order, and a call per event is measurable in a whole game.
    """
    match event:
        case ev.FloorGiven():
            state.queue.pop(0)
            state.floor = event.turn
            state.nominated = False
            state.timer += 1
        case ev.FloorEnded():
            if state.floor is not None and state.floor.kind.is_speech:
                state.spoken.add(event.seat)
            state.floor = None
        case ev.StageStarted():
            state.phase = event.phase
            state.queue = list(event.turns)
            state.floor = None
            state.vote = None
            state.timer += 1
        case ev.VoteCast():
            assert state.vote is not None  # noqa: S101  (evolve trusts the events decide produced)
            state.vote.votes[event.seat] = event.candidate
        case ev.ShotFired():
            state.shots[event.seat] = event.target
        case ev.Nominated():
            _nominated(state, event)
        case ev.VoteWindowClosed():
            _window_closed(state, event)
        case ev.NightFell():
            _night_fell(state, event)
        case ev.DayStarted():
            _day_started(state, event)
        case ev.VotingStarted():
            _voting_started(state, event)
        case ev.VotingClosed() | ev.LiftVoteClosed() | ev.VoteCancelled() | ev.NoVoteHeld():
            state.vote = None
        case ev.PlayersVotedOut():
            _voted_out(state, event)
        case ev.NightResolved():
            _night_resolved(state, event)
        case ev.DonChecked() | ev.SheriffChecked():
            state.checks[event.seat] = event.target
        case ev.CriticalFoulsAnnounced() | ev.NomineesRecapped():
            pass  # said aloud; nothing the rules keep
        case ev.TurnSkipped():
            state.queue.pop(0)
        case ev.Healed():
            _healed(state, event)
        case ev.ManiacActed():
            _maniac_acted(state, event)
        case ev.TieDeclared():
            state.last_tie = event.seats
        case ev.LiftVoteStarted():
            _lift_started(state, event)
        case ev.LiftVoteCast():
            _lift_cast(state, event)
        case ev.FoulGiven():
            state.fouls[event.seat - 1].append(event.oath)
        case ev.FoulRevoked():
            state.fouls[event.seat - 1].pop()
        case ev.SpeechLost():
            state.silenced[event.seat] = event.day
        case ev.SpeechRestored():
            state.silenced.pop(event.seat, None)
        case ev.SpeechPenaltyServed():
            _penalty_served(state, event)
        case ev.PlayerRemoved():
            _removed(state, event)
        case ev.Paused():
            _paused(state, event)
        case ev.Resumed():
            _resumed(state, event)
        case ev.BestMoveAsked():
            _best_move_asked(state, event)
        case ev.BestMoveMade():
            _best_move_made(state, event)
        case ev.PointsAwarded():
            state.extra_points.append((event.seat, event.value, event.reason))
        case ev.GameStarted():
            _game_started(state, event)
        case ev.GameEnded():
            _ended(state, event)
        case _:
            assert_never(event)


def replay_events(events: Iterable[ev.Event]) -> GameState:
    """Rebuild a state from its event log alone."""
    state = GameState()
    for event in events:
        evolve(state, event)
    return state


def state_from_data(data: Mapping[str, Any]) -> GameState:
    """Read a state snapshot written by ``GameState.to_data``.

    Raises:
        InvalidCommandError: the data does not describe a state.
    """
    return from_data(GameState, data, "state")
