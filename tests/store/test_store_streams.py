"""Stream links in the store: issued by their hash, revoked when new ones come, expiring after the game."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel import select

from engine import CLASSIC
from mafiabot.store import Store
from mafiabot.store.models import StreamLinkRow
from mafiabot.store.streams import token_hash

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
GUILD = 987_654_321_098_765_432


async def test_links_are_kept_by_hash_and_new_ones_revoke_the_old(store: Store) -> None:
    game_id = await store.create_game(guild_id=GUILD, channel_id=1, ruleset=CLASSIC, created_at=T0)
    first = {"public": "tok-public-1", "broadcast": "tok-broadcast-1", "judge": "tok-judge-1"}
    await store.streams.issue_links(game_id, first, 120.0, at=T0)

    link = await store.streams.stream_link("tok-broadcast-1")
    assert link is not None
    assert (link.game_id, link.tier, link.delay, link.revoked, link.expires_at) == (
        game_id, "broadcast", 120.0, False, None)
    public = await store.streams.stream_link("tok-public-1")
    assert public is not None
    assert public.delay == 0.0
    assert await store.streams.stream_link("tok-never-issued") is None
    with store.db.read() as s:  # the token itself is nowhere in the database
        kept = sorted(row.token_hash for row in s.exec(select(StreamLinkRow)))
    assert kept == sorted(map(token_hash, first.values()))

    await store.streams.issue_links(game_id, {"public": "tok-public-2"}, 0.0, at=T0 + timedelta(minutes=1))
    old = await store.streams.stream_link("tok-public-1")
    assert old is not None
    assert old.revoked
    assert not old.opens(T0)
    fresh = await store.streams.stream_link("tok-public-2")
    assert fresh is not None
    assert fresh.opens(T0)

    assert await store.streams.revoke_links(game_id, at=T0) == 1
    assert await store.streams.revoke_links(game_id, at=T0) == 0


async def test_links_expire_after_the_game(store: Store) -> None:
    game_id = await store.create_game(guild_id=GUILD, channel_id=1, ruleset=CLASSIC, created_at=T0)
    await store.streams.issue_links(game_id, {"public": "tok"}, 0.0, at=T0)
    until = T0 + timedelta(hours=1)
    await store.streams.expire_links(game_id, until)
    await store.streams.expire_links(game_id, until + timedelta(hours=5))  # a later expiry never extends it
    link = await store.streams.stream_link("tok")
    assert link is not None
    assert link.expires_at == until
    assert link.opens(until - timedelta(seconds=1))
    assert not link.opens(until)
