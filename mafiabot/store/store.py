"""The store as one object: the repositories of each concern over one database.

Each concern is its own repository (``log``, ``tables``, ``mutes``, ``settings``, ``rulesets``,
``history``, ``tournaments``, ``privacy``), and a component is best handed only the one it uses.
``Store`` opens the database, holds the repositories, and answers each of their methods itself too (``store.append`` is
``store.log.append``), for the callers that hold the whole store.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy import Engine

from mafiabot.store.db import Database
from mafiabot.store.guild_rulesets import GuildRulesetRepo
from mafiabot.store.history import HistoryRepo
from mafiabot.store.leases import LeaseRepo
from mafiabot.store.log import GameLogRepo
from mafiabot.store.mutes import MuteLedgerRepo, NickLedgerRepo
from mafiabot.store.privacy import PrivacyRepo
from mafiabot.store.protests import ProtestRepo
from mafiabot.store.settings import SettingsRepo
from mafiabot.store.streams import StreamLinkRepo
from mafiabot.store.tables import TableRepo
from mafiabot.store.tournaments import TournamentRepo

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")


def _via(repo: Callable[[Store], R], method: Callable[Concatenate[R, P], T]) -> Callable[Concatenate[Store, P], T]:
    """The store's own method for a repository's ``method``: same signature, same documentation."""

    @functools.wraps(method)
    def delegated(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return method(repo(self), *args, **kwargs)

    return delegated


class Store:
    """The bot's database. Make one with ``await Store.open(url)`` and ``await store.close()`` it."""

    def __init__(self, db: Database) -> None:
        """Compose the repositories over ``db``; ``open`` is the way to get one."""
        self.db = db
        self.log = GameLogRepo(db)
        """Games, seats, the command/event log, timers and results (``mafiabot.core.ports.GameLog``)."""
        self.tables = TableRepo(db)
        """Lobbies and the one table each channel holds."""
        self.mutes = MuteLedgerRepo(db)
        """The mutes the bot owes (``mafiabot.core.ports.MuteLedger``)."""
        self.nicks = NickLedgerRepo(db)
        """The seat nicknames the bot owes taking back (``mafiabot.core.nicks.NickLedger``)."""
        self.settings = SettingsRepo(db)
        """Each server's settings."""
        self.rulesets = GuildRulesetRepo(db)
        """Each server's uploaded rulesets."""
        self.history = HistoryRepo(db)
        """Past games, protocols, exports, statistics, the league and ratings."""
        self.tournaments = TournamentRepo(db)
        """Tournaments: registration, schedules, round tables and their games."""
        self.streams = StreamLinkRepo(db)
        """The links to the tables' live feeds (``mafiabot.host.web``)."""
        self.leases = LeaseRepo(db)
        """The shard leases of processes that share the shards (``mafiabot.core.leases``)."""
        self.protests = ProtestRepo(db)
        """Players' protests of games and the rulings on them."""
        self.privacy = PrivacyRepo(db)
        """Forgetting a member's records on a server, or a whole server's (docs/privacy.md)."""

    @classmethod
    async def open(cls, url: str, *, migrate: bool = True) -> Store:
        """Connect to ``url`` and migrate it to the newest schema.

        ``url`` is ``sqlite:///path/to/file.db`` or ``postgresql+psycopg://user@host/db``.

        Raises:
            ValueError: the URL names an unsupported database.
        """
        return cls(await Database.open(url, migrate=migrate))

    async def close(self) -> None:
        """Finish the queued work and release every connection."""
        await self.db.close()

    @property
    def engine(self) -> Engine:
        """The synchronous engine; only for tools and tests, never from the event loop."""
        return self.db.engine

    @property
    def url(self) -> str:
        """The database's address, password included: for a process of its own to connect by (``make_engine``)."""
        return self.db.engine.url.render_as_string(hide_password=False)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.db.engine.dialect.name

    create_game = _via(lambda s: s.log, GameLogRepo.create_game)
    seat_players = _via(lambda s: s.log, GameLogRepo.seat_players)
    append = _via(lambda s: s.log, GameLogRepo.append)
    load_log = _via(lambda s: s.log, GameLogRepo.load_log)
    get_game = _via(lambda s: s.log, GameLogRepo.get_game)
    get_games = _via(lambda s: s.log, GameLogRepo.get_games)
    open_games = _via(lambda s: s.log, GameLogRepo.open_games)
    set_timer = _via(lambda s: s.log, GameLogRepo.set_timer)
    set_discord_meta = _via(lambda s: s.log, GameLogRepo.set_discord_meta)
    seen = _via(lambda s: s.log, GameLogRepo.seen)
    finish_game = _via(lambda s: s.log, GameLogRepo.finish_game)

    open_lobby = _via(lambda s: s.tables, TableRepo.open_lobby)
    start_lobby = _via(lambda s: s.tables, TableRepo.start_lobby)
    drop_lobby = _via(lambda s: s.tables, TableRepo.drop_lobby)
    drop_lobbies = _via(lambda s: s.tables, TableRepo.drop_lobbies)
    abandon_unstarted = _via(lambda s: s.tables, TableRepo.abandon_unstarted)
    release_channel = _via(lambda s: s.tables, TableRepo.release_channel)

    record_mute = _via(lambda s: s.mutes, MuteLedgerRepo.record_mute)
    record_mutes = _via(lambda s: s.mutes, MuteLedgerRepo.record_mutes)
    clear_mute = _via(lambda s: s.mutes, MuteLedgerRepo.clear_mute)
    clear_mutes = _via(lambda s: s.mutes, MuteLedgerRepo.clear_mutes)
    owed_mutes = _via(lambda s: s.mutes, MuteLedgerRepo.owed_mutes)

    record_nicks = _via(lambda s: s.nicks, NickLedgerRepo.record_nicks)
    clear_nicks = _via(lambda s: s.nicks, NickLedgerRepo.clear_nicks)
    owed_nicks = _via(lambda s: s.nicks, NickLedgerRepo.owed_nicks)

    get_settings = _via(lambda s: s.settings, SettingsRepo.get_settings)
    save_settings = _via(lambda s: s.settings, SettingsRepo.save_settings)
    hide_name = _via(lambda s: s.settings, SettingsRepo.hide_name)
    hidden_names = _via(lambda s: s.settings, SettingsRepo.hidden_names)
    site_guilds = _via(lambda s: s.settings, SettingsRepo.site_guilds)

    save_guild_ruleset = _via(lambda s: s.rulesets, GuildRulesetRepo.save_guild_ruleset)
    guild_rulesets = _via(lambda s: s.rulesets, GuildRulesetRepo.guild_rulesets)
    get_guild_ruleset = _via(lambda s: s.rulesets, GuildRulesetRepo.get_guild_ruleset)
    remove_guild_ruleset = _via(lambda s: s.rulesets, GuildRulesetRepo.remove_guild_ruleset)

    file_protest = _via(lambda s: s.protests, ProtestRepo.file_protest)
    game_protests = _via(lambda s: s.protests, ProtestRepo.game_protests)
    protested_game = _via(lambda s: s.protests, ProtestRepo.protested_game)
    rule_protest = _via(lambda s: s.protests, ProtestRepo.rule_protest)

    forget_member = _via(lambda s: s.privacy, PrivacyRepo.forget_member)
    forget_guild = _via(lambda s: s.privacy, PrivacyRepo.forget_guild)

    recent_games = _via(lambda s: s.history, HistoryRepo.recent_games)
    game_protocol = _via(lambda s: s.history, HistoryRepo.game_protocol)
    ended_protocols = _via(lambda s: s.history, HistoryRepo.ended_protocols)
    ended_games = _via(lambda s: s.history, HistoryRepo.ended_games)
    export_json = _via(lambda s: s.history, HistoryRepo.export_json)
    export_csv = _via(lambda s: s.history, HistoryRepo.export_csv)
    game_record = _via(lambda s: s.history, HistoryRepo.game_record)
    player_stats = _via(lambda s: s.history, HistoryRepo.player_stats)
    league = _via(lambda s: s.history, HistoryRepo.league)
    ratings = _via(lambda s: s.history, HistoryRepo.ratings)
    rating_history = _via(lambda s: s.history, HistoryRepo.rating_history)

    create_tournament = _via(lambda s: s.tournaments, TournamentRepo.create_tournament)
    get_tournament = _via(lambda s: s.tournaments, TournamentRepo.get_tournament)
    guild_tournaments = _via(lambda s: s.tournaments, TournamentRepo.guild_tournaments)
    site_holds = _via(lambda s: s.tournaments, TournamentRepo.site_holds)
