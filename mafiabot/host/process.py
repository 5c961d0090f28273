"""``mafiabot run``: one process of the bot, until it is stopped."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING

from mafiabot.host.bot import make_bot, point_at
from mafiabot.host.leased import LeasedProcess, uses_leases

if TYPE_CHECKING:
    from mafiabot.host.settings import Config
    from mafiabot.store import Store


async def run_bot(config: Config) -> None:
    """Open the store and run the bot until it is stopped."""
    from mafiabot.store import Store

    point_at(config.discord.api_base, config.discord.gateway_url)
    store = await Store.open(config.database.url)
    terminated = stop_on_sigterm()
    try:
        if uses_leases(config):
            await run_leased(config, store)
        else:
            bot = make_bot(config, store)
            async with bot:
                await bot.start(config.token)
    except asyncio.CancelledError:
        if not terminated.is_set():
            raise
        # SIGTERM (``systemctl stop``): the bot closed as after Ctrl-C; the process ends normally.
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
    finally:
        await store.close()


async def run_leased(config: Config, store: Store) -> None:
    """Share the shards with the other processes; the leases get a connection and worker of their own.

    The IDENTIFYs of every process take turns through the database (``IdentifyTurns``), and the
    process holds a liveness lock for its life (``OwnerLock``), so a kill hands its shards on at once.
    """
    from mafiabot.store import Database, IdentifyTurns, LeaseRepo, OwnerLock

    lease_db = await Database.open(config.database.url, migrate=False)
    turns = IdentifyTurns(lease_db)
    lock = OwnerLock(config.database.url, interval=config.discord.lease_seconds / 3)
    try:
        await LeasedProcess(config, store, LeaseRepo(lease_db, lock=lock), identify_turn=turns.turn, lock=lock).run()
    finally:
        await lease_db.close()


def stop_on_sigterm() -> asyncio.Event:
    """Make SIGTERM stop the running task as SIGINT does (``asyncio.run`` cancels it); the event says it came.

    A service manager stops with SIGTERM: without this the process dies at once, status 143, and
    the tables do not lift their mutes.
    """
    terminated = asyncio.Event()
    task = asyncio.current_task()
    if task is None:
        return terminated

    def terminate() -> None:
        if not terminated.is_set():  # a second SIGTERM must not cut the polite stop short
            terminated.set()
            task.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on this platform or thread
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminate)
    return terminated
