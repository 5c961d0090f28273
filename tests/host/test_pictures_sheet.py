"""The protocol sheet, read back: one row per seat tinted by its side, the game below, the same bytes each time."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from PIL import Image

from engine import CLASSIC, FIIM, GEORGIAN, Event, Game, GameView, Ruleset
from engine import events as ev
from mafiabot.core.protocol import ExtraPoints, GameHeader, Moment, Protest, Protocol, Tally, VoteRound, build_protocol
from mafiabot.core.records import SeatInfo
from mafiabot.host.i18n import POINT_PLACES, decimal_text, t
from mafiabot.host.pictures.fonts import font, has_glyph
from mafiabot.host.pictures.sheet import (
    CELL_PAD,
    HEADING_TEXT,
    LABEL_WIDTH,
    LINE,
    MARGIN,
    MIN_TEXT,
    ROW,
    TEAM_TINTS,
    WIDTH,
    WIDTHS,
    Fitted,
    SheetInput,
    alt_text,
    draw_sheet,
    fit_cell,
    game_blocks,
    line_height,
    seat_cells,
    vote_line,
)
from mafiabot.host.render import Route, TableView, render
from tests.engine.helpers import random_game

NAMES = ("Вася Пупкин", "ნიკოლოზ ბარათაშვილი", "Alice", "🔥Dmitry🔥", "Ekaterina Velikaya-Dolgorukaya", "Гио",
         "Tamar", "Лёша", "Nino", "Sandro", "Маша", "Zurab")
SEATS_TOP = MARGIN + 110
"""Where the seat table's heading row starts."""


def _protocol(rules: Ruleset, seed: int) -> tuple[Game, Protocol]:
    game = random_game(rules, seed)
    assert game.over
    seats = [SeatInfo(seat, 100 + seat, NAMES[seat - 1]) for seat in range(1, game.state.players + 1)]
    header = GameHeader(id=42, ruleset_name=rules.name, ruleset=rules, status="finished")
    return game, build_protocol(header, seats, game.events, game.points())


