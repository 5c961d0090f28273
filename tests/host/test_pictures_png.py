"""The pictures' PNGs: a palette of at most 256 colours, the design's flat colours exact, half the bytes or less."""

from __future__ import annotations

import io
from pathlib import Path

import numpy
import pytest
from PIL import Image

from mafiabot.host.pictures import card, png, sheet
from mafiabot.tools.cli import main
from mafiabot.tools.samples import chart_samples, club_game, posted

SAMPLES = Path(__file__).resolve().parents[2] / "docs" / "images"


def _pictures() -> dict[str, object]:
    game = club_game("georgian", 12, 3)
    found: dict[str, object] = {}
    for picture in posted(game, "ka"):
        found.setdefault("sheet" if picture.filename.startswith("protocol-") else "card", picture.draw)
    found.update(chart_samples())
    return found


@pytest.fixture(scope="module")
def both() -> dict[str, tuple[bytes, bytes]]:
    """Each kind of picture drawn as RGB and by the palette."""
    drawn: dict[str, tuple[bytes, bytes]] = {}
    for name, draw in _pictures().items():
        assert callable(draw)
        png.PALETTE = False
        try:
            rgb = draw()
        finally:
            png.PALETTE = True
        drawn[name] = (rgb, draw())
    return drawn


def _open(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def test_every_picture_is_a_palette_of_at_most_256_colours_at_most_half_the_bytes(
        both: dict[str, tuple[bytes, bytes]]) -> None:
    assert set(both) == {"card", "sheet", "chart-stats-ru.png", "chart-top-ka.png"}
    for name, (rgb, paletted) in both.items():
        image = _open(paletted)
        assert image.mode == "P", name
        assert len(image.getcolors(1 << 16) or ()) <= png.COLOURS, name
        assert len(paletted) * 2 <= len(rgb), (name, len(rgb), len(paletted))


def test_the_palette_changes_nothing_a_reader_could_see(both: dict[str, tuple[bytes, bytes]]) -> None:
    """On average a channel moves by less than 0.5 of 255, and no pixel by more than 16 (a letter's edge)."""
    for name, (rgb, paletted) in both.items():
        before = numpy.asarray(_open(rgb).convert("RGB"), dtype=int)
        after = numpy.asarray(_open(paletted).convert("RGB"), dtype=int)
        error = numpy.abs(before - after)
        assert error.mean() < 0.5, (name, error.mean())
        assert error.max() <= 16, (name, error.max())


def test_the_flat_colours_of_the_design_stay_exact(both: dict[str, tuple[bytes, bytes]]) -> None:
    card_colours = {c for _n, c in _open(both["card"][1]).convert("RGB").getcolors(1 << 16) or ()}
    assert {card.BACKGROUND, card.FELT, card.ALIVE_FILL, card.FOUL_SLOT} <= card_colours
    sheet_colours = {c for _n, c in _open(both["sheet"][1]).convert("RGB").getcolors(1 << 16) or ()}
    assert {sheet.BACKGROUND, sheet.HEAD, *sheet.TEAM_TINTS.values()} <= sheet_colours


def test_the_samples_in_the_docs_are_the_pictures_drawn_today(tmp_path: Path) -> None:
    """``mafiabot pictures samples`` draws every picture docs/images holds, byte for byte."""
    assert main(["pictures", "samples", str(tmp_path)]) == 0
    drawn = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    kept = {path.name: path.read_bytes() for path in SAMPLES.glob("*.png")}
    assert {name for name in drawn if "-start." in name or "-lift." in name}, "night zero and the lift vote"
    stale = sorted(name for name in kept.keys() | drawn.keys() if kept.get(name) != drawn.get(name))
    assert not stale, f"{stale} differ: run mafiabot pictures samples docs/images"
