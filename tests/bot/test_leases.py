"""Shard leases end to end: three ``mafiabot run`` processes with no ``shard_ids`` share three shards
through one PostgreSQL database, against one emulator, with a game in each shard.

A process SIGKILLed mid-game: another takes its shard over once the lease runs out and resumes the
game from the log; nothing the players did is lost and nobody stays muted. A process SIGSTOPped
past its lease: another takes over; woken, the old one sends nothing, writes nothing and lets go
of its gateway shard. Every waiting is on something observable (the lease rows, the emulator's
sessions and messages, a process's log), never on a sleep.
"""

from __future__ import annotations

import asyncio
import functools
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Phase
from mafiabot.core.leases import Lease
from mafiabot.emulator import Emulator
from mafiabot.emulator.state import ChannelType
from mafiabot.emulator.testing import BOT_PERMISSIONS, assert_no_spec_violations
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.store import GuildSettings, Store
from tests.bot.processes import GLOBAL_RATE_LIMIT, BotProcess, ProcessHands, StoredTable, next_look
from tests.bot.test_kill import RACED, assert_each_window_once
from tests.bot.test_mutes_e2e import FirstCandidate
from tests.harness import FAST_GLOBAL as FAST
from tests.store.conftest import postgres_schema

SHARDS = 3
PLAYERS = 10
LEASE = 6.0
"""Seconds a lease lasts unrenewed: short, so a takeover comes within seconds of a kill, and long
enough that a process on a busy machine still renews in time (it acts for 4 s after each renewal)."""
WAIT = 90.0
"""The longest any one condition is waited for: generous, for a loaded machine."""


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL schema for this test, dropped afterwards."""
    with postgres_schema() as url:
        yield url


def pid_of(lease: Lease) -> int | None:
    """The process id in a lease's owner (``host:pid:nonce``), None for a free shard."""
    return int(lease.owner.split(":")[-2]) if lease.owner else None


