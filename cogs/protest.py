"""``/mafia protest``: a player files a protest of a game, the judge (or the tournament's organiser) rules on it.

One subcommand serves both (``/mafia`` has room for 25): with ``text`` a player of the game files
one, during the game or within ``protest_window`` seconds of its result (the engine says whether it
is still open); with ``protest`` and ``ruling`` (and a ``note``) the judge upholds or rejects it. The
judges, and at a tournament its organiser, hear of a protest privately, in a direct message with an
Uphold and a Reject button; each asks for the note in a form. The protest and its ruling are kept
with the game's protocol.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._cog import MafiaCog
from cogs._common import bot_of, respond, table_here
from cogs._errors import answer_error
from cogs._judging import is_staff
from cogs._routing import Button, Control, template
from engine import protest_open
from mafiabot.core.clock import wall_now
from mafiabot.core.protocol import Protest, ProtestedGame, ProtestStatus
from mafiabot.core.records import StoredGame
from mafiabot.core.runtime import TableError
from mafiabot.host.fairplay import alert_recipients
from mafiabot.host.i18n import t
from mafiabot.host.render import custom_id
from mafiabot.host.sender import plain

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

PROTEST_LIMIT = 1000
"""Characters of a protest's text."""
NOTE_LIMIT = 500
"""Characters of a ruling's note (a form's field holds up to 4000; a note is a line or two)."""
RULINGS: tuple[ProtestStatus, ...] = ("upheld", "rejected")
PROTESTS_PER_PLAYER = 3
"""Protests one player may file of one game: each reaches the judges' direct messages."""


def ruling_view(language: str, protest: Protest) -> discord.ui.View:
    """The Uphold and Reject buttons of a protest's alert: ``mafia:protest:<game>:<protest>:<ruling>``."""
    view = discord.ui.View(timeout=None)
    for ruling, style in zip(RULINGS, (discord.ButtonStyle.success, discord.ButtonStyle.danger), strict=True):
        view.add_item(discord.ui.Button(
            label=t(language, f"protest.button.{ruling}"), style=style,
            custom_id=custom_id("protest", protest.game_id, f"{protest.id}:{ruling}")))
    return view


async def may_rule(bot: MafiaBot, interaction: discord.Interaction, found: ProtestedGame) -> bool:
    """The game's judge, a judge of its table while it runs, the tournament's organiser, or the server's staff."""
    actor = interaction.user.id
    if actor in (found.judge_id, found.organiser_id):
        return True
    table = bot.tables.tables.get(found.protest.game_id)
    if table is not None and actor in table.judges:
        return True
    return interaction.guild_id == found.guild_id and await is_staff(bot, interaction)


async def rule(bot: MafiaBot, interaction: discord.Interaction, protest_id: int, ruling: ProtestStatus,
               note: str) -> tuple[Protest, str]:
    """Rule on a protest for the caller; the ruled protest and the game's language.

    Raises:
        TableError: ``protest.unknown``, ``protest.not_judge``.
    """
    found = await bot.protests.protested_game(protest_id)
    if found is None:
        raise TableError("protest.unknown")
    if not await may_rule(bot, interaction, found):
        raise TableError("protest.not_judge")
    ruled = await bot.protests.rule_protest(protest_id, status=ruling, note=note, by=interaction.user.id,
                                         at=wall_now(bot.table_clock()))
    if ruled is None:
        raise TableError("protest.unknown")
    return ruled, found.language


class NoteModal(discord.ui.Modal):
    """The note of a ruling, asked when the judge clicks Uphold or Reject on the alert."""

    def __init__(self, language: str, protest_id: int, ruling: ProtestStatus) -> None:
        super().__init__(title=t(language, f"protest.modal.{ruling}", id=protest_id)[:45], timeout=600)
        self.protest_id, self.ruling = protest_id, ruling
        self.note: discord.ui.TextInput[NoteModal] = discord.ui.TextInput(
            custom_id="note", max_length=NOTE_LIMIT, required=False, style=discord.TextStyle.paragraph)
        self.add_item(discord.ui.Label(text=t(language, "protest.modal.note")[:45], component=self.note))

    async def on_submit(self, interaction: discord.Interaction) -> None:
        """Rule, and say so on the alert in place of its buttons."""
        bot = bot_of(interaction)
        try:
            ruled, lang = await rule(bot, interaction, self.protest_id, self.ruling, self.note.value)
        except TableError as exc:
            await answer_error(interaction, exc)
            return
        line = "✅ " + t(lang, f"protest.ruled.{ruled.status}", id=ruled.id)
        text = "\n".join([interaction.message.content if interaction.message else "", line])[:2000]
        await interaction.response.edit_message(content=text, view=None)


class ProtestRuling(Control[Button], template=template("protest")):
    """Uphold or Reject on a protest's alert, in a judge's direct messages."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Ask for the note of the ruling; the form's answer rules."""
        parts = str(self.item.custom_id).split(":")
        if len(parts) != 5 or not parts[3].isdigit() or parts[4] not in RULINGS:
            raise TableError("control.bad_value")
        protest_id, ruling = int(parts[3]), parts[4]
        found = await bot.protests.protested_game(protest_id)
        if found is None:
            raise TableError("protest.unknown")
        if not await may_rule(bot, interaction, found):
            raise TableError("protest.not_judge")
        status: ProtestStatus = "upheld" if ruling == "upheld" else "rejected"
        await interaction.response.send_modal(NoteModal(found.language, protest_id, status))


