"""The judge's console on Discord: which message each judge's panel is, the token that edits it, until when.

The panel is an ephemeral message, and Discord lets a bot edit an ephemeral message only through the
webhook of an interaction on it: the ``/mafia panel`` that opened it, or a later click on it. Each such
token lives 15 minutes (Discord's "Receiving and Responding": interaction tokens are valid for 15
minutes), so the board keeps, per table and judge, the latest interaction and when its token ends.
Every click on the panel answers by updating the panel and hands the board a fresh token; when the
token has run out, the panel stays as it was last drawn (its footer says until when it is kept
current) until the judge clicks Refresh or runs ``/mafia panel`` again.

The game moving on is told to the board after the public messages are out (the presenter's
listeners), so keeping the panel current never delays a floor change: each panel has at most one
edit in flight, and whatever changes meanwhile is drawn once, by the next edit. What changes the
panel without an engine event (``/mafia clock extend``, the server's ``judge_sees_roles``) is told to the
board as a bot event (``cogs.panel``), on a task of its own, so the command's answer never waits.

Nothing here survives a restart, and nothing needs to: after one the judge re-opens the panel.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import discord

if TYPE_CHECKING:
    from mafiabot.core.clock import TableClock
    from mafiabot.core.runtime import Table

log = logging.getLogger(__name__)

TOKEN_SECONDS = 15 * 60
"""How long Discord keeps an interaction token for edits of its message."""
TOKEN_MARGIN = 30.0
"""Seconds before the end of a token at which the board stops using it: an edit then could land too late."""
GONE = frozenset({(401, 50027), (404, 10015), (404, 10008)})
"""Invalid Webhook Token (expired), Unknown Webhook, Unknown Message (the judge dismissed the panel)."""


@dataclass
class Panel:
    """One judge's console of one table, as the board knows it."""

    table_id: int
    judge_id: int
    language: str
    roles: bool
    """Whether it shows every role (the server's ``judge_sees_roles`` when it was last opened or clicked)."""
    clock: TableClock = field(repr=False)
    """The table's clock, which the token's end is counted on."""
    staff: bool = False
    """Opened by staff (Manage Server, the judge role), not by one of the table's judges."""
    closed: bool = False
    """Its judge no longer judges the table: drawn once more, empty, and forgotten."""
    interaction: discord.Interaction | None = None
    """The latest interaction on the panel, whose webhook edits it; None before the first answer."""
    expires: float = 0.0
    """The time on ``clock`` after which the token is not used any more."""
    expires_at: float = 0.0
    """The same moment as a Unix time, for the footer's ``<t:…>``."""
    note: str = ""
    """The answer to the judge's last action, shown on top of the panel."""
    confirm: str = ""
    """An action waiting for the judge's confirmation (``end``, ``draw``), or empty."""
    technical: bool = False
    """The foul menu gives technical fouls (the judge switched it where the rules have them)."""
    shown: str = ""
    """The content last put on Discord, so a redraw that changes nothing costs no request."""
    dirty: bool = field(default=False, repr=False)
    editing: asyncio.Task[None] | None = field(default=None, repr=False)


Draw = Callable[["Table", Panel], tuple[str, discord.ui.View]]
"""Draws a panel: its text and its controls."""


class PanelBoard:
    """Every open panel, kept current as the game moves, one edit in flight per panel."""

    def __init__(self, draw: Draw) -> None:
        self._draw = draw
        self.panels: dict[tuple[int, int], Panel] = {}
        self.edits = 0
        """Webhook edits sent, for tests and reports."""

    def panel(self, table: Table, judge_id: int, *, language: str, roles: bool) -> Panel:
        """The judge's panel of ``table`` (a new one if none is open), with the current setting.

        The caller has just been found to judge the table (``may_judge``); one who is not among the
        table's judges does as staff.
        """
        key = (table.id, judge_id)
        panel = self.panels.get(key)
        if panel is None:
            panel = self.panels[key] = Panel(table.id, judge_id, language, roles, table.clock)
        panel.language, panel.roles, panel.staff = language, roles, judge_id not in table.judges
        return panel

    def draw(self, table: Table, panel: Panel) -> tuple[str, discord.ui.View]:
        """The panel's text and controls now; remembered as what Discord shows once it is sent."""
        content, view = self._draw(table, panel)
        panel.shown = content
        return content, view

    def answered(self, panel: Panel, interaction: discord.Interaction) -> None:
        """``interaction`` answered with the panel: its token edits the panel from now on."""
        panel.interaction = interaction
        panel.expires = panel.clock.time() + TOKEN_SECONDS - TOKEN_MARGIN
        panel.expires_at = panel.clock.wall(panel.expires).timestamp()

    def changed(self, table: Table) -> None:
        """The table moved on: redraw its panels, after whatever edit of each is in flight."""
        for key, panel in list(self.panels.items()):
            if key[0] != table.id:
                continue
            if panel.editing is not None and not panel.editing.done():
                panel.dirty = True
                continue
            panel.dirty = False
            panel.editing = asyncio.ensure_future(self._keep_current(table, panel))
        if table.over:
            self.forget(table.id, keep_running=True)

    def roles_changed(self, table: Table, *, roles: bool) -> None:
        """The server's ``judge_sees_roles`` changed: the table's open panels show the roles or hide them now."""
        for (table_id, _), panel in self.panels.items():
            if table_id == table.id:
                panel.roles = roles
        self.changed(table)

    async def _keep_current(self, table: Table, panel: Panel) -> None:
        while True:
            await self._edit(table, panel)
            if not panel.dirty:
                return
            panel.dirty = False

    async def _edit(self, table: Table, panel: Panel) -> None:
        interaction = panel.interaction
        if interaction is None or panel.clock.time() >= panel.expires:
            return  # the footer says until when it was kept current; a click renews it
        if not panel.staff and panel.judge_id not in table.judges:
            panel.closed = True  # handed over or taken off: the table is no longer theirs to watch
            self.panels.pop((table.id, panel.judge_id), None)
        content, view = self._draw(table, panel)
        if content == panel.shown:
            return
        try:
            self.edits += 1
            await interaction.edit_original_response(content=content, view=view,
                                                     allowed_mentions=discord.AllowedMentions.none())
            panel.shown = content
        except discord.HTTPException as exc:
            if (exc.status, exc.code) in GONE:
                log.info("table %s: the judge's panel can no longer be edited (%s, code %s)", table.id,
                         exc.status, exc.code)
                panel.interaction = None
            else:
                log.warning("table %s: could not update the judge's panel: %s", table.id, exc)

    def forget(self, table_id: int, *, keep_running: bool = False) -> None:
        """Drop the table's panels (its game is over); an edit in flight finishes unless told otherwise."""
        for key in [k for k in self.panels if k[0] == table_id]:
            panel = self.panels.pop(key)
            if not keep_running and panel.editing is not None:
                panel.editing.cancel()

    async def close(self) -> None:
        """Cancel every edit in flight (the cog unloads)."""
        tasks = [p.editing for p in self.panels.values() if p.editing is not None and not p.editing.done()]
        self.panels.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
