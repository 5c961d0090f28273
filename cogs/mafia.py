"""``/mafia``: open a table, start it, cancel it, and see where the game stands."""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from cogs._ack import in_time
from cogs._common import answer, is_admin, language_of, refuse, voice_channel_id
from cogs._history import HistoryCommands
from cogs._judge import JudgeCommands, is_staff, table_here
from cogs.rulesets import ruleset_autocomplete
from engine import Phase, Role, RulesError, Ruleset, critical_foul_count, critical_fouls, find_ruleset, floor_holder
from mafiabot.core.errors import SettingsError, StoreUnavailableError
from mafiabot.core.records import TIMER_SETTINGS, GuildSettings
from mafiabot.core.runtime import Lobby, Table, TableError
from mafiabot.core.tables import Seated
from mafiabot.host.i18n import countdown, ordinal, role_name, ruleset_name, t
from mafiabot.host.places import LIFTS_OWN_MUTE, READS_MAFIA_ROOM, check_place
from mafiabot.host.presenter import custom_id, seat_label, seat_list

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)

LANGUAGE_NAMES = {"en": "English", "ru": "Русский", "ka": "ქართული"}
CLEARABLE = {"judge_role": "judge_role_id", "timers": "timers", "vote_window": "vote_window",
             "results_channel": "results_channel_id"}
"""``/mafia settings clear:`` choices and the setting each one resets."""
_ROLE_ORDER = (Role.CITIZEN, Role.SHERIFF, Role.DOCTOR, Role.MAFIA, Role.DON, Role.MANIAC)


def fouls_lines(table: Table) -> list[str]:
    """``/mafia fouls``: every seat with fouls, with those one foul from removal marked critical."""
    lang, state, rules = table.language, table.game.state, table.ruleset
    lines = [t(lang, "fouls.title", count=rules.foul_removal_at)]
    critical = critical_fouls(state, rules)
    for seat in range(1, state.players + 1):
        count = state.foul_count(seat)
        if not count:
            continue
        if state.removed(seat):
            mark = t(lang, "fouls.removed")
        elif seat in critical:
            mark = t(lang, "fouls.critical")
        else:
            mark = ""
        lines.append(t(lang, "fouls.line", player=seat_label(table, seat), count=count, mark=mark).rstrip())
    if len(lines) == 1:
        lines.append(t(lang, "fouls.none"))
    return lines


