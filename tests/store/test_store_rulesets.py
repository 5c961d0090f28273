"""Servers' own rulesets in the store, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engine import CLASSIC
from mafiabot.core.rulesets import parse_ruleset
from mafiabot.store import Store

T0 = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)
GUILD = 987_654_321_098_765_432
ADMIN = 876_543_210_987_654_321
CLUB = 'base = "classic"\nname = "Our Club"\nspeech_seconds = 45\n'


async def test_a_ruleset_is_saved_replaced_listed_and_removed_per_server(store: Store) -> None:
    club = parse_ruleset(CLUB, default_name="club")
    assert await store.save_guild_ruleset(guild_id=GUILD, key="our club", ruleset=club, source=CLUB,
                                          uploaded_by=ADMIN, limit=2, at=T0) == "saved"
    faster = club.replace(speech_seconds=30)
    later = T0 + timedelta(days=1)
    assert await store.save_guild_ruleset(guild_id=GUILD, key="our club", ruleset=faster, source="x",
                                          uploaded_by=ADMIN, limit=1, at=later) == "replaced"
    stored = await store.get_guild_ruleset(GUILD, "our club")
    assert stored is not None
    assert (stored.name, stored.source, stored.uploaded_by, stored.uploaded_at) == ("Our Club", "x", ADMIN, later)
    assert stored.ruleset == faster
    assert await store.get_guild_ruleset(GUILD + 1, "our club") is None  # another server sees nothing
    assert await store.guild_rulesets(GUILD + 1) == []


async def test_a_full_server_stores_nothing_more(store: Store) -> None:
    for key in ("a", "b"):
        rules = CLASSIC.replace(name=key.upper(), base="classic")
        assert await store.save_guild_ruleset(guild_id=GUILD, key=key, ruleset=rules, source="", uploaded_by=ADMIN,
                                              limit=2) == "saved"
    rules = CLASSIC.replace(name="C", base="classic")
    assert await store.save_guild_ruleset(guild_id=GUILD, key="c", ruleset=rules, source="", uploaded_by=ADMIN,
                                          limit=2) == "full"
    assert [r.key for r in await store.guild_rulesets(GUILD)] == ["a", "b"]
    assert await store.remove_guild_ruleset(GUILD, "a") is True
    assert await store.remove_guild_ruleset(GUILD, "a") is False
    assert [r.key for r in await store.guild_rulesets(GUILD)] == ["b"]


async def test_a_game_keeps_its_ruleset_after_the_servers_copy_is_gone(store: Store) -> None:
    club = parse_ruleset(CLUB, default_name="club")
    await store.save_guild_ruleset(guild_id=GUILD, key="our club", ruleset=club, source=CLUB, uploaded_by=ADMIN,
                                   limit=5)
    game_id = await store.create_game(guild_id=GUILD, channel_id=1, ruleset=club, created_at=T0)
    await store.remove_guild_ruleset(GUILD, "our club")
    game = await store.get_game(game_id)
    assert (game.ruleset_name, game.rules()) == ("Our Club", club)
