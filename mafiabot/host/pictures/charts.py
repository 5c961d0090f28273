"""Charts for ``/mafia stats`` (rating over time, wins by role) and ``/mafia top`` (the league as a table).

The callers hand over every word already localized (``cogs.texts.history``); this module only draws,
with matplotlib's Agg renderer on a ``Figure`` of its own, never pyplot's global state. matplotlib
is imported inside the functions, so the bot's start-up does not pay for it; drawing takes tens of
milliseconds to seconds, so callers run it on the charts' own worker (``mafiabot.host.drawing``).

Every text is set in DejaVu Sans, the typeface the card and the sheet use, opened from the file the
package ships so no system font can stand in, on the sheet's paper in its colours. It covers Latin,
Cyrillic and Georgian (U+10D0 to U+10FC; only the three Abkhaz letters U+10FD to U+10FF are
missing). Characters it lacks, emoji in a member's name above all, are left out rather than drawn
as empty boxes. The same data gives the same PNG bytes: no timestamp, no software tag, fixed sizes
in pixels.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from engine.ids import Cause
from mafiabot.host.pictures import card, fonts, sheet
from mafiabot.host.pictures.png import Colour

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties

DPI = 100
STATS_SIZE = (1200, 600)
"""The stats chart in pixels: wide enough for both panels, legible on a phone held sideways."""
LEAGUE_WIDTH = 900
LEAGUE_HEAD = 110
"""The league image's title and column header, in pixels."""
LEAGUE_ROW = 36
LEAGUE_FOOT = 16
MARGIN = 0.02
"""The table's left and right margin, as a fraction of the width."""
CELL_PAD = 8
MIN_SIZE = 8
"""The smallest font size a cell shrinks to before it may overflow."""
NAME_LIMIT = 28
"""Characters of a name shown in the table; longer ones end with an ellipsis."""
PAPER, INK, DIM, RULE, HEAD = sheet.BACKGROUND, sheet.INK, sheet.DIM, sheet.RULE, sheet.HEAD
"""The sheet's paper, type, rules and headings: a chart looks like a page of the same protocol."""
CURVE_COLOURS: tuple[Colour, ...] = (HEAD, card.CAUSE_COLOURS[Cause.KILLED], card.CAUSE_COLOURS[Cause.VOTED_OUT],
                                     (124, 84, 176), (30, 128, 170), DIM)
"""A ruleset's curve: the sheet's green first, then the card's cause colours (darkened where pale on paper)."""
GAMES_COLOUR = sheet.FOUL_SLOT
WINS_COLOUR = HEAD
STRIPE_COLOUR = (240, 236, 226)
FLAT_COLOURS = (PAPER, INK, DIM, RULE, HEAD, *CURVE_COLOURS, GAMES_COLOUR, STRIPE_COLOUR)
FONT_FILES = {"regular": fonts.REGULAR, "bold": fonts.BOLD}

_drawing = threading.Lock()
"""matplotlib's font and text caches are shared; one drawing at a time keeps them consistent."""


@dataclass(frozen=True)
class Curve:
    """One ruleset's rating after each of the member's games under it."""

    label: str
    games: tuple[int, ...]
    """The x of each point: the member's game number, counted over every ruleset (1 is their first)."""
    ratings: tuple[float, ...]


@dataclass(frozen=True)
class RoleWins:
    """Games and wins under one role, with the role's name."""

    label: str
    games: int
    wins: int


@dataclass(frozen=True)
class StatsChart:
    """What the ``/mafia stats`` chart shows, every text already in the reader's language."""

    title: str
    rating_title: str
    rating_axis: str
    game_axis: str
    roles_title: str
    games_label: str
    wins_label: str
    curves: tuple[Curve, ...]
    roles: tuple[RoleWins, ...]
    baseline: float | None = None
    """Where every rating starts, drawn as a thin line."""


@dataclass(frozen=True)
class LeagueChart:
    """The ``/mafia top`` table: a title, the column names and the rows, all as text."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    name_column: int = 1
    """The column that holds names: left-aligned and shortened; the others are centred."""
    widths: tuple[float, ...] | None = None
    """The columns' shares of the width (equal when None)."""


