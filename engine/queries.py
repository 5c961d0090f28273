"""Questions about a game that only the rules can answer: who may name whom, who won, what is open.

Every answer is a pure function of the state (and of the ruleset where the rules differ), read
through the read-only ``GameView``, so the bot's controls, messages and records ask here instead
of knowing the rules themselves. ``Game`` decides with these same functions: each rule is written
once, and a menu can never offer a target the engine would refuse.

The ``require_*`` checks raise the ``RulesError`` a command would get; the queries built on them
answer without raising.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING

from engine.errors import (
    AlreadyActedError,
    IllegalActionError,
    InvalidCommandError,
    InvalidTargetError,
    NotAlivePlayerError,
    NotYourTurnError,
    RulesError,
    WrongPhaseError,
)
from engine.ids import FloorKind, Phase, Result, Role, Seat, Team, WinReason

if TYPE_CHECKING:
    from engine.ruleset import Ruleset
    from engine.view import GameView


class Act(StrEnum):
    """A player's act that names a seat."""

    SHOOT = "shoot"
    CHECK = "check"
    HEAL = "heal"
    MANIAC = "maniac"
    NOMINATE = "nominate"
    BEST_MOVE = "best_move"


NIGHT_ACTIONS: dict[Act, tuple[Role, ...]] = {
    Act.SHOOT: (Role.MAFIA, Role.DON),
    Act.CHECK: (Role.DON, Role.SHERIFF),
    Act.HEAL: (Role.DOCTOR,),
    Act.MANIAC: (Role.MANIAC,),
}
"""Each night action and the cards that have it."""

_WINNING_TEAM = {Result.RED: Team.RED, Result.BLACK: Team.BLACK, Result.MANIAC: Team.MANIAC}
_MAFIA_ROOM_PHASES = frozenset({Phase.NIGHT_ZERO, Phase.NIGHT})
_EYES_CLOSED_PHASES = frozenset({Phase.NIGHT_ZERO, Phase.NIGHT})
_SILENT_FLOORS = frozenset({FloorKind.SILENT})

# -- checks a command must pass ----------------------------------------------------------------------


def require_seat(state: GameView, seat: object, what: str = "seat") -> Seat:
    """``seat`` as a seat of this table.

    Raises:
        InvalidCommandError: it is not a whole number from 1 to the number of seats.
    """
    if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= state.players:
        raise InvalidCommandError("seat.unknown", field=what, seat=seat, players=state.players)
    return seat


def require_started(state: GameView) -> None:
    """Check that the cards are dealt.

    Raises:
        WrongPhaseError: they are not yet.
    """
    if state.phase is Phase.NEW:
        raise WrongPhaseError("game.not_started")


def require_playing(state: GameView) -> None:
    """The game runs and its result is open: a player action is possible.

    Raises:
        RulesError: the game has not started, is over, or is paused.
    """
    require_started(state)
    if state.outcome is not None:
        raise WrongPhaseError("game.over", result=state.outcome.result.value)
    if state.paused:
        raise IllegalActionError("game.paused")


def require_phase(state: GameView, *phases: Phase) -> None:
    """Check that the game is in one of ``phases``.

    Raises:
        WrongPhaseError: it is in none of them.
    """
    if state.phase not in phases:
        raise WrongPhaseError("phase.wrong", phase=state.phase.value, expected=[p.value for p in phases])


def require_alive(state: GameView, seat: Seat) -> None:
    """Check that ``seat`` is still at the table.

    Raises:
        NotAlivePlayerError: it has left.
    """
    if not state.is_alive(seat):
        raise NotAlivePlayerError("player.not_alive", seat=seat)


def _night_action_used(state: GameView, ruleset: Ruleset, action: Act, seat: Seat) -> RulesError | None:
    """Why ``seat`` can no longer take ``action`` tonight, or None while it still can."""
    if action is Act.SHOOT and seat in state.shots:
        return AlreadyActedError("night.already_shot", seat=seat)
    if action is Act.CHECK and seat in state.checks:
        return AlreadyActedError("night.already_checked", seat=seat)
    if action is Act.HEAL and state.heal is not None:
        return AlreadyActedError("night.already_healed", seat=seat)
    if action is Act.MANIAC:
        if state.night < ruleset.maniac_first_kill_night:
            return IllegalActionError("maniac.too_early", night=state.night, first=ruleset.maniac_first_kill_night)
        if state.maniac_shots_used >= ruleset.maniac_shots:
            return IllegalActionError("maniac.no_shots_left", shots=ruleset.maniac_shots)
        if state.maniac_acted:
            return AlreadyActedError("night.already_acted", seat=seat)
    return None


