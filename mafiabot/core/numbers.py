"""Figures as the exports write them: one machine format, whatever the server's language.

Text for people is written per language (``mafiabot.host.i18n.decimal_text``: ``3,300`` in Russian
and Georgian); a file a program reads has one format: a dot and a fixed number of decimals.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

MACHINE_PLACES = 5
"""Decimals of every point figure in the exports: exact, since a game's points have at most two
decimals, Ci three and a final's weight two (their products five)."""


def machine_decimal(value: Decimal, places: int = MACHINE_PLACES) -> str:
    """A figure with a dot and exactly ``places`` decimals (rounded half up beyond them).

    >>> machine_decimal(Decimal("3.3")), machine_decimal(Decimal("-0.2")), machine_decimal(Decimal("1.5"), 2)
    ('3.30000', '-0.20000', '1.50')
    """
    return f"{value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP):f}"
