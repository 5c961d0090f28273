"""The ruleset autocompletes, shared by the cogs whose commands take a ruleset.

``/mafia new``, ``settings`` and ``ruleset show`` offer every ruleset a table here may play,
``ruleset remove`` the server's own, ``top`` the names games are recorded under. A preset shows its
name in the server's language (the value stays its key).
"""

from __future__ import annotations

from discord import Interaction, app_commands

from cogs._common import bot_of, language_of
from mafiabot.core.rulesets import NamedRuleset
from mafiabot.host.i18n import ruleset_name

MAX_CHOICES = 25
"""Discord shows at most 25 autocomplete choices."""
CHOICE_NAME_LIMIT = 100


def _matches(ruleset: NamedRuleset, typed: str, language: str) -> bool:
    typed = typed.strip().casefold()
    shown = ruleset_name(language, ruleset.name).casefold()
    return not typed or typed in ruleset.key or typed in ruleset.name.casefold() or typed in shown


def _choices(rulesets: list[NamedRuleset], typed: str, language: str) -> list[app_commands.Choice[str]]:
    return [app_commands.Choice(name=ruleset_name(language, r.name)[:CHOICE_NAME_LIMIT], value=r.key)
            for r in rulesets if _matches(r, typed, language)][:MAX_CHOICES]


async def ruleset_autocomplete(interaction: Interaction, current: str) -> list[app_commands.Choice[str]]:
    """Every ruleset a table of this server may play, by the name tables show: presets, host's, server's."""
    bot = bot_of(interaction)
    language = await language_of(bot, interaction)
    return _choices(await bot.rulesets.available(interaction.guild_id or 0), current, language)


async def own_ruleset_autocomplete(interaction: Interaction, current: str) -> list[app_commands.Choice[str]]:
    """The server's own rulesets: the ones ``remove`` can take away."""
    bot = bot_of(interaction)
    language = await language_of(bot, interaction)
    return _choices(await bot.rulesets.of_guild(interaction.guild_id or 0), current, language)


async def league_ruleset_autocomplete(interaction: Interaction, current: str) -> list[app_commands.Choice[str]]:
    """Rulesets by the name their games are recorded under, for the league table."""
    bot = bot_of(interaction)
    language = await language_of(bot, interaction)
    rulesets = [r for r in await bot.rulesets.available(interaction.guild_id or 0) if _matches(r, current, language)]
    return [app_commands.Choice(name=ruleset_name(language, r.name)[:CHOICE_NAME_LIMIT], value=r.name)
            for r in rulesets][:MAX_CHOICES]
