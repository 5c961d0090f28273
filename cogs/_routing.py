"""Buttons and menus, routed by their custom ids with discord.py's ``DynamicItem`` templates.

A control's custom id is ``mafia:<action>:<id>[:<arg>]`` (``mafiabot.host.presenter.custom_id``): the
action names the control and the id its lobby or table. Each kind of control is one ``Control``
subclass whose template matches its action; discord.py builds it from the clicked component, so
every control keeps working after a restart, on a message sent before it. The handler turns the
click into an engine command for the clicking player's seat; the engine decides whether it is
allowed, and whatever fails is answered privately (``cogs._errors``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Self, TypeVar

import discord

from cogs._ack import arrived, in_time
from cogs._common import bot_of, component_data
from cogs._errors import answer_error
from cogs._resume import after_restart
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.i18n import t

if TYPE_CHECKING:
    from engine import Command
    from engine import events as ev
    from mafiabot.host.bot import MafiaBot
    from mafiabot.host.presenter import Reply

ItemT = TypeVar("ItemT", bound="discord.ui.Item[Any]")
Button = discord.ui.Button[Any]
Select = discord.ui.Select[Any]


def template(action: str) -> re.Pattern[str]:
    """The custom ids of ``action``'s controls: the id at most 20 digits, any argument after it.

    >>> bool(template("join").fullmatch("mafia:join:42")), bool(template("join").fullmatch("mafia:join:4x"))
    (True, False)
    """
    return re.compile(rf"mafia:{action}:(?P<id>[0-9]{{1,20}})(?::.*)?", re.DOTALL)


class Control(discord.ui.DynamicItem[ItemT], template=re.compile(r"(?!)")):
    """A kind of control; subclasses give the ``template`` and handle the click in ``clicked``.

    This base class's own template matches nothing: it is never registered.
    """

    def __init__(self, item: ItemT, target: int) -> None:
        super().__init__(item)
        self.target = target
        """The lobby or table id the custom id names."""

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /,
    ) -> Self:
        """The control as clicked: the component itself, and the id its custom id names."""
        return cls(item, int(match["id"]))  # type: ignore[arg-type]  # the component of this template

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Handle the click (once its table is back after a restart); every failure is answered privately."""
        arrived(bot_of(interaction), interaction)  # Discord's three seconds start at the click
        try:
            bot = bot_of(interaction)
            await after_restart(bot, interaction, self.target)
            await self.clicked(interaction, bot)
        except Exception as exc:  # every failure gets its answer
            await answer_error(interaction, exc)

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """What the click does."""
        raise NotImplementedError


def values_of(interaction: discord.Interaction) -> list[str]:
    """The values a menu sent (none for a button, or for a malformed payload)."""
    data = component_data(interaction)
    raw = data.get("values", [])
    return [str(v) for v in raw] if isinstance(raw, list) else []


def seats_of(interaction: discord.Interaction, count: int = 1) -> list[int]:
    """The seat numbers a menu sent: exactly ``count`` of them, each a small whole number.

    Discord sends the values of the options the bot offered, but a forged or stale click may send
    anything; the engine then judges the seats.

    Raises:
        TableError: ``control.bad_value``.
    """
    values = values_of(interaction)
    if len(values) != count or not all(v.isascii() and v.isdigit() and len(v) <= 2 for v in values):
        raise TableError("control.bad_value")
    return [int(v) for v in values]


def table_of(bot: MafiaBot, table_id: int, interaction: discord.Interaction) -> Table:
    """The running table of a control; a control of another channel's table is stale or forged.

    Raises:
        TableError: ``table.gone``.
    """
    table = bot.tables.tables.get(table_id)
    if table is None:
        raise TableError("table.gone")
    channel = interaction.channel
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    if table.channel_id not in (interaction.channel_id, parent):
        raise TableError("table.gone")
    return table


def seat_of(table: Table, interaction: discord.Interaction) -> int:
    """The clicking player's seat.

    Raises:
        TableError: ``table.not_seated``.
    """
    seat = table.seat_of(interaction.user.id)
    if seat is None:
        raise TableError("table.not_seated")
    return seat


async def submit(
    bot: MafiaBot, interaction: discord.Interaction, table: Table, command: Command, *, private: bool,
    reply: Reply | None = None,
) -> tuple[ev.Event, ...]:
    """Submit ``command`` for the clicking player, deferring the click if the store is slow."""
    work = table.submit(command, actor=interaction.user.id, reply=reply)
    return await in_time(bot, interaction, work, private=private)


def private_menu(
    lang: str, placeholder: str, cid: str, options: list[tuple[str, str]], *, count: int = 1,
) -> discord.ui.View:
    """A private menu of ``options`` (label, value), ``count`` to pick, whose clicks route by ``cid``."""
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Select(
        placeholder=t(lang, placeholder), custom_id=cid, min_values=count, max_values=count,
        options=[discord.SelectOption(label=label[:100], value=value) for label, value in options[:25]],
    ))
    return view
