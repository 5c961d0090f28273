"""Games already played on this server: ``/mafia history``, ``game``, ``stats`` and ``top``.

The words are ``cogs.texts.history``'s; this cog asks ``bot.history`` (``mafiabot.core.ports.History``)
and sends the pages. A protocol names every role, so it is refused while its game is still open: a
player could otherwise read the cards of the table they sit at.

``stats``, ``top`` and ``game`` add a picture or files to their words where the bot may attach files
in the channel (``app_permissions``, which Discord hands over for checking before a reply: it
refuses a file in an answer without Attach Files); elsewhere the words go alone and say why.
Reading and drawing them may outlast Discord's three seconds on a busy host, so they defer in time.
Charts draw on the bot's ``Charts`` worker, never on the threads of the tables' pictures, one per
member per cooldown; a member asking again sooner gets the words with a note instead of the picture.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._ack import in_time
from cogs._autocomplete import league_ruleset_autocomplete
from cogs._cog import MafiaCog
from cogs._common import language_of, may_attach, member_name, respond, without_files
from cogs.texts.history import (
    HISTORY_DEFAULT,
    LEAGUE_IMAGE,
    LEAGUE_LIMIT,
    PAGE_LIMIT,
    STATS_IMAGE,
    export_files,
    history_lines,
    league_alt,
    league_chart,
    league_lines,
    pages,
    protocol_lines,
    stats_alt,
    stats_chart,
    stats_lines,
)
from mafiabot.core.clock import wall_now
from mafiabot.core.errors import GameNotFoundError
from mafiabot.core.records import since
from mafiabot.host.exports import GAME_FORMATS
from mafiabot.host.i18n import t
from mafiabot.host.pictures.charts import Drawn, LeagueChart, StatsChart, draw_league, draw_stats
from mafiabot.host.pictures.sheet import SheetInput, draw_sheet
from mafiabot.host.pictures.sheet import alt_text as sheet_alt

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


async def send_pages(interaction: discord.Interaction, texts: Sequence[str],
                     files: Sequence[tuple[str, bytes]] = (), alt: Mapping[str, str] | None = None) -> None:
    """Answer privately with the first page (and any files, ``alt`` their alt texts by name), then the rest.

    The first page takes a deferral's "thinking" message's place (``cogs._common.respond``).
    """
    mentions = discord.AllowedMentions.none()
    attached = [discord.File(io.BytesIO(data), filename=name, description=(alt or {}).get(name))
                for name, data in files]
    first, *rest = texts
    await respond(interaction, first, files=attached)
    for text in rest:
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=mentions)


Attached = tuple[list[tuple[str, bytes]], dict[str, str]]
"""Files for ``send_pages`` (name, bytes) and their alt texts by name."""
Chart = TypeVar("Chart", StatsChart, LeagueChart)


def with_note(texts: list[str], note: str) -> list[str]:
    """``texts`` with ``note`` after a blank line on the last page, or on a page of its own if it does not fit."""
    *before, last = texts
    if len(last) + 2 + len(note) <= PAGE_LIMIT:
        return [*before, f"{last}\n\n{note}"]
    return [*texts, note]


class HistoryCog(MafiaCog):
    """Commands for everyone about games already played on this server."""

    @app_commands.command(name=_("history", key="cmd.history.name"),
                          description=_("Recent games on this server", key="cmd.history.desc"))
    @app_commands.describe(count=_("How many games to show (default 10)", key="cmd.history.count"))
    @app_commands.rename(count=_("count", key="option.count"))
    async def history(self, interaction: discord.Interaction,
                      count: app_commands.Range[int, 1, 25] = HISTORY_DEFAULT) -> None:
        """The latest games, newest first; a running game shows as in progress, with no roles."""
        language = await language_of(self.bot, interaction)
        games = await self.bot.history.recent_games(interaction.guild_id or 0, count)
        lines = history_lines(language, [(g, g.days) for g in games], self.bot.commands_text(interaction.guild_id))
        await send_pages(interaction, pages(lines))

    @app_commands.command(name=_("game", key="cmd.game.name"),
                          description=_("A finished game's protocol, or its export as a file", key="cmd.game.desc"))
    @app_commands.describe(game_id=_("Game number (see /mafia history)", key="cmd.game.id"),
                           export=_("Send the game as a file: json, csv, a rating site's, or the FIIM blank (pdf)",
                                    key="cmd.game.format"))
    @app_commands.rename(game_id=_("id", key="option.id"), export=_("format", key="option.format"))
    @app_commands.choices(export=[app_commands.Choice(name=name, value=name) for name in GAME_FORMATS])
    async def game(self, interaction: discord.Interaction, game_id: app_commands.Range[int, 1],
                   export: str | None = None) -> None:
        """The protocol once the game is over; before that it would reveal the roles, so it is refused."""
        # The store's reads and the sheet's drawing must not cost Discord's three seconds.
        texts, (files, alt) = await in_time(self.bot, interaction, self._game(interaction, game_id, export),
                                            private=True)
        await send_pages(interaction, texts, files, alt)

    async def _game(self, interaction: discord.Interaction, game_id: int,
                    export: str | None) -> tuple[list[str], Attached]:
        """The protocol's pages and sheet, or the export's line and files; the words alone where no file may go."""
        language = await language_of(self.bot, interaction)
        try:
            protocol = await self.bot.history.game_protocol(game_id)
        except GameNotFoundError:
            protocol = None
        if protocol is None or protocol.game.guild_id != interaction.guild_id:
            # Another server's game is answered like a missing one: its existence is not ours to tell.
            return [t(language, "protocol.not_found", id=game_id)], ([], {})
        if protocol.game.status == "open":
            return [t(language, "protocol.running", id=game_id)], ([], {})
        texts = pages(protocol_lines(language, protocol)) if export is None else [
            t(language, "protocol.export", id=game_id, format=export.upper())]
        if not may_attach(interaction):
            return without_files(language, texts), ([], {})
        if export is None:
            sheet = SheetInput(protocol, language)
            image = await self.bot.charts.in_line(draw_sheet, sheet)  # a member's picture: never before a table's
            name = f"protocol-{game_id}.png"
            return texts, ([(name, image)], {name: sheet_alt(sheet)})
        return texts, (await export_files(self.bot.history, game_id, export, language=language,
                                          judge=member_name(interaction)), {})


    @app_commands.command(name=_("stats", key="cmd.stats.name"),
                          description=_("A member's record on this server", key="cmd.stats.desc"))
    @app_commands.describe(member=_("Whose record (default: yours)", key="cmd.stats.member"))
    @app_commands.rename(member=_("member", key="option.member"))
    async def stats(self, interaction: discord.Interaction, member: discord.Member | None = None) -> None:
        """Games, wins by role and team, win rate, points, fouls, best moves and ratings (finished games only)."""
        language = await language_of(self.bot, interaction)
        who = member or interaction.user
        texts, image = await in_time(self.bot, interaction, self._stats(interaction, language, who), private=True)
        await send_pages(interaction, texts, *image)

    async def _stats(self, interaction: discord.Interaction, language: str,
                     who: discord.User | discord.Member) -> tuple[list[str], Attached]:
        """The stats' pages and chart (drawn in a thread: matplotlib takes tens of milliseconds)."""
        record = await self.bot.history.player_stats(interaction.guild_id or 0, who.id)
        history = await self.bot.history.rating_history(interaction.guild_id or 0, who.id)
        chart = stats_chart(language, who.display_name, record, history)
        texts = pages(stats_lines(language, who.display_name, record))
        if chart is None:
            return texts, ([], {})
        if not may_attach(interaction):
            return without_files(language, texts), ([], {})
        drawn, why_not = await self._chart(interaction, language, draw_stats, chart)
        if drawn is None:
            return with_note(texts, why_not), ([], {})
        return texts, ([(STATS_IMAGE, drawn.png)], {STATS_IMAGE: stats_alt(language, who.display_name, history)})

    @app_commands.command(name=_("top", key="cmd.top.name"),
                          description=_("League table: points, then wins, then extra points", key="cmd.top.desc"))
    @app_commands.describe(period=_("Which games count (default: all time)", key="cmd.top.period"),
                           ruleset=_("Only games with these rules", key="cmd.top.ruleset"))
    @app_commands.choices(
        period=[app_commands.Choice(name=_("all time", key="cmd.top.period.all"), value="all"),
                app_commands.Choice(name=_("last 365 days", key="cmd.top.period.year"), value="year"),
                app_commands.Choice(name=_("last 30 days", key="cmd.top.period.month"), value="month"),
                app_commands.Choice(name=_("last 7 days", key="cmd.top.period.week"), value="week")],
    )
    @app_commands.rename(period=_("period", key="option.period"),
                         ruleset=_("ruleset", key="option.ruleset"))
    @app_commands.autocomplete(ruleset=league_ruleset_autocomplete)
    async def top(self, interaction: discord.Interaction, period: str = "all", ruleset: str | None = None) -> None:
        """The server's league table over a period, optionally for one ruleset."""
        language = await language_of(self.bot, interaction)
        work = self._top(interaction, language, period, ruleset)
        texts, image = await in_time(self.bot, interaction, work, private=True)
        await send_pages(interaction, texts, *image)

    async def _top(self, interaction: discord.Interaction, language: str, period: str,
                   ruleset: str | None) -> tuple[list[str], Attached]:
        """The league table's pages and its image."""
        start = since(period, wall_now(self.bot.tables.clock))
        rows = await self.bot.history.league(interaction.guild_id or 0, since=start, ruleset=ruleset,
                                             limit=LEAGUE_LIMIT)
        chart = league_chart(language, rows, period, ruleset)
        texts = pages(league_lines(language, rows, period, ruleset))
        if chart is None:
            return texts, ([], {})
        if not may_attach(interaction):
            return without_files(language, texts), ([], {})
        drawn, why_not = await self._chart(interaction, language, draw_league, chart)
        if drawn is None:
            return with_note(texts, why_not), ([], {})
        return texts, ([(LEAGUE_IMAGE, drawn.png)], {LEAGUE_IMAGE: league_alt(language, rows, period, ruleset)})

    async def _chart(self, interaction: discord.Interaction, language: str, draw: Callable[[Chart], Drawn],
                     chart: Chart) -> tuple[Drawn | None, str]:
        """The chart drawn on the charts' own worker, or None and why: the member's cooldown, or a full queue.

        A chart costs up to seconds of CPU; a member repeating the command gets the words at once and
        the picture again after ``Charts.cooldown``, and no table's pictures wait for his.
        """
        charts = self.bot.charts
        wait = charts.wait_for(interaction.guild_id or 0, interaction.user.id)
        if wait:
            return None, t(language, "chart.cooldown", count=wait)
        drawn = await charts.draw(draw, chart)
        return drawn, "" if drawn is not None else t(language, "chart.busy")


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(HistoryCog(bot), override=True)
