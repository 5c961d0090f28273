"""The game state and ``evolve``: how each event changes it.

``evolve`` never raises and never decides anything: every fact it needs is in the event. That is
what lets a stored event log rebuild the exact state (``replay_events``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from engine import events as ev
from engine.codec import field_from_data, from_data, to_data
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
    technical: list[list[int]] = field(default_factory=list)
    """Per seat, one entry per technical foul: how many ordinary fouls the seat held when it was given.

    So the seat's last foul is technical when the last entry equals its ordinary count.
    """
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

    def technical_count(self, seat: Seat) -> int:
        """How many technical fouls ``seat`` holds."""
        return len(self.technical[seat - 1]) if self.technical else 0

    def last_foul_technical(self, seat: Seat) -> bool:
        """Whether ``seat``'s last foul was a technical one."""
        marks = self.technical[seat - 1] if self.technical else []
        return bool(marks) and marks[-1] == self.foul_count(seat)

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


def copied(state: GameState) -> GameState:
    """A copy that shares nothing mutable with ``state``: each container is copied, their items are immutable.

    Much cheaper than ``copy.deepcopy``; the game takes one before every judge action it may take back.
    """
    twin = copy.copy(state)
    twin.alive = list(state.alive)
    twin.departures = list(state.departures)
    twin.fouls = [list(fouls) for fouls in state.fouls]
    twin.technical = [list(marks) for marks in state.technical]
    twin.silenced = dict(state.silenced)
    twin.silence_used = set(state.silence_used)
    twin.queue = list(state.queue)
    twin.spoken = set(state.spoken)
    twin.nominees = list(state.nominees)
    if state.vote is not None:
        vote = state.vote
        twin.vote = VoteRound(vote.kind, vote.candidates, vote.index, dict(vote.votes))
    twin.shots = dict(state.shots)
    twin.checks = dict(state.checks)
    twin.heals = list(state.heals)
    twin.extra_points = list(state.extra_points)
    return twin


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
    s.technical = [[] for _ in e.roles]


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


def _floor_given(s: GameState, e: ev.FloorGiven) -> None:
    s.queue.pop(0)
    s.floor = e.turn
    s.nominated = False
    s.timer += 1


def _floor_ended(s: GameState, e: ev.FloorEnded) -> None:
    if s.floor is not None and s.floor.kind.is_speech:
        s.spoken.add(e.seat)
    s.floor = None


def _stage_started(s: GameState, e: ev.StageStarted) -> None:
    s.phase = e.phase
    s.queue = list(e.turns)
    s.floor = None
    s.vote = None
    s.timer += 1


def _vote_cast(s: GameState, e: ev.VoteCast) -> None:
    assert s.vote is not None  # noqa: S101  (evolve trusts the events decide produced)
    s.vote.votes[e.seat] = e.candidate


def _shot_fired(s: GameState, e: ev.ShotFired) -> None:
    s.shots[e.seat] = e.target


def _vote_over(s: GameState, e: ev.VotingClosed | ev.LiftVoteClosed | ev.VoteCancelled | ev.NoVoteHeld) -> None:
    s.vote = None


def _checked(s: GameState, e: ev.DonChecked | ev.SheriffChecked) -> None:
    s.checks[e.seat] = e.target


def _said(s: GameState, e: ev.CriticalFoulsAnnounced | ev.NomineesRecapped) -> None:
    """Said aloud; nothing the rules keep."""


def _turn_skipped(s: GameState, e: ev.TurnSkipped) -> None:
    s.queue.pop(0)


def _tie_declared(s: GameState, e: ev.TieDeclared) -> None:
    s.last_tie = e.seats


def _foul_given(s: GameState, e: ev.FoulGiven) -> None:
    if e.technical:
        s.technical[e.seat - 1].append(s.foul_count(e.seat))
    else:
        s.fouls[e.seat - 1].append(e.oath)


