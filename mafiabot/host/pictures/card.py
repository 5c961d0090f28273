"""The table card: the seats around an oval as the players know them, out or alive, fouls, the ballot.

Drawn from a :class:`engine.public.PublicTable` and the seats' names only, so what it shows is
public by construction. 1280 by 720 pixels with large type, so a phone shows it legibly in a chat.
"""

from __future__ import annotations

import bisect
import io
import itertools
import math
from dataclasses import dataclass
from functools import cache

from PIL import Image, ImageDraw

from engine.ids import Cause
from engine.public import PublicSeat, PublicTable
from mafiabot.host.i18n import t
from mafiabot.host.pictures.fonts import drawable, font

WIDTH, HEIGHT = 1280, 720
CENTRE = (WIDTH // 2, 362)
SEAT_ORBIT = (540, 240)
"""The semi-axes of the ellipse the seat centres sit on."""
SEAT_RADIUS = 50
NAME_WIDTH = 200
"""The widest a name is drawn, in pixels; a longer one is cut with an ellipsis."""

BACKGROUND = (30, 33, 39)
FELT = (38, 84, 70)
FELT_EDGE = (24, 58, 48)
INK = (242, 239, 230)
DIM = (150, 156, 166)
ALIVE_FILL = (242, 239, 230)
"""A seat still at the table."""
OUT_FILL = (74, 78, 87)
"""A seat that has left."""
NUMBER_ALIVE = (30, 33, 39)
NOMINEE_RING = (62, 193, 243)
FLOOR_RING = (120, 220, 120)
FOUL_MARK = (245, 209, 66)
FOUL_SLOT = (70, 74, 82)
TECHNICAL_MARK = (232, 64, 64)
"""Technical fouls are counted apart, so they are drawn apart: red triangles after the four slots."""
CAUSE_COLOURS = {
    Cause.KILLED: (224, 82, 82),
    Cause.VOTED_OUT: (224, 160, 48),
    Cause.LIFTED: (224, 160, 48),
    Cause.FOULS: (176, 124, 224),
    Cause.TECHNICAL_FOULS: (176, 124, 224),
    Cause.OATHS: (176, 124, 224),
    Cause.DISQUALIFIED: (176, 124, 224),
    Cause.LEFT: (176, 124, 224),
}
FOUL_SLOTS = 4
"""Marks drawn per seat: four fouls remove a player, so four slots show how close each one is."""


@dataclass(frozen=True)
class CardInput:
    """Everything a card shows: the public table and the names by seat (seat 1 first)."""

    table: PublicTable
    names: tuple[str, ...]
    language: str


@cache
def seat_centres(count: int) -> tuple[tuple[int, int], ...]:
    """Where each seat's circle is centred, seat 1 first, clockwise from the top (the host's place).

    The seats are spaced evenly along the ellipse, not by angle, so the seats at its narrow ends
    do not crowd each other.
    """
    cx, cy = CENTRE
    rx, ry = SEAT_ORBIT
    steps = 3600
    points = [(cx + rx * math.sin(2 * math.pi * i / steps), cy - ry * math.cos(2 * math.pi * i / steps))
              for i in range(steps + 1)]
    lengths = [0.0]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        lengths.append(lengths[-1] + math.hypot(x1 - x0, y1 - y0))
    centres = []
    for index in range(count):
        at = bisect.bisect_left(lengths, (index + 0.5) / count * lengths[-1])
        x, y = points[at]
        centres.append((round(x), round(y)))
    return tuple(centres)


def title(table: PublicTable, language: str) -> str:
    """``Day 2`` or ``Night 1``."""
    if table.is_night:
        return t(language, "card.night", night=table.night)
    return t(language, "card.day", day=table.day)


def cause_text(language: str, cause: Cause) -> str:
    """How a seat left, in a word or two."""
    key = {
        Cause.KILLED: "card.cause.killed", Cause.VOTED_OUT: "card.cause.voted_out", Cause.LIFTED: "card.cause.lifted",
        Cause.FOULS: "card.cause.fouls", Cause.OATHS: "card.cause.oaths", Cause.DISQUALIFIED: "card.cause.disqualified",
        Cause.LEFT: "card.cause.left", Cause.TECHNICAL_FOULS: "card.cause.technical_fouls",
    }[cause]
    return t(language, key)


def ballot_text(table: PublicTable, language: str) -> str:
    """The nominees, or that there are none."""
    if not table.nominees:
        return t(language, "card.ballot_empty")
    return t(language, "card.ballot", seats=", ".join(f"#{seat}" for seat in table.nominees))


def alt_text(card: CardInput) -> str:
    """The card in words, for readers who cannot see it."""
    table, lang = card.table, card.language
    out = [f"#{s.seat} {cause_text(lang, s.left)}" for s in table.seats if s.left is not None]
    parts = [t(lang, "card.alive", count=table.alive, seats=len(table.seats))]
    if out:
        parts.append(t(lang, "card.out", seats=", ".join(out)))
    parts.append(ballot_text(table, lang))
    return t(lang, "card.alt", title=title(table, lang), details="; ".join(parts))[:1024]


def short_name(name: str, width: int = NAME_WIDTH, size: int = 26) -> str:
    """``name`` as drawn under its seat: without undrawable characters, cut to ``width`` pixels."""
    text = drawable(name)
    face = font(size)
    if face.getlength(text) <= width:
        return text
    while text and face.getlength(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…"


def draw_card(card: CardInput) -> bytes:
    """The card as PNG bytes; the same input gives the same bytes."""
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    cx, cy = CENTRE
    rx, ry = SEAT_ORBIT[0] - 120, SEAT_ORBIT[1] - 95
    draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=FELT, outline=FELT_EDGE, width=10)
    _centre(draw, card)
    for seat, centre in zip(card.table.seats, seat_centres(len(card.table.seats)), strict=True):
        name = card.names[seat.seat - 1] if seat.seat <= len(card.names) else ""
        _seat(draw, seat, centre, name, card)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _centre(draw: ImageDraw.ImageDraw, card: CardInput) -> None:
    table, lang = card.table, card.language
    cx, cy = CENTRE
    draw.text((cx, cy - 62), title(table, lang), font=font(72, bold=True), fill=INK, anchor="mm")
    draw.text((cx, cy + 2), t(lang, f"phase.{table.phase.value}"), font=font(30), fill=DIM, anchor="mm")
    draw.text((cx, cy + 50), ballot_text(table, lang), font=font(30, bold=True),
              fill=NOMINEE_RING if table.nominees else DIM, anchor="mm")
    draw.text((cx, cy + 92), t(lang, "card.alive", count=table.alive, seats=len(table.seats)), font=font(24),
              fill=DIM, anchor="mm")


def _seat(draw: ImageDraw.ImageDraw, seat: PublicSeat, centre: tuple[int, int], name: str, card: CardInput) -> None:
    x, y = centre
    r = SEAT_RADIUS
    ring = _ring(seat, card.table)
    draw.ellipse((x - r, y - r, x + r, y + r), fill=ALIVE_FILL if seat.alive else OUT_FILL,
                 outline=ring, width=7 if ring else 0)
    number = font(44, bold=True)
    draw.text((x, y), str(seat.seat), font=number, fill=NUMBER_ALIVE if seat.alive else DIM, anchor="mm")
    if seat.left is not None:
        colour = CAUSE_COLOURS[seat.left]
        slash = r * 0.55
        draw.line((x - slash, y + slash, x + slash, y - slash), fill=colour, width=6)
    _fouls(draw, seat, x, y - r - 16)
    draw.text((x, y + r + 18), short_name(name), font=font(26), fill=INK if seat.alive else DIM, anchor="mm")
    if seat.left is not None:
        draw.text((x, y + r + 46), cause_text(card.language, seat.left), font=font(22, bold=True),
                  fill=CAUSE_COLOURS[seat.left], anchor="mm")


def _ring(seat: PublicSeat, table: PublicTable) -> tuple[int, int, int] | None:
    """The outline that marks a nominee, or the floor holder; a departed seat has its cause's colour."""
    if seat.left is not None:
        return CAUSE_COLOURS[seat.left]
    if seat.nominee:
        return NOMINEE_RING
    if table.floor == seat.seat:
        return FLOOR_RING
    return None


def _fouls(draw: ImageDraw.ImageDraw, seat: PublicSeat, x: int, y: int) -> None:
    """Four slots above the seat, one lit per foul."""
    size, gap = 14, 8
    left = x - (FOUL_SLOTS * size + (FOUL_SLOTS - 1) * gap) // 2
    for slot in range(max(FOUL_SLOTS, seat.fouls)):
        x0 = left + slot * (size + gap)
        lit = slot < seat.fouls
        draw.rounded_rectangle((x0, y - size // 2, x0 + size, y + size // 2), radius=3,
                               fill=FOUL_MARK if lit else FOUL_SLOT)
    for mark in range(seat.technical):
        x0 = left + (max(FOUL_SLOTS, seat.fouls) + mark) * (size + gap)
        draw.polygon([(x0, y + size // 2), (x0 + size, y + size // 2), (x0 + size // 2, y - size // 2)],
                     fill=TECHNICAL_MARK)
