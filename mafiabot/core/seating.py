"""A tournament's seating schedule: who plays at which table and seat in every round.

Pure and seeded: the same players, sizes, forbidden pairs and seed give the same schedule. The
schedule is built in three steps, each with a bounded amount of work so a 50-player, 10-round,
5-table event takes seconds:

1. **Who sits out.** When the rounds have fewer seats than players, the sit-outs walk a seeded
   permutation of the players in consecutive blocks, so every player sits out the same number of
   rounds (the games differ by at most one only when the organiser allows it).
2. **Tables.** A greedy pass puts each round's players at the table where they have met the fewest
   people so far, then simulated annealing swaps two players between tables of one round. The cost
   of a pair: a steep one for each meeting beyond :func:`meetings_bound` (the fewest "most meetings"
   any schedule of the sizes can have), ``meetings²`` (with the total fixed, the smaller the sum the
   more even the meetings), then, as tie-breaks, the triples of rounds it shares (which ``meetings²``
   cannot see) and a stranger; and a prohibitive one for every meeting of a forbidden pair.
3. **Seats.** Seats within a table change nobody's meetings, so they are spread afterwards: the sum
   over players and seat numbers of ``times²``, by greedy placement and annealed swaps of two seats.

A forbidden pair that still meets after the search is an error (:class:`SeatingError`), never a
quiet schedule.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.ruleset import MAX_PLAYERS, MIN_PLAYERS
from mafiabot.core.spreadsheet import csv_text

DEFAULT_ITERATIONS = 100_000
"""Annealing steps for the tables, and as many for the seats: about a second for 50 x 10 x 5."""
FORBIDDEN_COST = 100_000
"""What one meeting of a forbidden pair costs: more than any spread of the other meetings can save."""
OVER_CAP_COST = 16
"""A pair ``k`` meetings beyond :func:`meetings_bound` costs ``OVER_CAP_COST · k²`` more: twice a step of
``meetings²`` for the first, and steeper after. Not a wall: where the bound cannot be reached, a wall
freezes the search (50 players, 10 rounds: 5 meetings with a cost of 1,000 each, 4 with this)."""
EVEN_WEIGHT = 8
"""The weight of ``meetings²`` (evenness) against the tie-breaks below, which cost a few units each."""
REPEAT_COST = 2
"""What each three rounds a pair shares cost: ``meetings²`` cannot see them (it depends only on how the
tables of two rounds overlap), so among equally even schedules, fewer repeated meetings."""
NEVER_MET_COST = 1
"""What a pair that never meets costs: among schedules equal in all the above, fewer strangers."""
_HOT, _COLD = 2.0, 0.05
"""The annealing's temperatures, first and last, in units of one ``meetings²`` (or one ``times²`` for seats)."""


class SeatingError(ValueError):
    """The schedule cannot be made as asked: a stable ``code`` plus the data that explains it.

    Like the engine's refusals, it carries no user text; the bot words ``code`` from its catalog.
    """

    def __init__(self, code: str, **data: Any) -> None:
        self.code = code
        self.data: dict[str, Any] = data
        detail = ", ".join(f"{key}={value!r}" for key, value in data.items())
        super().__init__(f"{code}({detail})" if detail else code)


@dataclass(frozen=True, slots=True)
class Schedule:
    """``rounds[r][t][s]`` is the player at table ``t + 1``, seat ``s + 1`` in round ``r + 1``."""

    players: tuple[int, ...]
    rounds: tuple[tuple[tuple[int, ...], ...], ...]
    seats: int

    def sitting_out(self, round_index: int) -> tuple[int, ...]:
        """The players who do not play in round ``round_index`` (0-based), in the players' order."""
        playing = {p for table in self.rounds[round_index] for p in table}
        return tuple(p for p in self.players if p not in playing)

    def rows(self) -> list[tuple[int, int, int, int]]:
        """``(round, table, seat, player)``, all numbered from 1, in playing order."""
        return [
            (r + 1, t + 1, s + 1, player)
            for r, tables in enumerate(self.rounds)
            for t, table in enumerate(tables)
            for s, player in enumerate(table)
        ]


