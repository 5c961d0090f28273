"""A game's files beside its page: the protocol sheet as SVG and the bot's own JSON and CSV exports.

The sheet is the picture the bot posts, laid out by the same code (``pictures.sheet``), written as
SVG: a millisecond or two where drawing and compressing the PNG took a good part of a second, and
its texts stay text. It takes its typeface from the site's ``fonts/`` folder (``FONTS``). Still,
these files are named by
what they hold (the game's protocol, the language, who at the table hid their name): a build keeps
the files an earlier build wrote into the same folder and makes only the missing ones, and a
changed game or a newly hidden name gets a new name, the old file being deleted.

A member who hid their name is gone from these files as from the pages: their seat keeps its role
and numbers, but their name and Discord id are taken out of the header, the seats, the log and
the protocol alike (``scrubbed``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

from mafiabot.core.protocol import Protocol
from mafiabot.core.records import StoredGame
from mafiabot.host.i18n import t
from mafiabot.host.pictures.sheet import SheetInput, alt_text, sheet_svg
from mafiabot.store import export

T = TypeVar("T")
Kind = Literal["sheet", "json", "seats", "log"]
SUFFIXES: dict[Kind, str] = {"sheet": ".svg", "json": ".json", "seats": "-seats.csv", "log": "-log.csv"}
TYPES = {".svg": "image/svg+xml", ".json": "application/json", ".csv": "text/csv"}
FORMER = (".png",)
"""Suffixes of the files earlier builds wrote (the sheets were PNG pictures): deleted with the stale ones."""
FONT_STYLE = "fonts/sheet.css"
"""The style sheet that gives the sheets their typeface, from the site's root; a sheet is two folders down."""
EXPORTS: tuple[Kind, ...] = ("json", "seats", "log")
VERSION = "1"
"""Part of every name: raised when the files' making changes, so a build replaces the ones it kept."""


def hidden_seats(protocol: Protocol, hidden: frozenset[int]) -> tuple[int, ...]:
    """The seats of the game whose member hid their name."""
    return tuple(s.seat for s in protocol.seats if s.user_id is not None and s.user_id in hidden)


def digest(protocol: Protocol, hidden: frozenset[int]) -> str:
    """What a game's files hold, in short: the same game and hidden seats, the same digest."""
    text = repr((VERSION, protocol, hidden_seats(protocol, hidden)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def name(game_id: int, digest: str, kind: Kind, language: str) -> str:
    """The file's name in its folder: ``<lang>/games/`` for the sheet, ``games/`` (one for all languages) else."""
    salted = hashlib.sha256(f"{digest}:{language if kind == 'sheet' else ''}".encode()).hexdigest()[:12]
    return f"{game_id}-{salted}{SUFFIXES[kind]}"


def scrubbed(value: T, ids: frozenset[int], names: frozenset[str]) -> T:
    """``value`` with every id in ``ids`` made None and every string in ``names`` made empty, all the way down."""
    return _scrub(value, ids, names)  # type: ignore[no-any-return]


def _scrub(value: Any, ids: frozenset[int], names: frozenset[str]) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return None if value in ids else value
    if isinstance(value, str):
        return "" if value in names else value
    return _scrub_within(value, ids, names)


def _scrub_within(value: Any, ids: frozenset[int], names: frozenset[str]) -> Any:
    if isinstance(value, list):
        return [_scrub(v, ids, names) for v in value]
    if isinstance(value, tuple):
        items = [_scrub(v, ids, names) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict):
        return {_scrub(k, ids, names): _scrub(v, ids, names) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _scrub(getattr(value, f.name), ids, names)
                                             for f in dataclasses.fields(value) if f.init})
    return value


def _private(protocol: Protocol, hidden: frozenset[int]) -> tuple[frozenset[int], frozenset[str]]:
    seats = [s for s in protocol.seats if s.user_id is not None and s.user_id in hidden]
    return frozenset(s.user_id for s in seats if s.user_id is not None), frozenset(s.display_name for s in seats)


def sheet_protocol(protocol: Protocol, hidden: frozenset[int], language: str) -> Protocol:
    """The protocol the sheet is drawn from: a hidden member is their seat, as on the pages."""
    seats = tuple(dataclasses.replace(s, user_id=None, display_name=t(language, "site.seat", seat=s.seat))
                  if s.user_id is not None and s.user_id in hidden else s for s in protocol.seats)
    return dataclasses.replace(protocol, seats=seats)


def sheet_alt(protocol: Protocol, language: str) -> str:
    """The sheet in a sentence, for the picture's ``alt``."""
    return alt_text(SheetInput(protocol, language))


def sheet(protocol: Protocol, hidden: frozenset[int], language: str) -> bytes:
    """The protocol sheet as SVG, in ``language``, at ``<language>/games/`` (its typeface two folders up)."""
    return sheet_svg(SheetInput(sheet_protocol(protocol, hidden, language), language),
                     style=f"../../{FONT_STYLE}").encode("utf-8")


def exports(game: StoredGame, protocol: Protocol, hidden: frozenset[int]) -> dict[Kind, bytes]:
    """The bot's own JSON and CSV files of the game (``/mafia game format:json`` and ``csv``), hidden members out."""
    ids, names = _private(protocol, hidden)
    if ids or names:  # most games hide no one: nothing to walk through
        game, protocol = scrubbed(game, ids, names), scrubbed(protocol, ids, names)
    # A byte order mark on the CSV files, as /mafia game gives them, so spreadsheets read Cyrillic and Georgian.
    return {"json": export.to_json(game, protocol).encode("utf-8"),
            "seats": export.seats_csv(protocol).encode("utf-8-sig"),
            "log": export.log_csv(game).encode("utf-8-sig")}


def stale(folder: Path, wanted: Iterable[str], suffixes: Iterable[str]) -> list[Path]:
    """The files a build left in ``folder`` that no page links to any more (an old key, a game gone)."""
    keep = set(wanted)
    ends = tuple(suffixes)
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.is_file() and p.name.endswith(ends) and p.name not in keep]


def paths(game_id: int, digest: str, languages: Iterable[str]) -> dict[str, tuple[int, Kind, str]]:
    """A game's files by their path from the site's root: (game id, kind, language)."""
    files: dict[str, tuple[int, Kind, str]] = {
        f"{language}/games/{name(game_id, digest, 'sheet', language)}": (game_id, "sheet", language)
        for language in languages}
    for kind in EXPORTS:
        files[f"games/{name(game_id, digest, kind, '')}"] = (game_id, kind, "")
    return files
