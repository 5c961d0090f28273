"""Tournaments as rows: registration, the stored schedule, the tables of each round and their games.

Every change that moves a tournament along is a compare-and-set on its status (and round), so two
processes, or two clicks, cannot both open a round or both close registration.
``mafiabot.core.tournaments`` decides what may happen; this repository only keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Literal

from sqlalchemy import update
from sqlmodel import Session, col, select

from engine import Ruleset
from mafiabot.core.records import MadeChannels, RoundTable, ScheduledSeat, StoredTournament, TournamentPlayer
from mafiabot.store.db import Repository, aware, now
from mafiabot.store.models import (
    GameRow,
    TournamentChannelsRow,
    TournamentForbiddenRow,
    TournamentPlayerRow,
    TournamentRow,
    TournamentSeatRow,
    TournamentTableRow,
)

JoinOutcome = Literal["joined", "already", "closed"]
LeaveOutcome = Literal["left", "absent", "closed"]


class TournamentRepo(Repository):
    """A server's tournaments, each with its players, forbidden pairs, schedule and round tables."""

    async def create_tournament(
        self, *, guild_id: int, name: str, ruleset: Ruleset, scoring: str, rounds: int, tables: int, seed: int,
        organiser_id: int, at: datetime | None = None, finals: int = 0, finals_weight: Decimal = Decimal(1),
    ) -> StoredTournament:
        """A new tournament, open for registration."""
        row = TournamentRow(
            guild_id=guild_id, name=name, ruleset_name=ruleset.name, ruleset=ruleset.to_dict(), scoring=scoring,
            rounds=rounds, tables=tables, seed=seed, organiser_id=organiser_id, created_at=aware(at or now(), "at"),
            finals=finals, finals_weight=str(finals_weight),
        )
        return await self._db.call(self._create, row)

    def _create(self, row: TournamentRow) -> StoredTournament:
        with self._db.write() as s, s.begin():
            s.add(row)
            s.flush()
            if row.id is None:
                raise RuntimeError("the database gave the new tournament no id")
            return _load(s, row.id)

    async def set_announcement(self, tournament_id: int, channel_id: int, message_id: int) -> None:
        """Remember where the registration announcement is, to edit it when registration closes."""
        await self._db.call(self._set_announcement, tournament_id, channel_id, message_id)

    def _set_announcement(self, tournament_id: int, channel_id: int, message_id: int) -> None:
        with self._db.write() as s, s.begin():
            s.execute(update(TournamentRow).where(col(TournamentRow.id) == tournament_id)
                      .values(announcement_channel_id=channel_id, announcement_message_id=message_id))

    async def set_site_hidden_rounds(self, tournament_id: int, rounds: int) -> None:
        """Keep the last ``rounds`` rounds' results off the club's pages until the tournament ends (0: none)."""
        await self._db.call(self._set_site_hidden_rounds, tournament_id, rounds)

    def _set_site_hidden_rounds(self, tournament_id: int, rounds: int) -> None:
        with self._db.write() as s, s.begin():
            s.execute(update(TournamentRow).where(col(TournamentRow.id) == tournament_id)
                      .values(site_hidden_rounds=rounds))

    async def get_tournament(self, tournament_id: int) -> StoredTournament | None:
        """One tournament with everything about it, if there is one of that id."""
        return await self._db.call(self._get, tournament_id)

    def _get(self, tournament_id: int) -> StoredTournament | None:
        with self._db.read() as s:
            return None if s.get(TournamentRow, tournament_id) is None else _load(s, tournament_id)

    async def guild_tournaments(self, guild_id: int) -> list[StoredTournament]:
        """A server's tournaments, newest first."""
        return await self._db.call(self._guild_tournaments, guild_id)

    def _guild_tournaments(self, guild_id: int) -> list[StoredTournament]:
        with self._db.read() as s:
            ids = s.exec(select(TournamentRow.id).where(col(TournamentRow.guild_id) == guild_id)
                         .order_by(col(TournamentRow.id).desc())).all()
            return [_load(s, i) for i in ids if i is not None]

    async def site_holds(self, guild_id: int) -> frozenset[tuple[int, int]]:
        """Each unfinished tournament of the server that keeps rounds off the club's pages, with how many.

        The served pages compare it at every request, as they do the hidden names: an organiser who
        holds the final back after it has been read must not wait for the next read to hide it.
        """
        return await self._db.call(self._site_holds, guild_id)

    def _site_holds(self, guild_id: int) -> frozenset[tuple[int, int]]:
        with self._db.read() as s:
            rows = s.exec(select(TournamentRow.id, TournamentRow.site_hidden_rounds).where(
                col(TournamentRow.guild_id) == guild_id, col(TournamentRow.status) != "finished",
                col(TournamentRow.site_hidden_rounds) > 0)).all()
            return frozenset((i, n) for i, n in rows if i is not None)

    async def add_player(self, tournament_id: int, user_id: int, name: str, at: datetime | None = None) -> JoinOutcome:
        """Register a player; ``closed`` (nothing written) once registration is over."""
        return await self._db.call(self._add_player, tournament_id, user_id, name, aware(at or now(), "at"))

    def _add_player(self, tournament_id: int, user_id: int, name: str, at: datetime) -> JoinOutcome:
        with self._db.write() as s, s.begin():
            if not _registering(s, tournament_id):
                return "closed"
            if s.get(TournamentPlayerRow, (tournament_id, user_id)) is not None:
                return "already"
            s.add(TournamentPlayerRow(tournament_id=tournament_id, user_id=user_id, display_name=name[:100],
                                      joined_at=at))
            return "joined"

    async def add_players(
        self, tournament_id: int, players: Sequence[tuple[int, str]], at: datetime | None = None,
    ) -> tuple[list[int], list[int]] | None:
        """Register many players in one transaction: (the ones added, the ones already listed); None if closed."""
        return await self._db.call(self._add_players, tournament_id, tuple(players), aware(at or now(), "at"))

    def _add_players(self, tournament_id: int, players: tuple[tuple[int, str], ...],
                     at: datetime) -> tuple[list[int], list[int]] | None:
        with self._db.write() as s, s.begin():
            if not _registering(s, tournament_id):
                return None
            ids = [user_id for user_id, _ in players]
            listed = set(s.exec(select(TournamentPlayerRow.user_id).where(
                col(TournamentPlayerRow.tournament_id) == tournament_id,
                col(TournamentPlayerRow.user_id).in_(ids))).all())
            added = [(user_id, name) for user_id, name in players if user_id not in listed]
            s.add_all(TournamentPlayerRow(tournament_id=tournament_id, user_id=user_id, display_name=name[:100],
                                          joined_at=at) for user_id, name in added)
            return [user_id for user_id, _ in added], [user_id for user_id in ids if user_id in listed]

    async def remove_player(self, tournament_id: int, user_id: int) -> LeaveOutcome:
        """Take a player off the list; ``closed`` (nothing changed) once registration is over."""
        return await self._db.call(self._remove_player, tournament_id, user_id)

    def _remove_player(self, tournament_id: int, user_id: int) -> LeaveOutcome:
        with self._db.write() as s, s.begin():
            if not _registering(s, tournament_id):
                return "closed"
            row = s.get(TournamentPlayerRow, (tournament_id, user_id))
            if row is None:
                return "absent"
            s.delete(row)
            return "left"

    async def forbid_pair(self, tournament_id: int, a: int, b: int) -> bool:
        """Keep two players apart in the schedule; False once registration is over."""
        return await self._db.call(self._forbid_pair, tournament_id, min(a, b), max(a, b))

    def _forbid_pair(self, tournament_id: int, low: int, high: int) -> bool:
        with self._db.write() as s, s.begin():
            if not _registering(s, tournament_id):
                return False
            s.merge(TournamentForbiddenRow(tournament_id=tournament_id, low=low, high=high))
            return True

    async def save_schedule(self, tournament_id: int, seats: Sequence[ScheduledSeat]) -> bool:
        """Close registration and keep the schedule; False (nothing written) when it was already closed."""
        return await self._db.call(self._save_schedule, tournament_id, tuple(seats))

    def _save_schedule(self, tournament_id: int, seats: tuple[ScheduledSeat, ...]) -> bool:
        with self._db.write() as s, s.begin():
            if not _move(s, tournament_id, ("registration", 0), {"status": "seated", "current_round": 0}):
                return False
            s.add_all(TournamentSeatRow(tournament_id=tournament_id, round=p.round, table_no=p.table, seat=p.seat,
                                        user_id=p.user_id) for p in seats)
            return True

    async def open_round(self, tournament_id: int, round_number: int, tables: Sequence[RoundTable],
                         made: Sequence[MadeChannels] = ()) -> bool:
        """Open round ``round_number`` at ``tables``; False unless the round before it is the last one closed.

        ``made`` are the channels the bot made (or made again) for its tables, remembered in the same
        transaction so that no later round makes them twice and the organiser can remove them.
        """
        return await self._db.call(self._open_round, tournament_id, round_number, tuple(tables), tuple(made))

    def _open_round(self, tournament_id: int, round_number: int, tables: tuple[RoundTable, ...],
                    made: tuple[MadeChannels, ...]) -> bool:
        with self._db.write() as s, s.begin():
            if not _move(s, tournament_id, ("seated", round_number - 1),
                         {"status": "playing", "current_round": round_number}):
                return False
            s.add_all(TournamentTableRow(
                tournament_id=tournament_id, round=round_number, table_no=t.table, channel_id=t.channel_id,
                voice_channel_id=t.voice_channel_id, judge_id=t.judge_id,
            ) for t in tables)
            for m in made:
                s.merge(TournamentChannelsRow(tournament_id=tournament_id, table_no=m.table, channel_id=m.channel_id,
                                              voice_channel_id=m.voice_channel_id))
            return True

    async def forget_channels(self, tournament_id: int, tables: Sequence[int]) -> None:
        """Forget the made channels of ``tables`` once they are deleted: a later round would make new ones."""
        await self._db.call(self._forget_channels, tournament_id, tuple(tables))

    def _forget_channels(self, tournament_id: int, tables: tuple[int, ...]) -> None:
        with self._db.write() as s, s.begin():
            for table in tables:
                row = s.get(TournamentChannelsRow, (tournament_id, table))
                if row is not None:
                    s.delete(row)

    async def link_game(self, tournament_id: int, round_number: int, table: int, game_id: int,
                        judge_id: int | None = None) -> bool:
        """Bind a table's game (from its lobby on) to the table; False when the round is closed or the table has one.

        A lobby that never started, or a game that was abandoned, gives its place to the next one.
        """
        return await self._db.call(self._link_game, tournament_id, round_number, table, game_id, judge_id)

    def _link_game(self, tournament_id: int, round_number: int, table: int, game_id: int,
                   judge_id: int | None) -> bool:
        with self._db.write() as s, s.begin():
            t = s.get(TournamentRow, tournament_id)
            row = s.get(TournamentTableRow, (tournament_id, round_number, table))
            if t is None or row is None:
                return False
            linked = s.get(GameRow, row.game_id) if row.game_id is not None else None
            if linked is not None and linked.status in ("open", "finished") and row.game_id != game_id:
                return False
            if (t.status, t.current_round) != ("playing", round_number):
                return False
            row.game_id = game_id
            row.judge_id = judge_id if judge_id is not None else row.judge_id
            s.add(row)
            return True

    async def close_round(self, tournament_id: int, round_number: int, *, last: bool) -> bool:
        """Close the open round (finishing the tournament after its ``last``); False if it was not open."""
        status = "finished" if last else "seated"
        return await self._db.call(self._close_round, tournament_id, round_number, status)

    def _close_round(self, tournament_id: int, round_number: int, status: str) -> bool:
        with self._db.write() as s, s.begin():
            return _move(s, tournament_id, ("playing", round_number), {"status": status})

    async def table_at(self, channel_id: int) -> tuple[StoredTournament, RoundTable] | None:
        """The tournament table an open round plays in text channel ``channel_id``, if one does."""
        return await self._db.call(self._table_at, channel_id)

    def _table_at(self, channel_id: int) -> tuple[StoredTournament, RoundTable] | None:
        with self._db.read() as s:
            row = s.exec(
                select(TournamentTableRow).join(
                    TournamentRow, col(TournamentRow.id) == col(TournamentTableRow.tournament_id))
                .where(col(TournamentTableRow.channel_id) == channel_id, col(TournamentRow.status) == "playing",
                       col(TournamentRow.current_round) == col(TournamentTableRow.round))
            ).first()
            return None if row is None else (_load(s, row.tournament_id), _table(row))

    async def playing_tournaments(self) -> list[StoredTournament]:
        """Every tournament with a round open: the ones whose round may have ended while the bot was away."""
        return await self._db.call(self._playing)

    def _playing(self) -> list[StoredTournament]:
        with self._db.read() as s:
            ids = s.exec(select(TournamentRow.id).where(col(TournamentRow.status) == "playing")).all()
            return [_load(s, i) for i in ids if i is not None]

    async def tournament_of_game(self, game_id: int) -> StoredTournament | None:
        """The tournament a game was played for, if any."""
        return await self._db.call(self._tournament_of_game, game_id)

    def _tournament_of_game(self, game_id: int) -> StoredTournament | None:
        with self._db.read() as s:
            row = s.exec(select(TournamentTableRow).where(col(TournamentTableRow.game_id) == game_id)).first()
            return None if row is None else _load(s, row.tournament_id)