@dataclass(frozen=True, slots=True)
class SeatingQuality:
    """How even a schedule is, beside what no schedule of the same sizes can beat."""

    games_min: int
    games_max: int
    meetings_min: int
    meetings_max: int
    meetings_std: float
    ideal_meetings_min: int
    """The mean meetings per pair rounded down: no schedule's fewest is above it."""
    meetings_max_bound: int
    """No schedule of these sizes keeps every pair below this many meetings (:func:`meetings_bound`)."""
    meetings_counts: tuple[int, ...]
    """``meetings_counts[m]``: how many pairs meet ``m`` times."""
    pairs_never_met: int
    seat_repeat_max: int
    """The most times any player sits in one seat number."""
    distinct_seats_min: int
    """The fewest different seat numbers any player gets."""
    distinct_seats_mean: float
    forbidden_meetings: int


def make_schedule(
    players: Sequence[int],
    *,
    rounds: int,
    tables: int,
    seats: int = 10,
    forbidden: Iterable[tuple[int, int]] = (),
    seed: int = 0,
    iterations: int = DEFAULT_ITERATIONS,
    allow_uneven: bool = False,
) -> Schedule:
    """The optimised schedule for ``players`` over ``rounds`` rounds of ``tables`` tables of ``seats``.

    Raises:
        SeatingError: the sizes are impossible (``seating.rounds``, ``seating.tables``,
            ``seating.seats``, ``seating.too_few_players``, ``seating.duplicate_player``,
            ``seating.uneven_games``, ``seating.unknown_player``, ``seating.self_pair``), or a
            forbidden pair could not be kept apart (``seating.forbidden_unavoidable``).
    """
    forbid = _check(players, rounds, tables, seats, forbidden, allow_uneven=allow_uneven)
    rng = random.Random(seed)
    n = len(players)
    playing = _playing(n, rounds, tables * seats, rng)
    search = _TableSearch(n, rounds, tables, seats, forbid, rng)
    layout = [search.greedy(round_players) for round_players in playing]
    search.anneal(layout, iterations)
    clashes = search.clashes()
    if clashes:
        named = sorted({tuple(sorted((players[a], players[b]))) for a, b in clashes})
        raise SeatingError("seating.forbidden_unavoidable", pairs=named)
    _spread_seats(layout, n, seats, rng, iterations)
    return _schedule(players, layout, seats)


def random_schedule(players: Sequence[int], *, rounds: int, tables: int, seats: int = 10, seed: int = 0) -> Schedule:
    """A baseline: the same sit-outs rule, then a seeded shuffle of each round's players into seats."""
    _check(players, rounds, tables, seats, (), allow_uneven=True)
    rng = random.Random(seed)
    layout: list[list[list[int]]] = []
    for round_players in _playing(len(players), rounds, tables * seats, rng):
        shuffled = list(round_players)
        rng.shuffle(shuffled)
        layout.append([shuffled[t * seats:(t + 1) * seats] for t in range(tables)])
    return _schedule(players, layout, seats)


