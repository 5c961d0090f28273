"""Forgetting: one member's records on one server, or everything of a server (docs/privacy.md).

A member's seat in a played game is part of the other nine players' record, so a game is never
deleted because one of them asked: their seats, results, tournament places and protests pass to a
random negative id (a "ghost" no Discord id can be), under the name ``FORGOTTEN``. Points stay with
the seat, so the league's and a tournament's sums add up as before and the stored log still replays
into the same protocol (the engine's log holds seats, never Discord ids). The ghost is hidden on the
club's pages, so they show the seat alone. Everything else that names the member (settings, ledgers,
ratings, registrations of a tournament not yet seated, the judge and organiser fields) is deleted or
emptied.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import delete, update
from sqlmodel import Session, col, select

from mafiabot.store.db import Repository
from mafiabot.store.models import (
    CommandRow,
    EventRow,
    GameRow,
    GuildRulesetRow,
    GuildSettingsRow,
    MuteLedgerRow,
    NickLedgerRow,
    ProtestRow,
    ProtocolRow,
    RatingRow,
    ResultRow,
    SeatRow,
    SiteHiddenRow,
    StreamLinkRow,
    TournamentChannelsRow,
    TournamentForbiddenRow,
    TournamentPlayerRow,
    TournamentRow,
    TournamentSeatRow,
    TournamentTableRow,
)

FORGOTTEN = "—"
"""The name a forgotten member's seats and results keep: no language's word, so no catalog is needed."""
LIVE_GAMES = ("lobby", "open")
SEATED_TOURNAMENTS = ("seated", "playing")

Refusal = Literal["playing", "tournament"]


@dataclass(frozen=True, slots=True)
class Forgotten:
    """What forgetting a member did: the refusal (and nothing done), or how many games kept them as a ghost."""

    refused: Refusal | None = None
    games: int = 0
    rows: int = 0
    """Rows deleted or changed, the games' included."""


