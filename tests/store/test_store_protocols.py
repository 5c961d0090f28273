"""A finished game's protocol is stored once and read back as the log builds it (SQLite and PostgreSQL).

The league's read (``ended_protocols``) takes the stored text and joins the rows that can change
after the game: who sat where (forgetting a member), the points, the protests. Every protocol it
reads is held against the one built from the game's whole log (``game_protocol``).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlmodel import col

from engine import CLASSIC, FIIM
from mafiabot.core.records import GuildSettings
from mafiabot.store import Store, projection
from mafiabot.store.models import ProtocolRow
from tests.store.test_site import GUILD, NAMES, PLAYERS, _play


async def _built(store: Store, ids: list[int]) -> dict[int, object]:
    return {gid: await store.game_protocol(gid) for gid in ids}


def _kept(store: Store) -> dict[int, str]:
    with store.engine.connect() as connection:
        return dict(connection.execute(select(col(ProtocolRow.game_id), col(ProtocolRow.shape))).all())


async def test_a_game_keeps_its_protocol_when_it_ends_and_the_league_reads_it_as_the_log_builds_it(
        store: Store) -> None:
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    ids = [await _play(store, CLASSIC, PLAYERS[:10], 1), await _play(store, FIIM, PLAYERS[1:11], 2)]
    running = await _play(store, CLASSIC, PLAYERS[2:12], 3, finish=False)
    assert _kept(store) == dict.fromkeys(ids, projection.SHAPE)  # at the end, not while being played
    read = await store.ended_protocols(GUILD)
    assert list(read) == sorted(ids, reverse=True)
    assert running not in read
    assert read == await _built(store, ids)
    text = projection.encode(read[ids[0]])
    assert str(PLAYERS[0]) not in text  # names and ids stay in their rows
    assert NAMES[PLAYERS[0]] not in text


async def test_games_that_ended_before_or_under_another_shape_are_built_once_and_kept(store: Store) -> None:
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    ids = [await _play(store, CLASSIC, PLAYERS[:10], seed) for seed in (1, 2, 3)]
    with store.engine.begin() as connection:
        connection.execute(delete(ProtocolRow).where(col(ProtocolRow.game_id) == ids[0]))
        connection.execute(update(ProtocolRow).where(col(ProtocolRow.game_id) == ids[1])
                           .values(shape="older", body="[]"))
    assert await store.ended_protocols(GUILD) == await _built(store, ids)
    assert _kept(store) == dict.fromkeys(ids, projection.SHAPE)


async def test_a_forgotten_member_and_a_ruled_protest_show_in_the_protocols_read_after(store: Store) -> None:
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    ids = [await _play(store, CLASSIC, PLAYERS[:10], 1), await _play(store, CLASSIC, PLAYERS[1:11], 2)]
    before = await store.ended_protocols(GUILD)
    ended = before[ids[0]].game.finished_at
    assert ended is not None
    await store.file_protest(game_id=ids[0], user_id=PLAYERS[3], seat=4, text="the vote was miscounted",
                             during_game=False, at=ended + timedelta(minutes=1))
    await store.forget_member(GUILD, PLAYERS[1])
    after = await store.ended_protocols(GUILD)
    assert after == await _built(store, ids)
    assert all(PLAYERS[1] not in {s.user_id for s in p.seats} for p in after.values())
    assert [p.text for p in after[ids[0]].protests] == ["the vote was miscounted"]
