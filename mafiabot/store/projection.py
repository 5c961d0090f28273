"""A finished game's protocol, stored once as text, so a league's pages read rows instead of replaying logs.

Building a protocol from a game's log decodes every command and event (a hundred and more per
game): a league of 10,000 games spent most of its read there, and an ended game's protocol never
changes. So it is kept in ``protocols`` when the game ends (and, for games that ended before,
the first time a league is read).

Only what the log decides is kept: the seats' Discord ids and names, the header, the points and
the protests are read from their own rows every time and joined in (``joined``). Forgetting a
member then changes nothing here, and a hidden name is applied when a page is made, as before.

The text is a JSON list per object, fields in declaration order, made from the dataclasses'
own fields (``_codec``): ``SHAPE`` changes with them, so a stored body from an older shape (or an
older builder, ``BUILDER``) is not read but built again from the log.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import delete, insert
from sqlmodel import Session, col

from engine import event_from_data
from mafiabot.core import protocol as pr
from mafiabot.core.protocol import GameHeader, Protest, Protocol, ProtocolSeat, build_protocol
from mafiabot.core.records import SeatInfo, StoredGame
from mafiabot.store.models import ProtocolRow

BUILDER = 1
"""Raised when ``build_protocol`` reads a log differently: every stored body is then built again."""

_Code = Callable[[Any], Any]
_SHARED = (pr.Moment, pr.Departure)
"""Frozen values with few distinct ones in a league (night 2, killed on day 3): one object each, not one per seat."""
_KEPT = ("seats", "nights", "days", "fouls", "removals", "extra_points", "pauses", "result", "reason")
"""The fields of ``Protocol`` the log decides; ``game`` and ``protests`` are joined in when read."""


def _codec(kind: Any, shapes: list[str]) -> tuple[_Code | None, _Code | None]:
    """Encoder and decoder of values of type ``kind``; None for a value JSON keeps as it is."""
    if kind in (int, str, bool, type(None)):
        return None, None
    if kind is Decimal:
        return str, Decimal
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return None, None
    args = typing.get_args(kind)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"no stored form for {kind!r}")
        return _optional(*_codec(inner[0], shapes))  # None passes through both as it is
    if origin in (tuple, list):
        item = args[0]
        encode, decode = _codec(item, shapes)
        make: Callable[[Any], Any] = tuple if origin is tuple else list
        return ((lambda v: [encode(x) for x in v]) if encode else list,
                (lambda v: make(map(decode, v))) if decode else make)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _class_codec(kind, shapes)
    raise TypeError(f"no stored form for {kind!r}")


def _optional(encode: _Code | None, decode: _Code | None) -> tuple[_Code | None, _Code | None]:
    def encode_some(value: Any) -> Any:
        return None if value is None or encode is None else encode(value)

    def decode_some(value: Any) -> Any:
        return None if value is None or decode is None else decode(value)

    return encode_some if encode else None, decode_some if decode else None


def _class_codec(cls: type[Any], shapes: list[str]) -> tuple[_Code, _Code]:
    hints = typing.get_type_hints(cls, vars(pr))
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    shapes.append(f"{cls.__name__}({', '.join(f'{n}: {hints[n]}' for n in names)})")
    codes = [_codec(hints[n], shapes) for n in names]
    encoders = [(n, e) for n, (e, _d) in zip(names, codes, strict=True)]
    decoders = [(i, d) for i, (_e, d) in enumerate(codes) if d is not None]

    def encode(value: Any) -> list[Any]:
        return [getattr(value, n) if e is None else e(getattr(value, n)) for n, e in encoders]

    def decode(value: list[Any]) -> Any:
        for i, d in decoders:
            value[i] = d(value[i])
        return cls(*value)

    if cls in _SHARED:
        made: dict[tuple[Any, ...], Any] = {}

        def shared(value: list[Any]) -> Any:
            for i, d in decoders:
                value[i] = d(value[i])
            key = tuple(value)
            found = made.get(key)
            if found is None:
                found = made[key] = cls(*key)
            return found

        return encode, shared
    return encode, decode


def _protocol_codec() -> tuple[list[tuple[str, _Code | None, _Code | None]], str]:
    hints = typing.get_type_hints(Protocol, vars(pr))
    shapes: list[str] = []
    codes = [(name, *_codec(hints[name], shapes)) for name in _KEPT]
    return codes, hashlib.sha256(f"{BUILDER}:{';'.join(shapes)}".encode()).hexdigest()[:16]


_CODES, SHAPE = _protocol_codec()
"""``SHAPE``: the stored form's version, the builder's and every field's name and type."""
_NO_ONE = GameHeader()


