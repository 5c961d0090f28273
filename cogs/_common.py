"""Shared helpers for the cogs: localized answers and the language of an interaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from engine import RulesError
from mafiabot.core.runtime import TableError
from mafiabot.host.refusals import error_text

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


async def language_of(bot: MafiaBot, interaction: discord.Interaction) -> str:
    """The table's language in this channel, else the guild's, else the configured default."""
    if interaction.channel_id is not None:
        table = bot.tables.table_in(interaction.channel_id)
        if table is None and isinstance(interaction.channel, discord.Thread) and interaction.channel.parent_id:
            table = bot.tables.table_in(interaction.channel.parent_id)
        if table is not None:
            return table.language
        lobby = bot.tables.lobby_in(interaction.channel_id)
        if lobby is not None:
            return lobby.language
    if interaction.guild_id is not None:
        settings = await bot.guild_settings(interaction.guild_id)
        if settings.language:
            return settings.language
    return bot.config.game.language


async def answer(
    interaction: discord.Interaction, text: str, *, ephemeral: bool = True,
    mentions: discord.AllowedMentions | None = None,
) -> None:
    """Reply once, or fill in a deferred "thinking…", or follow up if the interaction was already answered.

    Answers echo what users typed (names, reasons), so they ping nobody unless ``mentions`` says whom.
    """
    allowed = mentions or discord.AllowedMentions.none()
    if interaction.response.type is discord.InteractionResponseType.deferred_channel_message:
        await interaction.edit_original_response(content=text, allowed_mentions=allowed)
    elif interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=ephemeral, allowed_mentions=allowed)
    else:
        await interaction.response.send_message(text, ephemeral=ephemeral, allowed_mentions=allowed)


async def refuse(bot: MafiaBot, interaction: discord.Interaction, exc: RulesError | TableError) -> None:
    """Answer a refusal privately, in the table's language."""
    language = await language_of(bot, interaction)
    await answer(interaction, error_text(language, exc, bot.commands_text(interaction.guild_id)))


def voice_channel_id(member: discord.abc.User | discord.Member | None) -> int | None:
    """The voice channel ``member`` is connected to, if any."""
    if isinstance(member, discord.Member) and member.voice is not None and member.voice.channel is not None:
        return member.voice.channel.id
    return None


def is_admin(interaction: discord.Interaction) -> bool:
    """Members with Manage Server may act as any table's judge."""
    permissions = interaction.permissions
    return bool(permissions.manage_guild or permissions.administrator)
