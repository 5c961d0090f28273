"""``/mafia ruleset``: a server's own rulesets (upload, list, show, remove), and the ruleset autocomplete.

A club whose bot someone else hosts cannot put files on that machine, so an admin (Manage Server)
attaches the TOML to ``/mafia ruleset upload``. The file goes through the same validation as
``mafiabot simulate --ruleset club.toml`` (``mafiabot.store.rulesets.parse_ruleset``); a refusal names
the key and stores nothing. Tables copy the ruleset when they open and games keep that copy, so
replacing or removing a ruleset never changes a game already played.

The group joins the ``/mafia`` group that ``cogs.mafia`` builds, so this extension loads after it.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from cogs._common import answer, is_admin, language_of, refuse
from mafiabot.core.runtime import TableError
from mafiabot.host.i18n import ruleset_name, t
from mafiabot.host.refusals import error_text
from mafiabot.store.rulesets import (
    MAX_RULESET_BYTES,
    MAX_SERVER_RULESETS,
    NamedRuleset,
    RulesetFileError,
    parse_ruleset,
    ruleset_key,
)

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

MAX_CHOICES = 25
"""Discord shows at most 25 autocomplete choices."""
CHOICE_NAME_LIMIT = 100
PAGE_LIMIT = 1900


def _matches(ruleset: NamedRuleset, typed: str, language: str) -> bool:
    typed = typed.strip().casefold()
    shown = ruleset_name(language, ruleset.name).casefold()
    return not typed or typed in ruleset.key or typed in ruleset.name.casefold() or typed in shown


def _choices(rulesets: list[NamedRuleset], typed: str, language: str) -> list[app_commands.Choice[str]]:
    return [app_commands.Choice(name=ruleset_name(language, r.name)[:CHOICE_NAME_LIMIT], value=r.key)
            for r in rulesets if _matches(r, typed, language)][:MAX_CHOICES]


async def ruleset_autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """Every ruleset a table of this server may play, by the name tables show: presets, host's, server's.

    A preset shows its name in the server's language (the value stays its key).
    """
    bot: MafiaBot = interaction.client  # type: ignore[assignment]
    language = await language_of(bot, interaction)
    return _choices(await bot.rulesets.available(interaction.guild_id or 0), current, language)


async def own_ruleset_autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """The server's own rulesets: the ones ``remove`` can take away."""
    bot: MafiaBot = interaction.client  # type: ignore[assignment]
    language = await language_of(bot, interaction)
    return _choices(await bot.rulesets.of_guild(interaction.guild_id or 0), current, language)


async def league_ruleset_autocomplete(
    interaction: discord.Interaction, current: str,
) -> list[app_commands.Choice[str]]:
    """Rulesets by the name their games are recorded under, for the league table."""
    bot: MafiaBot = interaction.client  # type: ignore[assignment]
    language = await language_of(bot, interaction)
    rulesets = [r for r in await bot.rulesets.available(interaction.guild_id or 0) if _matches(r, current, language)]
    return [app_commands.Choice(name=ruleset_name(language, r.name)[:CHOICE_NAME_LIMIT], value=r.name)
            for r in rulesets][:MAX_CHOICES]


def refusal(exc: RulesetFileError) -> TableError:
    """The localized refusal of a bad file: the key named, with the engine's reason (as the CLI prints it)."""
    data = {"key": exc.key, **exc.data}
    if exc.code == "too_large":
        return TableError("ruleset.too_large", **data)
    if exc.code == "not_text":
        return TableError("ruleset.not_text", **data)
    if exc.code == "bad_name":
        return TableError("ruleset.bad_name", **data)
    if exc.code == "preset_name":
        return TableError("ruleset.preset_name", **data)
    if exc.code == "too_high":
        return TableError("ruleset.too_high", **data)
    if exc.code == "out_of_range":
        return TableError("ruleset.out_of_range", **data)
    return TableError("ruleset.invalid", key=exc.key, reason=exc.reason)


