"""A picture's PNG bytes: a palette of at most 256 colours, two to three times smaller, with no visible change.

The pictures are flat colours and anti-aliased type; 256 colours picked by Pillow's fast octree
(no dithering) hold them with an average error below 0.2 of 255 per channel (at most 11, on the
edge of a letter), and the PNG of a palette image is 2 to 3 times smaller than of the RGB one
(``benchmarks/pictures.py`` prints the sizes, ``docs/performance.md`` has them). Median cut errs
as little but takes five times as long, longer than drawing the picture. The design's own flat
colours (a seat's fill, a team's tint) are put back exactly into the palette and every pixel mapped
to the palette as it then is, so a colour read from a picture is the one drawn. zlib runs at its
default level: the best one (``optimize``) saves a tenth more and costs ten times the time.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from PIL import Image

COLOURS = 256
PALETTE = True
"""Off, pictures are written as RGB as they were before: ``benchmarks/pictures.py`` compares the two."""

Colour = tuple[int, int, int]


def encode(image: Image.Image, *, exact: Iterable[Colour] = ()) -> bytes:
    """``image`` as PNG bytes, by a palette of :data:`COLOURS`, the ``exact`` colours kept as they are."""
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    out = io.BytesIO()
    if not PALETTE:
        rgb.save(out, format="PNG")
        return out.getvalue()
    quantized = rgb.quantize(COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    if _snap(quantized, exact):  # every pixel to its nearest colour of the palette as it now is
        quantized = rgb.quantize(palette=quantized, dither=Image.Dither.NONE)
    quantized.save(out, format="PNG")
    return out.getvalue()


def _snap(quantized: Image.Image, exact: Iterable[Colour]) -> bool:
    """Each of the ``exact`` colours replaces its nearest palette entry; whether the palette changed."""
    entries = quantized.getpalette() or []
    colours = [tuple(entries[i:i + 3]) for i in range(0, len(entries), 3)]
    free = set(range(len(colours)))
    changed = False
    for colour in dict.fromkeys(exact):
        if not free:
            break
        nearest = min(free, key=lambda i: sum((a - b) ** 2 for a, b in zip(colours[i], colour, strict=True)))
        free.discard(nearest)
        if colours[nearest] != colour:
            colours[nearest] = colour
            changed = True
    if changed:
        quantized.putpalette([value for colour in colours for value in colour])
    return changed
