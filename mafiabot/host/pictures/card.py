"""The table card: the seats around an oval as the players know them, out or alive, fouls, the ballot.

Drawn from a :class:`engine.public.PublicTable` and the seats' names only, so what it shows is
public by construction. 1280 by 960 pixels, and legible where Discord first shows it: a preview a
few hundred pixels wide. At :data:`PREVIEW_WIDTH` (400 px) every text is at least
:data:`MIN_PREVIEW_TEXT` pixels (29 px type on the card) and a foul mark at least
:data:`MIN_PREVIEW_MARK` pixels wide; a legend in the top corners says what the marks and rings mean.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field
from functools import cache

from PIL import Image, ImageDraw

from engine.ids import Cause, Phase
from engine.public import PublicSeat, PublicTable
from mafiabot.host.i18n import t
from mafiabot.host.pictures.fonts import drawable, font, unhyphenated, wrap
from mafiabot.host.pictures.png import encode

WIDTH, HEIGHT = 1280, 960
CENTRE = (WIDTH // 2, 466)
SEAT_ORBIT = (540, 330)
"""The semi-axes of the ellipse the seat centres sit on."""
SEAT_RADIUS = 46
NAME_WIDTH = 210
"""The widest a name is drawn, in pixels; a longer one is cut with an ellipsis."""
CAUSE_WIDTH = 200
"""The widest line of a departed seat's cause; a longer cause takes a second line."""

PREVIEW_WIDTH = 400
"""The width Discord's chat shows a picture at before it is opened (a phone shows it about so wide)."""
MIN_PREVIEW_TEXT = 9
"""The smallest type at :data:`PREVIEW_WIDTH`, in pixels: 29 px type on the card."""
MIN_PREVIEW_MARK = 6
"""The smallest foul mark at :data:`PREVIEW_WIDTH`, in pixels: 20 px on the card."""
TEXT = 30
"""Names, causes, the legend, the phase and the count of seats: the card's smallest type."""
MARK = 20
EDGE = 8
"""No text comes closer to the card's edge, in pixels."""
MARK_GAP = 5
RING = 9

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
FLAT_COLOURS = (BACKGROUND, FELT, FELT_EDGE, INK, DIM, ALIVE_FILL, OUT_FILL, NUMBER_ALIVE, NOMINEE_RING, FLOOR_RING,
                FOUL_MARK, FOUL_SLOT, TECHNICAL_MARK, *dict.fromkeys(CAUSE_COLOURS.values()))
"""The colours drawn flat, kept exact by the PNG's palette."""
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


def moment(table: PublicTable) -> tuple[str, int]:
    """``("night", 1)`` or ``("day", 2)``: what the card's title names.

    The first victim's Best Move comes after the morning's news, though the engine counts it to the
    night (nobody speaks yet): the card posted with that news is the morning's, so it names the day.
    """
    if table.phase is Phase.BEST_MOVE:
        return "day", table.night + 1
    if table.is_night:
        return "night", table.night
    return "day", table.day


def title(table: PublicTable, language: str) -> str:
    """``Day 2`` or ``Night 1``."""
    kind, number = moment(table)
    if kind == "night":
        return t(language, "card.night", night=number)
    return t(language, "card.day", day=number)


def cause_text(language: str, cause: Cause) -> str:
    """How a seat left, in a word or two."""
    return unhyphenated(cause_label(language, cause))


def cause_label(language: str, cause: Cause) -> str:
    """:func:`cause_text` with the places a long word may break (soft hyphens), as drawn."""
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


@dataclass(frozen=True)
class Placed:
    """A text as the card draws it: its size in pixels and the box its ink may fill."""

    text: str
    size: int
    box: tuple[float, float, float, float]
    kind: str
    seat: int = 0
    """The seat whose words these are (0 for the table's own)."""


@dataclass
class Painted:
    """A drawn card and what is on it, for the tests and the alt text's honesty."""

    image: Image.Image
    texts: list[Placed] = field(default_factory=list)
    marks: list[tuple[int, int, int, int]] = field(default_factory=list)
    """Every foul mark's box, lit or not, the legend's included."""


