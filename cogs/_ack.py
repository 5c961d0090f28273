"""Discord's three seconds: an interaction is answered or deferred in time, however slow the work before it.

Discord shows "This interaction failed" when an interaction gets no first answer within 3 s of its
arrival, and then refuses any answer (10062). Commands read and write the store, and some draw a
picture, before they answer (nothing is shown that is not durable), so the clock starts when the
interaction arrives (``arrived``: every ``/mafia`` command through its cog's check, every control
when clicked), and the work that precedes an answer runs through ``in_time``: if it is still running
``DEFER_AFTER`` seconds after the arrival, the interaction is deferred, and the real answer follows
when the work is done. A deferral only ever happens while that work runs, never beside an answer
being sent, so the two cannot both claim the interaction.

After a deferral the answer takes the place of the "thinking" message (``original_pending``), as
Discord documents it: Edit Original Interaction Response, not a follow-up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

import discord

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFER_AFTER = 2.0
"""Seconds after an interaction's arrival before it is deferred: a second is left for the defer itself."""

_CLOCK = "mafiabot.ack.clock"
_DEFERRED_PRIVATE = "mafiabot.ack.deferred_private"
_ORIGINAL_FILLED = "mafiabot.ack.original_filled"


def arrived(bot: MafiaBot, interaction: discord.Interaction) -> None:
    """Start the interaction's deferral clock (once), on the bot's ``sleep``: the clock the bot is handed."""
    if _CLOCK not in interaction.extras:
        interaction.extras[_CLOCK] = asyncio.ensure_future(bot.sleep(DEFER_AFTER))


async def in_time(bot: MafiaBot, interaction: discord.Interaction, work: Awaitable[T], *, private: bool) -> T:
    """Await ``work``; defer ``interaction`` if it is still running ``DEFER_AFTER`` seconds after the arrival.

    ``private``: the answer will be a private message (deferred as an ephemeral "thinking");
    otherwise a public one for a command (a public "thinking"), or, for a click, an edit of the
    clicked message or none (a deferred update).
    """
    arrived(bot, interaction)
    clock: asyncio.Future[None] = interaction.extras[_CLOCK]
    task = asyncio.ensure_future(work)
    racing: set[asyncio.Future[Any]] = {task, clock}
    await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
    if not task.done() and not interaction.response.is_done():
        try:
            await defer(interaction, private=private)
        except discord.HTTPException as exc:
            log.warning("could not defer a slow interaction: %s", exc)
    result = await task
    if interaction.response.is_done():
        clock.cancel()
    return result


async def defer(interaction: discord.Interaction, *, private: bool) -> None:
    """Defer now, and remember how: the privacy of a "thinking" message cannot change later.

    A command gets a "thinking" message, private or public; a click a private one (``private``) or a
    deferred update.
    """
    await interaction.response.defer(ephemeral=private, thinking=private)
    interaction.extras[_DEFERRED_PRIVATE] = private


def original_pending(interaction: discord.Interaction) -> bool:
    """Whether the interaction was deferred with a "thinking" message that no answer has replaced yet."""
    deferred = interaction.response.type is discord.InteractionResponseType.deferred_channel_message
    return deferred and not interaction.extras.get(_ORIGINAL_FILLED, False)


def deferred_privately(interaction: discord.Interaction) -> bool:
    """Whether the "thinking" message is private (a message's privacy cannot change once it is sent)."""
    return bool(interaction.extras.get(_DEFERRED_PRIVATE, True))


def original_filled(interaction: discord.Interaction) -> None:
    """Note that the answer took the "thinking" message's place: what follows is a follow-up."""
    interaction.extras[_ORIGINAL_FILLED] = True
