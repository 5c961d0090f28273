"""Clicks no cog routes: a control from a message no table or lobby owns any more, or a forged one.

Every control the bot makes is routed by its custom id (``cogs._routing``); discord.py builds the
control only when the custom id matches a loaded cog's template and the clicked message carries
that component. Any other click is stale or forged, and still gets a private answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from cogs._cog import is_routed
from cogs._errors import answer_error
from mafiabot.core.runtime import TableError

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


class StraysCog(commands.Cog):
    """Answers the clicks that reach no control."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Refuse a component click discord.py routes nowhere."""
        if interaction.type is not discord.InteractionType.component or is_routed(self.bot, interaction):
            return
        if not interaction.response.is_done():
            await answer_error(interaction, TableError("control.unknown"))


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(StraysCog(bot))