def source_text(language: str, named: NamedRuleset) -> str:
    """Where a ruleset comes from, in words."""
    if named.source == "preset":
        return t(language, "ruleset.source.preset")
    if named.source == "host":
        return t(language, "ruleset.source.host")
    return t(language, "ruleset.source.server")


class RulesetGroup(app_commands.Group):
    """``/mafia ruleset``."""

    def __init__(self, bot: MafiaBot) -> None:
        super().__init__(name=_("ruleset", key="cmd.ruleset.name"),
                         description=_("This server's own rulesets", key="cmd.ruleset.desc"))
        self.bot = bot

    @app_commands.command(name=_("upload", key="cmd.ruleset.upload.name"),
                          description=_("Add or replace a ruleset from a TOML file (Manage Server)",
                                        key="cmd.ruleset.upload.desc"))
    @app_commands.describe(file=_("The ruleset .toml file (see docs/rulesets.md)", key="cmd.ruleset.upload.file"))
    @app_commands.rename(file=_("file", key="option.file"))
    async def upload(self, interaction: discord.Interaction, file: discord.Attachment) -> None:
        """Validate the attached TOML and keep it for this server; nothing is stored on a refusal."""
        bot = self.bot
        if not is_admin(interaction):
            await refuse(bot, interaction, TableError("ruleset.not_admin"))
            return
        if not file.filename.lower().endswith(".toml"):
            await refuse(bot, interaction, TableError("ruleset.not_toml", file=file.filename))
            return
        if file.size > MAX_RULESET_BYTES:
            await refuse(bot, interaction, TableError("ruleset.too_large", key="file", size=file.size,
                                                      max=MAX_RULESET_BYTES))
            return
        # Fetching the file from Discord's CDN may take longer than the 3 s an answer may wait.
        await interaction.response.defer(ephemeral=True, thinking=True)
        language = await language_of(bot, interaction)
        try:
            text = await self._keep(interaction, file, language)
        except TableError as exc:
            text = error_text(language, exc, bot.commands_text(interaction.guild_id))
        await interaction.edit_original_response(content=text)

    async def _keep(self, interaction: discord.Interaction, file: discord.Attachment, language: str) -> str:
        """Download, validate and store the file; the answer, or a ``TableError`` that stored nothing."""
        bot = self.bot
        try:
            raw = await file.read()
        except discord.HTTPException:
            raise TableError("ruleset.download_failed", file=file.filename) from None
        try:
            rules = parse_ruleset(raw, default_name=file.filename.rsplit(".", 1)[0])
        except RulesetFileError as exc:
            raise refusal(exc) from None
        key = ruleset_key(rules.name)
        if key in bot.rulesets.hosted:
            raise TableError("ruleset.host_name", name=rules.name)
        outcome = await bot.store.save_guild_ruleset(
            guild_id=interaction.guild_id or 0, key=key, ruleset=rules, source=raw.decode("utf-8"),
            uploaded_by=interaction.user.id, limit=MAX_SERVER_RULESETS,
        )
        if outcome == "full":
            raise TableError("ruleset.full", count=MAX_SERVER_RULESETS)
        sizes = ", ".join(map(str, rules.player_counts))
        message = "ruleset.saved" if outcome == "saved" else "ruleset.replaced"
        return t(language, message, name=rules.name, sizes=sizes, **bot.commands_text(interaction.guild_id))

    @app_commands.command(name=_("list", key="cmd.ruleset.list.name"),
                          description=_("Every ruleset tables here may play", key="cmd.ruleset.list.desc"))
    async def list_(self, interaction: discord.Interaction) -> None:
        """Presets, the host's rulesets and the server's own, with their table sizes."""
        language = await language_of(self.bot, interaction)
        lines = [t(language, "ruleset.list.title")]
        for named in await self.bot.rulesets.available(interaction.guild_id or 0):
            lines.append(t(language, "ruleset.list.line", name=ruleset_name(language, named.name), key=named.key,
                           source=source_text(language, named),
                           sizes=", ".join(map(str, named.ruleset.player_counts))))
        await answer(interaction, "\n".join(lines)[:PAGE_LIMIT])

    @app_commands.command(name=_("show", key="cmd.ruleset.show.name"),
                          description=_("A ruleset in words, with its file", key="cmd.ruleset.show.desc"))
    @app_commands.describe(ruleset=_("The ruleset", key="cmd.ruleset.show.ruleset"))
    @app_commands.autocomplete(ruleset=ruleset_autocomplete)
    @app_commands.rename(ruleset=_("ruleset", key="option.ruleset"))
    async def show(self, interaction: discord.Interaction, ruleset: str) -> None:
        """The ruleset's rules in words; a custom one also comes with its TOML as a file."""
        from cogs.mafia import rules_lines

        language = await language_of(self.bot, interaction)
        named = await self.bot.rulesets.find(interaction.guild_id or 0, ruleset)
        if named is None:
            await refuse(self.bot, interaction, TableError("ruleset.not_found", name=ruleset))
            return
        text = "\n".join(rules_lines(language, named.ruleset, named.ruleset.default_players))[:PAGE_LIMIT]
        if not named.text:
            await answer(interaction, text)
            return
        attachment = discord.File(io.BytesIO(named.text.encode("utf-8")), filename=f"{_file_stem(named.key)}.toml")
        await interaction.response.send_message(text, file=attachment, ephemeral=True)

    @app_commands.command(name=_("remove", key="cmd.ruleset.remove.name"),
                          description=_("Remove one of this server's rulesets (Manage Server)",
                                        key="cmd.ruleset.remove.desc"))
    @app_commands.describe(ruleset=_("The server's ruleset", key="cmd.ruleset.remove.ruleset"))
    @app_commands.autocomplete(ruleset=own_ruleset_autocomplete)
    @app_commands.rename(ruleset=_("ruleset", key="option.ruleset"))
    async def remove(self, interaction: discord.Interaction, ruleset: str) -> None:
        """Forget a server's ruleset; games played with it keep their own copy."""
        bot = self.bot
        if not is_admin(interaction):
            await refuse(bot, interaction, TableError("ruleset.not_admin"))
            return
        guild_id = interaction.guild_id or 0
        key = ruleset_key(ruleset)
        stored = await bot.store.get_guild_ruleset(guild_id, key)
        if stored is None:
            await refuse(bot, interaction, TableError("ruleset.not_found", name=ruleset))
            return
        settings = await bot.guild_settings(guild_id)
        if ruleset_key(settings.default_ruleset) == key:
            await refuse(bot, interaction, TableError("ruleset.is_default", name=stored.name))
            return
        await bot.store.remove_guild_ruleset(guild_id, key)
        await answer(interaction, t(await language_of(bot, interaction), "ruleset.removed", name=stored.name))


def _file_stem(key: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in key) or "ruleset"


class RulesetsCog(commands.Cog):
    """Adds ``/mafia ruleset`` to the ``/mafia`` group."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self.group = RulesetGroup(bot)

    def _mafia(self) -> app_commands.Group:
        group = self.bot.tree.get_command("mafia")
        if not isinstance(group, app_commands.Group):
            raise RuntimeError("cogs.rulesets needs cogs.mafia loaded first")
        return group

    async def cog_load(self) -> None:
        """Join the ``/mafia`` group."""
        self._mafia().add_command(self.group)

    async def cog_unload(self) -> None:
        """Leave the ``/mafia`` group, if it is still there (the bot may be closing)."""
        group = self.bot.tree.get_command("mafia")
        if isinstance(group, app_commands.Group):
            group.remove_command(self.group.name)


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(RulesetsCog(bot))


__all__: list[Any] = ["RulesetsCog", "league_ruleset_autocomplete", "own_ruleset_autocomplete", "ruleset_autocomplete"]
