"""The vote, by reactions: each living player's first ✋ in the window counts.

Raw reaction events are used so a vote message posted before a restart still counts. A reaction
that does not count (a second vote, a dead player's, a spectator's, a late one, another emoji) is
removed with one request, and its author is told why in a direct message, once per table: a
prankster's reactions must not drain the token's global budget.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from mafiabot.core.runtime import Table
from mafiabot.host.votes import vote_by_reaction

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)


class VotingCog(commands.Cog):
    """Turns reactions on vote messages into votes."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    def _vote_message(self, channel_id: int, message_id: int) -> tuple[Table, int | str] | None:
        table = self.bot.tables.table_in(channel_id)
        if table is None:
            return None
        target = table.meta.votes.get(message_id)
        return (table, target) if target is not None else None

    @commands.Cog.listener()
    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """Count a ✋ on the open vote message; remove what does not count."""
        if self.bot.user is not None and payload.user_id == self.bot.user.id:
            return
        found = self._vote_message(payload.channel_id, payload.message_id)
        if found is None:
            return
        table, target = found
        await vote_by_reaction(self.bot, table, target, payload.user_id, payload.emoji, payload.message_id,
                               member=payload.member)


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(VotingCog(bot))
