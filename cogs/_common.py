"""Shared helpers for the cogs: the bot of an interaction, its language, private answers, who clicked where."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import discord

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table
    from mafiabot.host.bot import MafiaBot


def bot_of(interaction: discord.Interaction) -> MafiaBot:
    """The bot an interaction came to (a component's callback is handed no cog)."""
    return cast("MafiaBot", interaction.client)


def component_data(interaction: discord.Interaction) -> dict[str, object]:
    """A click's data (custom id, component type, values); empty for a malformed payload."""
    data = interaction.data
    return dict(data) if isinstance(data, dict) else {}


def table_here(bot: MafiaBot, interaction: discord.Interaction) -> Table | None:
    """The running table of the channel, or of the thread's parent channel (the mafia's room)."""
    table = bot.tables.table_in(interaction.channel_id or 0)
    if table is None and isinstance(interaction.channel, discord.Thread) and interaction.channel.parent_id:
        table = bot.tables.table_in(interaction.channel.parent_id)
    return table


async def language_of(bot: MafiaBot, interaction: discord.Interaction) -> str:
    """The table's language in this channel, else the lobby's, else the guild's, else the configured default."""
    if interaction.channel_id is not None:
        table = table_here(bot, interaction)
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


async def private(interaction: discord.Interaction, text: str, view: discord.ui.View | None = None) -> None:
    """A private answer to a click, with a private menu if ``view`` is given.

    The menu's own clicks are routed by their custom ids, so the view is not kept once sent.
    """
    kwargs: dict[str, Any] = {"ephemeral": True, "allowed_mentions": discord.AllowedMentions.none()}
    if view is not None:
        kwargs["view"] = view
    if interaction.response.type is discord.InteractionResponseType.deferred_channel_message:
        # Deferred while a slow write ran: the answer takes the place of "thinking…".
        kwargs.pop("ephemeral")
        await interaction.edit_original_response(content=text, **kwargs)
    elif interaction.response.is_done():
        await interaction.followup.send(text, **kwargs)
    else:
        await interaction.response.send_message(text, **kwargs)
    if view is not None:
        view.stop()


async def replace(interaction: discord.Interaction, text: str) -> None:
    """Put ``text`` in place of the private menu that was used."""
    if interaction.response.is_done():  # deferred while a slow write ran
        await interaction.edit_original_response(content=text, view=None)
    else:
        await interaction.response.edit_message(content=text, view=None)


def voice_channel_id(member: discord.abc.User | discord.Member | None) -> int | None:
    """The voice channel ``member`` is connected to, if any."""
    if isinstance(member, discord.Member) and member.voice is not None and member.voice.channel is not None:
        return member.voice.channel.id
    return None


def is_admin(interaction: discord.Interaction) -> bool:
    """Members with Manage Server may act as any table's judge."""
    permissions = interaction.permissions
    return bool(permissions.manage_guild or permissions.administrator)
