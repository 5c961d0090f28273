"""``/mafia panel``: the judge's console, one private message kept current as the game moves.

The console shows the table seat by seat (``cogs.texts.panel``) with buttons and seat menus for what
the judge does most, and a button that takes the judges' last action back (``engine.TakeBack``, as
``/mafia judge undo``). Every click on it is checked as a judge's command is (``cogs._judging``: a
forged id from anyone else gets a private refusal), submits one engine command, and answers by
updating the console itself, a refusal included. Which message is whose console, and the token that
edits it, is the board's (``mafiabot.host.panel``); the presenter tells the board once each command's
public messages are out, so the console never delays a floor change. What changes the console without
an engine event comes as a bot event, run on a task of its own so no answer waits: ``table_timer_changed``
(``/mafia clock extend``), ``guild_settings_saved`` (``/mafia settings``: the roles shown or hidden) and
``table_presence_changed`` (a camera off while the rules want it on, or back: its one-click foul).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from cogs._ack import in_time
from cogs._cog import MafiaCog
from cogs._common import bot_of, respond
from cogs._errors import answer_error
from cogs._judging import judged_table, player_label, reason_text
from cogs._routing import Button, Control, Select, seats_of, template
from cogs.texts.panel import BUTTONS, button_label, menu_placeholder, panel_lines
from engine import (
    REASON_LIMIT,
    Abandon,
    Command,
    DeclareDraw,
    Disqualify,
    GiveFoul,
    Pause,
    Resume,
    RevokeFoul,
    TakeBack,
    Timeout,
    check_reason,
)
from engine.errors import RefusalError
from mafiabot.core.errors import StoreUnavailableError
from mafiabot.core.records import GuildSettings
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.i18n import countdown, t
from mafiabot.host.panel import Panel, PanelBoard
from mafiabot.host.presenter import custom_id
from mafiabot.host.refusals import error_text

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

EXTEND_SECONDS = 30
"""Game seconds the console's extend button adds."""
CONFIRMED = {"yes_end": "end", "yes_draw": "draw"}
"""Confirmation buttons and the action each confirms."""
PRESENCE_BUTTONS = 2
"""Camera-off fouls the last row has room for beside its three buttons (the text lists every such seat)."""
MODAL_TEXT_LIMIT = 45
"""Characters of a modal's title and of a field's label (Discord's limit)."""


def _menu(table: Table, lang: str, name: str, seats: list[int], row: int,
          menu: str = "") -> discord.ui.Select[Any]:
    return discord.ui.Select(
        placeholder=menu_placeholder(lang, menu or name), custom_id=custom_id(f"p{name}", table.id), row=row,
        options=[discord.SelectOption(label=player_label(table, seat)[:100], value=str(seat)) for seat in seats[:25]],
    )


def _button(table: Table, lang: str, name: str, row: int, style: discord.ButtonStyle) -> discord.ui.Button[Any]:
    return discord.ui.Button(label=button_label(lang, name), custom_id=custom_id("panel", table.id, name),
                             style=style, row=row)


def _technical_switch(view: discord.ui.View, table: Table, panel: Panel) -> None:
    """Where the rules have technical fouls, a button that turns the foul menu technical and back.

    Each of the five rows holds a seat menu or is full but the first, which has room for one more button.
    """
    if not table.ruleset.technical_fouls:
        return
    on = panel.technical
    view.add_item(_button(table, panel.language, "ordinary" if on else "technical", 0,
                          discord.ButtonStyle.danger if on else discord.ButtonStyle.secondary))


