"""What happened: each server's games, a game's protocol and exports, members' statistics, the league and ratings.

Everything here reads; the results and ratings it reads are written by ``GameLogRepo.finish_game``.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Literal

from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from engine import Result, Ruleset, RulesetError, event_from_data, winning_team
from mafiabot.core import ratings
from mafiabot.core.protocol import GameHeader, Protocol, build_protocol
from mafiabot.core.records import (
    GameSummary,
    LeagueRow,
    PlayerStats,
    RatingEntry,
    RatingPoint,
    SeatInfo,
    StoredGame,
    WinCount,
    stored_ruleset,
)
from mafiabot.store import export, projection
from mafiabot.store.db import Repository, aware, game_row, row_id
from mafiabot.store.log import stored_games
from mafiabot.store.models import EventRow, GameRow, ProtocolRow, RatingRow, ResultRow, SeatRow
from mafiabot.store.protests import protests_in, protests_of


class HistoryRepo(Repository):
    """A server's past: its games, their protocols, and the numbers counted from their results."""

    async def recent_games(self, guild_id: int, limit: int = 10) -> list[GameSummary]:
        """The server's latest games, newest first, whatever their status."""
        return await self._db.call(self._recent_games, guild_id, limit)

    def _recent_games(self, guild_id: int, limit: int) -> list[GameSummary]:
        with self._db.read() as s:
            rows = s.exec(
                select(GameRow)
                .where(GameRow.guild_id == guild_id, GameRow.status != "lobby")
                .order_by(col(GameRow.created_at).desc(), col(GameRow.id).desc())
                .limit(limit)
            ).all()
            ids = [r.id for r in rows]
            counts: dict[int, int] = dict(
                s.exec(
                    select(SeatRow.game_id, func.count())
                    .where(col(SeatRow.game_id).in_(ids))
                    .group_by(col(SeatRow.game_id))
                ).all()
            )
            days: dict[int, int] = dict(
                s.exec(
                    select(EventRow.game_id, func.count())
                    .where(col(EventRow.game_id).in_(ids), EventRow.type == "DayStarted")
                    .group_by(col(EventRow.game_id))
                ).all()
            )
            return [
                GameSummary(
                    id=row_id(r),
                    guild_id=r.guild_id,
                    channel_id=r.channel_id,
                    judge_id=r.judge_id,
                    ruleset_name=r.ruleset_name,
                    status=r.status,
                    created_at=r.created_at,
                    finished_at=r.finished_at,
                    result=r.result,
                    reason=r.reason,
                    players=counts.get(row_id(r), 0),
                    days=days.get(row_id(r), 0),
                )
                for r in rows
            ]

    async def game_protocol(self, game_id: int) -> Protocol:
        """The game's full protocol. It names every role: show it to players only once the game is over.

        Raises:
            GameNotFoundError: no such game.
        """
        _game, protocol = await self._db.call(self._game_and_protocol, game_id)
        return protocol

    async def export_json(self, game_id: int) -> str:
        """The game as one JSON document: header, seats, the full log and the protocol.

        Raises:
            GameNotFoundError: no such game.
        """
        game, protocol = await self._db.call(self._game_and_protocol, game_id)
        return export.to_json(game, protocol)

    async def export_csv(self, game_id: int, *, table: Literal["seats", "log"] = "seats") -> str:
        """The game as CSV: one row per seat (the result sheet) or one row per event (the log).

        Raises:
            GameNotFoundError: no such game.
        """
        game, protocol = await self._db.call(self._game_and_protocol, game_id)
        return export.seats_csv(protocol) if table == "seats" else export.log_csv(game)

    async def game_record(self, game_id: int) -> tuple[StoredGame, Protocol]:
        """The game as stored and its protocol, for the exports the rating sites take.

        Raises:
            GameNotFoundError: no such game.
        """
        return await self._db.call(self._game_and_protocol, game_id)

    def _game_and_protocol(self, game_id: int) -> tuple[StoredGame, Protocol]:
        with self._db.read() as s:
            game = stored_games(s, [game_row(s, game_id)])[0]
            points = {
                r.seat: Decimal(r.points) for r in s.exec(select(ResultRow).where(ResultRow.game_id == game_id))
            }
            protests = tuple(protests_in(s, game_id))
        return game, dataclasses.replace(protocol_of(game, points or None), protests=protests)

    async def ended_protocols(self, guild_id: int, *, chunk: int = 200) -> dict[int, Protocol]:
        """Every finished game's protocol on the server, newest first (``ended_games``, each made whole)."""
        return {gid: ended.protocol() for gid, ended in (await self.ended_games(guild_id, chunk=chunk)).items()}

    async def ended_games(self, guild_id: int, *, chunk: int = 200) -> dict[int, projection.Ended]:
        """Every finished game on the server, newest first, as a league keeps it: one query per kind of row per chunk.

        Each is its stored text (``projection``) joined with its rows; a game that ended before the
        texts were kept, or under an older shape, is built from its log first and kept,
        ``KEEP_CHUNK`` games per transaction so the bot's own writes wait for no long one.
        """
        ids, unstored = await self._db.call(self._ended_ids, guild_id)
        for start in range(0, len(unstored), KEEP_CHUNK):
            await self._db.call(self._keep_protocols, unstored[start:start + KEEP_CHUNK])
        ended: dict[int, projection.Ended] = {}
        for start in range(0, len(ids), chunk):
            ended.update(await self._db.call(self._protocols, ids[start:start + chunk]))
        return ended

    def _ended_ids(self, guild_id: int) -> tuple[list[int], list[int]]:
        """The server's finished games, newest first, and those of them with no stored text of today's shape."""
        ids: list[int] = []
        unstored: list[int] = []
        with self._db.read() as s:
            for gid, shape in s.connection().execute(
                    sa_select(col(GameRow.id), col(ProtocolRow.shape))
                    .outerjoin(ProtocolRow, col(ProtocolRow.game_id) == col(GameRow.id))
                    .where(col(GameRow.guild_id) == guild_id, col(GameRow.status) == "finished")
                    .order_by(col(GameRow.created_at).desc(), col(GameRow.id).desc())):
                if gid is not None:
                    ids.append(gid)
                    if shape != projection.SHAPE:
                        unstored.append(gid)
        return ids, unstored

    def _keep_protocols(self, ids: list[int]) -> None:
        with self._db.read() as s:
            games = stored_games(s, s.exec(select(GameRow).where(col(GameRow.id).in_(ids))).all())
        bodies = {g.id: projection.body_of(g) for g in games}
        try:
            with self._db.write() as s, s.begin():
                projection.keep(s, bodies)
        except IntegrityError:
            pass  # another process kept the same games' texts meanwhile: built from the same logs

    def _protocols(self, ids: list[int]) -> dict[int, projection.Ended]:
        with self._db.read() as s:
            connection = s.connection()
            headers = {gid: _header(gid, *rest) for gid, *rest in connection.execute(
                sa_select(col(GameRow.id), col(GameRow.guild_id), col(GameRow.channel_id), col(GameRow.judge_id),
                          col(GameRow.ruleset_name), col(GameRow.ruleset), col(GameRow.status),
                          col(GameRow.created_at), col(GameRow.finished_at)).where(col(GameRow.id).in_(ids)))}
            seats: dict[int, dict[int, SeatInfo]] = defaultdict(dict)
            for gid, seat, user_id, name, role in connection.execute(
                    sa_select(col(SeatRow.game_id), col(SeatRow.seat), col(SeatRow.user_id), col(SeatRow.display_name),
                              col(SeatRow.role)).where(col(SeatRow.game_id).in_(ids))):
                seats[gid][seat] = SeatInfo(seat, user_id, name, role)
            points: dict[int, dict[int, Decimal]] = defaultdict(dict)
            for gid, seat, value in connection.execute(
                    sa_select(col(ResultRow.game_id), col(ResultRow.seat), col(ResultRow.points))
                    .where(col(ResultRow.game_id).in_(ids))):
                points[gid][seat] = Decimal(value)
            bodies = dict(connection.execute(
                sa_select(col(ProtocolRow.game_id), col(ProtocolRow.body))
                .where(col(ProtocolRow.game_id).in_(ids), col(ProtocolRow.shape) == projection.SHAPE)).all())
            protests = protests_of(s, ids)
            unstored = [gid for gid in ids if gid in headers and gid not in bodies]
            if unstored:  # kept since the ids were read? Built here from the log, as before the texts were kept.
                rows = s.exec(select(GameRow).where(col(GameRow.id).in_(unstored))).all()
                bodies.update({g.id: projection.body_of(g) for g in stored_games(s, rows)})
        return {gid: projection.Ended.of(projection.joined(projection.decode(bodies[gid]), headers[gid],
                                                          seats.get(gid, {}), points.get(gid) or None,
                                                          tuple(protests.get(gid, ()))), bodies[gid])
                for gid in ids if gid in headers}

    async def player_stats(self, guild_id: int, user_id: int, ruleset: str | None = None, *,
                           leave_out: Collection[int] = ()) -> PlayerStats:
        """A member's record on the server, under one ruleset or all of them.

        ``leave_out`` names games not counted (the club's pages leave out a tournament's held rounds);
        the stored ratings are the same either way.
        """
        return await self._db.call(self._player_stats, guild_id, user_id, ruleset, tuple(leave_out))

    def _player_stats(self, guild_id: int, user_id: int, ruleset: str | None,
                      leave_out: tuple[int, ...]) -> PlayerStats:
        with self._db.read() as s:
            rows, rated = _member_rows(s, guild_id, user_id, ruleset, leave_out)
        return player_stats_of(guild_id, user_id, ruleset, rows, rated)

    async def league(
        self, guild_id: int, *, since: datetime | None = None, ruleset: str | None = None, limit: int | None = None,
        leave_out: Collection[int] = (),
    ) -> list[LeagueRow]:
        """The server's league table (rules.md#league-table): by total points, then wins, then extra points.

        ``since`` keeps games finished at or after it (a period); ``ruleset`` keeps one ruleset;
        ``leave_out`` names games not counted (the club's pages leave out a tournament's held rounds).
        """
        if since is not None:
            since = aware(since, "since")
        return await self._db.call(self._league, guild_id, since, ruleset, limit, tuple(leave_out))

    def _league(self, guild_id: int, since: datetime | None, ruleset: str | None, limit: int | None,
                leave_out: tuple[int, ...]) -> list[LeagueRow]:
        with self._db.read() as s:
            query = sa_select(*_LINE).where(col(ResultRow.guild_id) == guild_id)
            if since is not None:
                query = query.where(col(ResultRow.finished_at) >= since)
            if ruleset is not None:
                query = query.where(col(ResultRow.ruleset_name) == ruleset)
            if leave_out:
                query = query.where(col(ResultRow.game_id).not_in(leave_out))
            rows = s.connection().execute(query.order_by(col(ResultRow.finished_at), col(ResultRow.game_id))).all()
        return league_table(rows, limit=limit)

    async def ratings(self, guild_id: int, ruleset: str) -> list[RatingEntry]:
        """The server's ratings under ``ruleset``, highest first."""
        return await self._db.call(self._ratings, guild_id, ruleset)

    def _ratings(self, guild_id: int, ruleset: str) -> list[RatingEntry]:
        with self._db.read() as s:
            rows = s.exec(
                select(RatingRow)
                .where(RatingRow.guild_id == guild_id, RatingRow.ruleset_name == ruleset)
                .order_by(col(RatingRow.rating).desc(), col(RatingRow.user_id))
            ).all()
            return [RatingEntry(r.user_id, r.rating, r.games) for r in rows]

    async def rating_history(self, guild_id: int, user_id: int) -> list[RatingPoint]:
        """A member's rating after each of their finished games, oldest first, under whichever ruleset it was.

        Only the current rating is stored, so the curve is replayed: every rated game of those rulesets
        on the server, in the order they finished, through the same ``ratings.updated`` that
        ``finish_game`` applied. Its last point per ruleset is therefore the stored rating (two games
        finishing in the same instant are taken in id order).
        """
        return await self._db.call(self._rating_history, guild_id, user_id)

    def _rating_history(self, guild_id: int, user_id: int) -> list[RatingPoint]:
        with self._db.read() as s:
            played = select(ResultRow.ruleset_name).where(ResultRow.guild_id == guild_id, ResultRow.user_id == user_id)
            rows = s.exec(
                select(ResultRow, GameRow.result)
                .join(GameRow, col(GameRow.id) == col(ResultRow.game_id))
                .where(ResultRow.guild_id == guild_id, col(ResultRow.ruleset_name).in_(played.distinct()))
                .order_by(col(ResultRow.finished_at), col(ResultRow.game_id), col(ResultRow.seat))
            ).all()
        return replay_ratings(rows, user_id)



