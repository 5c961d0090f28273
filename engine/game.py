"""The game: commands in, events out.

``Game.apply`` checks a command completely before it emits anything, so a rejected command raises
a ``RulesError`` and leaves the state untouched. An accepted command emits events one by one; each
is folded into the state by ``evolve`` at once, so the next decision sees its effect (a vote result
leads to a departure, the departure to a win check, and so on). Replaying the commands or the
events rebuilds the same state.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Never, NoReturn, Protocol

from engine import commands as cmd
from engine import events as ev
from engine.codec import to_data
from engine.errors import (
    AlreadyActedError,
    IllegalActionError,
    InvalidCommandError,
    NotAlivePlayerError,
    NotYourTurnError,
    RulesError,
    WrongPhaseError,
)
from engine.ids import Cause, FloorKind, NoVoteReason, Phase, Result, Role, Seat, Team, VoteKind, WinReason
from engine.queries import (
    Act,
    critical_foul_count,
    critical_fouls,
    floor_holder,
    lift_votes_needed,
    night_actors,
    require_actor,
    require_alive,
    require_phase,
    require_playing,
    require_seat,
    require_started,
    require_target,
    require_voter,
    seat_extra_points,
    vote_totals,
    win_by_count,
)
from engine.ruleset import Ruleset
from engine.scoring import protocol_version, seat_points
from engine.state import FOLDS, GameState, Outcome, copied, fold_of
from engine.view import GameView

FLOOR_PHASES = frozenset(
    {Phase.LAST_WORDS, Phase.SPEECHES, Phase.DEFENSE, Phase.TIE_SPEECHES, Phase.FAREWELL, Phase.FINAL_WORDS}
)
_VOTE_PHASES = frozenset({Phase.DEFENSE, Phase.VOTING, Phase.TIE_SPEECHES, Phase.LIFT_VOTE})
_BEFORE_RESULT = frozenset({Phase.LAST_WORDS, Phase.SPEECHES}) | _VOTE_PHASES
_ROLE_ORDER = (Role.DON, Role.MAFIA, Role.MANIAC, Role.SHERIFF, Role.DOCTOR, Role.CITIZEN)


@dataclass(frozen=True, slots=True)
class Waiting:
    """What the table waits for now, so the runtime can arm one timer (``seconds``) keyed by ``timer``."""

    phase: Phase
    timer: int
    seconds: int | None
    floor: ev.Turn | None = None
    actors: frozenset[Seat] = frozenset()
    candidate: Seat | None = None
    lift: tuple[Seat, ...] = ()


@dataclass(slots=True)
class _Undo:
    """The last judge action that may still be taken back; the table's commands since it follow ``index``."""

    kind: str
    seat: Seat
    before: GameState
    """The state just before the action."""
    timer: int
    """The state's timer just after it: once the timer moves on, the action stands."""
    left: int | None
    index: int
    """The action's place in the history."""


_STATE_FIELDS = tuple(f.name for f in dataclasses.fields(GameState) if f.name != "floor")


