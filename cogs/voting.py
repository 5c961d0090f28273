"""The vote, by reactions: each living player's first ✋ in the window counts.

Raw reaction events are used so a vote message posted before a restart still counts. A reaction
that does not count (a second vote, a dead player's, a spectator's, a late one, another emoji) is
removed with one request, and its author is told why in a direct message, once per table: a
prankster's reactions must not drain the token's global budget.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from cogs._common import error_text
from engine import CastLiftVote, CastVote, RulesError
from mafiabot.presenter import VOTE_EMOJI
from mafiabot.runtime import Table, TableError

if TYPE_CHECKING:
    from mafiabot.bot import MafiaBot

log = logging.getLogger(__name__)


class VotingCog(commands.Cog):
    """Turns reactions on vote messages into votes."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    def _vote_message(self, channel_id: int, message_id: int) -> tuple[Table, int | str] | None:
        table = self.bot.tables.table_in(channel_id)
        if table is None:
            return None
        target = table.meta.get("votes", {}).get(str(message_id))
        return (table, target) if target is not None else None

    @commands.Cog.listener()
    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """Count a ✋ on the open vote message; remove what does not count."""
        if self.bot.user is not None and payload.user_id == self.bot.user.id:
            return
        found = self._vote_message(payload.channel_id, payload.message_id)
        if found is None:
            return
        table, target = found
        await vote_by_reaction(self.bot, table, target, payload.user_id, payload.emoji, payload.message_id,
                               member=payload.member)


async def vote_by_reaction(
    bot: MafiaBot, table: Table, target: int | str, user_id: int, emoji: str | discord.PartialEmoji, message_id: int,
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
    await _remove_reaction(bot, table.channel_id, message_id, emoji, user_id)
    if user_id not in table.told:
        table.told.add(user_id)
        await _tell(bot, member, user_id, error_text(table.language, error, bot.commands_text(table.guild_id)))
    return False


async def _remove_reaction(
    bot: MafiaBot, channel_id: int, message_id: int, emoji: str | discord.PartialEmoji, user_id: int
) -> None:
    # Discord's reaction routes name a custom emoji ``name:id``; its chat form ``<:name:id>``
    # (``str()`` of a custom emoji) is their 400 Unknown Emoji.
    if isinstance(emoji, discord.PartialEmoji):
        emoji = f"{emoji.name}:{emoji.id}" if emoji.id else str(emoji.name)
    try:
        await bot.http.remove_reaction(channel_id, message_id, emoji, user_id)
    except discord.HTTPException:
        log.info("could not remove a reaction on %s", message_id)


async def _tell(bot: MafiaBot, member: discord.abc.Messageable | None, user_id: int, text: str) -> None:
    try:
        user = member or bot.get_user(user_id)
        if user is not None:
            await user.send(text, allowed_mentions=discord.AllowedMentions.none())
    except discord.HTTPException:
        pass  # closed DMs: the removed reaction is the answer


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(VotingCog(bot))
