"""Fair play in the table's text channel: a seated player writing there at night is reported to the judge.

Only the author and the channel are read, which Discord sends without the message content intent;
what the message says is never needed. The mafia's room is a thread of the channel, a channel of its
own, so the black team talking there at night is not a lapse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from mafiabot.core.fairplay import Lapse

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


class FairPlayCog(commands.Cog):
    """Tells the judge of seated players' lapses in the table's channel."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        """A line in a table's channel by one of its seated players: the core decides whether it matters now."""
        if message.guild is None or message.author.bot:
            return
        table = self.bot.tables.table_in(message.channel.id)
        if table is not None and not table.over and message.author.id in table.seats:
            table.lapse(message.author.id, Lapse.MESSAGE)


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(FairPlayCog(bot))
