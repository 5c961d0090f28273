"""The store's tables, as SQLModel classes.

Discord ids are snowflakes above 2**31, so every one of them is a ``BigInteger``: both SQLite and
PostgreSQL then keep them exact. Times are stored in UTC (``UTCDateTime``) because SQLite keeps no
zone and a naive time read back from it must not be taken for local time. Points are decimal
strings, never floats, so that 0.4 + 0.25 - 0.5 adds up to exactly what rules.md#points says.

The tables get their own ``MetaData`` with a naming convention, so every constraint has a stable
name that a later migration can refer to, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Dialect,
    ForeignKeyConstraint,
    Index,
    MetaData,
    Text,
    TypeDecorator,
    text,
)
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)
"""Every table of the store, and nothing else (the migrations compare against exactly this)."""


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC ``datetime`` in, an aware UTC ``datetime`` out, whatever the backend keeps."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Refuse naive times; write UTC."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"a naive datetime cannot be stored, it has no zone: {value!r}")
        value = value.astimezone(UTC)
        # SQLite's DATETIME keeps no offset; writing it naive keeps the text sortable and uniform.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Read UTC, with the zone attached even where the backend dropped it."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


HOLDS_CHANNELS = "status IN ('lobby', 'open')"
"""The games that hold their text and voice channel: a lobby being formed, or a game being played."""


class StoreModel(SQLModel, registry=registry(metadata=metadata)):
    """The base of the store's tables: they register in ``metadata``, not SQLModel's global one."""


def _json() -> Any:
    return Field(default_factory=dict, sa_type=JSON)


class GameRow(StoreModel, table=True):
    """One table's game: where it runs, under which rules, and how far its log goes."""

    __tablename__ = "games"
    __table_args__ = (
        Index("ix_games_status_guild_id", "status", "guild_id"),
        # One table per text channel and per voice channel, whichever process opens it: the
        # database refuses the second lobby, so two ``/mafia new`` at once cannot both win.
        Index("uq_games_live_channel_id", "channel_id", unique=True,
              sqlite_where=text(HOLDS_CHANNELS), postgresql_where=text(HOLDS_CHANNELS)),
        Index("uq_games_live_voice_channel_id", "voice_channel_id", unique=True,
              sqlite_where=text(HOLDS_CHANNELS), postgresql_where=text(HOLDS_CHANNELS)),
    )

    id: int | None = Field(default=None, primary_key=True)
    guild_id: int = Field(sa_type=BigInteger)
    channel_id: int = Field(sa_type=BigInteger)
    voice_channel_id: int | None = Field(default=None, sa_type=BigInteger)
    judge_id: int | None = Field(default=None, sa_type=BigInteger)
    ruleset_name: str = Field(max_length=64)
    ruleset: dict[str, Any] = _json()
    language: str = Field(default="en", max_length=8)
    status: str = Field(default="open", max_length=16)
    """``lobby`` (being formed; gone after a restart), ``open`` (recovered on start), ``finished`` or ``abandoned``."""
    created_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    result: str | None = Field(default=None, max_length=16)
    reason: str | None = Field(default=None, max_length=32)
    last_seq: int = 0
    """The sequence number of the last appended command; the next one must be exactly one more."""
    timer_id: int | None = None
    timer_deadline: datetime | None = Field(default=None, sa_type=UTCDateTime)
    timer_remaining: float | None = None
    """Seconds left on the timer while the game is paused (the deadline is then meaningless)."""
    seen_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    """When the process running the game was last known alive: a restart keeps the time left as it was then."""
    discord: dict[str, Any] = _json()
    """Whatever the bot needs back after a restart: message ids, thread ids and the like."""


class SeatRow(StoreModel, table=True):
    """Who sits where; ``role`` is secret until the game ends and only the bot decides when to show it."""

    __tablename__ = "seats"
    __table_args__ = (ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),)

    game_id: int = Field(primary_key=True)
    seat: int = Field(primary_key=True)
    user_id: int = Field(sa_type=BigInteger, index=True)
    display_name: str = Field(default="", max_length=100)
    role: str | None = Field(default=None, max_length=16)


