"""Small drivers that keep the engine's rule tests short.

Seatings are written one letter per seat, seat 1 first: ``C`` citizen, ``S`` sheriff (detective),
``H`` doctor, ``M`` mafia, ``D`` don, ``K`` maniac.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypedDict, TypeVar

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    Abandon,
    AwardPoints,
    CastLiftVote,
    CastVote,
    Cause,
    Check,
    Command,
    DeclareDraw,
    Disqualify,
    EndSpeech,
    Event,
    FloorKind,
    Game,
    GameView,
    GiveFoul,
    Heal,
    Leave,
    MakeBestMove,
    ManiacShoot,
    Nominate,
    NoVoteReason,
    Pause,
    Phase,
    Result,
    Resume,
    RevokeFoul,
    Role,
    RulesError,
    Ruleset,
    Seat,
    Shoot,
    StartGame,
    TakeBack,
    Timeout,
    VoteKind,
    WinReason,
    to_data,
)
from engine import events as ev

T = TypeVar("T")

LETTERS = {"C": Role.CITIZEN, "S": Role.SHERIFF, "H": Role.DOCTOR, "M": Role.MAFIA, "D": Role.DON, "K": Role.MANIAC}

# D#1 M#2 M#3 S#4, citizens #5-#10.
TEN = "DMMSCCCCCC"
# D#1 M#2 M#3 S#4 doctor #5, citizens #6-#10 (classic with the doctor option).
TEN_DOCTOR = "DMMSHCCCCC"
# D#1 M#2 M#3 detective #4 doctor #5 maniac #6, citizens #7-#12.
TWELVE = "DMMSHKCCCCCC"

CLASSIC_DOCTOR = CLASSIC.replace(doctor=True)

PRESET_SEATINGS: dict[str, tuple[Ruleset, str]] = {
    "classic": (CLASSIC, TEN),
    "georgian": (GEORGIAN, TWELVE),
    "fiim": (FIIM, TEN),
}

FLOOR_PHASES = (Phase.LAST_WORDS, Phase.SPEECHES, Phase.DEFENSE, Phase.TIE_SPEECHES, Phase.FAREWELL, Phase.FINAL_WORDS)


def roles(seating: str) -> tuple[Role, ...]:
    """The roles a seating string deals, seat 1 first."""
    return tuple(LETTERS[letter] for letter in seating)


def start(ruleset: Ruleset = CLASSIC, seating: str = TEN) -> Game:
    """A game dealt exactly as ``seating``, waiting in Night 0."""
    game = Game(ruleset)
    game.apply(StartGame(players=len(seating), roles=roles(seating)))
    return game


def table(seating: str, base: Ruleset = CLASSIC, **flags: object) -> Ruleset:
    """``base`` with one setup: exactly the roles of ``seating``."""
    counts: dict[Role, int] = {}
    for role in roles(seating):
        counts[role] = counts.get(role, 0) + 1
    return base.replace(setups={len(seating): counts}, default_players=len(seating), **flags)


def start_table(seating: str, base: Ruleset = CLASSIC, **flags: object) -> Game:
    """A game on a custom table dealt exactly as ``seating``."""
    return start(table(seating, base, **flags), seating)


def start_preset(name: str) -> Game:
    """A preset's game with its standard test seating."""
    ruleset, seating = PRESET_SEATINGS[name]
    return start(ruleset, seating)


def assert_rejected(game: Game, command: Command, error: type[RulesError], code: str | None = None) -> RulesError:
    """``command`` is refused with ``error`` (and ``code``), and the game is left exactly as it was."""
    before = json.dumps(to_data(game.state))
    sizes = (len(game.history), len(game.events))
    with pytest.raises(error) as caught:
        game.apply(command)
    assert json.dumps(to_data(game.state)) == before
    assert (len(game.history), len(game.events)) == sizes
    if code is not None:
        assert caught.value.code == code, caught.value
    return caught.value


def phase_of(game: Game) -> Phase:
    """The game's phase now: asked afresh, where mypy would keep an earlier ``assert``'s narrowing."""
    return game.state.phase


class NightActions(TypedDict, total=False):
    """``play_night``'s actions, for helpers that pass them on."""

    shots: Mapping[Seat, Seat] | None
    checks: Mapping[Seat, Seat] | None
    heal: tuple[Seat, Seat] | None
    maniac: tuple[Seat, Seat | None] | None


def collect(game: Game, action: Callable[[], object]) -> list[Event]:
    """The events ``action`` produced on ``game``."""
    before = len(game.events)
    action()
    return game.events[before:]


