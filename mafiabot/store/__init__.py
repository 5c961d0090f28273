"""Persistence: the append-only game log, settings, the mute ledger, history, stats and ratings.

``await Store.open(url)`` migrates and opens a database (a SQLite file or PostgreSQL); everything
else is a coroutine on the store. ``upgrade(url)`` is the blocking migration for the command line.
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
from mafiabot.core.records import (
    GameFinal,
    GameSummary,
    GuildSettings,
    LeagueRow,
    MuteRecord,
    PlayerStats,
    RatingEntry,
    SeatFinal,
    SeatInfo,
    StoredCommand,
    StoredGame,
    StoredRuleset,
    WinCount,
    final_from_game,
    stored_ruleset,
)
from mafiabot.store.db import make_engine, sqlite_url, upgrade
from mafiabot.store.protocol import Protocol, build_protocol
from mafiabot.store.store import Store

__all__ = [
    "ChannelTakenError",
    "ConcurrencyError",
    "GameClosedError",
    "GameFinal",
    "GameNotFoundError",
    "GameSummary",
    "GuildSettings",
    "LeagueRow",
    "MuteRecord",
    "PlayerStats",
    "Protocol",
    "RatingEntry",
    "SeatFinal",
    "SeatInfo",
    "SettingsError",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "StoredCommand",
    "StoredGame",
    "StoredRuleset",
    "WinCount",
    "build_protocol",
    "final_from_game",
    "make_engine",
    "sqlite_url",
    "stored_ruleset",
    "upgrade",
]
