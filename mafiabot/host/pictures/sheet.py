"""The protocol sheet: a finished game on one page, as a federation keeps it.

A table of the seats (player, card, fouls, how and when each left, result, points) and then the
game night by night and day by day: shots, checks, saves, who the night took, the Best Move,
nominations, each vote's tally, who the day sent out. Drawn from ``core.protocol.Protocol``, which
names the roles, so it is only drawn once the game is over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from PIL import Image

from engine import Role, Ruleset, silent_vote_target
from mafiabot.core.protocol import Day, Moment, Night, Protocol, ProtocolSeat, VoteRound
from mafiabot.host.i18n import POINT_PLACES, decimal_text, has_key, protocol_cause, t
from mafiabot.host.pictures.fonts import drawable, fit, sized, wrap
from mafiabot.host.pictures.png import encode
from mafiabot.host.pictures.scene import Colour, Item, Line, Polygon, Rectangle, Scene, Text, paint, svg

WIDTH = 1400
MARGIN = 40
ROW = 52
"""A seat's row: one line of :data:`TEXT` or two of a smaller size."""
LINE = 30
LABEL_WIDTH = 170
"""The moment column of the game section ("Night 1", "Day 2")."""
TEXT = 22
HEADING_TEXT = 20
MIN_TEXT = 16
"""The smallest type a cell shrinks to before it takes a second line or, a name only, an ellipsis."""
CELL_PAD = 8
"""A cell's text keeps this far from the column's edges."""

BACKGROUND = (250, 248, 243)
INK = (33, 33, 38)
DIM = (110, 110, 120)
RULE = (210, 206, 198)
HEAD = (38, 84, 70)
TEAM_TINTS = {"red": (250, 226, 222), "black": (222, 222, 228), "maniac": (236, 226, 246)}
FOUL_MARK = (214, 168, 20)
FOUL_SLOT = (196, 191, 180)
TECHNICAL_MARK = (200, 40, 40)
"""Technical fouls are counted apart, so they are drawn apart: red triangles after the four slots."""
FLAT_COLOURS = (BACKGROUND, INK, DIM, RULE, HEAD, *TEAM_TINTS.values(), FOUL_MARK, FOUL_SLOT, TECHNICAL_MARK)
"""The colours drawn flat, kept exact by the PNG's palette."""

WIDTHS = (50, 310, 210, 130, 390, 140, 90)
"""The seat table's columns (seat, player, role, fouls, left, result, points); they fill the page."""
FOUL_COLUMN = 3

RESULTS = ("red", "black", "maniac", "draw", "abandoned")
REASONS = ("all_black_gone", "parity", "maniac_duel", "everyone_gone", "no_departures", "declared_draw", "abandoned")


@dataclass(frozen=True)
class SheetInput:
    """A finished game's protocol, in a language."""

    protocol: Protocol
    language: str


def title_text(sheet: SheetInput) -> str:
    """``Protocol of game #12 · Classic``."""
    protocol, lang = sheet.protocol, sheet.language
    name = protocol.game.ruleset_name or protocol.rules().name
    ruleset = t(lang, f"ruleset.{name}") if has_key(f"ruleset.{name}") else drawable(name)
    return t(lang, "sheet.title", id=protocol.game.id or "", ruleset=ruleset)


def result_text(sheet: SheetInput) -> str:
    """Who won and why, in words."""
    protocol, lang = sheet.protocol, sheet.language
    key = "history.result.open"
    if protocol.result in RESULTS:
        key = {"red": "history.result.red", "black": "history.result.black", "maniac": "history.result.maniac",
               "draw": "history.result.draw", "abandoned": "history.result.abandoned"}[protocol.result]
    result = t(lang, key)
    if protocol.reason not in REASONS:
        return result
    reason = {
        "all_black_gone": "protocol.reason.all_black_gone", "parity": "protocol.reason.parity",
        "maniac_duel": "protocol.reason.maniac_duel", "everyone_gone": "protocol.reason.everyone_gone",
        "no_departures": "protocol.reason.no_departures", "declared_draw": "protocol.reason.declared_draw",
        "abandoned": "protocol.reason.abandoned",
    }[protocol.reason]
    return t(lang, "sheet.result", result=result, reason=t(lang, reason))


def alt_text(sheet: SheetInput) -> str:
    """The sheet in a sentence, for readers who cannot see it."""
    return t(sheet.language, "sheet.alt", title=title_text(sheet), result=result_text(sheet))[:1024]


def draw_sheet(sheet: SheetInput) -> bytes:
    """The sheet as PNG bytes; the same input gives the same bytes."""
    return encode(paint_sheet(sheet), exact=FLAT_COLOURS)


def paint_sheet(sheet: SheetInput) -> Image.Image:
    """The sheet drawn."""
    return paint(layout_sheet(sheet))


