"""``/mafia tournament``: announce, register, seat, open rounds, standings and exports.

A tournament is the server's newest one; only one at a time is unfinished. A round binds each of
its tables to a text and a voice channel the organiser names. Each table is then started by its
judge as any other (``/mafia new`` in its channel, players join, ``/mafia start``): the lobby
carries the schedule's seats (``cogs._tournament.tournament_place``), refuses anyone not scheduled there, and deals
each player their scheduled seat. The lobby's game is linked to the tournament's table from the
moment it opens, so a restart loses no link; when the last game of a round ends the round closes.
What the tournament may do next is ``mafiabot.core.tournaments``'s to decide, and its life, store
and channels included, is the core's ``TournamentService`` (``bot.tournaments``): here it is asked.
A table given no channels gets a text and a voice channel the bot makes, when it has Manage Channels.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._ack import defer, in_time
from cogs._autocomplete import ruleset_autocomplete
from cogs._cog import MafiaCog
from cogs._common import answer, is_admin, language_of, may_attach, member_name, respond, without_files
from cogs._routing import Button, Control, template
from cogs.texts.tournament import (
    PAGE_LIMIT,
    STANDINGS_IMAGE,
    announcement,
    announcement_view,
    made_note,
    registered_text,
    round_text,
    seat_message,
    seating_text,
    standings_alt,
    standings_chart,
    standings_pages,
)
from engine import Standing
from mafiabot.core import tournaments as tn
from mafiabot.core.records import RoundTable, StoredTournament
from mafiabot.core.seating import to_csv
from mafiabot.host.exports import TOURNAMENT_FORMATS, TournamentFormat, tournament_files
from mafiabot.host.i18n import t
from mafiabot.host.pictures.charts import draw_league
from mafiabot.host.tournaments import role_holders

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table
    from mafiabot.core.tournament_service import ClosedRound, GivenTable
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)

Rounds = app_commands.Range[int, 1, tn.MAX_ROUNDS]
Tables = app_commands.Range[int, 1, tn.MAX_TABLES]
Finals = app_commands.Range[int, 0, tn.MAX_ROUNDS]
SCORINGS = ("fiim-7", "fiim-6", "fiim-5", "fiim-4", "fiim-3", "fiim-2", "club")
TableNumbers = range(1, tn.MAX_TABLES + 1)
RegisterNumbers = range(1, 6)
Given = tuple[discord.TextChannel | None, discord.VoiceChannel | None, discord.Member | None]
"""One table's options of ``/mafia tournament round``: its text and voice channels and its judge."""


# -- the registration buttons --------------------------------------------------------------------


class TournamentJoin(Control[Button], template=template("tjoin")):
    """Join: register for the tournament the announcement is of."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Register the clicker, and show the list as it now is."""
        tm = await bot.tournaments.registration(self.target, interaction.guild_id)
        outcome = await bot.tournaments.join(tm.id, interaction.user.id, interaction.user.display_name)
        await _refresh(bot, interaction, tm.id, outcome)


class TournamentLeave(Control[Button], template=template("tleave")):
    """Leave: take the clicker off the list."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Unregister the clicker, and show the list as it now is."""
        tm = await bot.tournaments.registration(self.target, interaction.guild_id)
        outcome = await bot.tournaments.leave(tm.id, interaction.user.id)
        await _refresh(bot, interaction, tm.id, outcome)


async def _refresh(bot: MafiaBot, interaction: discord.Interaction, tournament_id: int, outcome: str) -> None:
    """Put the list as it now is on the announcement, and tell the clicker what happened."""
    lang = await language_of(bot, interaction)
    tm = await bot.tournaments.tournament(tournament_id)
    await interaction.response.edit_message(content=announcement(lang, tm), view=announcement_view(lang, tm),
                                            allowed_mentions=discord.AllowedMentions.none())
    await interaction.followup.send(_outcome_text(lang, outcome, tm), ephemeral=True)


