"""Voice-state changes: owed mutes lifted on return, technical pauses, spectators."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord.ext import commands

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


class VoiceCog(commands.Cog):
    """Keeps the voice floor right as people come and go."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        """Route a voice change to the tables it concerns."""
        guild_id = member.guild.id
        now = after.channel.id if after.channel else None
        was = before.channel.id if before.channel else None
        tables = [tb for tb in self.bot.tables.tables.values() if tb.guild_id == guild_id and not tb.over]
        for table in tables:
            seated = member.id in table.seats
            if seated or table.voice_channel_id in (now, was):
                table.voice.observe(member.id, after.mute if now is not None else None)
            if seated and was == table.voice_channel_id and now != table.voice_channel_id:
                await table.player_left_voice(member.id)
            elif seated and now == table.voice_channel_id and was != table.voice_channel_id:
                await table.player_returned(member.id)
            if seated or table.voice_channel_id in (now, was):
                table.refresh_voice()
        if now is not None and was != now:
            await self.bot.tables.mutes.returned(guild_id, member.id, muted=after.mute)


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(VoiceCog(bot))
