"""A member's rating after each game (the ``/mafia stats`` chart), replayed from the results.

The season is ``test_store_stats``'s: games A, B and D under classic, C under fiim, E abandoned,
F on another server. The replay must end where ``finish_game`` left each stored rating.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from mafiabot.store import Store
from tests.store.test_store_stats import play_the_season

if TYPE_CHECKING:
    from tests.store.conftest import StartScripted


async def test_rating_history_has_a_point_per_game_and_ends_at_the_stored_rating(
    store: Store, start_game: StartScripted,
) -> None:
    games = await play_the_season(start_game)
    curve = await store.rating_history(1, 1)
    # Seat 1 played A, B, C and D; E was abandoned and F is another server's.
    assert [p.game_id for p in curve] == [games[g].game_id for g in "ABCD"]
    assert [p.ruleset_name for p in curve] == ["classic", "classic", "fiim", "classic"]
    assert [p.finished_at for p in curve] == [games[g].at for g in "ABCD"]
    # By hand, game A: six at 1500, red (4) wins; the don loses 20 * 6/4 * 0.5.
    assert curve[0].rating == pytest.approx(1485.0)
    for user in range(1, 11):
        mine = await store.rating_history(1, user)
        for ruleset in ("classic", "fiim"):
            stored = {r.user_id: r for r in await store.ratings(1, ruleset)}
            points = [p.rating for p in mine if p.ruleset_name == ruleset]
            assert len(points) == (stored[user].games if user in stored else 0), (user, ruleset)
            if points:
                assert points[-1] == stored[user].rating, (user, ruleset)


async def test_rating_history_keeps_to_the_server(store: Store, start_game: StartScripted) -> None:
    await play_the_season(start_game)
    elsewhere = await store.rating_history(2, 1)
    assert [p.ruleset_name for p in elsewhere] == ["classic"]
    assert elsewhere[0].rating == pytest.approx(1485.0)
    assert await store.rating_history(1, 99) == []
    assert await store.rating_history(3, 1) == []
