"""What the table core needs from the outside world, as narrow interfaces the outer layers implement.

The store implements the game log and the mute ledger, the Discord side the member editor and the
click behind a command; the core never learns which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mafiabot.core.records import JSON, GameFinal, SeatInfo


class Reply(Protocol):
    """The public click behind a command, as the Discord side keeps it; the core only hands it on."""

    channel_id: int


class GameLog(Protocol):
    """The durable command log (the store)."""

    async def append(
        self, game_id: int, seq: int, command: Mapping[str, JSON], events: Sequence[Mapping[str, JSON]], *,
        actor_id: int | None, at: datetime,
    ) -> None:
        """Store one accepted command and its events in one transaction."""

    async def set_timer(
        self, game_id: int, timer_id: int, deadline: datetime | None, remaining: float | None
    ) -> None:
        """Remember the running timer, so a restart can re-arm it with the time that was left."""

    async def seat_players(
        self, game_id: int, seats: Sequence[SeatInfo], *,
        muting_in: int | None = None, muting: Sequence[int] | None = None,
    ) -> None:
        """Write who sits where, with the dealt cards (and ``muting``, in guild ``muting_in``, on the mute ledger)."""

    async def set_discord_meta(self, game_id: int, meta: Mapping[str, JSON]) -> None:
        """Keep the Discord ids a restarted bot needs (thread, vote messages)."""

    async def finish_game(self, game_id: int, final: GameFinal) -> None:
        """Write the result, the points and the ratings."""


class MemberEditor(Protocol):
    """Sends member edits to Discord and reads what Discord has."""

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None
    ) -> bool:
        """Server-mute or unmute; False when ``still_wanted`` said no after waiting for budget.

        Raises ``NotInVoiceError`` for a member out of voice.
        """

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        """The member's server mute as Discord last reported it; None when out of voice."""


class MuteLedger(Protocol):
    """Remembers every mute the bot made, across restarts."""

    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        """Note mutes before they are sent (one write for all of them)."""

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget mutes once they are lifted, or were never needed."""