def _foul_revoked(s: GameState, e: ev.FoulRevoked) -> None:
    if e.technical:
        s.technical[e.seat - 1].pop()
    else:
        s.fouls[e.seat - 1].pop()


def _speech_lost(s: GameState, e: ev.SpeechLost) -> None:
    s.silenced[e.seat] = e.day


def _speech_restored(s: GameState, e: ev.SpeechRestored) -> None:
    s.silenced.pop(e.seat, None)


def _points_awarded(s: GameState, e: ev.PointsAwarded) -> None:
    s.extra_points.append((e.seat, e.value, e.reason))


def _taken_back(s: GameState, e: ev.ActionTakenBack) -> None:
    for name, text in e.restored:
        setattr(s, name, field_from_data(GameState, name, json.loads(text)))
    if e.floor is not None:
        s.floor = e.floor


Fold = Callable[[GameState, Any], None]
"""How one event class changes the state."""
FOLDS: dict[type[ev.Event], Fold] = {}
"""Each event class's fold, memoized by ``fold_of`` the first time an event of that class is seen;
the game's hot path reads it directly."""


def evolve(state: GameState, event: ev.Event) -> None:
    """Apply one event to ``state`` in place; it never raises for events ``decide`` produced."""
    try:
        fold = FOLDS[type(event)]
    except KeyError:
        fold = fold_of(event)
    fold(state, event)


def fold_of(event: ev.Event) -> Fold:
    """The fold of ``event``'s class, kept per class.

    A ``match`` that mypy checks for every event decides it; trying its arms in order for every
    event would cost a whole game about a tenth of its time.
    """
    FOLDS[type(event)] = fold = _evolver(event)
    return fold


def _evolver(event: ev.Event) -> Fold:
    """The fold of ``event``'s class: adding an event class that no arm names fails mypy."""
    match event:
        case ev.FloorGiven():
            return _floor_given
        case ev.FloorEnded():
            return _floor_ended
        case ev.StageStarted():
            return _stage_started
        case ev.VoteCast():
            return _vote_cast
        case ev.ShotFired():
            return _shot_fired
        case ev.Nominated():
            return _nominated
        case ev.VoteWindowClosed():
            return _window_closed
        case ev.NightFell():
            return _night_fell
        case ev.DayStarted():
            return _day_started
        case ev.VotingStarted():
            return _voting_started
        case ev.VotingClosed() | ev.LiftVoteClosed() | ev.VoteCancelled() | ev.NoVoteHeld():
            return _vote_over
        case ev.PlayersVotedOut():
            return _voted_out
        case ev.NightResolved():
            return _night_resolved
        case ev.DonChecked() | ev.SheriffChecked():
            return _checked
        case ev.CriticalFoulsAnnounced() | ev.NomineesRecapped():
            return _said
        case ev.TurnSkipped():
            return _turn_skipped
        case ev.Healed():
            return _healed
        case ev.ManiacActed():
            return _maniac_acted
        case ev.TieDeclared():
            return _tie_declared
        case ev.LiftVoteStarted():
            return _lift_started
        case ev.LiftVoteCast():
            return _lift_cast
        case ev.FoulGiven():
            return _foul_given
        case ev.FoulRevoked():
            return _foul_revoked
        case ev.SpeechLost():
            return _speech_lost
        case ev.SpeechRestored():
            return _speech_restored
        case ev.SpeechPenaltyServed():
            return _penalty_served
        case ev.PlayerRemoved():
            return _removed
        case ev.Paused():
            return _paused
        case ev.Resumed():
            return _resumed
        case ev.BestMoveAsked():
            return _best_move_asked
        case ev.BestMoveMade():
            return _best_move_made
        case ev.PointsAwarded():
            return _points_awarded
        case ev.GameStarted():
            return _game_started
        case ev.GameEnded():
            return _ended
        case ev.ActionTakenBack():
            return _taken_back
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
