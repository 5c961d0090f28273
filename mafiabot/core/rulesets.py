"""Custom rulesets: the host's folder (``[game] rulesets_dir``), each server's uploads, and the CLI's files.

The engine validates a ruleset's meaning (``engine.from_mapping``); this module adds what a shared
bot needs on top of it: a file size limit, a name that cannot be mistaken for a preset, timers and
counts a table can live with, and one order of lookup for every place a ruleset is named
(``/mafia new``, ``/mafia settings``, ``mafiabot demo``/``simulate``). A server's own ruleset wins
over the host's folder, which wins over nothing: presets cannot be shadowed.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from engine import Ruleset, RulesetError, find_ruleset
from engine.ruleset import ALIASES, MAX_PLAYERS, NESTED_TOO_DEEPLY, PRESETS
from mafiabot.core.records import stored_ruleset

if TYPE_CHECKING:
    from mafiabot.core.records import StoredRuleset

MAX_RULESET_BYTES = 64 * 1024
"""The largest ruleset file accepted: the longest sensible ruleset is a few kilobytes."""
MAX_TOML_DEPTH = 500
"""Arrays and tables nested deeper than this are refused as TOML (a real ruleset nests two or three; a
shallower hostile value is refused by the setting it is given to)."""
MAX_NAME_LENGTH = 64
"""Names are stored with each game (``games.ruleset_name``) and shown in autocomplete (100 at most)."""
MAX_SERVER_RULESETS = 20
"""A server's own rulesets; with the presets they fit in one autocomplete list (25 at most)."""
MAX_TIMER_SECONDS = 3600
MAX_FOULS = 10
MAX_PROTEST_WINDOW = 86400
"""A day: a protest is about a game the judge still remembers."""
MAX_MANIAC_SHOTS = 12
MAX_REMOVAL_PENALTY = Decimal(10)
_PENALTY_STEP = Decimal("0.01")
"""Scores are shown in hundredths; "1e-999999999" would be a penalty no table can show."""
_NIGHT_LIMIT = 12
_TIMERS = tuple(name for name in Ruleset.__dataclass_fields__ if name.endswith("_seconds"))
_CONTROL = re.compile(r"[\x00-\x1f\x7f`@#:*_~|<>\\]")

Source = Literal["preset", "host", "server"]


class RulesetFileError(ValueError):
    """A ruleset file is unusable; ``key`` names the setting at fault (``toml`` for the syntax, ``file``)."""

    def __init__(self, where: str, key: str, reason: str, *, code: str = "invalid", **data: object) -> None:
        super().__init__(f"{where}: {key}: {reason}" if where else f"{key}: {reason}")
        self.where = where
        self.key = key
        self.reason = reason
        self.code = code
        """``invalid`` (the engine's or a bound's reason, in English) or a specific refusal with ``data``."""
        self.data = data


@dataclass(frozen=True, slots=True)
class NamedRuleset:
    """A ruleset under the name it is looked up by, and where it came from."""

    key: str
    """The lookup name: lowercase, unique among presets, the host's folder and the server's uploads."""
    ruleset: Ruleset
    source: Source
    text: str = ""
    """The TOML the ruleset was read from ('' for a preset)."""

    @property
    def name(self) -> str:
        """The name tables show."""
        return self.ruleset.name


def ruleset_key(name: str) -> str:
    """The lookup form of a name: trimmed and case-folded."""
    return " ".join(name.split()).casefold()


def is_preset_name(name: str) -> bool:
    """Whether ``name`` is a preset or one of its aliases."""
    key = ruleset_key(name)
    return key in PRESETS or key in ALIASES


def _invisible(name: str) -> bool:
    """Control and format characters (zero-width spaces, right-to-left overrides) that disguise a name."""
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cn") for ch in name)


def _bounds(rules: Ruleset, where: str) -> None:
    def too_high(name: str, limit: int | Decimal, unit: str = "") -> RulesetFileError:
        return RulesetFileError(where, name, f"at most {limit}{unit}", code="too_high", max=limit)

    for name in _TIMERS:
        if getattr(rules, name) > MAX_TIMER_SECONDS:
            raise too_high(name, MAX_TIMER_SECONDS, " seconds")
    for name in ("foul_removal_at", "technical_foul_removal_at"):
        if getattr(rules, name) > MAX_FOULS:
            raise too_high(name, MAX_FOULS)
    if rules.maniac_shots > MAX_MANIAC_SHOTS:
        raise too_high("maniac_shots", MAX_MANIAC_SHOTS)
    if rules.maniac_first_kill_night > _NIGHT_LIMIT:
        raise too_high("maniac_first_kill_night", _NIGHT_LIMIT)
    if rules.doctor_self_limit is not None and rules.doctor_self_limit > _NIGHT_LIMIT:
        raise too_high("doctor_self_limit", _NIGHT_LIMIT)
    if rules.doctor_min_players > MAX_PLAYERS:
        raise too_high("doctor_min_players", MAX_PLAYERS, ", the largest table")
    penalty = rules.removal_penalty
    if not Decimal(0) <= penalty <= MAX_REMOVAL_PENALTY or penalty != penalty.quantize(_PENALTY_STEP):
        raise RulesetFileError(where, "removal_penalty", f"from 0 to {MAX_REMOVAL_PENALTY} points, in hundredths",
                               code="out_of_range", min=0, max=MAX_REMOVAL_PENALTY)
    if rules.protest_window > MAX_PROTEST_WINDOW:
        raise too_high("protest_window", MAX_PROTEST_WINDOW, " seconds")
    if rules.short_speech_alive > max(rules.setups):
        raise too_high("short_speech_alive", max(rules.setups), ", the largest table")


