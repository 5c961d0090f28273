"""The ``/mafia stats`` and ``/mafia top`` charts, drawn without Discord: sizes, points, glyphs, stable bytes.

The PNG's size is read from its header; the glyph checks render each letter alone in the charts'
font and compare it with the font's empty box (what a missing glyph looks like).
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import warnings
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from importlib.resources import files
from pathlib import Path

import numpy
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.ft2font import FT2Font
from PIL import Image

from cogs.texts.history import league_alt, league_chart, stats_alt, stats_chart
from mafiabot.host.i18n import LANGUAGES, t
from mafiabot.host.pictures import sheet
from mafiabot.host.pictures.charts import (
    CURVE_COLOURS,
    STATS_SIZE,
    Curve,
    LeagueChart,
    RoleWins,
    StatsChart,
    draw_league,
    draw_stats,
    drawable,
    font_path,
    league_size,
)
from mafiabot.store import LeagueRow, PlayerStats, RatingPoint, WinCount
from mafiabot.tools.samples import chart_samples

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
NAMES = {"en": "Alice", "ru": "Алиса Ёжикова", "ka": "ნინო ბერიძე"}


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk."""
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def record(by_role: dict[str, WinCount]) -> PlayerStats:
    games = sum(c.games for c in by_role.values())
    wins = sum(c.wins for c in by_role.values())
    return PlayerStats(
        guild_id=1, user_id=7, ruleset=None, games=games, wins=wins, draws=0, losses=games - wins,
        win_rate=wins / games, points=Decimal(wins), extra_points=Decimal(0), fouls=0, removals=0, best_moves=0,
        best_move_black=0, by_role=by_role, by_team={}, ratings={},
    )


def season() -> tuple[PlayerStats, list[RatingPoint]]:
    """Seven games: five classic, two fiim in between."""
    rulesets = ["classic", "classic", "fiim", "classic", "fiim", "classic", "classic"]
    ratings = [1485.0, 1497.5, 1510.0, 1503.25, 1521.0, 1490.0, 1512.5]
    history = [RatingPoint(100 + i, r, T0 + timedelta(days=i), x) for i, (r, x) in enumerate(zip(rulesets, ratings,
                                                                                                 strict=True))]
    stats = record({"don": WinCount(2, 1), "sheriff": WinCount(1, 1), "citizen": WinCount(4, 2)})
    return stats, history


