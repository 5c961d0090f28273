"""The bot's settings, as the configuration file gives them (``mafiabot.tools.config`` reads the file).

The models live on the Discord side because the bot is what they configure; the file, its
validation messages and its ruleset folder check belong to the tools that start the bot.
"""

from __future__ import annotations

import os
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mafiabot.core.records import GuildSettings
from mafiabot.core.tables import TableOptions

Language = Literal["en", "ru", "ka"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DiscordSettings(_Section):
    """How to reach Discord."""

    token: str = ""
    """The bot token; ``DISCORD_TOKEN`` in the environment wins over this."""
    guild_ids: list[int] = Field(default_factory=list)
    """Guilds to sync the slash commands to at once; empty syncs them globally."""
    sync_commands: bool = True
    api_base: str = ""
    """REST base URL override, e.g. a local emulator (``http://127.0.0.1:PORT/api/v10``)."""
    gateway_url: str = ""
    """Gateway URL override, e.g. ``ws://127.0.0.1:PORT/``."""
    shard_count: int = Field(default=1, ge=1)
    """Gateway shards in total, over every process; a guild's games belong to its shard."""
    shard_ids: list[int] = Field(default_factory=list)
    """The shards this process runs. Empty: on PostgreSQL the processes share the shards through leases
    (``lease_seconds``), on SQLite this one process runs them all."""
    lease_seconds: float = Field(default=15.0, ge=1.0, le=60.0)
    """How long a shard's lease lasts unrenewed: a dead process's games move to another within about this."""
    global_rate_limit: int = Field(default=50, ge=1)
    """Requests per second each token may send over all routes (Discord's global limit)."""
    global_limit_redis: str = ""
    """A Redis URL through which every process of a token shares its global limit; empty: each keeps its own."""
    guild_ready_timeout: float = Field(default=2.0, gt=0, le=60)
    """Seconds without a new server at connect before the bot counts as ready and its tables resume:
    Discord sends the servers one by one (discord.py's 2 s); a local emulator sends them all at once."""

    @model_validator(mode="after")
    def _shards_in_range(self) -> DiscordSettings:
        bad = [i for i in self.shard_ids if not 0 <= i < self.shard_count]
        if bad:
            raise ValueError(f"shard_ids {bad} are not in 0..{self.shard_count - 1} (shard_count = {self.shard_count})")
        return self


class DatabaseSettings(_Section):
    """Where games, history and settings are kept."""

    url: str = "sqlite:///mafiabot.sqlite3"


class GameSettings(_Section):
    """Defaults for new tables; guild settings override them."""

    default_ruleset: str = "classic"
    language: Language = "en"
    time_scale: float = Field(default=1.0, gt=0, le=10)
    """Multiplies every timer; tests and the demo shorten the game with a small value."""
    rulesets_dir: str = ""
    """A folder of custom ruleset ``.toml`` files offered on every server; relative to the config file."""
    seat_order: Literal["random", "join"] = "random"
    seed: int | None = None
    """Seat and deal every table from this seed (reproducible demos and tests); None: a fresh seed each time."""
    lobby_idle_minutes: float = Field(default=30.0, gt=0, le=24 * 60)
    """An unstarted lobby with no join, leave or start for this long is closed, freeing its channels."""


class VoiceSettings(_Section):
    """The voice table."""

    mute_spectators: bool = False
    helper_tokens: list[str] = Field(default_factory=list)
    cues: bool = False


class WebSettings(_Section):
    """The stream server (``mafiabot.host.web``): off unless enabled."""

    enabled: bool = False
    host: str = "127.0.0.1"
    """Where it listens: loopback by default, behind a reverse proxy that adds TLS."""
    port: int = Field(default=8780, ge=0, le=65535)
    public_url: str = ""
    """The address viewers reach it at (the proxy's), e.g. ``https://stream.example.org``; empty: host and port."""
    viewers_per_link: int = Field(default=50, ge=1)
    """Open streams one link may hold at once; one more is refused until one closes."""
    viewers: int = Field(default=2000, ge=1)
    """Open streams the whole process may hold at once."""
    club_pages: bool = True
    """Serve the club's pages (``/club/<server id>/``) of the servers whose staff turned them on."""
    club_refresh: float = Field(default=60.0, gt=0)
    """At most this many seconds pass before a newly ended game shows on the served pages (read again behind them)."""

    @property
    def base_url(self) -> str:
        """What a link starts with."""
        return self.public_url.rstrip("/") or f"http://{self.host}:{self.port}"


class Config(_Section):
    """The whole configuration file."""

    discord: DiscordSettings = DiscordSettings()
    database: DatabaseSettings = DatabaseSettings()
    game: GameSettings = GameSettings()
    voice: VoiceSettings = VoiceSettings()
    web: WebSettings = WebSettings()

    @model_validator(mode="after")
    def _one_stream_server(self) -> Config:
        # Shards shared through leases run as one bot each in a process, and each bot would serve
        # the stream on the same address; one server for all of a process's bots is not built yet.
        shared = not self.discord.shard_ids and self.database.url.startswith("postgresql")
        if self.web.enabled and shared and self.discord.shard_count > 1:
            raise ValueError("web.enabled with several shards shared through leases is not supported yet: "
                             "set discord.shard_ids for each process (docs/scaling.md)")
        return self

    @property
    def token(self) -> str:
        """The bot token, from ``DISCORD_TOKEN`` or the file."""
        return os.environ.get("DISCORD_TOKEN", "") or self.discord.token


def table_options(config: Config) -> TableOptions:
    """What the table manager needs of the configuration."""
    game, voice = config.game, config.voice
    return TableOptions(
        default_ruleset=game.default_ruleset, seat_order=game.seat_order, seed=game.seed,
        lobby_idle_minutes=game.lobby_idle_minutes, time_scale=game.time_scale,
        mute_spectators=voice.mute_spectators, cues=voice.cues, helper_tokens=len(voice.helper_tokens),
    )


class SettingsStore(Protocol):
    """Where the servers' settings are saved (the store)."""

    async def get_settings(self, guild_id: int, *, default: GuildSettings | None = None) -> GuildSettings:
        """The server's settings; ``default`` when it never saved any."""

    async def save_settings(self, settings: GuildSettings) -> None:
        """Keep a server's settings."""

    async def hide_name(self, guild_id: int, user_id: int, *, hidden: bool = True) -> None:
        """Show the member as their seat on the club's pages (``hidden``), or by name again."""


class HostedSettings:
    """The servers' settings, with the host's language and ruleset for a server that saved none."""

    def __init__(self, store: SettingsStore, game: GameSettings) -> None:
        self._store = store
        self._default = GuildSettings(0, language=game.language, default_ruleset=game.default_ruleset)

    async def guild_settings(self, guild_id: int) -> GuildSettings:
        """The server's saved settings, or the host's defaults."""
        return await self._store.get_settings(guild_id, default=self._default)

    async def save(self, settings: GuildSettings) -> None:
        """Keep a server's changed settings (``/mafia settings``)."""
        await self._store.save_settings(settings)

    async def hide_name(self, guild_id: int, user_id: int, *, hidden: bool) -> None:
        """A member's own choice for the club's pages (``/mafia settings hide_my_name``)."""
        await self._store.hide_name(guild_id, user_id, hidden=hidden)