class CommandRow(StoreModel, table=True):
    """One accepted command; the primary key (game, seq) is what stops two writers taking one position."""

    __tablename__ = "commands"
    __table_args__ = (ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),)

    game_id: int = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    command: dict[str, Any] = _json()
    actor_id: int | None = Field(default=None, sa_type=BigInteger)
    at: datetime = Field(sa_type=UTCDateTime)


class EventRow(StoreModel, table=True):
    """One event a command produced, at ``position`` among that command's events."""

    __tablename__ = "events"
    __table_args__ = (
        ForeignKeyConstraint(["game_id", "seq"], ["commands.game_id", "commands.seq"], ondelete="CASCADE"),
    )

    game_id: int = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    position: int = Field(primary_key=True)
    type: str = Field(max_length=40)
    event: dict[str, Any] = _json()


class GuildSettingsRow(StoreModel, table=True):
    """A server's settings; a server without a row uses the defaults."""

    __tablename__ = "guild_settings"

    guild_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    language: str = Field(default="en", max_length=8)
    judge_role_id: int | None = Field(default=None, sa_type=BigInteger)
    default_ruleset: str = Field(default="classic", max_length=64)
    timers: dict[str, Any] = _json()
    vote_window: int | None = None
    mute_spectators: bool = True
    voice_cues: bool = True
    results_channel_id: int | None = Field(default=None, sa_type=BigInteger)
    strict_tables: bool = False
    seat_nicknames: bool = False
    judge_sees_roles: bool = True
    organiser_role_id: int | None = Field(default=None, sa_type=BigInteger)
    site_pages: bool = False


class SiteHiddenRow(StoreModel, table=True):
    """A member who asked the club's pages to show their seat instead of their name."""

    __tablename__ = "site_hidden"

    guild_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    user_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})


class MuteLedgerRow(StoreModel, table=True):
    """A server mute the bot made and still owes lifting, kept across crashes."""

    __tablename__ = "mute_ledger"
    __table_args__ = (ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="SET NULL"),)

    guild_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    user_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    game_id: int | None = None
    muted_at: datetime = Field(sa_type=UTCDateTime)


class NickLedgerRow(StoreModel, table=True):
    """A seat nickname the bot gave and still owes taking back, with the nickname to give back."""

    __tablename__ = "nick_ledger"
    __table_args__ = (ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="SET NULL"),)

    guild_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    user_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    game_id: int | None = None
    nick: str | None = Field(default=None, max_length=32)
    """The member's own nickname before the game; NULL: they had none."""
    renamed_at: datetime = Field(sa_type=UTCDateTime)


class ResultRow(StoreModel, table=True):
    """One seat's line in a finished game's result, denormalised for stats and league tables."""

    __tablename__ = "results"
    __table_args__ = (
        ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),
        Index("ix_results_guild_id_user_id", "guild_id", "user_id"),
        Index("ix_results_guild_id_finished_at", "guild_id", "finished_at"),
    )

    game_id: int = Field(primary_key=True)
    seat: int = Field(primary_key=True)
    user_id: int = Field(sa_type=BigInteger)
    display_name: str = Field(default="", max_length=100)
    guild_id: int = Field(sa_type=BigInteger)
    ruleset_name: str = Field(max_length=64)
    finished_at: datetime = Field(sa_type=UTCDateTime)
    role: str = Field(max_length=16)
    team: str = Field(max_length=16)
    won: bool
    draw: bool = False
    points: str = Field(max_length=32)
    """The seat's total for the game (rules.md#points), an exact decimal string."""
    extra_points: str = Field(max_length=32)
    """Everything but the win point: Best Move, penalties and the judge's points."""
    fouls: int = 0
    best_move_black: int | None = None
    """How many black seats the Best Move named; None when this seat made none."""
    removed: bool = False


