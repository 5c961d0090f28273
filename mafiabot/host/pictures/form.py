"""The FIIM protocol blank, filled in: the judges' paper record of a game as a printable A4 PDF.

The layout is the federation's blank as the rating site prints it (mafiaratings'
include/fiim_form.php): landscape A4, on the first page the tournament, its stage, the date, the
table and game numbers, one line per seat (role, four foul boxes, points, extra points), the
winning team, the best move, the protest (who filed it and the ruling), the judge's signature, and seven
voting blocks (nominees, votes, revote); on the second page the extra points and penalties explained
(technical fouls among them: the blank's four foul boxes are the ordinary fouls') and the protests in
full, with the ruling's note. A
tournament is one file, two pages per game in order. The words are the catalog's, in the table's
language; the typeface is the DejaVu Sans shipped with the pictures (Latin, Cyrillic, Georgian),
embedded in the file. Drawn from the protocol and the engine's points, never from the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from importlib.resources import as_file, files

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from engine import Role, SeatPoints
from mafiabot.core.protocol import Day, Protocol
from mafiabot.host.i18n import decimal_text, t
from mafiabot.host.pictures.fonts import BOLD, REGULAR, drawable

FAMILY = "DejaVu"
INK = (0, 0, 0)
HINT = (128, 128, 128)
FILLED = (0, 0, 128)
"""The filled-in values are blue, as a judge's pen on the printed blank."""
LEFT = 18.0
BLANK_WIDTH = 127.0
SEAT_TOP = 52.2
SEAT_ROW = 10.1
SEAT_AREA = 10 * SEAT_ROW
"""The seat lines' height: ten lines on the paper blank; a larger table's lines share it."""
FOUL_BOX = 7.475
VOTE_LEFT = 157.2
VOTE_TOP = 17.5
VOTE_BLOCK = 25.0
VOTE_COLUMN = 10.2
VOTE_COLUMNS = 11
VOTE_BLOCKS = 7
ROLE_LETTERS = ("sheriff", "detective", "doctor", "mafia", "don", "maniac")
"""The cards the role column names (``Ruleset.card_name``); a citizen's box stays empty, as on the paper blank."""
TEAMS = ("red", "black", "draw")
"""The results the winner's box names (an abandoned game has none)."""
MIN_FONT = 5.0
FULL = "LTRB"
"""A box on every side."""
LINES_EXTRA = 14
LINES_PROTEST = 7


@dataclass(frozen=True)
class FormGame:
    """One game for the blank: its protocol, the engine's points, and where it was played."""

    protocol: Protocol
    points: Sequence[SeatPoints] = ()
    tournament: str = ""
    stage: str = ""
    table: int | None = None
    number: int | None = None
    judge: str = ""


