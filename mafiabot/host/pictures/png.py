"""A picture's PNG bytes: a palette of at most 256 colours, two to three times smaller, with no visible change.

The pictures are flat colours and anti-aliased type; 256 colours picked by Pillow's fast octree
(no dithering) hold them with an average error below 0.2 of 255 per channel (at most 13, on the
edge of a letter), and the PNG of a palette image is 2 to 3 times smaller than of the RGB one
(``benchmarks/pictures.py`` prints the sizes, ``docs/performance.md`` has them). Median cut errs
as little but takes five times as long, longer than drawing the picture. The design's own flat
colours (a seat's fill, a team's tint) are added to the palette as they are and every pixel drawn in
one points to it, so a colour read from a picture is the one drawn. zlib runs at its
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
    kept = list(dict.fromkeys(exact))[: COLOURS // 2]
    picked = COLOURS - len(kept)
    quantized = rgb.quantize(picked, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    if kept:
        quantized = _with_exact(rgb, quantized, picked, kept)
    quantized.save(out, format="PNG")
    return out.getvalue()


def _with_exact(rgb: Image.Image, quantized: Image.Image, picked: int, kept: list[Colour]) -> Image.Image:
    """``quantized`` with ``kept`` added after its ``picked`` colours, and every pixel of one of them pointing there.

    The other pixels keep the colour the octree gave them: no entry they use is changed.
    """
    import numpy

    entries = (quantized.getpalette() or [])[: 3 * picked]
    entries += [0] * (3 * picked - len(entries))
    indices = numpy.array(quantized, dtype=numpy.uint8)
    pixels = numpy.asarray(rgb, dtype=numpy.uint32)
    codes = (pixels[..., 0] << 16) | (pixels[..., 1] << 8) | pixels[..., 2]
    for offset, (red, green, blue) in enumerate(kept):
        indices[codes == (red << 16 | green << 8 | blue)] = picked + offset
    paletted = Image.frombytes("P", quantized.size, indices.tobytes())
    paletted.putpalette([*entries, *(value for colour in kept for value in colour)])
    return paletted