@dataclass(frozen=True)
class Drawn:
    """A drawn chart: the PNG and what was put on it, read back from the figure (for tests and alt texts)."""

    png: bytes
    width: int
    height: int
    curves: tuple[tuple[tuple[float, float], ...], ...]
    """Each rating curve's points as drawn, (game number, rating)."""
    texts: tuple[str, ...]
    """Every text on the image, titles, labels and tick numbers included."""


def league_size(rows: int) -> tuple[int, int]:
    """The league image's size in pixels for ``rows`` lines."""
    return LEAGUE_WIDTH, LEAGUE_HEAD + LEAGUE_ROW * max(rows, 1) + LEAGUE_FOOT


@cache
def font_path(weight: str = "regular") -> Path:
    """The font file every text is set in (``regular`` or ``bold``): the one the card and the sheet use."""
    return Path(str(files("mafiabot.host.pictures") / "data" / FONT_FILES[weight]))


def hex_colour(colour: Colour) -> str:
    """``(38, 84, 70)`` as matplotlib takes it, ``#265446``."""
    return "#{:02x}{:02x}{:02x}".format(*colour)


@cache
def _charmap(weight: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(str(font_path(weight))).get_charmap())


@cache
def _widest(weight: str) -> float:
    """The font's widest advance, in ems."""
    from matplotlib.ft2font import FT2Font

    font = FT2Font(str(font_path(weight)))
    return float(font.max_advance_width) / float(font.units_per_EM)


def drawable(text: str, weight: str = "regular") -> str:
    """``text`` without the characters the font has no glyph for (emoji, rare scripts), spaces closed up."""
    covered = _charmap(weight)
    return " ".join("".join(c for c in text if ord(c) in covered or c.isspace()).split())


def shortened(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _font(size: float, weight: str = "regular") -> FontProperties:
    from matplotlib.font_manager import FontProperties

    return FontProperties(fname=font_path(weight), size=size)


def _figure(width: int, height: int) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor=hex_colour(PAPER))
    FigureCanvasAgg(figure)
    return figure


def _png(figure: Figure) -> tuple[bytes, int, int]:
    """The figure as PNG by the pictures' palette, with no metadata that would change between runs."""
    from PIL import Image

    from mafiabot.host.pictures.png import encode

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    width, height = figure.canvas.get_width_height()
    with Image.open(buffer) as image:
        return encode(image, exact=FLAT_COLOURS), width, height


def _texts(figure: Figure) -> tuple[str, ...]:
    from matplotlib.text import Text

    found = figure.findobj(lambda artist: isinstance(artist, Text) and artist.get_visible())
    return tuple(text for artist in found if isinstance(artist, Text) and (text := artist.get_text()))


def _ticks(axes: Axes, *, x: Sequence[float], y: Sequence[float], x_labels: Sequence[str],
           y_labels: Sequence[str]) -> None:
    """Fixed ticks with labels in the chart's font (matplotlib's own would pick a system font by name)."""
    axes.set_xticks(list(x), labels=list(x_labels))
    axes.set_yticks(list(y), labels=list(y_labels))
    for label in (*axes.get_xticklabels(), *axes.get_yticklabels()):
        label.set_fontproperties(_font(10))
        label.set_color(hex_colour(INK))
        label.set_parse_math(False)


def _paper(axes: Axes) -> None:
    """The sheet's look on a panel: its paper, its rules for the frame and the ticks."""
    axes.set_facecolor(hex_colour(PAPER))
    for spine in axes.spines.values():
        spine.set_color(hex_colour(DIM))
    axes.tick_params(colors=hex_colour(DIM))


