"""The judge's slash commands, mixed into the ``/mafia`` group (see ``cogs.mafia``).

Each command finds the table of the channel, checks that the caller may judge it, and submits one
engine command. The engine decides whether the rules allow it; the presenter announces what
happened from the events, so the judge only gets a short private confirmation here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._ack import in_time
from cogs._common import answer, is_admin, language_of, refuse
from engine import (
    REASON_LIMIT,
    Abandon,
    AwardPoints,
    Command,
    DeclareDraw,
    Disqualify,
    GiveFoul,
    Nominate,
    Pause,
    Resume,
    RevokeFoul,
    RulesError,
    Timeout,
    check_reason,
    floor_holder,
)
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.i18n import countdown, t
from mafiabot.host.presenter import plain, seat_label
from mafiabot.host.tables import may_judge as judge_rule

if TYPE_CHECKING:
    from discord.ext import commands

    from mafiabot.host.bot import MafiaBot

    # discord.py's decorators want a Cog; at run time the mixin stays a plain class and the
    # ``/mafia`` GroupCog collects its commands from the MRO.
    _Mixin = commands.Cog
else:
    _Mixin = object

Seat = app_commands.Range[int, 1, 12]
Reason = app_commands.Range[str, 1, REASON_LIMIT]
"""A judge's reason: Discord's client stops at ``REASON_LIMIT`` characters, and the bot refuses more."""
POINTS_TEXT_LIMIT = 20
"""Characters of a points value the bot reads or echoes (``-0.25`` needs five)."""


def table_here(bot: MafiaBot, interaction: discord.Interaction) -> Table | None:
    """The running table of the channel, or of the thread's parent channel."""
    channel_id = interaction.channel_id or 0
    table = bot.tables.table_in(channel_id)
    if table is None and isinstance(interaction.channel, discord.Thread) and interaction.channel.parent_id:
        table = bot.tables.table_in(interaction.channel.parent_id)
    return table


def has_role(user: discord.abc.User, role_id: int | None) -> bool:
    """Whether ``user`` is a member with the role ``role_id``.

    The interaction's member carries its role ids even when the role is not in the bot's cache yet
    (created after the bot connected), so the ids are read, not the cached role objects.
    """
    if role_id is None or not isinstance(user, discord.Member):
        return False
    return user.get_role(role_id) is not None or user._roles.has(role_id)


async def is_staff(bot: MafiaBot, interaction: discord.Interaction) -> bool:
    """Manage Server, or the server's judge role: may judge any table they do not play at."""
    if is_admin(interaction):
        return True
    if interaction.guild_id is None:
        return False
    settings = await bot.guild_settings(interaction.guild_id)
    return has_role(interaction.user, settings.judge_role_id)


async def may_judge(bot: MafiaBot, interaction: discord.Interaction, table: Table) -> bool:
    """The table's judge or staff, and never a player seated at it (``mafiabot.host.tables.may_judge``)."""
    actor = interaction.user.id
    seated = table.seat_of(actor) is not None
    if seated or actor == table.judge_id:
        return judge_rule(actor, judge_id=table.judge_id, staff=False, seated=seated)
    return judge_rule(actor, judge_id=table.judge_id, staff=await is_staff(bot, interaction), seated=False)