def _image(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    return image.convert("RGB")


@pytest.mark.parametrize(("rules", "language"), [(CLASSIC, "en"), (GEORGIAN, "ka"), (FIIM, "ru")])
def test_the_sheet_has_a_row_per_seat_tinted_by_its_side(rules: Ruleset, language: str) -> None:
    game, protocol = _protocol(rules, 7)
    image = _image(draw_sheet(SheetInput(protocol, language)))
    assert image.width == WIDTH
    for index, seat in enumerate(protocol.seats):
        y = SEATS_TOP + ROW * (index + 1) + ROW // 2
        assert seat.team is not None
        assert image.getpixel((MARGIN + 3, y)) == TEAM_TINTS[seat.team], seat
        assert seat.team == game.state.role(seat.seat).team.value
    below = SEATS_TOP + ROW * (len(protocol.seats) + 1) + 4
    assert image.getpixel((MARGIN + 3, below)) not in TEAM_TINTS.values()  # no row past the last seat


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_the_sheet_names_every_role_and_every_day(language: str) -> None:
    game, protocol = _protocol(GEORGIAN, 11)
    sheet = SheetInput(protocol, language)
    rows = [seat_cells(sheet, seat) for seat in protocol.seats]
    for seat, row in zip(protocol.seats, rows, strict=True):
        role = GEORGIAN.card_name(game.state.role(seat.seat))
        assert row[2] == t(language, f"role.{role}")
        assert row[3] == str(game.state.foul_count(seat.seat))
    labels = [label for label, _lines in game_blocks(sheet)]
    for number in range(1, game.state.day + 1):
        assert t(language, "card.day", day=number) in labels
    assert all(has_glyph(c) for row in rows for cell in row for c in cell)
    assert all(has_glyph(c) for _label, lines in game_blocks(sheet) for line in lines for c in line)


def test_the_sheet_is_the_same_bytes_each_time_and_grows_with_the_game() -> None:
    _game, short = _protocol(CLASSIC, 7)
    first = draw_sheet(SheetInput(short, "ka"))
    assert first == draw_sheet(SheetInput(short, "ka"))
    heights = {len(game_blocks(SheetInput(p, "en"))): _image(draw_sheet(SheetInput(p, "en"))).height
               for p in (_protocol(CLASSIC, seed)[1] for seed in (3, 7, 11))}
    ordered = [heights[k] for k in sorted(heights)]
    assert ordered == sorted(ordered)


def test_the_alt_text_says_the_result_in_the_tables_language() -> None:
    _game, protocol = _protocol(CLASSIC, 7)
    assert protocol.result is not None
    for language in ("en", "ru", "ka"):
        text = alt_text(SheetInput(protocol, language))
        assert t(language, f"history.result.{protocol.result}") in text
        assert len(text) <= 1024


@dataclass(frozen=True)
class _Game:
    state: GameView
    events: Sequence[Event]
    scores: Mapping[int, Decimal]

    def points(self) -> Mapping[int, Decimal]:
        return self.scores


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_the_end_summary_carries_the_sheet(language: str) -> None:
    game = random_game(CLASSIC, 7)
    names = tuple(f"\\*P{seat}\\*" for seat in range(1, game.state.players + 1))  # as the presenter escapes them
    seats = tuple(range(101, 101 + len(names)))
    view = TableView(id=42, language=language, ruleset=game.ruleset, seats=seats, names=names,
                     game=_Game(game.state, game.events, game.points()), deadline=None)
    ended = next(i for i, e in enumerate(game.events) if isinstance(e, ev.GameEnded))
    drawn = render(view, game.events[ended:], first=ended)
    sheets = [(m, p) for m in drawn.messages for p in m.pictures]
    assert [m.route for m, _p in sheets] == [Route.CHANNEL, Route.RESULTS]  # the results channel's copy too
    assert sheets[0][1] == sheets[1][1]
    message, picture = sheets[0]
    assert t(language, "end.roles_title") in message.text
    assert picture.filename == "protocol-42.png"
    assert picture.description == alt_text(SheetInput(_protocol(CLASSIC, 7)[1], language))
    assert picture.draw() == picture.draw()
    assert _image(picture.draw()).width == WIDTH


LONG_GAME = 15
"""The highest day or night number the labels are drawn with: a long game runs to about night 8."""
LONG_NAME = "Ekaterina Velikaya-Dolgorukaya-Шереметева"[:32]
"""A member's name as long as Discord allows (32 characters)."""
ROLES = ("citizen", "sheriff", "detective", "doctor", "don", "mafia", "maniac")
CAUSES = ("killed", "voted_out", "lifted", "fouls", "oaths", "technical_fouls", "disqualified", "left")


def _column_labels(language: str) -> dict[int, list[str]]:
    """Every label each column of the seat table may hold, with its heading, in ``language``."""
    moments = [t(language, f"protocol.moment.{kind}", number=n) for kind in ("day", "night") for n in (1, 9, LONG_GAME)]
    return {
        0: ["#", "10", "12"],
        1: [t(language, "sheet.col.player"), LONG_NAME, "Ш" * 32],
        2: [t(language, "sheet.col.role"), *(t(language, f"role.{role}") for role in ROLES)],
        3: [t(language, "sheet.col.fouls")],
        4: [t(language, "sheet.col.left"), *(t(language, "protocol.left", cause=t(language, f"protocol.cause.{c}"),
                                                 moment=m) for c in CAUSES for m in moments)],
        5: [t(language, "sheet.col.result"), *(t(language, f"protocol.{r}") for r in ("won", "drew", "lost"))],
        6: [t(language, "sheet.col.points"),
            *(decimal_text(language, Decimal(v), POINT_PLACES) for v in ("-12.75", "12.75", "0.5"))],
    }


def _assert_whole(text: str, cell: Fitted, room: int, *, bold: bool, height: int) -> None:
    face = font(cell.size, bold=bold)
    assert cell.size >= MIN_TEXT, (text, cell)
    assert not cell.cut, (text, cell)
    assert "".join(cell.lines).replace(" ", "") == text.replace(" ", ""), (text, cell)
    for line in cell.lines:
        assert face.getlength(line) <= room, (text, line, face.getlength(line), room)
    assert len(cell.lines) * line_height(cell.size) <= height, (text, cell)


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_no_label_of_the_seat_table_is_clipped(language: str) -> None:
    for column, labels in _column_labels(language).items():
        room = WIDTHS[column] - 2 * CELL_PAD
        heading, *cells = labels
        _assert_whole(heading, fit_cell(heading, room, bold=True, size=HEADING_TEXT), room, bold=True, height=ROW)
        for label in cells:
            bold = column == 0
            _assert_whole(label, fit_cell(label, room, bold=bold), room, bold=bold, height=ROW)


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_no_moment_label_of_the_game_section_is_clipped(language: str) -> None:
    labels = [t(language, "protocol.extra_title").rstrip(":"),
              *(t(language, key, **{field: n}) for key, field in (("card.day", "day"), ("card.night", "night"))
                for n in (1, 9, LONG_GAME))]
    room = LABEL_WIDTH - 2 * CELL_PAD
    for label in labels:
        _assert_whole(label, fit_cell(label, room, bold=True, height=2 * LINE), room, bold=True, height=2 * LINE)


def _ended(language: str, protocol: Protocol) -> Image.Image:
    return _image(draw_sheet(SheetInput(protocol, language)))


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_a_silent_vote_reads_as_in_the_channel(language: str) -> None:
    """The last candidate's row says who kept silent, as the channel's tally does, not a bare dash."""
    vote = VoteRound("main", (3, 7), (Tally(3, (1, 2), 2), Tally(7, (), 3)), silent=(4, 5, 6), closed=True)
    line = vote_line(language, vote)
    silent = t(language, "vote.result_silent", seats="#4, #5, #6")
    assert t(language, "vote.result_line", target="#7", count=3, voters=silent) in line
    assert "(—)" not in line
    assert t(language, "vote.result_line", target="#3", count=2, voters="#1, #2") in line


@pytest.mark.parametrize(("language", "written"), [("en", "+0.50"), ("ru", "+0,50"), ("ka", "+0,50")])
def test_extra_points_are_written_the_languages_way(language: str, written: str) -> None:
    _game, protocol = _protocol(CLASSIC, 7)
    extra = ExtraPoints(2, Decimal("0.5"), "best speech", Moment("day", 2))
    blocks = game_blocks(SheetInput(dataclasses.replace(protocol, extra_points=(extra,)), language))
    label, lines = blocks[-1]
    assert label == t(language, "protocol.extra_title").rstrip(":")
    assert f": {written} — " in lines[0]
    assert _ended(language, dataclasses.replace(protocol, extra_points=(extra,))).width == WIDTH
@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_the_sheet_keeps_each_protest_with_its_ruling_and_note(language: str) -> None:
    _game, protocol = _protocol(CLASSIC, 7)
    at = datetime(2026, 12, 4, 20, 0, tzinfo=UTC)
    protests = (Protest(1, 42, 103, 3, "Noise at night", at, during_game=True, status="upheld", note="Foul taken back"),
                Protest(2, 42, 105, 5, "Too early", at, during_game=False))
    with_protests = dataclasses.replace(protocol, protests=protests)
    blocks = dict(game_blocks(SheetInput(with_protests, language)))
    lines = blocks[t(language, "protocol.protests_title").rstrip(":")]
    assert len(lines) == 2
    assert "Noise at night" in lines[0]
    assert t(language, "protest.status.upheld") in lines[0]
    assert "Foul taken back" in lines[0]
    assert t(language, "protest.status.open") in lines[1]
    assert t(language, "protocol.protests_title").rstrip(":") not in dict(game_blocks(SheetInput(protocol, language)))
    taller = _image(draw_sheet(SheetInput(with_protests, language))).height
    assert taller > _image(draw_sheet(SheetInput(protocol, language))).height