def quality(schedule: Schedule, forbidden: Iterable[tuple[int, int]] = ()) -> SeatingQuality:
    """The quality figures of ``schedule``: games, pair meetings, seat spread, forbidden meetings."""
    index = {p: i for i, p in enumerate(schedule.players)}
    games, meet, seat_counts = _tally(schedule, index)
    n = len(schedule.players)
    pairs = [meet[i][j] for i in range(n) for j in range(i + 1, n)]
    mean = sum(pairs) / len(pairs)
    distinct = [sum(1 for c in counts if c) for counts in seat_counts]
    return SeatingQuality(
        games_min=min(games),
        games_max=max(games),
        meetings_min=min(pairs),
        meetings_max=max(pairs),
        meetings_std=math.sqrt(sum((m - mean) ** 2 for m in pairs) / len(pairs)),
        ideal_meetings_min=math.floor(mean),
        meetings_max_bound=meetings_bound(n, rounds=len(schedule.rounds), tables=len(schedule.rounds[0]),
                                          seats=schedule.seats),
        meetings_counts=tuple(pairs.count(m) for m in range(max(pairs) + 1)),
        pairs_never_met=pairs.count(0),
        seat_repeat_max=max(max(counts) for counts in seat_counts),
        distinct_seats_min=min(distinct),
        distinct_seats_mean=sum(distinct) / n,
        forbidden_meetings=sum(meet[index[a]][index[b]] for a, b in _pairs(forbidden)),
    )


