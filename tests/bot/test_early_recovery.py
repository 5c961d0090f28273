"""A shard's games resume as soon as every guild READY listed has arrived, not when discord.py fires READY.

discord.py fires READY only after ``guild_ready_timeout`` seconds without a new guild (two by
default), since it cannot tell which GUILD_CREATE is the last. READY lists the shard's guilds, so
the bot knows: once none is unavailable, their voice states are known and its games can resume.
A process that takes a dead process's shard over resumes its games that much sooner.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from mafiabot.emulator.server import connect_discord_py
from mafiabot.emulator.testing import emulated_guild
from mafiabot.host.bot import MafiaBot
from mafiabot.host.settings import Config
from mafiabot.store import Store, sqlite_url


async def test_games_resume_once_every_guild_has_arrived_before_ready(tmp_path: Path) -> None:
    async with emulated_guild(members=1) as env:
        store = await Store.open(sqlite_url(tmp_path / "mafia.sqlite3"))
        config = Config.model_validate({"discord": {"guild_ids": [env.guild.id]}})
        bot = MafiaBot(config, store, guild_ready_timeout=3600)  # READY an hour after the last guild
        connect_discord_py(env.emu.url)
        try:
            await bot.login(env.token)
            connection = asyncio.create_task(bot.connect(reconnect=False))
            recovered = asyncio.create_task(bot.tables.recovered.wait())
            done, _ = await asyncio.wait({recovered, connection}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
            assert recovered in done  # the old bot waited for READY here, an hour away
            assert not bot.is_ready()
            assert all(not guild.unavailable for guild in bot.guilds)
        finally:
            await bot.close()
            with contextlib.suppress(Exception):
                await connection
            await store.close()