def encode(protocol: Protocol) -> str:
    """The stored text of a protocol: what its log decides, without names, Discord ids, points or header."""
    seats = tuple(dataclasses.replace(s, user_id=None, display_name="", points=None) for s in protocol.seats)
    kept = dataclasses.replace(protocol, seats=seats)
    return json.dumps([getattr(kept, n) if e is None else e(getattr(kept, n)) for n, e, _d in _CODES],
                      ensure_ascii=False, separators=(",", ":"))


def decode(text: str) -> Protocol:
    """The protocol of a stored text, with an empty header and seats without a member (see ``joined``)."""
    values = json.loads(text)
    return Protocol(_NO_ONE, **{n: v if d is None else d(v) for (n, _e, d), v in zip(_CODES, values, strict=True)})


def joined(body: Protocol, header: GameHeader, seats: Mapping[int, SeatInfo],
           points: Mapping[int, Decimal] | None, protests: tuple[Protest, ...]) -> Protocol:
    """A stored body with what is read from its own rows: the header, who sat where, the points, the protests."""
    return dataclasses.replace(body, game=header, protests=protests,
                               seats=tuple(_seat(s, seats.get(s.seat), points) for s in body.seats))


def _seat(seat: ProtocolSeat, info: SeatInfo | None, points: Mapping[int, Decimal] | None) -> ProtocolSeat:
    return dataclasses.replace(seat, user_id=info.user_id if info is not None else None,
                               display_name=info.display_name if info is not None else "",
                               points=points.get(seat.seat) if points is not None else None)


@dataclass(frozen=True, slots=True)
class Ended:
    """An ended game as a league keeps it in memory: its outline, and the stored text of the rest.

    The outline is the protocol without its nights, days, fouls, removals, extra points and pauses:
    what the lists, the league and a member's record read. Kept whole, 10,000 protocols are about
    1.5 million objects, and every full pass of Python's collector walks them all (above a second
    here, the process stopped meanwhile); the text is one string the collector never looks into.
    """

    outline: Protocol
    body: str

    def protocol(self) -> Protocol:
        """The whole protocol: the text decoded, with the outline's header, seats and protests."""
        return dataclasses.replace(decode(self.body), game=self.outline.game, seats=self.outline.seats,
                                   protests=self.outline.protests)

    @classmethod
    def of(cls, protocol: Protocol, body: str) -> Ended:
        """A whole protocol and its stored text, kept as an outline and the text."""
        return cls(dataclasses.replace(protocol, nights=(), days=(), fouls=(), removals=(), extra_points=(),
                                       pauses=()), body)


def body_of(game: StoredGame) -> str:
    """The stored text of a game's protocol, built from its log (once, when it ends or is first read)."""
    events = (event_from_data(e) for c in game.log for e in c.events)
    return encode(build_protocol(_NO_ONE, game.seats, events))


def keep(s: Session, bodies: Mapping[int, str]) -> None:
    """Write these games' stored texts in ``s``'s transaction, in place of any older ones."""
    if not bodies:
        return
    connection = s.connection()
    connection.execute(delete(ProtocolRow).where(col(ProtocolRow.game_id).in_(list(bodies))))
    connection.execute(insert(ProtocolRow), [{"game_id": gid, "shape": SHAPE, "body": body}
                                             for gid, body in bodies.items()])
