"""Shared helpers for the cogs: the bot of an interaction, its language, private answers, who clicked where."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import discord
from discord.utils import MISSING

from cogs._ack import deferred_privately, original_filled, original_pending
from mafiabot.host.i18n import t

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


async def respond(
    interaction: discord.Interaction, text: str, *, ephemeral: bool = True,
    mentions: discord.AllowedMentions | None = None, view: discord.ui.View | None = None,
    files: Sequence[discord.File] = (),
) -> int | None:
    """Give the interaction its answer, wherever it stands; the answer's message id when Discord tells it.

    Unanswered: the answer itself. Deferred: the answer takes the "thinking" message's place (Edit
    Original Interaction Response, as Discord documents), unless their privacy differs (a message's
    cannot change): then the thinking message goes and the answer follows up. Answered: a follow-up.
    """
    kwargs: dict[str, Any] = {"allowed_mentions": mentions or discord.AllowedMentions.none()}
    if view is not None:
        kwargs["view"] = view
    if original_pending(interaction):
        original_filled(interaction)
        if ephemeral == deferred_privately(interaction):
            edited = await interaction.edit_original_response(content=text, attachments=list(files) or MISSING,
                                                              **kwargs)
            return edited.id
        await interaction.delete_original_response()
    if interaction.response.is_done():
        sent = await interaction.followup.send(text, ephemeral=ephemeral, files=list(files) or MISSING, wait=True,
                                               **kwargs)
        return sent.id
    answered = await interaction.response.send_message(text, ephemeral=ephemeral, files=list(files) or MISSING,
                                                       **kwargs)
    return int(answered.message_id) if answered.message_id is not None else None


async def answer(
    interaction: discord.Interaction, text: str, *, ephemeral: bool = True,
    mentions: discord.AllowedMentions | None = None,
) -> None:
    """Reply once, or fill in a deferred "thinking…", or follow up if the interaction was already answered.

    Answers echo what users typed (names, reasons), so they ping nobody unless ``mentions`` says whom.
    """
    await respond(interaction, text, ephemeral=ephemeral, mentions=mentions)


async def private(interaction: discord.Interaction, text: str, view: discord.ui.View | None = None) -> None:
    """A private answer to a click, with a private menu if ``view`` is given.

    The menu's own clicks are routed by their custom ids, so the view is not kept once sent.
    """
    await respond(interaction, text, view=view)
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


MESSAGE_LIMIT = 2000
"""Discord's longest message content."""


def may_attach(interaction: discord.Interaction) -> bool:
    """Whether the bot may attach files to its answer here (Discord checks Attach Files on interaction answers)."""
    return bool(interaction.app_permissions.attach_files)


def without_files(language: str, texts: Sequence[str]) -> list[str]:
    """``texts`` with a note on why no file comes with them: at the end of the last page, or a page of its own."""
    note = t(language, "files.not_allowed")
    *head, last = texts
    if len(last) + 2 + len(note) <= MESSAGE_LIMIT:
        return [*head, f"{last}\n\n{note}"]
    return [*texts, note]


def member_name(interaction: discord.Interaction) -> Callable[[int | None], str]:
    """A member's name on this server by id ("" when unknown), for the FIIM blank's judge line."""
    def name(user_id: int | None) -> str:
        member = interaction.guild.get_member(user_id) if interaction.guild and user_id else None
        return member.display_name if member is not None else ""
    return name
