"""The table card, read back as an image: its size, its seats, out or alive, fouls, and the scripts drawn."""

from __future__ import annotations

import io
import tomllib
import typing
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from importlib.resources import files
from pathlib import Path

import pytest
from PIL import Image

from engine import Event, Game, GameState, GiveFoul, Phase
from engine.public import PublicTable, public_table
from mafiabot.host.i18n import catalog
from mafiabot.host.pictures import card
from mafiabot.host.pictures.card import (
    ALIVE_FILL,
    BACKGROUND,
    FOUL_MARK,
    FOUL_SLOT,
    FOUL_SLOTS,
    HEIGHT,
    OUT_FILL,
    SEAT_RADIUS,
    TECHNICAL_MARK,
    WIDTH,
    CardInput,
    draw_card,
    seat_centres,
)
from mafiabot.host.pictures.fonts import drawable, has_glyph
from mafiabot.host.render import TableView, picture_name, render, table_card
from mafiabot.host.sender import plain
from tests.engine.helpers import kill, play_day, start_table, to_day, to_speeches
from tests.engine.test_public import SECRET_TYPES, _field_types

NAMES = ("Вася Пупкин", "ნიკოლოზ ბარათაშვილი", "Alice", "🔥Dmitry🔥", "Ekaterina Velikaya-Dolgorukaya", "Гио",
         "Tamar", "Лёша", "Nino", "Sandro", "Маша", "Zurab")


def _played(seating: str = "DMMSCCCCCC") -> Game:
    game = start_table(seating)
    to_day(game, 1)
    game.apply(GiveFoul(seat=4))
    game.apply(GiveFoul(seat=4))
    game.apply(GiveFoul(seat=9))
    play_day(game, {2: 7, 5: 3}, {7: [1, 2, 3, 4, 5, 6]})
    kill(game, 10)
    to_speeches(game)
    return game


