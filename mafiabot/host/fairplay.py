"""Fair-play alerts on Discord: the words of each, and the one path that gets them to the table's judges.

``mafiabot.core.fairplay`` decides what deserves an alert; here it becomes a direct message to each
judge (``alert_recipients``). Nothing here is ever posted in public: an alert that comes at night
tells by its timing that someone is awake. When a judge takes no direct messages, the judge is told
so once (``mafiabot.host.refusals``), and in public only after the game. The exceptions are a
mute lifted by someone else, heard by the whole table anyway, and the note on seats that keep their
nicknames: they keep the judge's usual path (``Sender.tell_judge``), the table's channel when the
judge takes no direct messages, and reach the side judges by direct message too (``tell_judges``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from mafiabot.core.fairplay import Alert, Lapse
from mafiabot.core.nicks import Blocked
from mafiabot.host.i18n import t
from mafiabot.host.refusals import Action
from mafiabot.host.render import TableView, custom_id

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table
    from mafiabot.host.sender import Sender

log = logging.getLogger(__name__)


def alert_recipients(table: Table) -> list[int]:
    """Who hears a table's fair-play alerts: its judges (the one place that says so)."""
    return [table.judge_id, *sorted(table.judges - {table.judge_id})]


def when_text(language: str, alert: Alert) -> str:
    """When it happened, as a host says it: "night 2", "night 0", "day 3"."""
    if alert.at_night and alert.number == 0:
        return t(language, "fairplay.when.night_zero")
    if alert.at_night:
        return t(language, "fairplay.when.night", number=alert.number)
    return t(language, "fairplay.when.day", number=alert.number)


def alert_text(view: TableView, alert: Alert) -> str:
    """The alert in the table's language: who (seat and name), when, and what they did."""
    lang = view.language
    fields = {"when": when_text(lang, alert), "player": view.label(alert.seat), "channel": f"<#{view.channel_id}>"}
    match alert.lapse:
        case Lapse.CAMERA:
            return t(lang, "fairplay.camera", **fields)
        case Lapse.STREAM:
            return t(lang, "fairplay.stream", **fields)
        case Lapse.MESSAGE:
            return t(lang, "fairplay.message", **fields)
        case Lapse.MUTE_LIFTED:
            return t(lang, "fairplay.mute_lifted", **fields)
        case Lapse.DEAFENED:
            return t(lang, "fairplay.deafened", **fields)
        case Lapse.CAMERA_OFF:
            return t(lang, "fairplay.camera_off", **fields)


def blocked_text(language: str, player: str, why: Blocked) -> str:
    """A seat the bot may not rename, with why: the owner, a role not below the bot's, ..."""
    match why:
        case "owner":
            return t(language, "nicks.blocked.owner", player=player)
        case "role":
            return t(language, "nicks.blocked.role", player=player)
        case "permission":
            return t(language, "nicks.blocked.permission", player=player)
        case "unknown":
            return t(language, "nicks.blocked.unknown", player=player)
        case "refused":
            return t(language, "nicks.blocked.refused", player=player)


def unnumbered_text(view: TableView, blocked: list[tuple[int, Blocked]]) -> str:
    """The one note to the judge: which seats keep their own nicknames, and why."""
    lang = view.language
    players = ", ".join(blocked_text(lang, view.label(seat), why) for seat, why in blocked)
    return t(lang, "nicks.unnumbered", count=len(blocked), channel=f"<#{view.channel_id}>", players=players)


async def _direct(sender: Sender, judge_id: int, text: str, view: discord.ui.View | None = None) -> None:
    """A direct message to one judge, mentioning nobody; Discord's refusal is the caller's."""
    judge = sender.client.get_user(judge_id) or await sender.client.fetch_user(judge_id)
    if view is None:
        await judge.send(text, allowed_mentions=discord.AllowedMentions.none())
    else:
        await judge.send(text, view=view, allowed_mentions=discord.AllowedMentions.none())


PRESENCE_FOUL = "presfoul"
"""The action of the button on a camera-off alert: ``mafia:presfoul:<table>:<seat>`` gives that seat a foul."""


def foul_button(table: Table, alert: Alert) -> discord.ui.View | None:
    """The one-click foul on a camera-off alert (the judge decides; the bot never fouls by itself)."""
    if alert.lapse is not Lapse.CAMERA_OFF:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label=t(table.language, "fairplay.foul_button"), style=discord.ButtonStyle.danger,
                                    custom_id=custom_id(PRESENCE_FOUL, table.id, str(alert.seat))))
    return view


async def tell_judges(sender: Sender, table: Table, text: str) -> None:
    """A note nobody at the table may miss the point of: the judge's usual way, and each side judge's DMs.

    The table's channel stands in for the judge's closed DMs (``Sender.tell_judge``), so a side judge
    whose DMs are closed too is only logged: the note is in the channel already, or on its way.
    """
    await sender.tell_judge(table, text)
    for judge_id in alert_recipients(table)[1:]:
        try:
            await _direct(sender, judge_id, text)
        except discord.HTTPException as exc:
            log.info("table %s: a note did not reach side judge %s (%s)", table.id, judge_id, exc)


async def alert_judges(sender: Sender, table: Table, alert: Alert, text: str) -> None:
    """Send ``text`` to each of the table's judges as a direct message, never in public.

    A mute lifted by someone else goes the judge's usual way instead (see the module's docstring).
    """
    if alert.lapse is Lapse.MUTE_LIFTED:
        await tell_judges(sender, table, text)
        return
    for judge_id in alert_recipients(table):
        try:
            await _direct(sender, judge_id, text, foul_button(table, alert))
        except discord.HTTPException as exc:
            log.info("table %s: a fair-play alert did not reach judge %s (%s)", table.id, judge_id, exc)
            await sender.refused(table, Action.ALERT_JUDGE, exc)


__all__ = [
    "PRESENCE_FOUL",
    "alert_judges",
    "alert_recipients",
    "alert_text",
    "blocked_text",
    "foul_button",
    "tell_judges",
    "unnumbered_text",
    "when_text",
]
