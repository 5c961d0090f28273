from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import CLASSIC
from mafiabot.core.records import SeatInfo
from mafiabot.store import GuildSettings, MuteRecord, SettingsError, Store

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
GUILD = 987_654_321_098_765_432


async def test_mute_ledger_records_lists_and_clears(store: Store) -> None:
    game_id = await store.create_game(guild_id=GUILD, channel_id=1, ruleset=CLASSIC, created_at=T0)
    await store.record_mute(GUILD, 11, game_id, at=T0)
    await store.record_mute(GUILD, 12, game_id, at=T0)
    await store.record_mute(5, 13, None, at=T0)
    await store.record_mute(GUILD, 11, game_id, at=T0 + timedelta(minutes=1))  # muted again: one entry
    assert await store.owed_mutes(GUILD) == [
        MuteRecord(GUILD, 11, game_id, T0 + timedelta(minutes=1)),
        MuteRecord(GUILD, 12, game_id, T0),
    ]
    assert [(m.guild_id, m.user_id) for m in await store.owed_mutes()] == [(5, 13), (GUILD, 11), (GUILD, 12)]
    await store.clear_mute(GUILD, 11)
    await store.clear_mute(GUILD, 11)  # already lifted: nothing to do
    assert [m.user_id for m in await store.owed_mutes(GUILD)] == [12]


async def test_mutes_are_recorded_and_cleared_in_batches_and_with_the_seating(store: Store) -> None:
    game_id = await store.create_game(guild_id=GUILD, channel_id=1, ruleset=CLASSIC, created_at=T0)
    await store.seat_players(game_id, [SeatInfo(1, 21, "Ann"), SeatInfo(2, 22, "Bob")], muting_in=GUILD)
    await store.record_mutes(GUILD, [23, 24, 21], game_id, at=T0)
    assert [m.user_id for m in await store.owed_mutes(GUILD)] == [21, 22, 23, 24]
    await store.seat_players(game_id, [SeatInfo(1, 21, "Ann")])  # a re-seating alone touches no mute
    await store.clear_mutes(GUILD, [21, 23, 99])
    assert [m.user_id for m in await store.owed_mutes(GUILD)] == [22, 24]


async def test_settings_default_then_round_trip(store: Store) -> None:
    assert await store.get_settings(GUILD) == GuildSettings(GUILD)
    defaults = await store.get_settings(GUILD)
    assert (defaults.language, defaults.default_ruleset, defaults.mute_spectators, defaults.voice_cues) == (
        "en", "classic", True, True,
    )
    chosen = GuildSettings(
        GUILD,
        language="ka",
        judge_role_id=GUILD + 1,
        default_ruleset="georgian",
        timers={"speech_seconds": 45, "night_seconds": 90},
        vote_window=5,
        mute_spectators=False,
        voice_cues=False,
        results_channel_id=GUILD + 2,
    )
    await store.save_settings(chosen)
    assert await store.get_settings(GUILD) == chosen
    changed = GuildSettings(GUILD, language="ru")
    await store.save_settings(changed)
    assert await store.get_settings(GUILD) == changed
    assert await store.get_settings(GUILD + 5) == GuildSettings(GUILD + 5)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"language": "de"}, "language"),
        ({"default_ruleset": ""}, "default_ruleset"),
        ({"timers": {"coffee_seconds": 5}}, "timers.coffee_seconds"),
        ({"timers": {"speech_seconds": 0}}, "timers.speech_seconds"),
        ({"timers": {"speech_seconds": True}}, "timers.speech_seconds"),
        ({"timers": {"night_seconds": 7200}}, "timers.night_seconds"),
        ({"vote_window": 0}, "vote_window"),
        ({"vote_window": 61}, "vote_window"),
    ],
)
def test_settings_refuse_values_the_bot_cannot_use(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(SettingsError) as caught:
        GuildSettings(GUILD, **changes)
    assert caught.value.field == field