def parse_ruleset(text: str | bytes, *, default_name: str, where: str = "") -> Ruleset:
    """Read a custom ruleset from TOML, with the engine's validation and the bounds a shared bot needs.

    A file without ``name`` is known by ``default_name`` (its file name). ``where`` prefixes errors.

    Raises:
        RulesetFileError: too large, not UTF-8 or TOML, a setting invalid or out of bounds, or a
            name that is empty, too long, or a preset's; the error names the key.
    """
    data = _read_toml(text, where)
    name = _custom_name(data.get("name", default_name), where)
    try:
        rules = stored_ruleset({**data, "name": name})
    except RulesetError as exc:
        if exc.code == "unknown_setting":
            raise RulesetFileError(where, exc.field, exc.reason, code=exc.code, guess=exc.suggestion) from None
        raise RulesetFileError(where, exc.field, exc.reason) from None
    _bounds(rules, where)
    return rules


def _read_toml(text: str | bytes, where: str) -> dict[str, object]:
    """The settings of a ruleset file: at most ``MAX_RULESET_BYTES`` of UTF-8 TOML."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if len(raw) > MAX_RULESET_BYTES:
        raise RulesetFileError(where, "file", f"{len(raw)} bytes; at most {MAX_RULESET_BYTES}",
                               code="too_large", size=len(raw), max=MAX_RULESET_BYTES)
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RulesetFileError(where, "file", "not UTF-8 text", code="not_text") from None
    try:
        data = tomllib.loads(decoded)
    except tomllib.TOMLDecodeError as exc:
        raise RulesetFileError(where, "toml", str(exc)) from None
    except RecursionError:
        raise RulesetFileError(where, "toml", NESTED_TOO_DEEPLY) from None
    # The parser stops a deep file only at the interpreter's recursion limit, which a library may
    # have raised in this process: the depth is bounded here whatever that limit is.
    if _deeper_than(data, MAX_TOML_DEPTH):
        raise RulesetFileError(where, "toml", NESTED_TOO_DEEPLY)
    return data


def _deeper_than(data: object, limit: int) -> bool:
    """Whether arrays and tables nest more than ``limit`` deep (walked without recursion)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return False


def _custom_name(name: object, where: str) -> str:
    """A custom ruleset's name, its spaces folded: short, plain, and not a preset's."""
    if not isinstance(name, str):
        raise RulesetFileError(where, "name", "must be text")
    name = " ".join(name.split())
    if not name or len(name) > MAX_NAME_LENGTH or _CONTROL.search(name) or _invisible(name):
        raise RulesetFileError(where, "name", f"1 to {MAX_NAME_LENGTH} characters, none of ` @ # : * _ ~ | < > \\",
                               code="bad_name", max=MAX_NAME_LENGTH)
    if is_preset_name(name):
        raise RulesetFileError(where, "name", f"{name!r} is a preset's name; choose another",
                               code="preset_name", name=name)
    return name


def load_rulesets_dir(folder: str | Path) -> dict[str, NamedRuleset]:
    """Every ``*.toml`` of the host's folder, by lookup name.

    Raises:
        RulesetFileError: the folder is missing, a file is bad (named with its key), or two files
            share a name.
    """
    path = Path(folder)
    if not path.is_dir():
        raise RulesetFileError(str(path), "rulesets_dir", "no such folder")
    found: dict[str, NamedRuleset] = {}
    for file in sorted(path.glob("*.toml")):
        rules = parse_ruleset(file.read_bytes(), default_name=file.stem, where=str(file))
        key = ruleset_key(rules.name)
        if key in found:
            raise RulesetFileError(str(file), "name", f"{rules.name!r} is also the name of another file")
        found[key] = NamedRuleset(key, rules, "host", file.read_text(encoding="utf-8"))
    return found


def resolve_ruleset(name_or_path: str, *, rulesets_dir: str | Path | None = None,
                    stored: Iterable[NamedRuleset] = ()) -> NamedRuleset:
    """The ruleset a command line or a table names: a ``.toml`` file, a stored name, or a preset.

    ``stored`` (a server's rulesets) wins over ``rulesets_dir``, which wins over the presets'
    aliases; presets' own names cannot be taken.

    Raises:
        RulesetFileError: a named file is bad.
        RulesetError: nothing has that name (``key`` is ``ruleset``).
    """
    path = Path(name_or_path)
    if path.suffix.lower() == ".toml" and path.is_file():
        rules = parse_ruleset(path.read_bytes(), default_name=path.stem, where=str(path))
        return NamedRuleset(ruleset_key(rules.name), rules, "host", path.read_text(encoding="utf-8"))
    key = ruleset_key(name_or_path)
    for candidate in stored:
        if candidate.key == key:
            return candidate
    if rulesets_dir:
        hosted = load_rulesets_dir(rulesets_dir)
        if key in hosted:
            return hosted[key]
    try:
        preset = find_ruleset(name_or_path)
    except RulesetError:
        known = [*PRESETS, *(r.key for r in stored)]
        if rulesets_dir:
            known += list(load_rulesets_dir(rulesets_dir))
        raise RulesetError("ruleset", f"unknown ruleset {name_or_path!r}; choose one of {', '.join(known)}") from None
    return NamedRuleset(preset.name, preset, "preset")


