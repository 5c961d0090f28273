"""Shards: two ``mafiabot run`` processes (shard 0 and shard 1 of 2) share one PostgreSQL database.

Each process receives only its own shard's guilds, so a game belongs to the process of its guild's
shard. A game in each shard is played to the end; the process of shard 1 is SIGKILLed mid-game and
its replacement (same shard) picks the open game up from the database and finishes it, while the
other process never touches it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from mafiabot.emulator import Emulator
from mafiabot.emulator.state import ChannelType
from mafiabot.emulator.testing import BOT_PERMISSIONS, assert_no_spec_violations
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.store import GuildSettings, Store
from tests.bot.processes import owed_mutes_after_stop, shard_process
from tests.bot.test_kill import PLAYERS, Player
from tests.harness import RESTART_AT_ONCE as FAST
from tests.store.conftest import postgres_schema


def nobody_muted(env: EmuTable) -> bool:
    """No player of the guild's table is server-muted any more."""
    return not any(env.guild.members[p.id].mute for p in env.members[:PLAYERS])


SHARDS = 2


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL schema for this test, dropped afterwards (skips when no server answers)."""
    with postgres_schema() as url:
        yield url


def guild_on_shard(emu: Emulator, shard: int) -> EmuTable:
    """A guild whose id lands on ``shard`` (Discord's formula), with channels, players, a judge and the bot."""
    while True:
        guild = emu.create_guild(f"Club {shard}")
        if (guild.id >> 22) % SHARDS == shard:
            break
    app = next(iter(emu.world.applications.values()))
    text_channel = emu.create_channel(guild, "table")
    voice = emu.create_channel(guild, "Table voice", ChannelType.GUILD_VOICE)
    people = [emu.create_scripted_user(f"s{shard}p{i + 1}", guild) for i in range(PLAYERS + 1)]
    member = emu.add_bot(guild, app, BOT_PERMISSIONS)
    return EmuTable(emu, app, guild, text_channel, voice, people, member)


@pytest.mark.timeout(240)
async def test_two_shard_processes_play_their_games_and_a_killed_shard_is_resumed(pg_url: str, tmp_path: Path) -> None:
    async with Emulator(FAST) as emu:
        emu.create_application("mafiabot")
        envs = [guild_on_shard(emu, shard) for shard in range(SHARDS)]
        store = await Store.open(pg_url)  # migrates once, before the processes start
        bots = [shard_process(emu, shard, SHARDS, pg_url, tmp_path) for shard in range(SHARDS)]
        try:
            for env in envs:
                await store.save_settings(GuildSettings(env.guild.id, timers={"night_zero_seconds": 1}))
            await asyncio.gather(*(bot.start() for bot in bots))
            players = [Player(env, store, bot, kill) for env, bot, kill in
                       zip(envs, bots, ({}, {"speech": 3}), strict=True)]
            for player in players:
                await player.open_table()
            await asyncio.wait_for(asyncio.gather(*(p.play() for p in players)), 180)
            for player in players:
                stored = await store.get_game(player.game_id)
                assert stored.status != "open"
                assert stored.guild_id == player.env.guild.id
                ended = [e for c in stored.log for e in c.events if e["type"] == "GameEnded"]
                assert len(ended) == 1
            assert [bot.starts for bot in bots] == [1, 2]  # shard 1 was killed once and replaced
            assert players[1].phases_at_kill  # the kill happened mid-game
            # Each shard's process received only its own guild.
            for shard, bot in enumerate(bots):
                assert all(s.handles_guild(envs[shard].guild.id) for s in bot.sessions())
                assert not any(s.handles_guild(envs[1 - shard].guild.id) for s in bot.sessions())
            for env in envs:
                await emu.wait_for(functools.partial(nobody_muted, env), timeout=30)
            assert await owed_mutes_after_stop(store, bots) == []
        finally:
            for bot in bots:
                await bot.stop()
            await store.close()
        assert_no_spec_violations(emu)
