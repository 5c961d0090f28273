"""The one typeface the pictures use, shipped with the package: DejaVu Sans (licence beside it).

It covers Latin, Cyrillic and Georgian (Mkhedruli), the scripts of the tables' languages and of
most names. Text is laid out by Pillow's basic engine, not by libraqm, so a picture's bytes do not
depend on which libraries the host happens to have. A character the font lacks (an emoji in a
name) would be drawn as an empty box; :func:`drawable` leaves such characters out.

The sender draws pictures in worker threads, several tables at once, and a FreeType face is not
safe to share between threads: each thread loads its own faces (from bytes read once).
"""

from __future__ import annotations

import io
import operator
import threading
from functools import cache, lru_cache
from importlib.resources import files
from typing import Protocol

from PIL import ImageFont

REGULAR = "DejaVuSans.ttf"
BOLD = "DejaVuSans-Bold.ttf"
NOT_A_CHARACTER = "\uffff"
"""A code point no font maps: it draws as the font's .notdef box."""


_faces = threading.local()


@cache
def font_file(name: str) -> bytes:
    """A file of the typeface's folder (a face, or its licence), read once per process."""
    return (files("mafiabot.host.pictures") / "data" / name).read_bytes()


def font(size: int, *, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The typeface at ``size`` pixels, this thread's own."""
    loaded: dict[tuple[int, bool], ImageFont.FreeTypeFont] = _faces.__dict__.setdefault("loaded", {})
    face = loaded.get((size, bold))
    if face is None:
        data = io.BytesIO(font_file(BOLD if bold else REGULAR))
        face = loaded[size, bold] = ImageFont.truetype(data, size, layout_engine=ImageFont.Layout.BASIC)
    return face


class Measures(Protocol):
    """What :func:`wrap` and :func:`fit` measure text by: a Pillow face, or :class:`Sized`."""

    def getlength(self, text: str, /) -> float:
        """The width of ``text`` in pixels, as Pillow would draw it."""


class _Advances:
    """A face's widths in 64ths of a pixel: each character's advance and each pair's kerning, read once.

    Pillow's basic layout (the one the pictures use) places a text's glyphs one after another, each
    by its hinted advance plus the kerning of the pair it ends: the width of a text is the sum of
    those, so adding up what was read once gives Pillow's ``getlength`` to the 64th of a pixel
    (``tests/host/test_pictures_fonts.py`` holds the two equal over every catalog string), five to
    thirty times sooner than laying the text out again.
    """

    def __init__(self, size: int, *, bold: bool) -> None:
        self.size, self.bold = size, bold
        self.advance: dict[str, int] = {}
        self.kerning: dict[str, int] = {}

    def length(self, text: str) -> float:
        try:
            total = sum(map(self.advance.__getitem__, text))
        except KeyError:
            self._read(text)
            total = sum(map(self.advance.__getitem__, text))
        try:
            total += sum(map(self.kerning.__getitem__, map(operator.add, text, text[1:])))
        except KeyError:
            self._read(text)
            total += sum(map(self.kerning.__getitem__, map(operator.add, text, text[1:])))
        return total / 64

    def _read(self, text: str) -> None:
        face = font(self.size, bold=self.bold)
        for char in text:
            if char not in self.advance:
                self.advance[char] = round(face.getlength(char) * 64)
        for pair in map(operator.add, text, text[1:]):
            if pair not in self.kerning:
                whole = round(face.getlength(pair) * 64)
                self.kerning[pair] = whole - self.advance[pair[0]] - self.advance[pair[1]]


@cache
def _advances(size: int, *, bold: bool) -> _Advances:
    return _Advances(size, bold=bold)


@lru_cache(maxsize=1 << 16)
def text_length(text: str, size: int, *, bold: bool = False) -> float:
    """The width of ``text`` at ``size`` pixels, as Pillow's ``getlength`` gives it, from widths read once."""
    return _advances(size, bold=bold).length(text)


@cache
def sized(size: int, *, bold: bool = False) -> Sized:
    """What measures text at ``size`` pixels (by :func:`text_length`), for :func:`wrap` and :func:`fit`."""
    return Sized(size, bold=bold)


class Sized:
    """The typeface at a size, for measuring only: the same widths as :func:`font`'s, many times sooner."""

    def __init__(self, size: int, *, bold: bool) -> None:
        self.size, self.bold = size, bold

    def getlength(self, text: str, /) -> float:
        """The width of ``text`` in pixels."""
        return text_length(text, self.size, bold=self.bold)


def _mask(char: str) -> tuple[tuple[int, int], bytes]:
    mask = font(24).getmask(char)
    return mask.size, bytes(mask)


@cache
def has_glyph(char: str) -> bool:
    """Whether the font draws ``char`` as itself rather than as the .notdef box."""
    return char.isspace() or _mask(char) != _mask(NOT_A_CHARACTER)


def drawable(text: str) -> str:
    """``text`` without the characters the font would draw as boxes, its spaces collapsed."""
    return " ".join("".join(c for c in text if has_glyph(c)).split())


SOFT_HYPHEN = "\u00ad"
"""Where a catalog allows a long word to break across lines; the line then ends in a hyphen."""


def wrap(text: str, face: Measures, width: int, *, whole_words: bool = False) -> list[str]:
    """``text`` broken at spaces (and soft hyphens) into lines no wider than ``width`` pixels.

    A word still too long is broken where it must, or with ``whole_words`` stays whole (and overflows).
    A text that fits is its own line, measured once (it starts with no space the breaking would drop).
    """
    if _fits_whole(text, face, width):
        return [text]
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        parts = word.split(SOFT_HYPHEN)
        for index, part in enumerate(parts):
            hyphen = "-" if index + 1 < len(parts) else ""
            candidate = current + part if index else (f"{current} {part}" if current else part)
            if face.getlength(candidate + hyphen) <= width:
                current = candidate
                continue
            if current:
                lines.append(current + ("-" if index else ""))
            current = part
            while not whole_words and len(current) > 1 and face.getlength(current) > width:
                cut = len(current) - 1
                while cut > 1 and face.getlength(current[:cut]) > width:
                    cut -= 1
                lines.append(current[:cut])
                current = current[cut:]
    return [*lines, current]


def _fits_whole(text: str, face: Measures, width: int) -> bool:
    """Whether ``text`` is its own one line: it fits, and has no soft hyphen or first space that breaking would drop."""
    return SOFT_HYPHEN not in text and not text.startswith(" ") and face.getlength(text) <= width


def unhyphenated(text: str) -> str:
    """``text`` without its soft hyphens, for a line that is not broken and for words read aloud."""
    return text.replace(SOFT_HYPHEN, "")


def fit(text: str, face: Measures, width: int) -> str:
    """``text`` cut with an ellipsis to ``width`` pixels."""
    if face.getlength(text) <= width:
        return text
    while text and face.getlength(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…"