def names(events: Iterable[Event]) -> list[str]:
    """The type names of ``events``, in order."""
    return [type(e).__name__ for e in events]


def of_type(events: Iterable[Event], kind: type[T]) -> list[T]:
    """The events of one type."""
    return [e for e in events if isinstance(e, kind)]


def advance(game: Game, until: Callable[[GameView], bool], limit: int = 500) -> None:
    """Let the table run without any player acting (thanks and timeouts) until ``until`` holds."""
    for _ in range(limit):
        if until(game.state):
            return
        floor = game.state.floor
        if floor is not None and game.state.phase in FLOOR_PHASES:
            game.apply(EndSpeech(seat=floor.seat))
        else:
            game.apply(Timeout())
    raise AssertionError(f"still not there after {limit} steps: {game.state.phase}")


def to_speeches(game: Game) -> None:
    """Run the morning (last words) until the first day speech has the floor."""
    advance(game, lambda s: s.phase is Phase.SPEECHES and s.floor is not None)


def to_day(game: Game, day: int) -> None:
    """Let the table run with no nominations and missed nights until ``day`` starts (first speech)."""
    advance(game, lambda s: s.day == day and s.phase is Phase.SPEECHES and s.floor is not None)


def to_night(game: Game, night: int) -> None:
    """Let the table run with no nominations and missed nights until Night ``night`` falls."""
    advance(game, lambda s: s.night == night and s.phase is Phase.NIGHT)


def speeches(game: Game, nominations: Mapping[Seat, Seat] | None = None) -> None:
    """Finish the morning and the day's speeches; each speaker in ``nominations`` nominates his target."""
    pending = dict(nominations or {})
    while game.state.phase in (Phase.LAST_WORDS, Phase.SPEECHES) and game.state.floor is not None:
        seat = game.state.floor.seat
        if game.state.phase is Phase.SPEECHES and seat in pending:
            game.apply(Nominate(seat=seat, target=pending.pop(seat)))
        game.apply(EndSpeech(seat=seat))
    assert not pending, f"these speakers never had the floor: {sorted(pending)}"


def end_floors(game: Game, phase: Phase) -> list[Seat]:
    """Everyone who takes the floor in ``phase`` says thank you; returns who spoke, in order."""
    spoken = []
    while game.state.phase is phase and game.state.floor is not None:
        seat = game.state.floor.seat
        spoken.append(seat)
        game.apply(EndSpeech(seat=seat))
    return spoken


def vote(game: Game, ballots: Mapping[Seat, Sequence[Seat]] | None = None) -> None:
    """One voting round: in each window the listed voters vote for that candidate, the rest stay silent."""
    ballots = ballots or {}
    current = game.state.vote
    assert game.state.phase is Phase.VOTING
    assert current is not None
    for candidate in current.candidates:
        for voter in ballots.get(candidate, ()):
            game.apply(CastVote(seat=voter, candidate=candidate))
        if game.state.vote is not current:
            return
        game.apply(Timeout())
        if game.state.vote is not current:
            return


def lift(game: Game, yes: Iterable[Seat] = ()) -> None:
    """The lift vote: ``yes`` say yes, everyone else stays silent (counted as no)."""
    assert game.state.phase is Phase.LIFT_VOTE
    for seat in yes:
        game.apply(CastLiftVote(seat=seat))
    if game.state.phase is Phase.LIFT_VOTE:
        game.apply(Timeout())


def play_day(
    game: Game,
    nominations: Mapping[Seat, Seat] | None = None,
    ballots: Mapping[Seat, Sequence[Seat]] | None = None,
) -> None:
    """Speeches with ``nominations``, any defense, one main vote with ``ballots``, and the farewells."""
    speeches(game, nominations)
    end_floors(game, Phase.DEFENSE)
    if game.state.phase is Phase.VOTING:
        vote(game, ballots)
    end_floors(game, Phase.FAREWELL)


def play_night(
    game: Game,
    shots: Mapping[Seat, Seat] | None = None,
    checks: Mapping[Seat, Seat] | None = None,
    heal: tuple[Seat, Seat] | None = None,
    maniac: tuple[Seat, Seat | None] | None = None,
) -> None:
    """The night's actions as given; a timeout ends the night if someone is still pending."""
    night = game.state.night
    assert game.state.phase is Phase.NIGHT
    for seat, target in (shots or {}).items():
        game.apply(Shoot(seat=seat, target=target))
    for seat, target in (checks or {}).items():
        game.apply(Check(seat=seat, target=target))
    if maniac is not None:
        game.apply(ManiacShoot(seat=maniac[0], target=maniac[1]))
    if heal is not None:
        game.apply(Heal(seat=heal[0], target=heal[1]))
    if game.state.phase is Phase.NIGHT and game.state.night == night:
        game.apply(Timeout())


