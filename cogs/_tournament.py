"""What the other cogs ask of a tournament: the table a channel holds in an open round, and its lobby's link.

A shared module, not the tournament cog itself: a cog's extension module is dropped and loaded
anew on a reload, so another cog must not hold its functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import discord

from cogs._judging import has_role, is_staff
from engine import Ruleset
from mafiabot.core import tournaments as tn
from mafiabot.core.runtime import FixedSeats

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


@dataclass(frozen=True, slots=True)
class TournamentPlace:
    """A channel that holds a table of an open round: its seats, its rules, its voice channel, its judge."""

    fixed: FixedSeats
    ruleset: Ruleset
    voice_channel_id: int
    judge_id: int | None


async def tournament_place(bot: MafiaBot, interaction: discord.Interaction) -> TournamentPlace | None:
    """The tournament table of this channel's open round, for ``/mafia new``; None for an ordinary channel.

    Raises:
        TournamentError: ``tournament.not_table_judge`` (the table has another judge),
            ``tournament.table_unjudged`` (no judge named: only the tournament's staff may open it),
            ``tournament.table_played`` (its game of this round is already under way or over).
    """
    found = await bot.store.tournaments.table_at(interaction.channel_id or 0)
    if found is None:
        return None
    tm, rt = found
    if rt.judge_id != interaction.user.id and not await _tournament_staff(bot, interaction, tm.organiser_id):
        if rt.judge_id:
            raise tn.TournamentError("tournament.not_table_judge", table=rt.table, judge=f"<@{rt.judge_id}>")
        # Whoever opens a table judges a game that counts: not a member who happens to be first.
        raise tn.TournamentError("tournament.table_unjudged", table=rt.table)
    if rt.game_id is not None and (await bot.store.get_game(rt.game_id)).status in ("open", "finished"):
        raise tn.TournamentError("tournament.table_played", table=rt.table, round=rt.round)
    seats = tn.table_seats(tm, rt.round, rt.table)
    return TournamentPlace(FixedSeats(tm.id, rt.round, rt.table, seats), tm.rules(), rt.voice_channel_id,
                           rt.judge_id)


async def _tournament_staff(bot: MafiaBot, interaction: discord.Interaction, organiser_id: int) -> bool:
    """The tournament's organiser, the server's staff, or a member of its organiser role: staff for its tables."""
    if interaction.user.id == organiser_id or await is_staff(bot, interaction):
        return True
    return has_role(interaction.user, (await bot.guild_settings(interaction.guild_id or 0)).organiser_role_id)


async def link_lobby(bot: MafiaBot, place: TournamentPlace, game_id: int, judge_id: int) -> bool:
    """Bind a just-opened lobby's game to its tournament table; False if another game took the table first."""
    fixed = place.fixed
    return await bot.store.tournaments.link_game(fixed.tournament_id, fixed.round, fixed.table, game_id,
                                                 judge_id=judge_id)
