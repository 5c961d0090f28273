"""What the other cogs ask of a tournament: the table a channel holds in an open round, and its lobby's link.

A shared module, not the tournament cog itself: a cog's extension module is dropped and loaded
anew on a reload, so another cog must not hold its functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from cogs._judging import has_role, is_staff
from mafiabot.core.tournament_service import TournamentPlace

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


async def tournament_place(bot: MafiaBot, interaction: discord.Interaction) -> TournamentPlace | None:
    """The tournament table of this channel's open round, for ``/mafia new``; None for an ordinary channel.

    Raises:
        TournamentError: ``tournament.not_table_judge`` (the table has another judge),
            ``tournament.table_unjudged`` (no judge named: only the tournament's staff may open it),
            ``tournament.table_played`` (its game of this round is already under way or over).
    """
    async def staff(organiser_id: int) -> bool:
        return await _tournament_staff(bot, interaction, organiser_id)

    return await bot.tournaments.place_at(interaction.channel_id or 0, interaction.user.id, staff)


async def _tournament_staff(bot: MafiaBot, interaction: discord.Interaction, organiser_id: int) -> bool:
    """The tournament's organiser, the server's staff, or a member of its organiser role: staff for its tables."""
    if interaction.user.id == organiser_id or await is_staff(bot, interaction):
        return True
    return has_role(interaction.user, (await bot.guild_settings(interaction.guild_id or 0)).organiser_role_id)


async def link_lobby(bot: MafiaBot, place: TournamentPlace, game_id: int, judge_id: int) -> bool:
    """Bind a just-opened lobby's game to its tournament table; False if another game took the table first."""
    return await bot.tournaments.link(place, game_id, judge_id)