class Game:
    """One table's game under one ruleset."""

    __slots__ = ("_logged", "_out", "_state", "_undo", "events", "history", "ruleset")

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self._state = GameState()
        self.history: list[cmd.Command] = []
        self.events: list[ev.Event] = []
        self._out: list[ev.Event] = self.events
        self._undo: _Undo | None = None
        self._logged = False
        """Replaying a stored log: what the table accepted then stands (see ``_on_points``)."""

    # -- public API ------------------------------------------------------------------------------

    def apply(self, command: cmd.Command) -> tuple[ev.Event, ...]:
        """Apply ``command`` and return the events it produced.

        Raises:
            RulesError: the command is malformed or the rules forbid it now; nothing changed.
        """
        start = len(self.events)
        try:  # one lookup per command: this runs for every command of every game
            decide = _DECIDERS[type(command)]
        except KeyError:
            decide = _decider(command)
        decide(self, command, dry=False)
        self.history.append(command)
        return tuple(self.events[start:])

    def check(self, command: cmd.Command) -> None:
        """Raise the error ``apply`` would raise, without changing anything."""
        try:
            decide = _DECIDERS[type(command)]
        except KeyError:
            decide = _decider(command)
        decide(self, command, dry=True)

    def is_legal(self, command: cmd.Command) -> bool:
        """Whether ``apply`` would accept ``command`` now."""
        try:
            self.check(command)
        except RulesError:
            return False
        return True

    def taking_back(self) -> tuple[str, Seat] | None:
        """What ``TakeBack`` would take back now: the kind (``foul``, ``removal``, ``skip``) and the seat.

        None when it would be refused (nothing to take back, or the table has moved on).
        """
        try:
            plan = self._take_back_plan()
        except RulesError:
            return None
        return plan.kind, plan.seat

    @classmethod
    def replay(cls, ruleset: Ruleset, commands: Iterable[cmd.Command]) -> Game:
        """Rebuild a game by applying a stored command log.

        Raises:
            RulesError: a stored command is rejected (the log does not belong to this ruleset).
        """
        game = cls(ruleset)
        game._logged = True
        try:
            for command in commands:
                game.apply(command)
        finally:
            game._logged = False
        return game

    @property
    def state(self) -> GameView:
        """The state, read-only: the layers above the engine read every fact and change none.

        The mutable ``GameState`` stays inside the engine, which alone folds events into it; this is
        the same object typed as its read-only face (nothing copied, so reading costs nothing).
        """
        return self._state

    def outcome(self) -> Outcome | None:
        """The result, once it is fixed."""
        return self._state.outcome

    @property
    def over(self) -> bool:
        """Whether nothing remains to be played (final words included)."""
        return self._state.phase is Phase.ENDED

    def waiting(self) -> Waiting:
        """What the table waits for now; ``seconds`` is None when no timer should run."""
        s, r = self._state, self.ruleset
        phase = s.phase
        if phase in FLOOR_PHASES and s.floor is not None:
            return Waiting(phase, s.timer, s.floor.seconds, floor=s.floor)
        if phase is Phase.VOTING and s.vote is not None:
            return Waiting(phase, s.timer, r.vote_window_seconds, candidate=s.vote.candidates[s.vote.index])
        if phase is Phase.LIFT_VOTE and s.vote is not None:
            return Waiting(phase, s.timer, r.lift_window_seconds, lift=s.vote.candidates)
        if phase is Phase.NIGHT:
            return Waiting(phase, s.timer, r.night_seconds, actors=frozenset(night_actors(s, r)))
        if phase is Phase.NIGHT_ZERO:
            return Waiting(phase, s.timer, r.night_zero_seconds)
        if phase is Phase.BEST_MOVE and s.best_move_seat is not None:
            return Waiting(phase, s.timer, r.best_move_seconds, actors=frozenset({s.best_move_seat}))
        return Waiting(phase, s.timer, None)

    def points(self) -> dict[Seat, Decimal]:
        """Each seat's points for the game (rules.md#points); zero for all until the result is fixed.

        The numbers are the ruleset's protocol version (``engine.scoring.protocol_version``).
        """
        return {p.seat: p.total for p in seat_points(self._state, protocol_version(self.ruleset))}

    # -- helpers ---------------------------------------------------------------------------------

    def _emit(self, event: ev.Event) -> None:
        try:  # ``evolve``, inlined: this runs for every event of every game
            fold = FOLDS[type(event)]
        except KeyError:
            fold = fold_of(event)
        fold(self._state, event)
        self._out.append(event)

    def _seat(self, seat: object, what: str = "seat") -> Seat:
        return require_seat(self._state, seat, what)

    def _require_started(self) -> None:
        require_started(self._state)

    def _require_playing(self) -> None:
        require_playing(self._state)

    def _require_phase(self, *phases: Phase) -> None:
        require_phase(self._state, *phases)

    def _require_alive(self, seat: Seat) -> None:
        require_alive(self._state, seat)

    def _next_alive_after(self, seat: Seat) -> Seat:
        n = self._state.players
        for step in range(1, n + 1):
            candidate = (seat - 1 + step) % n + 1
            if self._state.is_alive(candidate):
                return candidate
        return seat

    # -- win check -------------------------------------------------------------------------------

    def _check_win(self) -> bool:
        found = win_by_count(self._state)
        if found is None:
            return False
        self._emit(ev.GameEnded(result=found[0], reason=found[1]))
        return True

    # -- the day ---------------------------------------------------------------------------------

    def _start_day(self, day: int) -> None:
        s, r = self._state, self.ruleset
        opener = self._next_alive_after(s.players) if day == 1 else self._next_alive_after(s.opener)
        self._emit(ev.DayStarted(day=day, opener=opener, vote_cancelled=s.cancel_next_vote))
        if r.three_foul_penalty == "none":
            critical = critical_fouls(s, r)
            if critical:
                self._emit(ev.CriticalFoulsAnnounced(seats=critical))
        turns = tuple(ev.Turn(seat, FloorKind.LAST_WORD, r.last_word_seconds) for seat in s.last_killed)
        self._emit(ev.StageStarted(phase=Phase.LAST_WORDS, turns=turns))
        self._next_turn()

    def _next_turn(self) -> None:
        s, r = self._state, self.ruleset
        while s.queue:
            turn = s.queue[0]
            seat = turn.seat
            if turn.kind in (FloorKind.LAST_WORD, FloorKind.FAREWELL):
                if s.removed(seat):
                    self._emit(ev.TurnSkipped(seat=seat, reason="removed"))
                    continue
            elif not s.is_alive(seat):
                self._emit(ev.TurnSkipped(seat=seat, reason="gone"))
                continue
            if turn.kind is FloorKind.SPEECH:
                lost_on = s.silenced.get(seat)
                if lost_on is not None and lost_on <= s.day:
                    short = r.three_foul_penalty == "short_speech"
                    if short or (r.short_speech_alive and len(s.alive_seats()) <= r.short_speech_alive):
                        self._emit(ev.SpeechPenaltyServed(seat=seat, mode="short"))
                        turn = ev.Turn(seat, FloorKind.SPEECH, r.short_speech_seconds)
                    elif r.muted_can_nominate:
                        self._emit(ev.SpeechPenaltyServed(seat=seat, mode="silent"))
                        turn = ev.Turn(seat, FloorKind.SILENT, r.silent_turn_seconds)
                    else:
                        self._emit(ev.SpeechPenaltyServed(seat=seat, mode="skipped"))
                        self._emit(ev.TurnSkipped(seat=seat, reason="fouls"))
                        continue
                if (
                    r.recap_before_last_speaker
                    and s.nominees
                    and not any(s.is_alive(t.seat) for t in s.queue[1:])
                ):
                    self._emit(ev.NomineesRecapped(seats=tuple(s.nominees)))
            self._emit(ev.FloorGiven(turn=turn))
            return
        self._stage_done()

    def _stage_done(self) -> None:
        s, r = self._state, self.ruleset
        phase = s.phase
        if phase is Phase.LAST_WORDS:
            seats = s.alive_seats()
            first = s.opener if s.is_alive(s.opener) else self._next_alive_after(s.opener)
            start = seats.index(first)
            order = seats[start:] + seats[:start]
            turns = tuple(ev.Turn(seat, FloorKind.SPEECH, r.speech_seconds) for seat in order)
            self._emit(ev.StageStarted(phase=Phase.SPEECHES, turns=turns))
            self._next_turn()
        elif phase is Phase.SPEECHES:
            self._after_speeches()
        elif phase is Phase.DEFENSE:
            self._open_voting(VoteKind.MAIN, tuple(n for n in s.nominees if s.is_alive(n)))
        elif phase is Phase.TIE_SPEECHES:
            self._open_voting(VoteKind.REVOTE, s.last_tie)
        elif phase is Phase.FAREWELL:
            self._fall_night()
        elif phase is Phase.FINAL_WORDS:
            self._emit(ev.StageStarted(phase=Phase.ENDED))

    def _after_speeches(self) -> None:
        s, r = self._state, self.ruleset
        nominees = tuple(n for n in s.nominees if s.is_alive(n))
        if s.vote_cancelled:
            self._no_vote(NoVoteReason.CANCELLED)
        elif not nominees:
            self._no_vote(NoVoteReason.NO_NOMINATIONS)
        elif len(nominees) == 1:
            if s.day == 1 and r.first_day_single_nominee_no_vote:
                self._no_vote(NoVoteReason.SINGLE_NOMINEE_DAY_ONE)
            else:
                self._vote_out(nominees, Cause.VOTED_OUT)
        elif r.defense_before_vote:
            turns = tuple(ev.Turn(seat, FloorKind.DEFENSE, r.defense_seconds) for seat in nominees)
            self._emit(ev.StageStarted(phase=Phase.DEFENSE, turns=turns))
            self._next_turn()
        else:
            self._open_voting(VoteKind.MAIN, nominees)

    def _open_voting(self, kind: VoteKind, candidates: tuple[Seat, ...]) -> None:
        if kind is VoteKind.MAIN:
            self._emit(ev.NomineesRecapped(seats=candidates))
        self._emit(ev.VotingStarted(kind=kind, candidates=candidates))

    def _no_vote(self, reason: NoVoteReason) -> None:
        self._emit(ev.NoVoteHeld(reason=reason))
        self._fall_night()

    def _close_voting(self) -> None:
        s = self._state
        vote = s.vote
        assert vote is not None  # noqa: S101
        by_candidate: dict[Seat, list[Seat]] = {c: [] for c in vote.candidates}
        for voter, candidate in sorted(vote.votes.items()):
            by_candidate[candidate].append(voter)
        silent = tuple(seat for seat in s.alive_seats() if seat not in vote.votes)
        kind = vote.kind
        assert kind is not None  # noqa: S101
        tally = tuple((c, tuple(v)) for c, v in by_candidate.items())
        self._emit(ev.VotingClosed(kind=kind, tally=tally, silent=silent))
        counts = dict(vote_totals(tally, silent))
        top = max(counts.values())
        leaders = tuple(c for c in vote.candidates if counts[c] == top)
        if len(leaders) == 1:
            self._vote_out(leaders, Cause.VOTED_OUT)
        elif kind is VoteKind.MAIN or (self.ruleset.revote_when_tie_shrinks and leaders != s.last_tie):
            self._emit(ev.TieDeclared(seats=leaders))
            turns = tuple(ev.Turn(seat, FloorKind.TIE_SPEECH, self.ruleset.tie_speech_seconds) for seat in leaders)
            self._emit(ev.StageStarted(phase=Phase.TIE_SPEECHES, turns=turns))
            self._next_turn()
        else:
            self._lift(leaders)

    def _lift(self, seats: tuple[Seat, ...]) -> None:
        alive = self._state.alive_seats()
        if set(seats) == set(alive):
            self._no_vote(NoVoteReason.ALL_ALIVE_TIED)
        elif not self.ruleset.lift_three_tied_at_nine and len(alive) == 9 and len(seats) == 3:
            self._no_vote(NoVoteReason.THREE_TIED_AT_NINE)
        else:
            self._emit(ev.LiftVoteStarted(seats=seats))

    def _close_lift(self) -> None:
        s = self._state
        vote = s.vote
        assert vote is not None  # noqa: S101
        yes = tuple(sorted(seat for seat, v in vote.votes.items() if v))
        alive = len(s.alive_seats())
        passed = len(yes) >= lift_votes_needed(s)
        self._emit(ev.LiftVoteClosed(yes=yes, alive=alive, passed=passed))
        if passed:
            self._vote_out(tuple(sorted(vote.candidates)), Cause.LIFTED)
        else:
            self._no_vote(NoVoteReason.LIFT_FAILED)

    def _vote_out(self, seats: tuple[Seat, ...], cause: Cause) -> None:
        r = self.ruleset
        self._emit(ev.PlayersVotedOut(seats=seats, cause=cause))
        turns = tuple(ev.Turn(seat, FloorKind.FAREWELL, r.last_word_seconds) for seat in sorted(seats))
        if self._check_win():
            if r.last_word_after_end:
                self._emit(ev.StageStarted(phase=Phase.FINAL_WORDS, turns=turns))
                self._next_turn()
            return
        self._emit(ev.StageStarted(phase=Phase.FAREWELL, turns=turns))
        self._next_turn()

    # -- the night -------------------------------------------------------------------------------

    def _fall_night(self) -> None:
        self._emit(ev.NightFell(night=self._state.day))

    def _after_night_action(self) -> None:
        if not night_actors(self._state, self.ruleset):
            self._dawn()

    def _mafia_target(self) -> Seat | None:
        s = self._state
        shooters = [seat for seat in s.alive_seats() if s.role(seat).team is Team.BLACK]
        if self.ruleset.mafia_kill == "unanimous":
            picks = {s.shots.get(seat) for seat in shooters}
            if len(picks) == 1:
                return picks.pop()
            return None
        chain = sorted(shooters, key=lambda seat: (s.role(seat) is not Role.DON, seat))
        if chain and chain[0] in s.shots:
            return s.shots[chain[0]]
        picks_in_order = [s.shots[seat] for seat in chain if seat in s.shots]
        if not picks_in_order:
            return None
        counts: dict[Seat, int] = {}
        for target in picks_in_order:
            counts[target] = counts.get(target, 0) + 1
        top = max(counts.values())
        return next(t for t in picks_in_order if counts[t] == top)

    def _dawn(self) -> None:
        s, r = self._state, self.ruleset
        night = s.night
        mafia = self._mafia_target()
        maniac = s.maniac_target
        healed = s.heal
        targets = {t for t in (mafia, maniac) if t is not None and s.is_alive(t) and t != healed}
        killed = tuple(sorted(targets))
        self._emit(
            ev.NightResolved(night=night, mafia_target=mafia, maniac_target=maniac, healed=healed, killed=killed)
        )
        if killed and self._check_win():
            return
        if r.no_departure_draw and not killed and night >= 3 and s.last_departure_at < 2 * night - 4:
            self._emit(ev.GameEnded(result=Result.DRAW, reason=WinReason.NO_DEPARTURES))
            return
        if r.best_move and night == 1 and len(killed) == 1:
            day_one = sum(1 for d in s.departures if d.at == 1)
            if day_one < 2:
                self._emit(ev.BestMoveAsked(seat=killed[0]))
                return
        self._start_day(night + 1)

    # -- removals --------------------------------------------------------------------------------

    def _remove(self, seat: Seat, cause: Cause, reason: str = "") -> None:
        s, r = self._state, self.ruleset
        was_alive = s.is_alive(seat)
        phase = s.phase
        if not was_alive or s.outcome is not None or not r.removal_cancels_vote:
            cancels = "none"
        elif phase in _BEFORE_RESULT:
            cancels = "today"
        else:
            cancels = "next"
        holder = floor_holder(s) == seat
        self._emit(ev.PlayerRemoved(seat=seat, cause=cause, cancels=cancels, reason=reason))
        if s.outcome is not None:
            if holder:
                self._emit(ev.FloorEnded(seat=seat, reason="removed"))
                self._next_turn()
            return
        if was_alive and self._check_win():
            return
        if cancels == "today" and phase in _VOTE_PHASES:
            self._emit(ev.VoteCancelled())
            self._fall_night()
        elif was_alive and not r.removal_cancels_vote and phase in _VOTE_PHASES and seat in s.nominees:
            self._emit(ev.VoteCancelled())
            self._after_speeches()
        elif holder:
            self._emit(ev.FloorEnded(seat=seat, reason="removed"))
            self._next_turn()
        elif phase is Phase.NIGHT:
            self._after_night_action()
        elif phase is Phase.VOTING and s.vote is not None and len(s.vote.votes) >= len(s.alive_seats()):
            self._close_voting()

    # -- taking back -----------------------------------------------------------------------------

    def _remember(self, kind: str, seat: Seat, before: GameState, left: int | None) -> None:
        """The judge action just applied may be taken back: keep the state before it and the timer it left.

        Called by the handlers of the actions that may be taken back; the handlers of the judge's
        other corrections (an unfoul, a take back) and of a player's leaving forget it instead.
        """
        self._undo = _Undo(kind, seat, before, self._state.timer, left, len(self.history))

    def _take_back_plan(self) -> ev.ActionTakenBack:
        """The event that takes the last judge action back, decided without changing anything.

        Raises:
            RulesError: ``take_back.nothing``, ``take_back.game_over``, ``take_back.too_late``,
                ``take_back.stage_over`` or ``take_back.moved_on`` (docs/rules.md#taking-back).
        """
        s, u = self._state, self._undo
        require_started(s)
        if u is None:
            raise IllegalActionError("take_back.nothing")
        if s.phase is Phase.ENDED or (s.outcome is not None and u.before.outcome is None):
            raise WrongPhaseError("take_back.game_over", kind=u.kind, seat=u.seat)
        if s.timer != u.timer:
            raise IllegalActionError("take_back.too_late", kind=u.kind, seat=u.seat)
        moved = u.before.timer != u.timer
        turn = u.before.floor
        if moved and (turn is None or s.phase is not u.before.phase):
            raise IllegalActionError("take_back.stage_over", kind=u.kind, seat=u.seat)
        target = self._without(u)
        floor = None
        if moved and turn is not None:
            floor = ev.Turn(turn.seat, turn.kind, turn.seconds if u.left is None else max(1, u.left))
            target.timer = s.timer + 1  # the table waits for something new: an older timer is stale
        restored = tuple(
            (name, json.dumps(to_data(getattr(target, name)), separators=(",", ":")))
            for name in _STATE_FIELDS if getattr(target, name) != getattr(s, name)
        )
        return ev.ActionTakenBack(kind=u.kind, seat=u.seat, total=target.foul_count(u.seat), floor=floor,
                                  restored=restored, technical=target.technical_count(u.seat))

    def _without(self, u: _Undo) -> GameState:
        """The state as if the action had never been: the commands since it played again on the state before it.

        Raises:
            IllegalActionError: ``take_back.moved_on`` when one of them no longer holds without the
                action (the next speaker nominated after a skip), or moves that table on.
        """
        scratch = Game(self.ruleset)
        scratch._state = copied(u.before)
        for command in self.history[u.index + 1:]:
            try:
                scratch.apply(command)
            except RulesError:
                raise IllegalActionError("take_back.moved_on", kind=u.kind, seat=u.seat) from None
        if scratch._state.timer != u.before.timer:
            raise IllegalActionError("take_back.moved_on", kind=u.kind, seat=u.seat)
        return scratch._state

    # -- handlers --------------------------------------------------------------------------------

    def _on_take_back(self, c: cmd.TakeBack, *, dry: bool) -> None:
        plan = self._take_back_plan()
        if dry:
            return
        self._undo = None
        self._emit(plan)

    def _on_start(self, c: cmd.StartGame, *, dry: bool) -> None:
        if self._state.phase is not Phase.NEW:
            raise WrongPhaseError("game.already_started")
        try:
            counts = self.ruleset.roles_for(c.players)
        except ValueError:
            raise InvalidCommandError(
                "start.players_not_supported", players=c.players, supported=list(self.ruleset.player_counts)
            ) from None
        deck = [role for role in _ROLE_ORDER for _ in range(counts.get(role, 0))]
        if c.roles is not None:
            roles = tuple(Role(x) for x in c.roles)
            if sorted(roles) != sorted(deck):
                raise InvalidCommandError(
                    "start.roles_mismatch", expected={k.value: v for k, v in counts.items()}, roles=list(roles)
                )
        else:
            random.Random(c.seed).shuffle(deck)
            roles = tuple(deck)
        if dry:
            return
        self._undo = None
        self._emit(ev.GameStarted(roles=roles))
        self._emit(ev.NightFell(night=0))

    def _on_end_speech(self, c: cmd.EndSpeech, *, dry: bool) -> None:
        s = self._state
        self._require_started()
        if s.paused:
            raise IllegalActionError("game.paused")
        if s.phase not in FLOOR_PHASES or s.floor is None:
            raise WrongPhaseError("speech.no_floor", phase=s.phase.value)
        self._seat(c.seat)
        if s.floor.seat != c.seat:
            raise NotYourTurnError("speech.not_floor_holder", seat=c.seat, holder=s.floor.seat)
        if dry:
            return
        self._emit(ev.FloorEnded(seat=c.seat, reason="thanks"))
        self._next_turn()

    def _on_nominate(self, c: cmd.Nominate, *, dry: bool) -> None:
        self._require_target(Act.NOMINATE, c.seat, c.target)
        if dry:
            return
        self._emit(ev.Nominated(seat=c.seat, target=c.target))

    def _on_vote(self, c: cmd.CastVote, *, dry: bool) -> None:
        s = self._state
        require_voter(s, c.seat, c.candidate)
        vote = s.vote
        assert vote is not None  # noqa: S101
        if dry:
            return
        self._emit(ev.VoteCast(seat=c.seat, candidate=c.candidate))
        if len(vote.votes) >= len(s.alive_seats()):
            self._close_voting()

    def _on_lift_vote(self, c: cmd.CastLiftVote, *, dry: bool) -> None:
        s = self._state
        require_voter(s, c.seat)
        vote = s.vote
        assert vote is not None  # noqa: S101
        if dry:
            return
        self._emit(ev.LiftVoteCast(seat=c.seat, yes=c.yes))
        if len(vote.votes) >= len(s.alive_seats()):
            self._close_lift()

    def _require_target(self, action: Act, seat: Seat, target: Seat) -> None:
        """The actor may act and may name ``target``: the rules ``legal_targets`` answers from."""
        actor = require_actor(self._state, self.ruleset, action, seat)
        require_target(self._state, self.ruleset, action, actor, target)

    def _on_shoot(self, c: cmd.Shoot, *, dry: bool) -> None:
        self._require_target(Act.SHOOT, c.seat, c.target)
        if dry:
            return
        self._emit(ev.ShotFired(seat=c.seat, target=c.target))
        self._after_night_action()

    def _on_check(self, c: cmd.Check, *, dry: bool) -> None:
        s, r = self._state, self.ruleset
        self._require_target(Act.CHECK, c.seat, c.target)
        if dry:
            return
        target_role = s.role(c.target)
        if s.role(c.seat) is Role.DON:
            self._emit(ev.DonChecked(seat=c.seat, target=c.target, sheriff=target_role is Role.SHERIFF))
        else:
            black = target_role.team is Team.BLACK or (target_role is Role.MANIAC and r.maniac_check == "black")
            self._emit(ev.SheriffChecked(seat=c.seat, target=c.target, black=black))
        self._after_night_action()

    def _on_heal(self, c: cmd.Heal, *, dry: bool) -> None:
        self._require_target(Act.HEAL, c.seat, c.target)
        if dry:
            return
        self._emit(ev.Healed(seat=c.seat, target=c.target))
        self._after_night_action()

    def _on_maniac(self, c: cmd.ManiacShoot, *, dry: bool) -> None:
        actor = require_actor(self._state, self.ruleset, Act.MANIAC, c.seat)
        if c.target is not None:
            require_target(self._state, self.ruleset, Act.MANIAC, actor, c.target)
        if dry:
            return
        self._emit(ev.ManiacActed(seat=c.seat, target=c.target))
        self._after_night_action()

    def _on_best_move(self, c: cmd.MakeBestMove, *, dry: bool) -> None:
        s = self._state
        actor = require_actor(s, self.ruleset, Act.BEST_MOVE, c.seat)
        targets = tuple(c.targets)
        if len(targets) != 3 or len(set(targets)) != 3:
            raise InvalidCommandError("best_move.needs_three_seats", targets=list(targets))
        for target in targets:
            require_target(s, self.ruleset, Act.BEST_MOVE, actor, target)
        if dry:
            return
        black = sum(1 for t in targets if s.role(t).team is Team.BLACK)
        self._emit(ev.BestMoveMade(seat=c.seat, targets=targets, black=black))
        self._start_day(s.night + 1)

    def _require_judgeable(self, seat: Seat) -> None:
        """Fouls and removals: while the game runs, or during the final words after the result."""
        s = self._state
        self._require_started()
        if s.phase is Phase.ENDED:
            raise WrongPhaseError("game.over", result=s.outcome.result.value if s.outcome else None)
        self._seat(seat)
        if s.removed(seat):
            raise NotAlivePlayerError("player.removed", seat=seat)
        if not s.is_alive(seat) and floor_holder(s) != seat:
            raise NotAlivePlayerError("player.not_at_table", seat=seat)

    def _on_foul(self, c: cmd.GiveFoul, *, dry: bool) -> None:
        if c.technical and not self.ruleset.technical_fouls:
            raise IllegalActionError("foul.no_technical")
        if c.technical and c.oath:
            raise IllegalActionError("foul.technical_oath")
        self._require_judgeable(c.seat)
        if dry:
            return
        before = copied(self._state)
        self._foul(c)
        removed = self._state.removed(c.seat) and not before.removed(c.seat)
        self._remember("removal" if removed else "foul", c.seat, before, c.left)

    def _technical_foul(self, seat: Seat) -> None:
        """rules.md#technical-fouls: counted apart from the ordinary fouls; the last one removes."""
        s, r = self._state, self.ruleset
        total = s.technical_count(seat) + 1
        self._emit(ev.FoulGiven(seat=seat, oath=False, total=total, technical=True))
        if total >= r.technical_foul_removal_at:
            self._remove(seat, Cause.TECHNICAL_FOULS)

    def _foul(self, c: cmd.GiveFoul) -> None:
        s, r = self._state, self.ruleset
        if c.technical:
            self._technical_foul(c.seat)
            return
        fouls = s.fouls[c.seat - 1]
        if c.oath and r.second_oath_removal and any(fouls):
            self._remove(c.seat, Cause.OATHS)
            return
        self._emit(ev.FoulGiven(seat=c.seat, oath=c.oath, total=len(fouls) + 1))
        total = len(fouls)
        if total >= r.foul_removal_at:
            self._remove(c.seat, Cause.FOULS)
        elif (
            total == critical_foul_count(r)
            and r.three_foul_penalty != "none"
            and c.seat not in s.silence_used
            and c.seat not in s.silenced
            and s.is_alive(c.seat)
        ):
            before_own_speech = (
                s.phase in (Phase.LAST_WORDS, Phase.SPEECHES)
                and c.seat not in s.spoken
                and floor_holder(s) != c.seat
            )
            self._emit(ev.SpeechLost(seat=c.seat, day=s.day if before_own_speech else s.day + 1,
                                     short=r.three_foul_penalty == "short_speech"))

    def _on_revoke_foul(self, c: cmd.RevokeFoul, *, dry: bool) -> None:
        s, r = self._state, self.ruleset
        self._require_judgeable(c.seat)
        if not s.fouls[c.seat - 1] and not s.technical_count(c.seat):
            raise IllegalActionError("foul.nothing_to_revoke", seat=c.seat)
        if dry:
            return
        self._undo = None
        if s.last_foul_technical(c.seat):
            self._emit(ev.FoulRevoked(seat=c.seat, total=s.technical_count(c.seat) - 1, technical=True))
            return
        self._emit(ev.FoulRevoked(seat=c.seat, total=s.foul_count(c.seat) - 1))
        if c.seat in s.silenced and s.foul_count(c.seat) < critical_foul_count(r):
            self._emit(ev.SpeechRestored(seat=c.seat))

    def _on_disqualify(self, c: cmd.Disqualify, *, dry: bool) -> None:
        check_reason(c.reason)
        self._require_judgeable(c.seat)
        if dry:
            return
        before = copied(self._state)
        self._remove(c.seat, Cause.DISQUALIFIED, c.reason)
        self._remember("removal", c.seat, before, c.left)

    def _on_leave(self, c: cmd.Leave, *, dry: bool) -> None:
        self._require_judgeable(c.seat)
        self._require_alive(c.seat)
        if dry:
            return
        self._undo = None
        self._remove(c.seat, Cause.LEFT)

    def _on_timeout(self, c: cmd.Timeout, *, dry: bool) -> None:
        s = self._state
        self._require_started()
        if s.phase is Phase.ENDED:
            raise WrongPhaseError("game.over", result=s.outcome.result.value if s.outcome else None)
        if s.paused:
            raise IllegalActionError("game.paused")
        if c.step is not None and c.step != s.timer:
            raise IllegalActionError("timeout.stale", step=c.step, current=s.timer)
        if dry:
            return
        if c.left is not None:  # the judge's skip
            self._skip(c)
            return
        self._time_out()

    def _skip(self, c: cmd.Timeout) -> None:
        """The judge's skip: taken back later only when it ended a floor (not a vote window)."""
        before = copied(self._state)
        self._time_out()
        if before.floor is not None and before.phase in FLOOR_PHASES:
            self._remember("skip", before.floor.seat, before, c.left)
        else:
            self._undo = None

    def _time_out(self) -> None:
        s = self._state
        phase = s.phase
        if phase is Phase.NIGHT_ZERO:
            self._start_day(1)
        elif phase in FLOOR_PHASES and s.floor is not None:
            self._emit(ev.FloorEnded(seat=s.floor.seat, reason="timeout"))
            self._next_turn()
        elif phase is Phase.VOTING and s.vote is not None:
            self._emit(ev.VoteWindowClosed(candidate=s.vote.candidates[s.vote.index]))
            if s.vote.index >= len(s.vote.candidates):
                self._close_voting()
        elif phase is Phase.LIFT_VOTE:
            self._close_lift()
        elif phase is Phase.NIGHT:
            self._dawn()
        elif phase is Phase.BEST_MOVE:
            self._start_day(s.night + 1)

    def _on_pause(self, c: cmd.Pause, *, dry: bool) -> None:
        s = self._state
        self._require_started()
        if s.phase is Phase.ENDED:
            raise WrongPhaseError("game.over")
        if s.paused:
            raise AlreadyActedError("game.already_paused")
        if c.seat is not None:
            self._seat(c.seat)
        if dry:
            return
        self._emit(ev.Paused(seat=c.seat))

    def _on_resume(self, c: cmd.Resume, *, dry: bool) -> None:
        self._require_started()
        if not self._state.paused:
            raise IllegalActionError("game.not_paused")
        if dry:
            return
        self._emit(ev.Resumed())

    def _on_draw(self, c: cmd.DeclareDraw, *, dry: bool) -> None:
        self._on_end(Result.DRAW, WinReason.DECLARED_DRAW, dry=dry)

    def _on_abandon(self, c: cmd.Abandon, *, dry: bool) -> None:
        self._on_end(Result.ABANDONED, WinReason.ABANDONED, dry=dry)

    def _on_end(self, result: Result, reason: WinReason, *, dry: bool) -> None:
        """The judge's draw or abandonment: fixes the result while it is open."""
        self._require_started()
        if self._state.outcome is not None:
            raise WrongPhaseError("game.over", result=self._state.outcome.result.value)
        if dry:
            return
        self._emit(ev.GameEnded(result=result, reason=reason))

    def _on_points(self, c: cmd.AwardPoints, *, dry: bool) -> None:
        self._require_started()
        self._seat(c.seat)
        check_reason(c.reason)
        value = parse_points(c.value)
        held = seat_extra_points(self._state, c.seat)
        limit = cmd.EXTRA_POINTS_LIMIT
        # A log stored before the seat's limit existed may hold more: the table accepted it then.
        if not self._logged and (held + value).copy_abs() > limit:
            raise InvalidCommandError("points.seat_limit", seat=c.seat, total=format(held, "f"), value=c.value[:20],
                                      low=f"-{limit}", high=f"+{limit}")
        if dry:
            return
        self._emit(ev.PointsAwarded(seat=c.seat, value=format(value, "f"), reason=c.reason))