def _check_open(stored: StoredGame, moment: datetime) -> None:
    """Refuse a protest the engine says is out of time, or of a game abandoned before it began.

    Raises:
        TableError: ``protest.no_game``, ``protest.too_late``.
    """
    over = stored.finished_at is not None
    if stored.status != "open" and not over:
        raise TableError("protest.no_game")
    since_end = (moment - stored.finished_at).total_seconds() if stored.finished_at is not None else 0.0
    if not protest_open(stored.rules(), over=over, since_end=since_end):
        raise TableError("protest.too_late")


class ProtestCog(MafiaCog):
    """``/mafia protest``: filing a protest, and ruling on one."""

    controls = (ProtestRuling,)

    @app_commands.command(name=_("protest", key="cmd.protest.name"),
                          description=_("File a protest of a game, or rule on one (judge)", key="cmd.protest.desc"))
    @app_commands.describe(text=_("Your protest (a player of the game)", key="cmd.protest.text"),
                           game=_("The game's number (default: this channel's game)", key="cmd.protest.game"),
                           protest=_("The protest's number, to rule on it (judge)", key="cmd.protest.protest"),
                           ruling=_("Uphold or reject it (judge)", key="cmd.protest.ruling"),
                           note=_("The ruling's note (judge)", key="cmd.protest.note"))
    @app_commands.rename(text=_("text", key="option.text"), game=_("game", key="option.game"),
                         protest=_("protest", key="option.protest"), ruling=_("ruling", key="option.ruling"),
                         note=_("note", key="option.note"))
    @app_commands.choices(ruling=[
        app_commands.Choice(name=_("upheld", key="protest.choice.upheld"), value="upheld"),
        app_commands.Choice(name=_("rejected", key="protest.choice.rejected"), value="rejected"),
    ])
    async def protest(
        self, interaction: discord.Interaction,
        text: app_commands.Range[str, 1, PROTEST_LIMIT] | None = None,
        game: app_commands.Range[int, 1] | None = None,
        protest: app_commands.Range[int, 1] | None = None,
        ruling: Literal["upheld", "rejected"] | None = None,
        note: app_commands.Range[str, 1, NOTE_LIMIT] | None = None,
    ) -> None:
        """File (``text``) or rule (``protest`` with ``ruling``); anything else is refused with what is missing."""
        if protest is not None or ruling is not None:
            if protest is None or ruling is None:
                raise TableError("protest.ruling_needs_both")
            ruled, lang = await rule(self.bot, interaction, protest, ruling, note or "")
            await respond(interaction, t(lang, f"protest.ruled.{ruled.status}", id=ruled.id))
            return
        if text is None:
            raise TableError("protest.needs_text")
        await self._file(interaction, text, game)

    async def _game(self, interaction: discord.Interaction, game_id: int | None) -> StoredGame:
        """The protested game: the one named, else this channel's running game, else its latest one."""
        if game_id is None:
            table = table_here(self.bot, interaction)
            if table is not None:
                game_id = table.id
            else:
                recent = await self.bot.protests.recent_games(interaction.guild_id or 0, 50)
                game_id = next((g.id for g in recent if g.channel_id == interaction.channel_id), None)
        if game_id is None:
            raise TableError("protest.no_game")
        try:
            stored = await self.bot.protests.get_game(game_id)
        except LookupError:
            raise TableError("protest.no_game") from None
        if stored.guild_id != interaction.guild_id:
            raise TableError("protest.no_game")
        return stored

    async def _file(self, interaction: discord.Interaction, text: str, game_id: int | None) -> None:
        stored = await self._game(interaction, game_id)
        seat = next((s.seat for s in stored.seats if s.user_id == interaction.user.id), None)
        if seat is None:
            raise TableError("protest.not_player")
        moment = wall_now(self.bot.table_clock())
        over = stored.finished_at is not None
        _check_open(stored, moment)
        filed_before = await self.bot.protests.game_protests(stored.id)
        if sum(p.user_id == interaction.user.id for p in filed_before) >= PROTESTS_PER_PLAYER:
            raise TableError("protest.too_many", count=PROTESTS_PER_PLAYER)
        filed = await self.bot.protests.file_protest(game_id=stored.id, user_id=interaction.user.id, seat=seat,
                                                  text=text, during_game=not over, at=moment)
        lang = stored.language
        await respond(interaction, t(lang, "protest.filed", id=filed.id, game=stored.id))
        table = self.bot.tables.tables.get(stored.id)
        judges = alert_recipients(table) if table is not None else [j for j in (stored.judge_id,) if j]
        found = await self.bot.protests.protested_game(filed.id)
        if found is not None and found.organiser_id is not None and found.organiser_id not in judges:
            judges.append(found.organiser_id)  # at a tournament its organiser rules too, and must hear of it
        name = next((s.display_name for s in stored.seats if s.seat == seat), "")
        alert = t(lang, "protest.alert", id=filed.id, game=stored.id, channel=f"<#{stored.channel_id}>",
                  player=t(lang, "seat.label", seat=seat, name=plain(name, 64)), text=plain(text, PROTEST_LIMIT))
        await self._alert(interaction, judges, alert, ruling_view(lang, filed), lang)

    async def _alert(self, interaction: discord.Interaction, judges: list[int], alert: str, view: discord.ui.View,
                     lang: str) -> None:
        """The protest to each judge privately; the player learns when a judge takes no direct messages."""
        for judge_id in judges:
            try:
                user = self.bot.get_user(judge_id) or await self.bot.fetch_user(judge_id)
                await user.send(alert[:2000], view=view, allowed_mentions=discord.AllowedMentions.none())
            except discord.HTTPException:
                await respond(interaction, t(lang, "protest.judge_unreachable"))


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(ProtestCog(bot), override=True)
