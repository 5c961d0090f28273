"""Points by a federation's scoring version: each seat's points for a game, and a tournament's standings.

FIIM's scoring is taken from the rating site that keeps it, mafiaratings: its scoring system «ФИИМ»
(id 19, the site's default), versions 2 to 7 as the site's own source states them
(github.com/szotin/mafiaratings, ``db/alter151.sql`` and ``db/alter152.sql``, October 2024; the
standings order is ``SCORING_DEFAULT_SORTING`` in ``include/scoring.php``). ``docs/tournaments.md``
gives each version's numbers and worked examples that the tests recompute.

What a game gives a seat, in every version: **+win** to each member of the winning side (alive, dead
or removed; a maniac's win to him alone), the **best move** to the red player shot on Night 1 by how
many black he named, a **penalty** for a removal by its cause, the judge's **extra points**, and from
version 4 an **auto-bonus** to everyone (the judge takes it back with extra points of minus as much).
What a tournament adds: **Ci**, the compensation for a red player shot on Night 1 in a game his side
lost, which depends on how often that happened to him over the whole tournament; round
**multipliers**; and the order of the standings.

A georgian table has three sides (docs/tournaments.md, "Georgian tournaments"; the club's rules say
who wins, not what it pays): a maniac's win pays him alone the version's win, and every other seat
lost; a red player shot on Night 1 in a game the maniac won lost too (Ci counts it); a maniac named
in a best move is not black; and a maniac's win is a special role's win in the tie-break, as the
Sheriff's and the Don's are.

Version 1 (a win weighted by the table's difficulty) and the -0.7 of versions 5 to 7 for a removal
that hands the game to the other side are not here: the engine records neither.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from engine.errors import RulesetError
from engine.ids import Cause, Result, Role, Seat, Team
from engine.queries import winning_team
from engine.ruleset import Ruleset
from engine.view import GameView

ZERO = Decimal(0)
SPECIAL_ROLES = frozenset({Role.SHERIFF, Role.DON, Role.MANIAC})
"""Roles whose wins break ties: FIIM's Sheriff and Don, and the georgian maniac, who wins alone."""
_THOUSANDTH = Decimal("0.001")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoringVersion:
    """One version of a scoring system: every number it gives, as data."""

    name: str
    source: str = ""
    """Where the numbers come from."""
    win: Decimal = Decimal(1)
    best_move_three: Decimal = ZERO
    """The best move naming three black players."""
    best_move_two: Decimal = ZERO
    best_move_red_only: bool = True
    """The site pays the best move to a red player only; one game's own protocol (rules.md#points)
    pays whoever was shot on Night 1, black included, as the rules reference says."""
    fouls_penalty: Decimal = ZERO
    """Removed by four fouls or by technical fouls (a positive number, subtracted)."""
    disqualified_penalty: Decimal = ZERO
    """Disqualified by the judge, a second oath included."""
    left_penalty: Decimal = ZERO
    """Left the table: gave up, or did not come back from a technical pause."""
    auto_bonus: Decimal = ZERO
    """Given to every player in every game; the judge removes it with extra points of ``-auto_bonus``."""
    ci_cap: Decimal = ZERO
    """Ci per game at most; zero turns Ci off. The formula is :func:`ci_per_game`."""
    ci_share: Decimal = Decimal("0.4")
    """The share of a player's games in which being shot on Night 1 counts as his fair lot."""

    def penalty_for(self, cause: Cause) -> Decimal:
        """What a departure by ``cause`` costs (zero for a departure that is not a removal)."""
        if cause in (Cause.FOULS, Cause.TECHNICAL_FOULS):
            return self.fouls_penalty
        if cause in (Cause.DISQUALIFIED, Cause.OATHS):
            return self.disqualified_penalty
        if cause is Cause.LEFT:
            return self.left_penalty
        return ZERO


_SITE = "mafiaratings, scoring system «ФИИМ» (id 19), version {}"
_V2 = ScoringVersion(
    name="fiim-2",
    source=_SITE.format(2),
    best_move_three=Decimal("0.4"),
    best_move_two=Decimal("0.25"),
    fouls_penalty=Decimal("0.5"),
    disqualified_penalty=Decimal("0.5"),
    ci_cap=Decimal("0.4"),
)
_V3 = dataclasses.replace(_V2, name="fiim-3", source=_SITE.format(3), left_penalty=Decimal("0.5"))
_V4 = dataclasses.replace(
    _V3, name="fiim-4", source=_SITE.format(4),
    best_move_three=Decimal("0.5"), best_move_two=Decimal("0.3"), auto_bonus=Decimal("0.3"),
)
_V5 = dataclasses.replace(_V4, name="fiim-5", source=_SITE.format(5))
_V6 = dataclasses.replace(
    _V5, name="fiim-6", source=_SITE.format(6), best_move_three=Decimal("0.7"), best_move_two=Decimal("0.5"),
)
_V7 = dataclasses.replace(_V6, name="fiim-7", source=_SITE.format(7), ci_cap=Decimal("0.5"))

