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
import threading
from functools import cache
from importlib.resources import files

from PIL import ImageFont

REGULAR = "DejaVuSans.ttf"
BOLD = "DejaVuSans-Bold.ttf"
NOT_A_CHARACTER = "\uffff"
"""A code point no font maps: it draws as the font's .notdef box."""


_faces = threading.local()


@cache
def _font_file(name: str) -> bytes:
    return (files("mafiabot.host.pictures") / "data" / name).read_bytes()


def font(size: int, *, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The typeface at ``size`` pixels, this thread's own."""
    loaded: dict[tuple[int, bool], ImageFont.FreeTypeFont] = _faces.__dict__.setdefault("loaded", {})
    face = loaded.get((size, bold))
    if face is None:
        data = io.BytesIO(_font_file(BOLD if bold else REGULAR))
        face = loaded[size, bold] = ImageFont.truetype(data, size, layout_engine=ImageFont.Layout.BASIC)
    return face


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


def wrap(text: str, face: ImageFont.FreeTypeFont, width: int, *, whole_words: bool = False) -> list[str]:
    """``text`` broken at spaces (and soft hyphens) into lines no wider than ``width`` pixels.

    A word still too long is broken where it must, or with ``whole_words`` stays whole (and overflows).
    """
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


def unhyphenated(text: str) -> str:
    """``text`` without its soft hyphens, for a line that is not broken and for words read aloud."""
    return text.replace(SOFT_HYPHEN, "")


def fit(text: str, face: ImageFont.FreeTypeFont, width: int) -> str:
    """``text`` cut with an ellipsis to ``width`` pixels."""
    if face.getlength(text) <= width:
        return text
    while text and face.getlength(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…"