class SharingProcess(BotProcess):
    """A process with no shard of its own: which shards it runs, the lease rows say."""

    async def kill(self) -> None:
        """SIGKILL, and wait for the process to end (the others' sessions stay)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()


class Fleet:
    """The emulator, the store, one guild per shard and the processes that share the shards."""

    def __init__(self, emu: Emulator, store: Store, workdir: Path, url: str) -> None:
        self.emu = emu
        self.store = store
        self.app = next(iter(emu.world.applications.values()))
        self.envs = [self._guild(shard) for shard in range(SHARDS)]
        self.procs = [
            SharingProcess(emu, self.app, workdir, url, name=f"p{i}", discord={
                "shard_count": SHARDS, "lease_seconds": LEASE, "global_rate_limit": GLOBAL_RATE_LIMIT,
            })
            for i in range(SHARDS)
        ]
        self.tables: list[StoredTable] = []
        self.hands: list[ProcessHands] = []

    def _guild(self, shard: int) -> EmuTable:
        emu = self.emu
        while True:
            guild = emu.create_guild(f"Club {shard}")
            if (guild.id >> 22) % SHARDS == shard:
                break
        text = emu.create_channel(guild, "table")
        voice = emu.create_channel(guild, "Table voice", ChannelType.GUILD_VOICE)
        people = [emu.create_scripted_user(f"s{shard}p{i + 1}", guild) for i in range(PLAYERS + 1)]
        member = emu.add_bot(guild, self.app, BOT_PERMISSIONS)
        return EmuTable(emu, self.app, guild, text, voice, people, member)

    def alive(self) -> dict[int, BotProcess]:
        return {p.proc.pid: p for p in self.procs if p.proc is not None and p.proc.returncode is None}

    async def leases(self) -> list[Lease]:
        return await self.store.leases.leases()

    def sessions(self, shard: int) -> int:
        return sum(1 for s in self.emu.gateway.connected(self.app) if s.shard_id == shard)

    async def until(self, check: Callable[[], Any], what: str) -> None:
        """Wait until ``check`` (sync or async) holds, reading again at each change in the emulator."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while loop.time() < deadline:
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await next_look(self.emu)
        raise AssertionError(f"never: {what}")

    async def balanced(self) -> bool:
        """Every shard held by a live process, one each, and connected once."""
        owners = [pid_of(lease) for lease in await self.leases()]
        alive = self.alive()
        return (len(owners) == SHARDS and all(o in alive for o in owners) and len(set(owners)) == len(alive)
                and all(self.sessions(s) == 1 for s in range(SHARDS)))

    async def all_held(self) -> bool:
        """Every shard held by a live process and connected once."""
        owners = [pid_of(lease) for lease in await self.leases()]
        alive = self.alive()
        return len(owners) == SHARDS and all(o in alive for o in owners) and all(
            self.sessions(s) == 1 for s in range(SHARDS))

    async def owner(self, shard: int) -> BotProcess:
        lease = (await self.leases())[shard]
        pid = pid_of(lease)
        assert pid is not None
        return self.alive()[pid]

    def host_back(self, shard: int) -> int:
        env = self.envs[shard]
        return sum(1 for m in self.emu.messages(env.text) if "The host is back" in m.content)

    async def start(self) -> None:
        for env in self.envs:
            settings = GuildSettings(env.guild.id, timers={"night_zero_seconds": 1, **RACED}, vote_window=60)
            await self.store.save_settings(settings)
        for proc in self.procs:
            await proc.start()
        await self.until(self.balanced, "three processes with a shard each")

    async def open_games(self) -> None:
        for env in self.envs:
            for person in env.members:
                person.join_voice(env.voice)
            judge = env.members[PLAYERS]
            reply = await judge.run_command(env.text, "mafia new", ruleset="classic", seats=PLAYERS, timeout=30)
            lobby = reply.message
            assert lobby is not None, reply.content
            join = next(c["custom_id"] for row in lobby.components for c in row["components"]
                        if ":join:" in c["custom_id"])
            for person in env.members[:PLAYERS]:
                await person.press(lobby, join, timeout=30)
            await judge.run_command(env.text, "mafia start", timeout=30)
            (game,) = await self.store.open_games(env.guild.id.__eq__)
            table = await StoredTable.open(self.store, game.id)
            self.tables.append(table)
            self.hands.append(ProcessHands(env, table, FirstCandidate(len(self.tables))))

    async def steps(self, shard: int, count: int) -> None:
        """Play ``count`` steps of a shard's game (fewer if it ends)."""
        table, hands = self.tables[shard], self.hands[shard]
        for _ in range(count):
            await table.refresh()
            if table.status != "open" or table.game.state.phase is Phase.ENDED:
                return
            await hands.step()

    async def finish(self, shard: int) -> None:
        await self.steps(shard, 3000)
        table = self.tables[shard]

        async def closed() -> bool:
            await table.refresh()
            return table.status != "open"

        await self.until(closed, f"the game of shard {shard} closed")
        assert table.status == "finished"

    def muted(self) -> list[int]:
        return [p.id for env in self.envs for p in env.members[:PLAYERS] if env.guild.members[p.id].mute]

    async def stop(self) -> None:
        for proc in self.procs:
            await proc.stop()


async def fleet_run(tmp_path: Path, url: str, scenario: Callable[[Fleet], Any]) -> Fleet:
    async with Emulator(FAST) as emu:
        emu.create_application("mafiabot")
        store = await Store.open(url)  # migrates once, before the processes start
        fleet = Fleet(emu, store, tmp_path, url)
        try:
            await fleet.start()
            await fleet.open_games()
            await scenario(fleet)
            await asyncio.gather(*(fleet.finish(shard) for shard in range(SHARDS)))
            for shard, env in enumerate(fleet.envs):
                assert fleet.hands[shard].lost() == [], shard
                assert_each_window_once(env)
                stored = await store.get_game(fleet.tables[shard].id)
                assert len([e for c in stored.log for e in c.events if e["type"] == "GameEnded"]) == 1
            await fleet.until(lambda: not fleet.muted(), "nobody muted once the games are over")
            # The processes took turns at IDENTIFY: Discord's max_concurrency (1 here) was never exceeded.
            assert emu.gateway.identify_refusals == 0
            assert len(emu.gateway.identifies) >= SHARDS
            await fleet.stop()
            assert await store.owed_mutes() == []
        finally:
            await fleet.stop()
            await store.close()
        assert_no_spec_violations(emu)
    return fleet


