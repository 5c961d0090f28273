"""Whole games played by a scripted strategy, to see how a ruleset leans.

Two strategies play through engine commands only: the engine decides every rule, a strategy only
chooses among the actions it allows.

- ``random`` is the baseline a club can reason about exactly: each day one uniformly random living
  player is voted out, each night the black team unanimously shoots a uniformly random red seat.
  Checks are made and ignored; nobody heals, the maniac passes, and nobody fouls.
- ``club`` plays the information roles the way club tables do: the Sheriff/Detective opens his
  checks and the town votes on them, the black team shoots an opened checker, the Don hunts for
  him, the Doctor covers him. Its assumptions are listed in ``docs/rules.md#balance``.

Each game draws from its own random source, derived from the run's seed and the game's number, so
a seed gives the same results every time and every strategy plays the same deals.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from engine import (
    CastLiftVote,
    CastVote,
    Check,
    Command,
    EndSpeech,
    Event,
    FloorKind,
    Game,
    Heal,
    MakeBestMove,
    ManiacShoot,
    Nominate,
    Phase,
    Result,
    Role,
    Ruleset,
    Seat,
    Shoot,
    StartGame,
    Team,
    Timeout,
)
from engine.events import DonChecked, SheriffChecked
from engine.view import GameView


@dataclass(frozen=True, slots=True)
class Share:
    """One result's share of the games, with a 95% Wilson confidence interval."""

    result: str
    games: int
    share: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class SimulationReport:
    """What a simulation run found, and how fast it ran."""

    games: int
    results: dict[str, int]
    seconds: float
    strategy: str = "random"

    @property
    def games_per_second(self) -> float:
        """Throughput of the whole run."""
        return self.games / self.seconds if self.seconds > 0 else math.inf

    def shares(self) -> list[Share]:
        """Each result's share with its confidence interval, most frequent first."""
        return [
            Share(result, n, n / self.games, *wilson_interval(n, self.games))
            for result, n in sorted(self.results.items(), key=lambda kv: -kv[1])
        ]