def _rating_ticks(curves: Sequence[Curve], baseline: float | None) -> tuple[list[float], tuple[float, float]]:
    from matplotlib.ticker import MaxNLocator

    values = [r for curve in curves for r in curve.ratings] + ([baseline] if baseline is not None else [])
    low, high = min(values), max(values)
    margin = max((high - low) * 0.1, 5.0)
    limits = (low - margin, high + margin)
    ticks = [v for v in MaxNLocator(nbins=6).tick_values(*limits) if limits[0] <= v <= limits[1]]
    return ticks, limits


def _game_ticks(last: int) -> list[float]:
    from matplotlib.ticker import MaxNLocator

    return [v for v in MaxNLocator(nbins=8, integer=True).tick_values(1, last) if 1 <= v <= last]


def _draw_ratings(axes: Axes, chart: StatsChart) -> list[tuple[tuple[float, float], ...]]:
    import numpy

    _paper(axes)
    last = max((g for curve in chart.curves for g in curve.games), default=1)
    if chart.baseline is not None:
        axes.axhline(chart.baseline, color=hex_colour(DIM), linewidth=0.8, linestyle="--")
    drawn = []
    for index, curve in enumerate(chart.curves):
        colour = hex_colour(CURVE_COLOURS[index % len(CURVE_COLOURS)])
        line, = axes.plot(curve.games, curve.ratings, color=colour, linewidth=2.5,
                          marker="o", markersize=4 if len(curve.games) <= 60 else 0, label=drawable(curve.label))
        drawn.append(tuple((float(x), float(y)) for x, y in numpy.asarray(line.get_xydata(), dtype=float).tolist()))
    y_ticks, limits = _rating_ticks(chart.curves, chart.baseline)
    axes.set_ylim(*limits)
    axes.set_xlim(0.5, last + 0.5)
    x_ticks = _game_ticks(last)
    _ticks(axes, x=x_ticks, y=y_ticks, x_labels=[str(int(v)) for v in x_ticks],
           y_labels=[str(round(v)) for v in y_ticks])
    axes.set_title(drawable(chart.rating_title, "bold"), fontproperties=_font(13, "bold"), parse_math=False,
                   color=hex_colour(HEAD))
    axes.set_xlabel(drawable(chart.game_axis), fontproperties=_font(11), parse_math=False, color=hex_colour(DIM))
    axes.set_ylabel(drawable(chart.rating_axis), fontproperties=_font(11), parse_math=False, color=hex_colour(DIM))
    axes.grid(visible=True, color=hex_colour(RULE), linewidth=0.8)
    if len(chart.curves) > 1:
        legend = axes.legend(prop=_font(10), loc="best", frameon=False)
        for text in legend.get_texts():
            text.set_parse_math(False)
    return drawn


def _draw_roles(axes: Axes, chart: StatsChart) -> None:
    _paper(axes)
    roles = list(reversed(chart.roles))  # barh draws upwards; the first role goes on top
    places = list(range(len(roles)))
    most = max((r.games for r in roles), default=1)
    axes.barh(places, [r.games for r in roles], color=hex_colour(GAMES_COLOUR), height=0.7,
              label=drawable(chart.games_label))
    axes.barh(places, [r.wins for r in roles], color=hex_colour(WINS_COLOUR), height=0.7,
              label=drawable(chart.wins_label))
    for place, role in zip(places, roles, strict=True):
        axes.text(role.games + most * 0.02, place, f"{role.wins}/{role.games}", va="center",
                  fontproperties=_font(10), parse_math=False, color=hex_colour(INK))
    axes.set_xlim(0, most * 1.25)
    x_ticks = _game_ticks(most) if most > 1 else [0, 1]
    _ticks(axes, x=x_ticks, y=places, x_labels=[str(int(v)) for v in x_ticks],
           y_labels=[drawable(r.label) for r in roles])
    axes.set_title(drawable(chart.roles_title, "bold"), fontproperties=_font(13, "bold"), parse_math=False,
                   color=hex_colour(HEAD))
    legend = axes.legend(prop=_font(10), loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=2, frameon=False)
    for text in legend.get_texts():
        text.set_parse_math(False)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)


