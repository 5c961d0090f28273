"""The judge's slash commands: fouls and removals, the clock, points, the end, and the table's judges.

``/mafia judge`` is a group: ``pass`` hands the table over, ``add`` and ``remove`` a side judge with
the same powers, ``undo`` takes back the last foul, removal or skip (``engine.TakeBack``).

Each command finds the table of the channel, checks that the caller may judge it
(``cogs._judging``), and submits one engine command. The engine decides whether the rules allow
it; the presenter announces what happened from the events, so the judge only gets a short private
confirmation here.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._cog import MafiaCog
from cogs._common import answer
from cogs._judging import bench_table, judge_submit, judged_table, player_label, reason_text
from engine import (
    REASON_LIMIT,
    Abandon,
    AwardPoints,
    DeclareDraw,
    Disqualify,
    GiveFoul,
    Pause,
    Resume,
    RevokeFoul,
    TakeBack,
    check_reason,
)
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.i18n import POINT_PLACES, countdown, decimal_text, t
from mafiabot.host.presenter import plain

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

Seat = app_commands.Range[int, 1, 12]
Reason = app_commands.Range[str, 1, REASON_LIMIT]
"""A judge's reason: Discord's client stops at ``REASON_LIMIT`` characters, and the bot refuses more."""
POINTS_TEXT_LIMIT = 20
"""Characters of a points value the bot reads or echoes (``-0.25`` needs five)."""


class JudgeCog(MafiaCog):
    """Commands for the table's judge; each refuses anyone else clearly."""

    # -- fouls and removals ----------------------------------------------------------------------

    @app_commands.command(name=_("foul", key="cmd.foul.name"),
                          description=_("Give a player a foul (judge)", key="cmd.foul.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"),
                           reason=_("Why (told to you only)", key="cmd.foul.reason"),
                           oath=_("The foul is for an oath (where the rules say so, a second oath removes the player)",
                                  key="cmd.foul.oath"),
                           technical=_(
                               "A technical foul, counted apart from the ordinary ones (where the rules have them)",
                               key="cmd.foul.technical"))
    @app_commands.rename(seat=_("seat", key="option.seat"), reason=_("reason", key="option.reason"),
                         oath=_("oath", key="option.oath"), technical=_("technical", key="option.technical"))
    async def foul(
        self, interaction: discord.Interaction, seat: Seat, reason: Reason | None = None, *,
        oath: bool | None = None, technical: bool | None = None,
    ) -> None:
        """A foul, an oath's foul or a technical foul; the engine applies its consequences and refusals.

        The oath and the technical foul are options, not commands of their own: ``/mafia`` has room for
        25 subcommands only.
        """
        check_reason(reason or "")  # a modified client may send more than Discord's client lets through
        table = await judged_table(self.bot, interaction)
        if technical:
            await judge_submit(self.bot, interaction, table, GiveFoul(seat=seat, oath=bool(oath), technical=True),
                               "judge.done.technical", player=player_label(table, seat),
                               reason=reason_text(table, reason))
            return
        if oath:
            await judge_submit(self.bot, interaction, table, GiveFoul(seat=seat, oath=True), "judge.done.oath",
                               player=player_label(table, seat))
            return
        await judge_submit(self.bot, interaction, table, GiveFoul(seat=seat), "judge.done.foul",
                           player=player_label(table, seat), reason=reason_text(table, reason))

    @app_commands.command(name=_("unfoul", key="cmd.unfoul.name"),
                          description=_("Take a player's last foul back (judge)", key="cmd.unfoul.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"))
    @app_commands.rename(seat=_("seat", key="option.seat"))
    async def unfoul(self, interaction: discord.Interaction, seat: Seat) -> None:
        """Take back the seat's last foul (a mistaken call)."""
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, RevokeFoul(seat=seat), "judge.done.unfoul",
                           player=player_label(table, seat))

    @app_commands.command(name=_("remove", key="cmd.remove.name"),
                          description=_("Disqualify a player at once (judge)", key="cmd.remove.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"),
                           reason=_("Why (kept with the game)", key="cmd.remove.reason"))
    @app_commands.rename(seat=_("seat", key="option.seat"), reason=_("reason", key="option.reason"))
    async def remove(self, interaction: discord.Interaction, seat: Seat, reason: Reason) -> None:
        """Disqualification: the player leaves with no last word; the reason is stored with the command."""
        check_reason(reason)
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, Disqualify(seat=seat, reason=reason), "judge.done.remove",
                           player=player_label(table, seat), reason=reason_text(table, reason))

    # -- the clock -------------------------------------------------------------------------------

    clock = app_commands.Group(name=_("clock", key="cmd.clock.name"),
                               description=_("The table's timers: pause, resume, extend (judge)",
                                             key="cmd.clock.desc"))

    @clock.command(name=_("pause", key="cmd.pause.name"),
                          description=_("Stop every timer; mutes stay (judge)", key="cmd.pause.desc"))
    async def pause(self, interaction: discord.Interaction) -> None:
        """Stop the clock; the time left is kept for ``/mafia clock resume``."""
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, Pause(), "judge.done.pause",
                           **self.bot.commands_text(interaction.guild_id))

    @clock.command(name=_("resume", key="cmd.resume.name"),
                          description=_("Start the timers again (judge)", key="cmd.resume.desc"))
    async def resume(self, interaction: discord.Interaction) -> None:
        """Start the clock with the time that was left."""
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, Resume(), "judge.done.resume")

    @clock.command(name=_("extend", key="cmd.extend.name"),
                          description=_("Give the running timer more seconds (judge)", key="cmd.extend.desc"))
    @app_commands.describe(seconds=_("Seconds to add", key="cmd.extend.seconds"))
    @app_commands.rename(seconds=_("seconds", key="option.seconds"))
    async def extend(self, interaction: discord.Interaction, seconds: app_commands.Range[int, 1, 600]) -> None:
        """More time for the current speech or window.

        Nothing in the engine changes, so no event announces it: the answer is public, so the
        speaker and the table see the new end time, and the judges' consoles hear of it as a bot event.
        """
        table = await judged_table(self.bot, interaction)
        # The judge speaks in game seconds; the table's clock runs at ``time_scale``.
        if not table.extend(seconds * table.time_scale):
            raise TableError("table.no_timer")
        ends = countdown(table.language, table.deadline())
        await answer(interaction, t(table.language, "judge.done.extend", count=seconds, countdown=ends),
                     ephemeral=False)
        self.bot.dispatch("table_timer_changed", table)  # the judges' consoles show the new end

    # -- the end ---------------------------------------------------------------------------------

    @app_commands.command(name=_("draw", key="cmd.draw.name"),
                          description=_("End the game as a draw (judge)", key="cmd.draw.desc"))
    async def draw(self, interaction: discord.Interaction) -> None:
        """Declare a draw; it counts for the statistics like any result."""
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, DeclareDraw(), "judge.done.draw")

    @app_commands.command(name=_("end", key="cmd.end.name"),
                          description=_("Abandon the game; it counts for no statistics (judge)",
                                        key="cmd.end.desc"))
    async def end(self, interaction: discord.Interaction) -> None:
        """Abandon the game: no result, no statistics, every mute lifted."""
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, Abandon(), "judge.done.end")

    @app_commands.command(name=_("points", key="cmd.points.name"),
                          description=_("Give a player extra points, plus or minus (judge)", key="cmd.points.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"),
                           value=_("Points, such as 0.5 or -0.25", key="cmd.points.value"),
                           reason=_("Why", key="cmd.points.reason"))
    @app_commands.rename(seat=_("seat", key="option.seat"), value=_("value", key="option.value"),
                         reason=_("reason", key="option.reason"))
    async def points(
        self, interaction: discord.Interaction, seat: Seat, value: app_commands.Range[str, 1, POINTS_TEXT_LIMIT],
        reason: Reason,
    ) -> None:
        """Extra points; the engine checks the value (bounded, see ``engine.parse_points``) and keeps the reason."""
        check_reason(reason)
        table = await judged_table(self.bot, interaction)
        number = value.strip().replace(",", ".")  # 0,5 is how ru and ka write 0.5
        await judge_submit(self.bot, interaction, table, AwardPoints(seat=seat, value=number, reason=reason),
                           "judge.done.points", player=player_label(table, seat),
                           value=typed_points(table.language, number))

    # -- the judges ------------------------------------------------------------------------------

    judge = app_commands.Group(name=_("judge", key="cmd.judge.name"),
                               description=_("The table's judges: hand over, add, remove, take back (judge)",
                                             key="cmd.judge.desc"))

    @judge.command(name=_("pass", key="cmd.judge.pass.name"),
                   description=_("Hand the table over to another judge (judge)", key="cmd.judge.pass.desc"))
    @app_commands.describe(member=_("The new judge", key="cmd.judge.member"))
    @app_commands.rename(member=_("member", key="option.member"))
    async def judge_pass(self, interaction: discord.Interaction, member: discord.Member) -> None:
        """Hand over (the judge or staff): kept in the table's stored meta, so a restarted bot knows the new judge."""
        table = await bench_table(self.bot, interaction)
        require_may_judge(table, member)
        if member.id == table.judge_id:
            raise TableError("table.judge_already")
        table.judge_id = member.id
        table.meta.judge = member.id
        if member.id in table.meta.judges:
            table.meta.judges.remove(member.id)  # a side judge made the judge is no longer a side judge
        await judges_changed(interaction, table, "judge.handover", member, ping=True)

    @judge.command(name=_("add", key="cmd.judge.add.name"),
                   description=_("Add a side judge with the same powers (judge)", key="cmd.judge.add.desc"))
    @app_commands.describe(member=_("The side judge", key="cmd.judge.add.member"))
    @app_commands.rename(member=_("member", key="option.member"))
    async def judge_add(self, interaction: discord.Interaction, member: discord.Member) -> None:
        """A side judge, added by the judge or staff: kept in the stored meta, never muted, not a player or a bot."""
        table = await bench_table(self.bot, interaction)
        require_may_judge(table, member)
        if member.id in table.judges:
            raise TableError("table.judge_already")
        if len(table.meta.judges) >= SIDE_JUDGES_LIMIT:
            raise TableError("table.judges_full", count=SIDE_JUDGES_LIMIT)
        table.meta.judges.append(member.id)
        await judges_changed(interaction, table, "judge.side_added", member, ping=True)

    @judge.command(name=_("remove", key="cmd.judge.remove.name"),
                   description=_("Take a side judge off the table (judge)", key="cmd.judge.remove.desc"))
    @app_commands.describe(member=_("The side judge", key="cmd.judge.remove.member"))
    @app_commands.rename(member=_("member", key="option.member"))
    async def judge_remove(self, interaction: discord.Interaction, member: discord.Member) -> None:
        """The side judge loses the judge's powers (the judge or staff, or the side judge stepping down).

        The table's judge stays: hand over with ``pass``.
        """
        table = await bench_table(self.bot, interaction, stepping_down=member.id == interaction.user.id)
        if member.id not in table.meta.judges:
            raise TableError("table.not_side_judge")
        table.meta.judges.remove(member.id)
        await judges_changed(interaction, table, "judge.side_removed", member, ping=False)

    @judge.command(name=_("undo", key="cmd.judge.undo.name"),
                   description=_("Take back the last foul, removal or skip (judge)", key="cmd.judge.undo.desc"))
    async def judge_undo(self, interaction: discord.Interaction) -> None:
        """Take back the last judge action until the floor changes; the channel shows the correction."""
        table = await judged_table(self.bot, interaction)
        await judge_submit(self.bot, interaction, table, TakeBack(), "judge.done.take_back")


