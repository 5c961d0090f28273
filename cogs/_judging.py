"""Who may judge a table, and a judge's command submitted and confirmed.

The rule itself is ``may_judge`` of the table manager: the table's judge, a side judge or staff
(Manage Server, the server's judge role), never a player seated at it; who chooses the judges is its
``may_change_judges`` (the judge or staff, not a side judge). Here it is asked for the caller of a
command; the judge cog and the day cog (``/mafia skip``, ``/mafia nominate``) both use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from cogs._ack import in_time
from cogs._common import answer, is_admin, table_here
from engine import REASON_LIMIT, Command
from mafiabot.core.runtime import Table, TableError
from mafiabot.core.tables import may_change_judges, may_judge
from mafiabot.host.i18n import t
from mafiabot.host.presenter import plain, seat_label

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


def has_role(user: discord.abc.User, role_id: int | None) -> bool:
    """Whether ``user`` is a member with the role ``role_id``.

    The interaction's member carries its role ids even when the role is not in the bot's cache yet
    (created after the bot connected), so the ids are read, not the cached role objects.
    """
    if role_id is None or not isinstance(user, discord.Member):
        return False
    return user.get_role(role_id) is not None or user._roles.has(role_id)


async def is_staff(bot: MafiaBot, interaction: discord.Interaction) -> bool:
    """Manage Server, or the server's judge role: may judge (start, cancel) any table they do not play at."""
    if is_admin(interaction):
        return True
    if interaction.guild_id is None:
        return False
    settings = await bot.guild_settings(interaction.guild_id)
    return has_role(interaction.user, settings.judge_role_id)


async def judged_table(bot: MafiaBot, interaction: discord.Interaction) -> Table:
    """The channel's table, when the caller may judge it.

    Staff are only asked for when the caller is neither the judge nor seated (a settings read).

    Raises:
        TableError: ``lobby.none_here``; ``table.seated_judge`` for staff seated at the table (their
            usual power does not hold there); ``table.not_judge`` for anyone else.
    """
    table = table_here(bot, interaction)
    if table is None:
        raise TableError("lobby.none_here")
    actor = interaction.user.id
    seated = table.seat_of(actor) is not None
    staff = not seated and actor not in table.judges and await is_staff(bot, interaction)
    if not may_judge(actor, judge_id=table.judge_id, staff=staff, seated=seated, side=table.meta.judges):
        code = "table.seated_judge" if seated and await is_staff(bot, interaction) else "table.not_judge"
        raise TableError(code)
    return table


async def bench_table(bot: MafiaBot, interaction: discord.Interaction, *, stepping_down: bool = False) -> Table:
    """The channel's table, when the caller may choose its judges (``may_change_judges``).

    ``stepping_down``: a side judge taking themselves off, which any judge of the table may do.

    Raises:
        TableError: as ``judged_table``; ``table.side_judge_bench`` for a side judge who is not staff.
    """
    table = await judged_table(bot, interaction)
    actor = interaction.user.id
    if stepping_down or actor == table.judge_id:
        return table
    if not may_change_judges(actor, judge_id=table.judge_id, staff=await is_staff(bot, interaction), seated=False):
        raise TableError("table.side_judge_bench")
    return table


async def judge_submit(
    bot: MafiaBot, interaction: discord.Interaction, table: Table, command: Command, key: str, **fields: Any,
) -> None:
    """Submit ``command`` for the judge and confirm privately with ``key``.

    The presenter announces what happened from the events, so the judge only hears that it was done.
    """
    await in_time(bot, interaction, table.submit(command, actor=interaction.user.id), private=True)
    await answer(interaction, t(table.language, key, **fields))


def player_label(table: Table, seat: int) -> str:
    """``#3 Name`` in a confirmation; a seat the table lacks is named by its number (the engine refuses it)."""
    if not 1 <= seat <= len(table.seats):
        return f"#{seat}"
    return seat_label(table, seat)


def reason_text(table: Table, reason: str | None) -> str:
    """The reason as a confirmation echoes it (cut, markdown and mentions neutralized)."""
    if not reason:
        return ""
    return " " + t(table.language, "judge.reason", reason=plain(reason, REASON_LIMIT))