def _registering(s: Session, tournament_id: int) -> bool:
    row = s.get(TournamentRow, tournament_id)
    return row is not None and row.status == "registration"


def _move(s: Session, tournament_id: int, at: tuple[str, int], values: dict[str, object]) -> bool:
    """Set ``values`` only if the tournament is still at ``at`` (status, round): one writer wins."""
    status, round_number = at
    result = s.execute(
        update(TournamentRow)
        .where(col(TournamentRow.id) == tournament_id, col(TournamentRow.status) == status,
               col(TournamentRow.current_round) == round_number)
        .values(**values)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def _table(row: TournamentTableRow) -> RoundTable:
    return RoundTable(round=row.round, table=row.table_no, channel_id=row.channel_id,
                      voice_channel_id=row.voice_channel_id, judge_id=row.judge_id, game_id=row.game_id)


def _load(s: Session, tournament_id: int) -> StoredTournament:
    t = s.get(TournamentRow, tournament_id)
    if t is None or t.id is None:
        raise LookupError(f"no tournament {tournament_id}")
    s.refresh(t)
    players = s.exec(select(TournamentPlayerRow).where(col(TournamentPlayerRow.tournament_id) == tournament_id)
                     .order_by(col(TournamentPlayerRow.joined_at), col(TournamentPlayerRow.user_id))).all()
    forbidden = s.exec(select(TournamentForbiddenRow)
                       .where(col(TournamentForbiddenRow.tournament_id) == tournament_id)
                       .order_by(col(TournamentForbiddenRow.low), col(TournamentForbiddenRow.high))).all()
    seats = s.exec(select(TournamentSeatRow).where(col(TournamentSeatRow.tournament_id) == tournament_id)
                   .order_by(col(TournamentSeatRow.round), col(TournamentSeatRow.table_no),
                             col(TournamentSeatRow.seat))).all()
    tables = s.exec(select(TournamentTableRow).where(col(TournamentTableRow.tournament_id) == tournament_id)
                    .order_by(col(TournamentTableRow.round), col(TournamentTableRow.table_no))).all()
    made = s.exec(select(TournamentChannelsRow).where(col(TournamentChannelsRow.tournament_id) == tournament_id)
                  .order_by(col(TournamentChannelsRow.table_no))).all()
    return StoredTournament(
        id=t.id, guild_id=t.guild_id, name=t.name, ruleset_name=t.ruleset_name, ruleset=dict(t.ruleset),
        scoring=t.scoring, rounds=t.rounds, tables=t.tables, seed=t.seed, status=t.status,
        current_round=t.current_round, organiser_id=t.organiser_id, created_at=t.created_at,
        players=tuple(TournamentPlayer(p.user_id, p.display_name) for p in players),
        forbidden=tuple((f.low, f.high) for f in forbidden),
        schedule=tuple(ScheduledSeat(r.round, r.table_no, r.seat, r.user_id) for r in seats),
        round_tables=tuple(_table(r) for r in tables),
        finals=t.finals, finals_weight=Decimal(t.finals_weight), announcement=_announcement(t),
        made_channels=tuple(MadeChannels(m.table_no, m.channel_id, m.voice_channel_id) for m in made),
        site_hidden_rounds=t.site_hidden_rounds,
    )


def _announcement(t: TournamentRow) -> tuple[int, int] | None:
    if t.announcement_channel_id is None or t.announcement_message_id is None:
        return None
    return t.announcement_channel_id, t.announcement_message_id