def check_reason(reason: str) -> None:
    """Refuse a judge's reason longer than ``REASON_LIMIT`` characters.

    Raises:
        InvalidCommandError: ``reason.too_long``, with the limit and the length given.
    """
    if len(reason) > cmd.REASON_LIMIT:
        raise InvalidCommandError("reason.too_long", count=cmd.REASON_LIMIT, length=len(reason))


POINTS_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:nan|snan|inf|infinity)",
                         re.IGNORECASE)
"""What ``Decimal`` reads as a number, in ASCII digits alone (it would also take ``1_0`` or other scripts' digits)."""


def parse_points(text: str) -> Decimal:
    """The judge's extra points as an exact decimal, within the documented bounds.

    Read without any arithmetic context: ``1e999999999`` would overflow one, and ``1e-999999999``
    would round to zero in one while still comparing as non-zero.

    >>> parse_points("0.25"), parse_points("-1")
    (Decimal('0.25'), Decimal('-1'))

    Raises:
        InvalidCommandError: ``points.invalid_value`` (not a number, zero, NaN, infinite) or
            ``points.out_of_range`` (beyond ``EXTRA_POINTS_LIMIT``, or too many decimal places).
    """
    shown = text[:20]
    if POINTS_TEXT.fullmatch(text) is None:
        raise InvalidCommandError("points.invalid_value", value=shown)
    limit = cmd.EXTRA_POINTS_LIMIT
    try:
        value = Decimal(text)
    except InvalidOperation:  # an exponent past what any decimal holds: far out of range either way
        raise InvalidCommandError("points.out_of_range", value=shown, low=f"-{limit}", high=f"+{limit}",
                                  places=cmd.EXTRA_POINTS_PLACES) from None
    if not value.is_finite() or value.is_zero():
        raise InvalidCommandError("points.invalid_value", value=shown)
    _sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # noqa: S101 (finite, checked above)
    trailing = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    if value.copy_abs() > limit or -(exponent + trailing) > cmd.EXTRA_POINTS_PLACES:
        raise InvalidCommandError("points.out_of_range", value=shown, low=f"-{limit}", high=f"+{limit}",
                                  places=cmd.EXTRA_POINTS_PLACES)
    return value


