"""The store: an append-only command/event log per game, plus settings, mutes, history and stats.

Every method is a coroutine, but SQL runs on one dedicated worker thread with a plain SQLAlchemy
engine. One thread keeps the bot's writes in the order it issued them (an append is never
overtaken by a later one), never blocks the event loop, and needs no async driver, so SQLite and
PostgreSQL behave the same way. Another process writing the same database is kept out of a
game's log by the database itself: see ``append``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal, ParamSpec, TypeVar

from sqlalchemy import CursorResult, Engine, delete, func, insert, update
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlmodel import Session, col, select

from engine import Result, Ruleset, RulesetError, event_from_data, winning_team
from mafiabot.core.errors import (
    ChannelTakenError,
    ConcurrencyError,
    GameClosedError,
    GameNotFoundError,
    StoreError,
    StoreUnavailableError,
)
from mafiabot.core.records import (
    GameFinal,
    GameSummary,
    GuildSettings,
    LeagueRow,
    MuteRecord,
    PlayerStats,
    RatingEntry,
    SeatInfo,
    StoredCommand,
    StoredGame,
    StoredRuleset,
    WinCount,
)
from mafiabot.store import export, ratings
from mafiabot.store.db import READ_ONLY, make_engine, upgrade_engine
from mafiabot.store.models import (
    CommandRow,
    EventRow,
    GameRow,
    GuildRulesetRow,
    GuildSettingsRow,
    MuteLedgerRow,
    RatingRow,
    ResultRow,
    SeatRow,
)
from mafiabot.store.protocol import GameHeader, Protocol, build_protocol

P = ParamSpec("P")
T = TypeVar("T")

FINISH_ATTEMPTS = 3
"""How often ``finish_game`` retries when another process created the same rating row first."""


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime, what: str) -> datetime:
    if value.tzinfo is None:
        raise ValueError(f"{what} must carry a time zone: {value!r}")
    return value.astimezone(UTC)


class Store:
    """The bot's database. Make one with ``await Store.open(url)`` and ``await store.close()`` it."""

    def __init__(self, engine: Engine, executor: ThreadPoolExecutor) -> None:
        """Wrap an engine already migrated; ``open`` is the way to get one."""
        self._engine = engine
        self._reader = engine.execution_options(**{READ_ONLY: True})
        self._executor = executor
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------

    @classmethod
    async def open(cls, url: str, *, migrate: bool = True) -> Store:
        """Connect to ``url`` and migrate it to the newest schema.

        ``url`` is ``sqlite:///path/to/file.db`` or ``postgresql+psycopg://user@host/db``.

        Raises:
            ValueError: the URL names an unsupported database.
        """
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mafiabot-store")
        try:
            engine = await asyncio.get_running_loop().run_in_executor(executor, _connect, url, migrate)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(engine, executor)

    async def close(self) -> None:
        """Finish the queued work and release every connection."""
        if self._closed:
            return
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(self._executor, self._engine.dispose)
        self._executor.shutdown(wait=False)

    @property
    def engine(self) -> Engine:
        """The synchronous engine; only for tools and tests, never from the event loop."""
        return self._engine

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    async def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._executor, functools.partial(fn, *args, **kwargs)
            )
        except (OperationalError, InterfaceError) as exc:
            raise StoreUnavailableError(str(exc.orig or exc).strip()) from exc

    def _write(self) -> Session:
        return Session(self._engine, expire_on_commit=False)

    def _read(self) -> Session:
        return Session(self._reader, expire_on_commit=False)

    # -- games and the log -----------------------------------------------------------------------

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
        discord: Mapping[str, Any] | None = None,
    ) -> int:
        """Record a new open game and return its id; its log starts empty (the first ``seq`` is 1)."""
        row = GameRow(
            guild_id=guild_id,
            channel_id=channel_id,
            voice_channel_id=voice_channel_id,
            judge_id=judge_id,
            ruleset_name=ruleset.name,
            ruleset=ruleset.to_dict(),
            language=language,
            status="open",
            created_at=_aware(created_at or _now(), "created_at"),
            last_seq=0,
            discord=dict(discord or {}),
        )
        return await self._call(self._create_game, row)

    def _create_game(self, row: GameRow) -> int:
        with self._write() as s, s.begin():
            s.add(row)
            s.flush()
            assert row.id is not None  # noqa: S101  (the flush assigned it)
            return row.id

    async def open_lobby(
        self, *, guild_id: int, channel_id: int, voice_channel_id: int, judge_id: int, ruleset: Ruleset,
        language: str = "en",
    ) -> int:
        """Claim a text and a voice channel for a new lobby and return its game id.

        The claim is a game row in status ``lobby``; the database's unique indexes on the channels
        of live games (``lobby`` or ``open``) let only one claim win, in this process or another.

        Raises:
            ChannelTakenError: a lobby or an open game already holds one of the channels.
        """
        row = GameRow(
            guild_id=guild_id, channel_id=channel_id, voice_channel_id=voice_channel_id, judge_id=judge_id,
            ruleset_name=ruleset.name, ruleset=ruleset.to_dict(), language=language, status="lobby",
            created_at=_now(), last_seq=0, discord={},
        )
        try:
            return await self._call(self._create_game, row)
        except IntegrityError as exc:
            raise ChannelTakenError("voice" if "voice_channel_id" in str(exc.orig) else "channel") from None

    async def start_lobby(self, game_id: int) -> bool:
        """Turn a lobby into an open game; False when it is no lobby any more (started, dropped)."""
        return await self._call(self._set_status, game_id, "lobby", {"status": "open", "created_at": _now()})

    async def drop_lobby(self, game_id: int) -> None:
        """Forget a lobby that was cancelled or expired; its channels are free again."""
        await self._call(self._drop_lobbies, [col(GameRow.id) == game_id])

    async def drop_lobbies(
        self, guild_filter: Callable[[int], bool] | None = None, *, keep: Iterable[int] = ()
    ) -> None:
        """Forget every lobby but ``keep`` (of the guilds ``guild_filter`` keeps): lobbies die with their process."""
        await self._call(self._drop_lobbies, [col(GameRow.id).not_in(list(keep))], guild_filter)

    async def abandon_unstarted(
        self, guild_filter: Callable[[int], bool] | None = None, *, keep: Iterable[int] = ()
    ) -> list[int]:
        """Close every open game but ``keep`` with no command yet (a start that failed half-way); return their ids."""
        return await self._call(self._abandon_unstarted, guild_filter, set(keep))

    async def release_channel(self, channel_id: int, *, unstarted_only: bool = False) -> list[int]:
        """Free a text channel: drop its lobbies and abandon its open games (or only those never started).

        For ``/mafia cancel`` where the bot holds no table in memory: whatever the database still
        holds there (a failed start, a game that could not be resumed) must not block the channel.
        """
        return await self._call(self._release_channel, channel_id, unstarted_only)

    def _set_status(self, game_id: int, status: str, values: dict[str, Any]) -> bool:
        with self._write() as s, s.begin():
            moved: CursorResult[Any] = s.connection().execute(
                update(GameRow).where(col(GameRow.id) == game_id, col(GameRow.status) == status).values(**values)
            )
            return moved.rowcount == 1

    def _drop_lobbies(self, where: list[Any], guild_filter: Callable[[int], bool] | None = None) -> None:
        with self._write() as s, s.begin():
            query = select(GameRow.id, GameRow.guild_id).where(GameRow.status == "lobby", *where)
            ids = [i for i, guild in s.exec(query).all() if guild_filter is None or guild_filter(guild)]
            if ids:
                s.connection().execute(delete(GameRow).where(col(GameRow.id).in_(ids), col(GameRow.status) == "lobby"))

    def _abandon_unstarted(self, guild_filter: Callable[[int], bool] | None, keep: set[int]) -> list[int]:
        with self._write() as s, s.begin():
            query = select(GameRow.id, GameRow.guild_id).where(GameRow.status == "open", GameRow.last_seq == 0)
            ids = [i for i, guild in s.exec(query).all()
                   if i is not None and i not in keep and (guild_filter is None or guild_filter(guild))]
            self._abandon(s, ids, "never_started")
            return ids

    def _release_channel(self, channel_id: int, unstarted_only: bool) -> list[int]:  # noqa: FBT001
        with self._write() as s, s.begin():
            s.connection().execute(
                delete(GameRow).where(col(GameRow.channel_id) == channel_id, col(GameRow.status) == "lobby")
            )
            query = select(GameRow.id).where(GameRow.channel_id == channel_id, GameRow.status == "open")
            if unstarted_only:
                query = query.where(GameRow.last_seq == 0)
            ids = list(s.exec(query).all())
            self._abandon(s, ids, "cancelled")
            return [i for i in ids if i is not None]

    @staticmethod
    def _abandon(s: Session, ids: Sequence[int | None], reason: str) -> None:
        if ids:
            s.connection().execute(
                update(GameRow).where(col(GameRow.id).in_(ids), col(GameRow.status) == "open").values(
                    status="abandoned", result="abandoned", reason=reason, finished_at=_now(),
                    timer_id=None, timer_deadline=None, timer_remaining=None,
                )
            )

    async def seat_players(
        self, game_id: int, seats: Sequence[SeatInfo | tuple[int, int, str, str | None]], *,
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
        await self._call(self._seat_players, game_id, rows, muting_in, None if muting is None else set(muting))

    def _seat_players(
        self, game_id: int, seats: list[SeatInfo], muting_in: int | None, muting: set[int] | None
    ) -> None:
        with self._write() as s, s.begin():
            self._game(s, game_id)
            for old in s.exec(select(SeatRow).where(SeatRow.game_id == game_id)):
                s.delete(old)
            s.flush()
            s.add_all(
                SeatRow(game_id=game_id, seat=x.seat, user_id=x.user_id, display_name=x.display_name, role=x.role)
                for x in seats
            )
            if muting_in is not None:
                for x in seats:
                    if muting is not None and x.user_id not in muting:
                        continue
                    s.merge(MuteLedgerRow(guild_id=muting_in, user_id=x.user_id, game_id=game_id, muted_at=_now()))

    async def append(
        self,
        game_id: int,
        seq: int,
        command: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]],
        *,
        actor_id: int | None,
        at: datetime,
    ) -> None:
        """Write one accepted command and its events, durably, in one transaction.

        ``seq`` must be exactly one past the game's last position. The check and the write are one
        conditional update of the game row plus the (game, seq) primary key of the log, so two
        writers, in this process or another, can never both take a position: the second gets
        ``ConcurrencyError`` and nothing of it is written. A finished game still takes appends: the
        final words come after the result is fixed.

        Raises:
            ConcurrencyError: ``seq`` is taken, or is not the next position.
            GameNotFoundError: no such game.
            ValueError: ``at`` is naive, or a command or event has no ``type``.
        """
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise ValueError(f"seq must be a positive integer, not {seq!r}")
        for item in (command, *events):
            if not isinstance(item.get("type"), str):
                raise ValueError(f"every command and event needs its type: {item!r}")
        rows = [dict(e) for e in events]
        await self._call(self._append, game_id, seq, dict(command), rows, actor_id, _aware(at, "at"))

    def _append(
        self,
        game_id: int,
        seq: int,
        command: dict[str, Any],
        events: list[dict[str, Any]],
        actor_id: int | None,
        at: datetime,
    ) -> None:
        with self._write() as s, s.begin():
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
        return await self._call(self._load_log, game_id)

    def _load_log(self, game_id: int) -> list[StoredCommand]:
        with self._read() as s:
            self._game(s, game_id)
            return self._logs(s, [game_id])[game_id]

    async def get_game(self, game_id: int) -> StoredGame:
        """One game with its seats and log.

        Raises:
            GameNotFoundError: no such game.
        """
        return await self._call(self._get_game, game_id)

    def _get_game(self, game_id: int) -> StoredGame:
        with self._read() as s:
            return self._stored(s, [self._game(s, game_id)])[0]

    async def open_games(self, guild_filter: Callable[[int], bool] | None = None) -> list[StoredGame]:
        """Every open game (to rebuild after a restart), with seats and logs, oldest first.

        ``guild_filter`` keeps only the guilds it returns True for, so each shard takes its own.
        """
        return await self._call(self._open_games, guild_filter)

    def _open_games(self, guild_filter: Callable[[int], bool] | None) -> list[StoredGame]:
        with self._read() as s:
            rows = s.exec(select(GameRow).where(GameRow.status == "open").order_by(col(GameRow.id))).all()
            kept = [r for r in rows if guild_filter is None or guild_filter(r.guild_id)]
            return self._stored(s, kept)

    async def set_timer(
        self, game_id: int, timer_id: int | None, deadline: datetime | None, remaining: float | None = None
    ) -> None:
        """Remember the running timer (``deadline``) or a paused one (``remaining`` seconds), or none.

        Raises:
            GameNotFoundError: no such game.
        """
        if deadline is not None:
            deadline = _aware(deadline, "deadline")
        await self._call(
            self._update_game, game_id, {"timer_id": timer_id, "timer_deadline": deadline, "timer_remaining": remaining}
        )

    async def set_discord_meta(self, game_id: int, meta: Mapping[str, Any]) -> None:
        """Replace what the bot keeps about the game's Discord side (message ids and the like).

        Raises:
            GameNotFoundError: no such game.
        """
        await self._call(self._update_game, game_id, {"discord": dict(meta)})

    def _update_game(self, game_id: int, values: dict[str, Any]) -> None:
        with self._write() as s, s.begin():
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
        await self._call(self._finish_game, game_id, final, _aware(at or _now(), "at"))

    def _finish_game(self, game_id: int, final: GameFinal, at: datetime) -> None:
        for attempt in range(FINISH_ATTEMPTS):
            try:
                self._finish_once(game_id, final, at)
                return
            except IntegrityError:
                # Another process created one of these players' rating rows meanwhile; read it and redo.
                if attempt == FINISH_ATTEMPTS - 1:
                    raise

    def _finish_once(self, game_id: int, final: GameFinal, at: datetime) -> None:
        with self._write() as s, s.begin():
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
            if final.abandoned:
                return
            seats = {r.seat: r for r in s.exec(select(SeatRow).where(SeatRow.game_id == game_id))}
            missing = [f.seat for f in final.seats if f.seat not in seats]
            if missing:
                raise StoreError(f"game {game_id}: nobody sat in seats {missing}")
            winning = winning_team(Result(final.result))
            draw = winning is None
            for f in final.seats:
                seat = seats[f.seat]
                s.add(
                    ResultRow(
                        game_id=game_id,
                        seat=f.seat,
                        user_id=seat.user_id,
                        display_name=seat.display_name,
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
                )
            teams = {seats[f.seat].user_id: f.team for f in final.seats}
            self._rate(s, game.guild_id, game.ruleset_name, teams, winning.value if winning else None, at)

    def _rate(
        self, s: Session, guild_id: int, ruleset_name: str, teams: dict[int, str], winner: str | None, at: datetime
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

    # -- the mute ledger -------------------------------------------------------------------------

    async def record_mute(
        self, guild_id: int, user_id: int, game_id: int | None, *, at: datetime | None = None
    ) -> None:
        """Remember that the bot server-muted this member, before the mute is sent."""
        await self.record_mutes(guild_id, [user_id], game_id, at=at)

    async def record_mutes(
        self, guild_id: int, user_ids: Iterable[int], game_id: int | None, *, at: datetime | None = None
    ) -> None:
        """Remember several mutes in one transaction: a whole table's mutes cost one commit, not twelve."""
        when = _aware(at or _now(), "at")
        rows = [MuteLedgerRow(guild_id=guild_id, user_id=u, game_id=game_id, muted_at=when) for u in user_ids]
        await self._call(self._merge_all, rows)

    def _merge_all(self, rows: Sequence[MuteLedgerRow]) -> None:
        with self._write() as s, s.begin():
            for row in rows:
                s.merge(row)

    async def clear_mute(self, guild_id: int, user_id: int) -> None:
        """Forget a mute once it is lifted; forgetting one that is not there is fine."""
        await self.clear_mutes(guild_id, [user_id])

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget several mutes in one transaction."""
        await self._call(self._clear_mutes, guild_id, list(user_ids))

    def _clear_mutes(self, guild_id: int, user_ids: Sequence[int]) -> None:
        with self._write() as s, s.begin():
            for user_id in user_ids:
                row = s.get(MuteLedgerRow, (guild_id, user_id))
                if row is not None:
                    s.delete(row)

    async def owed_mutes(self, guild_id: int | None = None) -> list[MuteRecord]:
        """Every mute the bot still has to lift, on one server or on all of them."""
        return await self._call(self._owed_mutes, guild_id)

    def _owed_mutes(self, guild_id: int | None) -> list[MuteRecord]:
        with self._read() as s:
            query = select(MuteLedgerRow).order_by(col(MuteLedgerRow.guild_id), col(MuteLedgerRow.user_id))
            if guild_id is not None:
                query = query.where(MuteLedgerRow.guild_id == guild_id)
            return [MuteRecord(r.guild_id, r.user_id, r.game_id, r.muted_at) for r in s.exec(query)]

    # -- guild settings --------------------------------------------------------------------------

    async def get_settings(self, guild_id: int, *, default: GuildSettings | None = None) -> GuildSettings:
        """The server's settings; ``default`` (or the built-in defaults) when it never saved any."""
        return await self._call(self._get_settings, guild_id, default)

    def _get_settings(self, guild_id: int, default: GuildSettings | None) -> GuildSettings:
        with self._read() as s:
            row = s.get(GuildSettingsRow, guild_id)
            if row is None:
                return GuildSettings(guild_id) if default is None else dataclasses.replace(default, guild_id=guild_id)
            return GuildSettings(
                guild_id=row.guild_id,
                language=row.language,
                judge_role_id=row.judge_role_id,
                default_ruleset=row.default_ruleset,
                timers=dict(row.timers),
                vote_window=row.vote_window,
                mute_spectators=row.mute_spectators,
                voice_cues=row.voice_cues,
                results_channel_id=row.results_channel_id,
                strict_tables=row.strict_tables,
            )

    async def save_settings(self, settings: GuildSettings) -> None:
        """Save the server's settings (already validated by ``GuildSettings`` itself)."""
        row = GuildSettingsRow(
            guild_id=settings.guild_id,
            language=settings.language,
            judge_role_id=settings.judge_role_id,
            default_ruleset=settings.default_ruleset,
            timers=dict(settings.timers),
            vote_window=settings.vote_window,
            mute_spectators=settings.mute_spectators,
            voice_cues=settings.voice_cues,
            results_channel_id=settings.results_channel_id,
            strict_tables=settings.strict_tables,
        )
        await self._call(self._merge, row)

    def _merge(self, row: GuildSettingsRow | MuteLedgerRow) -> None:
        with self._write() as s, s.begin():
            s.merge(row)

    # -- servers' rulesets -----------------------------------------------------------------------

    async def save_guild_ruleset(
        self, *, guild_id: int, key: str, ruleset: Ruleset, source: str, uploaded_by: int, limit: int,
        at: datetime | None = None,
    ) -> Literal["saved", "replaced", "full"]:
        """Keep a server's ruleset under ``key``, replacing one of that key.

        ``full`` (nothing written) when the server already has ``limit`` others. Games keep their
        own copy, so a replacement changes only tables opened after it.
        """
        row = GuildRulesetRow(
            guild_id=guild_id, key=key, name=ruleset.name, source=source, ruleset=ruleset.to_dict(),
            uploaded_by=uploaded_by, uploaded_at=_aware(at or _now(), "at"),
        )
        return await self._call(self._save_guild_ruleset, row, limit)

    def _save_guild_ruleset(self, row: GuildRulesetRow, limit: int) -> Literal["saved", "replaced", "full"]:
        with self._write() as s, s.begin():
            existing = s.get(GuildRulesetRow, (row.guild_id, row.key))
            if existing is None:
                count = s.exec(select(func.count()).select_from(GuildRulesetRow)
                               .where(col(GuildRulesetRow.guild_id) == row.guild_id)).one()
                if count >= limit:
                    return "full"
            s.merge(row)
            return "saved" if existing is None else "replaced"

    async def guild_rulesets(self, guild_id: int) -> list[StoredRuleset]:
        """A server's rulesets, by lookup name."""
        return await self._call(self._guild_rulesets, guild_id)

    def _guild_rulesets(self, guild_id: int) -> list[StoredRuleset]:
        with self._read() as s:
            rows = s.exec(select(GuildRulesetRow).where(col(GuildRulesetRow.guild_id) == guild_id)
                          .order_by(col(GuildRulesetRow.key))).all()
            return [_stored_ruleset(row) for row in rows]

    async def get_guild_ruleset(self, guild_id: int, key: str) -> StoredRuleset | None:
        """A server's ruleset by lookup name, if it has one."""
        return await self._call(self._get_guild_ruleset, guild_id, key)

    def _get_guild_ruleset(self, guild_id: int, key: str) -> StoredRuleset | None:
        with self._read() as s:
            row = s.get(GuildRulesetRow, (guild_id, key))
            return None if row is None else _stored_ruleset(row)

    async def remove_guild_ruleset(self, guild_id: int, key: str) -> bool:
        """Forget a server's ruleset; False when it had none of that name. Finished games keep theirs."""
        return await self._call(self._remove_guild_ruleset, guild_id, key)

    def _remove_guild_ruleset(self, guild_id: int, key: str) -> bool:
        with self._write() as s, s.begin():
            row = s.get(GuildRulesetRow, (guild_id, key))
            if row is None:
                return False
            s.delete(row)
            return True

    # -- history ---------------------------------------------------------------------------------

    async def recent_games(self, guild_id: int, limit: int = 10) -> list[GameSummary]:
        """The server's latest games, newest first, whatever their status."""
        return await self._call(self._recent_games, guild_id, limit)

    def _recent_games(self, guild_id: int, limit: int) -> list[GameSummary]:
        with self._read() as s:
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
                    id=_id(r),
                    guild_id=r.guild_id,
                    channel_id=r.channel_id,
                    judge_id=r.judge_id,
                    ruleset_name=r.ruleset_name,
                    status=r.status,
                    created_at=r.created_at,
                    finished_at=r.finished_at,
                    result=r.result,
                    reason=r.reason,
                    players=counts.get(_id(r), 0),
                    days=days.get(_id(r), 0),
                )
                for r in rows
            ]

    async def game_protocol(self, game_id: int) -> Protocol:
        """The game's full protocol. It names every role: show it to players only once the game is over.

        Raises:
            GameNotFoundError: no such game.
        """
        return await self._call(self._protocol, game_id)

    def _protocol(self, game_id: int) -> Protocol:
        with self._read() as s:
            game = self._stored(s, [self._game(s, game_id)])[0]
            points = {
                r.seat: Decimal(r.points) for r in s.exec(select(ResultRow).where(ResultRow.game_id == game_id))
            }
        return _protocol_of(game, points or None)

    async def export_json(self, game_id: int) -> str:
        """The game as one JSON document: header, seats, the full log and the protocol.

        Raises:
            GameNotFoundError: no such game.
        """
        game, protocol = await self._call(self._game_and_protocol, game_id)
        return export.to_json(game, protocol)

    async def export_csv(self, game_id: int, *, table: Literal["seats", "log"] = "seats") -> str:
        """The game as CSV: one row per seat (the result sheet) or one row per event (the log).

        Raises:
            GameNotFoundError: no such game.
        """
        game, protocol = await self._call(self._game_and_protocol, game_id)
        return export.seats_csv(protocol) if table == "seats" else export.log_csv(game)

    def _game_and_protocol(self, game_id: int) -> tuple[StoredGame, Protocol]:
        with self._read() as s:
            game = self._stored(s, [self._game(s, game_id)])[0]
            points = {
                r.seat: Decimal(r.points) for r in s.exec(select(ResultRow).where(ResultRow.game_id == game_id))
            }
        return game, _protocol_of(game, points or None)

    # -- stats and ratings -----------------------------------------------------------------------

    async def player_stats(self, guild_id: int, user_id: int, ruleset: str | None = None) -> PlayerStats:
        """A member's record on the server, under one ruleset or all of them."""
        return await self._call(self._player_stats, guild_id, user_id, ruleset)

    def _player_stats(self, guild_id: int, user_id: int, ruleset: str | None) -> PlayerStats:
        with self._read() as s:
            query = select(ResultRow).where(ResultRow.guild_id == guild_id, ResultRow.user_id == user_id)
            rating_query = select(RatingRow).where(RatingRow.guild_id == guild_id, RatingRow.user_id == user_id)
            if ruleset is not None:
                query = query.where(ResultRow.ruleset_name == ruleset)
                rating_query = rating_query.where(RatingRow.ruleset_name == ruleset)
            rows = s.exec(query).all()
            rated = {r.ruleset_name: r.rating for r in s.exec(rating_query)}
        by_role: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        by_team: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in rows:
            for key, table in ((r.role, by_role), (r.team, by_team)):
                table[key][0] += 1
                table[key][1] += int(r.won)
        games = len(rows)
        wins = sum(1 for r in rows if r.won)
        draws = sum(1 for r in rows if r.draw)
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
            points=sum((Decimal(r.points) for r in rows), Decimal(0)),
            extra_points=sum((Decimal(r.extra_points) for r in rows), Decimal(0)),
            fouls=sum(r.fouls for r in rows),
            removals=sum(1 for r in rows if r.removed),
            best_moves=len(made),
            best_move_black=sum(made),
            by_role={k: WinCount(*v) for k, v in sorted(by_role.items())},
            by_team={k: WinCount(*v) for k, v in sorted(by_team.items())},
            ratings=rated,
        )

    async def league(
        self, guild_id: int, *, since: datetime | None = None, ruleset: str | None = None, limit: int | None = None
    ) -> list[LeagueRow]:
        """The server's league table (rules.md#league-table): by total points, then wins, then extra points.

        ``since`` keeps games finished at or after it (a period); ``ruleset`` keeps one ruleset.
        """
        if since is not None:
            since = _aware(since, "since")
        return await self._call(self._league, guild_id, since, ruleset, limit)

    def _league(self, guild_id: int, since: datetime | None, ruleset: str | None, limit: int | None) -> list[LeagueRow]:
        with self._read() as s:
            query = select(ResultRow).where(ResultRow.guild_id == guild_id)
            if since is not None:
                query = query.where(col(ResultRow.finished_at) >= since)
            if ruleset is not None:
                query = query.where(ResultRow.ruleset_name == ruleset)
            rows = s.exec(query.order_by(col(ResultRow.finished_at), col(ResultRow.game_id))).all()
        return league_table(rows, limit=limit)

    async def ratings(self, guild_id: int, ruleset: str) -> list[RatingEntry]:
        """The server's ratings under ``ruleset``, highest first."""
        return await self._call(self._ratings, guild_id, ruleset)

    def _ratings(self, guild_id: int, ruleset: str) -> list[RatingEntry]:
        with self._read() as s:
            rows = s.exec(
                select(RatingRow)
                .where(RatingRow.guild_id == guild_id, RatingRow.ruleset_name == ruleset)
                .order_by(col(RatingRow.rating).desc(), col(RatingRow.user_id))
            ).all()
            return [RatingEntry(r.user_id, r.rating, r.games) for r in rows]

    # -- helpers (run on the worker thread) ------------------------------------------------------

    @staticmethod
    def _game(s: Session, game_id: int) -> GameRow:
        row = s.get(GameRow, game_id)
        if row is None:
            raise GameNotFoundError(game_id)
        return row

    @staticmethod
    def _logs(s: Session, game_ids: list[int]) -> dict[int, list[StoredCommand]]:
        events: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
        for e in s.exec(
            select(EventRow)
            .where(col(EventRow.game_id).in_(game_ids))
            .order_by(col(EventRow.game_id), col(EventRow.seq), col(EventRow.position))
        ):
            events[e.game_id, e.seq].append(e.event)
        logs: dict[int, list[StoredCommand]] = {g: [] for g in game_ids}
        for c in s.exec(
            select(CommandRow)
            .where(col(CommandRow.game_id).in_(game_ids))
            .order_by(col(CommandRow.game_id), col(CommandRow.seq))
        ):
            produced = events.get((c.game_id, c.seq), [])
            logs[c.game_id].append(StoredCommand(c.seq, c.command, produced, c.actor_id, c.at))
        return logs

    def _stored(self, s: Session, rows: Sequence[GameRow]) -> list[StoredGame]:
        ids = [_id(r) for r in rows]
        logs = self._logs(s, ids)
        seats: dict[int, list[SeatInfo]] = defaultdict(list)
        for x in s.exec(
            select(SeatRow).where(col(SeatRow.game_id).in_(ids)).order_by(col(SeatRow.game_id), col(SeatRow.seat))
        ):
            seats[x.game_id].append(SeatInfo(x.seat, x.user_id, x.display_name, x.role))
        return [
            StoredGame(
                id=_id(r),
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
                seats=seats.get(_id(r), []),
                log=logs[_id(r)],
            )
            for r in rows
        ]


def _stored_ruleset(row: GuildRulesetRow) -> StoredRuleset:
    return StoredRuleset(
        guild_id=row.guild_id, key=row.key, name=row.name, source=row.source, data=dict(row.ruleset),
        uploaded_by=row.uploaded_by, uploaded_at=row.uploaded_at,
    )


def _id(row: GameRow) -> int:
    assert row.id is not None  # noqa: S101  (a row read back from the database has its id)
    return row.id


def _connect(url: str, migrate: bool) -> Engine:  # noqa: FBT001  (positional for run_in_executor)
    engine = make_engine(url)
    try:
        if migrate:
            upgrade_engine(engine)
    except BaseException:
        engine.dispose()
        raise
    return engine


def _protocol_of(game: StoredGame, points: Mapping[int, Decimal] | None) -> Protocol:
    try:
        rules: Ruleset | None = game.rules()
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


def league_table(rows: Iterable[ResultRow], *, limit: int | None = None) -> list[LeagueRow]:
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