class RatingRow(StoreModel, table=True):
    """A player's rating on one server under one ruleset."""

    __tablename__ = "ratings"

    guild_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    ruleset_name: str = Field(primary_key=True, max_length=64)
    user_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    rating: float
    games: int = 0
    updated_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class GuildRulesetRow(StoreModel, table=True):
    """A ruleset a server's admin uploaded: its TOML as sent, and the validated ruleset it gave."""

    __tablename__ = "guild_rulesets"

    guild_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    key: str = Field(primary_key=True, max_length=64)
    """The lookup name (lowercase); ``name`` is the name tables show."""
    name: str = Field(max_length=64)
    source: str = Field(sa_type=Text)
    ruleset: dict[str, Any] = _json()
    """``Ruleset.to_dict()``, what tables play; ``source`` is kept for ``/mafia ruleset show``."""
    uploaded_by: int = Field(sa_type=BigInteger)
    uploaded_at: datetime = Field(sa_type=UTCDateTime)


class TournamentRow(StoreModel, table=True):
    """A tournament of one server: its rules, its size, the seed its schedule came from, how far it got."""

    __tablename__ = "tournaments"
    __table_args__ = (Index("ix_tournaments_guild_id_status", "guild_id", "status"),)

    id: int | None = Field(default=None, primary_key=True)
    guild_id: int = Field(sa_type=BigInteger)
    name: str = Field(max_length=100)
    ruleset_name: str = Field(max_length=64)
    ruleset: dict[str, Any] = _json()
    """``Ruleset.to_dict()`` when the tournament was made: every table of it plays these rules."""
    scoring: str = Field(max_length=16)
    rounds: int
    tables: int
    seed: int = Field(sa_type=BigInteger)
    status: str = Field(default="registration", max_length=16)
    """``registration``, ``seated`` (between rounds), ``playing`` (round ``current_round`` open) or ``finished``."""
    current_round: int = 0
    organiser_id: int = Field(sa_type=BigInteger)
    created_at: datetime = Field(sa_type=UTCDateTime)
    finals: int = 0
    """How many of the last rounds are finals."""
    finals_weight: str = Field(default="1", max_length=16)
    """The finals' multiplier as exact decimal text (``1.5``): a float would round it."""
    site_hidden_rounds: int = 0
    """How many of the last rounds the club's pages keep hidden until the tournament ends."""
    announcement_channel_id: int | None = Field(default=None, sa_type=BigInteger)
    announcement_message_id: int | None = Field(default=None, sa_type=BigInteger)
    """The registration announcement, edited when registration closes."""


class TournamentPlayerRow(StoreModel, table=True):
    """A registered player, with the name they registered under (standings outlive nicknames)."""

    __tablename__ = "tournament_players"
    __table_args__ = (ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),)

    tournament_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    user_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    display_name: str = Field(default="", max_length=100)
    joined_at: datetime = Field(sa_type=UTCDateTime)


class TournamentForbiddenRow(StoreModel, table=True):
    """Two players who must never share a table (``low`` < ``high``)."""

    __tablename__ = "tournament_forbidden"
    __table_args__ = (ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),)

    tournament_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    low: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    high: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})


class TournamentSeatRow(StoreModel, table=True):
    """One place of the schedule: who sits at ``seat`` of ``table_no`` in ``round``."""

    __tablename__ = "tournament_seats"
    __table_args__ = (ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),)

    tournament_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    round: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    table_no: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    seat: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    user_id: int = Field(sa_type=BigInteger)


class TournamentTableRow(StoreModel, table=True):
    """A table of an opened round: its channels, its judge, and its game once started."""

    __tablename__ = "tournament_tables"
    __table_args__ = (
        ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="SET NULL"),
        Index("ix_tournament_tables_channel_id", "channel_id"),
    )

    tournament_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    round: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    table_no: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    channel_id: int = Field(sa_type=BigInteger)
    voice_channel_id: int = Field(sa_type=BigInteger)
    judge_id: int | None = Field(default=None, sa_type=BigInteger)
    game_id: int | None = None


class TournamentChannelsRow(StoreModel, table=True):
    """The text and voice channel the bot made for a tournament's table, reused by every round."""

    __tablename__ = "tournament_channels"
    __table_args__ = (ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),)

    tournament_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    table_no: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    channel_id: int = Field(sa_type=BigInteger)
    voice_channel_id: int = Field(sa_type=BigInteger)