def draw_stats(chart: StatsChart) -> Drawn:
    """The member's rating after each game (one curve per ruleset) beside their games and wins by role."""
    with _drawing:
        figure = _figure(*STATS_SIZE)
        figure.suptitle(drawable(chart.title, "bold"), fontproperties=_font(16, "bold"), parse_math=False,
                        color=hex_colour(HEAD))
        ratings, roles = figure.subplots(1, 2, gridspec_kw={"width_ratios": (3, 2)})
        curves = _draw_ratings(ratings, chart)
        _draw_roles(roles, chart)
        figure.subplots_adjust(left=0.07, right=0.97, bottom=0.16, top=0.86, wspace=0.3)
        png, width, height = _png(figure)
        return Drawn(png, width, height, tuple(curves), _texts(figure))


def _cell(figure: Figure, x: float, y: float, text: str, room: float, *, left: bool, bold: bool = False) -> None:
    """One cell's text at (x, y), made smaller until it fits ``room`` pixels (a long header in Georgian)."""
    weight = "bold" if bold else "regular"
    size = 13
    drawn = figure.text(x, y, drawable(text, weight), fontproperties=_font(size, weight), parse_math=False,
                        ha="left" if left else "center", va="center", color=hex_colour(HEAD if bold else INK))
    if len(text) * size * DPI / 72 * _widest(weight) <= room:
        return  # fits even if every letter were the font's widest: no need to measure (a layout each time)
    while drawn.get_window_extent().width > room and size > MIN_SIZE:
        size -= 1
        drawn.set_fontsize(size)


def _column_places(widths: Sequence[float], name_column: int) -> list[tuple[float, bool, float]]:
    """Each column's x (figure fraction), whether it is left-aligned, and its room in pixels."""
    scale = (1.0 - 2 * MARGIN) / sum(widths)
    places: list[tuple[float, bool, float]] = []
    x = MARGIN
    for index, weight in enumerate(widths):
        width = weight * scale
        room = width * LEAGUE_WIDTH - 2 * CELL_PAD
        left = index == name_column
        places.append((x + CELL_PAD / LEAGUE_WIDTH if left else x + width / 2, left, room))
        x += width
    return places


def draw_league(chart: LeagueChart) -> Drawn:
    """The league table as an image: a title, a header row and one striped line per row."""
    from matplotlib.patches import Rectangle

    width, height = league_size(len(chart.rows))
    with _drawing:
        figure = _figure(width, height)
        figure.text(MARGIN, 1 - 32 / height, drawable(chart.title, "bold"), fontproperties=_font(17, "bold"),
                    color=hex_colour(HEAD), parse_math=False, ha="left", va="center")
        widths = chart.widths or (1.0,) * len(chart.columns)
        places = _column_places(widths, chart.name_column)
        header = 1 - (LEAGUE_HEAD - LEAGUE_ROW / 2 - 6) / height
        for (x, left, room), name in zip(places, chart.columns, strict=True):
            _cell(figure, x, header, name, room, left=left, bold=True)
        rule = 1 - (LEAGUE_HEAD - 4) / height
        figure.add_artist(Rectangle((MARGIN, rule), 1 - 2 * MARGIN, 1.5 / height, transform=figure.transFigure,
                                    color=hex_colour(HEAD)))
        for index, row in enumerate(chart.rows):
            top = LEAGUE_HEAD + index * LEAGUE_ROW
            if index % 2:
                stripe = (MARGIN, 1 - (top + LEAGUE_ROW) / height)
                figure.add_artist(Rectangle(stripe, 1 - 2 * MARGIN, LEAGUE_ROW / height, transform=figure.transFigure,
                                            color=hex_colour(STRIPE_COLOUR), zorder=0))
            y = 1 - (top + LEAGUE_ROW / 2) / height
            for column, ((x, left, room), text) in enumerate(zip(places, row, strict=True)):
                _cell(figure, x, y, shortened(text) if column == chart.name_column else text, room, left=left)
        png, drawn_width, drawn_height = _png(figure)
        return Drawn(png, drawn_width, drawn_height, (), _texts(figure))
