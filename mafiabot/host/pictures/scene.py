"""A picture as a list of what is drawn where, and its two painters: Pillow's (PNG) and an SVG writer.

A layout (the protocol sheet's) decides every text's place, size and lines, measured by the
pictures' own typeface (``fonts.text_length``), and yields a :class:`Scene`. :func:`paint` draws
it with Pillow, call for call as the layout once drew it itself, so the PNG the bot posts keeps its
bytes; :func:`svg` writes the same items as SVG for the club's pages, which is some hundred times
cheaper than drawing and compressing pixels.

The SVG's texts are text: each is escaped (a member's name is never markup), keeps its spaces, and
is drawn by the same DejaVu Sans, which the SVG asks for by a style sheet of the site's
(:data:`FONT_FAMILY`, ``mafiabot/host/site``); each text is also given its width as Pillow measured
it (``textLength``), so a browser's own spacing cannot push it out of its cell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from xml.sax.saxutils import escape, quoteattr

from PIL import Image, ImageDraw

from mafiabot.host.pictures.fonts import font, text_length

Colour = tuple[int, int, int]
Point = tuple[float, float]


@dataclass(frozen=True)
class Text:
    """A line of text from ``(x, y)``: its top-left at the ascender (``la``) or its left middle (``lm``)."""

    x: float
    y: float
    text: str
    size: int
    fill: Colour
    bold: bool = field(default=False, kw_only=True)
    anchor: str = field(default="la", kw_only=True)


@dataclass(frozen=True)
class Line:
    """A straight line between two pixels, both drawn."""

    start: Point
    end: Point
    fill: Colour
    width: int = 1


@dataclass(frozen=True)
class Rectangle:
    """A filled box from its top-left pixel to its bottom-right one (both drawn, as Pillow's)."""

    box: tuple[float, float, float, float]
    fill: Colour
    radius: int = 0


@dataclass(frozen=True)
class Polygon:
    """A filled polygon through its corners."""

    points: tuple[Point, ...]
    fill: Colour


Item = Text | Line | Rectangle | Polygon


@dataclass(frozen=True)
class Scene:
    """A picture: its size, its background and what is drawn on it, in order."""

    width: int
    height: int
    background: Colour
    items: tuple[Item, ...]


def paint(scene: Scene) -> Image.Image:
    """The scene drawn by Pillow."""
    image = Image.new("RGB", (scene.width, scene.height), scene.background)
    draw = ImageDraw.Draw(image)
    for item in scene.items:
        if isinstance(item, Text):
            face = font(item.size, bold=item.bold)
            if item.anchor == "la":
                draw.text((item.x, item.y), item.text, font=face, fill=item.fill)
            else:
                draw.text((item.x, item.y), item.text, font=face, fill=item.fill, anchor=item.anchor)
        elif isinstance(item, Line):
            draw.line((*item.start, *item.end), fill=item.fill, width=item.width)
        elif isinstance(item, Rectangle):
            if item.radius:
                draw.rounded_rectangle(item.box, radius=item.radius, fill=item.fill)
            else:
                draw.rectangle(item.box, fill=item.fill)
        else:
            draw.polygon(list(item.points), fill=item.fill)
    return image


FONT_FAMILY = "SheetSans"
"""The name the site's style sheet gives the bundled DejaVu Sans (the SVG falls back to an installed one)."""
_FAMILY = f"{FONT_FAMILY}, 'DejaVu Sans', Verdana, sans-serif"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Characters XML cannot hold at all, escaped or not: left out, or the whole picture would not open."""


def _number(value: float) -> str:
    if type(value) is int:
        return str(value)
    return f"{value:.2f}".rstrip("0").rstrip(".")


@lru_cache(maxsize=256)
def _colour(colour: Colour) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


@dataclass(frozen=True)
class _Metrics:
    ascent: int
    descent: int


_metrics: dict[tuple[int, bool], _Metrics] = {}


def _baseline(item: Text) -> float:
    """Where the text's baseline runs: Pillow places its ascender (``la``) or its middle (``lm``) at ``y``."""
    metrics = _metrics.get((item.size, item.bold))
    if metrics is None:
        ascent, descent = font(item.size, bold=item.bold).getmetrics()
        metrics = _metrics[item.size, item.bold] = _Metrics(ascent, descent)
    if item.anchor == "lm":
        return item.y + (metrics.ascent - metrics.descent) / 2
    return item.y + metrics.ascent


def svg(scene: Scene, *, title: str = "", style: str = "") -> str:
    """The scene as an SVG document: the same input gives the same text.

    ``title`` names the picture for readers who cannot see it; ``style``, when given, is the address
    of the style sheet that brings the typeface (relative to where the SVG is served).
    """
    out: list[str] = ['<?xml version="1.0" encoding="UTF-8"?>\n']
    if style:
        out.append(f"<?xml-stylesheet type=\"text/css\" href={quoteattr(style)}?>\n")
    out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{scene.width}" height="{scene.height}" '
               f'viewBox="0 0 {scene.width} {scene.height}" role="img" xml:space="preserve" '
               f'font-family="{_FAMILY}">')
    if title:
        out.append(f"<title>{_text(title)}</title>")
    out.append(f'<rect width="{scene.width}" height="{scene.height}" fill="{_colour(scene.background)}"/>')
    out += map(_item, scene.items)
    out.append("</svg>\n")
    return "".join(out)


def _text(text: str) -> str:
    return escape(_NOT_XML.sub("", text))


@lru_cache(maxsize=1 << 12)
def _item(item: Item) -> str:
    """An item's element; a sheet's headings, rows and marks are where another sheet has them, so made once."""
    if isinstance(item, Text):
        weight = ' font-weight="bold"' if item.bold else ""
        width = text_length(item.text, item.size, bold=item.bold)
        return (f'<text x="{_number(item.x)}" y="{_number(_baseline(item))}" font-size="{item.size}"{weight} '
                f'fill="{_colour(item.fill)}" textLength="{_number(width)}">{_text(item.text)}</text>')
    if isinstance(item, Line):
        return _line(item)
    if isinstance(item, Rectangle):
        x0, y0, x1, y1 = item.box
        corner = f' rx="{item.radius}"' if item.radius else ""
        return (f'<rect x="{_number(x0)}" y="{_number(y0)}" width="{_number(x1 - x0 + 1)}" '
                f'height="{_number(y1 - y0 + 1)}"{corner} fill="{_colour(item.fill)}"/>')
    return f'<polygon points="{_points(item.points)}" fill="{_colour(item.fill)}"/>'


def _line(item: Line) -> str:
    """A line as Pillow draws it: its pixels, so a one-pixel rule is crisp (drawn through the pixels' middles)."""
    (x0, y0), (x1, y1) = item.start, item.end
    half = 0.5
    if y0 == y1:  # the sheet's rules run across; the ends' pixels are drawn too
        return (f'<line x1="{_number(min(x0, x1))}" y1="{_number(y0 + half)}" x2="{_number(max(x0, x1) + 1)}" '
                f'y2="{_number(y0 + half)}" stroke="{_colour(item.fill)}" stroke-width="{item.width}"/>')
    return (f'<line x1="{_number(x0 + half)}" y1="{_number(y0 + half)}" x2="{_number(x1 + half)}" '
            f'y2="{_number(y1 + half)}" stroke="{_colour(item.fill)}" stroke-width="{item.width}"/>')


def _points(points: Sequence[Point]) -> str:
    """Pillow's corners are pixels: SVG's are those pixels' middles."""
    return " ".join(f"{_number(x + 0.5)},{_number(y + 0.5)}" for x, y in points)