class ShardLeaseRow(StoreModel, table=True):
    """Which process runs a gateway shard, until when, and the fencing number of its turn.

    ``fence`` grows each time the shard passes to a new owner, so a write carrying an older number
    comes from a process that lost the shard and is refused.
    """

    __tablename__ = "shard_leases"

    shard_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    owner: str = Field(sa_type=Text, default="")
    expires_at: datetime = Field(sa_type=UTCDateTime)
    fence: int = Field(sa_type=BigInteger, default=0)


class LeaseMemberRow(StoreModel, table=True):
    """A process taking part in the shard leases (running shards or standing by), until when."""

    __tablename__ = "lease_members"

    owner: str = Field(sa_type=Text, primary_key=True)
    expires_at: datetime = Field(sa_type=UTCDateTime)
    lock_key: int | None = Field(default=None)
    """The PostgreSQL advisory lock the process holds on its own connection for its life (``OwnerLock``):
    free means the process is gone. NULL: none (SQLite, or an older version), so only expiry counts."""


class IdentifyTurnRow(StoreModel, table=True):
    """When the next IDENTIFY of a gateway rate-limit key may go, for every process of the token."""

    __tablename__ = "identify_turns"

    key: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    next_at: datetime = Field(sa_type=UTCDateTime)


TABLES = (
    GameRow, SeatRow, CommandRow, EventRow, GuildSettingsRow, MuteLedgerRow, ResultRow, RatingRow, GuildRulesetRow,
    TournamentRow, TournamentPlayerRow, TournamentForbiddenRow, TournamentSeatRow, TournamentTableRow,
    TournamentChannelsRow, ShardLeaseRow, LeaseMemberRow,
    IdentifyTurnRow,
)


class StreamLinkRow(StoreModel, table=True):
    """A link to a table's live feed (``mafiabot.host.web``): its tier, its delay, and whether it still opens.

    Only the SHA-256 of the link's token is kept, so a copy of the database opens no stream.
    """

    __tablename__ = "stream_links"
    __table_args__ = (
        ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),
        Index("ix_stream_links_game_id", "game_id"),
        Index("uq_stream_links_token_hash", "token_hash", unique=True),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int
    tier: str = Field(max_length=16)
    """``public``, ``broadcast`` or ``judge``."""
    token_hash: str = Field(max_length=64)
    delay: float = 0.0
    """Seconds the feed is held back (the broadcast tier's; 0 for the others)."""
    created_at: datetime = Field(sa_type=UTCDateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    """Set once the game is over: the link still shows the result until then, and nothing after."""


class ProtestRow(StoreModel, table=True):
    """A player's protest of a game, filed during it or within the ruleset's window after it, and its ruling.

    Kept apart from the game's log: the log holds the engine's commands, and a protest is none (it
    changes no rule's outcome and may come after the game is over).
    """

    __tablename__ = "protests"
    __table_args__ = (
        ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),
        Index("ix_protests_game_id", "game_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int
    user_id: int = Field(sa_type=BigInteger)
    seat: int
    text: str = Field(sa_type=Text)
    filed_at: datetime = Field(sa_type=UTCDateTime)
    during_game: bool
    status: str = Field(default="open", max_length=16)
    """``open``, ``upheld`` or ``rejected``."""
    note: str = Field(default="", sa_type=Text)
    ruled_by: int | None = Field(default=None, sa_type=BigInteger)
    ruled_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class ProtocolRow(StoreModel, table=True):
    """A finished game's protocol as its log decides it, stored once (``mafiabot.store.projection``).

    No name, Discord id, point or protest is in ``body``: those are read from their own rows, so
    forgetting a member or ruling on a protest never leaves this row behind.
    """

    __tablename__ = "protocols"
    __table_args__ = (ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),)

    game_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    shape: str = Field(max_length=16)
    """``projection.SHAPE`` when written: a body of another shape is built again from the log."""
    body: str = Field(sa_type=Text)