class _Form:
    """One PDF of blanks; ``add`` fills two pages per game."""

    def __init__(self, language: str) -> None:
        self.lang = language
        self.size = 11.0
        self.rows = 10
        self.row = SEAT_ROW
        self.pdf = FPDF(orientation="L", unit="mm", format="A4")
        self.pdf.set_auto_page_break(auto=False)
        self.pdf.set_creation_date(datetime(2000, 1, 1, tzinfo=UTC))
        data = files("mafiabot.host.pictures") / "data"
        for style, name in (("", REGULAR), ("B", BOLD)):
            with as_file(data / name) as path:
                self.pdf.add_font(FAMILY, style, str(path))

    def _t(self, key: str, **fields: object) -> str:
        return t(self.lang, key, **fields)

    def _font(self, size: float, *, bold: bool = False) -> None:
        self.size = size
        self.pdf.set_font(FAMILY, "B" if bold else "", size)

    def _color(self, rgb: tuple[int, int, int]) -> None:
        self.pdf.set_text_color(*rgb)

    def _cell(self, w: float, h: float, text: str = "", border: str = "", *, align: str = "L",
              down: bool = False) -> None:
        """A cell; ``down`` puts the next one below it (at its left edge), else to its right.

        A character the typeface lacks (an emoji in a name) is left out rather than printed as a box.
        """
        pdf = self.pdf
        text = drawable(text) if text.strip() else text
        nxt = (XPos.LEFT, YPos.NEXT) if down else (XPos.RIGHT, YPos.TOP)
        size = pdf.font_size_pt
        while size > MIN_FONT and pdf.get_string_width(text) > w - 2 * pdf.c_margin:
            size -= 0.5  # a longer word in another language shrinks to its box rather than spill over
            pdf.set_font_size(size)
        pdf.cell(w, h, text, border=border or 0, align=align, new_x=nxt[0], new_y=nxt[1])
        pdf.set_font_size(self.size)

    def _hinted(self, w: float, h: float, hint: str, border: str) -> None:
        self._color(HINT)
        self._cell(w, h, hint, border)
        self._color(INK)

    # -- the first page ---------------------------------------------------------------------------------------

    def header(self) -> None:
        pdf = self.pdf
        self._font(11, bold=True)
        pdf.set_xy(LEFT, 17.4)
        self._cell(BLANK_WIDTH, 7.7, self._t("form.tournament"), FULL, down=True)
        self._cell(BLANK_WIDTH, 7.7, self._t("form.stage"), FULL, down=True)
        self._cell(13.5, 7.7, self._t("form.date"), "LTB")
        self._hinted(50.5, 7.7, "____ / _____ / _________", "RTB")
        self._cell(18.5, 7.7, self._t("form.table"), "TB")
        self._hinted(13.5, 7.7, "____", "RTB")
        self._cell(17.5, 7.7, self._t("form.game"), "TB")
        self._hinted(13.5, 7.7, "____", "RTB")

    def seats(self) -> None:
        pdf = self.pdf
        pdf.set_xy(LEFT, 45.3)
        self._font(11)
        self._cell(61.9, 6.9, self._t("form.player"), FULL, align="C")
        self._font(7)
        self._cell(10.1, 6.9, self._t("form.role"), FULL, align="C")
        self._font(11)
        self._cell(4 * FOUL_BOX, 6.9, self._t("form.fouls"), FULL, align="C")
        self._font(7)
        self._cell(11.9, 6.9, self._t("form.points"), FULL, align="C")
        pdf.multi_cell(13.2, 3.45, self._t("form.extra"), border=1, align="C")
        self._font(10, bold=True)
        for seat in range(1, self.rows + 1):
            pdf.set_xy(LEFT, SEAT_TOP + (seat - 1) * self.row)
            self._cell(7.9, self.row, str(seat), FULL, align="C")
            for width in (54.0, 10.1, FOUL_BOX, FOUL_BOX, FOUL_BOX, FOUL_BOX, 11.9, 13.2):
                self._cell(width, self.row, "", FULL)

    def footer(self) -> None:
        pdf = self.pdf
        self._font(11, bold=True)
        pdf.set_xy(LEFT, 157.8)
        self._cell(BLANK_WIDTH, 7.4, self._t("form.winner"), FULL, down=True)
        self._cell(34.4, SEAT_ROW, self._t("form.best_move"), "LTB")
        self._hinted(55.1, SEAT_ROW, "____ , ____ , ____", "TB")
        self._cell(19.9, SEAT_ROW, self._t("form.player_number"), "TB")
        self._hinted(17.6, SEAT_ROW, "_____", "RTB")
        pdf.set_xy(LEFT, 157.8 + 7.4 + SEAT_ROW)
        self._cell(BLANK_WIDTH, 7.1, self._t("form.protest"), FULL, down=True)
        self._cell(16.4, SEAT_ROW, self._t("form.judge"), "LTB")
        self._hinted(110.6, SEAT_ROW, "_______________________________ / _________________", "RTB")

    def vote_blocks(self) -> None:
        pdf = self.pdf
        for block in range(VOTE_BLOCKS):
            top = VOTE_TOP + block * VOTE_BLOCK
            self._font(11)
            pdf.set_xy(VOTE_LEFT, top)
            title = self._t("form.voting", number=block + 1)
            self._cell(VOTE_COLUMN * VOTE_COLUMNS + 10.4, 5.0, title, FULL, align="C", down=True)
            self._font(7)
            self._cell(10.4, 5.0, self._t("form.nominee"), FULL, align="C", down=True)
            self._cell(10.4, 5.0, self._t("form.votes"), FULL, align="C", down=True)
            pdf.multi_cell(10.4, 5.0, self._t("form.revote"), border=1, align="C")
            for column in range(VOTE_COLUMNS):
                pdf.set_xy(VOTE_LEFT + 10.4 + column * VOTE_COLUMN, top + 5.0)
                for _row in range(4):
                    self._cell(VOTE_COLUMN, 5.0, "", FULL, down=True)

    # -- the game's values ------------------------------------------------------------------------------------

    def values(self, game: FormGame) -> None:
        pdf, protocol = self.pdf, game.protocol
        self._color(FILLED)
        self._font(11)
        pdf.set_xy(43.0, 17.4)
        self._cell(102, 7.7, game.tournament, align="C")
        pdf.set_xy(65.0, 25.1)
        self._cell(80, 7.7, game.stage, align="C")
        when = protocol.game.finished_at or protocol.game.created_at
        if when is not None:
            for x, w, text in ((33.0, 8.5, f"{when:%d}"), (45.0, 8.5, f"{when:%m}"), (59.0, 18.5, f"{when:%Y}")):
                pdf.set_xy(x, 32.8)
                self._cell(w, 7.7, text)
        number = game.number if game.number is not None else protocol.game.id
        for x, value in ((LEFT + 82.5, game.table), (LEFT + 113.5, number)):
            if value is not None:
                pdf.set_xy(x, 32.8)
                self._cell(13.5, 7.7, str(value), align="C")
        self._seat_values(game)
        self._result_values(game)
        self._votes(protocol)
        self._color(INK)

    def _seat_values(self, game: FormGame) -> None:
        pdf = self.pdf
        points = {p.seat: p for p in game.points}
        rules = game.protocol.rules()
        for seat in game.protocol.seats:
            y = SEAT_TOP + (seat.seat - 1) * self.row
            if seat.departure is not None:
                pdf.set_xy(LEFT - 4.0, y)
                self._cell(4, self.row, "*")
            pdf.set_xy(LEFT + 7.9, y)
            self._font(10)
            self._cell(54.0, self.row, _fit(pdf, seat.display_name, 53.0))
            card = rules.card_name(Role(seat.role)) if seat.role else ""
            self._cell(10.1, self.row, self._t(f"form.role.{card}") if card in ROLE_LETTERS else "", align="C")
            for _foul in range(min(seat.fouls, 4)):
                self._cell(FOUL_BOX, self.row, "✓", align="C")
            line = points.get(seat.seat)
            if line is not None:
                pdf.set_x(LEFT + 101.9)
                self._cell(11.9, self.row, _points(self.lang, line.win), align="C")
                extra = line.total - line.win
                self._cell(13.2, self.row, _signed(self.lang, extra) if extra else "", align="C")

    def _result_values(self, game: FormGame) -> None:
        pdf, protocol = self.pdf, game.protocol
        self._font(11)
        pdf.set_xy(80.0, 157.8)
        if protocol.result in TEAMS:
            self._cell(65, 7.4, self._t(f"form.team.{protocol.result}"), align="C")
        best = next((n.best_move for n in protocol.nights if n.best_move is not None), None)
        if best is not None:
            for i, target in enumerate(best.targets[:3]):
                pdf.set_xy(54.0 + 11.5 * i, 165.2)
                self._cell(8.0, SEAT_ROW, str(target), align="C")
            pdf.set_xy(128.5, 165.2)
            self._cell(10.5, SEAT_ROW, str(best.seat), align="C")
        if protocol.protests:
            line = "; ".join(self._t("form.protest_line", seat=p.seat, status=self._t(f"protest.status.{p.status}"))
                             for p in protocol.protests)
            pdf.set_xy(42.0, 175.3)
            self._cell(103.0, 7.1, _fit(pdf, line, 102.0), align="C")
        pdf.set_xy(35.0, 182.4)
        self._cell(66, SEAT_ROW, _fit(pdf, game.judge, 65.0), align="C")

    def _votes(self, protocol: Protocol) -> None:
        self._font(9)
        for day in protocol.days:
            if 1 <= day.number <= VOTE_BLOCKS:
                self._vote_block(day, VOTE_TOP + 5.0 + (day.number - 1) * VOTE_BLOCK)

    def _vote_columns(self, day: Day) -> list[tuple[str, list[str]]]:
        """Each nominee's column (voted out in brackets) with its counts, and the lift vote's yes of all."""
        rounds = [v for v in day.votes if v.closed and v.tally]
        counts: list[dict[int, int]] = [{row.candidate: row.total for row in v.tally} for v in rounds[:2]]
        columns: list[tuple[str, list[str]]] = []
        for seat in list(dict.fromkeys(n.target for n in day.nominations))[:VOTE_COLUMNS]:
            label = f"({seat})" if seat in day.voted_out else str(seat)
            columns.append((label, [str(c[seat]) if c.get(seat) else "" for c in counts]))
        if day.lift is not None and len(columns) < VOTE_COLUMNS:
            columns.append((self._t("form.lift"), [f"{len(day.lift.yes)}/{day.lift.alive}"]))
        return columns

    def _vote_block(self, day: Day, top: float) -> None:
        pdf = self.pdf
        for i, (label, cells) in enumerate(self._vote_columns(day)):
            pdf.set_xy(VOTE_LEFT + 10.4 + i * VOTE_COLUMN, top)
            self._cell(VOTE_COLUMN, 5.0, label, align="C", down=True)
            for text in cells:
                self._cell(VOTE_COLUMN, 5.0, text, align="C", down=True)

    # -- the second page --------------------------------------------------------------------------------------

    def back(self, game: FormGame | None) -> None:
        pdf = self.pdf
        pdf.add_page()
        for start, count in ((25.2, LINES_EXTRA), (148.7, LINES_PROTEST)):
            for i in range(count):
                pdf.line(9.9, start + 8 * i, 288.7, start + 8 * i)
        self._font(11)
        pdf.set_xy(9.9, 7.5)
        self._cell(278.8, 16, self._t("form.extra_title"), align="C")
        pdf.set_xy(9.9, 129.0)
        self._cell(278.8, 16, self._t("form.protest_title"), align="C")
        if game is None:
            return
        self._color(FILLED)
        self._font(10)
        for y, lines in ((18.5, self._explained(game)[:LINES_EXTRA]), (142.0, self._protests(game)[:LINES_PROTEST])):
            for i, text in enumerate(lines):
                pdf.set_xy(10.9, y + 8 * i)
                self._cell(276.8, 8, _fit(pdf, text, 276.0))
        self._color(INK)

    def _protests(self, game: FormGame) -> list[str]:
        """Each protest in full (who, when, the text, the ruling and its note), wrapped to the ruled lines."""
        names = {s.seat: s.display_name for s in game.protocol.seats}
        lines: list[str] = []
        for p in game.protocol.protests:
            text = self._t("protocol.protest", id=p.id, when=self._t(
                "protocol.protest.during" if p.during_game else "protocol.protest.after"),
                player=self._t("seat.label", seat=p.seat, name=names.get(p.seat, "")).strip(),
                text=p.text, status=self._t(f"protest.status.{p.status}"))
            if p.note:
                text += " · " + self._t("protocol.protest.note", note=p.note)
            wrapped = self.pdf.multi_cell(276.0, 8, drawable(text), dry_run=True, output="LINES")
            lines += wrapped if isinstance(wrapped, list) else [text]
        return lines

    def _explained(self, game: FormGame) -> list[str]:
        """The extra points and penalties, one line each, and the technical fouls the foul boxes do not hold."""
        lines = []
        for seat in game.protocol.seats:
            if seat.technical:
                lines.append(self._t("form.technical_line", seat=seat.seat, count=seat.technical))
        for x in game.protocol.extra_points:
            lines.append(self._t("form.extra_line", seat=x.seat, value=_signed(self.lang, x.value), reason=x.reason))
        for p in game.points:
            if p.best_move:
                lines.append(self._t("form.best_move_line", seat=p.seat, value=_signed(self.lang, p.best_move)))
            if p.penalty:
                lines.append(self._t("form.penalty_line", seat=p.seat, value=_signed(self.lang, p.penalty)))
        return lines

    def add(self, game: FormGame | None) -> None:
        self.rows = max(10, len(game.protocol.seats)) if game is not None else 10
        self.row = SEAT_AREA / self.rows
        self.pdf.add_page()
        self.header()
        self.seats()
        self.footer()
        self.vote_blocks()
        if game is not None:
            self.values(game)
        self.back(game)

    def output(self) -> bytes:
        return bytes(self.pdf.output())


def _points(lang: str, value: Decimal, *, signed: bool = False) -> str:
    """A point figure with as many decimals as it has (``1``, ``0,3``, ``-0,25`` in Russian)."""
    exponent = value.normalize().as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    return decimal_text(lang, value, places, signed=signed)


def _signed(lang: str, value: Decimal) -> str:
    return _points(lang, value, signed=True)


def _fit(pdf: FPDF, text: str, width: float) -> str:
    """``text`` cut with an ellipsis to fit ``width`` millimetres in the current font."""
    if pdf.get_string_width(text) <= width:
        return text
    while text and pdf.get_string_width(text + "…") > width:
        text = text[:-1]
    return text + "…"


def draw_form(games: Sequence[FormGame], language: str) -> bytes:
    """The filled blanks of ``games`` in order, two pages each, as PDF bytes (an empty blank for none)."""
    form = _Form(language)
    blanks: Sequence[FormGame | None] = games or [None]
    for game in blanks:
        form.add(game)
    return form.output()

