"""``MafiaCog``: what every cog of a table concern shares, its ``/mafia`` subcommands and its controls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import discord
from discord import app_commands
from discord.ext import commands

from cogs._ack import arrived
from cogs._common import component_data
from cogs._group import Subcommand, join, leave
from cogs._resume import after_restart
from cogs._routing import Control
from mafiabot.core.runtime import TableError

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


class MafiaCog(commands.Cog):
    """A cog whose slash commands are ``/mafia`` subcommands and whose ``controls`` route clicks.

    On load its commands join the bot's ``/mafia`` group (``cogs._group``) and its controls are
    registered with ``bot.add_dynamic_items``; on unload both are taken back. Its extension adds it
    with ``bot.add_cog(cog, override=True)``: discord.py adds the root of each of a cog's commands to
    the tree, and for these that root is the ``/mafia`` group already there.
    """

    controls: ClassVar[tuple[type[Control[Any]], ...]] = ()
    """The kinds of control this cog handles."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self._joined: list[Subcommand] = []

    async def cog_load(self) -> None:
        """Join ``/mafia`` and route the controls."""
        self._joined = list(self.get_app_commands())
        join(self.bot, self._joined)
        self.bot.add_dynamic_items(*self.controls)

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        """Every subcommand's first check: Discord's three seconds start now, before any store read.

        Then it waits for its table to come back after a restart (``cogs._resume``); a table still not
        back is a refusal, which the ``/mafia`` group's error handler answers.
        """
        arrived(self.bot, interaction)
        try:
            await after_restart(self.bot, interaction)
        except TableError as exc:
            if interaction.command is None:
                raise
            raise app_commands.CommandInvokeError(interaction.command, exc) from exc
        return True

    async def cog_unload(self) -> None:
        """Leave ``/mafia`` (if it is still there: the bot may be closing) and stop routing the controls."""
        leave(self.bot, self._joined)
        self.bot.remove_dynamic_items(*self.controls)


def is_routed(bot: commands.Bot, interaction: discord.Interaction) -> bool:
    """Whether discord.py will route this click to a loaded cog's control.

    It does when the custom id matches a control's template and the clicked message carries that
    component (discord.py builds the control from it); a custom id that is on no message of the
    bot's, or of no kind any cog handles, is stale or forged.
    """
    data = component_data(interaction)
    custom_id = str(data.get("custom_id", ""))
    kinds = [control for cog in bot.cogs.values() if isinstance(cog, MafiaCog) for control in cog.controls]
    if interaction.message is None or not any(kind.__discord_ui_compiled_template__.fullmatch(custom_id)
                                              for kind in kinds):
        return False
    layout = interaction.message.flags.components_v2
    view = (discord.ui.LayoutView if layout else discord.ui.View).from_message(interaction.message, timeout=None)
    component_type = data.get("component_type")
    return any(getattr(item, "custom_id", None) == custom_id and item.type.value == component_type
               for item in view.walk_children())
