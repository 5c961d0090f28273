"""The game log: games, their seats, the append-only command/event log, timers and the result.

This is the store's side of ``mafiabot.core.ports.GameLog``. Another process writing the same
database is kept out of a game's log by the database itself: see ``GameLogRepo.append``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import CursorResult, Engine, insert, update
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from engine import Result, Ruleset, winning_team
from mafiabot.core import ratings
from mafiabot.core.errors import ConcurrencyError, GameClosedError, GameNotFoundError, StoreError
from mafiabot.core.records import JSON, GameFinal, JSONObject, SeatInfo, StoredCommand, StoredGame
from mafiabot.store import projection
from mafiabot.store.db import Database, GuildFilter, Repository, aware, game_row, now, row_id
from mafiabot.store.leases import check_fence, check_game_fence
from mafiabot.store.models import CommandRow, EventRow, GameRow, MuteLedgerRow, RatingRow, ResultRow, SeatRow

if TYPE_CHECKING:
    from mafiabot.core.leases import Fences
    from mafiabot.core.ports import GameLog

log = logging.getLogger(__name__)

FINISH_ATTEMPTS = 3
"""How often ``finish_game`` retries when another process created the same rating row first."""

SeatLike = SeatInfo | tuple[int, int, str, str | None]
"""A seat as ``SeatInfo`` or as the plain tuple it is."""


class GameLogRepo(Repository):
    """Games and their logs: what a table writes while it plays, and what a restart reads back."""

    async def create_game(
        self,
        *,
        guild_id: int,
        channel_id: int,
        ruleset: Ruleset,
        voice_channel_id: int | None = None,
        judge_id: int | None = None,
        language: str = "en",
        created_at: datetime | None = None,
        discord: Mapping[str, JSON] | None = None,
    ) -> int:
        """Record a new open game and return its id; its log starts empty (the first ``seq`` is 1)."""
        row = new_game_row(
            guild_id=guild_id, channel_id=channel_id, voice_channel_id=voice_channel_id, judge_id=judge_id,
            ruleset=ruleset, language=language, status="open", created_at=aware(created_at or now(), "created_at"),
            discord=discord,
        )
        return await self._db.call(insert_game, self._db, row)

    async def seat_players(
        self, game_id: int, seats: Sequence[SeatLike], *,
        muting_in: int | None = None, muting: Sequence[int] | None = None,
    ) -> None:
        """Set who sits where (and, once dealt, their roles), replacing any earlier seating.

        With ``muting_in`` (a guild id) the seated players also go on the mute ledger, in the same
        transaction, ahead of the game's start mutes: all of them, or only the ``muting`` ones
        (a player someone else has muted already is not the bot's to unmute).

        Raises:
            GameNotFoundError: no such game.
        """
        rows = [SeatInfo(*s) for s in seats]
        await self._db.call(
            self._seat_players, game_id, rows, muting_in, None if muting is None else set(muting), self._db.fences()
        )

    def _seat_players(
        self, game_id: int, seats: list[SeatInfo], muting_in: int | None, muting: set[int] | None,
        fences: Fences | None,
    ) -> None:
        with self._db.write() as s, s.begin():
            check_fence(s, fences, game_row(s, game_id).guild_id)
            for old in s.exec(select(SeatRow).where(SeatRow.game_id == game_id)):
                s.delete(old)
            s.flush()
            s.add_all(
                SeatRow(game_id=game_id, seat=x.seat, user_id=x.user_id, display_name=x.display_name, role=x.role)
                for x in seats
            )
            if muting_in is None:
                return
            for x in seats:
                if muting is None or x.user_id in muting:
                    s.merge(MuteLedgerRow(guild_id=muting_in, user_id=x.user_id, game_id=game_id, muted_at=now()))

    async def append(
        self,
        game_id: int,
        seq: int,
        command: Mapping[str, JSON],
        events: Sequence[Mapping[str, JSON]],
        *,
        actor_id: int | None,
        at: datetime,
    ) -> None:
        """Write one accepted command and its events, durably, in one transaction.

        ``seq`` must be exactly one past the game's last position. The check and the write are one
        conditional update of the game row plus the (game, seq) primary key of the log, so two
        writers, in this process or another, can never both take a position: the second gets
        ``ConcurrencyError`` and nothing of it is written. A finished game still takes appends: the
        final words come after the result is fixed. When processes share the shards, the same
        transaction checks that the game's shard is still leased to this process (``check_fence``).

        Raises:
            ConcurrencyError: ``seq`` is taken, or is not the next position.
            FencedError: another process holds the game's shard now; nothing was written.
            GameNotFoundError: no such game.
            ValueError: ``at`` is naive, or a command or event has no ``type``.
        """
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise ValueError(f"seq must be a positive integer, not {seq!r}")
        for item in (command, *events):
            if not isinstance(item.get("type"), str):
                raise ValueError(f"every command and event needs its type: {item!r}")
        rows = [dict(e) for e in events]
        fences = self._db.fences()
        await self._db.call(self._append, game_id, seq, dict(command), rows, actor_id, aware(at, "at"), fences)

    def _append(
        self, game_id: int, seq: int, command: JSONObject, events: list[JSONObject], actor_id: int | None,
        at: datetime, fences: Fences | None,
    ) -> None:
        with self._db.write() as s, s.begin():
            check_game_fence(s, fences, game_id)
            connection = s.connection()
            moved: CursorResult[Any] = connection.execute(
                update(GameRow).where(col(GameRow.id) == game_id, col(GameRow.last_seq) == seq - 1).values(last_seq=seq)
            )
            if moved.rowcount != 1:
                last = s.exec(select(GameRow.last_seq).where(GameRow.id == game_id)).first()
                if last is None:
                    raise GameNotFoundError(game_id)
                raise ConcurrencyError(game_id, seq, last)
            try:
                connection.execute(
                    insert(CommandRow),
                    [{"game_id": game_id, "seq": seq, "command": command, "actor_id": actor_id, "at": at}],
                )
                if events:
                    connection.execute(
                        insert(EventRow),
                        [
                            {"game_id": game_id, "seq": seq, "position": i, "type": e["type"], "event": e}
                            for i, e in enumerate(events)
                        ],
                    )
            except IntegrityError as exc:
                # Only reachable if something bypassed last_seq; the primary key still refuses it.
                raise ConcurrencyError(game_id, seq, None) from exc

    async def load_log(self, game_id: int) -> list[StoredCommand]:
        """The game's commands with their events, in order.

        Raises:
            GameNotFoundError: no such game.
        """
        return await self._db.call(self._load_log, game_id)

    def _load_log(self, game_id: int) -> list[StoredCommand]:
        with self._db.read() as s:
            game_row(s, game_id)
            return logs_of(s, [game_id])[game_id]

    async def get_game(self, game_id: int) -> StoredGame:
        """One game with its seats and log.

        Raises:
            GameNotFoundError: no such game.
        """
        return await self._db.call(self._get_game, game_id)

    async def get_games(self, game_ids: Sequence[int]) -> list[StoredGame]:
        """These games with their seats and logs, in one query per kind of row (those of them that exist)."""
        return await self._db.call(self._get_games, list(game_ids))

    def _get_games(self, game_ids: list[int]) -> list[StoredGame]:
        with self._db.read() as s:
            return stored_games(s, s.exec(select(GameRow).where(col(GameRow.id).in_(game_ids))).all())

    def _get_game(self, game_id: int) -> StoredGame:
        with self._db.read() as s:
            return stored_games(s, [game_row(s, game_id)])[0]

    async def open_games(self, guild_filter: GuildFilter | None = None) -> list[StoredGame]:
        """Every open game (to rebuild after a restart), with seats and logs, oldest first.

        ``guild_filter`` keeps only the guilds it returns True for, so each shard takes its own.
        """
        return await self._db.call(self._open_games, guild_filter)

    def _open_games(self, guild_filter: GuildFilter | None) -> list[StoredGame]:
        with self._db.read() as s:
            rows = s.exec(select(GameRow).where(GameRow.status == "open").order_by(col(GameRow.id))).all()
            kept = [r for r in rows if guild_filter is None or guild_filter(r.guild_id)]
            return stored_games(s, kept)

    async def set_timer(
        self, game_id: int, timer_id: int | None, deadline: datetime | None, remaining: float | None = None
    ) -> None:
        """Remember the running timer (``deadline``) or a paused one (``remaining`` seconds), or none.

        Raises:
            GameNotFoundError: no such game.
        """
        if deadline is not None:
            deadline = aware(deadline, "deadline")
        await self._db.call(
            self._update_game, game_id, {"timer_id": timer_id, "timer_deadline": deadline, "timer_remaining": remaining}
        )

    async def seen(self, game_ids: Sequence[int], at: datetime) -> None:
        """Note that the process running ``game_ids`` was alive ``at`` (one statement for all of them)."""
        if game_ids:
            await self._db.call(self._seen, list(game_ids), aware(at, "at"))

    def _seen(self, game_ids: list[int], at: datetime) -> None:
        with self._db.write() as s, s.begin():
            s.connection().execute(
                update(GameRow).where(col(GameRow.id).in_(game_ids), col(GameRow.status) == "open").values(seen_at=at)
            )

    async def set_discord_meta(self, game_id: int, meta: Mapping[str, JSON]) -> None:
        """Replace what the bot keeps about the game's Discord side (message ids and the like).

        Raises:
            GameNotFoundError: no such game.
        """
        await self._db.call(self._update_game, game_id, {"discord": dict(meta)})

    def _update_game(self, game_id: int, values: dict[str, object]) -> None:
        with self._db.write() as s, s.begin():
            moved: CursorResult[Any] = s.connection().execute(
                update(GameRow).where(col(GameRow.id) == game_id).values(**values)
            )
            if moved.rowcount != 1:
                raise GameNotFoundError(game_id)

    async def finish_game(self, game_id: int, final: GameFinal, *, at: datetime | None = None) -> None:
        """Close the game with its result; results and ratings are written in the same transaction.

        An abandoned game (``final.abandoned``) is closed with no results and no rating change.

        Raises:
            GameNotFoundError: no such game.
            GameClosedError: the game was already finished or abandoned (its results stand).
            StoreError: ``final`` names a seat nobody sat in.
        """
        await self._db.call(self._finish_game, game_id, final, aware(at or now(), "at"), self._db.fences())

    def _finish_game(self, game_id: int, final: GameFinal, at: datetime, fences: Fences | None) -> None:
        for attempt in range(FINISH_ATTEMPTS):
            try:
                self._finish_once(game_id, final, at, fences)
                return
            except IntegrityError:
                # Another process created one of these players' rating rows meanwhile; read it and redo.
                if attempt == FINISH_ATTEMPTS - 1:
                    raise

    def _finish_once(self, game_id: int, final: GameFinal, at: datetime, fences: Fences | None) -> None:
        with self._db.write() as s, s.begin():
            check_game_fence(s, fences, game_id)
            game = _close(s, game_id, final, at)
            if final.abandoned:
                return
            seats = {r.seat: r for r in s.exec(select(SeatRow).where(SeatRow.game_id == game_id))}
            missing = [f.seat for f in final.seats if f.seat not in seats]
            if missing:
                raise StoreError(f"game {game_id}: nobody sat in seats {missing}")
            winning = winning_team(Result(final.result))
            s.add_all(_result_rows(game, seats, final, at, draw=winning is None))
            teams = {seats[f.seat].user_id: f.team for f in final.seats}
            _rate(s, game.guild_id, game.ruleset_name, teams, winning.value if winning else None, at)
            _keep_protocol(s, game)


def _keep_protocol(s: Session, game: GameRow) -> None:
    """Store the ended game's protocol with its result (``projection``), so no league read builds it again.

    A log that does not build stops no game from ending: the league's first read builds it then, as
    it does for the games that ended before protocols were kept.
    """
    try:
        body = projection.body_of(stored_games(s, [game])[0])
    except Exception:  # the result stands whatever the protocol builder makes of the log
        log.exception("game %s: its protocol is not kept now", game.id)
        return
    projection.keep(s, {row_id(game): body})


def insert_game(db: Database, row: GameRow) -> int:
    """Write a new game row and return its id (on the worker thread)."""
    with db.write() as s, s.begin():
        s.add(row)
        s.flush()
        return row_id(row)


def new_game_row(
    *, guild_id: int, channel_id: int, voice_channel_id: int | None, judge_id: int | None, ruleset: Ruleset,
    language: str, status: str, created_at: datetime, discord: Mapping[str, JSON] | None = None,
) -> GameRow:
    """A game row not yet written: an open game, or a lobby's claim on its channels."""
    return GameRow(
        guild_id=guild_id, channel_id=channel_id, voice_channel_id=voice_channel_id, judge_id=judge_id,
        ruleset_name=ruleset.name, ruleset=ruleset.to_dict(), language=language, status=status,
        created_at=created_at, last_seq=0, discord=dict(discord or {}),
    )


def _close(s: Session, game_id: int, final: GameFinal, at: datetime) -> GameRow:
    """Mark the game finished (or abandoned) with its result, locking its row against a second finish."""
    game = s.exec(select(GameRow).where(GameRow.id == game_id).with_for_update()).first()
    if game is None:
        raise GameNotFoundError(game_id)
    if game.status != "open":
        raise GameClosedError(game_id, game.status)
    game.status = "abandoned" if final.abandoned else "finished"
    game.result = final.result
    game.reason = final.reason
    game.finished_at = at
    game.timer_id = game.timer_deadline = game.timer_remaining = None
    s.add(game)
    return game


def _result_rows(
    game: GameRow, seats: Mapping[int, SeatRow], final: GameFinal, at: datetime, *, draw: bool
) -> list[ResultRow]:
    """One result row per seat: the facts the statistics and the league are counted from."""
    return [
        ResultRow(
            game_id=row_id(game),
            seat=f.seat,
            user_id=seats[f.seat].user_id,
            display_name=seats[f.seat].display_name,
            guild_id=game.guild_id,
            ruleset_name=game.ruleset_name,
            finished_at=at,
            role=f.role,
            team=f.team,
            won=f.won,
            draw=draw,
            points=str(f.points),
            extra_points=str(f.extra_points),
            fouls=f.fouls,
            best_move_black=f.best_move_black,
            removed=f.removed,
        )
        for f in final.seats
    ]


def _rate(
    s: Session, guild_id: int, ruleset_name: str, teams: dict[int, str], winner: str | None, at: datetime
) -> None:
    current = {
        r.user_id: r
        for r in s.exec(
            select(RatingRow)
            .where(
                RatingRow.guild_id == guild_id,
                RatingRow.ruleset_name == ruleset_name,
                col(RatingRow.user_id).in_(list(teams)),
            )
            .with_for_update()
        )
    }
    after = ratings.updated({u: r.rating for u, r in current.items()}, teams, winner)
    for user_id, rating in after.items():
        row = current.get(user_id)
        if row is None:
            row = RatingRow(guild_id=guild_id, ruleset_name=ruleset_name, user_id=user_id, rating=rating, games=0)
        row.rating = rating
        row.games += 1
        row.updated_at = at
        s.add(row)


def logs_of(s: Session, game_ids: list[int]) -> dict[int, list[StoredCommand]]:
    """The logs of these games, each in order (on the worker thread, inside ``s``).

    Columns, not rows as objects: a game has a hundred commands and more events, and building an
    ORM object for each was most of the time a league's read took.
    """
    events: dict[tuple[int, int], list[JSONObject]] = defaultdict(list)
    connection = s.connection()
    for game_id, seq, event in connection.execute(
        sa_select(col(EventRow.game_id), col(EventRow.seq), col(EventRow.event))
        .where(col(EventRow.game_id).in_(game_ids))
        .order_by(col(EventRow.game_id), col(EventRow.seq), col(EventRow.position))
    ):
        events[game_id, seq].append(event)
    logs: dict[int, list[StoredCommand]] = {g: [] for g in game_ids}
    for game_id, seq, command, actor_id, at in connection.execute(
        sa_select(col(CommandRow.game_id), col(CommandRow.seq), col(CommandRow.command), col(CommandRow.actor_id),
                  col(CommandRow.at))
        .where(col(CommandRow.game_id).in_(game_ids))
        .order_by(col(CommandRow.game_id), col(CommandRow.seq))
    ):
        logs[game_id].append(StoredCommand(seq, command, events.get((game_id, seq), []), actor_id, at))
    return logs


def read_games(engine: Engine, game_ids: Sequence[int]) -> list[StoredGame]:
    """These games with their seats and logs, read through ``engine`` directly (those of them that exist).

    For a process of its own, such as a site build's forked worker, which opens its own engine
    (``make_engine``) rather than use connections its parent opened, and has no event loop to wait on.
    """
    with Session(engine) as s:
        return stored_games(s, s.exec(select(GameRow).where(col(GameRow.id).in_(list(game_ids)))).all())


def stored_games(s: Session, rows: Sequence[GameRow]) -> list[StoredGame]:
    """These games as the bot reads them back, with seats and logs (on the worker thread, inside ``s``)."""
    ids = [row_id(r) for r in rows]
    logs = logs_of(s, ids)
    seats: dict[int, list[SeatInfo]] = defaultdict(list)
    for x in s.exec(
        select(SeatRow).where(col(SeatRow.game_id).in_(ids)).order_by(col(SeatRow.game_id), col(SeatRow.seat))
    ):
        seats[x.game_id].append(SeatInfo(x.seat, x.user_id, x.display_name, x.role))
    return [
        StoredGame(
            id=row_id(r),
            guild_id=r.guild_id,
            channel_id=r.channel_id,
            voice_channel_id=r.voice_channel_id,
            judge_id=r.judge_id,
            ruleset_name=r.ruleset_name,
            ruleset=dict(r.ruleset),
            language=r.language,
            status=r.status,
            created_at=r.created_at,
            finished_at=r.finished_at,
            result=r.result,
            reason=r.reason,
            last_seq=r.last_seq,
            timer_id=r.timer_id,
            timer_deadline=r.timer_deadline,
            timer_remaining=r.timer_remaining,
            discord=dict(r.discord),
            seats=seats.get(row_id(r), []),
            log=logs[row_id(r)],
            seen_at=r.seen_at,
        )
        for r in rows
    ]


if TYPE_CHECKING:

    def _is_the_core_port(repo: GameLogRepo) -> GameLog:
        return repo  # mypy checks here that the repository is the core's ``GameLog``
