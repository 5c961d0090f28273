"""What the table core needs from the outside world, as narrow interfaces the outer layers implement.

The store implements the game log, the mute ledger and the table records, the Discord side the
member editor and the click behind a command; the core never learns which.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from engine import Ruleset
    from mafiabot.core.nicks import Rename
    from mafiabot.core.protocol import Protest as GameProtest
    from mafiabot.core.protocol import ProtestedGame, ProtestStatus
    from mafiabot.core.protocol import Protocol as GameProtocol
    from mafiabot.core.records import (
        JSON,
        GameFinal,
        GameSummary,
        GuildSettings,
        LeagueRow,
        MuteRecord,
        PlayerStats,
        RatingPoint,
        SeatInfo,
        StoredGame,
    )


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
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        """Server-mute or unmute; False when ``still_wanted`` said no after waiting for budget.

        ``nick``: a rename carried in the same edit (``mafiabot.core.nicks``). ``table`` is whose edit
        it is and ``batch`` whether it is one of a game's start or end: the tables of one guild share
        its member-edit budget, floor changes go first and the tables take turns. Raises
        ``NotInVoiceError`` for a member out of voice, ``NickRefusedError`` when only the rename was refused.
        """

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        """The member's server mute as Discord last reported it; None when out of voice."""


class MuteLedger(Protocol):
    """Remembers every mute the bot made, across restarts."""

    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        """Note mutes before they are sent (one write for all of them)."""

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget mutes once they are lifted, or were never needed."""


class Liveness(Protocol):
    """Where the running games note that their process is alive (the store's ``seen``)."""

    async def seen(self, game_ids: Sequence[int], at: datetime) -> None:
        """The process running ``game_ids`` was alive ``at``: a restart reads the time left on their clocks then."""


class EditRefusedError(Exception):
    """Discord refused a member edit for a reason other than the member being out of voice.

    The Discord side's own error derives from this, so the core can tell a refusal to log from a bug.
    """

    status: int = 0
    """Discord's HTTP status: a 4xx is a refusal of the request as it was, anything else may pass later."""


def refused(error: EditRefusedError) -> bool:
    """Whether Discord refused the edit as it was (4xx but 429): sending it again would be refused again."""
    return 400 <= error.status < 500 and error.status != 429


class TableRecords(Protocol):
    """The store's rows of lobbies and games: which channels they claim, and which are still open."""

    async def open_lobby(
        self, *, guild_id: int, channel_id: int, voice_channel_id: int, judge_id: int, ruleset: Ruleset,
        language: str = "en",
    ) -> int:
        """Claim a text and a voice channel for a lobby; its game id. Raises ``ChannelTakenError``."""

    async def start_lobby(self, game_id: int) -> bool:
        """Turn a lobby into an open game; False when it is no lobby any more."""

    async def drop_lobby(self, game_id: int) -> None:
        """Forget a cancelled or expired lobby."""

    async def drop_lobbies(
        self, guild_filter: Callable[[int], bool] | None = None, *, keep: Iterable[int] = ()
    ) -> None:
        """Forget every lobby but ``keep`` of the guilds ``guild_filter`` keeps."""

    async def abandon_unstarted(
        self, guild_filter: Callable[[int], bool] | None = None, *, keep: Iterable[int] = ()
    ) -> list[int]:
        """Close the open games but ``keep`` that have no command yet; their ids."""

    async def release_channel(self, channel_id: int, *, unstarted_only: bool = False) -> list[int]:
        """Free a text channel of the lobbies and open games the database still holds there."""

    async def open_games(self, guild_filter: Callable[[int], bool] | None = None) -> list[StoredGame]:
        """Every open game (of the guilds ``guild_filter`` keeps), with its log, to resume."""

    async def owed_mutes(self, guild_id: int | None = None) -> list[MuteRecord]:
        """Every mute the bot still has to lift, on one server or on all of them."""

    async def clear_mute(self, guild_id: int, user_id: int) -> None:
        """Forget a mute once it is lifted."""

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        """Forget the mutes of several members once they are lifted."""


class SettingsLookup(Protocol):
    """A server's saved settings, with the host's defaults where it saved none."""

    async def guild_settings(self, guild_id: int) -> GuildSettings:
        """The settings of ``guild_id``."""


class KnownRuleset(Protocol):
    """A ruleset under the name it is looked up by."""

    @property
    def key(self) -> str:
        """The lookup name."""

    @property
    def ruleset(self) -> Ruleset:
        """The rules."""


class RulesetLookup(Protocol):
    """The rulesets a server may open a table with (presets, the host's, the server's uploads)."""

    async def find(self, guild_id: int, name: str) -> KnownRuleset | None:
        """The ruleset called ``name`` on ``guild_id``; None when there is none."""

    async def available(self, guild_id: int) -> Sequence[KnownRuleset]:
        """Every ruleset ``guild_id`` may use."""


class History(Protocol):
    """Games already played, as the store reads them back (``/mafia history``, ``game``, ``stats``, ``top``)."""

    async def recent_games(self, guild_id: int, limit: int = 10) -> list[GameSummary]:
        """A server's latest games, newest first."""

    async def game_protocol(self, game_id: int) -> GameProtocol:
        """A game's protocol; raises ``GameNotFoundError`` for no such game."""

    async def export_json(self, game_id: int) -> str:
        """The whole game as JSON; raises ``GameNotFoundError``."""

    async def export_csv(self, game_id: int, *, table: Literal["seats", "log"] = "seats") -> str:
        """The result sheet or the log as CSV; raises ``GameNotFoundError``."""

    async def game_record(self, game_id: int) -> tuple[StoredGame, GameProtocol]:
        """The game as stored and its protocol, for the rating sites' exports; raises ``GameNotFoundError``."""

    async def player_stats(self, guild_id: int, user_id: int, ruleset: str | None = None, *,
                           leave_out: Collection[int] = ()) -> PlayerStats:
        """A member's record on a server."""

    async def league(
        self, guild_id: int, *, since: datetime | None = None, ruleset: str | None = None, limit: int | None = None,
        leave_out: Collection[int] = (),
    ) -> list[LeagueRow]:
        """A server's league table."""

    async def rating_history(self, guild_id: int, user_id: int) -> list[RatingPoint]:
        """A member's rating after each rated game."""


class Protests(Protocol):
    """Players' protests of games and the rulings on them (``/mafia protest``), with the games they name."""

    async def recent_games(self, guild_id: int, limit: int = 10) -> list[GameSummary]:
        """A server's latest games, newest first."""

    async def get_game(self, game_id: int) -> StoredGame:
        """A game as stored; raises ``GameNotFoundError``."""

    async def file_protest(self, *, game_id: int, user_id: int, seat: int, text: str, during_game: bool,
                           at: datetime | None = None) -> GameProtest:
        """Keep a player's protest."""

    async def game_protests(self, game_id: int) -> list[GameProtest]:
        """A game's protests, in the order they were filed."""

    async def protested_game(self, protest_id: int) -> ProtestedGame | None:
        """A protest with who may rule on it; None for no such protest."""

    async def rule_protest(self, protest_id: int, *, status: ProtestStatus, note: str, by: int,
                           at: datetime | None = None) -> GameProtest | None:
        """Uphold or reject a protest with a note (a later ruling replaces an earlier one); None for no such protest."""
