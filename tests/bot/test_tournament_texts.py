"""A tournament's texts without Discord: the seating's figures and bound, numbers as each language writes them."""

from __future__ import annotations

from datetime import UTC, datetime

from cogs.texts.tournament import seating_text
from mafiabot.core.records import StoredTournament, TournamentPlayer
from mafiabot.core.seating import make_schedule, quality, random_schedule
from mafiabot.host.i18n import t

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