class JudgeCommands(_Mixin):
    """Commands for the table's judge; each refuses anyone else clearly."""

    bot: MafiaBot

    # -- plumbing --------------------------------------------------------------------------------

    async def _judged_table(self, interaction: discord.Interaction) -> Table | None:
        """The channel's table when the caller may judge it; otherwise answer why not and give None."""
        table = table_here(self.bot, interaction)
        if table is None:
            await answer(interaction, t(await language_of(self.bot, interaction), "error.lobby.none_here"))
            return None
        if not await may_judge(self.bot, interaction, table):
            # Staff at the table hear why their usual power does not hold; anyone else, who may judge.
            seated = table.seat_of(interaction.user.id) is not None
            code = "table.seated_judge" if seated and await is_staff(self.bot, interaction) else "table.not_judge"
            await refuse(self.bot, interaction, TableError(code))
            return None
        return table

    async def _submit(
        self, interaction: discord.Interaction, command: Command | None, key: str, **fields: Any
    ) -> Table | None:
        """Submit ``command`` for the judge and confirm privately with ``key``; refusals answer instead."""
        table = await self._judged_table(interaction)
        if table is None:
            return None
        try:
            if command is None:
                raise TableError("table.gone")
            await in_time(self.bot, interaction, table.submit(command, actor=interaction.user.id), private=True)
        except (RulesError, TableError) as exc:
            await refuse(self.bot, interaction, exc)
            return None
        await answer(interaction, t(table.language, key, **fields))
        return table

    @staticmethod
    def _player(table: Table | None, seat: int) -> str:
        if table is None or not 1 <= seat <= len(table.seats):
            return f"#{seat}"
        return seat_label(table, seat)

    def _reason(self, interaction: discord.Interaction, reason: str | None) -> str:
        """The reason as the confirmation echoes it (cut, markdown and mentions neutralized)."""
        table = table_here(self.bot, interaction)
        if not reason or table is None:
            return ""
        return " " + t(table.language, "judge.reason", reason=plain(reason, REASON_LIMIT))

    async def _too_long(self, interaction: discord.Interaction, *texts: str | None) -> bool:
        """Refuse a reason over ``REASON_LIMIT`` before anything happens (Discord's client stops there too)."""
        for text in texts:
            try:
                check_reason(text or "")
            except RulesError as exc:
                await refuse(self.bot, interaction, exc)
                return True
        return False

    # -- fouls and removals ----------------------------------------------------------------------

    @app_commands.command(name=_("foul", key="cmd.foul.name"),
                          description=_("Give a player a foul (judge)", key="cmd.foul.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"),
                           reason=_("Why (told to you only)", key="cmd.foul.reason"))
    @app_commands.rename(seat=_("seat", key="option.seat"), reason=_("reason", key="option.reason"))
    async def foul(self, interaction: discord.Interaction, seat: Seat, reason: Reason | None = None) -> None:
        """A foul; the engine applies its consequences (lost speech, removal at the limit)."""
        if await self._too_long(interaction, reason):
            return
        table = table_here(self.bot, interaction)
        await self._submit(interaction, GiveFoul(seat=seat), "judge.done.foul",
                           player=self._player(table, seat), reason=self._reason(interaction, reason))

    @app_commands.command(name=_("oath", key="cmd.oath.name"),
                          description=_("Give a player a foul for an oath (judge)", key="cmd.oath.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"))
    @app_commands.rename(seat=_("seat", key="option.seat"))
    async def oath(self, interaction: discord.Interaction, seat: Seat) -> None:
        """An oath: a foul that removes on the second oath where the ruleset says so."""
        table = table_here(self.bot, interaction)
        await self._submit(interaction, GiveFoul(seat=seat, oath=True), "judge.done.oath",
                           player=self._player(table, seat))

    @app_commands.command(name=_("unfoul", key="cmd.unfoul.name"),
                          description=_("Take a player's last foul back (judge)", key="cmd.unfoul.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"))
    @app_commands.rename(seat=_("seat", key="option.seat"))
    async def unfoul(self, interaction: discord.Interaction, seat: Seat) -> None:
        """Take back the seat's last foul (a mistaken call)."""
        table = table_here(self.bot, interaction)
        await self._submit(interaction, RevokeFoul(seat=seat), "judge.done.unfoul", player=self._player(table, seat))

    @app_commands.command(name=_("remove", key="cmd.remove.name"),
                          description=_("Disqualify a player at once (judge)", key="cmd.remove.desc"))
    @app_commands.describe(seat=_("Seat number", key="cmd.arg.seat"),
                           reason=_("Why (kept with the game)", key="cmd.remove.reason"))
    @app_commands.rename(seat=_("seat", key="option.seat"), reason=_("reason", key="option.reason"))
    async def remove(self, interaction: discord.Interaction, seat: Seat, reason: Reason) -> None:
        """Disqualification: the player leaves with no last word; the reason is stored with the command."""
        if await self._too_long(interaction, reason):
            return
        table = table_here(self.bot, interaction)
        await self._submit(interaction, Disqualify(seat=seat, reason=reason), "judge.done.remove",
                           player=self._player(table, seat), reason=self._reason(interaction, reason))

    # -- the clock -------------------------------------------------------------------------------

    @app_commands.command(name=_("pause", key="cmd.pause.name"),
                          description=_("Stop every timer; mutes stay (judge)", key="cmd.pause.desc"))
    async def pause(self, interaction: discord.Interaction) -> None:
        """Stop the clock; the time left is kept for ``/mafia resume``."""
        await self._submit(interaction, Pause(), "judge.done.pause", **self.bot.commands_text(interaction.guild_id))

    @app_commands.command(name=_("resume", key="cmd.resume.name"),
                          description=_("Start the timers again (judge)", key="cmd.resume.desc"))
    async def resume(self, interaction: discord.Interaction) -> None:
        """Start the clock with the time that was left."""
        await self._submit(interaction, Resume(), "judge.done.resume")

    @app_commands.command(name=_("skip", key="cmd.skip.name"),
                          description=_("End the current speech or vote window now (judge)", key="cmd.skip.desc"))
    async def skip(self, interaction: discord.Interaction) -> None:
        """Act as if the running timer ran out; the step guards against a timer that fires meanwhile."""
        table = table_here(self.bot, interaction)
        command = Timeout(step=table.game.waiting().timer) if table is not None else None
        await self._submit(interaction, command, "judge.done.skip")

    @app_commands.command(name=_("extend", key="cmd.extend.name"),
                          description=_("Give the running timer more seconds (judge)", key="cmd.extend.desc"))
    @app_commands.describe(seconds=_("Seconds to add", key="cmd.extend.seconds"))
    @app_commands.rename(seconds=_("seconds", key="option.seconds"))
    async def extend(self, interaction: discord.Interaction, seconds: app_commands.Range[int, 1, 600]) -> None:
        """More time for the current speech or window.

        Nothing in the engine changes, so no event announces it: the answer is public, so the
        speaker and the table see the new end time.
        """
        table = await self._judged_table(interaction)
        if table is None:
            return
        # The judge speaks in game seconds; the table's clock runs at ``time_scale``.
        if not table.extend(seconds * table.time_scale):
            await refuse(self.bot, interaction, TableError("table.no_timer"))
            return
        ends = countdown(table.language, table.deadline())
        await answer(interaction, t(table.language, "judge.done.extend", count=seconds, countdown=ends),
                     ephemeral=False)

    # -- the day ---------------------------------------------------------------------------------

    @app_commands.command(name=_("nominate", key="cmd.nominate.name"),
                          description=_("Nominate a player for the speaker (judge)", key="cmd.nominate.desc"))
    @app_commands.describe(seat=_("Seat to put up for the vote", key="cmd.nominate.seat"))
    @app_commands.rename(seat=_("seat", key="option.seat"))
    async def nominate(self, interaction: discord.Interaction, seat: Seat) -> None:
        """A nomination on behalf of the floor holder (who said it aloud, or could not press)."""
        table = await self._judged_table(interaction)
        if table is None:
            return
        speaker = floor_holder(table.game.state)
        if speaker is None:
            await refuse(self.bot, interaction, TableError("nomination.not_now"))
            return
        await self._submit(interaction, Nominate(seat=speaker, target=seat), "judge.done.nominate",
                           player=self._player(table, seat), seat=speaker)

    # -- the end ---------------------------------------------------------------------------------

    @app_commands.command(name=_("draw", key="cmd.draw.name"),
                          description=_("End the game as a draw (judge)", key="cmd.draw.desc"))
    async def draw(self, interaction: discord.Interaction) -> None:
        """Declare a draw; it counts for the statistics like any result."""
        await self._submit(interaction, DeclareDraw(), "judge.done.draw")

    @app_commands.command(name=_("end", key="cmd.end.name"),
                          description=_("Abandon the game; it counts for no statistics (judge)",
                                        key="cmd.end.desc"))
    async def end(self, interaction: discord.Interaction) -> None:
        """Abandon the game: no result, no statistics, every mute lifted."""
        await self._submit(interaction, Abandon(), "judge.done.end")

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
        if await self._too_long(interaction, reason):
            return
        table = table_here(self.bot, interaction)
        number = value.strip()
        await self._submit(interaction, AwardPoints(seat=seat, value=number, reason=reason), "judge.done.points",
                           player=self._player(table, seat), value=plain(number, POINTS_TEXT_LIMIT))

    # -- the judge -------------------------------------------------------------------------------

    @app_commands.command(name=_("judge", key="cmd.judge.name"),
                          description=_("Hand the table over to another judge (judge)", key="cmd.judge.desc"))
    @app_commands.describe(member=_("The new judge", key="cmd.judge.member"))
    @app_commands.rename(member=_("member", key="option.member"))
    async def judge(self, interaction: discord.Interaction, member: discord.Member) -> None:
        """Hand over: kept in the table's stored meta, so a restarted bot knows the new judge."""
        table = await self._judged_table(interaction)
        if table is None:
            return
        if member.bot:
            await refuse(self.bot, interaction, TableError("table.judge_bot"))
            return
        if table.seat_of(member.id) is not None:
            # The judge is never muted, so a seated judge would keep the floor open all game.
            await refuse(self.bot, interaction, TableError("table.judge_seated"))
            return
        if table.over:
            await refuse(self.bot, interaction, TableError("table.closed"))
            return
        table.judge_id = member.id
        table.meta.judge = member.id
        await table.save_meta()
        table.refresh_voice()
        await answer(interaction, t(table.language, "judge.handover", judge=member.mention), ephemeral=False,
                     mentions=discord.AllowedMentions(users=[member]))
