from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from engine import Disqualify, Role, Timeout
from mafiabot.core.ratings import DEFAULT_RATING, RatedPlayer, expected, rate
from mafiabot.store import Store

if TYPE_CHECKING:
    from tests.store.conftest import StartScripted

DOC = Path(__file__).resolve().parents[2] / "docs" / "ratings.md"
T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)


def _number(cell: str) -> float:
    return float(cell.replace("\N{MINUS SIGN}", "-").replace("+", ""))


def _examples() -> list[tuple[str, str | None, list[tuple[int, str, float, float, float, float]]]]:
    found = []
    for section in DOC.read_text(encoding="utf-8").split("\n## ")[1:]:
        if not section.startswith("Example"):
            continue
        winner = re.search(r"^Winner: (\w+)$", section, re.MULTILINE)
        assert winner is not None, section.splitlines()[0]
        rows = []
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("|") and cells[0].isdigit():
                player, side, before, exp, change, after = cells
                rows.append((int(player), side, _number(before), _number(exp), _number(change), _number(after)))
        found.append((section.splitlines()[0], None if winner[1] == "draw" else winner[1], rows))
    return found


def test_the_page_has_worked_examples() -> None:
    assert len(_examples()) >= 2


@pytest.mark.parametrize(("title", "winner", "rows"), _examples(), ids=lambda v: v if isinstance(v, str) else "")
def test_worked_examples_in_docs_match_the_code(
    title: str, winner: str | None, rows: list[tuple[int, str, float, float, float, float]],
) -> None:
    players = [RatedPlayer(p, side, before) for p, side, before, *_ in rows]
    deltas = rate(players, winner)
    sides: dict[str, list[float]] = {}
    for _player, side, before, *_ in rows:
        sides.setdefault(side, []).append(before)
    averages = {side: sum(before) / len(before) for side, before in sides.items()}
    for player, side, before, exp, change, after in rows:
        others = [s for s in averages if s != side]
        assert expected(before, averages[others[0]]) == pytest.approx(exp, abs=5e-5), (title, player)
        assert deltas[player] == pytest.approx(change, abs=5e-3), (title, player)
        assert before + deltas[player] == pytest.approx(after, abs=5e-3), (title, player)


def test_draw_between_equal_sides_changes_nothing_and_sides_stake_the_same() -> None:
    players = [RatedPlayer(p, "red" if p <= 7 else "black") for p in range(1, 11)]
    assert set(rate(players, None).values()) == {0.0}
    deltas = rate(players, "black")
    assert sum(deltas.values()) == pytest.approx(0.0, abs=1e-9)
    assert deltas[1] == pytest.approx(-20 * 10 / 14 * 0.5)
    assert deltas[8] == pytest.approx(20 * 10 / 6 * 0.5)


def test_a_one_sided_table_is_not_rated() -> None:
    assert rate([RatedPlayer(1, "red"), RatedPlayer(2, "red")], "red") == {1: 0.0, 2: 0.0}


async def test_finishing_a_game_updates_ratings_per_server_and_ruleset(store: Store, start_game: StartScripted) -> None:
    roles = (Role.DON, Role.MAFIA, Role.SHERIFF, Role.CITIZEN, Role.CITIZEN, Role.CITIZEN)
    table = await start_game(1, "classic", [11, 12, 13, 14, 15, 16], roles, at=T0)
    await table.run(Timeout(), Disqualify(seat=1), Disqualify(seat=2))
    await table.finish()
    ratings = {r.user_id: (r.rating, r.games) for r in await store.ratings(1, "classic")}
    # By hand: six at 1500, red (4) wins. Red weight 6/8: +20*0.75*0.5; black weight 6/4: -20*1.5*0.5.
    assert ratings == {
        13: (1507.5, 1), 14: (1507.5, 1), 15: (1507.5, 1), 16: (1507.5, 1), 11: (1485.0, 1), 12: (1485.0, 1),
    }
    assert [r.user_id for r in await store.ratings(1, "classic")][:4] == [13, 14, 15, 16]
    assert await store.ratings(1, "fiim") == []
    assert await store.ratings(2, "classic") == []
    assert DEFAULT_RATING == 1500.0