def rules_lines(lang: str, rules: Ruleset, players: int) -> list[str]:
    """``/mafia rules``: the ruleset's decisions in words, for a table of ``players``."""
    base = ""
    if rules.base and rules.base != rules.name:
        base = t(lang, "rules.base", base=ruleset_name(lang, rules.base))
    lines = [t(lang, "rules.title", name=ruleset_name(lang, rules), base=base)]
    if players in rules.setups:
        counts = rules.roles_for(players)
        roles = ", ".join(t(lang, "rules.role_count", role=role_name(lang, rules, role), count=counts[role])
                          for role in _ROLE_ORDER if counts.get(role))
        lines.append(t(lang, "rules.roles", players=players, roles=roles))
    lines.append(t(lang, "rules.sizes", sizes=", ".join(map(str, rules.player_counts))))
    lines.append(t(lang, "rules.timers", speech=rules.speech_seconds, defense=rules.defense_seconds,
                   tie=rules.tie_speech_seconds, last_word=rules.last_word_seconds,
                   vote=rules.vote_window_seconds, lift=rules.lift_window_seconds, night=rules.night_seconds))
    lines.append(t(lang, f"rules.kill.{rules.mafia_kill}"))
    lines.append(t(lang, f"rules.checker.{rules.checker}", answer=t(lang, f"rules.check.{rules.check_style}")))
    if rules.has_role(Role.DOCTOR):
        lines.append(t(lang, "rules.doctor", count=rules.doctor_min_players))
        if rules.doctor_no_repeat_target:
            lines.append(t(lang, "rules.doctor.no_repeat"))
        if rules.doctor_self_limit is not None:
            lines.append(t(lang, "rules.doctor.self_limit", count=rules.doctor_self_limit))
        if rules.doctor_each_seat_once:
            lines.append(t(lang, "rules.doctor.each_seat_once"))
    if rules.has_role(Role.MANIAC):
        night = ordinal(lang, rules.maniac_first_kill_night)
        lines.append(t(lang, "rules.maniac", count=rules.maniac_shots, night=night,
                       seen=t(lang, f"check.result.{rules.maniac_check_result}")))
    lines.append(t(lang, "rules.fouls", count=rules.foul_removal_at))
    if rules.three_foul_penalty == "lose_speech":
        lines.append(t(lang, "rules.fouls.lose_speech", count=critical_foul_count(rules)))
        if rules.muted_can_nominate:
            lines.append(t(lang, "rules.fouls.silent_turn", count=rules.silent_turn_seconds))
        if rules.short_speech_alive:
            lines.append(t(lang, "rules.fouls.short_speech", count=rules.short_speech_alive,
                           seconds=rules.short_speech_seconds))
    else:
        lines.append(t(lang, "rules.fouls.critical", count=critical_foul_count(rules)))
    lines.append(t(lang, "rules.oath.second" if rules.second_oath_removal else "rules.oath.foul"))
    lines.append(t(lang, "rules.removal.cancels" if rules.removal_cancels_vote else "rules.removal.keeps"))
    if rules.removal_penalty:
        lines.append(t(lang, "rules.removal.penalty", points=str(rules.removal_penalty)))
    lines.append(t(lang, "rules.nomination.self" if rules.self_nomination else "rules.nomination.no_self"))
    if rules.first_day_single_nominee_no_vote:
        lines.append(t(lang, "rules.vote.day_one_single"))
    if rules.defense_before_vote:
        lines.append(t(lang, "rules.vote.defense"))
    if rules.recap_before_last_speaker:
        lines.append(t(lang, "rules.vote.recap"))
    lines.append(t(lang, "rules.vote.tie_shrinks" if rules.revote_when_tie_shrinks else "rules.vote.tie"))
    if not rules.lift_three_tied_at_nine:
        lines.append(t(lang, "rules.vote.no_lift_three_at_nine"))
    if rules.best_move:
        lines.append(t(lang, "rules.best_move"))
    if rules.no_departure_draw:
        lines.append(t(lang, "rules.no_departure_draw"))
    lines.append(t(lang, "rules.last_word_after_end" if rules.last_word_after_end else "rules.no_last_word_after_end"))
    lines.append(t(lang, "rules.technical_pause", count=rules.technical_pause_seconds))
    return lines


def settings_lines(settings: GuildSettings) -> list[str]:
    """``/mafia settings``: every server setting, in the server's language."""
    lang = settings.language
    none = t(lang, "settings.none")
    timers = ", ".join(t(lang, "settings.timer_item", timer=t(lang, f"timer.{name}"), seconds=value)
                       for name, value in sorted(settings.timers.items()))
    return [
        t(lang, "settings.language", value=LANGUAGE_NAMES.get(settings.language, settings.language)),
        t(lang, "settings.judge_role", value=f"<@&{settings.judge_role_id}>" if settings.judge_role_id else none),
        t(lang, "settings.ruleset", value=ruleset_name(lang, settings.default_ruleset)),
        t(lang, "settings.timers", value=timers or t(lang, "settings.ruleset_default")),
        t(lang, "settings.vote_window", value=settings.vote_window or t(lang, "settings.ruleset_default")),
        t(lang, "settings.mute_spectators", value=t(lang, f"settings.{'on' if settings.mute_spectators else 'off'}")),
        t(lang, "settings.voice_cues", value=t(lang, f"settings.{'on' if settings.voice_cues else 'off'}")),
        t(lang, "settings.results_channel",
          value=f"<#{settings.results_channel_id}>" if settings.results_channel_id else none),
        t(lang, "settings.strict_tables", value=t(lang, f"settings.{'on' if settings.strict_tables else 'off'}")),
    ]


