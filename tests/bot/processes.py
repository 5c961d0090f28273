"""``mafiabot run`` in its own OS process against an emulator in the test's process: start, SIGKILL, restart."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mafiabot.emulator import Emulator
from mafiabot.emulator.state import Application
from mafiabot.emulator.testing import Table
from mafiabot.store import GuildSettings, Store, sqlite_url
from tests.harness import FAST_GLOBAL

SEED = 7


class BotProcess:
    """The real bot, as a user runs it, with a config file written for this emulator and database.

    ``discord`` adds keys to the config's ``[discord]`` section (``guild_ids``, ``shard_ids``, ...);
    with ``shard`` set, the process counts as connected once that shard's session is.
    """

    def __init__(
        self, emu: Emulator, app: Application, workdir: Path, database_url: str, *,
        name: str = "bot", shard: int | None = None, discord: dict[str, Any] | None = None,
    ) -> None:
        self.emu = emu
        self.app = app
        self.shard = shard
        self.db = database_url
        self.config = workdir / f"{name}.toml"
        self.log = workdir / f"{name}.log"
        settings = {"token": app.token, "api_base": emu.api_url, "gateway_url": emu.gateway_url, **(discord or {})}
        lines = ["[discord]", *(f"{key} = {json.dumps(value)}" for key, value in settings.items()),
                 "[database]", f"url = {json.dumps(database_url)}",
                 "[game]", f"seed = {SEED}", 'seat_order = "join"']
        self.config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.proc: asyncio.subprocess.Process | None = None
        self.starts = 0
        self._log_file = self.log.open("ab")

    def sessions(self) -> list[Any]:
        """This process's gateway sessions in the emulator (its shard's only, for a shard process)."""
        return [s for s in self.emu.gateway.connected(self.app) if self.shard is None or s.shard_id == self.shard]

    async def start(self) -> None:
        """Start ``mafiabot run`` and wait until its gateway session is up."""
        environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mafiabot", "run", "--config", str(self.config),
            stdout=self._log_file, stderr=subprocess.STDOUT, env=environment,
        )
        self.starts += 1
        await self.emu.wait_for(lambda: bool(self.sessions()), timeout=60)

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs; wait until the emulator sees the connection drop."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        await self.emu.wait_for(lambda: not self.sessions(), timeout=30)

    async def signal_stop(self, signum: int = signal.SIGTERM) -> int:
        """Send ``signum`` (a service manager's stop is SIGTERM) and wait for the process to end: its status."""
        assert self.proc is not None
        self.proc.send_signal(signum)
        status = await asyncio.wait_for(self.proc.wait(), timeout=60)
        await self.emu.wait_for(lambda: not self.sessions(), timeout=30)
        return status

    async def stop(self) -> None:
        """Stop politely (SIGINT), or kill after 20 s."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout=20)
            except TimeoutError:
                await self.kill()
        self._log_file.close()


GLOBAL_RATE_LIMIT = FAST_GLOBAL.rate_limits.global_limit[0]
"""The bot keeps the emulator's global limit (the tests' ``FAST_GLOBAL``), as it keeps Discord's."""


async def bot_and_store(env: Table, workdir: Path, **settings: Any) -> tuple[BotProcess, Store]:
    """A bot process for this guild and the store it writes, with a short Night 0 and ``settings`` saved."""
    bot = BotProcess(env.emu, env.app, workdir, sqlite_url(workdir / "mafia.sqlite3"), discord={
        "guild_ids": [env.guild.id], "global_rate_limit": GLOBAL_RATE_LIMIT,
    })
    store = await Store.open(bot.db)
    await store.save_settings(GuildSettings(env.guild.id, timers={"night_zero_seconds": 1}, **settings))
    return bot, store


def shard_process(emu: Emulator, shard: int, shards: int, url: str, workdir: Path) -> BotProcess:
    """``mafiabot run`` for one shard of ``shards``, all of them in one database."""
    return BotProcess(emu, next(iter(emu.world.applications.values())), workdir, url, name=f"shard{shard}",
                      shard=shard, discord={"shard_count": shards, "shard_ids": [shard],
                                            "global_rate_limit": GLOBAL_RATE_LIMIT})


async def owed_mutes_after_stop(store: Any, bots: Iterable[BotProcess], guild_id: int | None = None) -> list[Any]:
    """The mute ledger once every bot process has stopped politely.

    A process clears a finished game's ledger rows right after Discord answers its unmutes, a moment
    after the emulator has seen them; a polite stop lets those writes land first, so the ledger then
    says what the bot still owes.
    """
    for bot in bots:
        await bot.stop()
    return list(await store.owed_mutes(guild_id))
