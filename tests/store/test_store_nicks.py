"""The nickname ledger: the nickname to give back, kept from before the rename until it is back."""

from __future__ import annotations

import dataclasses

from engine import CLASSIC
from mafiabot.core.records import GuildSettings
from mafiabot.store import Store

GUILD = 4242


async def test_the_first_noted_nickname_is_kept_until_it_is_cleared(store: Store) -> None:
    game = await store.create_game(guild_id=GUILD, channel_id=1, voice_channel_id=2, ruleset=CLASSIC)
    await store.record_nicks(GUILD, [(10, "Anya"), (11, None)], game)
    # A second note (a seat nickname a crash left behind, say) never replaces the member's own one.
    await store.record_nicks(GUILD, [(10, "3 · Anya")], game)
    await store.record_nicks(GUILD + 1, [(10, "Elsewhere")], None)
    owed = await store.owed_nicks(GUILD)
    assert [(r.user_id, r.nick, r.game_id) for r in owed] == [(10, "Anya", game), (11, None, game)]
    assert len(await store.owed_nicks()) == 3
    await store.clear_nicks(GUILD, [10, 99])
    assert [r.user_id for r in await store.owed_nicks(GUILD)] == [11]


async def test_seat_nicknames_is_a_saved_setting_off_by_default(store: Store) -> None:
    assert not (await store.get_settings(GUILD)).seat_nicknames
    await store.save_settings(dataclasses.replace(GuildSettings(GUILD), seat_nicknames=True))
    assert (await store.get_settings(GUILD)).seat_nicknames