def _named(stored: StoredRuleset) -> NamedRuleset:
    return NamedRuleset(stored.key, stored.ruleset, "server", stored.source)


class GuildRulesets(Protocol):
    """Where a server's uploads are kept: ``GuildRulesetRepo``, or the whole ``Store``."""

    async def guild_rulesets(self, guild_id: int) -> list[StoredRuleset]:
        """A server's rulesets, by lookup name."""

    async def get_guild_ruleset(self, guild_id: int, key: str) -> StoredRuleset | None:
        """A server's ruleset by lookup name, if it has one."""

    async def save_guild_ruleset(
        self, *, guild_id: int, key: str, ruleset: Ruleset, source: str, uploaded_by: int, limit: int,
    ) -> SaveOutcome:
        """Keep a server's ruleset under ``key``; ``full`` (nothing written) at ``limit`` others."""

    async def remove_guild_ruleset(self, guild_id: int, key: str) -> bool:
        """Forget a server's ruleset; False when it had none of that name."""


SaveOutcome = Literal["saved", "replaced", "full"]
"""What keeping an upload did: a new ruleset, one of that name replaced, or none (the server is full)."""


class RulesetCatalog:
    """The rulesets a bot offers: presets, the host's folder (read once at start), and each server's."""

    def __init__(self, uploads: GuildRulesets, hosted: Mapping[str, NamedRuleset] | None = None) -> None:
        self._uploads = uploads
        self.hosted: dict[str, NamedRuleset] = dict(hosted or {})

    @classmethod
    def from_folder(cls, uploads: GuildRulesets, folder: str | Path | None) -> RulesetCatalog:
        """The catalog of ``[game] rulesets_dir`` ('' or None: presets only)."""
        return cls(uploads, load_rulesets_dir(folder) if folder else None)

    def presets(self) -> list[NamedRuleset]:
        """The three presets."""
        return [NamedRuleset(key, rules, "preset") for key, rules in PRESETS.items()]

    async def of_guild(self, guild_id: int) -> list[NamedRuleset]:
        """The server's own rulesets, by name."""
        return [_named(r) for r in await self._uploads.guild_rulesets(guild_id)]

    async def available(self, guild_id: int) -> list[NamedRuleset]:
        """Everything a table of this server may play: presets, then the host's, then the server's."""
        own = await self.of_guild(guild_id)
        taken = {r.key for r in own}
        return [*self.presets(), *(r for k, r in sorted(self.hosted.items()) if k not in taken), *own]

    async def find(self, guild_id: int, name: str) -> NamedRuleset | None:
        """The ruleset called ``name`` (a lookup name, a shown name, or a preset alias) here, if any."""
        key = ruleset_key(name)
        stored = await self._uploads.get_guild_ruleset(guild_id, key)
        if stored is not None:
            return _named(stored)
        if key in self.hosted:
            return self.hosted[key]
        try:
            preset = find_ruleset(name)
        except RulesetError:
            return None
        return NamedRuleset(preset.name, preset, "preset")

    async def own(self, guild_id: int, key: str) -> NamedRuleset | None:
        """The server's own upload under lookup name ``key``, if it has one (presets and the host's aside)."""
        stored = await self._uploads.get_guild_ruleset(guild_id, key)
        return None if stored is None else _named(stored)

    async def keep(self, guild_id: int, rules: Ruleset, source: str, uploaded_by: int) -> SaveOutcome:
        """Keep an upload under its lookup name, replacing one of that name; ``full`` at ``MAX_SERVER_RULESETS``."""
        return await self._uploads.save_guild_ruleset(
            guild_id=guild_id, key=ruleset_key(rules.name), ruleset=rules, source=source, uploaded_by=uploaded_by,
            limit=MAX_SERVER_RULESETS)

    async def remove(self, guild_id: int, key: str) -> bool:
        """Forget the server's upload under ``key``; games played with it keep their own copy."""
        return await self._uploads.remove_guild_ruleset(guild_id, key)


__all__ = [
    "MAX_NAME_LENGTH",
    "MAX_RULESET_BYTES",
    "MAX_SERVER_RULESETS",
    "GuildRulesets",
    "NamedRuleset",
    "RulesetCatalog",
    "RulesetFileError",
    "SaveOutcome",
    "is_preset_name",
    "load_rulesets_dir",
    "parse_ruleset",
    "resolve_ruleset",
    "ruleset_key",
]
