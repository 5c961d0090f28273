"""The sheet's one layout and its two painters: the PNG the bot posts and the SVG the club's pages show."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from engine import CLASSIC
from mafiabot.host.pictures import png, scene
from mafiabot.host.pictures.fonts import SOFT_HYPHEN, font, sized, text_length, wrap
from mafiabot.host.pictures.sheet import FLAT_COLOURS, SheetInput, draw_sheet, layout_sheet, sheet_svg
from tests.host.test_pictures_sheet import NAMES, _protocol

SVG = "{http://www.w3.org/2000/svg}"
LOCALES = Path(__file__).resolve().parents[2] / "mafiabot" / "locales"
HOSTILE = '<script>x</script>&amp;"\''
"""A member's name that would be markup, were it not escaped."""


def _strings() -> list[str]:
    found: list[str] = [*NAMES, HOSTILE, "AVAWATo Ty", "ნიკოლოზ ბარათაშვილი — Вася"]
    for path in LOCALES.glob("*.json"):
        found += [text for text in json.loads(path.read_text(encoding="utf-8")).values() if isinstance(text, str)]
    return found


@pytest.mark.parametrize(("size", "bold"), [(16, False), (22, False), (22, True), (38, True)])
def test_a_text_measures_as_pillow_lays_it_out_to_the_64th_of_a_pixel(size: int, bold: bool) -> None:
    """The layout measures by widths read once; the PNG's bytes hold only if each is Pillow's own."""
    face = font(size, bold=bold)
    differ = [text for text in _strings() if text_length(text, size, bold=bold) != face.getlength(text)]
    assert differ == []


def _sheet(language: str) -> SheetInput:
    _game, protocol = _protocol(CLASSIC, 3)
    hostile = dataclasses.replace(protocol.seats[0], display_name=HOSTILE)
    fouled = dataclasses.replace(protocol.seats[1], fouls=2, technical=1)  # a triangle: every kind of shape
    return SheetInput(dataclasses.replace(protocol, seats=(hostile, fouled, *protocol.seats[2:])), language)


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_the_png_and_the_svg_draw_the_same_scene(language: str) -> None:
    sheet = _sheet(language)
    laid = layout_sheet(sheet)
    assert draw_sheet(sheet) == png.encode(scene.paint(laid), exact=FLAT_COLOURS)  # the PNG is the scene painted
    root = ElementTree.fromstring(sheet_svg(sheet))  # noqa: S314 - written here
    assert (root.attrib["width"], root.attrib["height"]) == (str(laid.width), str(laid.height))
    texts = [item for item in laid.items if isinstance(item, scene.Text)]
    drawn = list(root.iter(f"{SVG}text"))
    assert [element.text for element in drawn] == [item.text for item in texts]  # every text, as text, in order
    assert [float(element.attrib["x"]) for element in drawn] == [item.x for item in texts]
    widths = [text_length(item.text, item.size, bold=item.bold) for item in texts]
    assert [float(element.attrib["textLength"]) for element in drawn] == pytest.approx(widths, abs=0.01)
    shapes = [item for item in laid.items if not isinstance(item, scene.Text)]
    assert len(list(root.iter(f"{SVG}rect"))) - 1 + len(list(root.iter(f"{SVG}line"))) \
        + len(list(root.iter(f"{SVG}polygon"))) == len(shapes)  # and every shape (the first rect is the page)


def test_a_hostile_name_is_one_text_in_the_svg() -> None:
    text = sheet_svg(_sheet("en"))
    assert "<script" not in text
    root = ElementTree.fromstring(text)  # noqa: S314 - written here
    assert HOSTILE in [element.text for element in root.iter(f"{SVG}text")]


def test_the_svg_keeps_a_texts_spaces() -> None:
    laid = scene.Scene(100, 40, (255, 255, 255), (scene.Text(0, 0, " two  spaces ", 16, (0, 0, 0)),))
    root = ElementTree.fromstring(scene.svg(laid))  # noqa: S314 - written here
    assert root.attrib["{http://www.w3.org/XML/1998/namespace}space"] == "preserve"
    assert [element.text for element in root.iter(f"{SVG}text")] == [" two  spaces "]


def test_the_svg_leaves_out_what_xml_cannot_hold() -> None:
    laid = scene.Scene(100, 40, (255, 255, 255), (scene.Text(0, 0, "a\x00b\x1bc <&>", 16, (0, 0, 0)),))
    root = ElementTree.fromstring(scene.svg(laid, title="t\x01"))  # noqa: S314 - written here
    assert [element.text for element in root.iter(f"{SVG}text")] == ["abc <&>"]


def test_a_line_that_fits_is_its_own_line_unless_breaking_would_change_it() -> None:
    """Measured once when it fits, a line still loses its soft hyphens and first spaces as word by word."""
    face = sized(22)
    assert wrap("Shots: #2 → #4.", face, 1000) == ["Shots: #2 → #4."]
    assert wrap(f"Ekate{SOFT_HYPHEN}rina", face, 1000) == ["Ekaterina"]
    assert wrap("  two", face, 1000) == ["two"]
