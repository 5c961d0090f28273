"""A process that shares the shards with others started with the same config (``mafiabot.core.leases``).

Each shard the process holds runs as a bot of its own (one gateway connection, its own tables); a
shard gained starts one, which resumes the shard's open games from the log as any restart does,
and a shard lost or handed over closes it without a word to Discord. Every request of a shard's bot
waits for its lease to be confirmed and is refused once it is lost, and every write of its games
carries the lease's fencing number (``Database.fencing``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from mafiabot.core.clock import LoopClock
from mafiabot.core.leases import LeaseKeeper, LeaseStore
from mafiabot.host.bot import MafiaBot, make_bot, warm_up
from mafiabot.host.shared_limit import token_limit

if TYPE_CHECKING:
    from mafiabot.host.settings import Config
    from mafiabot.store import OwnerLock, Store

log = logging.getLogger(__name__)


def uses_leases(config: Config) -> bool:
    """Leases when the database is PostgreSQL and no ``shard_ids`` are set; SQLite is one process's alone."""
    return not config.discord.shard_ids and config.database.url.startswith("postgresql")


def new_owner() -> str:
    """A name for this process among the others: ``host:pid:nonce``, never the same twice."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def shard_config(config: Config, shard: int) -> Config:
    """``config`` for the bot of one shard; only shard 0's bot syncs the commands."""
    discord = config.discord.model_copy(
        update={"shard_ids": [shard], "sync_commands": config.discord.sync_commands and shard == 0},
    )
    return config.model_copy(update={"discord": discord})


class LeasedProcess:
    """The bots of the shards this process holds, started and stopped as its leases come and go."""

    def __init__(
        self, config: Config, store: Store, leases: LeaseStore, *, owner: str | None = None,
        identify_turn: Callable[[int], Awaitable[None]] | None = None, lock: OwnerLock | None = None,
    ) -> None:
        """``leases`` should have a connection of its own: a beat must not queue behind the games' writes.

        ``identify_turn`` spaces the IDENTIFYs of every process of the token (``IdentifyTurns.turn``);
        ``lock`` is the process's liveness lock (PostgreSQL), which ``leases`` notes at each beat.
        """
        self.config = config
        self.store = store
        self.identify_turn = identify_turn
        self.lock = lock
        self.owner = owner or new_owner()
        self.global_limit = token_limit(config.discord, config.token, processes=self._processes)
        """The token's limit, shared by this process's shards."""
        self.bots: dict[int, MafiaBot] = {}
        self._runs: dict[int, asyncio.Task[None]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.keeper = LeaseKeeper(
            leases, owner=self.owner, shard_count=config.discord.shard_count, clock=LoopClock(),
            ttl=config.discord.lease_seconds, gained=self._gained, lost=self._lost, busy=self._busy,
            alive=self._alive, settle=True,
        )
        self._relocking: asyncio.Task[None] | None = None

    def _alive(self) -> bool:
        """Whether this process holds its liveness lock (always, without one)."""
        return self.lock is None or self.lock.key is not None

    def _lock_lost(self) -> None:
        """The liveness lock's connection dropped: give every shard up and come back as a new process."""
        if self._relocking is None or self._relocking.done():
            self._relocking = asyncio.get_running_loop().create_task(self._relock())

    async def _relock(self) -> None:
        assert self.lock is not None  # noqa: S101
        self.owner = new_owner()
        await self.keeper.reset(self.owner)
        while True:
            try:
                await self.lock.acquire(wake=self.keeper.poke, lost=self._lock_lost)
                break
            except Exception as exc:
                log.warning("could not take a liveness lock (%s); trying again", exc)
                await asyncio.sleep(self.keeper.interval)
        self.keeper.poke()

    def _processes(self) -> int:
        """The processes alive at the last beat: while Redis is away, each keeps that share of the limit."""
        return max(self.keeper.members, 1)

    def _busy(self, shard: int) -> bool:
        """Whether the shard is resuming, or has a lobby or a table (playing, or ending): it stays then."""
        bot = self.bots.get(shard)
        if bot is None:
            return False
        tables = bot.tables
        return not tables.recovered.is_set() or bool(tables.lobbies) or bool(tables.tables)

    async def _gained(self, shard: int) -> None:
        async def gate() -> bool:
            return await self.keeper.confirmed(shard)

        bot = make_bot(shard_config(self.config, shard), self.store, global_limit=self.global_limit, gate=gate,
                       identify_turn=self.identify_turn, processes=self._processes)
        self.bots[shard] = bot
        self._runs[shard] = asyncio.get_running_loop().create_task(self._run(shard, bot))

    async def _run(self, shard: int, bot: MafiaBot) -> None:
        try:
            async with bot:
                await bot.start(self.config.token)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("shard %s stopped with an error", shard)

    async def _lost(self, shard: int) -> None:
        """Close the shard's bot in the background, so the beats go on meanwhile.

        Its requests and writes are refused from now on: the keeper no longer counts the shard as held.
        """
        bot = self.bots.pop(shard, None)
        run = self._runs.pop(shard, None)
        if bot is None:
            return
        bot.handed_over = True
        closing = asyncio.get_running_loop().create_task(self._close(bot, run))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    @staticmethod
    async def _close(bot: MafiaBot, run: asyncio.Task[None] | None) -> None:
        try:
            await bot.close()
        except Exception:
            log.exception("closing a shard handed over failed")
        if run is not None:
            await asyncio.gather(run, return_exceptions=True)

    async def run(self) -> None:
        """Beat until cancelled; then close every shard politely and let the leases go at once."""
        self.store.db.fencing = self.keeper.fences
        warm_up()  # a standby that takes a shard over then builds its bot without a second of imports
        if self.lock is not None:
            await self.lock.acquire(wake=self.keeper.poke, lost=self._lock_lost)
        self.keeper.start()
        log.info("sharing %s shards as %s", self.config.discord.shard_count, self.owner)
        try:
            await asyncio.Event().wait()
        finally:
            self.keeper.claiming = False
            if self._relocking is not None:
                self._relocking.cancel()
            await self.keeper.started()
            for shard in list(self.bots):
                bot = self.bots.pop(shard, None)
                if bot is None:
                    continue  # lost meanwhile: ``_lost`` closes it
                await bot.close()
                run = self._runs.pop(shard, None)  # a lease lost while the bot closed took its run along
                if run is not None:
                    await asyncio.gather(run, return_exceptions=True)
            await asyncio.gather(*self._closing, return_exceptions=True)
            await self.keeper.stop()
            if self.lock is not None:
                await self.lock.release()
            await self.global_limit.close()


__all__ = ["LeasedProcess", "shard_config", "uses_leases"]
