"""``/mafia broadcast``: the judge (or staff) gets the table's stream links privately and sets the delay.

Each run hands out a fresh link per tier (public, broadcast, judge) and closes the ones before, so a
leaked link is dealt with by running it again; ``revoke`` closes them without new ones. The delay
is the broadcast tier's: 120 seconds unless the judge names another, 0 included (docs/broadcast.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._ack import in_time
from cogs._cog import MafiaCog
from cogs._common import answer
from cogs._judging import judged_table
from mafiabot.core.runtime import TableError
from mafiabot.host.i18n import t
from mafiabot.host.web.server import links_text

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

DEFAULT_DELAY = 120
"""Seconds the broadcast tier is held back when the judge names no delay: a usual stream delay."""
Delay = app_commands.Range[int, 0, 3600]


class BroadcastCog(MafiaCog):
    """The stream links of a table."""

    @app_commands.command(
        name=_("broadcast", key="cmd.broadcast.name"),
        description=_("Links to stream this table, and the stream's delay (judge)", key="cmd.broadcast.desc"),
    )
    @app_commands.describe(
        delay=_("Seconds the broadcast link is held back (120 unless you say)", key="cmd.broadcast.delay"),
        revoke=_("Close this table's stream links without new ones", key="cmd.broadcast.revoke"),
    )
    @app_commands.rename(delay=_("delay", key="option.delay"), revoke=_("revoke", key="option.revoke"))
    async def broadcast(
        self, interaction: discord.Interaction, delay: Delay | None = None, *, revoke: bool | None = None,
    ) -> None:
        """Hand out the links (or close them); the answer is seen by the caller only."""
        table = await judged_table(self.bot, interaction)
        stream = self.bot.stream
        if stream is None:
            raise TableError("broadcast.off")
        lang = table.language
        if revoke:
            count = await in_time(self.bot, interaction, stream.revoke(table.id), private=True)
            await answer(interaction, t(lang, "broadcast.revoked", count=count))
            return
        seconds = DEFAULT_DELAY if delay is None else delay
        tokens = await in_time(self.bot, interaction, stream.issue(table.id, float(seconds)), private=True)
        await answer(interaction, t(lang, "broadcast.links", delay=seconds, **links_text(stream, tokens)))


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(BroadcastCog(bot), override=True)
