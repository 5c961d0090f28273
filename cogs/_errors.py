"""The one answer to whatever a command or a click could not do.

Slash commands reach it through the ``/mafia`` group's error handler, clicks through ``Control``'s
callback. Everything that fails gets a private answer in the table's language:

- a refusal (``RefusalError``: the rules' ``RulesError`` or the table's ``TableError``) says why, from
  the catalog's ``error.<code>``;
- a database outage (``StoreUnavailableError``) says that nothing changed;
- an option value Discord's own client would not send (a modified client, a stale command) says so;
- anything else is a fault: logged with its trace, and answered that nothing changed.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from cogs._common import answer, bot_of, component_data, language_of
from engine.errors import RefusalError
from mafiabot.core.errors import StoreUnavailableError
from mafiabot.host.i18n import t
from mafiabot.host.refusals import error_text

log = logging.getLogger(__name__)


def _what(interaction: discord.Interaction) -> str:
    """The command or control that failed, for the log."""
    if interaction.command is not None:
        return "/" + interaction.command.qualified_name
    data = component_data(interaction)
    return f"control {str(data.get('custom_id', ''))[:100]!r}"


async def _language(interaction: discord.Interaction) -> str:
    """The answer's language; the configured default when the server's settings cannot be read."""
    bot = bot_of(interaction)
    try:
        return await language_of(bot, interaction)
    except StoreUnavailableError:
        return bot.config.game.language


async def answer_error(interaction: discord.Interaction, error: Exception) -> None:
    """Answer ``error`` privately; only a fault is logged with its trace."""
    bot = bot_of(interaction)
    language = await _language(interaction)
    original = error.original if isinstance(error, app_commands.CommandInvokeError) else error
    if isinstance(original, RefusalError):
        text = error_text(language, original, bot.commands_text(interaction.guild_id))
    elif isinstance(original, StoreUnavailableError):
        log.warning("%s: the database is unavailable: %s", _what(interaction), original)
        text = t(language, "error.store.down")
    elif isinstance(original, app_commands.TransformerError | app_commands.CheckFailure):
        # Discord's client sends only option values the command declares: answered, not a traceback.
        log.info("refused %s with a bad option: %s", _what(interaction), original)
        text = t(language, "error.bad_option")
    else:
        log.error("%s failed", _what(interaction), exc_info=original)
        text = t(language, "error.unexpected")
    try:
        await answer(interaction, text)
    except discord.HTTPException:
        log.info("could not answer a failed %s", _what(interaction))
