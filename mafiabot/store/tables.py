"""Lobbies and the one table a channel holds: claims, starts, and freeing what a crash left behind.

A lobby is a game row in status ``lobby``; the database's unique indexes on the channels of live
games (``lobby`` or ``open``) let only one claim on a channel win, in this process or another.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, CursorResult, delete, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from engine import Ruleset
from mafiabot.core.errors import ChannelTakenError
from mafiabot.store.db import GuildFilter, Repository, now
from mafiabot.store.log import insert_game, new_game_row
from mafiabot.store.models import GameRow


class TableRepo(Repository):
    """The live tables' claims on channels: lobbies, their start, and releasing a channel."""

    async def open_lobby(
        self, *, guild_id: int, channel_id: int, voice_channel_id: int, judge_id: int, ruleset: Ruleset,
        language: str = "en",
    ) -> int:
        """Claim a text and a voice channel for a new lobby and return its game id.

        Raises:
            ChannelTakenError: a lobby or an open game already holds one of the channels.
        """
        row = new_game_row(
            guild_id=guild_id, channel_id=channel_id, voice_channel_id=voice_channel_id, judge_id=judge_id,
            ruleset=ruleset, language=language, status="lobby", created_at=now(),
        )
        try:
            return await self._db.call(insert_game, self._db, row)
        except IntegrityError as exc:
            raise ChannelTakenError("voice" if "voice_channel_id" in str(exc.orig) else "channel") from None

    async def start_lobby(self, game_id: int) -> bool:
        """Turn a lobby into an open game; False when it is no lobby any more (started, dropped)."""
        return await self._db.call(self._start_lobby, game_id)

    def _start_lobby(self, game_id: int) -> bool:
        with self._db.write() as s, s.begin():
            moved: CursorResult[Any] = s.connection().execute(
                update(GameRow).where(col(GameRow.id) == game_id, col(GameRow.status) == "lobby")
                .values(status="open", created_at=now())
            )
            return moved.rowcount == 1

    async def drop_lobby(self, game_id: int) -> None:
        """Forget a lobby that was cancelled or expired; its channels are free again."""
        await self._db.call(self._drop_lobbies, col(GameRow.id) == game_id)

    async def drop_lobbies(self, guild_filter: GuildFilter | None = None, *, keep: Iterable[int] = ()) -> None:
        """Forget every lobby but ``keep`` (of the guilds ``guild_filter`` keeps): lobbies die with their process."""
        await self._db.call(self._drop_lobbies, col(GameRow.id).not_in(list(keep)), guild_filter)

    async def abandon_unstarted(
        self, guild_filter: GuildFilter | None = None, *, keep: Iterable[int] = ()
    ) -> list[int]:
        """Close every open game but ``keep`` with no command yet (a start that failed half-way); return their ids."""
        return await self._db.call(self._abandon_unstarted, guild_filter, set(keep))

    async def release_channel(self, channel_id: int, *, unstarted_only: bool = False) -> list[int]:
        """Free a text channel: drop its lobbies and abandon its open games (or only those never started).

        For ``/mafia cancel`` where the bot holds no table in memory: whatever the database still
        holds there (a failed start, a game that could not be resumed) must not block the channel.
        """
        return await self._db.call(self._release_channel, channel_id, unstarted_only)

    def _drop_lobbies(self, where: ColumnElement[bool], guild_filter: GuildFilter | None = None) -> None:
        with self._db.write() as s, s.begin():
            query = select(GameRow.id, GameRow.guild_id).where(GameRow.status == "lobby", where)
            ids = [i for i, guild in s.exec(query).all() if guild_filter is None or guild_filter(guild)]
            if ids:
                s.connection().execute(delete(GameRow).where(col(GameRow.id).in_(ids), col(GameRow.status) == "lobby"))

    def _abandon_unstarted(self, guild_filter: GuildFilter | None, keep: set[int]) -> list[int]:
        with self._db.write() as s, s.begin():
            query = select(GameRow.id, GameRow.guild_id).where(GameRow.status == "open", GameRow.last_seq == 0)
            ids = [i for i, guild in s.exec(query).all()
                   if i is not None and i not in keep and (guild_filter is None or guild_filter(guild))]
            _abandon(s, ids, "never_started")
            return ids

    def _release_channel(self, channel_id: int, unstarted_only: bool) -> list[int]:  # noqa: FBT001
        with self._db.write() as s, s.begin():
            s.connection().execute(
                delete(GameRow).where(col(GameRow.channel_id) == channel_id, col(GameRow.status) == "lobby")
            )
            query = select(GameRow.id).where(GameRow.channel_id == channel_id, GameRow.status == "open")
            if unstarted_only:
                query = query.where(GameRow.last_seq == 0)
            ids = list(s.exec(query).all())
            _abandon(s, ids, "cancelled")
            return [i for i in ids if i is not None]


def _abandon(s: Session, ids: Sequence[int | None], reason: str) -> None:
    if ids:
        s.connection().execute(
            update(GameRow).where(col(GameRow.id).in_(ids), col(GameRow.status) == "open").values(
                status="abandoned", result="abandoned", reason=reason, finished_at=now(),
                timer_id=None, timer_deadline=None, timer_remaining=None,
            )
        )
