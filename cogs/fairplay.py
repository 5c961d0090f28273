"""Fair play in the table's text channel and as night falls, reported to the judges.

A seated player writing in the table's channel at night is a lapse. Only the author and the
channel are read, which Discord sends without the message content intent; what the message says is
never needed. The mafia's room is a thread of the channel, a channel of its own, so the black team
talking there at night is not a lapse.

A camera or screen share turned on is seen by ``cogs.voice``; one already on when night falls
sends no voice update, so after each command's public messages (the presenter's listeners) the
seated players' voice states are read from the cache, no request, and the core decides. The same
look finds a camera off when an online club's ruleset wants it on (``presence``): the floor passing
to a player with his camera off sends no voice update either. That alert carries a button that
gives the player a foul in one click.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from cogs._ack import in_time
from cogs._cog import MafiaCog
from cogs._judging import player_label
from cogs._routing import Button, Control, template
from engine import GiveFoul
from mafiabot.core.fairplay import Lapse, left_on
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.fairplay import PRESENCE_FOUL
from mafiabot.host.i18n import t

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


class PresenceFoul(Control[Button], template=template(PRESENCE_FOUL)):
    """The foul button on a camera-off alert, in a judge's direct messages: ``mafia:presfoul:<table>:<seat>``."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """A foul for the seat, given by the clicking judge; the alert then says so and loses its button.

        The click comes from a direct message, so no channel names the table: the custom id does, and
        only the table's judges (the alert's only readers) may use it.
        """
        table = bot.tables.tables.get(self.target)
        if table is None or table.over:
            raise TableError("table.gone")
        if interaction.user.id not in table.judges:
            raise TableError("table.not_judge")
        arg = str(self.item.custom_id).rsplit(":", 1)[-1]
        if not (arg.isascii() and arg.isdigit() and len(arg) <= 2):
            raise TableError("control.bad_value")
        seat = int(arg)
        await in_time(bot, interaction, table.submit(GiveFoul(seat=seat), actor=interaction.user.id), private=False)
        text = "\n".join([str(interaction.message.content if interaction.message else ""),
                          "✅ " + t(table.language, "judge.done.foul", player=player_label(table, seat), reason="")])
        none = discord.AllowedMentions.none()
        if interaction.response.is_done():
            await interaction.edit_original_response(content=text[:2000], view=None, allowed_mentions=none)
        else:
            await interaction.response.edit_message(content=text[:2000], view=None, allowed_mentions=none)


class FairPlayCog(MafiaCog):
    """Tells the judges of seated players' lapses in the table's channel and of cameras left on at night."""

    controls = (PresenceFoul,)

    def _listeners(self) -> list[Callable[[Table], None]]:
        # A bare command tree (its tests load the cogs into a plain bot) has no presenter to hear.
        presenter = getattr(self.bot, "presenter", None)
        return presenter.listeners if presenter is not None else []

    async def cog_load(self) -> None:
        """Hear of every command's messages being out, to look at cameras as time moves on; route the foul button."""
        await super().cog_load()
        self._listeners().append(self.moved_on)

    async def cog_unload(self) -> None:
        """Stop looking."""
        await super().cog_unload()
        listeners = self._listeners()
        if self.moved_on in listeners:
            listeners.remove(self.moved_on)

    def moved_on(self, table: Table) -> None:
        """The table moved on (night may have fallen): a camera or screen share still on is a lapse now.

        Each alert comes once per player, kind and phase (the core remembers), so asking after every
        command costs a look at the cache and nothing more.
        """
        guild = self.bot.get_guild(table.guild_id)
        if guild is None or table.over:
            return
        before = table.camera_off()
        for user_id in table.seats:
            member = guild.get_member(user_id)
            voice = member.voice if member is not None else None
            if voice is None or voice.channel is None:
                continue
            for lapse in left_on(table.game.state, camera=voice.self_video, stream=voice.self_stream):
                table.lapse(user_id, lapse)
            table.presence(user_id, camera=voice.self_video)
        if table.camera_off() != before:
            self.bot.dispatch("table_presence_changed", table)  # the consoles offer the foul, or stop offering it

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
    await bot.add_cog(FairPlayCog(bot), override=True)