class _ResultLine(typing.Protocol):
    """The columns of a result row the league and a member's record are counted from."""

    @property
    def user_id(self) -> int: ...
    @property
    def display_name(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def team(self) -> str: ...
    @property
    def won(self) -> bool: ...
    @property
    def draw(self) -> bool: ...
    @property
    def points(self) -> str: ...
    @property
    def extra_points(self) -> str: ...
    @property
    def fouls(self) -> int: ...
    @property
    def best_move_black(self) -> int | None: ...
    @property
    def removed(self) -> bool: ...


_LINE = (col(ResultRow.user_id), col(ResultRow.display_name), col(ResultRow.role), col(ResultRow.team),
         col(ResultRow.won), col(ResultRow.draw), col(ResultRow.points), col(ResultRow.extra_points),
         col(ResultRow.fouls), col(ResultRow.best_move_black), col(ResultRow.removed))
"""``_ResultLine``'s columns: read as plain rows, not objects, since a league adds up every seat of every game."""


def _member_rows(
    s: Session, guild_id: int, user_id: int, ruleset: str | None, leave_out: tuple[int, ...] = ()
) -> tuple[Sequence[_ResultLine], dict[str, float]]:
    """A member's result rows (but those of the games ``leave_out`` names) and ratings, under one ruleset or all."""
    query = sa_select(*_LINE).where(col(ResultRow.guild_id) == guild_id, col(ResultRow.user_id) == user_id)
    if leave_out:
        query = query.where(col(ResultRow.game_id).not_in(leave_out))
    rating_query = select(RatingRow).where(RatingRow.guild_id == guild_id, RatingRow.user_id == user_id)
    if ruleset is not None:
        query = query.where(col(ResultRow.ruleset_name) == ruleset)
        rating_query = rating_query.where(RatingRow.ruleset_name == ruleset)
    return s.connection().execute(query).all(), {r.ruleset_name: r.rating for r in s.exec(rating_query)}


def _win_counts(rows: Sequence[_ResultLine], key: Callable[[_ResultLine], str]) -> dict[str, WinCount]:
    """Games and wins by one column of the result rows (the role or the team), sorted by its value."""
    games: dict[str, int] = defaultdict(int)
    wins: dict[str, int] = defaultdict(int)
    for r in rows:
        value = key(r)
        games[value] += 1
        wins[value] += int(r.won)
    return {k: WinCount(games[k], wins[k]) for k in sorted(games)}


def player_stats_of(
    guild_id: int, user_id: int, ruleset: str | None, rows: Sequence[_ResultLine], rated: dict[str, float]
) -> PlayerStats:
    """Count a member's record from their result rows (abandoned games have none)."""
    games = len(rows)
    wins = _count(rows, lambda r: r.won)
    draws = _count(rows, lambda r: r.draw)
    made = [r.best_move_black for r in rows if r.best_move_black is not None]
    return PlayerStats(
        guild_id=guild_id,
        user_id=user_id,
        ruleset=ruleset,
        games=games,
        wins=wins,
        draws=draws,
        losses=games - wins - draws,
        win_rate=wins / games if games else 0.0,
        points=_total(rows, lambda r: Decimal(r.points)),
        extra_points=_total(rows, lambda r: Decimal(r.extra_points)),
        fouls=sum(r.fouls for r in rows),
        removals=_count(rows, lambda r: r.removed),
        best_moves=len(made),
        best_move_black=sum(made),
        by_role=_win_counts(rows, lambda r: r.role),
        by_team=_win_counts(rows, lambda r: r.team),
        ratings=rated,
    )


def _count(rows: Sequence[_ResultLine], which: Callable[[_ResultLine], bool]) -> int:
    return sum(1 for r in rows if which(r))


def _total(rows: Sequence[_ResultLine], points: Callable[[_ResultLine], Decimal]) -> Decimal:
    """Points added up exactly (decimal strings, never floats)."""
    return sum((points(r) for r in rows), Decimal(0))


KEEP_CHUNK = 50
"""Games built from their logs and kept per transaction when a league is first read (a few milliseconds each)."""


@lru_cache(maxsize=64)
def _rules(name: str, text: str) -> Ruleset | None:
    """A stored ruleset read once per league, not once per game (a league plays a handful)."""
    try:
        return stored_ruleset(json.loads(text))
    except RulesetError:
        return None


def _header(game_id: int, guild_id: int, channel_id: int, judge_id: int | None, ruleset_name: str,
            ruleset: dict[str, object], status: str, created_at: datetime | None,
            finished_at: datetime | None) -> GameHeader:
    """A game's header from its row's columns, as ``protocol_of`` makes it from the whole game."""
    return GameHeader(id=game_id, guild_id=guild_id, channel_id=channel_id, judge_id=judge_id,
                      ruleset_name=ruleset_name, ruleset=_rules(ruleset_name, json.dumps(ruleset, sort_keys=True)),
                      status=status, created_at=created_at, finished_at=finished_at)


def protocol_of(game: StoredGame, points: Mapping[int, Decimal] | None) -> Protocol:
    """The protocol of a stored game; a ruleset that no longer reads back leaves the header without one."""
    try:
        rules = game.rules()
    except RulesetError:
        rules = None
    header = GameHeader(
        id=game.id,
        guild_id=game.guild_id,
        channel_id=game.channel_id,
        judge_id=game.judge_id,
        ruleset_name=game.ruleset_name,
        ruleset=rules,
        status=game.status,
        created_at=game.created_at,
        finished_at=game.finished_at,
    )
    events = (event_from_data(e) for c in game.log for e in c.events)
    return build_protocol(header, game.seats, events, points)


def league_table(rows: Iterable[_ResultLine], *, limit: int | None = None) -> list[LeagueRow]:
    """Rank result rows by points, then wins, then extra points (rules.md#league-table); equal lines share a rank."""
    games: dict[int, int] = defaultdict(int)
    wins: dict[int, int] = defaultdict(int)
    points: dict[int, Decimal] = defaultdict(Decimal)
    extra: dict[int, Decimal] = defaultdict(Decimal)
    names: dict[int, str] = {}
    for r in rows:
        games[r.user_id] += 1
        wins[r.user_id] += int(r.won)
        points[r.user_id] += Decimal(r.points)
        extra[r.user_id] += Decimal(r.extra_points)
        names[r.user_id] = r.display_name  # rows come oldest first, so the latest name wins
    order = sorted(games, key=lambda u: (-points[u], -wins[u], -extra[u], u))
    table: list[LeagueRow] = []
    for position, user in enumerate(order, start=1):
        key = (points[user], wins[user], extra[user])
        previous = table[-1] if table else None
        tied = previous is not None and (previous.points, previous.wins, previous.extra_points) == key
        rank = previous.rank if tied and previous is not None else position
        table.append(
            LeagueRow(
                rank=rank,
                user_id=user,
                display_name=names[user],
                games=games[user],
                wins=wins[user],
                points=points[user],
                extra_points=extra[user],
                win_rate=wins[user] / games[user],
            )
        )
    return table[:limit] if limit is not None else table


def replay_ratings(rows: Iterable[tuple[ResultRow, str | None]], user_id: int) -> list[RatingPoint]:
    """Fold result rows (with their game's result), in the order the games finished, into one member's curve."""
    games: dict[int, list[ResultRow]] = {}
    results: dict[int, str | None] = {}
    for row, result in rows:
        games.setdefault(row.game_id, []).append(row)
        results[row.game_id] = result
    current: dict[str, dict[int, float]] = defaultdict(dict)
    curve: list[RatingPoint] = []
    for game_id, seats in games.items():
        first = seats[0]
        result = results[game_id]
        winning = winning_team(Result(result)) if result is not None else None
        after = ratings.updated(current[first.ruleset_name], {r.user_id: r.team for r in seats},
                                winning.value if winning else None)
        current[first.ruleset_name].update(after)
        if user_id in after:
            curve.append(RatingPoint(game_id, first.ruleset_name, first.finished_at, after[user_id]))
    return curve
