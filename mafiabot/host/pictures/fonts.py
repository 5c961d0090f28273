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
