"""A tournament's texts without Discord: the seating's figures and bound, numbers as each language writes them."""

from __future__ import annotations

import csv
import doctest
import io
import json
import re
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from cogs.texts.history import league_chart, league_lines, protocol_lines, stats_lines
from cogs.texts.rules import rules_lines
from cogs.texts.tournament import announcement, seating_text, standings_chart, standings_pages
from engine import FIIM, Standing
from mafiabot.core import numbers, seating
from mafiabot.core import tournaments as tn
from mafiabot.core.protocol import Protocol
from mafiabot.core.records import LeagueRow, PlayerStats, StoredTournament, TournamentPlayer
from mafiabot.core.seating import make_schedule, quality, random_schedule
from mafiabot.host.i18n import t
from mafiabot.host.pictures.sheet import SheetInput, seat_cells
from mafiabot.store import export
from mafiabot.store.history import protocol_of
from tests.core.test_tournaments import stored_game
from tests.engine.test_scoring import GAME_ONE_PLAYERS, game_one

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def forty(**changes: object) -> StoredTournament:
    players = tuple(TournamentPlayer(500 + i, f"P{i}") for i in range(40))
    fields: dict[str, object] = {
        "id": 1, "guild_id": 1, "name": "Saturday", "ruleset_name": "fiim", "ruleset": {}, "scoring": "fiim-7",
        "rounds": 3, "tables": 4, "seed": 5, "status": "seated", "current_round": 0, "organiser_id": 1,
        "created_at": T0, "players": players, **changes}
    return StoredTournament(**fields)  # type: ignore[arg-type]


def test_the_seating_text_prints_a_bound_that_can_be_reached() -> None:
    tm = forty()
    schedule = make_schedule([p.user_id for p in tm.players], rounds=3, tables=4, seed=tm.seed)
    ours = quality(schedule)
    assert ours.meetings_max == 2
    rand = quality(random_schedule([p.user_id for p in tm.players], rounds=3, tables=4, seats=10, seed=tm.seed))
    for lang in ("en", "ru", "ka"):
        # Some pair meets twice in any schedule of these sizes, and none need meet three times: "0-2", not "0-1".
        expected = t(lang, "tournament.quality.meetings", ours="0-2", random=f"{rand.meetings_min}-{rand.meetings_max}",
                     ideal="0-2")
        assert expected in seating_text(lang, tm, schedule)


# -- numbers: one format per language in text, one machine format in the exports ---------------------------------

D = Decimal
POINT = re.compile(r"\d\.\d")
"""A decimal point between digits: how English writes a fraction, never Russian or Georgian."""
MACHINE = re.compile(r"-?\d+\.\d{5}")


def standing(place: int, player: int, total: str, extra: str, ci: str) -> Standing:
    return Standing(place=place, player=player, games=2, wins=1, special_role_wins=0, shot_first_night=1,
                    total=D(total), win=D(1), best_move=D(0), extra=D(extra), penalty=D(0), ci=D(ci))


ROWS = [standing(1, 500, "3.3", "3.100", "0"), standing(2, 501, "2.900", "0.3", "0.500"),
        standing(3, 502, "0.41625", "-0.2", "0.25")]


def replayed_protocol() -> Protocol:
    game = game_one()  # extra points 0.4, a best move of 0.25 under fiim's own protocol, removals at -0.5
    return protocol_of(stored_game(1, game, GAME_ONE_PLAYERS), game.points())


def texts(lang: str) -> list[str]:
    """Every text with a point figure or a rating, in ``lang``."""
    tm = forty(finals=1, finals_weight=D("1.5"))
    chart = standings_chart(lang, tm, ROWS)
    assert chart is not None
    stats = PlayerStats(guild_id=1, user_id=500, ruleset=None, games=3, wins=2, draws=0, losses=1, win_rate=2 / 3,
                        points=D("2.25"), extra_points=D("0.4"), fouls=1, removals=0, best_moves=1, best_move_black=2,
                        by_role={}, by_team={}, ratings={"fiim": 1512.345, "classic": 1490.0})
    league = [LeagueRow(rank=1, user_id=500, display_name="A", games=3, wins=2, points=D("2.25"),
                        extra_points=D("-0.5"), win_rate=2 / 3)]
    league_drawn = league_chart(lang, league, "all", None)
    assert league_drawn is not None
    protocol = replayed_protocol()
    sheet = SheetInput(protocol, lang)
    return [*standings_pages(lang, tm, ROWS), *(" | ".join(row) for row in chart.rows), announcement(lang, tm),
            *stats_lines(lang, "A", stats), *league_lines(lang, league, "all", None),
            *(" | ".join(row) for row in league_drawn.rows), *protocol_lines(lang, protocol),
            *(" | ".join(seat_cells(sheet, seat)) for seat in protocol.seats),
            *rules_lines(lang, FIIM, 10)]


@pytest.mark.parametrize("lang", ["ru", "ka"])
def test_no_russian_or_georgian_text_shows_a_decimal_point(lang: str) -> None:
    shown = texts(lang)
    assert not [text for text in shown if POINT.search(text)]
    joined = "\n".join(shown)
    # One format per kind of figure: tournament points in thousandths, game points in hundredths,
    # ratings in tenths, the finals' weight in hundredths.
    for figure in ("3,300", "3,100", "2,900", "0,500", "0,416", "2,25", "+0,40", "1512,3", "1,50"):
        assert figure in joined, figure


def test_english_writes_the_same_figures_with_a_point() -> None:
    joined = "\n".join(texts("en"))
    for figure in ("3.300", "3.100", "2.900", "0.500", "0.416", "2.25", "+0.40", "1512.3", "1.50"):
        assert figure in joined, figure


def test_the_exports_keep_one_fixed_machine_format() -> None:
    tm = forty(finals=1, finals_weight=D("1.5"))
    records = list(csv.DictReader(io.StringIO(tn.standings_csv(tm, ROWS))))
    data = json.loads(tn.standings_json(tm, ROWS))
    for record in (*records, *data["standings"]):
        for field in ("total", "win", "best_move", "extra", "penalty", "ci"):
            assert MACHINE.fullmatch(record[field]), (field, record[field])
    assert [r["total"] for r in records] == ["3.30000", "2.90000", "0.41625"]  # exact: Ci 0.333 x 1.25 has five
    assert [D(r["ci"]) for r in records] == [row.ci for row in ROWS]
    assert data["tournament"]["finals_weight"] == "1.50"


def test_a_games_exports_keep_the_same_machine_format() -> None:
    game = game_one()
    stored = stored_game(1, game, GAME_ONE_PLAYERS)
    protocol = protocol_of(stored, game.points())
    seats = list(csv.DictReader(io.StringIO(export.seats_csv(protocol))))
    assert [r["points"] for r in seats][:4] == ["-0.50000", "-0.50000", "-0.50000", "1.40000"]
    data = json.loads(export.to_json(stored, protocol))
    points = [s["points"] for s in data["protocol"]["seats"]]
    assert all(MACHINE.fullmatch(p) for p in points), points
    assert points[3] == "1.40000"


def test_the_number_modules_examples_hold() -> None:
    for module in (numbers, seating):
        result = doctest.testmod(module)
        assert result.attempted >= 1, module
        assert result.failed == 0, module