def sheet_svg(sheet: SheetInput, *, style: str = "") -> str:
    """The sheet as an SVG document, laid out as the PNG is; ``style`` brings its typeface (``scene.svg``)."""
    return svg(layout_sheet(sheet), title=alt_text(sheet), style=style)


def layout_sheet(sheet: SheetInput) -> Scene:
    """What the sheet draws where: the one layout both painters (PNG and SVG) draw."""
    blocks = game_blocks(sheet)
    body = sized(TEXT)
    room = LABEL_WIDTH - 2 * CELL_PAD
    wrapped = [(fit_cell(label, room, bold=True, height=2 * LINE),
                [part for line in lines for part in wrap(line, body, WIDTH - 2 * MARGIN - LABEL_WIDTH)])
               for label, lines in blocks]
    seats_height = ROW * (len(sheet.protocol.seats) + 1)
    game_height = sum(_block_height(label, lines) for label, lines in wrapped)
    height = MARGIN + 110 + seats_height + 70 + game_height + MARGIN
    items: list[Item] = [Text(MARGIN, MARGIN, title_text(sheet), 38, HEAD, bold=True),
                         Text(MARGIN, MARGIN + 54, result_text(sheet), 26, INK)]
    y = _seat_table(items, sheet, MARGIN + 110)
    items.append(Text(MARGIN, y + 24, t(sheet.language, "sheet.game_title"), 28, HEAD, bold=True))
    y += 70
    for label, lines in wrapped:
        items.append(Line((MARGIN, y), (WIDTH - MARGIN, y), RULE))
        place_fitted(items, label, MARGIN, y + 7, bold=True, fill=HEAD, centred=False)
        items += [Text(MARGIN + LABEL_WIDTH, y + 7 + index * LINE, line, TEXT, INK)
                  for index, line in enumerate(lines)]
        y += _block_height(label, lines)
    return Scene(WIDTH, height, BACKGROUND, tuple(items))


@dataclass(frozen=True)
class Fitted:
    """A cell's text as drawn: its size in pixels and its lines; ``cut`` if it still had to end in an ellipsis."""

    size: int
    lines: tuple[str, ...]
    cut: bool = False


def line_height(size: int) -> int:
    """The distance between two lines of ``size`` pixel type."""
    return round(size * 1.2)


