"""CSV the bot sends out: opened in a spreadsheet, a cell is never run as a formula.

A player's name is whatever he typed on Discord. A spreadsheet reads a cell that starts with
``= + - @`` (or a tab or carriage return, which some strip first) as a formula, so a name such as
``=HYPERLINK(...)`` would run on the club's computer (OWASP, "CSV Injection"). Such text cells get
a leading ``'``, which spreadsheets show as text; numbers (``-0.5`` points) stay numbers.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


def safe_cell(value: object) -> object:
    """``value``, with a ``'`` before text a spreadsheet would take for a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return f"'{value}"
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV with a header line; CR LF line ends (RFC 4180), so a carriage return in a name is quoted."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([safe_cell(v) for v in row] for row in rows)
    return out.getvalue()
