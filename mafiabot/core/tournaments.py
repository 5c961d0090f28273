"""A tournament's life, without Discord or SQL: what may happen next, and what the standings are.

registration → seated (the schedule made from the stored seed, so it can be made again) → round k
``playing`` (its tables bound to channels, each table's game linked when its judge starts it) →
``seated`` again when every game of the round has ended → … → ``finished`` after the last round.
A table's game is an ordinary game; the standings are the scoring version's over the games as the
store replays them. Refusals carry a stable ``code`` and no user text, as the engine's do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from engine import Game, Result, RulesetError, ScoringVersion, Standing, command_from_data, find_scoring, standings
from engine.errors import RefusalError
from engine.ruleset import Ruleset
from engine.scoring import FIIM_LATEST, TournamentGame, tournament_game
from mafiabot.core.numbers import machine_decimal
from mafiabot.core.records import RoundTable, ScheduledSeat, StoredGame, StoredTournament
from mafiabot.core.seating import Schedule, SeatingError, make_schedule
from mafiabot.core.spreadsheet import csv_text

REGISTRATION = "registration"
SEATED = "seated"
PLAYING = "playing"
FINISHED = "finished"

TABLE_SIZES = (10, 12)
"""Seats at a tournament table: sport mafia's ten (classic, fiim), the georgian club's twelve."""
MAX_ROUNDS = 30
MAX_TABLES = 5
"""Five tables, ten channels and five judges: what one ``/mafia tournament round`` can name in its options."""
MAX_NAME = 100
DEFAULT_SCORING = FIIM_LATEST.name


class TournamentError(RefusalError):
    """A step the tournament cannot take now: a stable ``code`` plus the data that explains it.

    A refusal like the engine's: the bot words it from the catalog's ``error.<code>``.
    """

    def __init__(self, code: str, **data: Any) -> None:
        self.code = code
        self.data: dict[str, Any] = data
        detail = ", ".join(f"{key}={value!r}" for key, value in data.items())
        super().__init__(f"{code}({detail})" if detail else code)


def check_new(*, name: str, rounds: int, tables: int, scoring: str | None, ruleset: Ruleset) -> ScoringVersion:
    """The scoring version of a tournament about to be made, once its sizes are sound.

    Raises:
        TournamentError: ``tournament.name``, ``tournament.rounds``, ``tournament.tables``,
            ``tournament.scoring`` (unknown version), ``tournament.players`` (the ruleset's table is not
            one of ``TABLE_SIZES``).
    """
    if not name.strip() or len(name) > MAX_NAME:
        raise TournamentError("tournament.name", limit=MAX_NAME)
    if not 1 <= rounds <= MAX_ROUNDS:
        raise TournamentError("tournament.rounds", limit=MAX_ROUNDS)
    if not 1 <= tables <= MAX_TABLES:
        raise TournamentError("tournament.tables", limit=MAX_TABLES)
    if ruleset.default_players not in TABLE_SIZES:
        raise TournamentError("tournament.players", seats="/".join(map(str, TABLE_SIZES)))
    try:
        return find_scoring(scoring or DEFAULT_SCORING)
    except RulesetError:
        raise TournamentError("tournament.scoring", name=scoring) from None


MAX_FINALS_WEIGHT = Decimal(5)
"""The most a final round may count: more and one final outweighs a whole qualifying series."""


def check_finals(*, finals: int | None, weight: str | None, rounds: int) -> tuple[int, Decimal]:
    """How many last rounds are finals and their multiplier, ``weight`` read exactly as a decimal.

    ``1,5`` reads as ``1.5`` (a comma is how ru and ka write it); at most two decimals, from 1 to
    ``MAX_FINALS_WEIGHT``. A weight without finals, or finals without a weight, is plain: weight 1.

    Raises:
        TournamentError: ``tournament.finals`` (not from 0 to ``rounds``), ``tournament.finals_weight``.
    """
    count = finals or 0
    if not 0 <= count <= rounds:
        raise TournamentError("tournament.finals", rounds=rounds)
    if weight is None:
        return count, Decimal(1)
    try:
        value = Decimal(weight.strip().replace(",", "."))
    except InvalidOperation:
        raise TournamentError("tournament.finals_weight", weight=weight, limit=MAX_FINALS_WEIGHT) from None
    exponent = value.as_tuple().exponent
    if not value.is_finite() or not isinstance(exponent, int) or exponent < -2 \
            or not 1 <= value <= MAX_FINALS_WEIGHT:
        raise TournamentError("tournament.finals_weight", weight=weight, limit=MAX_FINALS_WEIGHT)
    return count, value.normalize() if count else Decimal(1)


def multipliers(t: StoredTournament) -> dict[int, Decimal]:
    """Each final round's multiplier; the other rounds count once."""
    return dict.fromkeys(range(t.rounds - t.finals + 1, t.rounds + 1), t.finals_weight) if t.finals else {}