@lru_cache(maxsize=1 << 14)
def fit_cell(text: str, room: int, *, bold: bool = False, size: int = TEXT, lines: int = 2,
             height: int = ROW - 4) -> Fitted:
    """``text`` laid out to fit ``room`` pixels wide and ``height`` high, never cut if it can be helped.

    One line at ``size`` if it fits; else the largest size down to :data:`MIN_TEXT` at which it
    fits on one line or, broken at spaces, on up to ``lines`` lines; else the same with a word
    broken inside. Only a text too long even then (a member's name, never a label:
    ``tests/host/test_pictures_sheet.py`` checks every label) is cut.
    """
    for whole_words in (True, False):
        for step in range(size, MIN_TEXT - 1, -1):
            face = sized(step, bold=bold)
            if face.getlength(text) <= room:
                return Fitted(step, (text,))
            broken = wrap(text, face, room, whole_words=whole_words)
            if (len(broken) <= lines and len(broken) * line_height(step) <= height
                    and all(face.getlength(line) <= room for line in broken)):
                return Fitted(step, tuple(broken))
    face = sized(MIN_TEXT, bold=bold)
    most = max(1, min(lines, height // line_height(MIN_TEXT)))
    broken = wrap(text, face, room)
    kept = broken[: most - 1]
    return Fitted(MIN_TEXT, (*kept, fit(" ".join(broken[most - 1:]), face, room)), cut=True)


def _block_height(label: Fitted, lines: Sequence[str]) -> int:
    return max(LINE * len(lines), line_height(label.size) * len(label.lines)) + 14


def place_fitted(items: list[Item], fitted: Fitted, x: int, y: int, *, bold: bool = False,
                 fill: Colour = INK, centred: bool = True) -> None:
    """The lines of ``fitted`` from ``x``, centred on ``y`` (or starting at it)."""
    step = line_height(fitted.size)
    top = y - step * len(fitted.lines) / 2 if centred else y
    items += [Text(x, top + step * (index + 0.5), line, fitted.size, fill, bold=bold, anchor="lm")
              for index, line in enumerate(fitted.lines)]


def _seat_table(items: list[Item], sheet: SheetInput, top: int) -> int:
    lang = sheet.language
    headings = ("#", t(lang, "sheet.col.player"), t(lang, "sheet.col.role"), t(lang, "sheet.col.fouls"),
                t(lang, "sheet.col.left"), t(lang, "sheet.col.result"), t(lang, "sheet.col.points"))
    x = MARGIN
    for heading, width in zip(headings, WIDTHS, strict=True):
        fitted = fit_cell(heading, width - 2 * CELL_PAD, bold=True, size=HEADING_TEXT)
        place_fitted(items, fitted, x + CELL_PAD, top + ROW // 2, bold=True, fill=DIM)
        x += width
    y = top + ROW
    for seat in sheet.protocol.seats:
        tint = TEAM_TINTS.get(seat.team or "", BACKGROUND)
        items.append(Rectangle((MARGIN, y, WIDTH - MARGIN, y + ROW - 2), tint))
        x = MARGIN
        for column, (width, cell) in enumerate(zip(WIDTHS, seat_cells(sheet, seat), strict=True)):
            if column == FOUL_COLUMN:
                _foul_marks(items, seat.fouls, x + CELL_PAD, y + ROW // 2, technical=seat.technical)
            else:
                fitted = fit_cell(cell, width - 2 * CELL_PAD, bold=column == 0)
                place_fitted(items, fitted, x + CELL_PAD, y + ROW // 2, bold=column == 0)
            x += width
        y += ROW
    return y


def _foul_marks(items: list[Item], fouls: int, x: int, y: int, *, technical: int = 0) -> None:
    """Four slots, one lit per foul; technical fouls, counted apart, as red triangles after them."""
    size, gap = 16, 4
    slots = max(4, fouls)
    for slot in range(slots):
        x0 = x + slot * (size + gap)
        items.append(Rectangle((x0, y - size // 2, x0 + size, y + size // 2),
                               FOUL_MARK if slot < fouls else FOUL_SLOT, radius=3))
    for mark in range(technical):
        x0 = x + (slots + mark) * (size + gap)
        items.append(Polygon(((x0, y + size // 2), (x0 + size, y + size // 2), (x0 + size // 2, y - size // 2)),
                             TECHNICAL_MARK))


def seat_cells(sheet: SheetInput, seat: ProtocolSeat) -> tuple[str, ...]:
    """One row of the seat table, in the columns' order."""
    lang, protocol = sheet.language, sheet.protocol
    role = "—"
    if seat.role in tuple(Role):
        role = t(lang, f"role.{protocol.rules().card_name(Role(seat.role))}")
    left = "—"
    if seat.departure is not None:
        left = t(lang, "protocol.left", cause=protocol_cause(lang, seat.departure.cause),
                 moment=moment_text(lang, seat.departure.at))
    if seat.won is True:
        result = t(lang, "protocol.won")
    elif protocol.result == "draw":
        result = t(lang, "protocol.drew")
    else:
        result = t(lang, "protocol.lost") if seat.won is False else "—"
    points = _points(lang, seat)
    return (str(seat.seat), drawable(seat.display_name) or "—", role, str(seat.fouls), left, result, points)


def _points(lang: str, seat: ProtocolSeat) -> str:
    return "—" if seat.points is None else _decimal(lang, seat.points)


@lru_cache(maxsize=1 << 10)
def _decimal(lang: str, value: Decimal) -> str:
    """A seat's points as the language writes them; a league's points are a few values over and over."""
    return decimal_text(lang, value, POINT_PLACES)


def game_blocks(sheet: SheetInput) -> list[tuple[str, list[str]]]:
    """The game section: (moment, its lines) for each night and day in the order they were played."""
    protocol, lang = sheet.protocol, sheet.language
    names = {s.seat: drawable(s.display_name) for s in protocol.seats}
    nights = {night.number: night for night in protocol.nights}
    days = {day.number: day for day in protocol.days}
    blocks: list[tuple[str, list[str]]] = []
    for number in range(max([*nights, *days], default=-1) + 1):
        if number in days and number > 0:
            blocks.append((t(lang, "card.day", day=number), day_lines(lang, days[number], names)))
        if number in nights:
            lines = night_lines(lang, nights[number], names, protocol.rules())
            if lines:
                blocks.append((t(lang, "card.night", night=number), lines))
    if protocol.extra_points:
        lines = [t(lang, "protocol.extra", player=_player(lang, e.seat, names),
                   value=decimal_text(lang, e.value, POINT_PLACES, signed=True), reason=drawable(e.reason),
                   moment=moment_text(lang, e.at))
                 for e in protocol.extra_points]
        blocks.append((t(lang, "protocol.extra_title").rstrip(":"), lines))
    if protocol.protests:
        blocks.append((t(lang, "protocol.protests_title").rstrip(":"), _protest_lines(lang, protocol, names)))
    return [(label, lines or ["—"]) for label, lines in blocks]


def _protest_lines(lang: str, protocol: Protocol, names: dict[int, str]) -> list[str]:
    """Each protest with its ruling and the ruling's note, as the FIIM blank has its protest line."""
    return [t(lang, "protocol.protest", id=p.id, player=_player(lang, p.seat, names),
              when=t(lang, "protocol.protest.during" if p.during_game else "protocol.protest.after"),
              text=drawable(p.text), status=t(lang, f"protest.status.{p.status}"))
            + (" · " + t(lang, "protocol.protest.note", note=drawable(p.note)) if p.note else "")
            for p in protocol.protests]


def moment_text(lang: str, moment: Moment) -> str:
    """``day 2`` or ``night 1``."""
    key = "protocol.moment.night" if moment.kind == "night" else "protocol.moment.day"
    return t(lang, key, number=moment.number)


def _player(lang: str, seat: int, names: dict[int, str]) -> str:
    return t(lang, "seat.label", seat=seat, name=names.get(seat, "")).strip()


def _seats(seats: Sequence[int]) -> str:
    return ", ".join(f"#{seat}" for seat in seats) if seats else "—"


def night_lines(lang: str, night: Night, names: dict[int, str], rules: Ruleset) -> list[str]:
    """A night's shots, checks, saves and dawn, and the first victim's Best Move."""
    lines: list[str] = []
    if night.shots:
        lines.append(t(lang, "protocol.shots", shots=", ".join(f"#{s.seat} → #{s.target}" for s in night.shots)))
    if night.maniac is not None:
        lines.append(t(lang, "protocol.maniac_shot", seat=night.maniac.seat, target=night.maniac.target))
    elif night.maniac_passed:
        lines.append(t(lang, "protocol.maniac_passed"))
    for check in night.checks:
        if check.by == Role.DON.value:
            key = f"end.check.don_yes.{rules.checker}" if check.found else f"end.check.don_no.{rules.checker}"
            lines.append(t(lang, key, seat=check.seat, target=check.target))
        else:
            found = t(lang, f"check.result.{rules.check_result(black=check.found)}")
            lines.append(t(lang, f"end.check.{rules.checker}", seat=check.seat, target=check.target, result=found))
    lines += [t(lang, "protocol.heal", seat=h.seat, target=h.target) for h in night.heals]
    if night.resolved and night.number > 0:
        if night.killed:
            lines.append(t(lang, "protocol.killed", seats=_seats(night.killed)))
        else:
            lines.append(t(lang, "morning.mafia_missed" if night.mafia_target is None else "protocol.nobody_killed"))
    if night.best_move is not None:
        best = night.best_move
        lines.append(t(lang, "protocol.best_move", player=_player(lang, best.seat, names), seats=_seats(best.targets),
                       count=best.black))
    return lines


def day_lines(lang: str, day: Day, names: dict[int, str]) -> list[str]:
    """A day's nominations, each vote's tally, the lift vote and who left by the vote."""
    lines: list[str] = []
    if day.critical_fouls:
        lines.append(t(lang, "morning.critical", seats=_seats(day.critical_fouls)))
    if day.nominations:
        items = ", ".join(f"#{n.seat} → #{n.target}" for n in day.nominations)
        lines.append(t(lang, "protocol.nominations", items=items))
    ties = list(day.ties)
    for vote in day.votes:
        lines.append(vote_line(lang, vote))
        if ties:
            lines.append(t(lang, "vote.tie", seats=_seats(ties.pop(0))))
    if day.lift is not None:
        key = "vote.lift_passed" if day.lift.passed else "vote.lift_failed"
        lines.append(t(lang, key, count=len(day.lift.yes), seats=_seats(day.lift.yes)))
    if day.no_vote is not None and has_key(f"vote.none.{day.no_vote}"):
        lines.append(t(lang, f"vote.none.{day.no_vote}"))
    lines += [t(lang, "vote.out", player=_player(lang, s, names)) for s in day.voted_out]
    return lines


def vote_line(lang: str, vote: VoteRound) -> str:
    """One round: ``Vote: #5: 7 votes (#1, #2, …); #8: 3 votes (silent: #4)``, as the channel's tally reads it."""
    head = t(lang, "protocol.vote.revote" if vote.kind == "revote" else "protocol.vote.main")
    last = silent_vote_target([row.candidate for row in vote.tally]) if vote.silent and vote.tally else None
    rows = []
    for row in vote.tally:
        quiet = vote.silent if row.candidate == last else ()
        if not (row.total or row.voters or quiet):
            continue
        shown = [_seats(row.voters)] if row.voters or not quiet else []
        if quiet:
            shown.append(t(lang, "vote.result_silent", seats=_seats(quiet)))
        rows.append(t(lang, "vote.result_line", target=f"#{row.candidate}", count=row.total, voters="; ".join(shown)))
    if last is not None:
        rows.append(t(lang, "vote.silent", target=f"#{last}", seats=_seats(vote.silent)))
    return f"{head} {'; '.join(rows) or _seats(vote.candidates)}"