def drawn_alone(text: str) -> tuple[numpy.ndarray, list[str]]:
    """``text`` alone in the charts' font: its pixels (grey) and any glyph matplotlib reported missing."""
    figure = Figure(figsize=(1, 1), dpi=100)
    canvas = FigureCanvasAgg(figure)
    figure.text(0.5, 0.5, text, fontproperties=FontProperties(fname=font_path(), size=40), ha="center",
                va="center", parse_math=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        canvas.draw()  # type: ignore[no-untyped-call]  # matplotlib leaves the Agg canvas unannotated
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    return numpy.asarray(canvas.buffer_rgba())[..., 0].copy(), missing  # type: ignore[no-untyped-call]


UNCOVERED = "\u10fd"
"""GEORGIAN LETTER AEN (for Abkhaz): DejaVu Sans has no glyph for it, so it shows what a gap looks like."""


def test_the_stats_chart_has_its_size_and_a_point_per_game() -> None:
    stats, history = season()
    chart = stats_chart("en", "Alice", stats, history)
    assert chart is not None
    drawn = draw_stats(chart)
    assert (drawn.width, drawn.height) == STATS_SIZE == png_size(drawn.png)
    assert sum(len(curve) for curve in drawn.curves) == len(history) == stats.games
    classic, fiim = drawn.curves
    assert classic == ((1, 1485.0), (2, 1497.5), (4, 1503.25), (6, 1490.0), (7, 1512.5))
    assert fiim == ((3, 1510.0), (5, 1521.0))
    assert [c.label for c in chart.curves] == ["Classic", "FIIM"]
    assert [(r.label, r.games, r.wins) for r in chart.roles] == [("Don", 2, 1), ("Sheriff", 1, 1), ("Citizen", 4, 2)]
    for word in ("Alice", "Rating after each game", "Wins by role", "Classic", "FIIM", "Don", "Citizen", "2/4"):
        assert word in drawn.texts, word


def test_a_long_career_draws_every_game() -> None:
    history = [RatingPoint(i, "classic", T0 + timedelta(hours=i), 1500.0 + (i % 17) - 8) for i in range(400)]
    chart = stats_chart("en", "Bob", record({"citizen": WinCount(400, 200)}), history)
    assert chart is not None
    drawn = draw_stats(chart)
    assert len(drawn.curves) == 1
    assert len(drawn.curves[0]) == 400
    assert [y for _x, y in drawn.curves[0]] == [p.rating for p in history]
    assert png_size(drawn.png) == STATS_SIZE


def test_nothing_to_draw_without_games() -> None:
    assert stats_chart("en", "Nobody", _empty(), []) is None
    assert league_chart("en", [], "all", None) is None


def _empty() -> PlayerStats:
    return PlayerStats(guild_id=1, user_id=7, ruleset=None, games=0, wins=0, draws=0, losses=0, win_rate=0.0,
                       points=Decimal(0), extra_points=Decimal(0), fouls=0, removals=0, best_moves=0,
                       best_move_black=0, by_role={}, by_team={}, ratings={})


def test_the_same_data_draws_the_same_bytes() -> None:
    stats, history = season()
    chart = stats_chart("ru", NAMES["ru"], stats, history)
    assert chart is not None
    first, second = draw_stats(chart), draw_stats(chart)
    assert first.png == second.png
    moved = stats_chart("ru", NAMES["ru"], stats, [*history[:-1], RatingPoint(106, "classic", T0, 1400.0)])
    assert moved is not None
    assert draw_stats(moved).png != first.png
    rows = league_rows(12)
    table = league_chart("ka", rows, "month", "georgian")
    assert table is not None
    assert draw_league(table).png == draw_league(table).png


def league_rows(count: int) -> list[LeagueRow]:
    return [LeagueRow(rank=i, user_id=i, display_name=f"{NAMES['ka']} {i}", games=3, wins=3 - i % 3,
                      points=Decimal(10 - i) / 4, extra_points=Decimal("0.25") * (i % 2), win_rate=0.5)
            for i in range(1, count + 1)]


@pytest.mark.parametrize("count", [1, 2, 9, 50])
def test_the_league_image_grows_with_its_rows(count: int) -> None:
    rows = league_rows(count)
    chart = league_chart("en", rows, "all", None)
    assert chart is not None
    drawn = draw_league(chart)
    assert (drawn.width, drawn.height) == league_size(count) == png_size(drawn.png)
    assert league_size(count)[1] > league_size(count - 1)[1] or count == 1
    for row in rows:
        assert f"{row.wins} / {row.games}" in drawn.texts
    assert "League table, all time" in drawn.texts
    assert list(chart.columns) == ["Place", "Player", "Points", "Wins / games", "Extra points"]
    assert chart.rows[0] == ("1", f"{NAMES['ka']} 1", "2.25", "2 / 3", "+0.25")


@pytest.mark.parametrize("language", ["ru", "ka"])
def test_every_letter_of_the_charts_is_a_glyph_of_the_font(language: str) -> None:
    stats, history = season()
    chart = stats_chart(language, NAMES[language], stats, history)
    table = league_chart(language, league_rows(3), "week", "classic")
    assert chart is not None
    assert table is not None
    texts = draw_stats(chart).texts + draw_league(table).texts
    assert NAMES[language] in texts
    assert t(language, "chart.stats.roles_title") in texts
    assert t(language, "chart.league.points") in texts
    script = range(0x10D0, 0x1100) if language == "ka" else range(0x400, 0x500)
    letters = sorted({c for text in texts for c in text if ord(c) in script})
    assert len(letters) >= 15, letters
    font = FT2Font(str(font_path()))
    blank, _ = drawn_alone(" ")
    for letter in letters:
        pixels, missing = drawn_alone(letter)
        assert font.get_char_index(ord(letter)) != 0, f"{letter!r} is not in the font"
        assert not missing, missing
        assert not numpy.array_equal(pixels, blank), f"{letter!r} draws nothing"


def test_the_glyph_check_sees_a_letter_the_font_lacks() -> None:
    _pixels, missing = drawn_alone(UNCOVERED)
    assert FT2Font(str(font_path())).get_char_index(ord(UNCOVERED)) == 0
    assert missing
    assert drawable(f"ა{UNCOVERED}ბ") == "აბ"


def test_characters_the_font_lacks_are_left_out_without_a_warning() -> None:
    assert drawable("🔥 Нино 🎲 ნინო") == "Нино ნინო"
    chart = StatsChart("🔥 Нино", "r", "r", "g", "w", "g", "w", (Curve("classic", (1,), (1510.0,)),),
                       (RoleWins("Don 🎩", 1, 1),), 1500.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn = draw_stats(chart)
    assert not [w for w in caught if "missing from" in str(w.message)], [str(w.message) for w in caught]
    assert "Нино" in drawn.texts
    assert "Don" in drawn.texts


def test_names_are_drawn_as_written_not_as_math() -> None:
    name = r"$\frac{x$ and $y$"
    chart = LeagueChart("t", ("#", "name"), (("1", name),))
    drawn = draw_league(chart)  # mathtext would refuse the unbalanced \frac
    assert name in drawn.texts
    stats = StatsChart(name, "r", "r", "g", "w", "g", "w", (Curve(name, (1, 2), (1500.0, 1510.0)),
                                                            Curve("b", (3,), (1490.0,))),
                       (RoleWins(name, 1, 0),), None)
    assert name in draw_stats(stats).texts


def test_long_names_are_shortened_in_the_table() -> None:
    name = "Александр Константинович Преображенский"
    drawn = draw_league(LeagueChart("t", ("#", "name"), (("1", name),)))
    assert name not in drawn.texts
    assert "Александр Константинович Пр…" in drawn.texts


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_alt_texts_say_what_the_image_shows(language: str) -> None:
    _stats, history = season()
    alt = stats_alt(language, NAMES[language], history)
    assert NAMES[language] in alt
    assert "7" in alt
    assert alt == t(language, "chart.stats.alt", player=NAMES[language], count=7)
    top = league_alt(language, league_rows(4), "all", None)
    assert top == t(language, "chart.league.alt", count=4, period=t(language, "cmd.top.period.all"), ruleset="")
    assert len(stats_alt(language, "x" * 2000, history)) == 1024


def test_starting_the_bot_does_not_import_matplotlib() -> None:
    code = "import sys, cogs.history, mafiabot.host.bot; print(sorted(m for m in sys.modules if 'matplotlib' in m))"
    out = subprocess.run(  # noqa: S603 (our own interpreter, our own code)
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
    )
    assert out.stdout.strip() == "[]", out.stdout


SAMPLES = ROOT / "docs" / "images"


def test_the_samples_in_the_docs_are_the_charts_drawn_today() -> None:
    drawn = {name: draw() for name, draw in chart_samples().items()}
    guide = (ROOT / "docs" / "playing.md").read_text(encoding="utf-8")
    for name, data in drawn.items():
        assert f"images/{name}" in guide, name
        assert (SAMPLES / name).read_bytes() == data, f"{name} is stale: run mafiabot pictures samples docs/images"


def _colours(png: bytes) -> set[tuple[int, int, int]]:
    with Image.open(io.BytesIO(png)) as image:
        found = image.convert("RGB").getcolors(1 << 16)
    assert found is not None
    return {(c[0], c[1], c[2]) for _count, c in found if isinstance(c, tuple)}


def test_the_charts_are_set_in_the_shipped_typeface_and_the_sheets_colours() -> None:
    """Same typeface file as the card and the sheet, on the sheet's paper, titles in its green, curves in the card's."""
    shipped = files("mafiabot.host.pictures") / "data"
    assert Path(str(font_path())).read_bytes() == (shipped / "DejaVuSans.ttf").read_bytes()
    assert Path(str(font_path("bold"))).read_bytes() == (shipped / "DejaVuSans-Bold.ttf").read_bytes()
    assert Path(str(font_path())).is_relative_to(Path(str(shipped)))
    for name, png in ((n, draw()) for n, draw in chart_samples().items()):
        colours = _colours(png)
        assert sheet.BACKGROUND in colours, name
        assert sheet.HEAD in colours, name
        assert (255, 255, 255) not in colours, name  # matplotlib's white paper is gone
    stats = _colours(chart_samples()["chart-stats-ru.png"]())
    assert CURVE_COLOURS[0] in stats
    assert CURVE_COLOURS[1] in stats
