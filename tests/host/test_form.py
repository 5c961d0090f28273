"""The FIIM protocol blank as a PDF, read back with pypdf: where each value of a played game landed.

The blank's boxes are at the millimetres of the rating site's own (mafiaratings include/fiim_form.php):
seat n's line starts 52.2 + 10.1·(n - 1) mm from the top, the four foul boxes 7.475 mm wide from
91.9 mm, the points at 119.9 mm and the extra points at 131.8 mm; voting block k starts at 17.5 + 25·(k - 1) mm.
"""

from __future__ import annotations

import dataclasses
import io
from datetime import UTC, datetime
from typing import Any

import pytest
from pypdf import PdfReader

from engine import GEORGIAN, DeclareDraw, seat_points
from engine.scoring import protocol_version
from mafiabot.core.protocol import Protest
from mafiabot.host.pictures.form import FormGame, draw_form
from tests.core.test_federation import car_crash_and_fouls, stored, technical_fouls, vote_kill_and_best_move
from tests.engine.helpers import TWELVE, start

MM = 72 / 25.4
PAGE_HEIGHT = 210.0


def placed(data: bytes, page: int) -> list[tuple[str, float, float]]:
    """Every piece of text on ``page`` with where it starts, in millimetres from the top left."""
    out: list[tuple[str, float, float]] = []

    def visit(text: str, _cm: object, tm: list[float], _font: object, _size: object) -> None:
        if text.strip():
            out.append((text.strip(), tm[4] / MM, PAGE_HEIGHT - tm[5] / MM))

    PdfReader(io.BytesIO(data)).pages[page].extract_text(visitor_text=visit)
    return out


def in_box(items: list[tuple[str, float, float]], x0: float, x1: float, y0: float, y1: float) -> list[str]:
    return [text for text, x, y in items if x0 <= x < x1 and y0 <= y < y1]


def seat_row(seat: int) -> tuple[float, float]:
    top = 52.2 + 10.1 * (seat - 1)
    return top, top + 10.1


def form_of(make: object, language: str = "ru") -> bytes:
    game = make()  # type: ignore[operator]
    _record, protocol = stored(game)
    points = seat_points(game.state, protocol_version(game.ruleset))
    return draw_form([FormGame(protocol, points, tournament="Кубок", stage="Тур 2", table=3, number=7,  # noqa: RUF001
                               judge="Анна")], language)


def test_the_seats_fouls_and_points_of_a_played_game_are_in_their_boxes() -> None:
    data = form_of(car_crash_and_fouls)
    items = placed(data, 0)
    top, bottom = seat_row(8)  # removed for four fouls
    assert in_box(items, 91.9, 91.9 + 4 * 7.475, top, bottom) == ["✓"] * 4
    assert in_box(items, 119.9, 131.8, top, bottom) == ["0"]
    assert in_box(items, 131.8, 145.0, top, bottom) == ["-0,5"]
    top, bottom = seat_row(1)  # the Don, on the winning side
    assert in_box(items, 25.9, 79.9, top, bottom) == ["Игрок 1"]
    assert in_box(items, 79.9, 90.0, top, bottom) == ["Д"]
    assert in_box(items, 119.9, 131.8, top, bottom) == ["1"]
    assert in_box(items, 10.0, 18.0, *seat_row(2)) == ["*"]  # left the table
    assert in_box(items, 10.0, 18.0, *seat_row(1)) == []


def test_the_votes_revote_and_lift_vote_fill_the_first_voting_block() -> None:
    items = placed(form_of(car_crash_and_fouls), 0)
    block = 17.5 + 5.0  # block 1's nominee row
    assert in_box(items, 167.6, 280.0, block, block + 5.0) == ["(2)", "(7)", "Всех?"]  # noqa: RUF001
    assert in_box(items, 167.6, 280.0, block + 5.0, block + 10.0) == ["5", "5", "6/10"]
    assert in_box(items, 167.6, 280.0, block + 10.0, block + 15.0) == ["5", "5"]
    assert in_box(items, 167.6, 280.0, block + 25.0, block + 30.0) == ["(9)"]  # day 2: the lone nominee


