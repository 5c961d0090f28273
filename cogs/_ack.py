"""Discord's three seconds: a command whose store write is slow defers its interaction in time.

Discord shows "This interaction failed" when an interaction gets no first answer within 3 s. A
command's events are written before it is answered (nothing is shown that is not durable), so a
slow database must not cost that answer: when the write has not returned after ``DEFER_AFTER``
seconds, the interaction is deferred, and the real answer follows when the write is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

import discord

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFER_AFTER = 2.0
"""Seconds a write may take before the interaction is deferred: a second is left for the defer itself."""


async def in_time(bot: MafiaBot, interaction: discord.Interaction, work: Awaitable[T], *, private: bool) -> T:
    """Await ``work``; defer ``interaction`` if it is still running after ``DEFER_AFTER`` seconds.

    ``private``: the answer will be a private message (deferred as an ephemeral "thinking");
    otherwise it edits the clicked message or is none (a deferred update). The wait uses the
    bot's ``sleep``, the clock the bot is handed.
    """
    task = asyncio.ensure_future(work)
    timer = asyncio.ensure_future(bot.sleep(DEFER_AFTER))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and not interaction.response.is_done():
            try:
                if private:
                    await interaction.response.defer(ephemeral=True, thinking=True)
                else:
                    await interaction.response.defer()
            except discord.HTTPException as exc:
                log.warning("could not defer a slow interaction: %s", exc)
        return await task
    finally:
        timer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await timer