SCORINGS: dict[str, ScoringVersion] = {v.name: v for v in (_V2, _V3, _V4, _V5, _V6, _V7)}
"""FIIM's scoring versions by name; versions 4 and 5 differ only in what the engine does not record."""
FIIM_LATEST = _V7
"""The newest FIIM version the site's source holds: the default for a tournament."""
CLUB = ScoringVersion(name="club", source="rules.md#points")
"""Classic and georgian: a win and the judge's extra points, nothing else."""


def find_scoring(name: str) -> ScoringVersion:
    """A scoring version by name (``fiim-2`` … ``fiim-7``, ``club``), case-insensitively.

    Raises:
        RulesetError: no version has that name.
    """
    key = name.strip().lower()
    if key == CLUB.name:
        return CLUB
    if key not in SCORINGS:
        raise RulesetError("scoring", f"unknown scoring version {name!r}; choose one of {', '.join(SCORINGS)}, club")
    return SCORINGS[key]


def protocol_version(ruleset: Ruleset) -> ScoringVersion:
    """The version a single game's own points follow (``Game.points``, the game's protocol).

    A ruleset with the best move counts it as FIIM version 3 does (the numbers of the federation's
    game protocol); every removal costs the ruleset's ``removal_penalty``. No auto-bonus and no Ci:
    both belong to a tournament's scoring, not to one game.
    """
    base = _V3 if ruleset.best_move else CLUB
    penalty = ruleset.removal_penalty
    return dataclasses.replace(
        base, name=f"{ruleset.name}-protocol", ci_cap=ZERO, best_move_red_only=False,
        fouls_penalty=penalty, disqualified_penalty=penalty, left_penalty=penalty,
    )


# -- one game ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatPoints:
    """What one seat earned in one game, by line, before any round multiplier and without Ci."""

    seat: Seat
    role: Role
    won: bool
    lost: bool
    """Another side won (a draw is neither won nor lost)."""
    shot_first_night: bool
    """A red player killed on Night 1: counts towards Ci."""
    win: Decimal = ZERO
    best_move: Decimal = ZERO
    penalty: Decimal = ZERO
    """Zero or negative."""
    extra: Decimal = ZERO
    """The judge's extra points, summed."""
    auto_bonus: Decimal = ZERO

    @property
    def total(self) -> Decimal:
        """The game's points for this seat."""
        return self.win + self.best_move + self.penalty + self.extra + self.auto_bonus

    @property
    def ci_eligible(self) -> bool:
        """Whether this game earns Ci: shot on Night 1 as a red player, and red lost."""
        return self.shot_first_night and self.lost


def seat_points(state: GameView, version: ScoringVersion) -> tuple[SeatPoints, ...]:
    """Every seat's points for a game, seat 1 first; all zero until the result is fixed or if abandoned."""
    seats = range(1, state.players + 1)
    outcome = state.outcome
    if outcome is None or outcome.result is Result.ABANDONED:
        return tuple(SeatPoints(seat, state.role(seat), won=False, lost=False, shot_first_night=False)
                     for seat in seats)
    winners = winning_team(outcome.result)
    shot = _shot_first_night(state)
    best = _best_move(state, version)
    extra: dict[Seat, Decimal] = {}
    for seat, value, _reason in state.extra_points:
        extra[seat] = extra.get(seat, ZERO) + Decimal(value)
    penalty: dict[Seat, Decimal] = {}
    for d in state.departures:
        penalty[d.seat] = penalty.get(d.seat, ZERO) - version.penalty_for(d.cause)
    out = []
    for seat in seats:
        team = state.role(seat).team
        won = team is winners
        out.append(SeatPoints(
            seat, state.role(seat),
            won=won,
            lost=winners is not None and not won,
            shot_first_night=seat in shot,
            win=version.win if won else ZERO,
            best_move=best.get(seat, ZERO),
            penalty=penalty.get(seat, ZERO),
            extra=extra.get(seat, ZERO),
            auto_bonus=version.auto_bonus,
        ))
    return tuple(out)


def _shot_first_night(state: GameView) -> frozenset[Seat]:
    # A departure's ``at`` is 2·night for nights (GameState.Departure): Night 1 is 2.
    return frozenset(
        d.seat for d in state.departures
        if d.cause is Cause.KILLED and d.at == 2 and state.role(d.seat).team is Team.RED
    )


def _best_move(state: GameView, version: ScoringVersion) -> dict[Seat, Decimal]:
    seat = state.best_move_seat
    if seat is None or not state.best_move:
        return {}
    if version.best_move_red_only and state.role(seat).team is not Team.RED:
        return {}
    value = {3: version.best_move_three, 2: version.best_move_two}.get(state.best_move_black, ZERO)
    return {seat: value}


# -- a tournament ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TournamentGame:
    """One finished game of a tournament: its round, who sat where, and the seats' points."""

    round: int
    players: Sequence[int]
    """``players[seat - 1]`` is the player at that seat."""
    points: Sequence[SeatPoints]