def _not_yours(action: Act, seat: Seat) -> RulesError:
    """The refusal for a card that does not have the night act ``action``."""
    if action is Act.SHOOT:
        return NotYourTurnError("night.not_a_shooter", seat=seat)
    if action is Act.CHECK:
        return NotYourTurnError("night.cannot_check", seat=seat)
    if action is Act.HEAL:
        return NotYourTurnError("night.not_the_doctor", seat=seat)
    return NotYourTurnError("night.not_the_maniac", seat=seat)


def require_actor(state: GameView, ruleset: Ruleset, action: Act, seat: object) -> Seat:
    """``seat``, when it may take ``action`` now, whatever seat it names.

    Raises:
        RulesError: the one ``Game.apply`` raises for that act by that seat now.
    """
    if action in NIGHT_ACTIONS:
        require_playing(state)
        if state.phase is Phase.NIGHT_ZERO:
            raise WrongPhaseError("night.night_zero", seat=seat)
        require_phase(state, Phase.NIGHT)
        actor = require_seat(state, seat)
        require_alive(state, actor)
        if state.role(actor) not in NIGHT_ACTIONS[action]:
            raise _not_yours(action, actor)
        used = _night_action_used(state, ruleset, action, actor)
        if used is not None:
            raise used
        return actor
    if action is Act.NOMINATE:
        require_playing(state)
        actor = require_seat(state, seat)
        if state.phase is not Phase.SPEECHES or state.floor is None:
            raise WrongPhaseError("nomination.not_now", phase=state.phase.value)
        if state.floor.seat != actor:
            raise NotYourTurnError("nomination.not_your_speech", seat=actor, speaker=state.floor.seat)
        if not nominations_open(state):
            raise IllegalActionError("nomination.disabled")
        if state.nominated:
            raise AlreadyActedError("nomination.one_per_speech", seat=actor)
        return actor
    require_playing(state)
    require_phase(state, Phase.BEST_MOVE)
    actor = require_seat(state, seat)
    if actor != state.best_move_seat:
        raise NotYourTurnError("best_move.not_entitled", seat=actor)
    return actor


def require_target(state: GameView, ruleset: Ruleset, action: Act, seat: Seat, target: object) -> Seat:
    """``target``, when the rules let ``seat`` name it with ``action`` (``seat`` being free to act).

    The maniac's pass (no target) is not a seat and is checked by the caller.

    Raises:
        RulesError: the one ``Game.apply`` raises for naming ``target``.
    """
    if action is Act.MANIAC and target == seat:
        raise InvalidTargetError("maniac.self_target", target=target)
    chosen = require_seat(state, target, "target")
    if action in NIGHT_ACTIONS and action is not Act.CHECK and chosen not in shot_targets(state):
        raise InvalidTargetError("night.target_not_alive", target=chosen)
    if action is Act.CHECK and chosen == seat:
        raise InvalidTargetError("night.self_check", target=chosen)
    if action is Act.HEAL:
        if ruleset.doctor_each_seat_once and any(t == chosen for _n, _d, t in state.heals):
            raise InvalidTargetError("doctor.seat_already_saved", target=chosen)
        if ruleset.doctor_no_repeat_target and any(n == state.night - 1 and t == chosen for n, _d, t in state.heals):
            raise InvalidTargetError("doctor.same_seat_twice_in_a_row", target=chosen)
        if ruleset.doctor_self_limit is not None and chosen == seat:
            used = sum(1 for _n, d, t in state.heals if t == d)
            if used >= ruleset.doctor_self_limit:
                raise InvalidTargetError("doctor.self_limit", count=ruleset.doctor_self_limit)
    if action is Act.NOMINATE:
        if not state.is_alive(chosen):
            raise InvalidTargetError("nomination.target_not_alive", target=chosen)
        if chosen == seat and not ruleset.self_nomination:
            raise InvalidTargetError("nomination.self_not_allowed", target=chosen)
        if chosen in state.nominees:
            raise InvalidTargetError("nomination.already_nominated", target=chosen)
    if action is Act.BEST_MOVE and chosen == seat:
        raise InvalidTargetError("best_move.own_seat", target=chosen)
    return chosen