def scoring_of(t: StoredTournament) -> ScoringVersion:
    """The tournament's scoring version."""
    return find_scoring(t.scoring)


def table_size(t: StoredTournament) -> int:
    """Seats at each of the tournament's tables: its ruleset's own table (10, or 12 for georgian)."""
    return t.rules().default_players


def check_registration(t: StoredTournament) -> None:
    """Raises ``TournamentError("tournament.closed")`` once registration is over."""
    if t.status != REGISTRATION:
        raise TournamentError("tournament.closed")


def check_organiser(t: StoredTournament, user_id: int, *, admin: bool) -> None:
    """Only the organiser, or a server admin, runs the tournament (``tournament.not_organiser``)."""
    if user_id != t.organiser_id and not admin:
        raise TournamentError("tournament.not_organiser")


def make_seating(t: StoredTournament) -> Schedule:
    """The tournament's schedule from its players, forbidden pairs and stored seed.

    The same tournament always gives the same schedule, so a stored one can be checked against it.

    Raises:
        TournamentError: ``tournament.closed`` when registration is already over, or the schedule's
            own codes (``seating.too_few_players``, ``seating.uneven_games``,
            ``seating.forbidden_unavoidable``).
    """
    check_registration(t)
    try:
        return make_schedule([p.user_id for p in t.players], rounds=t.rounds, tables=t.tables, seats=table_size(t),
                             forbidden=t.forbidden, seed=t.seed)
    except SeatingError as exc:
        raise TournamentError(exc.code, **exc.data) from None


def seats_of(schedule: Schedule) -> list[ScheduledSeat]:
    """A schedule as the store keeps it."""
    return [ScheduledSeat(r, table, seat, player) for r, table, seat, player in schedule.rows()]


def stored_schedule(t: StoredTournament) -> Schedule:
    """The schedule the store keeps, as a ``Schedule`` again (for its quality and its CSV)."""
    rounds = tuple(
        tuple(table_seats(t, r, table) for table in range(1, t.tables + 1)) for r in range(1, t.rounds + 1)
    )
    return Schedule(players=tuple(p.user_id for p in t.players), rounds=rounds, seats=table_size(t))


def table_seats(t: StoredTournament, round_number: int, table: int) -> tuple[int, ...]:
    """The players of one table of one round, by seat (``[0]`` sits at seat 1)."""
    places = sorted((p.seat, p.user_id) for p in t.schedule if (p.round, p.table) == (round_number, table))
    return tuple(user for _, user in places)


def next_round(t: StoredTournament) -> int:
    """The round that may open now.

    Raises:
        TournamentError: ``tournament.not_seated`` (registration still open), ``tournament.round_open``
            (the current round has games still going), ``tournament.finished``.
    """
    if t.status == REGISTRATION:
        raise TournamentError("tournament.not_seated")
    if t.status == PLAYING:
        raise TournamentError("tournament.round_open", round=t.current_round)
    if t.status == FINISHED or t.current_round >= t.rounds:
        raise TournamentError("tournament.finished")
    return t.current_round + 1


def round_tables(
    t: StoredTournament, round_number: int, channels: Sequence[tuple[int, int]], judges: Sequence[int | None] = (),
) -> list[RoundTable]:
    """The tables of a round bound to ``channels`` (text, voice), one pair per table, in table order.

    Raises:
        TournamentError: ``tournament.channels`` (not one pair per table), ``tournament.channel_twice``.
    """
    if len(channels) != t.tables:
        raise TournamentError("tournament.channels", tables=t.tables, given=len(channels))
    texts = [text for text, _ in channels]
    voices = [voice for _, voice in channels]
    if len(set(texts)) != len(texts) or len(set(voices)) != len(voices):
        raise TournamentError("tournament.channel_twice")
    judged = list(judges) + [None] * (t.tables - len(judges))
    return [RoundTable(round_number, i + 1, text, voice, judged[i]) for i, (text, voice) in enumerate(channels)]


def check_remove_channels(t: StoredTournament) -> None:
    """The channels the bot made may go while no round plays in them; a later round makes them again.

    Raises:
        TournamentError: ``tournament.round_open`` (a round is under way in them),
            ``tournament.no_channels_made`` (the bot made none, or they are already removed).
    """
    if t.status == PLAYING:
        raise TournamentError("tournament.round_open", round=t.current_round)
    if not t.made_channels:
        raise TournamentError("tournament.no_channels_made")


