"""A stored game written out for clubs: JSON for archives and tools, CSV for spreadsheets.

JSON carries everything (header, seats, the full command/event log, the protocol), so a game can
be replayed from it. Decimals are written as strings and times as ISO 8601 in UTC, so nothing is
rounded or shifted on the way. The seats CSV is the club's result sheet, one row per seat.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, cast

from mafiabot.core.numbers import machine_decimal
from mafiabot.core.protocol import Protocol
from mafiabot.core.records import JSON, JSONObject, StoredCommand, StoredGame
from mafiabot.core.spreadsheet import csv_text

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

FORMAT = "mafiabot.game/1"
"""The ``format`` tag of a JSON export; a reader checks it before trusting the shape."""

SEAT_COLUMNS = (
    "game_id", "seat", "user_id", "display_name", "role", "team", "won", "points",
    "fouls", "removed", "left_cause", "left_at", "technical_fouls",
)
LOG_COLUMNS = ("game_id", "seq", "at", "actor_id", "command", "position", "event_type", "event")


@functools.singledispatch
def _plain(value: object) -> JSON:
    """``value`` as JSON holds it: records as objects, decimals as strings, times in ISO 8601."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _record(value)
    return cast("JSON", value)


_LEAVES = frozenset({str, int, float, bool, type(None)})
"""Values JSON holds as they are: not sent through ``_plain``'s dispatch (a game's export has thousands)."""


def _record(value: DataclassInstance) -> JSONObject:
    record: JSONObject = {}
    for name in _names(type(value)):
        item = getattr(value, name)
        record[name] = cast("JSON", item) if type(item) in _LEAVES else _plain(item)
    return record


@functools.cache
def _names(kind: type) -> tuple[str, ...]:
    """A record type's fields, in order, read once."""
    return tuple(f.name for f in dataclasses.fields(kind))


@_plain.register(Decimal)
def _(value: Decimal) -> JSON:
    return machine_decimal(value)


@_plain.register(datetime)
def _(value: datetime) -> JSON:
    return value.isoformat()


@_plain.register(list)
@_plain.register(tuple)
def _(value: list[object] | tuple[object, ...]) -> JSON:
    if isinstance(value, tuple) and hasattr(value, "_asdict"):  # a NamedTuple is a record, not a list
        return {k: _plain(v) for k, v in value._asdict().items()}
    return [cast("JSON", v) if type(v) in _LEAVES else _plain(v) for v in value]


@_plain.register(dict)
def _(value: dict[object, object]) -> JSON:
    return {str(k): _plain(v) for k, v in value.items()}


@_plain.register(StoredCommand)
def _(value: StoredCommand) -> JSON:
    """A log's entry: its command and events are JSON as stored, so only its time is written out.

    Walked value by value, the log was most of an export's time (a club's first site build makes 10,000).
    """
    return {"seq": value.seq, "command": value.command, "events": cast("JSON", value.events),
            "actor_id": value.actor_id, "at": value.at.isoformat()}


def to_data(game: StoredGame, protocol: Protocol) -> JSONObject:
    """The JSON-ready export of one game."""
    header = _record(game)
    log = header.pop("log")
    seats = header.pop("seats")
    return {"format": FORMAT, "game": header, "seats": seats, "log": log, "protocol": _record(protocol)}


def to_json(game: StoredGame, protocol: Protocol) -> str:
    """The export as JSON text (UTF-8 names kept as they are), as ``json.dumps(indent=2)`` writes it."""
    out: list[str] = []
    _indented(to_data(game, protocol), "\n", out)
    return "".join(out)


_SCALARS: dict[object, str] = {True: "true", False: "false", None: "null"}


def _indented(value: JSON, newline: str, out: list[str]) -> None:
    """``value`` as ``json.dumps(value, ensure_ascii=False, indent=2)`` writes it, into ``out``.

    The same bytes, three times sooner: the standard library writes indented JSON through a chain of
    generators in Python (its C encoder does not indent), and a game's log is thousands of values.
    ``tests/store/test_export.py`` holds the two equal.
    """
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None or value is True or value is False:
        out.append(_SCALARS[value])
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_FLOAT(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        separator = "{" + inner
        for key, item in value.items():
            out.append(separator)
            out.append(_string(key) if isinstance(key, str) else _string(_key(key)))
            out.append(": ")
            _indented(item, inner, out)
            separator = "," + inner
        out.append(newline + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            _indented(item, inner, out)
            separator = "," + inner
        out.append(newline + "]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_string = json.encoder.encode_basestring  # ensure_ascii=False's, the C one where there is one
_FLOAT = json.JSONEncoder(ensure_ascii=False).encode


def _key(key: object) -> str:
    """A key that is not a string (a number, a truth value, None), as ``json.dumps`` names it."""
    return json.dumps(key)



def _csv(rows: list[list[object]], header: tuple[str, ...]) -> str:
    return csv_text(header, rows)


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    return value


def seats_csv(protocol: Protocol) -> str:
    """The result sheet: one row per seat with role, result, points, fouls and how the seat left."""
    rows = []
    for s in protocol.seats:
        left_at = f"{s.departure.at.kind} {s.departure.at.number}" if s.departure else None
        values = (
            protocol.game.id, s.seat, s.user_id, s.display_name, s.role, s.team, s.won,
            None if s.points is None else machine_decimal(s.points),
            s.fouls, s.removed, s.departure.cause if s.departure else None, left_at, s.technical,
        )
        rows.append([_cell(v) for v in values])
    return _csv(rows, SEAT_COLUMNS)


def log_csv(game: StoredGame) -> str:
    """The log: one row per event, its command repeated as JSON on each of its rows."""
    rows = []
    for c in game.log:
        command = json.dumps(c.command, ensure_ascii=False, sort_keys=True)
        head = [game.id, c.seq, c.at.isoformat(), _cell(c.actor_id), command]
        if not c.events:
            rows.append([*head, "", "", ""])
        for position, e in enumerate(c.events):
            rows.append([*head, position, e["type"], json.dumps(e, ensure_ascii=False, sort_keys=True)])
    return _csv(rows, LOG_COLUMNS)
