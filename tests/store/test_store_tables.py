"""One live table per text and voice channel, kept by the database for every process that shares it."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from alembic import command
from sqlalchemy import text

from engine import CLASSIC
from mafiabot.store import ChannelTakenError, GuildSettings, Store, make_engine, upgrade
from mafiabot.store.db import alembic_config

GUILD, TEXT, VOICE, JUDGE = 1 << 40, (1 << 40) + 1, (1 << 40) + 2, (1 << 40) + 3


async def _lobby(store: Store, channel: int = TEXT, voice: int = VOICE) -> int:
    return await store.open_lobby(guild_id=GUILD, channel_id=channel, voice_channel_id=voice, judge_id=JUDGE,
                                  ruleset=CLASSIC)


async def test_two_processes_racing_for_one_voice_channel_get_one_lobby(store_url: str) -> None:
    # Two stores are two connections, as two shard processes sharing one database would have.
    first, second = await Store.open(store_url), await Store.open(store_url)
    try:
        results = await asyncio.gather(_lobby(first, TEXT), _lobby(second, TEXT + 10), return_exceptions=True)
        won = [r for r in results if isinstance(r, int)]
        lost = [r for r in results if isinstance(r, ChannelTakenError)]
        assert len(won) == 1
        assert [e.which for e in lost] == ["voice"]
        winner = await first.get_game(won[0])
        with pytest.raises(ChannelTakenError) as taken:
            await _lobby(second, winner.channel_id, VOICE + 10)
        assert taken.value.which == "channel"
    finally:
        await first.close()
        await second.close()


async def test_a_lobby_starts_once_and_its_channels_stay_taken_while_the_game_runs(store: Store) -> None:
    lobby = await _lobby(store)
    assert await store.start_lobby(lobby)
    assert not await store.start_lobby(lobby)  # the second /mafia start
    with pytest.raises(ChannelTakenError):
        await _lobby(store)
    assert [g.id for g in await store.open_games()] == [lobby]


async def test_dropped_and_idle_lobbies_free_their_channels_and_never_show_in_the_history(store: Store) -> None:
    kept, dropped = await _lobby(store), await _lobby(store, TEXT + 10, VOICE + 10)
    assert await store.recent_games(GUILD) == []
    await store.drop_lobbies(keep=[kept])
    await _lobby(store, TEXT + 10, VOICE + 10)  # free again
    await store.drop_lobby(kept)
    assert dropped != kept
    await _lobby(store)


async def test_an_unstarted_open_game_is_closed_at_start_and_by_cancel(store: Store) -> None:
    stuck = await store.create_game(guild_id=GUILD, channel_id=TEXT, voice_channel_id=VOICE, ruleset=CLASSIC)
    other = await store.create_game(guild_id=GUILD + 1, channel_id=TEXT + 10, voice_channel_id=VOICE + 10,
                                    ruleset=CLASSIC)
    assert await store.abandon_unstarted(lambda guild: guild == GUILD, keep=[]) == [stuck]
    assert (await store.get_game(stuck)).status == "abandoned"
    assert (await store.get_game(other)).status == "open"
    assert await store.release_channel(TEXT + 10, unstarted_only=True) == [other]
    await _lobby(store)
    await _lobby(store, TEXT + 10, VOICE + 10)


async def test_strict_tables_is_saved(store: Store) -> None:
    await store.save_settings(dataclasses.replace(GuildSettings(GUILD), strict_tables=True))
    assert (await store.get_settings(GUILD)).strict_tables
    assert not (await store.get_settings(GUILD + 1)).strict_tables


def test_upgrade_closes_what_an_older_version_left_in_one_channel(store_url: str) -> None:
    engine = make_engine(store_url)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0001")
        insert = text(
            "INSERT INTO games (guild_id, channel_id, voice_channel_id, ruleset_name, ruleset, language, status, "
            "created_at, last_seq, discord) VALUES (:g, :c, :v, 'classic', '{}', 'en', 'open', CURRENT_TIMESTAMP, "
            ":s, '{}')"
        )
        rows = [(TEXT, VOICE, 0), (TEXT, VOICE, 5), (TEXT + 10, VOICE, 3), (TEXT + 20, VOICE + 20, 2)]
        with engine.begin() as connection:
            for channel, voice, last in rows:
                connection.execute(insert, {"g": GUILD, "c": channel, "v": voice, "s": last})
        upgrade(store_url)
        with engine.connect() as connection:
            found = connection.execute(text("SELECT id, status, reason FROM games ORDER BY id")).all()
    finally:
        engine.dispose()
    # The seatless one and the older of two sharing a voice channel are closed; the newest stays.
    assert [(status, reason) for _, status, reason in found] == [
        ("abandoned", "never_started"), ("abandoned", "shared_channel"), ("open", None), ("open", None),
    ]
