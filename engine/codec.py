"""Plain-data (JSON-ready) forms of commands, events, states and rulesets, and their way back.

Every command and event is written as ``{"type": ClassName, field: value, ...}``; enums by value,
tuples and sets as lists, decimals as strings. ``from_data`` reads the same shape back and checks
it against the field types, so a malformed log is refused with ``InvalidCommandError``.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from decimal import Decimal
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar, Union, get_args, get_origin, get_type_hints

from engine.commands import COMMAND_TYPES, Command
from engine.errors import InvalidCommandError
from engine.events import EVENT_TYPES, Event

_COMMANDS: dict[str, type[Command]] = {t.__name__: t for t in COMMAND_TYPES}
_EVENTS: dict[str, type[Event]] = {t.__name__: t for t in EVENT_TYPES}

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def to_data(value: Any) -> Any:
    """Turn engine values into JSON-ready data; commands and events carry their ``type``."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bool | int | str | float) or value is None:
        return value
    if isinstance(value, Decimal):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        name = type(value).__name__
        if name in _COMMANDS or name in _EVENTS:
            out["type"] = name
        for f in dataclasses.fields(value):
            out[f.name] = to_data(getattr(value, f.name))
        return out
    if isinstance(value, set | frozenset):
        return sorted(to_data(v) for v in value)
    if isinstance(value, list | tuple):
        return [to_data(v) for v in value]
    if isinstance(value, Mapping):
        return {str(to_data(k)): to_data(v) for k, v in value.items()}
    raise TypeError(f"cannot serialize {value!r}")


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


_FIELDS: dict[type[Any], tuple[frozenset[str], tuple[tuple[str, Any, bool], ...]]] = {}


def _fields(cls: type[Any]) -> tuple[frozenset[str], tuple[tuple[str, Any, bool], ...]]:
    """The field names of ``cls``, and each field's name, type hint and whether it must be given, worked out once.

    A league's pages decode every event of every game: asking ``dataclasses.fields`` twice per event
    was a tenth of that.
    """
    if cls not in _FIELDS:
        hints = _hints(cls)
        fields = dataclasses.fields(cls)
        _FIELDS[cls] = (frozenset(f.name for f in fields), tuple(
            (f.name, hints[f.name], f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
            for f in fields))
    return _FIELDS[cls]


def _convert(hint: Any, value: Any, where: str) -> Any:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(option, value, where)
            except InvalidCommandError as exc:
                errors.append(exc)
        raise errors[0] if errors else InvalidCommandError("data.invalid", field=where, value=value)
    if hint is Any:
        return value
    if origin in (tuple, list, set):
        if not isinstance(value, list | tuple):
            raise InvalidCommandError("data.invalid", field=where, expected="list", value=value)
        args = get_args(hint)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise InvalidCommandError("data.invalid", field=where, expected=f"{len(args)} items", value=value)
            return tuple(_convert(a, v, where) for a, v in zip(args, value, strict=True))
        item = args[0] if args else Any
        items = [_convert(item, v, where) for v in value]
        return origin(items)
    if origin is dict:
        if not isinstance(value, Mapping):
            raise InvalidCommandError("data.invalid", field=where, expected="object", value=value)
        key_t, val_t = get_args(hint)
        return {
            _convert(key_t, int(k) if key_t is int else k, where): _convert(val_t, v, where) for k, v in value.items()
        }
    if isinstance(hint, type):
        if issubclass(hint, Enum):
            try:
                return hint(value)
            except ValueError:
                raise InvalidCommandError("data.invalid", field=where, expected=hint.__name__, value=value) from None
        if hint is bool:
            if not isinstance(value, bool):
                raise InvalidCommandError("data.invalid", field=where, expected="bool", value=value)
            return value
        if hint is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidCommandError("data.invalid", field=where, expected="int", value=value)
            return value
        if hint is str:
            if not isinstance(value, str):
                raise InvalidCommandError("data.invalid", field=where, expected="str", value=value)
            return value
        if hint is Decimal:
            return Decimal(str(value))
        if dataclasses.is_dataclass(hint):
            return from_data(hint, value, where)
    raise InvalidCommandError("data.invalid", field=where, value=value)


def from_data(cls: type[T], data: Any, where: str) -> T:
    """Read an instance of the dataclass ``cls`` written by ``to_data``; ``where`` names it in errors.

    Raises:
        InvalidCommandError: not a mapping, an unknown or missing field, or a value of the wrong type.
    """
    if not isinstance(data, Mapping):
        raise InvalidCommandError("data.invalid", field=where, expected=cls.__name__, value=data)
    names, fields = _fields(cls)
    kwargs: dict[str, Any] = {}
    for key in data:
        if key != "type" and key not in names:
            raise InvalidCommandError("data.unknown_field", field=f"{where}.{key}")
    for name, hint, required in fields:
        if name in data:
            kwargs[name] = _convert(hint, data[name], f"{where}.{name}")
        elif required:
            raise InvalidCommandError("data.missing_field", field=f"{where}.{name}")
    return cls(**kwargs)


def field_from_data(cls: type[Any], name: str, data: Any) -> Any:
    """Read the value of field ``name`` of the dataclass ``cls`` written by ``to_data``.

    Raises:
        InvalidCommandError: ``cls`` has no such field, or the value is of the wrong type.
    """
    hints = _hints(cls)
    if name not in hints:
        raise InvalidCommandError("data.unknown_field", field=f"{cls.__name__}.{name}")
    return _convert(hints[name], data, f"{cls.__name__}.{name}")


def command_from_data(data: Mapping[str, Any]) -> Command:
    """Read a command written by ``to_data``.

    Raises:
        InvalidCommandError: unknown type, unknown or missing field, or a value of the wrong type.
    """
    name = data.get("type")
    if not isinstance(name, str) or name not in _COMMANDS:
        raise InvalidCommandError("command.unknown", command=name)
    return from_data(_COMMANDS[name], data, name)


def event_from_data(data: Mapping[str, Any]) -> Event:
    """Read an event written by ``to_data``.

    Raises:
        InvalidCommandError: the data does not describe a known event.
    """
    name = data.get("type")
    if not isinstance(name, str) or name not in _EVENTS:
        raise InvalidCommandError("event.unknown", event=name)
    return from_data(_EVENTS[name], data, name)
