"""Whole games played by a scripted strategy, to see how balanced a ruleset is.

The ``random`` strategy is the one SPEC-independent baseline a club can reason about exactly: each
day one uniformly random living player is voted out, each night the black team unanimously shoots
a uniformly random red seat. Checks are made and ignored; nobody heals, the maniac passes, and
nobody fouls.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass

from engine import (
    Check,
    EndSpeech,
    Game,
    MakeBestMove,
    Nominate,
    Phase,
    Result,
    Role,
    Ruleset,
    Shoot,
    StartGame,
    Team,
    Timeout,
)

STRATEGIES = ("random",)


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


def play_random_game(ruleset: Ruleset, players: int, rng: random.Random) -> Game:
    """Play one whole game with the ``random`` strategy and return it, finished."""
    game = Game(ruleset)
    apply = game.apply
    state = game.state
    apply(StartGame(players=players, seed=rng.getrandbits(32)))
    target = other = 0
    day_planned = -1
    while state.phase is not Phase.ENDED:
        phase = state.phase
        floor = state.floor
        if phase is Phase.SPEECHES and floor is not None:
            if day_planned != state.day:
                day_planned = state.day
                alive = state.alive_seats()
                target = rng.choice(alive)
                other = rng.choice([s for s in alive if s != target])
            # The last nominee collects every silent vote, so the target must be nominated second.
            if not state.nominated and len(state.nominees) < 2:
                apply(Nominate(seat=floor.seat, target=other if not state.nominees else target))
            apply(EndSpeech(seat=floor.seat))
        elif floor is not None:
            apply(EndSpeech(seat=floor.seat))
        elif phase is Phase.NIGHT:
            _random_night(game, rng)
        elif phase is Phase.BEST_MOVE and state.best_move_seat is not None:
            seats = [s for s in range(1, state.players + 1) if s != state.best_move_seat]
            apply(MakeBestMove(seat=state.best_move_seat, targets=tuple(rng.sample(seats, 3))))
        else:
            apply(Timeout())
    return game


def _random_night(game: Game, rng: random.Random) -> None:
    state = game.state
    alive = state.alive_seats()
    # With only the maniac left beside them, the black team shoots him (georgian kills are mandatory).
    reds = [s for s in alive if state.roles[s - 1].team is Team.RED] or [
        s for s in alive if state.roles[s - 1].team is not Team.BLACK
    ]
    victim = rng.choice(reds)
    night = state.night
    for seat in alive:
        if state.roles[seat - 1].team is Team.BLACK and state.phase is Phase.NIGHT and state.night == night:
            game.apply(Shoot(seat=seat, target=victim))
    for seat in alive:
        role = state.roles[seat - 1]
        if role in (Role.DON, Role.SHERIFF) and state.phase is Phase.NIGHT and state.night == night:
            game.apply(Check(seat=seat, target=rng.choice([s for s in range(1, state.players + 1) if s != seat])))
    if state.phase is Phase.NIGHT and state.night == night:
        game.apply(Timeout())


def simulate(ruleset: Ruleset, *, players: int, games: int, seed: int, strategy: str = "random") -> SimulationReport:
    """Play ``games`` whole games and count their results.

    Raises:
        ValueError: an unknown strategy.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    rng = random.Random(seed)
    results: Counter[str] = Counter()
    started = time.perf_counter()
    for _ in range(games):
        game = play_random_game(ruleset, players, rng)
        outcome = game.outcome()
        results[outcome.result.value if outcome else Result.ABANDONED.value] += 1
    return SimulationReport(games=games, results=dict(results), seconds=time.perf_counter() - started)