SIDE_JUDGES_LIMIT = 4
"""Side judges a table may have besides its judge."""


async def judges_changed(
    interaction: discord.Interaction, table: Table, key: str, member: discord.Member, *, ping: bool,
) -> None:
    """Keep the new judges with the game (a restarted bot knows them), unmute them, and say so in public."""
    await table.save_meta()
    table.refresh_voice()
    mentions = discord.AllowedMentions(users=[member]) if ping else discord.AllowedMentions.none()
    await answer(interaction, t(table.language, key, judge=member.mention), ephemeral=False, mentions=mentions)


def require_may_judge(table: Table, member: discord.Member) -> None:
    """Refuse a member who may not judge this table: a bot, a seated player, or a game that is over.

    Raises:
        TableError: ``table.judge_bot``, ``table.judge_seated`` or ``table.closed``.
    """
    if member.bot:
        raise TableError("table.judge_bot")
    if table.seat_of(member.id) is not None:
        # A judge is never muted, so a seated judge would keep the floor open all game.
        raise TableError("table.judge_seated")
    if table.over:
        raise TableError("table.closed")


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(JudgeCog(bot), override=True)


def typed_points(language: str, typed: str) -> str:
    """The judge's value as the table's language writes points ("+0,50"), or as typed when it is no number."""
    try:
        return decimal_text(language, Decimal(typed), POINT_PLACES, signed=True)
    except ArithmeticError:  # not a number, or one past the decimal context (1e999999999): the engine refuses it
        return plain(typed, POINTS_TEXT_LIMIT)
