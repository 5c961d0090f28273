"""The seconds after a restart: a command for a table still being resumed waits for it, briefly.

A restarted bot rebuilds its open games from the store one by one (``TableManager.recover``), and
a judge or a player may act in the meantime. Such a command waits until its table is back, at most
``RESUME_WAIT`` seconds (inside Discord's three seconds for a first answer, so nothing is deferred
and every command keeps its own way of answering: public, private or a form); if the table is
still not back, the command is refused with ``table.resuming`` ("try again in a moment"), so nothing
is applied half-way and nobody is told the table does not exist.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import discord

from cogs._ack import DEFER_AFTER
from mafiabot.core.runtime import TableError

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

RESUME_WAIT = DEFER_AFTER
"""Seconds a command waits for its table to come back, on the bot's ``sleep`` (the clock tests hand in)."""


def channels_of(interaction: discord.Interaction) -> set[int]:
    """The interaction's channel, and the thread's parent (the mafia's room belongs to its table's channel)."""
    channels = {interaction.channel_id or 0}
    if isinstance(interaction.channel, discord.Thread) and interaction.channel.parent_id:
        channels.add(interaction.channel.parent_id)
    return channels


async def after_restart(bot: MafiaBot, interaction: discord.Interaction, table_id: int | None = None) -> None:
    """Return once the table this interaction is for is back (or none is coming): at once, almost always.

    Raises:
        TableError: ``table.resuming``: its table is still being resumed after ``RESUME_WAIT`` seconds.
    """
    tables = bot.tables
    channels = channels_of(interaction)
    if not tables.coming(channels, table_id):
        return
    back = asyncio.ensure_future(tables.back(channels, table_id))
    timer = asyncio.ensure_future(bot.sleep(RESUME_WAIT))
    try:
        await asyncio.wait({back, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (back, timer):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if tables.coming(channels, table_id):
        raise TableError("table.resuming")
