"""How the bot's words read in Russian and Georgian: the kinds of mistake a native reader found, each caught for good.

``test_i18n`` checks that the catalogs are complete and well formed; this checks what they say: no seat count
written into a text, decimals the way the language writes them, no word that takes the gender of a player the
bot cannot know, no clipped word on the protocol sheet, the league and a tournament under different names, and
the rule docs in the bot's own terms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from engine.ids import Cause
from engine.ruleset import PRESETS
from mafiabot.host.i18n import LANGUAGES, catalog, decimal_text, protocol_cause, ruleset_name, t

ROOT = Path(__file__).resolve().parents[1]
CLUB_LANGUAGES = ("ru", "ka")


def _texts(language: str) -> dict[str, list[str]]:
    """Every template of a catalog, by key (a plural entry gives one per form)."""
    entries: Mapping[str, Any] = catalog(language)
    return {key: [value] if isinstance(value, str) else list(value.values()) for key, value in entries.items()}


# -- a seat count is a parameter ----------------------------------------------------------------------------

TABLE_SIZE_WORDS = {
    "en": r"\b(ten|twelve)\b",
    "ru": r"\b(десят\w*|двенадцат\w*)\b",
    "ka": r"(?<![ა-ჰ])(ათი|ათივე|თორმეტი|თორმეტივე)(?![ა-ჰ])",
}
"""The sizes of the presets' tables as words: a text that says "all ten" is wrong at a twelve-seat table."""
COUNTDOWN_KEYS = ("floor.ten_seconds", "voice.say.ten_seconds")
"""The last ten seconds of a speech are ten at every table."""


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_text_writes_a_table_size_in_words(language: str) -> None:
    pattern = re.compile(TABLE_SIZE_WORDS[language], re.IGNORECASE)
    wrong = [f"{key}: {text}" for key, texts in _texts(language).items() if key not in COUNTDOWN_KEYS
             for text in texts if pattern.search(text)]
    assert not wrong, "take the seat count as a field:\n" + "\n".join(wrong)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("preset", ["fiim", "georgian"])
def test_the_round_hint_says_the_tables_own_seat_count(language: str, preset: str) -> None:
    from datetime import UTC, datetime

    from cogs.texts.tournament import round_text
    from engine import find_ruleset
    from mafiabot.core.records import RoundTable, StoredTournament

    rules = find_ruleset(preset)
    tm = StoredTournament(id=1, guild_id=1, name="Cup", ruleset_name=preset, ruleset=rules.to_dict(),
                          scoring="fiim-7", rounds=1, tables=1, seed=1, status="playing", current_round=1,
                          organiser_id=1, created_at=datetime(2026, 12, 1, tzinfo=UTC))
    seats = rules.default_players
    assert seats == {"fiim": 10, "georgian": 12}[preset]
    pages = round_text(language, tm, 1, [RoundTable(1, 1, 10, 11, None)], {"cmd_new": "N", "cmd_start": "S"})
    hint = t(language, "tournament.round.hint", count=seats, cmd_new="N", cmd_start="S")
    assert hint in "\n".join(pages)
    assert str(seats) in hint


# -- decimals ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", CLUB_LANGUAGES)
def test_templates_write_decimals_with_a_comma(language: str) -> None:
    wrong = [f"{key}: {text}" for key, texts in _texts(language).items()
             for text in texts if re.search(r"\d\.\d", text)]
    assert not wrong, "\n".join(wrong)


def test_a_decimal_is_written_the_way_its_language_writes_it() -> None:
    assert [decimal_text(lang, Decimal("0.5"), 1) for lang in LANGUAGES] == ["0.5", "0,5", "0,5"]
    assert decimal_text("ru", Decimal("-1.25"), 2) == "-1,25"
    assert decimal_text("ru", Decimal("0.25"), 2, signed=True) == "+0,25"
    assert decimal_text("ka", Decimal("3"), 0) == "3"


@pytest.mark.parametrize("language", CLUB_LANGUAGES)
def test_points_in_the_channel_have_the_languages_decimal_comma(language: str) -> None:
    from datetime import UTC, datetime

    from cogs.texts.history import league_chart, league_lines
    from cogs.texts.tournament import _finals_line
    from engine import events as ev
    from mafiabot.core.records import LeagueRow, StoredTournament
    from mafiabot.host.render import render
    from tests.host.test_render import view

    drawn = render(view(language), [ev.PointsAwarded(seat=4, value="0.5", reason="")])
    assert "0,5" in drawn.messages[0].text
    assert "0.5" not in drawn.messages[0].text
    row = LeagueRow(rank=1, user_id=1, display_name="A", games=2, wins=1, points=Decimal("1.5"),
                    extra_points=Decimal("0.25"), win_rate=0.5)
    line = league_lines(language, [row], "all", None)[1]
    assert "1,50" in line, line
    assert "+0,25" in line, line
    chart = league_chart(language, [row], "all", None)
    assert chart is not None
    assert chart.rows[0][2:] == ("1,50", "1 / 2", "+0,25")  # the image says what the text says
    tm = StoredTournament(id=1, guild_id=1, name="Cup", ruleset_name="fiim", ruleset={}, scoring="fiim-7",
                          rounds=3, tables=1, seed=1, status="playing", current_round=1, organiser_id=1,
                          created_at=datetime(2026, 12, 1, tzinfo=UTC), finals=1, finals_weight=Decimal("1.5"))
    assert "\u00d71,5" in _finals_line(language, tm)[0]


# -- a player's gender is not known ---------------------------------------------------------------------------

