"""Persistence: the append-only game log, settings, the mute ledger, history, stats and ratings.

``await Store.open(url)`` migrates and opens a database (a SQLite file or PostgreSQL); everything
else is a coroutine on the store or on one of its repositories (``store.log``, ``store.tables``,
``store.mutes``, ``store.settings``, ``store.rulesets``, ``store.history``), each in its own module.
``upgrade(url)`` is the blocking migration for the command line.
"""

from mafiabot.core.errors import (
    ChannelTakenError,
    ConcurrencyError,
    GameClosedError,
    GameNotFoundError,
    SettingsError,
    StoreError,
    StoreUnavailableError,
)
from mafiabot.core.protocol import Protocol
from mafiabot.core.records import (
    GameFinal,
    GameSummary,
    GuildSettings,
    LeagueRow,
    MuteRecord,
    PlayerStats,
    RatingEntry,
    RatingPoint,
    SeatFinal,
    SeatInfo,
    StoredCommand,
    StoredGame,
    StoredRuleset,
    WinCount,
    final_from_game,
    stored_ruleset,
)
from mafiabot.store.db import Database, make_engine, sqlite_url, upgrade
from mafiabot.store.guild_rulesets import GuildRulesetRepo
from mafiabot.store.history import HistoryRepo
from mafiabot.store.leases import IdentifyTurns, LeaseRepo, OwnerLock
from mafiabot.store.log import GameLogRepo, read_games
from mafiabot.store.mutes import MuteLedgerRepo
from mafiabot.store.settings import SettingsRepo
from mafiabot.store.store import Store
from mafiabot.store.tables import TableRepo

__all__ = [
    "ChannelTakenError",
    "ConcurrencyError",
    "Database",
    "GameClosedError",
    "GameFinal",
    "GameLogRepo",
    "GameNotFoundError",
    "GameSummary",
    "GuildRulesetRepo",
    "GuildSettings",
    "HistoryRepo",
    "IdentifyTurns",
    "LeagueRow",
    "LeaseRepo",
    "MuteLedgerRepo",
    "MuteRecord",
    "OwnerLock",
    "PlayerStats",
    "Protocol",
    "RatingEntry",
    "RatingPoint",
    "SeatFinal",
    "SeatInfo",
    "SettingsError",
    "SettingsRepo",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "StoredCommand",
    "StoredGame",
    "StoredRuleset",
    "TableRepo",
    "WinCount",
    "final_from_game",
    "make_engine",
    "read_games",
    "sqlite_url",
    "stored_ruleset",
    "upgrade",
]