# -- queries -----------------------------------------------------------------------------------------


def legal_targets(state: GameView, ruleset: Ruleset, action: Act, seat: Seat, *, now: bool = True) -> tuple[Seat, ...]:
    """The seats ``seat`` may name with ``action``, in seat order.

    Args:
        state: the game as it is.
        ruleset: the game's rules.
        action: what ``seat`` would do.
        seat: who would do it.
        now: when True, none unless ``seat`` may take ``action`` right now; when False, the seats
            it could name once free to act (a menu drawn for a turn that may have moved on).

    >>> from engine import CLASSIC, Game, StartGame
    >>> game = Game(CLASSIC)
    >>> _ = game.apply(StartGame(players=10, seed=1))
    >>> legal_targets(game.state, CLASSIC, Act.SHOOT, 1)  # night zero: nobody shoots
    ()
    >>> len(legal_targets(game.state, CLASSIC, Act.SHOOT, 1, now=False))
    10
    """
    if now:
        try:
            require_actor(state, ruleset, action, seat)
        except RulesError:
            return ()
    return tuple(target for target in range(1, state.players + 1) if _allowed(state, ruleset, action, seat, target))


def _allowed(state: GameView, ruleset: Ruleset, action: Act, seat: Seat, target: Seat) -> bool:
    try:
        require_target(state, ruleset, action, seat, target)
    except RulesError:
        return False
    return True


def shot_targets(state: GameView) -> tuple[Seat, ...]:
    """The seats a night's shot (the mafia's or the maniac's) or save may name: the living."""
    return tuple(state.alive_seats())


def night_actors(state: GameView, ruleset: Ruleset) -> tuple[Seat, ...]:
    """The living seats with a night action still to take tonight; the night ends when none is left.

    A pause does not end anyone's turn, so this answers during a pause too.
    """
    if state.phase is not Phase.NIGHT:
        return ()
    return tuple(
        seat
        for seat in state.alive_seats()
        if any(
            state.role(seat) in roles and _night_action_used(state, ruleset, action, seat) is None
            for action, roles in NIGHT_ACTIONS.items()
        )
    )


def seat_extra_points(state: GameView, seat: Seat) -> Decimal:
    """The judge's extra points a seat holds so far this game (each award already within the limits)."""
    return sum((Decimal(value) for awarded, value, _reason in state.extra_points if awarded == seat), Decimal(0))


def floor_holder(state: GameView) -> Seat | None:
    """The seat that has the floor now (it may be one just removed, finishing its words), if any."""
    return state.floor.seat if state.floor is not None else None


def is_speech(kind: FloorKind) -> bool:
    """Whether a turn of ``kind`` is the day's own speech, the one in which its holder may nominate."""
    return kind.is_speech


def nominations_open(state: GameView) -> bool:
    """Whether today's speeches may put anyone up: not on a day whose vote a removal cancelled."""
    return not state.vote_cancelled


def require_voter(state: GameView, seat: object, candidate: object | None = None) -> Seat:
    """Who may vote: a living player, once per round, for the candidate whose window is open.

    ``candidate`` None asks about the lift vote ("all of them leave?"), which has one window.
    Raises the refusal a hand that does not count gets, in the order the rules check them.
    """
    require_playing(state)
    require_phase(state, Phase.LIFT_VOTE if candidate is None else Phase.VOTING)
    voter = require_seat(state, seat)
    named = None if candidate is None else require_seat(state, candidate, "candidate")
    if not state.is_alive(voter):
        raise NotAlivePlayerError("vote.not_alive", seat=voter)
    vote = state.vote
    assert vote is not None  # noqa: S101 (a voting phase always has its round)
    if voter in vote.votes:
        if named is None:
            raise AlreadyActedError("vote.already_voted", seat=voter)
        raise AlreadyActedError("vote.already_voted", seat=voter, candidate=vote.votes[voter])
    if named is not None and named != vote.candidates[vote.index]:
        raise InvalidTargetError("vote.window_closed", candidate=named, current=vote.candidates[vote.index])
    return voter


def lift_votes_needed(state: GameView) -> int:
    """How many yes votes lift every tied seat: more than half of the living."""
    return len(state.alive_seats()) // 2 + 1