def lobby_text(lobby: Lobby) -> str:
    """The lobby message: ruleset, judge, voice channel and the seats taken so far."""
    lang = lobby.language
    lines = [
        t(lang, "lobby.title", ruleset=ruleset_name(lang, lobby.ruleset)),
        t(lang, "lobby.info", judge=f"<@{lobby.judge_id}>", voice=f"<#{lobby.voice_channel_id}>",
          count=len(lobby.players), seats=lobby.seats),
    ]
    lines += [t(lang, "lobby.seat", number=i, user=f"<@{user}>") for i, (user, _name) in enumerate(lobby.players, 1)]
    if not lobby.players:
        lines.append(t(lang, "lobby.empty"))
    # Said before the deal, so everyone knows who could see the mafia's room or speak at will.
    readers = [f"<@{user}>" for user, _ in lobby.players if set(lobby.powers.get(user, ())) & set(READS_MAFIA_ROOM)]
    lifters = [f"<@{user}>" for user, _ in lobby.players if LIFTS_OWN_MUTE in lobby.powers.get(user, ())]
    if readers:
        lines.append(t(lang, "lobby.notice.readers", players=", ".join(readers)))
    if lifters:
        lines.append(t(lang, "lobby.notice.lifters", players=", ".join(lifters)))
    return "\n".join(lines)


def lobby_view(lobby: Lobby) -> discord.ui.View:
    """Join and Leave, routed by custom id."""
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label=t(lobby.language, "button.join"), style=discord.ButtonStyle.success,
                                    custom_id=custom_id("join", lobby.id)))
    view.add_item(discord.ui.Button(label=t(lobby.language, "button.leave"), style=discord.ButtonStyle.secondary,
                                    custom_id=custom_id("leave", lobby.id)))
    return view