def unknown_command(command: Never) -> NoReturn:
    """Refuse what is no command: mypy proves it unreachable, and at run time it is a refusal, not a crash.

    Raises:
        InvalidCommandError: ``command.unknown``, always.
    """
    raise InvalidCommandError("command.unknown", command=type(command).__name__)


class _Decider(Protocol):
    """A command class's handler: checks the command and, unless ``dry``, emits its events."""

    def __call__(self, game: Game, command: Any, /, *, dry: bool) -> None: ...


_DECIDERS: dict[type[cmd.Command], _Decider] = {}
"""Each command class's handler, memoized from ``_decider`` the first time a command of that class comes."""


def _decider(command: cmd.Command) -> _Decider:
    """The handler of ``command``'s class: adding a command class that no arm names fails mypy.

    The answer is kept per class (a ``match`` tries its arms in order, which a whole game feels);
    a value that is no command is refused every time and never kept.
    """
    _DECIDERS[type(command)] = decider = _match_decider(command)
    return decider


def _match_decider(command: cmd.Command) -> _Decider:
    match command:
        case cmd.EndSpeech():
            return Game._on_end_speech
        case cmd.Timeout():
            return Game._on_timeout
        case cmd.CastVote():
            return Game._on_vote
        case cmd.CastLiftVote():
            return Game._on_lift_vote
        case cmd.Nominate():
            return Game._on_nominate
        case cmd.Shoot():
            return Game._on_shoot
        case cmd.Check():
            return Game._on_check
        case cmd.Heal():
            return Game._on_heal
        case cmd.ManiacShoot():
            return Game._on_maniac
        case cmd.MakeBestMove():
            return Game._on_best_move
        case cmd.GiveFoul():
            return Game._on_foul
        case cmd.RevokeFoul():
            return Game._on_revoke_foul
        case cmd.Disqualify():
            return Game._on_disqualify
        case cmd.Leave():
            return Game._on_leave
        case cmd.Pause():
            return Game._on_pause
        case cmd.Resume():
            return Game._on_resume
        case cmd.AwardPoints():
            return Game._on_points
        case cmd.DeclareDraw():
            return Game._on_draw
        case cmd.Abandon():
            return Game._on_abandon
        case cmd.StartGame():
            return Game._on_start
        case cmd.TakeBack():
            return Game._on_take_back
        case _:
            unknown_command(command)
