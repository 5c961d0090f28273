"""The Discord side of the table manager: what each table gets from here, and what it tells here.

The manager itself (``mafiabot.core.tables``) knows neither Discord nor SQL; ``DiscordTableSide``
fills its ``TableSide`` port with the presenter, the voice cues and the lobby messages.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import discord

from mafiabot.core.runtime import Effects
from mafiabot.core.tables import OPENING_NOTICE_SECONDS
from mafiabot.host.i18n import t
from mafiabot.host.voicecues import cues_for_table

if TYPE_CHECKING:
    from mafiabot.core.fairplay import Alert
    from mafiabot.core.nicks import Blocked
    from mafiabot.core.runtime import CueSink, Lobby, Table
    from mafiabot.host.ports import Client

log = logging.getLogger(__name__)


class TablePresenter(Effects, Protocol):
    """What the table side needs of the presenter: showing events, and hearing of mutes and restarts."""

    def fair_play(self, table: Table, alert: Alert) -> None:
        """Tell the table's judges of a seated player's lapse."""

    def resumed(self, table: Table) -> None:
        """A game was rebuilt after a restart."""

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        """Seats whose nicknames the bot may not change."""

    async def catch_up_votes(self, table: Table) -> None:
        """Count the votes cast while the bot was away."""

    def tell_judges(self, table: Table, text: str) -> None:
        """A note for the table's judges."""


class DiscordTableSide:
    """The table manager's ``TableSide`` on Discord."""

    def __init__(self, presenter: TablePresenter, client: Client) -> None:
        self._presenter = presenter
        self._client = client

    @property
    def effects(self) -> Effects:
        """The presenter."""
        return self._presenter

    def fair_play(self, table: Table, alert: Alert) -> None:
        """Tell the judges (the presenter does)."""
        self._presenter.fair_play(table, alert)

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        """Tell the judge which seats are not numbered (the presenter does)."""
        self._presenter.unnumbered(table, blocked)

    def resumed(self, table: Table) -> None:
        """Show the table again (the presenter does)."""
        self._presenter.resumed(table)

    async def catch_up_votes(self, table: Table) -> None:
        """Read the votes cast while the bot was away (the presenter does)."""
        await self._presenter.catch_up_votes(table)

    def slow_opening(self, table: Table, *, tables: int, seconds: int, helpers: int) -> None:
        """Tell the judges that Night 0 waits for the round's start mutes, and how many helper tokens it needs."""
        text = t(table.language, "opening.slow", count=helpers, channel=f"<#{table.channel_id}>", tables=tables,
                 seconds=seconds, target=round(OPENING_NOTICE_SECONDS))
        self._presenter.tell_judges(table, text)

    def cues(self, table: Table) -> CueSink:
        """The table's cues in its voice channel."""
        return cues_for_table(self._client, table)

    def powers_text(self, language: str, powers: Sequence[str]) -> str:
        """The powers, each by its ``power.<name>`` message."""
        return ", ".join(t(language, f"power.{p}") for p in powers)

    def holders_text(self, language: str, holders: Sequence[tuple[int, Sequence[str]]]) -> str:
        """Each player as a mention, with their powers in brackets."""
        return "; ".join(f"<@{user}> ({self.powers_text(language, powers)})" for user, powers in holders)

    async def lobby_expired(self, lobby: Lobby, minutes: int) -> None:
        """Mark the lobby's message closed and drop its buttons."""
        if lobby.message_id is None:
            return
        message = self._client.get_partial_messageable(lobby.channel_id).get_partial_message(lobby.message_id)
        try:
            await message.edit(content=t(lobby.language, "lobby.expired", count=minutes), view=None)
        except discord.HTTPException:
            log.info("could not mark the expired lobby %s", lobby.id)


__all__ = ["DiscordTableSide", "TablePresenter"]
