"""Voice-state changes: owed mutes lifted on return, technical pauses, spectators, fair-play lapses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from mafiabot.core.fairplay import Lapse

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table
    from mafiabot.host.bot import MafiaBot


async def follow_voice(table: Table, user_id: int, was: int | None, now: int | None, *, muted: bool) -> None:
    """Tell ``table`` that ``user_id`` moved from voice channel ``was`` to ``now`` (None: no channel).

    A seated player leaving the table's channel asks for a technical pause, and coming back ends it;
    anyone in the channel, seated or not, is observed so the mutes it should have are kept.
    """
    seated = user_id in table.seats
    concerned = seated or table.voice_channel_id in (now, was)
    if concerned:
        table.voice.observe(user_id, muted if now is not None else None)
    if seated and was == table.voice_channel_id and now != table.voice_channel_id:
        await table.player_left_voice(user_id)
    elif seated and now == table.voice_channel_id and was != table.voice_channel_id:
        await table.player_returned(user_id)
    if concerned:
        table.refresh_voice()


def lapses(before: discord.VoiceState, after: discord.VoiceState) -> list[Lapse]:
    """What a member just turned on: a camera, a screen share, deafening themselves (off again is no lapse)."""
    turned_on = [
        (before.self_video, after.self_video, Lapse.CAMERA),
        (before.self_stream, after.self_stream, Lapse.STREAM),
        (before.self_deaf, after.self_deaf, Lapse.DEAFENED),
    ]
    return [lapse for was, now, lapse in turned_on if now and not was and after.channel is not None]


class VoiceCog(commands.Cog):
    """Keeps the voice floor right as people come and go."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        """Route a voice change to the tables it concerns; a member joining voice muted may be owed a lift."""
        guild_id = member.guild.id
        now = after.channel.id if after.channel else None
        was = before.channel.id if before.channel else None
        for table in [tb for tb in self.bot.tables.tables.in_guild(guild_id) if not tb.over]:
            await follow_voice(table, member.id, was, now, muted=after.mute)
            if member.id in table.seats:
                for lapse in lapses(before, after):
                    table.lapse(member.id, lapse)  # the core decides whether it matters now
                if after.channel is not None:
                    before_off = table.camera_off()
                    table.presence(member.id, camera=after.self_video)
                    if table.camera_off() != before_off:
                        self.bot.dispatch("table_presence_changed", table)  # the consoles' camera-off fouls
        if now is not None and was != now:
            await self.bot.tables.mutes.returned(guild_id, member.id, muted=after.mute)


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(VoiceCog(bot))