def _outcome_text(lang: str, outcome: str, tm: StoredTournament) -> str:
    """What a player is told after registering or leaving, by the service's outcome."""
    match outcome:
        case "joined":
            return t(lang, "tournament.joined", name=tm.name)
        case "already":
            return t(lang, "tournament.already", name=tm.name)
        case "left":
            return t(lang, "tournament.left", name=tm.name)
        case _:
            return t(lang, "tournament.absent", name=tm.name)


# -- the cog ---------------------------------------------------------------------------------------


class TournamentCog(MafiaCog):
    """The tournament's commands, and the end of each of its games."""

    controls = (TournamentJoin, TournamentLeave)

    def __init__(self, bot: MafiaBot) -> None:
        super().__init__(bot)
        self._tasks: set[asyncio.Task[None]] = set()

    async def cog_load(self) -> None:
        """Join ``/mafia``, hear every table's end, and close the rounds that ended while the bot was away."""
        await super().cog_load()
        tables = getattr(self.bot, "tables", None)  # a bare bot (the command tree's tests) has no tables
        if tables is not None:
            tables.ended.append(self._table_ended)
            self._spawn(self._catch_up())

    async def cog_unload(self) -> None:
        """Stop hearing the tables' ends."""
        tables = getattr(self.bot, "tables", None)
        if tables is not None and self._table_ended in tables.ended:
            tables.ended.remove(self._table_ended)
        for task in list(self._tasks):
            task.cancel()
        await super().cog_unload()

    def _spawn(self, job: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    tournament = app_commands.Group(name=_("tournament", key="cmd.tournament.name"),
                                    description=_("Run a tournament: registration, seating, rounds, standings",
                                                  key="cmd.tournament.desc"))

    @tournament.command(name=_("new", key="cmd.tournament.new.name"),
                        description=_("Announce a tournament and open registration (Manage Server or organiser role)",
                                      key="cmd.tournament.new.desc"))
    @app_commands.describe(
        title=_("The tournament's name", key="cmd.tournament.new.title"),
        ruleset=_("The ruleset every table plays", key="cmd.tournament.new.ruleset"),
        rounds=_("Number of rounds", key="cmd.tournament.new.rounds"),
        tables=_("Tables in each round", key="cmd.tournament.new.tables"),
        scoring=_("Scoring version (default: fiim-7)", key="cmd.tournament.new.scoring"),
        finals=_("How many of the last rounds are finals (default: none)", key="cmd.tournament.new.finals"),
        finals_weight=_("How much a final round counts, e.g. 1.5 (default: 1)", key="cmd.tournament.new.finals_weight"),
    )
    @app_commands.rename(title=_("title", key="option.title"), ruleset=_("ruleset", key="option.ruleset"),
                         rounds=_("rounds", key="option.rounds"), tables=_("tables", key="option.tables"),
                         scoring=_("scoring", key="option.scoring"), finals=_("finals", key="option.finals"),
                         finals_weight=_("finals-weight", key="option.finals-weight"))
    @app_commands.choices(scoring=[
        app_commands.Choice(name=_(name, key=f"cmd.tournament.new.scoring.{name}"), value=name) for name in SCORINGS])
    @app_commands.autocomplete(ruleset=ruleset_autocomplete)
    async def new(
        self, interaction: discord.Interaction, title: app_commands.Range[str, 1, tn.MAX_NAME], ruleset: str,
        rounds: Rounds, tables: Tables, scoring: str | None = None, finals: Finals | None = None,
        finals_weight: app_commands.Range[str, 1, 16] | None = None,
    ) -> None:
        """Announce the tournament with its Join and Leave buttons; the announcer organises it."""
        if not await self._runs_tournaments(interaction):
            raise tn.TournamentError("tournament.not_admin")
        tm = await self.bot.tournaments.create(
            guild_id=interaction.guild_id or 0, organiser_id=interaction.user.id, title=title, ruleset=ruleset,
            rounds=rounds, tables=tables, scoring=scoring, finals=finals, finals_weight=finals_weight,
        )
        lang = await language_of(self.bot, interaction)
        sent = await interaction.response.send_message(announcement(lang, tm), view=announcement_view(lang, tm),
                                                       allowed_mentions=discord.AllowedMentions.none())
        if sent.message_id is not None and interaction.channel_id is not None:
            # Where it is, so closing registration can take its buttons off (the interaction's token
            # that could edit it expires long before).
            await self.bot.tournaments.remember_announcement(tm.id, interaction.channel_id, sent.message_id)

    @tournament.command(name=_("join", key="cmd.tournament.join.name"),
                        description=_("Register for the tournament", key="cmd.tournament.join.desc"))
    async def join(self, interaction: discord.Interaction) -> None:
        """Register, as the announcement's button does."""
        tm = await self._current(interaction)
        outcome = await self.bot.tournaments.join(tm.id, interaction.user.id, interaction.user.display_name)
        await answer(interaction, _outcome_text(await language_of(self.bot, interaction), outcome, tm))

    @tournament.command(name=_("leave", key="cmd.tournament.leave.name"),
                        description=_("Take your name off the tournament's list", key="cmd.tournament.leave.desc"))
    async def leave(self, interaction: discord.Interaction) -> None:
        """Unregister, as the announcement's button does."""
        tm = await self._current(interaction)
        outcome = await self.bot.tournaments.leave(tm.id, interaction.user.id)
        await answer(interaction, _outcome_text(await language_of(self.bot, interaction), outcome, tm))

    @tournament.command(name=_("register", key="cmd.tournament.register.name"),
                        description=_("Register members yourself: everyone with a role, or named ones (organiser)",
                                      key="cmd.tournament.register.desc"))
    @app_commands.describe(role=_("Everyone holding this role (bots aside)", key="cmd.tournament.register.role"),
                           **{f"member_{i}": _(f"A member to register ({i})", key=f"cmd.tournament.register.member_{i}")
                              for i in RegisterNumbers})
    @app_commands.rename(role=_("role", key="option.role"),
                         **{f"member_{i}": _(f"member-{i}", key=f"option.member-{i}") for i in RegisterNumbers})
    async def register(
        self, interaction: discord.Interaction, role: discord.Role | None = None,
        member_1: discord.Member | None = None, member_2: discord.Member | None = None,
        member_3: discord.Member | None = None, member_4: discord.Member | None = None,
        member_5: discord.Member | None = None,
    ) -> None:
        """Put members on the list without their clicking: a club's roster role, or a few by name.

        Deferred first: a roster role reads the member list a page at a time and writes each page's
        holders in one batch, which on a large server takes longer than an answer may wait.
        """
        await interaction.response.defer(thinking=True, ephemeral=True)
        tm = await self._organised(interaction)
        tn.check_registration(tm)
        named = {m.id: m.display_name for m in (member_1, member_2, member_3, member_4, member_5)
                 if m is not None and not m.bot}
        if role is None and not named:
            raise tn.TournamentError("tournament.register_whom")
        added: list[int] = []
        already: list[int] = []
        # The named ride with the first page, so a member list Discord refuses registers nobody.
        pending = list(named.items())
        async for page in role_holders(self.bot.http, interaction.guild_id or 0, role):
            await self._register(tm.id, [*pending, *(item for item in page.items() if item[0] not in named)],
                                 added, already)
            pending = []
        await self._register(tm.id, pending, added, already)
        lang = await language_of(self.bot, interaction)
        await answer(interaction, registered_text(lang, tm.name, added, already))
        if added:
            await self._update_announcement(tm.id, lang, interaction)

    async def _register(self, tournament_id: int, batch: list[tuple[int, str]], added: list[int],
                        already: list[int]) -> None:
        """Write one batch of players (a page of the member list at most), noting who was added and who was in."""
        written = await self.bot.tournaments.register(tournament_id, batch)
        added += written[0]
        already += written[1]

    @tournament.command(name=_("forbid", key="cmd.tournament.forbid.name"),
                        description=_("Keep two players apart in the schedule (organiser)",
                                      key="cmd.tournament.forbid.desc"))
    @app_commands.describe(first=_("A registered player", key="cmd.tournament.forbid.first"),
                           second=_("The player they must never meet", key="cmd.tournament.forbid.second"))
    @app_commands.rename(first=_("first", key="option.first"), second=_("second", key="option.second"))
    async def forbid(self, interaction: discord.Interaction, first: discord.Member, second: discord.Member) -> None:
        """A pair the schedule never seats at one table (relatives, a couple, a coach and pupil)."""
        tm = await self._organised(interaction)
        await self.bot.tournaments.forbid(tm, first.id, second.id)
        lang = await language_of(self.bot, interaction)
        await answer(interaction, t(lang, "tournament.forbidden", first=first.mention, second=second.mention))

    @tournament.command(name=_("seat", key="cmd.tournament.seat.name"),
                        description=_("Close registration and make the seating schedule (organiser)",
                                      key="cmd.tournament.seat.desc"))
    async def seat(self, interaction: discord.Interaction) -> None:
        """Make the schedule from the stored seed, keep it, and show its quality and its CSV."""
        tm = await in_time(self.bot, interaction, self._organised(interaction), private=False)
        tn.check_registration(tm)
        if not interaction.response.is_done():
            await defer(interaction, private=False)
        schedule = await self.bot.tournaments.seat(tm)
        lang = await language_of(self.bot, interaction)
        text = await asyncio.to_thread(seating_text, lang, tm, schedule)
        csv_file = discord.File(io.BytesIO(to_csv(schedule).encode("utf-8")), filename="schedule.csv")
        await _with_file(interaction, lang, text, csv_file)
        await self._update_announcement(tm.id, lang, interaction)

    @tournament.command(name=_("round", key="cmd.tournament.round.name"),
                        description=_("Open the next round at the channels given, or at ones the bot makes (organiser)",
                                      key="cmd.tournament.round.desc"))
    @app_commands.describe(**{f"text_{i}": _(f"Text channel of table {i}", key=f"cmd.tournament.round.text_{i}")
                              for i in TableNumbers},
                           **{f"voice_{i}": _(f"Voice channel of table {i}", key=f"cmd.tournament.round.voice_{i}")
                              for i in TableNumbers},
                           **{f"judge_{i}": _(f"Judge of table {i}", key=f"cmd.tournament.round.judge_{i}")
                              for i in TableNumbers})
    @app_commands.rename(**{f"{kind}_{i}": _(f"{kind}-{i}", key=f"option.{kind}-{i}")
                            for kind in ("text", "voice", "judge") for i in TableNumbers})
    async def round(  # one pair of channels and a judge per table: Discord has no list option
        self, interaction: discord.Interaction, text_1: discord.TextChannel | None = None,
        voice_1: discord.VoiceChannel | None = None, judge_1: discord.Member | None = None,
        text_2: discord.TextChannel | None = None, voice_2: discord.VoiceChannel | None = None,
        judge_2: discord.Member | None = None,
        text_3: discord.TextChannel | None = None, voice_3: discord.VoiceChannel | None = None,
        judge_3: discord.Member | None = None,
        text_4: discord.TextChannel | None = None, voice_4: discord.VoiceChannel | None = None,
        judge_4: discord.Member | None = None,
        text_5: discord.TextChannel | None = None, voice_5: discord.VoiceChannel | None = None,
        judge_5: discord.Member | None = None,
    ) -> None:
        """Open the next round: bind its tables, post the seats publicly, and tell each player privately."""
        given = [(text_1, voice_1, judge_1), (text_2, voice_2, judge_2), (text_3, voice_3, judge_3),
                 (text_4, voice_4, judge_4), (text_5, voice_5, judge_5)]
        tm = await in_time(self.bot, interaction, self._organised(interaction), private=False)

        async def slow() -> None:  # up to ten channels: longer than an answer may wait
            if not interaction.response.is_done():
                await defer(interaction, private=False)

        prepared = await self.bot.tournaments.prepare_round(
            tm, _given_ids(given), near_channel_id=interaction.channel_id, slow=slow)
        opened = await in_time(self.bot, interaction, self.bot.tournaments.open_round(tm, prepared), private=False)
        number, tables = prepared.number, prepared.tables
        lang = await in_time(self.bot, interaction, language_of(self.bot, interaction), private=False)
        pages = round_text(lang, opened, number, tables, self.bot.commands_text(tm.guild_id))
        note = made_note(lang, prepared.made)
        if note:  # ahead of the first page, or a page of its own where they would not fit together
            pages = [note + pages[0]] if len(note) + len(pages[0]) <= PAGE_LIMIT else [note, *pages]
        first, *rest = pages
        await respond(interaction, first, ephemeral=False)  # in place of "thinking" if deferred
        for page in rest:
            await interaction.followup.send(page, allowed_mentions=discord.AllowedMentions.none())
        missed = await self._tell_players(opened, tables)
        key = "tournament.round.told_all" if not missed else "tournament.round.told_some"
        await interaction.followup.send(t(lang, key, round=number, players=", ".join(f"<@{u}>" for u in missed)),
                                        ephemeral=True, allowed_mentions=discord.AllowedMentions.none())

    @tournament.command(name=_("standings", key="cmd.tournament.standings.name"),
                        description=_("The tournament's standings", key="cmd.tournament.standings.desc"))
    async def standings(self, interaction: discord.Interaction) -> None:
        """The standings so far, for everyone to see."""
        # The games' reads and the chart's drawing must not cost Discord's three seconds.
        (first, *rest), images = await in_time(self.bot, interaction, self._standings_answer(interaction),
                                               private=False)
        await respond(interaction, first, ephemeral=False, files=images)
        for page in rest:
            await interaction.followup.send(page, allowed_mentions=discord.AllowedMentions.none())

    async def _standings_answer(self, interaction: discord.Interaction) -> tuple[list[str], list[discord.File]]:
        """The standings' pages and chart, the chart only where the bot may attach it."""
        tm = await self._current(interaction)
        rows = await self.bot.tournaments.standings(tm)
        lang = await language_of(self.bot, interaction)
        texts = standings_pages(lang, tm, rows)
        chart = standings_chart(lang, tm, rows)
        if chart is None:
            return texts, []
        if not may_attach(interaction):
            return without_files(lang, texts), []
        drawn = await self.bot.charts.in_line(draw_league, chart)  # on the charts' worker, never before a table
        return texts, [discord.File(io.BytesIO(drawn.png), filename=STANDINGS_IMAGE,
                                    description=standings_alt(lang, tm, rows))]

    @tournament.command(name=_("export", key="cmd.tournament.export.name"),
                        description=_("The standings, or every game for a rating site or as FIIM blanks (organiser)",
                                      key="cmd.tournament.export.desc"))
    @app_commands.describe(export=_("standings (default), json, mafiaratings, polemica or pdf",
                                    key="cmd.tournament.export.format"))
    @app_commands.rename(export=_("format", key="option.format"))
    @app_commands.choices(export=[app_commands.Choice(name=_("standings", key="cmd.tournament.export.standings"),
                                                      value="standings"),
                                  *(app_commands.Choice(name=name, value=name) for name in TOURNAMENT_FORMATS)])
    async def export(self, interaction: discord.Interaction, export: str = "standings") -> None:
        """CSV and JSON a rating site can import, points as exact decimals; or every game in one file."""
        if export != "standings":
            await self._export_games(interaction, next(f for f in TOURNAMENT_FORMATS if f == export))
            return

        async def read() -> tuple[StoredTournament, list[Standing], str]:
            tm = await self._organised(interaction)
            return tm, await self.bot.tournaments.standings(tm), await language_of(self.bot, interaction)

        tm, rows, lang = await in_time(self.bot, interaction, read(), private=True)
        text = t(lang, "tournament.exported", name=tm.name)
        if not may_attach(interaction):
            await answer(interaction, without_files(lang, [text])[0])
            return
        files = [discord.File(io.BytesIO(tn.standings_csv(tm, rows).encode("utf-8")), filename="standings.csv"),
                 discord.File(io.BytesIO(tn.standings_json(tm, rows).encode("utf-8")), filename="standings.json")]
        await respond(interaction, text, files=files)

    async def _export_games(self, interaction: discord.Interaction, fmt: TournamentFormat) -> None:
        """Every played game of the tournament in order, as one file a rating site takes or as the FIIM blanks."""
        async def read() -> tuple[str, list[tuple[str, bytes]]]:
            tm = await self._organised(interaction)
            lang = await language_of(self.bot, interaction)
            files = await tournament_files(self.bot.history, tm, fmt, language=lang,
                                           judge=member_name(interaction))
            return t(lang, "tournament.exported.games", name=tm.name, format=fmt.upper()), files

        text, files = await in_time(self.bot, interaction, read(), private=True)
        if not may_attach(interaction):
            lang = await language_of(self.bot, interaction)
            await answer(interaction, without_files(lang, [text])[0])
            return
        await respond(interaction, text, files=[discord.File(io.BytesIO(data), filename=name) for name, data in files])

    @tournament.command(name=_("remove-channels", key="cmd.tournament.remove_channels.name"),
                        description=_("Delete the tables' channels the bot made, between rounds or at the end "
                                      "(organiser)", key="cmd.tournament.remove_channels.desc"))
    async def remove_channels(self, interaction: discord.Interaction) -> None:
        """Delete what the bot made for the tables; the organiser says when (the last standings are read there).

        Channels already gone count as removed; one Discord keeps is named, and stays remembered so
        the command can be run again.
        """
        tm = await in_time(self.bot, interaction, self._organised(interaction), private=True)
        tn.check_remove_channels(tm)

        async def remove() -> tuple[list[int], list[int], str]:
            removed, kept = await self.bot.tournaments.remove_channels(tm)
            return removed, kept, await language_of(self.bot, interaction)

        removed, kept, lang = await in_time(self.bot, interaction, remove(), private=True)
        lines = [t(lang, "tournament.channels_removed", count=len(removed), tables=", ".join(map(str, removed)))]
        if kept:
            lines.append(t(lang, "tournament.channels_kept", tables=", ".join(map(str, kept))))
        await respond(interaction, "\n".join(lines))

    @tournament.command(name=_("site-hide", key="cmd.tournament.site_hide.name"),
                        description=_("Hide the last rounds' results from the club's pages until the tournament "
                                      "ends (organiser)", key="cmd.tournament.site_hide.desc"))
    @app_commands.describe(rounds=_("How many of the last rounds to hide (0: show them all)",
                                    key="cmd.tournament.site_hide.rounds"))
    @app_commands.rename(rounds=_("rounds", key="option.rounds"))
    async def site_hide(self, interaction: discord.Interaction, rounds: Finals) -> None:
        """Keep the finals' results off the club's pages while they are announced live; private, as is a refusal."""
        tm = await in_time(self.bot, interaction, self._organised(interaction), private=True)

        async def hide() -> tuple[StoredTournament, str]:
            return await self.bot.tournaments.hide_on_site(tm, rounds), await language_of(self.bot, interaction)

        tm, lang = await in_time(self.bot, interaction, hide(), private=True)
        text = (t(lang, "tournament.site_hidden", name=tm.name, count=tm.site_hidden_rounds) if tm.site_hidden_rounds
                else t(lang, "tournament.site_shown", name=tm.name))
        await respond(interaction, text)

    # -- the announcement ------------------------------------------------------------------------

    async def _update_announcement(self, tournament_id: int, lang: str, interaction: discord.Interaction) -> None:
        """Show the list as it stands on the announcement; a refusal is only told, never fatal.

        Once registration closes that is the final list, without the buttons.
        """
        tm = await self.bot.tournaments.announced(tournament_id)
        if tm is None or tm.announcement is None:
            return
        channel_id, message_id = tm.announcement
        channel = self.bot.get_channel(channel_id)
        try:
            if not isinstance(channel, discord.TextChannel | discord.VoiceChannel | discord.Thread):
                raise LookupError(f"channel {channel_id} is gone")
            await channel.get_partial_message(message_id).edit(
                content=announcement(lang, tm), view=announcement_view(lang, tm),
                allowed_mentions=discord.AllowedMentions.none())
        except (discord.HTTPException, LookupError) as exc:
            log.warning("tournament %s: could not close its announcement %s: %s", tm.id, message_id, exc)
            link = f"https://discord.com/channels/{tm.guild_id}/{channel_id}/{message_id}"
            await interaction.followup.send(t(lang, "tournament.announcement_stale", link=link), ephemeral=True)

    # -- helpers ---------------------------------------------------------------------------------

    async def _current(self, interaction: discord.Interaction) -> StoredTournament:
        return await self.bot.tournaments.current(interaction.guild_id or 0)

    async def _organised(self, interaction: discord.Interaction) -> StoredTournament:
        return await self.bot.tournaments.organised(interaction.guild_id or 0, interaction.user.id,
                                                    lambda: self._runs_tournaments(interaction))

    async def _runs_tournaments(self, interaction: discord.Interaction) -> bool:
        """Manage Server, or the server's tournament-organiser role (``/mafia settings organiser_role``)."""
        if is_admin(interaction):
            return True
        role_id = (await self.bot.guild_settings(interaction.guild_id or 0)).organiser_role_id
        member = interaction.user
        return role_id is not None and isinstance(member, discord.Member) and member.get_role(role_id) is not None

    async def _tell_players(self, tm: StoredTournament, tables: list[RoundTable]) -> list[int]:
        """DM every player of the round their table and seat; the ones Discord would not let us reach."""
        missed = []
        lang = (await self.bot.guild_settings(tm.guild_id)).language or self.bot.config.game.language
        for rt in tables:
            for seat, user_id in enumerate(tn.table_seats(tm, rt.round, rt.table), 1):
                try:
                    user = self.bot.get_user(user_id) or await self.bot.fetch_user(user_id)
                    await user.send(seat_message(lang, tm, rt, seat))
                except discord.HTTPException:
                    missed.append(user_id)
        return missed

    # -- a round's end ---------------------------------------------------------------------------

    def _table_ended(self, table: Table) -> None:
        self._spawn(self._game_ended(table.id))

    async def _game_ended(self, game_id: int) -> None:
        try:
            closed = await self.bot.tournaments.game_ended(game_id)
            if closed is not None:
                await self._post_round_end(closed)
        except Exception:
            log.exception("game %s: could not check its tournament round", game_id)

    async def _catch_up(self) -> None:
        """Close the rounds whose last game ended while no process was there to hear it."""
        await self.bot.tables.recovered.wait()
        try:
            async for closed in self.bot.tournaments.catch_up():
                await self._post_round_end(closed)
        except Exception:
            log.exception("could not catch up the tournaments' rounds")

    async def _post_round_end(self, end: ClosedRound) -> None:
        """The round's end and the standings, in every table's channel of the round."""
        tm = end.played
        lang = (await self.bot.guild_settings(tm.guild_id)).language or self.bot.config.game.language
        key = "tournament.finished" if end.last else "tournament.round.closed"
        pages = [t(lang, key, name=tm.name, round=tm.current_round), *standings_pages(lang, end.closed, end.standings)]
        for rt in tn.current_tables(tm):
            channel = self.bot.get_channel(rt.channel_id)
            if not isinstance(channel, discord.abc.Messageable):
                continue
            try:
                for page in pages:
                    await channel.send(page, allowed_mentions=discord.AllowedMentions.none())
            except discord.HTTPException:
                log.warning("tournament %s: could not post the round's end in %s", tm.id, rt.channel_id)


def _given_ids(given: list[Given]) -> list[GivenTable]:
    """The options of each table as ids, for the service."""
    return [(text.id if text is not None else None, voice.id if voice is not None else None,
             judge.id if judge is not None else None) for text, voice, judge in given]


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(TournamentCog(bot), override=True)


async def _with_file(interaction: discord.Interaction, lang: str, text: str, file: discord.File) -> None:
    """Answer publicly with ``text`` and ``file``; where the bot may not attach files, the words and why."""
    if may_attach(interaction):
        await respond(interaction, text, ephemeral=False, files=[file])
        return
    first, *rest = without_files(lang, [text])
    await respond(interaction, first, ephemeral=False)
    for page in rest:
        await interaction.followup.send(page, allowed_mentions=discord.AllowedMentions.none())