def controls(table: Table, panel: Panel) -> discord.ui.View:
    """The console's buttons and seat menus; none once the game is over."""
    view = discord.ui.View(timeout=None)
    lang, state = panel.language, table.game.state
    grey, red = discord.ButtonStyle.secondary, discord.ButtonStyle.danger
    if table.over:
        return view
    if panel.confirm:
        view.add_item(_button(table, lang, f"yes_{panel.confirm}", 0, red))
        view.add_item(_button(table, lang, "back", 0, grey))
        return view
    view.add_item(_button(table, lang, "resume" if state.paused else "pause", 0, discord.ButtonStyle.primary))
    for name in ("extend", "skip", "refresh"):
        view.add_item(_button(table, lang, name, 0, grey))
    alive = state.alive_seats()
    technical = panel.technical and table.ruleset.technical_fouls
    if alive:
        view.add_item(_menu(table, lang, "foul", alive, 1, menu="technical" if technical else "foul"))
    fouled = [seat for seat in range(1, state.players + 1) if state.foul_count(seat) or state.technical_count(seat)]
    if fouled:
        view.add_item(_menu(table, lang, "unfoul", fouled, 2))
    if alive:
        view.add_item(_menu(table, lang, "remove", alive, 3))
    _technical_switch(view, table, panel)
    for seat in table.camera_off()[:PRESENCE_BUTTONS]:
        view.add_item(discord.ui.Button(label=t(lang, "panel.button.presence", seat=f"#{seat}"), row=4, style=red,
                                        custom_id=custom_id("ppres", table.id, str(seat))))
    view.add_item(_button(table, lang, "undo", 4, grey))
    view.add_item(_button(table, lang, "draw", 4, red))
    view.add_item(_button(table, lang, "end", 4, red))
    return view


def draw(table: Table, panel: Panel) -> tuple[str, discord.ui.View]:
    """The console's text and controls (the board's ``Draw``)."""
    if panel.closed:
        return t(panel.language, "panel.closed"), discord.ui.View(timeout=None)
    lines = panel_lines(table, panel.language, roles=panel.roles, note=panel.note, confirm=panel.confirm,
                        expires_at=panel.expires_at)
    return "\n".join(lines)[:2000], controls(table, panel)


def board_of(bot: MafiaBot) -> PanelBoard:
    """The board of the loaded console cog."""
    cog = bot.get_cog(PanelCog.__cog_name__)
    if not isinstance(cog, PanelCog):
        raise TableError("table.gone")
    return cog.board


async def console(bot: MafiaBot, interaction: discord.Interaction, table_id: int | None = None) -> tuple[Table, Panel]:
    """The caller's console of the channel's table, when the caller may judge it.

    Raises:
        TableError: ``table.not_judge`` and the like (``judged_table``); ``table.gone`` for a control
            of another table than the channel's.
    """
    table = await judged_table(bot, interaction)
    if table_id is not None and table.id != table_id:
        raise TableError("table.gone")
    settings = await bot.guild_settings(interaction.guild_id or 0)
    panel = board_of(bot).panel(table, interaction.user.id, language=table.language, roles=settings.judge_sees_roles)
    return table, panel


async def show(bot: MafiaBot, interaction: discord.Interaction, table: Table, panel: Panel) -> None:
    """Answer a click on the console by redrawing it; the click's token edits it from now on."""
    board = board_of(bot)
    board.answered(panel, interaction)
    content, view = board.draw(table, panel)
    none = discord.AllowedMentions.none()
    if interaction.response.is_done():  # deferred while a slow write ran
        await interaction.edit_original_response(content=content, view=view, allowed_mentions=none)
    else:
        await interaction.response.edit_message(content=content, view=view, allowed_mentions=none)
    board.changed(table)  # an edit still in flight may land after this one: it is drawn again


async def act(bot: MafiaBot, interaction: discord.Interaction, table: Table, panel: Panel, command: Command,
              key: str, **fields: Any) -> None:
    """Submit ``command`` for the judge; the panel's note says it was done, or why the rules refused it."""
    lang = panel.language
    try:
        await in_time(bot, interaction, table.submit(command, actor=interaction.user.id), private=False)
    except RefusalError as exc:
        panel.note = "⛔ " + error_text(lang, exc, bot.commands_text(interaction.guild_id))
    except StoreUnavailableError:
        panel.note = "⛔ " + t(lang, "error.store.down")
    else:
        panel.note = "✅ " + t(lang, key, **fields)


async def extend(bot: MafiaBot, interaction: discord.Interaction, table: Table, panel: Panel) -> None:
    """More time for the running timer; the table sees the new end, as after ``/mafia clock extend``."""
    lang = panel.language
    if not table.extend(EXTEND_SECONDS * table.time_scale):
        panel.note = "⛔ " + error_text(lang, TableError("table.no_timer"), {})
        return
    text = t(lang, "judge.done.extend", count=EXTEND_SECONDS, countdown=countdown(lang, table.deadline()))
    panel.note = "✅ " + text
    await bot.presenter.sender.send(table, text)