def tournament_game(
    state: GameView, version: ScoringVersion, *, round_number: int, players: Sequence[int]
) -> TournamentGame:
    """A game scored for a tournament's standings.

    Raises:
        RulesetError: ``players`` does not name one player for each seat.
    """
    if len(players) != state.players or len(set(players)) != len(players):
        raise RulesetError("players", f"{state.players} different players are needed, one per seat")
    return TournamentGame(round_number, tuple(players), seat_points(state, version))


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's line in the standings; points are after the round multipliers."""

    place: int
    """Equal lines share a place."""
    player: int
    games: int
    wins: int
    special_role_wins: int
    """Wins as the Sheriff, the Don or the maniac (a tie-break)."""
    shot_first_night: int
    total: Decimal
    win: Decimal
    best_move: Decimal
    extra: Decimal
    """The judge's extra points and the auto-bonus."""
    penalty: Decimal
    ci: Decimal

    def sort_key(self) -> tuple[Decimal, Decimal, int, int, int]:
        """The federation's order, best first when sorted descending (the site's default sorting).

        Total points, then extra points, penalties and best moves together, then wins, then wins as
        the Sheriff, the Don or the maniac, then times shot on Night 1.
        """
        return (self.total, self.extra + self.penalty + self.best_move, self.wins, self.special_role_wins,
                self.shot_first_night)


def ci_per_game(version: ScoringVersion, *, games: int, shot_first_night: int) -> Decimal:
    """Ci for each game a red player lost after being shot on Night 1.

    ``min(cap · K / round(share · N), cap)`` with K the times he was shot on Night 1 as red and N his
    games in the tournament (the site's ``counter(0,1)`` and ``counter(0,0)``), rounded to thousandths;
    a zero denominator gives the cap, as the site's evaluator does.

    >>> ci_per_game(FIIM_LATEST, games=10, shot_first_night=2)
    Decimal('0.250')
    """
    if not version.ci_cap or not shot_first_night:
        return ZERO
    expected = (version.ci_share * games).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    if not expected:
        return version.ci_cap.quantize(_THOUSANDTH)
    value = min(version.ci_cap * shot_first_night / expected, version.ci_cap)
    return value.quantize(_THOUSANDTH, rounding=ROUND_HALF_UP)


@dataclass
class _Tally:
    games: int = 0
    wins: int = 0
    special_role_wins: int = 0
    shot: int = 0
    win: Decimal = ZERO
    best_move: Decimal = ZERO
    extra: Decimal = ZERO
    penalty: Decimal = ZERO
    ci_weights: list[Decimal] = dataclasses.field(default_factory=list)


def standings(
    games: Iterable[TournamentGame],
    multipliers: Mapping[int, Decimal] | None = None,
    *,
    version: ScoringVersion = FIIM_LATEST,
) -> list[Standing]:
    """The standings over ``games``, best first; ``multipliers`` weigh a round's points (default 1).

    Ci is counted over all of ``games``: pass a group of rounds (the finals, say) on its own to
    count it there separately, as the site allows.
    """
    weights = multipliers or {}
    tallies: dict[int, _Tally] = {}
    for game in games:
        weight = Decimal(weights.get(game.round, 1))
        for points in game.points:
            _add(tallies.setdefault(game.players[points.seat - 1], _Tally()), points, weight)
    rows = [_row(player, t, version) for player, t in tallies.items()]
    rows.sort(key=lambda r: r.player)
    rows.sort(key=Standing.sort_key, reverse=True)
    return _places(rows)


def _add(t: _Tally, p: SeatPoints, weight: Decimal) -> None:
    t.games += 1
    t.wins += p.won
    t.special_role_wins += p.won and p.role in SPECIAL_ROLES
    t.shot += p.shot_first_night
    t.win += p.win * weight
    t.best_move += p.best_move * weight
    t.extra += (p.extra + p.auto_bonus) * weight
    t.penalty += p.penalty * weight
    if p.ci_eligible:
        t.ci_weights.append(weight)


def _row(player: int, t: _Tally, version: ScoringVersion) -> Standing:
    each = ci_per_game(version, games=t.games, shot_first_night=t.shot)
    ci = sum((each * w for w in t.ci_weights), ZERO)
    return Standing(
        place=0, player=player, games=t.games, wins=t.wins, special_role_wins=t.special_role_wins,
        shot_first_night=t.shot, total=t.win + t.best_move + t.extra + t.penalty + ci,
        win=t.win, best_move=t.best_move, extra=t.extra, penalty=t.penalty, ci=ci,
    )


def _places(rows: list[Standing]) -> list[Standing]:
    out: list[Standing] = []
    for i, row in enumerate(rows):
        tied = bool(out) and out[-1].sort_key() == row.sort_key()
        out.append(dataclasses.replace(row, place=out[-1].place if tied else i + 1))
    return out
