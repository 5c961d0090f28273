"""How long the bot waits at connect for more servers before its tables resume comes from the config."""

from __future__ import annotations

from pathlib import Path

from mafiabot.host.bot import make_bot
from mafiabot.store import Store
from mafiabot.testing import migrated_sqlite
from mafiabot.tools.config import parse_config


async def test_the_wait_for_more_servers_at_connect_is_the_configs(tmp_path: Path) -> None:
    store = await Store.open(migrated_sqlite(tmp_path / "ready.sqlite3"))
    try:
        for discord, wait in (({}, 2.0), ({"guild_ready_timeout": 0.2}, 0.2),
                              ({"guild_ready_timeout": 0.2, "shard_count": 2}, 0.2)):
            bot = make_bot(parse_config({"discord": discord}), store)
            assert bot._connection.guild_ready_timeout == wait, discord  # what discord.py waits
    finally:
        await store.close()