async def press(bot: MafiaBot, interaction: discord.Interaction, table: Table, panel: Panel, name: str) -> None:
    """What a console button does, before the console is redrawn."""
    panel.note = ""
    if name in ("end", "draw"):
        panel.confirm = name
        return
    panel.confirm = ""
    name = CONFIRMED.get(name, name)
    if name in ("technical", "ordinary"):
        panel.technical = name == "technical" and table.ruleset.technical_fouls
    elif name == "pause":
        commands = bot.commands_text(interaction.guild_id)
        await act(bot, interaction, table, panel, Pause(), "judge.done.pause", **commands)
    elif name == "resume":
        await act(bot, interaction, table, panel, Resume(), "judge.done.resume")
    elif name == "skip":
        await act(bot, interaction, table, panel, Timeout(step=table.game.waiting().timer), "judge.done.skip")
    elif name == "undo":
        await act(bot, interaction, table, panel, TakeBack(), "judge.done.take_back")
    elif name == "extend":
        await extend(bot, interaction, table, panel)
    elif name == "draw":
        await act(bot, interaction, table, panel, DeclareDraw(), "judge.done.draw")
    elif name == "end":
        await act(bot, interaction, table, panel, Abandon(), "judge.done.end")
    # refresh and back: a redraw with a fresh token is the whole answer


class PanelButton(Control[Button], template=template("panel")):
    """A console button: ``mafia:panel:<table>:<action>``."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Check the judge, do the action, redraw the console."""
        table, panel = await console(bot, interaction, self.target)
        name = str(self.item.custom_id).rsplit(":", 1)[-1]
        if name not in BUTTONS:
            raise TableError("control.bad_value")
        await press(bot, interaction, table, panel, name)
        await show(bot, interaction, table, panel)


class FoulMenu(Control[Select], template=template("pfoul")):
    """The console's "foul for…" seat menu."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """A foul for the picked seat."""
        table, panel = await console(bot, interaction, self.target)
        (seat,) = seats_of(interaction)
        panel.confirm = ""
        if panel.technical:
            await act(bot, interaction, table, panel, GiveFoul(seat=seat, technical=True), "judge.done.technical",
                      player=player_label(table, seat), reason="")
        else:
            await act(bot, interaction, table, panel, GiveFoul(seat=seat), "judge.done.foul",
                      player=player_label(table, seat), reason="")
        await show(bot, interaction, table, panel)


class UnfoulMenu(Control[Select], template=template("punfoul")):
    """The console's "take a foul back…" seat menu."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Take the picked seat's last foul back."""
        table, panel = await console(bot, interaction, self.target)
        (seat,) = seats_of(interaction)
        panel.confirm = ""
        await act(bot, interaction, table, panel, RevokeFoul(seat=seat), "judge.done.unfoul",
                  player=player_label(table, seat))
        await show(bot, interaction, table, panel)


class PresenceButton(Control[Button], template=template("ppres")):
    """The console's foul for a camera off while the rules want it on: ``mafia:ppres:<table>:<seat>``.

    Offered only while the lapse lasts and has no foul yet; a click on an older drawing, after the
    camera came back or the foul was given, gives none.
    """

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """A foul for the seat through the same engine command as the seat menu's, then the redraw."""
        table, panel = await console(bot, interaction, self.target)
        arg = str(self.item.custom_id).rsplit(":", 1)[-1]
        if not (arg.isascii() and arg.isdigit() and len(arg) <= 2):
            raise TableError("control.bad_value")
        seat = int(arg)
        panel.confirm = ""
        if seat not in table.camera_off():
            panel.note = "⛔ " + t(panel.language, "panel.presence_over", player=player_label(table, seat))
        else:
            await act(bot, interaction, table, panel, GiveFoul(seat=seat), "judge.done.foul",
                      player=player_label(table, seat), reason="")
        await show(bot, interaction, table, panel)