class _Painter:
    def __init__(self, image: Image.Image) -> None:
        self.draw = ImageDraw.Draw(image)
        self.painted = Painted(image)

    def text(self, xy: tuple[float, float], text: str, size: int, fill: tuple[int, int, int], *, kind: str,
             bold: bool = False, anchor: str = "mm", seat: int = 0) -> None:
        face = font(size, bold=bold)
        if anchor == "mm":  # kept off the card's edges: a seat at the end of the table centres its words inward
            half = face.getlength(text) / 2 + EDGE
            xy = (min(max(xy[0], half), WIDTH - half), xy[1])
        self.draw.text(xy, text, font=face, fill=fill, anchor=anchor)
        if text:
            box = self.draw.textbbox(xy, text, font=face, anchor=anchor)
            self.painted.texts.append(Placed(text, size, box, kind, seat))

    def mark(self, box: tuple[int, int, int, int], *, lit: bool) -> None:
        self.draw.rounded_rectangle(box, radius=4, fill=FOUL_MARK if lit else FOUL_SLOT)
        self.painted.marks.append(box)

    def technical(self, box: tuple[int, int, int, int]) -> None:
        """A technical foul: a red triangle after the four slots."""
        x0, y0, x1, y1 = box
        self.draw.polygon([(x0, y1), (x1, y1), ((x0 + x1) // 2, y0)], fill=TECHNICAL_MARK)
        self.painted.marks.append(box)


def short_name(name: str, width: int = NAME_WIDTH, size: int = TEXT) -> str:
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
    return encode(paint(card).image, exact=FLAT_COLOURS)


def paint(card: CardInput) -> Painted:
    """The card drawn, with where each text and mark went."""
    painter = _Painter(Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND))
    cx, cy = CENTRE
    rx, ry = SEAT_ORBIT[0] - 120, SEAT_ORBIT[1] - 120
    painter.draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=FELT, outline=FELT_EDGE, width=10)
    _centre(painter, card)
    _legend(painter, card.language)
    for seat, centre in zip(card.table.seats, seat_centres(len(card.table.seats)), strict=True):
        name = card.names[seat.seat - 1] if seat.seat <= len(card.names) else ""
        _seat(painter, seat, centre, name, card)
    return painter.painted


def _centre(painter: _Painter, card: CardInput) -> None:
    table, lang = card.table, card.language
    cx, cy = CENTRE
    painter.text((cx, cy - 66), title(table, lang), 72, INK, kind="title", bold=True)
    painter.text((cx, cy + 2), t(lang, f"phase.{table.phase.value}"), TEXT, DIM, kind="phase")
    painter.text((cx, cy + 50), ballot_text(table, lang), 34, NOMINEE_RING if table.nominees else DIM,
                 kind="ballot", bold=True)
    painter.text((cx, cy + 94), t(lang, "card.alive", count=table.alive, seats=len(table.seats)), TEXT, DIM,
                 kind="alive")


def _legend(painter: _Painter, lang: str) -> None:
    """What the marks and the rings mean: the fouls top left, the rings top right."""
    top = 26
    for slot in range(FOUL_SLOTS):
        x0 = 24 + slot * (MARK + MARK_GAP)
        painter.mark((x0, top + 10 - MARK // 2, x0 + MARK, top + 10 + MARK // 2), lit=slot < 2)
    painter.text((24, top + 52), t(lang, "card.legend.fouls"), TEXT, DIM, kind="legend", anchor="lm")
    rings = ((NOMINEE_RING, t(lang, "card.legend.nominee")), (FLOOR_RING, t(lang, "card.legend.floor")))
    for row, (ring, words) in enumerate(rings):
        y = top + 10 + row * 44
        x = WIDTH - 24 - 17
        painter.draw.ellipse((x - 17, y - 17, x + 17, y + 17), fill=ALIVE_FILL, outline=ring, width=6)
        painter.text((x - 30, y), words, TEXT, DIM, kind="legend", anchor="rm")


def _seat(painter: _Painter, seat: PublicSeat, centre: tuple[int, int], name: str, card: CardInput) -> None:
    x, y = centre
    r = SEAT_RADIUS
    ring = _ring(seat, card.table)
    painter.draw.ellipse((x - r, y - r, x + r, y + r), fill=ALIVE_FILL if seat.alive else OUT_FILL,
                         outline=ring, width=RING if ring else 0)
    painter.text((x, y), str(seat.seat), 42, NUMBER_ALIVE if seat.alive else DIM, kind="seat", bold=True)
    if seat.left is not None:
        colour = CAUSE_COLOURS[seat.left]
        slash = r * 0.55
        painter.draw.line((x - slash, y + slash, x + slash, y - slash), fill=colour, width=6)
    _fouls(painter, seat, x, y - r - 6 - MARK // 2)
    painter.text((x, y + r + 20), short_name(name), TEXT, INK if seat.alive else DIM, kind="name",
                 seat=seat.seat)
    if seat.left is not None:
        lines = wrap(cause_label(card.language, seat.left), font(TEXT, bold=True), CAUSE_WIDTH, whole_words=True)
        for index, line in enumerate(lines):
            painter.text((x, y + r + 52 + index * 33), line, TEXT, CAUSE_COLOURS[seat.left], kind="cause",
                         bold=True, seat=seat.seat)


def _ring(seat: PublicSeat, table: PublicTable) -> tuple[int, int, int] | None:
    """The outline that marks a nominee, or the floor holder; a departed seat has its cause's colour."""
    if seat.left is not None:
        return CAUSE_COLOURS[seat.left]
    if seat.nominee:
        return NOMINEE_RING
    if table.floor == seat.seat:
        return FLOOR_RING
    return None


def _fouls(painter: _Painter, seat: PublicSeat, x: int, y: int) -> None:
    """Four slots above the seat, one lit per foul, and a triangle per technical foul after them."""
    left = x - (FOUL_SLOTS * MARK + (FOUL_SLOTS - 1) * MARK_GAP) // 2
    for slot in range(max(FOUL_SLOTS, seat.fouls)):
        x0 = left + slot * (MARK + MARK_GAP)
        painter.mark((x0, y - MARK // 2, x0 + MARK, y + MARK // 2), lit=slot < seat.fouls)
    for mark in range(seat.technical):
        x0 = left + (max(FOUL_SLOTS, seat.fouls) + mark) * (MARK + MARK_GAP)
        painter.technical((x0, y - MARK // 2, x0 + MARK, y + MARK // 2))