def kill(game: Game, target: Seat) -> None:
    """A night in which every living black shoots ``target`` and nobody else acts."""
    state = game.state
    blacks = [s for s in state.alive_seats() if state.role(s) in (Role.MAFIA, Role.DON)]
    play_night(game, shots=dict.fromkeys(blacks, target))


# -- random legal play (property tests, codec corpus) ---------------------------------------------------------------


def candidate_commands(
    game: Game, rng: random.Random, team_target: Seat | None = None
) -> tuple[list[Command], list[Command]]:
    """Commands worth trying now: (players' moves and timers, the judge's rarer interventions).

    Not all of them are legal; callers filter with ``game.is_legal``. Illegal ones make good probes.
    """
    state = game.state
    seats = list(range(1, state.players + 1))
    alive = state.alive_seats()
    play: list[Command] = [Timeout(step=state.timer), Timeout(step=state.timer - 1)]
    if state.floor is not None:
        play.append(EndSpeech(seat=state.floor.seat))
        play += [Nominate(seat=state.floor.seat, target=t) for t in seats]
    play += [EndSpeech(seat=s) for s in rng.sample(seats, 2)]
    if state.vote is not None:
        current = state.vote.candidates[min(state.vote.index, len(state.vote.candidates) - 1)]
        play += [CastVote(seat=s, candidate=current) for s in seats]
        play += [CastVote(seat=s, candidate=c) for s in rng.sample(seats, 2) for c in state.vote.candidates]
        play += [CastLiftVote(seat=s, yes=rng.random() < 0.6) for s in seats]
    if state.phase is Phase.NIGHT:
        # A shared target for the night makes unanimous kills likely enough for games to end.
        team_target = team_target or rng.choice(alive)
        play += [Shoot(seat=s, target=team_target if rng.random() < 0.8 else rng.choice(seats)) for s in seats]
        play += [Check(seat=s, target=rng.choice(seats)) for s in seats]
        play += [Heal(seat=s, target=rng.choice(seats)) for s in seats]
        play += [ManiacShoot(seat=s, target=rng.choice([None, *seats])) for s in seats]
    if state.phase is Phase.BEST_MOVE:
        play += [MakeBestMove(seat=s, targets=tuple(rng.sample(seats, 3))) for s in seats]
    play.append(Nominate(seat=rng.choice(seats), target=rng.choice(seats)))
    judge: list[Command] = [
        GiveFoul(seat=rng.choice(seats)),
        GiveFoul(seat=rng.choice(seats)),
        GiveFoul(seat=rng.choice(seats)),
        GiveFoul(seat=rng.choice(seats), oath=True),
        RevokeFoul(seat=rng.choice(seats)),
        Disqualify(seat=rng.choice(seats)),
        Leave(seat=rng.choice(seats)),
        Pause(seat=rng.choice([None, *seats])),
        Resume(),
        AwardPoints(seat=rng.choice(seats), value=rng.choice(["0.1", "-0.3", "0"])),
    ]
    if rng.random() < 0.05:
        judge += [DeclareDraw(), Abandon()]
    return play, judge


def random_step(game: Game, rng: random.Random, judge_rate: float = 0.03, team_target: Seat | None = None) -> Command:
    """Pick one legal command at random (the judge rarely) and return it, not yet applied."""
    play, judge = candidate_commands(game, rng, team_target)
    if game.state.paused:
        judge_rate = 0.5
    pool = judge if rng.random() < judge_rate else play
    legal = [c for c in pool if game.is_legal(c)]
    if not legal:
        legal = [c for c in play + judge if game.is_legal(c)]
    assert legal, f"nothing is legal in {game.state.phase}"
    return rng.choice(legal)


def random_game(ruleset: Ruleset, seed: int, limit: int = 4000, judge_rate: float = 0.03) -> Game:
    """A whole game of random legal commands, dealt from ``seed``."""
    rng = random.Random(seed)
    game = Game(ruleset)
    game.apply(StartGame(players=rng.choice(ruleset.player_counts), seed=seed))
    targets: dict[int, Seat] = {}
    for _ in range(limit):
        if game.over:
            break
        night = game.state.night
        if night not in targets and game.state.phase is Phase.NIGHT:
            targets[night] = rng.choice(game.state.alive_seats())
        game.apply(random_step(game, rng, judge_rate, targets.get(night)))
    return game