def _image(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    return image.convert("RGB")


def _fill_at(image: Image.Image, centre: tuple[int, int]) -> tuple[int, int, int]:
    """The seat circle's fill: inside its ring, left of its number, off its slash."""
    x, y = centre
    pixel = image.getpixel((x - SEAT_RADIUS + 12, y))
    assert isinstance(pixel, tuple)
    return pixel[0], pixel[1], pixel[2]


def _draw(table: PublicTable, language: str = "en", names: Sequence[str] = NAMES) -> Image.Image:
    return _image(draw_card(CardInput(table, tuple(names[:len(table.seats)]), language)))


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_the_card_shows_every_seat_out_or_alive_where_it_sits(language: str) -> None:
    table = public_table(_played().state)
    image = _draw(table, language)
    assert image.size == (WIDTH, HEIGHT) == (1280, 720)
    centres = seat_centres(len(table.seats))
    assert len(set(centres)) == 10
    for seat, centre in zip(table.seats, centres, strict=True):
        assert _fill_at(image, centre) == (ALIVE_FILL if seat.alive else OUT_FILL), seat
    assert [s.seat for s in table.seats if not s.alive] == [7, 10]


@pytest.mark.parametrize("count", [6, 10, 12])
def test_the_card_has_as_many_seat_circles_as_the_table_has_seats(count: int) -> None:
    game = start_table("DMS" + "C" * (count - 3))
    to_day(game, 1)
    image = _draw(public_table(game.state))
    centres = seat_centres(count)
    assert all(_fill_at(image, c) == ALIVE_FILL for c in centres)
    assert _fill_at(image, seat_centres(count + 1)[count // 2 + 1]) != ALIVE_FILL  # an extra seat is nowhere


def test_the_seats_keep_clear_of_each_other_and_of_the_edges() -> None:
    for count in range(6, 13):
        centres = seat_centres(count)
        for i, (x0, y0) in enumerate(centres):
            x1, y1 = centres[(i + 1) % count]
            assert ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 > 2 * SEAT_RADIUS + 40, count
            assert SEAT_RADIUS + 40 < x0 < WIDTH - SEAT_RADIUS - 40
            assert SEAT_RADIUS + 20 < y0 < HEIGHT - SEAT_RADIUS - 60


def test_each_seat_shows_its_fouls_as_lit_marks() -> None:
    table = public_table(_played().state)
    image = _draw(table)
    size, gap = 14, 8
    for seat, (x, y) in zip(table.seats, seat_centres(len(table.seats)), strict=True):
        left = x - (FOUL_SLOTS * size + (FOUL_SLOTS - 1) * gap) // 2
        marks = [image.getpixel((left + slot * (size + gap) + size // 2, y - SEAT_RADIUS - 16))
                 for slot in range(FOUL_SLOTS)]
        assert marks == [FOUL_MARK] * seat.fouls + [FOUL_SLOT] * (FOUL_SLOTS - seat.fouls), seat
    assert (table.seats[3].fouls, table.seats[8].fouls) == (2, 1)


def test_technical_fouls_are_drawn_apart_as_red_marks_after_the_four_slots() -> None:
    game = start_table("DMMSCCCCCC", technical_fouls=True)
    to_day(game, 1)
    game.apply(GiveFoul(seat=6, technical=True))
    game.apply(GiveFoul(seat=6))
    table = public_table(game.state)
    image = _draw(table)
    size, gap = 14, 8
    x, y = seat_centres(len(table.seats))[5]
    left = x - (FOUL_SLOTS * size + (FOUL_SLOTS - 1) * gap) // 2
    top = y - SEAT_RADIUS - 16
    slots = [image.getpixel((left + slot * (size + gap) + size // 2, top)) for slot in range(FOUL_SLOTS + 1)]
    assert slots[:FOUL_SLOTS] == [FOUL_MARK] + [FOUL_SLOT] * 3  # the ordinary foul alone lights a slot
    assert slots[FOUL_SLOTS] == TECHNICAL_MARK
    assert (table.seats[5].fouls, table.seats[5].technical) == (1, 1)


def test_the_same_table_draws_the_same_bytes() -> None:
    table = public_table(_played().state)
    assert draw_card(CardInput(table, NAMES[:10], "ka")) == draw_card(CardInput(table, NAMES[:10], "ka"))


def test_names_and_languages_change_the_picture() -> None:
    table = public_table(_played().state)
    drawn = {draw_card(CardInput(table, NAMES[:10], lang)) for lang in ("en", "ru", "ka")}
    drawn.add(draw_card(CardInput(table, tuple(f"P{s}" for s in range(1, 11)), "en")))
    assert len(drawn) == 4


# -- the scripts ---------------------------------------------------------------------------------------------


def test_the_font_tells_its_glyphs_from_the_box_it_draws_for_a_missing_one() -> None:
    assert all(has_glyph(c) for c in "aZжЩёქართულიაბგ#№—…·→")
    assert not has_glyph("🔥")
    assert not has_glyph("中")
    assert drawable("🔥Dmitry🔥  中 x") == "Dmitry x"


@pytest.mark.parametrize("language", ["ru", "ka", "en"])
def test_every_text_a_picture_draws_is_in_the_font(language: str) -> None:
    prefixes = ("card.", "sheet.", "protocol.", "phase.", "role.", "history.result.", "vote.", "end.check.",
                "check.result.", "morning.", "ruleset.", "seat.label")
    texts = []
    for key, value in catalog(language).items():
        if key.startswith(prefixes):
            texts += list(value.values()) if isinstance(value, Mapping) else [value]
    assert len(texts) > 100
    for text in texts:
        if any(c in text for c in "🏆🔪✋"):
            continue  # the emoji lines are the chat's, not the pictures'
        missing = {c for c in text if not has_glyph(c)}
        assert not missing, (language, text, missing)


def _ink(image: Image.Image, box: tuple[int, int, int, int]) -> int:
    """How many pixels in ``box`` differ from the background."""
    data, background = image.crop(box).tobytes(), bytes(BACKGROUND)
    return sum(1 for i in range(0, len(data), 3) if data[i:i + 3] != background)


def test_a_georgian_name_draws_its_letters_and_an_emoji_draws_nothing() -> None:
    table = public_table(_played().state)
    x, y = seat_centres(10)[1]
    box = (x - 70, y + SEAT_RADIUS + 4, x + 70, y + SEAT_RADIUS + 32)
    georgian = _draw(table, names=["x", "ნინო", *NAMES[2:10]])
    boxes = _draw(table, names=["x", "\uffff" * 4, *NAMES[2:10]])
    emoji = _draw(table, names=["x", "🔥🔥🔥🔥", *NAMES[2:10]])
    blank = _draw(table, names=["x", "", *NAMES[2:10]])
    assert _ink(georgian, box) > _ink(blank, box) + 50
    assert georgian.crop(box).tobytes() != boxes.crop(box).tobytes()
    assert emoji.tobytes() == blank.tobytes()


def test_a_long_name_is_cut_to_its_seat() -> None:
    assert card.short_name("Ekaterina Velikaya-Dolgorukaya").endswith("…")
    assert card.short_name("Alice") == "Alice"
    assert card.short_name("🔥") == ""


# -- secrecy: the card is drawn from what the table has seen, whatever the cards are ----------------------------


@dataclass(frozen=True)
class _Game:
    state: GameState
    events: Sequence[Event]

    def points(self) -> Mapping[int, Decimal]:
        return dict.fromkeys(range(1, self.state.players + 1), Decimal(0))


def _view(game: Game, language: str) -> TableView:
    return TableView(id=3, language=language, ruleset=game.ruleset, seats=tuple(range(101, 111)), names=NAMES[:10],
                     game=_Game(game.state, game.events), deadline=None)


def _cards(game: Game, language: str) -> list[bytes]:
    """Every card the renderer attaches over the game so far, drawn."""
    view = _view(game, language)
    drawn = [render(view, [event], first=index) for index, event in enumerate(game.events)]
    return [p.draw() for d in drawn for m in d.messages for p in m.pictures]


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_the_cards_are_the_same_bytes_whatever_the_hidden_cards(language: str) -> None:
    shown, hidden = _played("DMMSCCCCCC"), _played("CCSCMDCCMC")
    assert shown.state.roles != hidden.state.roles
    assert shown.events != hidden.events
    cards = _cards(shown, language)
    assert len(cards) == 2  # the day's vote and the morning after the night
    assert cards == _cards(hidden, language)


def test_a_card_shows_the_table_as_its_command_left_it_though_the_game_went_on() -> None:
    game = _played()
    upto = len(game.events)
    before = table_card(_view(game, "en"), upto, "morning").draw()
    play_day(game)
    assert game.state.phase is not Phase.SPEECHES or game.state.day != 2
    assert table_card(_view(game, "en"), upto, "morning").draw() == before


def test_a_picture_draws_a_name_as_typed_not_as_escaped_for_a_message() -> None:
    for name in ("*star* _x_ @everyone", "back\\slash", "~~gone~~ | > quote", "Вася_Пупкин"):
        assert picture_name(plain(name, 64)) == name


def test_cards_drawn_in_several_threads_at_once_are_the_cards_drawn_one_by_one() -> None:
    tables = [public_table(_played(seating).state) for seating in ("DMMSCCCCCC", "CCSCMDCCMC")]
    inputs = [CardInput(table, NAMES[:10], lang) for table in tables for lang in ("en", "ru", "ka")] * 3
    one_by_one = [draw_card(i) for i in inputs]
    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(draw_card, inputs)) == one_by_one


def test_the_typeface_and_its_licence_ship_with_the_package() -> None:
    data = files("mafiabot.host.pictures") / "data"
    assert (data / "DejaVuSans.ttf").read_bytes()[:4] == b"\x00\x01\x00\x00"
    assert (data / "DejaVuSans-Bold.ttf").is_file()
    assert "Bitstream Vera" in (data / "LICENSE-DejaVu.txt").read_text(encoding="utf-8")
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    assert "host/pictures/data/*" in pyproject["tool"]["setuptools"]["package-data"]["mafiabot"]


def test_a_card_is_drawn_from_nothing_that_can_hold_a_card_or_a_night_choice() -> None:
    assert typing.get_type_hints(draw_card) == {"card": CardInput, "return": bytes}
    fields = _field_types(CardInput)
    assert {"CardInput.table", "CardInput.names", "CardInput.language", "PublicSeat.left"} <= set(fields)
    for name, named in fields.items():
        assert not named & set(SECRET_TYPES), name