def wilson_interval(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for a binomial share (95% by default).

    >>> low, high = wilson_interval(50, 100)
    >>> round(low, 3), round(high, 3)
    (0.404, 0.596)
    """
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(slots=True)
class _DayPlan:
    """The ``random`` strategy's pick for one day: ``other`` is nominated first, ``target`` second."""

    day: int = -1
    target: Seat = 0
    other: Seat = 0


def play_random_game(ruleset: Ruleset, players: int, rng: random.Random) -> Game:
    """Play one whole game with the ``random`` strategy and return it, finished.

    One loop with the day's choices inline: the engine benchmark plays thousands of these, and a
    call per step would be a measurable share of them.
    """
    game = Game(ruleset)
    state = game.state
    game.apply(StartGame(players=players, seed=rng.getrandbits(32)))
    plan = _DayPlan()
    while state.phase is not Phase.ENDED:
        phase, floor = state.phase, state.floor
        if phase is Phase.SPEECHES and floor is not None:
            if plan.day != state.day:
                _plan_day(state, rng, plan)
            # The last nominee collects every silent vote, so the target must be nominated second.
            if not state.nominated and len(state.nominees) < 2:
                game.apply(Nominate(seat=floor.seat, target=plan.other if not state.nominees else plan.target))
            game.apply(EndSpeech(seat=floor.seat))
        elif floor is not None:
            game.apply(EndSpeech(seat=floor.seat))
        elif phase is Phase.NIGHT:
            _random_night(game, rng)
        elif phase is Phase.BEST_MOVE and state.best_move_seat is not None:
            seats = [s for s in range(1, state.players + 1) if s != state.best_move_seat]
            game.apply(MakeBestMove(seat=state.best_move_seat, targets=tuple(rng.sample(seats, 3))))
        else:
            game.apply(Timeout())
    return game


def _plan_day(state: GameView, rng: random.Random, plan: _DayPlan) -> None:
    """A new day: whom the random table puts up today, and whom it sends out."""
    plan.day = state.day
    alive = state.alive_seats()
    plan.target = rng.choice(alive)
    plan.other = rng.choice([s for s in alive if s != plan.target])


def _random_night(game: Game, rng: random.Random) -> None:
    state = game.state
    alive = state.alive_seats()
    victim = rng.choice(_red_targets(game, alive))
    night = state.night
    for seat in alive:
        if state.roles[seat - 1].team is Team.BLACK and state.phase is Phase.NIGHT and state.night == night:
            game.apply(Shoot(seat=seat, target=victim))
    for seat in alive:
        if state.roles[seat - 1] in (Role.DON, Role.SHERIFF) and state.phase is Phase.NIGHT and state.night == night:
            game.apply(Check(seat=seat, target=rng.choice([s for s in range(1, state.players + 1) if s != seat])))
    if state.phase is Phase.NIGHT and state.night == night:
        game.apply(Timeout())


def _red_targets(game: Game, alive: list[Seat]) -> list[Seat]:
    """The seats the black team may shoot: the red ones, or with only the maniac left beside them, him.

    (Georgian kills are mandatory, so the maniac is shot when no red seat is left.)
    """
    roles = game.state.roles
    reds = [s for s in alive if roles[s - 1].team is Team.RED]
    return reds or [s for s in alive if roles[s - 1].team is not Team.BLACK]


# -- the club strategy -------------------------------------------------------------------------------

_MAX_DAYS = 100
"""A game that runs longer means a strategy that cannot end it: fail loudly rather than hang."""
_MAX_NOMINEES = 3
"""Speakers stop nominating on suspicion once this many players are up (a known black is always nominated)."""


class _ClubTable:
    """One game of the ``club`` strategy: what each side knows, and the choices that follow from it.

    Every decision reads only what its player could know: his own card, the black team's shared
    knowledge (each other, the Don's checks) or what was said at the table (the Sheriff's opened
    checks). The engine is asked whether an action is legal and decides everything else.
    """

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.game = game
        self.state = game.state
        self.rng = rng
        self.checks: dict[Seat, bool] = {}
        """The Sheriff's own results so far: seat -> black."""
        self.opened = False
        """Whether the Sheriff has told the table who he is."""
        self.public_sheriff: Seat | None = None
        self.public_black: set[Seat] = set()
        self.public_red: set[Seat] = set()
        self.don_checked: set[Seat] = set()
        self.don_found: Seat | None = None
        self.suspects: dict[Seat, Seat] = {}
        self.suspects_day = -1
        self.black_pick: Seat | None = None
        self.choices: dict[Seat, Seat] = {}
        self.choices_timer = -1

    # -- who is who, as each side sees it ------------------------------------------------------

    def _role(self, seat: Seat) -> Role:
        return self.state.roles[seat - 1]

    def _black(self, seat: Seat) -> bool:
        return self._role(seat).team is Team.BLACK

    def _alive(self, seat: Seat) -> bool:
        return self.state.is_alive(seat)

    def _trusted(self) -> set[Seat]:
        """Seats the town knows are red: the opened Sheriff and the players he cleared."""
        trusted = set(self.public_red)
        if self.public_sheriff is not None:
            trusted.add(self.public_sheriff)
        return trusted

    def _known_sheriff(self) -> Seat | None:
        """The Sheriff, as far as the black team knows."""
        seat = self.public_sheriff if self.public_sheriff is not None else self.don_found
        return seat if seat is not None and self._alive(seat) else None

    def _town_suspect(self, seat: Seat) -> Seat | None:
        """Whom a red player (or the maniac, playing red by day) wants out today."""
        alive = self.state.alive_seats()
        known = self._known_black(seat, alive)
        if known is not None:
            return known
        self._new_day()
        trusted = self._trusted_by(seat)
        suspect = self.suspects.get(seat)
        if suspect is None or not self._alive(suspect) or suspect in trusted:
            suspect = self._new_suspect(seat, alive, trusted)
        return suspect

    def _known_black(self, seat: Seat, alive: list[Seat]) -> Seat | None:
        """A black this player knows of: one the Sheriff opened, or (the Sheriff himself) one he found."""
        known = [s for s in alive if s in self.public_black]
        if known:
            return known[0]
        if self._role(seat) is Role.SHERIFF:
            found = [s for s in alive if self.checks.get(s)]
            if found:
                return found[0]
        return None

    def _trusted_by(self, seat: Seat) -> set[Seat]:
        """The seats this red player knows are red: the town's, and the Sheriff's own cleared checks."""
        trusted = self._trusted()
        if self._role(seat) is Role.SHERIFF:
            trusted |= {s for s, black in self.checks.items() if not black}
        return trusted

    def _new_suspect(self, seat: Seat, alive: list[Seat], trusted: set[Seat]) -> Seat | None:
        """Make up one's mind for today among the seats not trusted."""
        # Everyone cleared and the game goes on: the maniac, whom checks clear, is among them.
        pool = [s for s in alive if s != seat and s not in trusted] or [
            s for s in alive if s not in (seat, self.public_sheriff)
        ]
        if not pool:
            return None
        suspect = self.rng.choice(pool)
        self.suspects[seat] = suspect
        return suspect

    def _black_target(self) -> Seat | None:
        """The red player the black team pushes out today (never the opened Sheriff: the town trusts him)."""
        self._new_day()
        pick = self.black_pick
        if pick is None or not self._alive(pick):
            pool = [s for s in self.state.alive_seats() if not self._black(s) and s != self.public_sheriff]
            pick = self.rng.choice(pool) if pool else None
            self.black_pick = pick
        return pick

    def _new_day(self) -> None:
        """Suspicions last one day: each morning everyone makes up his mind again."""
        if self.suspects_day != self.state.day:
            self.suspects_day = self.state.day
            self.suspects = {}
            self.black_pick = None

    # -- the day ---------------------------------------------------------------------------------

    def speak(self, seat: Seat, kind: FloorKind) -> None:
        """A floor: the Sheriff may open his checks, a day speaker may nominate, then "thank you"."""
        if self._role(seat) is Role.SHERIFF:
            self._sheriff_speaks(seat, kind)
        if kind in (FloorKind.SPEECH, FloorKind.SILENT):
            target = self._nomination(seat)
            if target is not None:
                nominate = Nominate(seat=seat, target=target)
                if self.game.is_legal(nominate):
                    self.game.apply(nominate)
        self.game.apply(EndSpeech(seat=seat))

    def _sheriff_speaks(self, seat: Seat, kind: FloorKind) -> None:
        # He opens once he has found a black, to save himself from the vote, or with his last word.
        found = any(black and self._alive(s) for s, black in self.checks.items())
        in_danger = kind in (FloorKind.DEFENSE, FloorKind.TIE_SPEECH) or (
            seat in self.state.nominees and bool(self.checks)
        )
        leaving = kind in (FloorKind.LAST_WORD, FloorKind.FAREWELL)
        if not (self.opened or found or in_danger or leaving):
            return
        self.opened = True
        self.public_sheriff = seat
        for target, black in self.checks.items():
            (self.public_black if black else self.public_red).add(target)

    def _nomination(self, seat: Seat) -> Seat | None:
        nominees = self.state.nominees
        known = [s for s in self.state.alive_seats() if s in self.public_black and s not in nominees]
        if not self._black(seat) and known:
            return known[0]
        if len(nominees) >= _MAX_NOMINEES:
            return None
        target = self._black_target() if self._black(seat) else self._town_suspect(seat)
        return target if target is not None and target not in nominees else None

    def _vote_choice(self, seat: Seat, candidates: tuple[Seat, ...]) -> Seat:
        return self._black_vote(candidates) if self._black(seat) else self._red_vote(seat, candidates)

    def _black_vote(self, candidates: tuple[Seat, ...]) -> Seat:
        """The black team votes out the Sheriff it knows, then its pick, then any red seat."""
        sheriff = self._known_sheriff()
        target = self._black_target()
        reds = [c for c in candidates if not self._black(c)]
        for wanted in (sheriff, target):
            if wanted in candidates:
                return wanted
        if reds:
            return reds[0]
        hidden = [c for c in candidates if c not in self.public_black]
        return hidden[-1] if hidden else candidates[-1]

    def _red_vote(self, seat: Seat, candidates: tuple[Seat, ...]) -> Seat:
        """A red player votes out a known black, then his suspect, then anyone he does not trust."""
        known = [c for c in candidates if c in self.public_black]
        if known:
            return known[0]
        if self._role(seat) is Role.SHERIFF:
            found = [c for c in candidates if self.checks.get(c)]
            if found:
                return found[0]
        suspect = self._town_suspect(seat)
        if suspect in candidates:
            return suspect
        trusted = self._trusted() | {seat}
        pool = [c for c in candidates if c not in trusted]
        return self.rng.choice(pool) if pool else candidates[-1]

    def vote(self) -> None:
        """One candidate's window: everyone who wants him out raises a hand, then the window closes."""
        state = self.state
        vote = state.vote
        assert vote is not None  # noqa: S101
        if self.choices_timer != state.timer or not self.choices:
            # A new round (main vote or revote): every voter makes up his mind once.
            self.choices = {seat: self._vote_choice(seat, vote.candidates) for seat in state.alive_seats()}
        timer = state.timer
        current = vote.candidates[vote.index]
        for seat in state.alive_seats():
            if self.choices.get(seat) == current and seat not in vote.votes:
                self.game.apply(CastVote(seat=seat, candidate=current))
                if state.timer != timer:
                    self.choices = {}
                    return
        self.game.apply(Timeout())
        self.choices_timer = state.timer
        if state.phase is not Phase.VOTING:
            self.choices = {}

    def lift(self) -> None:
        """"Shall all of them leave?": each player says yes or stays silent (no)."""
        state = self.state
        vote = state.vote
        assert vote is not None  # noqa: S101
        tied = set(vote.candidates)
        timer = state.timer
        for seat in state.alive_seats():
            if self._lift_yes(seat, tied):
                self.game.apply(CastLiftVote(seat=seat, yes=True))
                if state.timer != timer:
                    return
        self.game.apply(Timeout())

    def _lift_yes(self, seat: Seat, tied: set[Seat]) -> bool:
        if seat in tied:
            return False
        if self._black(seat):
            return not any(self._black(s) for s in tied)
        if self._role(seat) is Role.MANIAC:
            return True
        trusted = self._trusted()
        if self._role(seat) is Role.SHERIFF:
            if any(self.checks.get(s) for s in tied):
                return True
            trusted |= {s for s, black in self.checks.items() if not black}
        if tied & trusted:
            return False
        if tied & self.public_black:
            return True
        return self.rng.random() < 0.5

    # -- the night -------------------------------------------------------------------------------

    def night(self) -> None:
        """Every night actor acts once; the engine resolves the dawn when the last one has."""
        state, game = self.state, self.game
        night = state.night

        def still_night() -> bool:
            return state.phase is Phase.NIGHT and state.night == night

        for command in self._night_plan(state.alive_seats()):
            if not still_night():
                return
            if not game.is_legal(command):
                continue
            for event in game.apply(command):
                self._learn(event)
        if still_night():
            game.apply(Timeout())

    def _night_plan(self, alive: list[Seat]) -> list[Command]:
        """Each night actor's commands, in the order they act: the shots, the checks, the heal, the maniac."""
        black = [s for s in alive if self._black(s)]
        victim = self._mafia_victim(alive)
        by_role = {self._role(s): s for s in alive}
        plan: list[Command] = [Shoot(seat=s, target=victim) for s in black] if victim is not None else []
        plan += self._don_plan(by_role.get(Role.DON), alive)
        plan += self._sheriff_plan(by_role.get(Role.SHERIFF), alive)
        doctor, maniac = by_role.get(Role.DOCTOR), by_role.get(Role.MANIAC)
        if doctor is not None:
            plan += self._doctor_plan(doctor, alive)
        if maniac is not None:
            plan += self._maniac_plan(maniac, alive)
        return plan

    def _don_plan(self, don: Seat | None, alive: list[Seat]) -> list[Command]:
        # The Don hunts for the Sheriff among the red seats he has not checked, until he knows him.
        if don is None:
            return []
        pool = [s for s in alive if not self._black(s) and s not in self.don_checked]
        if pool and self._known_sheriff() is None:
            return [Check(seat=don, target=self.rng.choice(pool))]
        return []

    def _sheriff_plan(self, sheriff: Seat | None, alive: list[Seat]) -> list[Command]:
        if sheriff is None:
            return []
        pool = [s for s in alive if s != sheriff and s not in self.checks]
        return [Check(seat=sheriff, target=self.rng.choice(pool))] if pool else []

    def _mafia_victim(self, alive: list[Seat]) -> Seat | None:
        # The opened or found Sheriff first, then a player he cleared, then any red-looking seat.
        sheriff = self._known_sheriff()
        if sheriff is not None:
            return sheriff
        cleared = [s for s in alive if s in self.public_red]
        if cleared:
            return self.rng.choice(cleared)
        pool = [s for s in alive if not self._black(s)]
        return self.rng.choice(pool) if pool else None

    def _doctor_plan(self, doctor: Seat, alive: list[Seat]) -> list[Command]:
        wanted = [self.public_sheriff] if self.public_sheriff is not None and self._alive(self.public_sheriff) else []
        others = [s for s in alive if s not in wanted]
        self.rng.shuffle(others)
        # The engine keeps the Doctor's limits; the first legal pick in this order is the one made.
        return [Heal(seat=doctor, target=t) for t in wanted + others]

    def _maniac_plan(self, maniac: Seat, alive: list[Seat]) -> list[Command]:
        # He fires whenever he may, first at the players the town trusts: they would outlast him.
        trusted = [s for s in alive if s in self._trusted() and s != maniac]
        others = [s for s in alive if s != maniac and s not in trusted]
        target = self.rng.choice(trusted or others) if (trusted or others) else None
        shoot = ManiacShoot(seat=maniac, target=target)
        return [shoot] if self.game.is_legal(shoot) else [ManiacShoot(seat=maniac, target=None)]

    def _learn(self, event: Event) -> None:
        if isinstance(event, SheriffChecked):
            self.checks[event.target] = event.black
        elif isinstance(event, DonChecked):
            self.don_checked.add(event.target)
            if event.sheriff:
                self.don_found = event.target

    def best_move(self, seat: Seat) -> None:
        """The first night's victim names the checked blacks he knows, then seats nobody has cleared."""
        others = [s for s in range(1, self.state.players + 1) if s != seat]
        found = [s for s in others if self.checks.get(s)] if self._role(seat) is Role.SHERIFF else []
        trusted = self._trusted()
        rest = [s for s in others if s not in found and s not in trusted]
        self.rng.shuffle(rest)
        spare = [s for s in others if s not in found and s not in rest]
        self.game.apply(MakeBestMove(seat=seat, targets=tuple((found + rest + spare)[:3])))


def play_club_game(ruleset: Ruleset, players: int, rng: random.Random) -> Game:
    """Play one whole game with the ``club`` strategy and return it, finished."""
    game = Game(ruleset)
    state = game.state
    game.apply(StartGame(players=players, seed=rng.getrandbits(32)))
    table = _ClubTable(game, rng)
    while state.phase is not Phase.ENDED:
        if state.day > _MAX_DAYS:
            raise RuntimeError(f"the club strategy stalled: day {state.day} of a {ruleset.name} game")
        phase, floor = state.phase, state.floor
        if floor is not None:
            table.speak(floor.seat, floor.kind)
        elif phase is Phase.VOTING:
            table.vote()
        elif phase is Phase.LIFT_VOTE:
            table.lift()
        elif phase is Phase.NIGHT:
            table.night()
        elif phase is Phase.BEST_MOVE and state.best_move_seat is not None:
            table.best_move(state.best_move_seat)
        else:
            game.apply(Timeout())
    return game


# -- running many games -----------------------------------------------------------------------------

Strategy = Callable[[Ruleset, int, random.Random], Game]
STRATEGIES: dict[str, Strategy] = {"random": play_random_game, "club": play_club_game}
BASELINE_NOTE = (
    "random play is a baseline, not a prediction: nobody uses what he knows, so it says how the "
    "table's arithmetic leans, not how a club's evening will go"
)


def game_rng(seed: int, index: int) -> random.Random:
    """The random source of game ``index`` of a run: every strategy plays the same deals for a seed."""
    return random.Random(f"{seed}:{index}")


def simulate(
    ruleset: Ruleset,
    *,
    players: int,
    games: int,
    seed: int,
    strategy: str = "random",
    progress: Callable[[int], None] | None = None,
) -> SimulationReport:
    """Play ``games`` whole games and count their results; ``progress`` hears how many are done.

    Raises:
        ValueError: an unknown strategy, or fewer than one game.
    """
    play = STRATEGIES.get(strategy)
    if play is None:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if games < 1:
        raise ValueError("games must be at least 1")
    results: Counter[str] = Counter()
    started = time.perf_counter()
    step = max(1, games // 200)
    for index in range(games):
        game = play(ruleset, players, game_rng(seed, index))
        outcome = game.outcome()
        results[outcome.result.value if outcome else Result.ABANDONED.value] += 1
        if progress is not None and (index + 1) % step == 0:
            progress(index + 1)
    if progress is not None and games % step:
        progress(games)
    return SimulationReport(
        games=games, results=dict(results), seconds=time.perf_counter() - started, strategy=strategy
    )


def parse_strategies(text: str) -> tuple[str, ...]:
    """``random``, ``random,club`` or ``all`` -> the strategies to compare, in the order given.

    Raises:
        ValueError: an unknown name, or none at all.
    """
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    if names == ["all"]:
        return tuple(STRATEGIES)
    unknown = [name for name in names if name not in STRATEGIES]
    if unknown or not names:
        raise ValueError(f"unknown strategy {','.join(unknown) or text!r}; choose from {', '.join(STRATEGIES)} or all")
    return tuple(dict.fromkeys(names))


class ProgressBar:
    """A one-line progress bar for a long run, redrawn in place on a terminal stream."""

    def __init__(self, stream: TextIO, label: str, total: int, width: int = 30) -> None:
        self.stream, self.label, self.total, self.width = stream, label, total, width
        self.started = self.drawn = time.perf_counter()

    def __call__(self, done: int) -> None:
        """Redraw the bar for ``done`` games, at most ten times a second."""
        now = time.perf_counter()
        if done < self.total and now - self.drawn < 0.1:
            return
        self.drawn = now
        filled = self.width * done // self.total
        rate = done / max(now - self.started, 1e-9)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label:<8} [{bar}] {done:>{len(str(self.total))}}/{self.total} games, {rate:,.0f}/s")
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def render_table(ruleset: Ruleset, players: int, seed: int, reports: list[SimulationReport]) -> str:
    """The human-readable comparison: one row per result, one column per strategy."""
    games = reports[0].games
    lines = [f"{games} games per strategy, {ruleset.name}, {players} players, seed {seed}"]
    results = sorted({r for report in reports for r in report.results}, key=_result_order)
    header = f"{'result':<8}" + "".join(f"{report.strategy:>28}" for report in reports)
    lines += [header, f"{'':<8}" + "".join(f"{'share  [95% interval]':>28}" for _ in reports)]
    for result in results:
        cells = []
        for report in reports:
            n = report.results.get(result, 0)
            low, high = wilson_interval(n, report.games)
            cells.append(f"{100 * n / report.games:>10.1f}%  [{100 * low:.1f}, {100 * high:.1f}]")
        lines.append(f"{result:<8}" + "".join(f"{cell:>28}" for cell in cells))
    lines.append(f"{'speed':<8}" + "".join(f"{report.games_per_second:>17,.0f} games/s" for report in reports))
    return "\n".join(lines)


def report_data(ruleset: Ruleset, players: int, seed: int, reports: list[SimulationReport]) -> dict[str, Any]:
    """The JSON form: the first strategy's figures at the top level, and every strategy's by name."""

    def one(report: SimulationReport) -> dict[str, Any]:
        return {
            "games": report.games,
            "results": report.results,
            "shares": {
                s.result: {"share": round(s.share, 5), "low": round(s.low, 5), "high": round(s.high, 5)}
                for s in report.shares()
            },
            "games_per_second": round(report.games_per_second, 1),
        }

    first = one(reports[0])
    return {
        "ruleset": ruleset.name,
        "players": players,
        "seed": seed,
        "strategy": reports[0].strategy,
        **first,
        "strategies": {report.strategy: one(report) for report in reports},
    }


def _result_order(result: str) -> int:
    order = [r.value for r in Result]
    return order.index(result) if result in order else len(order)
