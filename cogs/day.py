"""The day: speeches (Thank you, ``/mafia skip``), nominations, and where the game stands.

A speaker's Thank you and nomination are public acts: the messages they cause go out as the
click's follow-ups (``Reply``), which Discord does not count against the token's global limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._cog import MafiaCog
from cogs._common import answer, language_of, table_here
from cogs._judging import judge_submit, judged_table, player_label
from cogs._routing import Button, Control, Select, seat_of, seats_of, submit, table_of, template
from cogs.texts.table import fouls_lines, status_lines
from engine import Command, EndSpeech, Nominate, floor_holder
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.presenter import Reply

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

Seat = app_commands.Range[int, 1, 12]


async def public_click(bot: MafiaBot, interaction: discord.Interaction, table: Table, command: Command) -> None:
    """Apply a speaker's public act; the messages it causes go out as the click's follow-ups."""
    reply = Reply.to(interaction)
    try:
        await submit(bot, interaction, table, command, private=False, reply=reply)
        if not interaction.response.is_done():
            await interaction.response.defer()
    finally:
        reply.acknowledged.set()


class ThanksButton(Control[Button], template=template("thanks")):
    """Thank you: the speaker ends their speech."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """End the clicker's speech (the engine refuses anyone but the floor holder)."""
        table = table_of(bot, self.target, interaction)
        await public_click(bot, interaction, table, EndSpeech(seat=seat_of(table, interaction)))


class NominateMenu(Control[Select], template=template("nominate")):
    """The speaker's nomination menu."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Put the picked seat up for the vote."""
        table = table_of(bot, self.target, interaction)
        seat = seat_of(table, interaction)
        (target,) = seats_of(interaction)
        await public_click(bot, interaction, table, Nominate(seat=seat, target=target))


class DayCog(MafiaCog):
    """Speeches, nominations, and the table's state (fouls included) for everyone."""

    controls = (ThanksButton, NominateMenu)

    @app_commands.command(name=_("skip", key="cmd.skip.name"),
                          description=_("End the current speech or vote window now (judge)", key="cmd.skip.desc"))
    async def skip(self, interaction: discord.Interaction) -> None:
        """Act as if the running timer ran out; the step guards against a timer that fires meanwhile.

        The speaker's time left goes with it, so ``/mafia judge undo`` can give the floor back.
        """
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, table.skip_command(), "judge.done.skip")

    @app_commands.command(name=_("nominate", key="cmd.nominate.name"),
                          description=_("Nominate a player for the speaker (judge)", key="cmd.nominate.desc"))
    @app_commands.describe(seat=_("Seat to put up for the vote", key="cmd.nominate.seat"))
    @app_commands.rename(seat=_("seat", key="option.seat"))
    async def nominate(self, interaction: discord.Interaction, seat: Seat) -> None:
        """A nomination on behalf of the floor holder (who said it aloud, or could not press)."""
        table = await judged_table(self.bot, interaction)
        speaker = floor_holder(table.game.state)
        if speaker is None:
            raise TableError("nomination.not_now")
        await judge_submit(self.bot, interaction, table, Nominate(seat=speaker, target=seat), "judge.done.nominate",
                           player=player_label(table, seat), seat=speaker)

    @app_commands.command(name=_("status", key="cmd.status.name"),
                          description=_("Where the game stands, with every seat's fouls", key="cmd.status.desc"))
    async def status(self, interaction: discord.Interaction) -> None:
        """Phase, floor, alive seats, nominees, time left and fouls (critical ones marked), for everyone."""
        table = table_here(self.bot, interaction)
        if table is None:
            raise TableError("lobby.none_here")
        lang = await language_of(self.bot, interaction)
        await answer(interaction, "\n".join([*status_lines(table, lang), *fouls_lines(table, lang)]))

async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(DayCog(bot), override=True)