def test_the_header_winner_best_move_and_the_second_page() -> None:
    data = form_of(vote_kill_and_best_move)
    assert len(PdfReader(io.BytesIO(data)).pages) == 2
    items = placed(data, 0)
    assert in_box(items, 43.0, 145.0, 17.4, 25.1) == ["Кубок"]
    assert in_box(items, 103.0, 112.0, 32.8, 40.5) == ["3"]  # centred in the box after "TABLE №"
    assert in_box(items, 134.0, 143.0, 32.8, 40.5) == ["7"]
    assert in_box(items, 80.0, 145.0, 157.8, 165.2) == ["красные"]
    assert in_box(items, 55.0, 100.0, 165.2, 175.3) == ["1", "3", "6"]
    assert in_box(items, 130.0, 145.0, 165.2, 175.3) == ["5"]
    back = [text for text, _x, _y in placed(data, 1)]
    assert "Игрок 4: +0,4 — found the Don" in back
    assert "Игрок 5: +0,25 за лучший ход" in back


@pytest.mark.parametrize(("language", "word"), [("en", "WINNING TEAM"), ("ka", "გამარჯვებული გუნდი")])
def test_the_blank_speaks_the_table_language_with_its_font_embedded(language: str, word: str) -> None:
    data = form_of(vote_kill_and_best_move, language)
    assert word in [text for text, _x, _y in placed(data, 0)]
    fonts: Any = PdfReader(io.BytesIO(data)).pages[0]["/Resources"]
    for font in fonts["/Font"].values():  # every font is a TrueType embedded in the file
        descendant = font.get_object()["/DescendantFonts"][0].get_object()
        assert "/FontFile2" in descendant["/FontDescriptor"]


def test_a_tournament_is_one_file_two_pages_a_game() -> None:
    games = []
    for make in (vote_kill_and_best_move, car_crash_and_fouls):
        game = make()
        games.append(FormGame(stored(game)[1], seat_points(game.state, protocol_version(game.ruleset))))
    assert len(PdfReader(io.BytesIO(draw_form(games, "en"))).pages) == 4


def test_a_twelve_seat_table_shares_the_ten_lines_and_names_its_cards() -> None:
    game = start(GEORGIAN, TWELVE)  # D#1 M#2 M#3 detective #4 doctor #5 maniac #6
    game.apply(DeclareDraw())
    data = draw_form([FormGame(stored(game)[1])], "ru")
    items = placed(data, 0)
    row = 10 * 10.1 / 12
    assert [text for text, x, y in items if 18.0 <= x < 25.9 and 52.2 <= y < 52.2 + 10 * 10.1] == [
        str(seat) for seat in range(1, 13)]
    assert in_box(items, 79.9, 90.0, 52.2, 52.2 + 6 * row) == ["Д", "М", "М", "Дет", "Док", "Ман"]  # noqa: RUF001
    assert in_box(items, 25.9, 79.9, 52.2 + 11 * row, 52.2 + 12 * row) == ["Игрок 12"]


PROTEST = ("On day 1 the judge counted the vote before player 9 had lowered his hand, and the revote that "
           "followed sent away the wrong player; I ask the result to be reviewed")


def test_a_protest_fills_the_protest_line_and_its_text_the_second_page() -> None:
    _record, protocol = stored(vote_kill_and_best_move())
    protest = Protest(id=3, game_id=1, user_id=106, seat=6, text=PROTEST, filed_at=datetime(2026, 12, 1, tzinfo=UTC),
                      during_game=False, status="rejected", note="the hand was down in time")
    data = draw_form([FormGame(dataclasses.replace(protocol, protests=(protest,)))], "en")
    assert in_box(placed(data, 0), 40.0, 145.0, 175.3, 182.4) == ["Player 6: rejected"]
    back = " ".join(text for text, _x, y in placed(data, 1) if y > 140.0)
    assert back == f"3. #6 Игрок 6 (after the game): {PROTEST} — rejected · note: the hand was down in time"


def test_technical_fouls_are_noted_apart_from_the_foul_boxes() -> None:
    data = form_of(technical_fouls)
    items = placed(data, 0)
    assert in_box(items, 91.9, 91.9 + 4 * 7.475, *seat_row(8)) == []  # the boxes are for ordinary fouls
    assert in_box(items, 91.9, 91.9 + 4 * 7.475, *seat_row(9)) == ["✓"]
    back = [text for text, _x, _y in placed(data, 1)]
    assert "Игрок 8: 2 технических фола (считаются отдельно от фолов в бланке)" in back
    assert "Игрок 9: 1 технический фол (считается отдельно от фолов в бланке)" in back
    assert "Игрок 8: -0,5 за удаление из-за стола" in back