class RemoveModal(discord.ui.Modal):
    """The reason of a removal from the console: a removal is kept with its reason."""

    def __init__(self, table: Table, lang: str, seat: int) -> None:
        title = t(lang, "panel.remove.title", player=player_label(table, seat))
        super().__init__(title=title[:MODAL_TEXT_LIMIT], timeout=600,
                         custom_id=custom_id("premovewhy", table.id, str(seat)))
        self.table_id, self.seat = table.id, seat
        self.reason: discord.ui.TextInput[Any] = discord.ui.TextInput(
            custom_id="reason", max_length=REASON_LIMIT, min_length=1, style=discord.TextStyle.paragraph)
        self.add_item(discord.ui.Label(text=t(lang, "panel.remove.reason")[:MODAL_TEXT_LIMIT], component=self.reason))

    async def on_submit(self, interaction: discord.Interaction, /) -> None:
        """Check the judge again (the modal may be old), then remove with the reason."""
        bot = bot_of(interaction)
        table, panel = await console(bot, interaction, self.table_id)
        reason = self.reason.value.strip()
        check_reason(reason)
        panel.confirm = ""
        await act(bot, interaction, table, panel, Disqualify(seat=self.seat, reason=reason), "judge.done.remove",
                  player=player_label(table, self.seat), reason=reason_text(table, reason))
        await show(bot, interaction, table, panel)

    # discord.py's Modal narrows the base view's ``on_error`` to this signature itself.
    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:  # type: ignore[override]
        """A refusal before the removal (not the judge, a bad reason) is answered privately."""
        await answer_error(interaction, error)


class RemoveMenu(Control[Select], template=template("premove")):
    """The console's "remove…" seat menu: asks for the reason."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Open the reason's modal for the picked seat."""
        table, panel = await console(bot, interaction, self.target)
        (seat,) = seats_of(interaction)
        await interaction.response.send_modal(RemoveModal(table, panel.language, seat))


class PanelCog(MafiaCog):
    """The judge's console."""

    controls = (PanelButton, FoulMenu, UnfoulMenu, RemoveMenu, PresenceButton)

    def __init__(self, bot: MafiaBot) -> None:
        super().__init__(bot)
        self.board = PanelBoard(draw)

    def _listeners(self) -> list[Callable[[Table], None]]:
        # A bare command tree (its tests load the cogs into a plain bot) has no presenter to hear.
        presenter = getattr(self.bot, "presenter", None)
        return presenter.listeners if presenter is not None else []

    async def cog_load(self) -> None:
        """Route the console's controls and hear of every command's messages being out."""
        await super().cog_load()
        self._listeners().append(self.board.changed)

    async def cog_unload(self) -> None:
        """Stop keeping consoles current."""
        await super().cog_unload()
        listeners = self._listeners()
        if self.board.changed in listeners:
            listeners.remove(self.board.changed)
        await self.board.close()

    @commands.Cog.listener()
    async def on_table_timer_changed(self, table: Table) -> None:
        """The running timer got more time (``/mafia clock extend``): the consoles show its new end."""
        self.board.changed(table)

    @commands.Cog.listener()
    async def on_table_presence_changed(self, table: Table) -> None:
        """A camera went off while the rules want it on, or came back: the consoles offer its foul, or stop."""
        self.board.changed(table)

    @commands.Cog.listener()
    async def on_guild_settings_saved(self, settings: GuildSettings) -> None:
        """The server's settings were saved: its open consoles show every role, or none, at once."""
        for table in self.bot.tables.tables.in_guild(settings.guild_id):
            if not table.over:
                self.board.roles_changed(table, roles=settings.judge_sees_roles)

    @app_commands.command(name=_("panel", key="cmd.panel.name"),
                          description=_("Open the judge's console for this table (judge)", key="cmd.panel.desc"))
    async def panel(self, interaction: discord.Interaction) -> None:
        """Open (or open again, with a fresh token) the caller's console, seen by the caller only."""
        table, panel = await in_time(self.bot, interaction, console(self.bot, interaction), private=True)
        panel.note = panel.confirm = ""
        self.board.answered(panel, interaction)
        content, view = self.board.draw(table, panel)
        await respond(interaction, content, view=view)  # in place of a slow store's "thinking"


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(PanelCog(bot), override=True)