def meetings_bound(players: int, *, rounds: int, tables: int, seats: int) -> int:
    """A lower bound on the most meetings of a pair, over every schedule of these sizes.

    The larger of two arguments. **Average:** the meetings are ``rounds · tables · C(seats, 2)`` over
    ``C(players, 2)`` pairs, so some pair meets at least the mean, rounded up. **Chain:** the players
    of one table of a round, minus the most who can sit out the next round, spread over ``tables``
    tables there, so at least ``⌈(g - out) / tables⌉`` of them sit together again; while two or more
    do, each round adds a meeting to a pair of them.

    >>> meetings_bound(40, rounds=3, tables=4, seats=10)  # some pair meets twice; none need meet thrice
    2
    """
    pairs = players * (players - 1) // 2
    average = -(-rounds * tables * (seats * (seats - 1) // 2) // pairs) if pairs else 0
    out = players - tables * seats
    chain, group = 1, seats
    for _ in range(rounds - 1):
        group = -(-(group - out) // tables)
        if group < 2:
            break
        chain += 1
    return max(average, chain)


def _tally(schedule: Schedule, index: dict[int, int]) -> tuple[list[int], list[list[int]], list[list[int]]]:
    """Games per player, meetings per pair and seat numbers per player, by player index."""
    n = len(index)
    games = [0] * n
    meet = [[0] * n for _ in range(n)]
    seat_counts = [[0] * schedule.seats for _ in range(n)]
    for tables in schedule.rounds:
        for table in tables:
            members = [index[p] for p in table]
            for s, i in enumerate(members):
                games[i] += 1
                seat_counts[i][s] += 1
                for j in members[s + 1:]:
                    meet[i][j] += 1
                    meet[j][i] += 1
    return games, meet, seat_counts


def to_csv(schedule: Schedule) -> str:
    """The schedule as CSV text with a header: ``round,table,seat,player``."""
    return csv_text(("round", "table", "seat", "player"), schedule.rows())


# -- checks and sit-outs ---------------------------------------------------------------------------------------


def _pairs(forbidden: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    return sorted({(min(a, b), max(a, b)) for a, b in forbidden})


def _check(
    players: Sequence[int],
    rounds: int,
    tables: int,
    seats: int,
    forbidden: Iterable[tuple[int, int]],
    *,
    allow_uneven: bool,
) -> list[tuple[int, int]]:
    """The forbidden pairs as player indices, once each; raises on anything impossible."""
    if rounds < 1:
        raise SeatingError("seating.rounds", rounds=rounds)
    if tables < 1:
        raise SeatingError("seating.tables", tables=tables)
    if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise SeatingError("seating.seats", seats=seats, low=MIN_PLAYERS, high=MAX_PLAYERS)
    if len(set(players)) != len(players):
        raise SeatingError("seating.duplicate_player", players=len(players), distinct=len(set(players)))
    if len(players) < tables * seats:
        raise SeatingError("seating.too_few_players", players=len(players), needed=tables * seats)
    total = rounds * tables * seats
    if total % len(players) and not allow_uneven:
        raise SeatingError("seating.uneven_games", players=len(players), seats_in_all_rounds=total)
    index = {p: i for i, p in enumerate(players)}
    pairs: list[tuple[int, int]] = []
    for a, b in _pairs(forbidden):
        if a == b:
            raise SeatingError("seating.self_pair", player=a)
        for p in (a, b):
            if p not in index:
                raise SeatingError("seating.unknown_player", player=p)
        pairs.append((index[a], index[b]))
    return pairs


def _playing(n: int, rounds: int, places: int, rng: random.Random) -> list[list[int]]:
    """Each round's players (indices): the sit-outs take consecutive blocks of one seeded permutation."""
    order = list(range(n))
    rng.shuffle(order)
    out = n - places
    result = []
    for r in range(rounds):
        resting = {order[(r * out + k) % n] for k in range(out)}
        result.append([i for i in range(n) if i not in resting])
    return result


def _schedule(players: Sequence[int], layout: list[list[list[int]]], seats: int) -> Schedule:
    return Schedule(
        players=tuple(players),
        rounds=tuple(tuple(tuple(players[i] for i in table) for table in tables) for tables in layout),
        seats=seats,
    )


def _accept(delta: float, temperature: float, rng: random.Random) -> bool:
    return delta <= 0 or rng.random() < math.exp(-delta / temperature)


def _temperature(step: int, steps: int, scale: float = 1.0) -> float:
    return scale * _HOT * math.pow(_COLD / _HOT, step / max(1, steps - 1))


def _pair_cost(meetings: int, cap: int) -> int:
    """What a pair costs after ``meetings``: convex, so spreading the meetings always pays.

    Past ``cap`` (the least "most meetings" any schedule can have) each meeting costs
    ``OVER_CAP_COST`` more; below it, ``meetings²`` first, then the triples of shared rounds
    (``C(m, 3)``), then a stranger.
    """
    triples = meetings * (meetings - 1) * (meetings - 2) // 6
    over = max(0, meetings - cap)
    return (EVEN_WEIGHT * meetings * meetings + REPEAT_COST * triples + OVER_CAP_COST * over * over
            + (NEVER_MET_COST if meetings == 0 else 0))


# -- tables ---------------------------------------------------------------------------------------------------


class _TableSearch:
    """Meetings so far and the moves that change them; ``layout[r][t]`` lists player indices."""

    def __init__(
        self, n: int, rounds: int, tables: int, seats: int, forbid: list[tuple[int, int]], rng: random.Random
    ) -> None:
        self.n, self.tables, self.seats, self.rng = n, tables, seats, rng
        self.meet = [[0] * n for _ in range(n)]
        self.penalty = [[0] * n for _ in range(n)]
        for a, b in forbid:
            self.penalty[a][b] = self.penalty[b][a] = FORBIDDEN_COST
        self.forbid = forbid
        # up[m] / down[m]: what one meeting more / less costs a pair that has met m times.
        cap = meetings_bound(n, rounds=rounds, tables=tables, seats=seats)
        cost = [_pair_cost(m, cap) for m in range(rounds + 2)]
        self.up = [cost[m + 1] - cost[m] for m in range(rounds + 1)]
        self.down = [0] + [cost[m - 1] - cost[m] for m in range(1, rounds + 1)]

    def _join_cost(self, player: int, others: Iterable[int]) -> int:
        """What adding ``player`` to a table of ``others`` adds to the cost, forbidden pairs included."""
        meet, penalty, up = self.meet[player], self.penalty[player], self.up
        return sum(up[meet[x]] + penalty[x] for x in others)

    def _leave_cost(self, player: int, others: Iterable[int]) -> int:
        meet, penalty, down = self.meet[player], self.penalty[player], self.down
        return sum(down[meet[x]] - penalty[x] for x in others)

    def _add(self, table: Sequence[int], sign: int) -> None:
        meet = self.meet
        for k, i in enumerate(table):
            for j in table[k + 1:]:
                meet[i][j] += sign
                meet[j][i] += sign

    def greedy(self, round_players: Sequence[int]) -> list[list[int]]:
        """One round: each player, in a seeded order, joins the open table that costs least."""
        order = list(round_players)
        self.rng.shuffle(order)
        layout: list[list[int]] = [[] for _ in range(self.tables)]
        for player in order:
            candidates = [t for t in range(self.tables) if len(layout[t]) < self.seats]
            self.rng.shuffle(candidates)
            best = min(candidates, key=lambda t: self._join_cost(player, layout[t]))
            layout[best].append(player)
        for table in layout:
            self._add(table, 1)
        return layout

    def anneal(self, layout: list[list[list[int]]], steps: int) -> None:
        """Swap two players between two tables of a random round, by simulated annealing."""
        if self.tables < 2:
            return
        rng, seats = self.rng, self.seats
        for step in range(steps):
            tables = layout[rng.randrange(len(layout))]
            ta, tb = rng.sample(range(self.tables), 2)
            ia, ib = rng.randrange(seats), rng.randrange(seats)
            table_a, table_b = tables[ta], tables[tb]
            a, b = table_a[ia], table_b[ib]
            rest_a = [x for x in table_a if x != a]
            rest_b = [y for y in table_b if y != b]
            delta = (
                self._join_cost(b, rest_a) + self._leave_cost(a, rest_a)
                + self._join_cost(a, rest_b) + self._leave_cost(b, rest_b)
            )
            if _accept(delta, _temperature(step, steps, EVEN_WEIGHT), rng):
                self._move(a, b, rest_a, rest_b)
                table_a[ia], table_b[ib] = b, a

    def _move(self, a: int, b: int, rest_a: Sequence[int], rest_b: Sequence[int]) -> None:
        meet = self.meet
        for x in rest_a:
            meet[a][x] -= 1
            meet[x][a] -= 1
            meet[b][x] += 1
            meet[x][b] += 1
        for y in rest_b:
            meet[b][y] -= 1
            meet[y][b] -= 1
            meet[a][y] += 1
            meet[y][a] += 1

    def clashes(self) -> list[tuple[int, int]]:
        """The forbidden pairs (indices) that still share a table somewhere."""
        return [(a, b) for a, b in self.forbid if self.meet[a][b]]


# -- seats ----------------------------------------------------------------------------------------------------


def _spread_seats(layout: list[list[list[int]]], n: int, seats: int, rng: random.Random, steps: int) -> None:
    """Reorder every table so each player's seat numbers repeat as little as possible (in place)."""
    counts = [[0] * seats for _ in range(n)]
    for tables in layout:
        for t, table in enumerate(tables):
            tables[t] = _greedy_seats(table, counts, rng)
            for s, player in enumerate(tables[t]):
                counts[player][s] += 1
    flat = [table for tables in layout for table in tables]
    for step in range(steps):
        table = flat[rng.randrange(len(flat))]
        i, j = rng.sample(range(seats), 2)
        p, q = table[i], table[j]
        cp, cq = counts[p], counts[q]
        # p moves from seat i to j and q from j to i: (c+1)² - c² for the new seat, c² - (c-1)² off the old.
        delta = (2 * cp[j] + 1) - (2 * cp[i] - 1) + (2 * cq[i] + 1) - (2 * cq[j] - 1)
        if _accept(delta, _temperature(step, steps), rng):
            cp[i] -= 1
            cp[j] += 1
            cq[j] -= 1
            cq[i] += 1
            table[i], table[j] = q, p


def _greedy_seats(table: Sequence[int], counts: list[list[int]], rng: random.Random) -> list[int]:
    order = list(table)
    rng.shuffle(order)
    free = list(range(len(table)))
    placed = [0] * len(table)
    for player in order:
        seat = min(free, key=lambda s: counts[player][s])
        free.remove(seat)
        placed[seat] = player
    return placed
