"""Configuration: one TOML file (see ``config.example.toml``), with the token from the environment.

Every key is validated; an unknown or malformed key is refused with a message that names it, so a
host finds a typo at start, not in the middle of an evening.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from mafiabot.host.settings import (
    Config,
    DatabaseSettings,
    DiscordSettings,
    GameSettings,
    Language,
    VoiceSettings,
    WebSettings,
)

__all__ = [
    "Config",
    "ConfigError",
    "DatabaseSettings",
    "DiscordSettings",
    "GameSettings",
    "Language",
    "VoiceSettings",
    "WebSettings",
    "load_config",
    "parse_config",
]



class ConfigError(ValueError):
    """The configuration is unusable; the message names the key and the reason."""


def _known_keys(loc: tuple[int | str, ...]) -> list[str]:
    """The keys allowed beside the last part of ``loc``: the fields of the section that holds it."""
    model: Any = Config
    for part in loc[:-1]:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None or not isinstance(field.annotation, type) or not issubclass(field.annotation, BaseModel):
            return []
        model = field.annotation
    return list(model.model_fields)


def _unknown_key(loc: tuple[int | str, ...]) -> str:
    close = difflib.get_close_matches(str(loc[-1]), _known_keys(loc), n=1)
    return f"unknown key; did you mean {close[0]}?" if close else "unknown key"


def _describe(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        reason = _unknown_key(error["loc"]) if error["type"] == "extra_forbidden" else error["msg"]
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
    from mafiabot.core.rulesets import RulesetFileError, is_preset_name, load_rulesets_dir, ruleset_key

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
