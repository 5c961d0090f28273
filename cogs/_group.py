"""``/mafia``: the one slash command, whose subcommands the cogs bring.

Discord allows 25 subcommands and groups under a command. ``/mafia`` had them all (``/mafia status``
took in what ``/mafia fouls`` showed, to make room for ``/mafia panel``); the judge's pause, resume
and extend went into ``/mafia clock`` to make room again (docs/playing.md says so). Each cog
declares its subcommands as ordinary ``app_commands.command`` methods and derives from
``cogs._cog.MafiaCog``, which puts them into the bot's ``/mafia`` group when the cog loads and takes
them out when it unloads. The group is made by the first cog that loads, once per bot (a process may
run several bots, as the tests do), and answers every failure of its subcommands through ``cogs._errors``.

Users see the subcommands in ``ORDER``, whichever cog loads first: the order is part of the command
tree Discord is sent, which stays the same from one release to the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from cogs._errors import answer_error

ORDER = (
    "history", "game", "stats", "top",
    "foul", "unfoul", "remove", "clock", "skip", "nominate", "draw", "end", "points",
    "judge", "panel", "broadcast", "protest",
    "new", "start", "cancel", "status", "rules", "settings", "ruleset", "tournament",
)
"""The subcommands in the order the bot has always sent them to Discord; one not named here goes last."""

Subcommand = app_commands.Command[Any, ..., Any] | app_commands.Group


@app_commands.guild_only()
class MafiaGroup(app_commands.Group, name=_("mafia", key="cmd.mafia.name"),
                 description=_("Host a sport Mafia table", key="cmd.mafia.desc")):
    """The ``/mafia`` group, with one error handler for every subcommand."""

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        """Every ``/mafia`` failure gets a private answer (see ``cogs._errors``)."""
        await answer_error(interaction, error)


def mafia_group(bot: commands.Bot) -> app_commands.Group:
    """The bot's ``/mafia`` group, made and added to its command tree the first time it is asked for."""
    group = bot.tree.get_command("mafia")
    if isinstance(group, app_commands.Group):
        return group
    group = MafiaGroup()
    bot.tree.add_command(group)
    return group


def _position(command: Subcommand) -> int:
    return ORDER.index(command.name) if command.name in ORDER else len(ORDER)


def join(bot: commands.Bot, subcommands: Sequence[Subcommand]) -> None:
    """Put ``subcommands`` into ``/mafia`` and keep the group in ``ORDER``."""
    group = mafia_group(bot)
    for command in subcommands:
        group.add_command(command)
    arranged = sorted(group.commands, key=_position)
    for command in arranged:
        group.remove_command(command.name)
    for command in arranged:
        group.add_command(command)


def leave(bot: commands.Bot, subcommands: Sequence[Subcommand]) -> None:
    """Take ``subcommands`` out of ``/mafia``; an empty group leaves the tree (Discord refuses one)."""
    group = bot.tree.get_command("mafia")
    if not isinstance(group, app_commands.Group):
        return
    for command in subcommands:
        if group.get_command(command.name) is command:
            group.remove_command(command.name)
    if not group.commands:
        bot.tree.remove_command("mafia")