def silent_vote_target(candidates: Sequence[Seat]) -> Seat:
    """Where the votes of those who raised no hand go: to the last candidate of the round."""
    return candidates[-1]


def vote_totals(tally: Sequence[tuple[Seat, Sequence[Seat]]], silent: Sequence[Seat]) -> tuple[tuple[Seat, int], ...]:
    """Each candidate's count, in round order: the hands raised, plus the silent votes where they go.

    ``tally`` and ``silent`` are as ``VotingClosed`` carries them.

    >>> vote_totals([(3, (1, 2)), (7, (4,))], silent=(5, 6))
    ((3, 2), (7, 3))
    """
    last = silent_vote_target([candidate for candidate, _voters in tally])
    return tuple((c, len(voters) + (len(silent) if c == last else 0)) for c, voters in tally)


def critical_foul_count(ruleset: Ruleset) -> int:
    """How many fouls leave a player one foul from removal."""
    return ruleset.foul_removal_at - 1


def critical_fouls(state: GameView, ruleset: Ruleset) -> tuple[Seat, ...]:
    """The living seats one foul from removal, in seat order."""
    limit = critical_foul_count(ruleset)
    return tuple(seat for seat in state.alive_seats() if state.foul_count(seat) >= limit)


def win_by_count(state: GameView) -> tuple[Result, WinReason] | None:
    """The result the sides still at the table decide, or None while the game goes on."""
    counts = state.team_alive()
    black, red, maniac = counts[Team.BLACK], counts[Team.RED], counts[Team.MANIAC]
    total = black + red + maniac
    if total == 0:
        return Result.DRAW, WinReason.EVERYONE_GONE
    if maniac:
        if total <= 2:
            return Result.MANIAC, WinReason.MANIAC_DUEL
        return None
    if black == 0:
        return Result.RED, WinReason.ALL_BLACK_GONE
    if black >= red:
        return Result.BLACK, WinReason.PARITY
    return None


def winning_team(result: Result) -> Team | None:
    """The side a result makes the winner; none for a draw or an abandoned game."""
    return _WINNING_TEAM.get(result)


def winners(state: GameView) -> tuple[Seat, ...]:
    """The seats whose side won, in seat order; none before the result, after a draw or abandonment."""
    team = winning_team(state.outcome.result) if state.outcome is not None else None
    if team is None:
        return ()
    return tuple(seat for seat in range(1, state.players + 1) if state.role(seat).team is team)


def mafia_room_open(state: GameView) -> bool:
    """Whether the mafia may talk in their own room: at night zero and during each night.

    Asked between commands: the command that brings the dawn always leaves the night behind.
    """
    return state.phase in _MAFIA_ROOM_PHASES


# -- fair play ------------------------------------------------------------------------------------


def eyes_closed(state: GameView) -> bool:
    """Whether the town sleeps: night zero and each night, when no player may show or tell anything.

    A camera, a screen share or a line in the table's chat then breaks the game. The best move is
    made by day, in the open, so it is no such time.
    """
    return state.phase in _EYES_CLOSED_PHASES


def protest_open(ruleset: Ruleset, *, over: bool, since_end: float) -> bool:
    """Whether a player of the game may file a protest now (rules.md#protests).

    During the game always; after the result for ``protest_window`` seconds (``since_end``).
    """
    return not over or since_end <= ruleset.protest_window


def presence_required(state: GameView, ruleset: Ruleset, seat: Seat) -> bool:
    """Whether ``seat`` must show himself on camera now (``Ruleset.presence``, rules.md#presence).

    ``floor``: while he holds the floor, his last word included. ``day``: while the town is awake
    and he is at the table or holds the floor; at night no camera may be on at all.
    """
    if ruleset.presence == "off" or state.phase in (Phase.NEW, Phase.ENDED) or eyes_closed(state):
        return False
    holds = floor_holder(state) == seat
    if ruleset.presence == "floor":
        return holds
    return holds or state.is_alive(seat)


def someone_speaks(state: GameView) -> bool:
    """Whether a player holds the floor to speak (a speech, last words, a defence), so the table listens.

    A silenced turn (a player who lost their speech to fouls) has nobody to listen to.
    """
    floor = state.floor
    return floor is not None and floor.kind not in _SILENT_FLOORS and state.phase is not Phase.ENDED