@app_commands.guild_only()
class MafiaCog(JudgeCommands, HistoryCommands, commands.GroupCog, group_name=_("mafia", key="cmd.mafia.name"),
               group_description=_("Host a sport Mafia table", key="cmd.mafia.desc")):
    """The ``/mafia`` command group."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        super().__init__()

    async def cog_app_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """Every ``/mafia`` failure gets a private answer; only a real fault is logged with its trace.

        Discord's client sends only option values the command declares, so a wrong one (a text
        channel for ``voice:``) is a modified client or a stale command: answered, not a traceback.
        """
        language = await language_of(self.bot, interaction)
        original = getattr(error, "original", error)
        if isinstance(original, RulesError | TableError):
            await refuse(self.bot, interaction, original)
            return
        if isinstance(original, StoreUnavailableError):
            log.warning("/%s: the database is unavailable: %s",
                        interaction.command and interaction.command.qualified_name, original)
            text = t(language, "error.store.down")
        elif isinstance(error, app_commands.TransformerError | app_commands.CheckFailure):
            log.info("refused /%s with a bad option: %s", interaction.command and interaction.command.qualified_name,
                     error)
            text = t(language, "error.bad_option")
        else:
            log.error("/%s failed", interaction.command and interaction.command.qualified_name, exc_info=original)
            text = t(language, "error.unexpected")
        try:
            await answer(interaction, text)
        except discord.HTTPException:
            log.info("could not answer a failed command")

    async def _staff(self, interaction: discord.Interaction) -> bool:
        """Manage Server, or the server's judge role: may start or cancel any table they do not play at."""
        return await is_staff(self.bot, interaction)

    @app_commands.command(name=_("new", key="cmd.new.name"),
                          description=_("Open a table in this channel", key="cmd.new.desc"))
    @app_commands.describe(
        ruleset=_("Ruleset: a preset or one of this server's", key="cmd.new.ruleset"),
        voice=_("Voice channel of the table (default: yours)", key="cmd.new.voice"),
        seats=_("Number of players", key="cmd.new.seats"),
    )
    @app_commands.rename(ruleset=_("ruleset", key="option.ruleset"), voice=_("voice", key="option.voice"),
                         seats=_("seats", key="option.seats"))
    @app_commands.autocomplete(ruleset=ruleset_autocomplete)
    async def new(
        self, interaction: discord.Interaction, ruleset: str | None = None,
        voice: discord.VoiceChannel | None = None, seats: app_commands.Range[int, 6, 12] | None = None,
    ) -> None:
        """Open a lobby; its creator is the judge."""
        assert interaction.guild is not None  # noqa: S101  (guild_only)
        judge = Seated(interaction.user.id, interaction.user.display_name, voice_channel_id(interaction.user))
        target = interaction.guild.get_channel(voice.id if voice else (judge.voice_channel_id or 0))
        user = interaction.user
        manage = isinstance(user, discord.Member) and target is not None and target.permissions_for(
            user).manage_channels
        try:
            check_place(interaction.channel, target)
            lobby = await self.bot.tables.open_lobby(
                guild_id=interaction.guild.id, channel_id=interaction.channel_id or 0,
                voice_channel_id=voice.id if voice else None, judge=judge, ruleset_name=ruleset, seats=seats,
                manage_channels=manage,
            )
        except TableError as exc:
            await refuse(self.bot, interaction, exc)
            return
        sent = await interaction.response.send_message(
            lobby_text(lobby), view=lobby_view(lobby), allowed_mentions=discord.AllowedMentions.none()
        )
        lobby.message_id = sent.message_id

    @app_commands.command(name=_("start", key="cmd.start.name"),
                          description=_("Deal the cards and start the game (judge)", key="cmd.start.desc"))
    async def start(self, interaction: discord.Interaction) -> None:
        """Start the lobby of this channel."""
        try:
            starting = self.bot.tables.start(
                interaction.channel_id or 0, interaction.user.id, admin=await self._staff(interaction)
            )
            # Dealing writes the game, its seats and its first command: a slow store must not fail the click.
            table = await in_time(self.bot, interaction, starting, private=True)
        except TableError as exc:
            await refuse(self.bot, interaction, exc)
            return
        lang = table.language
        await answer(interaction, t(lang, "lobby.starting", ruleset=ruleset_name(lang, table.ruleset)))

    @app_commands.command(name=_("cancel", key="cmd.cancel.name"),
                          description=_("Cancel the lobby or abandon the game (judge)", key="cmd.cancel.desc"))
    async def cancel(self, interaction: discord.Interaction) -> None:
        """Cancel this channel's lobby, or abandon its game without statistics."""
        language = await language_of(self.bot, interaction)
        try:
            what = await self.bot.tables.cancel(
                interaction.channel_id or 0, interaction.user.id, admin=await self._staff(interaction)
            )
        except (TableError, RulesError) as exc:
            await refuse(self.bot, interaction, exc)
            return
        except Exception:
            # Whatever went wrong, the judge must hear that the table is still there.
            log.exception("cancel failed in channel %s", interaction.channel_id)
            await answer(interaction, t(language, "error.cancel_failed",
                                        **self.bot.commands_text(interaction.guild_id)))
            return
        await answer(interaction, t(language, f"lobby.cancelled.{what}"), ephemeral=False)

    @app_commands.command(name=_("status", key="cmd.status.name"),
                          description=_("Where the game stands", key="cmd.status.desc"))
    async def status(self, interaction: discord.Interaction) -> None:
        """Phase, floor, alive seats, nominees and time left, for everyone."""
        table = self.bot.tables.table_in(interaction.channel_id or 0)
        language = await language_of(self.bot, interaction)
        if table is None:
            await answer(interaction, t(language, "error.lobby.none_here"))
            return
        state = table.game.state
        lines = [t(language, "status.phase", phase=t(language, f"phase.{state.phase.value}"), day=state.day)]
        holder = floor_holder(state)
        if holder is not None:
            lines.append(t(language, "status.floor", player=seat_label(table, holder)))
        lines.append(t(language, "status.alive", seats=seat_list(table, state.alive_seats())))
        if state.nominees and state.phase is not Phase.ENDED:
            lines.append(t(language, "status.nominees", seats=seat_list(table, state.nominees)))
        deadline = table.deadline()
        if deadline is not None:
            lines.append(t(language, "status.time_left", countdown=countdown(language, deadline)))
        if state.paused:
            lines.append(t(language, "status.paused"))
        await answer(interaction, "\n".join(lines))

    @app_commands.command(name=_("fouls", key="cmd.fouls.name"),
                          description=_("Fouls by seat, critical ones marked", key="cmd.fouls.desc"))
    async def fouls(self, interaction: discord.Interaction) -> None:
        """Every seat with fouls, for everyone; seats one foul from removal are marked critical."""
        table = table_here(self.bot, interaction)
        if table is None:
            await answer(interaction, t(await language_of(self.bot, interaction), "error.lobby.none_here"))
            return
        await answer(interaction, "\n".join(fouls_lines(table)))

    @app_commands.command(name=_("rules", key="cmd.rules.name"),
                          description=_("This table's rules in words", key="cmd.rules.desc"))
    async def rules(self, interaction: discord.Interaction) -> None:
        """The ruleset of the table here, of the lobby, or the server's default ruleset."""
        language = await language_of(self.bot, interaction)
        table = table_here(self.bot, interaction)
        lobby = self.bot.tables.lobby_in(interaction.channel_id or 0)
        if table is not None:
            ruleset, players = table.ruleset, len(table.seats)
        elif lobby is not None:
            ruleset, players = lobby.ruleset, lobby.seats
        else:
            settings = await self.bot.guild_settings(interaction.guild_id or 0)
            named = await self.bot.rulesets.find(
                interaction.guild_id or 0, settings.default_ruleset or self.bot.config.game.default_ruleset
            )
            ruleset = named.ruleset if named is not None else find_ruleset("classic")
            players = ruleset.default_players
        await answer(interaction, "\n".join(rules_lines(language, ruleset, players)))

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
        results_channel=_("Also post every result here", key="cmd.settings.results_channel"),
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
        clear: str | None = None, strict_tables: bool | None = None,
    ) -> None:
        """With no option, show the settings; with options, validate, store and show them back."""
        if not is_admin(interaction):
            await refuse(self.bot, interaction, TableError("settings.not_admin"))
            return
        current = await self.bot.guild_settings(interaction.guild_id or 0)
        changes: dict[str, Any] = {}
        if language is not None:
            changes["language"] = language
        if judge_role is not None:
            changes["judge_role_id"] = judge_role.id
        if ruleset is not None:
            named = await self.bot.rulesets.find(interaction.guild_id or 0, ruleset)
            if named is None:
                await answer(interaction, t(current.language, "settings.invalid.ruleset", value=ruleset))
                return
            changes["default_ruleset"] = named.key
        if (timer is None) != (seconds is None):
            await answer(interaction, t(current.language, "settings.timer_needs_both"))
            return
        if timer is not None and seconds is not None:
            timers = dict(current.timers)
            if seconds == 0:
                timers.pop(timer, None)
            else:
                timers[timer] = seconds
            changes["timers"] = timers
        if vote_window is not None:
            changes["vote_window"] = vote_window or None
        if mute_spectators is not None:
            changes["mute_spectators"] = mute_spectators
        if voice_cues is not None:
            changes["voice_cues"] = voice_cues
        if strict_tables is not None:
            changes["strict_tables"] = strict_tables
        if results_channel is not None:
            changes["results_channel_id"] = results_channel.id
        if clear is not None:
            changes[CLEARABLE[clear]] = {} if clear == "timers" else None
        updated = current
        if changes:
            try:
                updated = dataclasses.replace(current, **changes)
            except SettingsError as exc:
                data = dict(exc.data)
                if data.get("timer") in TIMER_SETTINGS:
                    data["timer"] = t(current.language, f"timer.{data['timer']}")
                await answer(interaction, t(current.language, f"settings.invalid.{exc.problem}", **data))
                return
            await self.bot.store.save_settings(updated)
        key = "settings.saved" if changes else "settings.title"
        lines = [t(updated.language, key), *settings_lines(updated)]
        await answer(interaction, "\n".join(lines))


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(MafiaCog(bot))
