"""A server's settings and rulesets: ``/mafia settings``, ``/mafia rules`` and ``/mafia ruleset …``.

A club whose bot someone else hosts cannot put files on that machine, so an admin (Manage Server)
attaches the TOML to ``/mafia ruleset upload``. The file goes through the same validation as
``mafiabot simulate --ruleset club.toml`` (``mafiabot.core.rulesets.parse_ruleset``); a refusal names
the key and stores nothing. Tables copy the ruleset when they open and games keep that copy, so
replacing or removing a ruleset never changes a game already played.

Staff forget a member with ``/mafia settings forget_member:`` (``/mafia`` has no room for another
subcommand): a private question with one button, and only the click deletes (docs/privacy.md).
"""

from __future__ import annotations

import dataclasses
import io
import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from cogs._autocomplete import own_ruleset_autocomplete, ruleset_autocomplete
from cogs._cog import MafiaCog
from cogs._common import answer, is_admin, language_of, may_attach, replace, respond, table_here, without_files
from cogs._routing import Button, Control, template
from cogs.texts.rules import rules_lines
from cogs.texts.settings import CLEARABLE, LANGUAGE_NAMES, invalid_text, settings_lines
from engine import find_ruleset
from mafiabot.core.errors import SettingsError
from mafiabot.core.records import TIMER_SETTINGS, GuildSettings
from mafiabot.core.rulesets import (
    MAX_RULESET_BYTES,
    MAX_SERVER_RULESETS,
    NamedRuleset,
    RulesetFileError,
    parse_ruleset,
    ruleset_key,
)
from mafiabot.core.runtime import TableError
from mafiabot.host.i18n import ruleset_name, t
from mafiabot.host.render import custom_id

if TYPE_CHECKING:
    from engine import Ruleset
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)
PAGE_LIMIT = 1900


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
    if exc.code == "unknown_setting":
        guess = exc.data.get("guess")
        if guess:
            return TableError("ruleset.unknown_setting_guess", key=exc.key, guess=guess)
        return TableError("ruleset.unknown_setting", key=exc.key)
    return TableError("ruleset.invalid", key=exc.key, reason=exc.reason)


def source_text(language: str, named: NamedRuleset) -> str:
    """Where a ruleset comes from, in words."""
    if named.source == "preset":
        return t(language, "ruleset.source.preset")
    if named.source == "host":
        return t(language, "ruleset.source.host")
    return t(language, "ruleset.source.server")


def _file_stem(key: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in key) or "ruleset"


def _timers(current: GuildSettings, timer: str, seconds: int) -> dict[str, int]:
    """The server's timers with ``timer`` set to ``seconds`` (0: back to the ruleset's)."""
    timers = dict(current.timers)
    if seconds == 0:
        timers.pop(timer, None)
    else:
        timers[timer] = seconds
    return timers


def option_changes(current: GuildSettings, options: dict[str, Any]) -> dict[str, Any]:
    """The settings ``/mafia settings`` options change, as ``GuildSettings`` fields (ruleset aside).

    ``options``: the command's options by name, None where not given; a timer comes with its seconds.
    """
    changes: dict[str, Any] = {}
    for name in ("language", "mute_spectators", "voice_cues", "strict_tables", "seat_nicknames",
                 "judge_sees_roles", "site_pages"):
        if options[name] is not None:
            changes[name] = options[name]
    if options["judge_role"] is not None:
        changes["judge_role_id"] = options["judge_role"].id
    if options.get("organiser_role") is not None:
        changes["organiser_role_id"] = options["organiser_role"].id
    if options["timer"] is not None and options["seconds"] is not None:
        changes["timers"] = _timers(current, options["timer"], options["seconds"])
    if options["vote_window"] is not None:
        changes["vote_window"] = options["vote_window"] or None
    if options["results_channel"] is not None:
        changes["results_channel_id"] = options["results_channel"].id
    if options["clear"] is not None:
        changes[CLEARABLE[options["clear"]]] = {} if options["clear"] == "timers" else None
    return changes


def forget_view(language: str, user_id: int) -> discord.ui.View:
    """The one button that forgets the member: ``mafia:forget:<user id>``."""
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label=t(language, "forget.button"), style=discord.ButtonStyle.danger,
                                    custom_id=custom_id("forget", user_id)))
    return view


