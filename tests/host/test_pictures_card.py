"""The table card, read back as an image: its size, its seats, out or alive, fouls, and the scripts drawn."""

from __future__ import annotations

import io
import tomllib
import typing
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from decimal import Decimal
from importlib.resources import files
from pathlib import Path

import pytest
from PIL import Image

from engine import FIIM, Event, Game, GameView, GiveFoul, Phase
from engine.ids import Cause
from engine.public import PublicSeat, PublicTable, public_table
from mafiabot.host.i18n import catalog, t
from mafiabot.host.pictures import card
from mafiabot.host.pictures.card import (
    ALIVE_FILL,
    BACKGROUND,
    FOUL_MARK,
    FOUL_SLOT,
    FOUL_SLOTS,
    HEIGHT,
    MIN_PREVIEW_MARK,
    MIN_PREVIEW_TEXT,
    OUT_FILL,
    PREVIEW_WIDTH,
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
from tests.engine.helpers import end_floors, kill, play_day, speeches, start_table, to_day, to_speeches, vote
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
    assert image.size == (WIDTH, HEIGHT) == (1280, 960)
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
    size, gap = card.MARK, card.MARK_GAP
    for seat, (x, y) in zip(table.seats, seat_centres(len(table.seats)), strict=True):
        left = x - (FOUL_SLOTS * size + (FOUL_SLOTS - 1) * gap) // 2
        marks = [image.getpixel((left + slot * (size + gap) + size // 2, y - SEAT_RADIUS - 6 - size // 2))
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
    size, gap = card.MARK, card.MARK_GAP
    x, y = seat_centres(len(table.seats))[5]
    left = x - (FOUL_SLOTS * size + (FOUL_SLOTS - 1) * gap) // 2
    top = y - SEAT_RADIUS - 6 - size // 2
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
    state: GameView
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
    assert len(cards) == 3  # night zero's seating, the day's vote and the morning after the night
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


# -- at Discord's preview size ------------------------------------------------------------------------------------

CAUSES = tuple(Cause)
MIN_PREVIEW_INK = 5
"""A lowercase letter's height at 400 px wide (DejaVu's x-height is 0.55 of its size)."""


def _worst(count: int, first: int) -> PublicTable:
    """A table at its most crowded: every other seat out (a different cause each), fouls everywhere, two nominees."""
    seats = tuple(PublicSeat(seat=s, alive=(s + first) % 2 == 0, left=None if (s + first) % 2 == 0 else
                             CAUSES[(s + first) % len(CAUSES)], left_at=None, fouls=s % 5, silenced=False,
                             nominee=s in (2, count)) for s in range(1, count + 1))
    seats = tuple(replace(s, left_at=3 if s.left else None) for s in seats)
    return PublicTable(seats=seats, phase=Phase.LIFT_VOTE, day=4, night=3, nominees=(2, count), floor=1)


def _crowded(count: int, first: int) -> PublicTable:
    """Every seat out, each with the cause whose words are longest in some language."""
    long = (Cause.LIFTED, Cause.DISQUALIFIED, Cause.VOTED_OUT, Cause.OATHS)
    seats = tuple(PublicSeat(seat=s, alive=False, left=long[(s + first) % len(long)], left_at=3, fouls=4,
                             silenced=False, nominee=False) for s in range(1, count + 1))
    return PublicTable(seats=seats, phase=Phase.VOTING, day=9, night=8, nominees=(), floor=None)


def _boxes(painted: card.Painted, count: int) -> list[tuple[str, int, tuple[float, float, float, float]]]:
    """What is drawn, by whose it is (0: the table's) and where: a seat's own lines follow each other by design."""
    found = [(f"{p.kind} {p.text!r}", p.seat, p.box) for p in painted.texts if p.kind != "seat"]
    found += [("mark", 0, box) for box in painted.marks]
    r = SEAT_RADIUS
    found += [(f"seat {i}", 0, (x - r, y - r, x + r, y + r)) for i, (x, y) in enumerate(seat_centres(count), 1)]
    return found


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_every_word_and_mark_is_legible_at_discords_preview_size(language: str) -> None:
    """At 400 px wide every text is at least 9 px and a foul mark 6 px; a cause's letters are 5 px tall there."""
    scale = PREVIEW_WIDTH / WIDTH
    for count in range(6, 13):
        for table in (_worst(count, 0), _worst(count, 1), _crowded(count, 0), _crowded(count, 1)):
            painted = card.paint(CardInput(table, NAMES[:count], language))
            assert {p.kind for p in painted.texts} >= {"name", "cause", "legend", "title", "ballot", "alive"}
            for placed in painted.texts:
                assert placed.size * scale >= MIN_PREVIEW_TEXT, placed
            for x0, _y0, x1, _y1 in painted.marks:
                assert (x1 - x0) * scale >= MIN_PREVIEW_MARK
            small = painted.image.resize((PREVIEW_WIDTH, round(HEIGHT * scale)), Image.Resampling.LANCZOS)
            for placed in painted.texts:
                if placed.kind == "cause":
                    assert _ink_height(small, placed, scale) >= MIN_PREVIEW_INK, placed


def _ink_height(small: Image.Image, placed: card.Placed, scale: float) -> int:
    """How many rows of the scaled card the label's ink reaches: its letters' height as a reader sees it."""
    x0, y0, x1, y1 = (round(v * scale) for v in placed.box)
    region = small.crop((x0, y0 - 1, x1, y1 + 1))
    data = region.tobytes()
    rows = [y for y in range(region.height)
            if any(sum(abs(data[(y * region.width + x) * 3 + c] - BACKGROUND[c]) for c in range(3)) > 150
                   for x in range(region.width))]
    return rows[-1] - rows[0] + 1 if rows else 0


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_no_word_mark_or_seat_covers_another_nor_leaves_the_card(language: str) -> None:
    for count in range(6, 13):
        for table in (_worst(count, 0), _worst(count, 1), _crowded(count, 0), _crowded(count, 1)):
            boxes = _boxes(card.paint(CardInput(table, NAMES[:count], language)), count)
            for index, (what, whose, box) in enumerate(boxes):
                assert min(box[0], box[1]) >= 0, (count, what, box)
                assert box[2] <= WIDTH, (count, what, box)
                assert box[3] <= HEIGHT, (count, what, box)
                hits = [(other, second) for other, owner, second in boxes[index + 1:]
                        if _overlap(box, second) and not (whose and owner == whose)]
                assert not hits, (count, what, box, hits)


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
def test_the_legend_says_what_the_marks_and_rings_mean(language: str) -> None:
    painted = card.paint(CardInput(_worst(10, 0), NAMES[:10], language))
    legend = {p.text for p in painted.texts if p.kind == "legend"}
    assert legend == {t(language, "card.legend.fouls"), t(language, "card.legend.nominee"),
                      t(language, "card.legend.floor")}


# -- the moments a card is posted at ------------------------------------------------------------------------------


def _posted(game: Game, language: str = "en") -> list[tuple[str, str]]:
    """Each card the renderer attaches, command by command as the bot renders them: (file name, alt text)."""
    view = _view(game, language)
    replayed, found = Game(game.ruleset), []
    for command in game.history:
        first = len(replayed.events)
        replayed.apply(command)
        drawn = render(view, game.events[first:len(replayed.events)], first=first)
        found += [(p.filename, p.description) for m in drawn.messages for p in m.pictures]
    return found


def test_the_first_morning_before_the_best_move_names_the_day_not_the_night() -> None:
    game = start_table("DMMSCCCCCC", FIIM)
    to_day(game, 1)
    play_day(game)
    kill(game, 10)
    assert game.state.phase is Phase.BEST_MOVE
    filename, description = _posted(game)[-1]
    assert filename == "table-day-2-morning.png"
    assert description.startswith(t("en", "card.alt", title=t("en", "card.day", day=2), details="")[:-1].rstrip())
    assert "night" not in description.lower()


def test_a_card_shows_the_seating_at_night_zero_and_the_tied_at_the_lift_vote() -> None:
    game = start_table("DMMSCCCCCC")
    posted = _posted(game)
    assert [name for name, _alt in posted] == ["table-night-0-start.png"]
    to_day(game, 1)
    speeches(game, {1: 5, 2: 6})
    vote(game, {5: [1, 2, 3, 4, 5], 6: [6, 7, 8, 9, 10]})
    speeches_done = end_floors(game, Phase.TIE_SPEECHES)
    assert speeches_done
    vote(game, {5: [1, 2, 3, 4, 5], 6: [6, 7, 8, 9, 10]})
    assert game.state.phase is Phase.LIFT_VOTE
    name, alt = _posted(game)[-1]
    assert name == "table-day-1-lift.png"
    assert t("en", "card.ballot", seats="#5, #6") in alt
    table = public_table(game.state)
    image = _draw(table)
    for seat in (5, 6):
        x, y = seat_centres(10)[seat - 1]
        assert image.getpixel((x - SEAT_RADIUS + 3, y)) == card.NOMINEE_RING
