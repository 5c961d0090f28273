"""Protests in the store, on SQLite and PostgreSQL: filed, listed in order, ruled, and who may rule them."""

from __future__ import annotations

from datetime import timedelta

from engine import FIIM, Role
from mafiabot.core.records import RoundTable
from mafiabot.store import Store
from tests.store.conftest import T0, StartScripted
from tests.store.test_store_tournaments import GUILD, ORGANISER, TEXT, VOICE, _registered, _schedule

USERS = [100 + i for i in range(1, 11)]
ROLES = [Role.DON, Role.MAFIA, Role.MAFIA, Role.SHERIFF] + [Role.CITIZEN] * 6


async def test_protests_are_filed_in_order_ruled_and_read_back_with_the_protocol(
    store: Store, start_game: StartScripted,
) -> None:
    game = await start_game(GUILD, "classic", USERS, ROLES)
    first = await store.file_protest(game_id=game.game_id, user_id=USERS[2], seat=3, text="Noise at night",
                                     during_game=True, at=T0)
    second = await store.file_protest(game_id=game.game_id, user_id=USERS[4], seat=5, text="Ж · ჟ",
                                      during_game=False, at=T0 + timedelta(minutes=5))
    assert (first.id < second.id, first.status, second.text) == (True, "open", "Ж · ჟ")
    ruled = await store.rule_protest(first.id, status="upheld", note="The foul is taken back.", by=9,
                                     at=T0 + timedelta(minutes=1))
    assert ruled is not None
    assert (ruled.status, ruled.note, ruled.ruled_by, ruled.ruled_at) == (
        "upheld", "The foul is taken back.", 9, T0 + timedelta(minutes=1))
    assert await store.rule_protest(second.id + 100, status="rejected", note="", by=9) is None
    listed = await store.game_protests(game.game_id)
    assert [(p.id, p.seat, p.status, p.filed_at) for p in listed] == [
        (first.id, 3, "upheld", T0), (second.id, 5, "open", T0 + timedelta(minutes=5))]
    assert (await store.game_protocol(game.game_id)).protests == tuple(listed)
    found = await store.protested_game(second.id)
    assert found is not None
    assert (found.judge_id, found.organiser_id, found.guild_id) == (9, None, GUILD)
    assert await store.protested_game(second.id + 100) is None


async def test_a_tournament_games_protest_names_its_organiser(store: Store) -> None:
    tid = await _registered(store)
    assert await store.tournaments.save_schedule(tid, _schedule())
    assert await store.tournaments.open_round(tid, 1, [RoundTable(1, 1, TEXT, VOICE)])
    game_id = await store.create_game(guild_id=GUILD, channel_id=TEXT, ruleset=FIIM, created_at=T0)
    assert await store.tournaments.link_game(tid, 1, 1, game_id)
    protest = await store.file_protest(game_id=game_id, user_id=USERS[0], seat=1, text="x", during_game=True, at=T0)
    found = await store.protested_game(protest.id)
    assert found is not None
    assert found.organiser_id == ORGANISER