GENDERED = re.compile(
    r"\b(вы|при|у|за|по|про|пере)?(был|шёл|шел|ставлен|далён|писан|бит|квалифицирован|голосован|лишён|снят|"  # noqa: RUF001
    r"ставил|голосовал|шёл|играл|ушёл)\b"
)
"""Masculine past forms and short participles the bot has used about a player: «выбыл», «выставлен», «удалён»…"""
NAME_FIELDS = re.compile(r"\{(player|user|target)\}")
STATUS_KEYS = ("panel.out", "panel.nominated", "panel.removed", "card.cause.", "protocol.cause.", "end.departure.")
"""Words written right after a player's name, by the bot's pictures and the judge's console."""


def test_russian_never_gives_a_player_a_gender() -> None:
    """A name says nothing of its player's gender: what follows it has none (a status, a present tense)."""
    wrong = []
    for key, texts in _texts("ru").items():
        for text in texts:
            for match in GENDERED.finditer(text):
                if key.startswith(STATUS_KEYS) or _follows_a_name(text[:match.start()]):
                    wrong.append(f"{key}: «{match.group(0)}» in {text}")
    assert not wrong, "\n".join(wrong)


def _follows_a_name(before: str) -> bool:
    """Whether the words before a form end in a player's name, with no masculine noun it could agree with."""
    name = NAME_FIELDS.search(before)
    ending = re.search(r"\{(player|user|target)\}[\s—:,]*(?:(?:ещё|уже|пока|не)\s+)*$", before)
    subject = re.search(r"\b(фол|ход|стол|голос)\b", before[:name.start()].lower()) if name else None
    return ending is not None and subject is None


def test_the_gender_check_catches_the_old_texts() -> None:
    old = ["{number}. {user} — ещё не пришёл", "{player} не записан на турнир.", "выбыл"]
    assert all(GENDERED.search(text) for text in old)


# -- the protocol sheet: nothing clipped --------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_protocol_sheets_words_fit_their_columns(language: str) -> None:
    from mafiabot.host.pictures.sheet import CELL_PAD, HEADING_TEXT, LABEL_WIDTH, LINE, WIDTHS, fit_cell

    left = [t(language, "protocol.left", cause=protocol_cause(language, cause.value),
              moment=t(language, "protocol.moment.day", number=12)) for cause in Cause]
    results = [t(language, key) for key in ("protocol.won", "protocol.lost", "protocol.drew")]
    headings = [t(language, f"sheet.col.{col}") for col in ("player", "role", "fouls", "left", "result", "points")]
    labels = [t(language, "protocol.extra_title").rstrip(":"), t(language, "card.day", day=12),
              t(language, "card.night", night=12)]
    wide = [text for text in left if fit_cell(text, WIDTHS[4] - 2 * CELL_PAD).cut]
    wide += [text for text in results if fit_cell(text, WIDTHS[5] - 2 * CELL_PAD).cut]
    wide += [text for text, width in zip(headings, WIDTHS[1:], strict=True)
             if fit_cell(text, width - 2 * CELL_PAD, bold=True, size=HEADING_TEXT).cut]
    wide += [text for text in labels if fit_cell(text, LABEL_WIDTH - 2 * CELL_PAD, bold=True, height=2 * LINE).cut]
    assert not wide, wide


# -- the league is not a tournament ----------------------------------------------------------------------------

LEAGUE_KEYS = ("top.title", "chart.league.title", "chart.league.alt", "cmd.top.desc")


@pytest.mark.parametrize("language", CLUB_LANGUAGES)
def test_the_league_and_a_tournaments_standings_have_different_names(language: str) -> None:
    standings = str(catalog(language)["cmd.tournament.standings.desc"]).lower()
    league = [text.lower() for key in LEAGUE_KEYS for text in _texts(language)[key]]
    assert all(standings not in text for text in league), (standings, league)
    assert all("турнир" not in text and "ტურნირ" not in text for text in league), league


# -- Discord's permissions in Georgian texts --------------------------------------------------------------


def test_georgian_names_a_permission_as_discords_client_shows_it() -> None:
    """Discord has no Georgian: a permission is named in English, in „…“, a Georgian gloss may follow."""
    wrong = []
    for key, texts in _texts("ka").items():
        for text in texts:
            if key.startswith("permission."):
                continue  # quoted by the texts that use them
            georgian_only = re.search(r"„[^“]*მართვ[^“]*“", text)
            unquoted = re.search(r"(?<!„)\b(Manage [A-Z]\w+|Connect|Speak)\b(?!“)", text)
            if georgian_only or unquoted:
                wrong.append(f"{key}: {text}")
    assert not wrong, "\n".join(wrong)


# -- the rule docs in the bot's words -------------------------------------------------------------------------

CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
ANCHORS = re.compile(r'<a id="[^"]*"></a>|\]\(#[^)]*\)|\]\([^)]*\.md[^)]*\)')


@cache
def _prose(name: str) -> str:
    """A doc without its code and link targets: what a reader reads as words."""
    return ANCHORS.sub("", CODE.sub("", (ROOT / "docs" / name).read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", ["rules.ru.md", "rules.ka.md"])
def test_the_rule_docs_name_presets_as_the_bot_shows_them(name: str) -> None:
    found = re.findall(r"\b(classic|georgian|fiim)\w*", _prose(name))
    assert not found, f"{name}: {len(found)} English preset ids, e.g. {found[:5]}"
    language = name.split(".")[1]
    assert all(ruleset_name(language, preset).lower() in _prose(name).lower() for preset in PRESETS)


@pytest.mark.parametrize("name", ["rules.ru.md", "rules.ka.md"])
def test_the_rule_docs_write_seats_as_the_bot_does(name: str) -> None:
    assert "№" not in _prose(name)