@pytest.mark.timeout(300)
async def test_a_killed_process_s_games_resume_on_another(pg_url: str, tmp_path: Path) -> None:
    killed: list[int] = []

    async def scenario(fleet: Fleet) -> None:
        await asyncio.gather(*(fleet.steps(shard, 4) for shard in range(SHARDS)))
        victim = await fleet.owner(0)
        before = (await fleet.leases())[0].fence
        back = fleet.host_back(0)
        assert victim.proc is not None
        killed.append(victim.proc.pid)
        await victim.kill()
        await fleet.until(lambda: fleet.host_back(0) > back, "the game of shard 0 resumed elsewhere")
        lease = (await fleet.leases())[0]
        assert pid_of(lease) in fleet.alive()
        assert lease.fence > before  # a new owner, a higher fencing number
        await fleet.until(fleet.all_held, "every shard held by the two processes left")

    fleet = await fleet_run(tmp_path, pg_url, scenario)
    assert killed
    assert killed[0] not in fleet.alive()


@pytest.mark.timeout(300)
async def test_a_process_paused_past_its_lease_wakes_and_acts_on_nothing(pg_url: str, tmp_path: Path) -> None:
    async def scenario(fleet: Fleet) -> None:
        await asyncio.gather(*(fleet.steps(shard, 4) for shard in range(SHARDS)))
        sleeper = await fleet.owner(0)
        assert sleeper.proc is not None
        back = fleet.host_back(0)
        log_before = sleeper.log.read_text(encoding="utf-8", errors="replace")
        sleeper.proc.send_signal(signal.SIGSTOP)
        try:
            await fleet.until(lambda: fleet.host_back(0) > back, "the game of shard 0 resumed elsewhere")
            owner = await fleet.owner(0)
            assert owner is not sleeper
            await fleet.steps(0, 4)  # the new owner plays on while the old one sleeps
        finally:
            sleeper.proc.send_signal(signal.SIGCONT)

        def let_go() -> bool:
            text = sleeper.log.read_text(encoding="utf-8", errors="replace")[len(log_before):]
            return "shard 0: lease taken by another process" in text

        await fleet.until(let_go, "the woken process saw its lease gone")
        await fleet.until(lambda: fleet.sessions(0) == 1, "only the new owner connected for shard 0")
        assert (await fleet.owner(0)) is not sleeper

    await fleet_run(tmp_path, pg_url, scenario)


def resumed(fleet: Fleet, backs: dict[int, int]) -> bool:
    """Every shard in ``backs`` said "The host is back" once more than it had."""
    return all(fleet.host_back(shard) > count for shard, count in backs.items())


@pytest.mark.timeout(300)
async def test_a_rolling_restart_of_every_process_loses_nothing(pg_url: str, tmp_path: Path) -> None:
    async def scenario(fleet: Fleet) -> None:
        for proc in fleet.procs:
            await asyncio.gather(*(fleet.steps(shard, 2) for shard in range(SHARDS)))
            assert proc.proc is not None
            pid = proc.proc.pid
            held = [s for s, lease in enumerate(await fleet.leases()) if pid_of(lease) == pid]
            backs = {shard: fleet.host_back(shard) for shard in held}
            proc.proc.send_signal(signal.SIGTERM)  # a service manager's stop: polite, leases let go
            assert await proc.proc.wait() == 0
            await fleet.until(functools.partial(resumed, fleet, backs), "the stopped process's games resumed elsewhere")
            await proc.start()
            await fleet.until(fleet.all_held, "every shard held once the process is back")

    await fleet_run(tmp_path, pg_url, scenario)