class ForgetButton(Control[Button], template=template("forget")):
    """The confirmation of ``forget_member``: staff are asked again at the click, which may come much later."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Forget the member on this server, or refuse and keep everything."""
        if interaction.guild_id is None or not is_admin(interaction):
            raise TableError("forget.not_admin")
        lobby = bot.tables.lobby_of(interaction.guild_id, self.target)
        if lobby is not None:  # the store has no seat of theirs yet: the start would write one after the deletion
            raise TableError("forget.lobby", member=f"<@{self.target}>", channel=lobby.channel_id)
        done = await bot.privacy.forget_member(interaction.guild_id, self.target)
        if done.refused is not None:
            raise TableError("forget.playing" if done.refused == "playing" else "forget.tournament",
                             member=f"<@{self.target}>")
        language = await language_of(bot, interaction)
        await replace(interaction, t(language, "forget.done", member=f"<@{self.target}>", count=done.games))


class SettingsCog(MafiaCog):
    """The server's settings, the rules of a table, and the server's own rulesets."""

    controls = (ForgetButton,)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """Delete nothing: a kick by mistake must not wipe a club's history; the log says how to (docs/privacy.md)."""
        log.info("server %s removed the bot; its records stay (a kick by mistake loses nothing): "
                 "mafiabot forget-guild %s --yes deletes them", guild.id, guild.id)

    @app_commands.command(name=_("rules", key="cmd.rules.name"),
                          description=_("This table's rules in words", key="cmd.rules.desc"))
    async def rules(self, interaction: discord.Interaction) -> None:
        """The ruleset of the table here, of the lobby, or the server's default ruleset."""
        language = await language_of(self.bot, interaction)
        table = table_here(self.bot, interaction)
        lobby = self.bot.tables.lobby_in(interaction.channel_id or 0)
        if table is not None:
            rules, players = table.ruleset, len(table.seats)
        elif lobby is not None:
            rules, players = lobby.ruleset, lobby.seats
        else:
            rules = await self._default_ruleset(interaction.guild_id or 0)
            players = rules.default_players
        await answer(interaction, "\n".join(rules_lines(language, rules, players)))

    async def _default_ruleset(self, guild_id: int) -> Ruleset:
        settings = await self.bot.guild_settings(guild_id)
        named = await self.bot.rulesets.find(guild_id, settings.default_ruleset or self.bot.config.game.default_ruleset)
        return named.ruleset if named is not None else find_ruleset("classic")

    @app_commands.command(name=_("settings", key="cmd.settings.name"),
                          description=_("Show or change this server's settings (Manage Server)",
                                        key="cmd.settings.desc"))
    @app_commands.describe(
        language=_("Language of the bot's messages", key="cmd.settings.language"),
        judge_role=_("Members with this role may judge any table", key="cmd.settings.judge_role"),
        ruleset=_("Ruleset for new tables", key="cmd.settings.ruleset"),
        timer=_("Which timer to set", key="cmd.settings.timer"),
        seconds=_("Seconds for that timer (0: the ruleset's)", key="cmd.settings.seconds"),
        vote_window=_("Seconds of each vote window (0: the ruleset's)", key="cmd.settings.vote_window"),
        mute_spectators=_("Mute spectators in the table's voice channel", key="cmd.settings.mute_spectators"),
        strict_tables=_("Refuse seats to members who could read the mafia's room or unmute themselves",
                        key="cmd.settings.strict_tables"),
        voice_cues=_("Play sound cues in the voice channel", key="cmd.settings.voice_cues"),
        seat_nicknames=_("Put seat numbers in the players' nicknames while a game runs",
                         key="cmd.settings.seat_nicknames"),
        results_channel=_("Also post every result here", key="cmd.settings.results_channel"),
        judge_sees_roles=_("The judge's console shows every role", key="cmd.settings.judge_sees_roles"),
        organiser_role=_("Members with this role may run tournaments", key="cmd.settings.organiser_role"),
        site_pages=_("Publish the club's pages: league, players, games, tournaments",
                     key="cmd.settings.site_pages"),
        hide_my_name=_("Any member: show your seat instead of your name on the club's pages",
                       key="cmd.settings.hide_my_name"),
        forget_member=_("Staff: delete a member's records on this server (asks to confirm)",
                        key="cmd.settings.forget_member"),
        clear=_("Reset one setting", key="cmd.settings.clear"),
    )
    @app_commands.rename(
        language=_("language", key="option.language"), judge_role=_("judge_role", key="option.judge_role"),
        ruleset=_("ruleset", key="option.ruleset"), timer=_("timer", key="option.timer"),
        seconds=_("seconds", key="option.seconds"), vote_window=_("vote_window", key="option.vote_window"),
        mute_spectators=_("mute_spectators", key="option.mute_spectators"),
        voice_cues=_("voice_cues", key="option.voice_cues"),
        results_channel=_("results_channel", key="option.results_channel"),
        clear=_("clear", key="option.clear"), strict_tables=_("strict_tables", key="option.strict_tables"),
        seat_nicknames=_("seat_nicknames", key="option.seat_nicknames"),
        judge_sees_roles=_("judge_sees_roles", key="option.judge_sees_roles"),
        organiser_role=_("organiser_role", key="option.organiser_role"),
        site_pages=_("site_pages", key="option.site_pages"),
        hide_my_name=_("hide_my_name", key="option.hide_my_name"),
        forget_member=_("forget_member", key="option.forget_member"),
    )
    @app_commands.choices(
        language=[app_commands.Choice(name=name, value=code) for code, name in LANGUAGE_NAMES.items()],
        timer=[app_commands.Choice(name=_(t("en", f"timer.{name}"), key=f"timer.{name}"), value=name)
               for name in TIMER_SETTINGS],
        clear=[app_commands.Choice(name=_(t("en", f"cmd.settings.clear.{name}"), key=f"cmd.settings.clear.{name}"),
                                   value=name) for name in CLEARABLE],
    )
    @app_commands.autocomplete(ruleset=ruleset_autocomplete)
    async def settings(
        self, interaction: discord.Interaction, *, language: str | None = None,
        judge_role: discord.Role | None = None, ruleset: str | None = None, timer: str | None = None,
        seconds: int | None = None, vote_window: int | None = None, mute_spectators: bool | None = None,
        voice_cues: bool | None = None, results_channel: discord.TextChannel | None = None,
        clear: str | None = None, strict_tables: bool | None = None, seat_nicknames: bool | None = None,
        judge_sees_roles: bool | None = None, organiser_role: discord.Role | None = None,
        site_pages: bool | None = None, hide_my_name: bool | None = None, forget_member: discord.User | None = None,
    ) -> None:
        """With no option, show the settings; with options, validate, store and show them back.

        ``hide_my_name`` alone is every member's own choice, so it needs no Manage Server.
        """
        given = (language, judge_role, ruleset, timer, seconds, vote_window, mute_spectators, voice_cues,
                 results_channel, clear, strict_tables, seat_nicknames, judge_sees_roles, organiser_role, site_pages)
        if forget_member is not None:
            await self._ask_to_forget(interaction, forget_member.id, alone=hide_my_name is None and not any(
                value is not None for value in given))
            return
        if await self._own_name_only(interaction, hide=hide_my_name, given=given):
            return
        if not is_admin(interaction):
            raise TableError("settings.not_admin")
        current = await self.bot.guild_settings(interaction.guild_id or 0)
        changes = option_changes(current, {
            "language": language, "judge_role": judge_role, "timer": timer, "seconds": seconds,
            "vote_window": vote_window, "mute_spectators": mute_spectators, "voice_cues": voice_cues,
            "strict_tables": strict_tables, "results_channel": results_channel, "clear": clear,
            "seat_nicknames": seat_nicknames,
            "judge_sees_roles": judge_sees_roles, "organiser_role": organiser_role, "site_pages": site_pages,
        })
        if ruleset is not None:
            named = await self.bot.rulesets.find(interaction.guild_id or 0, ruleset)
            if named is None:
                await answer(interaction, t(current.language, "settings.invalid.ruleset", value=ruleset))
                return
            changes["default_ruleset"] = named.key
        if (timer is None) != (seconds is None):
            await answer(interaction, t(current.language, "settings.timer_needs_both"))
            return
        await self._hide_name(interaction, hide=hide_my_name)
        updated = current
        if changes:
            try:
                updated = dataclasses.replace(current, **changes)
            except SettingsError as exc:
                await answer(interaction, invalid_text(current.language, exc))
                return
            await self.bot.settings.save(updated)
            self.bot.dispatch("guild_settings_saved", updated)  # open consoles follow (``cogs.panel``)
        key = "settings.saved" if changes else "settings.title"
        await answer(interaction, "\n".join([t(updated.language, key), *settings_lines(updated)]))

    async def _ask_to_forget(self, interaction: discord.Interaction, user_id: int, *, alone: bool) -> None:
        """Ask staff, privately, to confirm forgetting the member; nothing is deleted before the click."""
        if not is_admin(interaction):
            raise TableError("forget.not_admin")
        if not alone:
            raise TableError("forget.alone")
        language = await language_of(self.bot, interaction)
        await respond(interaction, t(language, "forget.confirm", member=f"<@{user_id}>"),
                      view=forget_view(language, user_id))

    async def _own_name_only(self, interaction: discord.Interaction, *, hide: bool | None,
                             given: tuple[Any, ...]) -> bool:
        """Answer ``hide_my_name`` given alone, which any member may; False when it is not alone."""
        if hide is None or any(value is not None for value in given):
            return False
        await self._hide_name(interaction, hide=hide)
        said = "settings.name_hidden" if hide else "settings.name_shown"
        await answer(interaction, t(await language_of(self.bot, interaction), said))
        return True

    async def _hide_name(self, interaction: discord.Interaction, *, hide: bool | None) -> None:
        if hide is not None:
            await self.bot.settings.hide_name(interaction.guild_id or 0, interaction.user.id, hidden=hide)

    # -- /mafia ruleset --------------------------------------------------------------------------

    ruleset = app_commands.Group(name=_("ruleset", key="cmd.ruleset.name"),
                                 description=_("This server's own rulesets", key="cmd.ruleset.desc"))

    @ruleset.command(name=_("upload", key="cmd.ruleset.upload.name"),
                     description=_("Add or replace a ruleset from a TOML file (Manage Server)",
                                   key="cmd.ruleset.upload.desc"))
    @app_commands.describe(file=_("The ruleset .toml file (see docs/rulesets.md)", key="cmd.ruleset.upload.file"))
    @app_commands.rename(file=_("file", key="option.file"))
    async def upload(self, interaction: discord.Interaction, file: discord.Attachment) -> None:
        """Validate the attached TOML and keep it for this server; nothing is stored on a refusal."""
        if not is_admin(interaction):
            raise TableError("ruleset.not_admin")
        if not file.filename.lower().endswith(".toml"):
            raise TableError("ruleset.not_toml", file=file.filename)
        if file.size > MAX_RULESET_BYTES:
            raise TableError("ruleset.too_large", key="file", size=file.size, max=MAX_RULESET_BYTES)
        # Fetching the file from Discord's CDN may take longer than the 3 s an answer may wait.
        await interaction.response.defer(ephemeral=True, thinking=True)
        language = await language_of(self.bot, interaction)
        await interaction.edit_original_response(content=await self._keep(interaction, file, language))

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
        outcome = await bot.rulesets.keep(interaction.guild_id or 0, rules, raw.decode("utf-8"), interaction.user.id)
        if outcome == "full":
            raise TableError("ruleset.full", count=MAX_SERVER_RULESETS)
        sizes = ", ".join(map(str, rules.player_counts))
        message = "ruleset.saved" if outcome == "saved" else "ruleset.replaced"
        return t(language, message, name=rules.name, sizes=sizes, **bot.commands_text(interaction.guild_id))

    @ruleset.command(name=_("list", key="cmd.ruleset.list.name"),
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

    @ruleset.command(name=_("show", key="cmd.ruleset.show.name"),
                     description=_("A ruleset in words, with its file", key="cmd.ruleset.show.desc"))
    @app_commands.describe(ruleset=_("The ruleset", key="cmd.ruleset.show.ruleset"))
    @app_commands.autocomplete(ruleset=ruleset_autocomplete)
    @app_commands.rename(ruleset=_("ruleset", key="option.ruleset"))
    async def show(self, interaction: discord.Interaction, ruleset: str) -> None:
        """The ruleset's rules in words; a custom one also comes with its TOML as a file."""
        language = await language_of(self.bot, interaction)
        named = await self.bot.rulesets.find(interaction.guild_id or 0, ruleset)
        if named is None:
            raise TableError("ruleset.not_found", name=ruleset)
        text = "\n".join(rules_lines(language, named.ruleset, named.ruleset.default_players))[:PAGE_LIMIT]
        if not named.text:
            await answer(interaction, text)
            return
        if not may_attach(interaction):
            for page in without_files(language, [text]):
                await answer(interaction, page)
            return
        attachment = discord.File(io.BytesIO(named.text.encode("utf-8")), filename=f"{_file_stem(named.key)}.toml")
        await respond(interaction, text, files=[attachment])

    @ruleset.command(name=_("remove", key="cmd.ruleset.remove.name"),
                     description=_("Remove one of this server's rulesets (Manage Server)",
                                   key="cmd.ruleset.remove.desc"))
    @app_commands.describe(ruleset=_("The server's ruleset", key="cmd.ruleset.remove.ruleset"))
    @app_commands.autocomplete(ruleset=own_ruleset_autocomplete)
    @app_commands.rename(ruleset=_("ruleset", key="option.ruleset"))
    async def remove(self, interaction: discord.Interaction, ruleset: str) -> None:
        """Forget a server's ruleset; games played with it keep their own copy."""
        if not is_admin(interaction):
            raise TableError("ruleset.not_admin")
        guild_id = interaction.guild_id or 0
        key = ruleset_key(ruleset)
        stored = await self.bot.rulesets.own(guild_id, key)
        if stored is None:
            raise TableError("ruleset.not_found", name=ruleset)
        settings = await self.bot.guild_settings(guild_id)
        if ruleset_key(settings.default_ruleset) == key:
            raise TableError("ruleset.is_default", name=stored.name)
        await self.bot.rulesets.remove(guild_id, key)
        await answer(interaction, t(await language_of(self.bot, interaction), "ruleset.removed", name=stored.name))


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(SettingsCog(bot), override=True)
