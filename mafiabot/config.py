"""Configuration: one TOML file (see ``config.example.toml``), with the token from the environment.

Every key is validated; an unknown or malformed key is refused with a message that names it, so a
host finds a typo at start, not in the middle of an evening.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Language = Literal["en", "ru", "ka"]


class ConfigError(ValueError):
    """The configuration is unusable; the message names the key and the reason."""


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
    """The shards this process runs; empty runs them all."""
    global_rate_limit: int = Field(default=50, ge=1)
    """Requests per second each token may send over all routes (Discord's global limit)."""

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


class Config(_Section):
    """The whole configuration file."""

    discord: DiscordSettings = DiscordSettings()
    database: DatabaseSettings = DatabaseSettings()
    game: GameSettings = GameSettings()
    voice: VoiceSettings = VoiceSettings()

    @property
    def token(self) -> str:
        """The bot token, from ``DISCORD_TOKEN`` or the file."""
        return os.environ.get("DISCORD_TOKEN", "") or self.discord.token


def _describe(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        reason = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        lines.append(f"{where}: {reason}")
    return "; ".join(lines)


def parse_config(data: dict[str, Any]) -> Config:
    """Validate plain data as a config.

    Raises:
        ConfigError: a key is unknown or a value invalid; the message names it.
    """
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None
    _check_rulesets(config.game)
    return config


def _check_rulesets(game: GameSettings) -> None:
    """Read the host's ruleset folder now, so a bad file stops the start, and check the default against it."""
    from engine.ruleset import PRESETS
    from mafiabot.rulesets import RulesetFileError, is_preset_name, load_rulesets_dir, ruleset_key

    hosted = {}
    if game.rulesets_dir:
        try:
            hosted = load_rulesets_dir(game.rulesets_dir)
        except RulesetFileError as exc:
            raise ConfigError(f"game.rulesets_dir: {exc}") from None
    if not is_preset_name(game.default_ruleset) and ruleset_key(game.default_ruleset) not in hosted:
        known = ", ".join([*PRESETS, *hosted])
        raise ConfigError(f"game.default_ruleset: unknown ruleset {game.default_ruleset!r}; choose one of {known}")


def load_config(path: str | Path | None) -> Config:
    """Read the config file, or the defaults when ``path`` is None.

    Raises:
        ConfigError: the file is missing, not TOML, or has a bad key.
    """
    if path is None:
        return Config()
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    game = data.get("game")
    if isinstance(game, dict) and isinstance(game.get("rulesets_dir"), str) and game["rulesets_dir"]:
        # A host starts the bot from anywhere; the folder sits beside the config that names it.
        game["rulesets_dir"] = str(file.parent / Path(game["rulesets_dir"]).expanduser())
    return parse_config(data)