class PrivacyRepo(Repository):
    """Deleting a member's records on a server, or a whole server's."""

    async def forget_member(self, guild_id: int, user_id: int) -> Forgotten:
        """Forget the member on the server, in one transaction: all of it, or (refused) nothing.

        Refused while they sit at a game still running there (its table holds them in memory and
        would write them back at the end) or are seated in a tournament's schedule still being played.
        """
        return await self._db.call(self._forget_member, guild_id, user_id)

    def _forget_member(self, guild_id: int, user_id: int) -> Forgotten:
        with self._db.write() as s, s.begin():
            games = select(GameRow.id).where(col(GameRow.guild_id) == guild_id)
            live = s.exec(select(SeatRow.game_id).join(GameRow, col(GameRow.id) == col(SeatRow.game_id)).where(
                col(SeatRow.user_id) == user_id, col(GameRow.guild_id) == guild_id,
                col(GameRow.status).in_(LIVE_GAMES))).first()
            if live is not None:
                return Forgotten("playing")
            tournaments = select(TournamentRow.id).where(col(TournamentRow.guild_id) == guild_id)
            seated = s.exec(select(TournamentSeatRow.tournament_id)
                            .join(TournamentRow, col(TournamentRow.id) == col(TournamentSeatRow.tournament_id))
                            .where(col(TournamentSeatRow.user_id) == user_id, col(TournamentRow.guild_id) == guild_id,
                                   col(TournamentRow.status).in_(SEATED_TOURNAMENTS))).first()
            if seated is not None:
                return Forgotten("tournament")
            ghost = -1 - secrets.randbelow(2**62)
            played = set(s.exec(select(SeatRow.game_id).where(col(SeatRow.user_id) == user_id,
                                                               col(SeatRow.game_id).in_(games))).all())
            in_games = col(SeatRow.game_id).in_(games)
            changes = [
                update(SeatRow).where(col(SeatRow.user_id) == user_id, in_games).values(user_id=ghost,
                                                                                   display_name=FORGOTTEN),
                update(ResultRow).where(col(ResultRow.user_id) == user_id, col(ResultRow.guild_id) == guild_id)
                .values(user_id=ghost, display_name=FORGOTTEN),
                update(ProtestRow).where(col(ProtestRow.user_id) == user_id, col(ProtestRow.game_id).in_(games))
                .values(user_id=ghost, text=""),
                update(ProtestRow).where(col(ProtestRow.ruled_by) == user_id, col(ProtestRow.game_id).in_(games))
                .values(ruled_by=None),
                update(GameRow).where(col(GameRow.judge_id) == user_id, col(GameRow.guild_id) == guild_id)
                .values(judge_id=None),
                update(CommandRow).where(col(CommandRow.actor_id) == user_id, col(CommandRow.game_id).in_(games))
                .values(actor_id=None),
                update(TournamentPlayerRow).where(col(TournamentPlayerRow.user_id) == user_id,
                                                  col(TournamentPlayerRow.tournament_id).in_(tournaments),
                                                  col(TournamentPlayerRow.tournament_id).in_(
                                                      select(TournamentSeatRow.tournament_id)))
                .values(user_id=ghost, display_name=FORGOTTEN),
                # A registration no schedule used yet is simply withdrawn.
                delete(TournamentPlayerRow).where(col(TournamentPlayerRow.user_id) == user_id,
                                                  col(TournamentPlayerRow.tournament_id).in_(tournaments)),
                update(TournamentSeatRow).where(col(TournamentSeatRow.user_id) == user_id,
                                                col(TournamentSeatRow.tournament_id).in_(tournaments))
                .values(user_id=ghost),
                delete(TournamentForbiddenRow).where(
                    (col(TournamentForbiddenRow.low) == user_id) | (col(TournamentForbiddenRow.high) == user_id),
                    col(TournamentForbiddenRow.tournament_id).in_(tournaments)),
                update(TournamentTableRow).where(col(TournamentTableRow.judge_id) == user_id,
                                                 col(TournamentTableRow.tournament_id).in_(tournaments))
                .values(judge_id=None),
                update(TournamentRow).where(col(TournamentRow.organiser_id) == user_id,
                                            col(TournamentRow.guild_id) == guild_id).values(organiser_id=0),
                update(GuildRulesetRow).where(col(GuildRulesetRow.uploaded_by) == user_id,
                                              col(GuildRulesetRow.guild_id) == guild_id).values(uploaded_by=0),
                *(delete(model).where(col(model.user_id) == user_id, col(model.guild_id) == guild_id)
                  for model in (RatingRow, MuteLedgerRow, NickLedgerRow, SiteHiddenRow)),
            ]
            rows = sum(_count(s.execute(change)) for change in changes)
            rows += _scrub_meta(s, guild_id, user_id, ghost)
            if rows:
                s.add(SiteHiddenRow(guild_id=guild_id, user_id=ghost))  # the pages show the ghost's seat alone
            return Forgotten(None, len(played), rows)

    async def forget_guild(self, guild_id: int) -> int:
        """Delete every row of the server, in one transaction; how many rows went."""
        return await self._db.call(self._forget_guild, guild_id)

    def _forget_guild(self, guild_id: int) -> int:
        with self._db.write() as s, s.begin():
            games = select(GameRow.id).where(col(GameRow.guild_id) == guild_id)
            tournaments = select(TournamentRow.id).where(col(TournamentRow.guild_id) == guild_id)
            # Children first: nothing here leans on the database's cascades.
            deletes = [
                *(delete(model).where(col(model.tournament_id).in_(tournaments)) for model in (
                    TournamentTableRow, TournamentSeatRow, TournamentForbiddenRow, TournamentPlayerRow,
                    TournamentChannelsRow)),
                delete(TournamentRow).where(col(TournamentRow.guild_id) == guild_id),
                delete(MuteLedgerRow).where(col(MuteLedgerRow.guild_id) == guild_id),
                delete(NickLedgerRow).where(col(NickLedgerRow.guild_id) == guild_id),
                *(delete(model).where(col(model.game_id).in_(games)) for model in (
                    EventRow, CommandRow, SeatRow, ProtestRow, StreamLinkRow, ProtocolRow)),
                delete(ResultRow).where(col(ResultRow.guild_id) == guild_id),
                delete(GameRow).where(col(GameRow.guild_id) == guild_id),
                delete(RatingRow).where(col(RatingRow.guild_id) == guild_id),
                delete(GuildRulesetRow).where(col(GuildRulesetRow.guild_id) == guild_id),
                delete(SiteHiddenRow).where(col(SiteHiddenRow.guild_id) == guild_id),
                delete(GuildSettingsRow).where(col(GuildSettingsRow.guild_id) == guild_id),
            ]
            return sum(_count(s.execute(statement)) for statement in deletes)


def _count(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)


def _scrub_meta(s: Session, guild_id: int, user_id: int, ghost: int) -> int:
    """The member's id out of the games' Discord notes (side judges, votes by member): a snowflake is nobody else's."""
    changed = 0
    for row in s.exec(select(GameRow).where(col(GameRow.guild_id) == guild_id)).all():
        scrubbed = _without(row.discord, user_id, ghost)
        if scrubbed != row.discord:
            row.discord = scrubbed
            s.add(row)
            changed += 1
    return changed


def _without(value: Any, user_id: int, ghost: int) -> Any:
    if isinstance(value, dict):
        return {_without(k, user_id, ghost): _without(v, user_id, ghost) for k, v in value.items()}
    if isinstance(value, list):
        return [_without(v, user_id, ghost) for v in value]
    if value == user_id and isinstance(value, int) and not isinstance(value, bool):
        return ghost
    if value == str(user_id):
        return str(ghost)
    return value
