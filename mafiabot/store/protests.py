"""Protests of games, as rows: filed by a seated player, ruled on by the judge or the tournament's organiser.

A protest is not a command of the game: the engine takes none once the game is over, and a protest
may come after it (``Ruleset.protest_window``). So protests have a table of their own, and the
protocol is given them when it is read (``mafiabot.store.history``).
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlmodel import Session, col, select

from mafiabot.core.protocol import Protest, ProtestedGame, ProtestStatus
from mafiabot.store.db import Repository, aware, now, row_id
from mafiabot.store.models import GameRow, ProtestRow, TournamentRow, TournamentTableRow


class ProtestRepo(Repository):
    """Protests by game, and their rulings."""

    async def file_protest(self, *, game_id: int, user_id: int, seat: int, text: str, during_game: bool,
                           at: datetime | None = None) -> Protest:
        """Keep a player's protest; the new protest, with its number."""
        row = ProtestRow(game_id=game_id, user_id=user_id, seat=seat, text=text, during_game=during_game,
                         filed_at=aware(at or now(), "at"))
        return await self._db.call(self._file, row)

    def _file(self, row: ProtestRow) -> Protest:
        with self._db.write() as s, s.begin():
            s.add(row)
            s.flush()
            return protest_of(row)

    async def game_protests(self, game_id: int) -> list[Protest]:
        """A game's protests, in the order they were filed."""
        return await self._db.call(self._protests, game_id)

    def _protests(self, game_id: int) -> list[Protest]:
        with self._db.read() as s:
            return protests_in(s, game_id)

    async def protested_game(self, protest_id: int) -> ProtestedGame | None:
        """A protest with its game's judge and tournament organiser, if there is such a protest."""
        return await self._db.call(self._protested_game, protest_id)

    def _protested_game(self, protest_id: int) -> ProtestedGame | None:
        with self._db.read() as s:
            row = s.get(ProtestRow, protest_id)
            if row is None:
                return None
            game = s.get(GameRow, row.game_id)
            if game is None:
                return None
            organiser = s.exec(
                select(TournamentRow.organiser_id)
                .join(TournamentTableRow, col(TournamentTableRow.tournament_id) == col(TournamentRow.id))
                .where(col(TournamentTableRow.game_id) == row.game_id)
            ).first()
            return ProtestedGame(protest_of(row), game.guild_id, game.channel_id, game.judge_id, organiser,
                                 game.language)

    async def rule_protest(self, protest_id: int, *, status: ProtestStatus, note: str, by: int,
                           at: datetime | None = None) -> Protest | None:
        """Uphold or reject a protest with a note (a later ruling replaces an earlier one); None if there is none."""
        return await self._db.call(self._rule, protest_id, status, note, by, aware(at or now(), "at"))

    def _rule(self, protest_id: int, status: ProtestStatus, note: str, by: int, at: datetime) -> Protest | None:
        with self._db.write() as s, s.begin():
            row = s.get(ProtestRow, protest_id)
            if row is None:
                return None
            row.status, row.note, row.ruled_by, row.ruled_at = status, note, by, at
            s.add(row)
            s.flush()
            return protest_of(row)


def protests_in(s: Session, game_id: int) -> list[Protest]:
    """A game's protests, read in an open session (the protocol's reader joins them in)."""
    rows = s.exec(select(ProtestRow).where(col(ProtestRow.game_id) == game_id).order_by(col(ProtestRow.id))).all()
    return [protest_of(row) for row in rows]


def protests_of(s: Session, game_ids: list[int]) -> dict[int, list[Protest]]:
    """The protests of these games by game, each game's in the order filed, in one query."""
    found: dict[int, list[Protest]] = {}
    for row in s.exec(select(ProtestRow).where(col(ProtestRow.game_id).in_(game_ids)).order_by(col(ProtestRow.id))):
        found.setdefault(row.game_id, []).append(protest_of(row))
    return found


def protest_of(row: ProtestRow) -> Protest:
    """A row as the protocol's record."""
    return Protest(
        id=row_id(row), game_id=row.game_id, user_id=row.user_id, seat=row.seat, text=row.text, filed_at=row.filed_at,
        during_game=row.during_game, status=cast("ProtestStatus", row.status), note=row.note,
        ruled_by=row.ruled_by, ruled_at=row.ruled_at,
    )