# -- samples --------------------------------------------------------------------------------------------------

SAMPLE_COMMANDS: list[Command] = [
    StartGame(players=10),
    StartGame(players=12, seed=99),
    StartGame(players=6, roles=(Role.DON, Role.MAFIA, Role.SHERIFF, Role.CITIZEN, Role.CITIZEN, Role.CITIZEN)),
    EndSpeech(seat=3),
    Nominate(seat=3, target=7),
    CastVote(seat=1, candidate=7),
    CastLiftVote(seat=2),
    CastLiftVote(seat=2, yes=False),
    Shoot(seat=1, target=5),
    Check(seat=4, target=1),
    Heal(seat=5, target=5),
    ManiacShoot(seat=6, target=8),
    ManiacShoot(seat=6),
    MakeBestMove(seat=7, targets=(1, 2, 3)),
    GiveFoul(seat=3),
    GiveFoul(seat=3, oath=True),
    RevokeFoul(seat=3),
    Disqualify(seat=3, reason="insults"),
    Disqualify(seat=3, left=12),
    GiveFoul(seat=3, left=40),
    Leave(seat=6),
    Timeout(),
    Timeout(step=17),
    Timeout(step=17, left=25),
    TakeBack(),
    Pause(),
    Pause(seat=6),
    Resume(),
    DeclareDraw(),
    Abandon(),
    AwardPoints(seat=4, value="-0.25", reason="late"),
]
"""Every command class, with its optional fields both given and left out."""


ONE_OF_EACH_EVENT: tuple[ev.Event, ...] = (
    ev.GameStarted(roles=roles(TEN)),
    ev.NightFell(night=1),
    ev.ShotFired(seat=1, target=5),
    ev.DonChecked(seat=1, target=4, sheriff=True),
    ev.SheriffChecked(seat=4, target=2, black=True),
    ev.Healed(seat=5, target=5),
    ev.ManiacActed(seat=6, target=None),
    ev.NightResolved(night=1, mafia_target=5, maniac_target=None, healed=None, killed=(5,)),
    ev.BestMoveAsked(seat=5),
    ev.BestMoveMade(seat=5, targets=(1, 2, 3), black=2),
    ev.DayStarted(day=2, opener=2, vote_cancelled=False),
    ev.CriticalFoulsAnnounced(seats=(3,)),
    ev.StageStarted(phase=Phase.SPEECHES, turns=(ev.Turn(2, FloorKind.SPEECH, 60),)),
    ev.FloorGiven(turn=ev.Turn(2, FloorKind.SPEECH, 60)),
    ev.TurnSkipped(seat=3, reason="fouls"),
    ev.SpeechPenaltyServed(seat=3, mode="skipped"),
    ev.FloorEnded(seat=2, reason="thanks"),
    ev.Nominated(seat=2, target=7),
    ev.NomineesRecapped(seats=(7, 8)),
    ev.VotingStarted(kind=VoteKind.MAIN, candidates=(7, 8)),
    ev.VoteCast(seat=1, candidate=7),
    ev.VoteWindowClosed(candidate=7),
    ev.VotingClosed(kind=VoteKind.MAIN, tally=((7, (1,)), (8, ())), silent=(2,)),
    ev.TieDeclared(seats=(7, 8)),
    ev.LiftVoteStarted(seats=(7, 8)),
    ev.LiftVoteCast(seat=1, yes=True),
    ev.LiftVoteClosed(yes=(1,), alive=9, passed=False),
    ev.NoVoteHeld(reason=NoVoteReason.LIFT_FAILED),
    ev.VoteCancelled(),
    ev.PlayersVotedOut(seats=(7,), cause=Cause.VOTED_OUT),
    ev.FoulGiven(seat=3, oath=False, total=1),
    ev.FoulRevoked(seat=3, total=0),
    ev.SpeechLost(seat=3, day=2),
    ev.SpeechRestored(seat=3),
    ev.PlayerRemoved(seat=9, cause=Cause.DISQUALIFIED, cancels="today", reason="insults"),
    ev.Paused(seat=None),
    ev.Resumed(),
    ev.PointsAwarded(seat=4, value="0.25", reason="good play"),
    ev.GameEnded(result=Result.RED, reason=WinReason.ALL_BLACK_GONE),
    ev.ActionTakenBack(kind="skip", seat=5, total=0, floor=ev.Turn(5, FloorKind.SPEECH, 31),
                       restored=(("queue", "[]"), ("timer", "12"))),
)
"""An instance of every event class, for projections that must answer each one."""
