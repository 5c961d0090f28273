"""Vote intake by reaction: a ✋ becomes the engine's vote, or comes off the message with its author told why.

The voting cog feeds live reactions here, and the presenter feeds the reactions it finds on the
round's messages after a restart, so both go through the same rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from engine import CastLiftVote, CastVote, RulesError
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.presenter import VOTE_EMOJI
from mafiabot.host.refusals import Action, error_text

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

Emoji = str | discord.PartialEmoji | discord.Emoji


async def vote_by_reaction(
    bot: MafiaBot, table: Table, target: int | str, user_id: int, emoji: Emoji, message_id: int,
    *, member: discord.abc.Messageable | None = None,
) -> bool:
    """Submit the vote a reaction stands for; True if it counted.

    ``member``: who reacted, as the gateway sent them, so telling them why costs no look-up.
    """
    error: RulesError | TableError | None = None
    seat = table.seat_of(user_id)
    if message_id not in table.meta.get("round", []):
        error = TableError("vote.late")
    elif str(emoji) != VOTE_EMOJI:
        error = TableError("vote.wrong_emoji", emoji=VOTE_EMOJI)
    elif seat is None:
        error = TableError("table.not_seated")
    else:
        command = CastLiftVote(seat=seat) if target == "lift" else CastVote(seat=seat, candidate=int(target))
        try:
            await table.submit(command, actor=user_id)
            return True
        except (RulesError, TableError) as exc:
            error = exc
    await refuse_reaction(bot, table, message_id, emoji, user_id, error, member=member)
    return False


async def refuse_reaction(
    bot: MafiaBot, table: Table, message_id: int, emoji: Emoji, user_id: int, error: RulesError | TableError,
    *, member: discord.abc.Messageable | None = None,
) -> None:
    """A reaction that does not count: off the message, and its author told why, once per table."""
    await remove_reaction(bot, table, message_id, emoji, user_id)
    if user_id not in table.told:
        table.told.add(user_id)
        await tell(bot, table, user_id, error_text(table.language, error, bot.commands_text(table.guild_id)),
                   member=member)


async def remove_reaction(bot: MafiaBot, table: Table, message_id: int, emoji: Emoji, user_id: int) -> None:
    """Take a reaction that does not count off the vote message; refused, the judge hears why."""
    # Discord's reaction routes name a custom emoji ``name:id``; its chat form ``<:name:id>``
    # (``str()`` of a custom emoji) is their 400 Unknown Emoji.
    if isinstance(emoji, discord.PartialEmoji | discord.Emoji):
        emoji = f"{emoji.name}:{emoji.id}" if emoji.id else str(emoji.name)
    try:
        await bot.http.remove_reaction(table.channel_id, message_id, emoji, user_id)
    except discord.HTTPException as exc:
        await bot.presenter.refused(table, Action.REMOVE_REACTION, exc)


async def tell(
    bot: MafiaBot, table: Table, user_id: int, text: str, *, member: discord.abc.Messageable | None = None,
) -> None:
    """A private word to a player; closed DMs leave the removed reaction as the answer, and the judge told.

    ``member``: who reacted, as the gateway sent them, so telling them costs no look-up.
    """
    try:
        user = member or bot.get_user(user_id) or await bot.fetch_user(user_id)
        await user.send(text, allowed_mentions=discord.AllowedMentions.none())
    except discord.HTTPException as exc:
        await bot.presenter.refused(table, Action.DIRECT_MESSAGE, exc)