def check_seat(t: StoredTournament, table: RoundTable, user_id: int) -> int:
    """The seat ``user_id`` has at ``table`` in the schedule.

    Raises:
        TournamentError: ``tournament.not_at_table`` when the schedule puts them elsewhere or nowhere.
    """
    seats = table_seats(t, table.round, table.table)
    if user_id not in seats:
        raise TournamentError("tournament.not_at_table", table=table.table, round=table.round)
    return seats.index(user_id) + 1


def current_tables(t: StoredTournament) -> list[RoundTable]:
    """The tables of the round opened last."""
    return [rt for rt in t.round_tables if rt.round == t.current_round]


def round_complete(t: StoredTournament, ended: Iterable[int]) -> bool:
    """Whether every table of the open round has a game and every one of those games has ended."""
    done = set(ended)
    tables = current_tables(t)
    return t.status == PLAYING and bool(tables) and all(rt.game_id in done for rt in tables)


def final_state(game: StoredGame) -> Game:
    """A stored game replayed from its log."""
    return Game.replay(game.rules(), [command_from_data(c.command) for c in game.log])


def tournament_games(t: StoredTournament, games: Mapping[int, StoredGame]) -> list[TournamentGame]:
    """The tournament's ended games, scored by its version; games not given, or not ended, count nothing.

    The players are the game's own seats: the lobby took them from the schedule, and the game is
    what was played.
    """
    version = scoring_of(t)
    scored = []
    for rt in t.round_tables:
        stored = games.get(rt.game_id) if rt.game_id is not None else None
        if stored is None:
            continue
        game = final_state(stored)
        outcome = game.state.outcome
        if outcome is None or outcome.result is Result.ABANDONED:
            continue
        players = [s.user_id for s in sorted(stored.seats, key=lambda s: s.seat)]
        scored.append(tournament_game(game.state, version, round_number=rt.round, players=players))
    return scored


def standings_of(t: StoredTournament, games: Mapping[int, StoredGame]) -> list[Standing]:
    """The standings over the tournament's ended games, best first.

    Every registered player who has a seat in the schedule has a line, with nothing yet if he has
    not played: an organiser looks for names, not only scores.
    """
    version = scoring_of(t)
    rows = standings(tournament_games(t, games), multipliers(t), version=version)
    seen = {r.player for r in rows}
    scheduled = {p.user_id for p in t.schedule}
    missing = [p.user_id for p in t.players if p.user_id in scheduled and p.user_id not in seen]
    return rows + [_nothing(player, place=len(rows) + 1) for player in missing]


def _nothing(player: int, *, place: int) -> Standing:
    nil = Decimal(0)
    return Standing(place=place, player=player, games=0, wins=0, special_role_wins=0, shot_first_night=0,
                    total=nil, win=nil, best_move=nil, extra=nil, penalty=nil, ci=nil)


STANDINGS_FIELDS = ("place", "player", "name", "games", "wins", "total", "win", "best_move", "extra", "penalty",
                    "ci", "special_role_wins", "shot_first_night")
"""The columns of the exports, named as a rating site's import reads them."""


MACHINE_WEIGHT_PLACES = 2
"""A final's weight in the exports: two decimals, as many as it may have (``check_finals``)."""


def standing_records(t: StoredTournament, rows: Iterable[Standing]) -> list[dict[str, Any]]:
    """The standings as plain records, points in the exports' one format (``machine_decimal``)."""
    names = {p.user_id: p.name for p in t.players}
    return [
        {"place": r.place, "player": str(r.player), "name": names.get(r.player, ""), "games": r.games,
         "wins": r.wins, "total": machine_decimal(r.total), "win": machine_decimal(r.win),
         "best_move": machine_decimal(r.best_move), "extra": machine_decimal(r.extra),
         "penalty": machine_decimal(r.penalty), "ci": machine_decimal(r.ci),
         "special_role_wins": r.special_role_wins, "shot_first_night": r.shot_first_night}
        for r in rows
    ]


def standings_csv(t: StoredTournament, rows: Iterable[Standing]) -> str:
    """The standings as CSV, one line per player."""
    records = standing_records(t, rows)
    return csv_text(STANDINGS_FIELDS, [[record[name] for name in STANDINGS_FIELDS] for record in records])


def standings_json(t: StoredTournament, rows: Iterable[Standing]) -> str:
    """The tournament and its standings as JSON: what it was, how it was scored, and every line."""
    data = {
        "tournament": {"id": t.id, "name": t.name, "ruleset": t.ruleset_name, "scoring": t.scoring,
                       "rounds": t.rounds, "tables": t.tables, "seed": t.seed, "status": t.status,
                       "finals": t.finals,
                       "finals_weight": machine_decimal(t.finals_weight, MACHINE_WEIGHT_PLACES)},
        "standings": standing_records(t, rows),
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"
