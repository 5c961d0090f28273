"""Shard leases end to end: three ``mafiabot run`` processes with no ``shard_ids`` share three shards
through one PostgreSQL database, against one emulator, with a game in each shard.

A process SIGKILLed mid-game: another takes its shard over at once (its liveness lock went free
with its connection) and resumes the game from the log; nothing the players did is lost and
nobody stays muted. A process SIGSTOPped past its lease: another takes over once it runs out;
woken, the old one sends nothing, writes nothing and lets go of its gateway shard: no post of its
table twice, no mute its game does not want. Three processes given the token's whole global
limit and one Redis: tables opening together in all three never go over Discord's limit, nor with
Redis away (each keeps a third). Every waiting is on
something observable (the lease rows, the emulator's sessions and messages, a process's log),
never on a sleep.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Phase
from mafiabot.core.leases import Lease
from mafiabot.core.voice import desired_mutes
from mafiabot.emulator import Emulator, EmulatorConfig
from mafiabot.emulator.ratelimit import RateLimitConfig
from mafiabot.emulator.state import ChannelType, Message
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

    async def start(self) -> None:
        """Start ``mafiabot run`` without waiting: whether it runs a shard, the fleet waits for on the leases.

        Processes started together each wait for the lease rows, not for a session of their own.
        """
        environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mafiabot", "run", "--config", str(self.config),
            stdout=self._log_file, stderr=subprocess.STDOUT, env=environment,
        )
        self.starts += 1

    async def kill(self) -> None:
        """SIGKILL, and wait for the process to end (the others' sessions stay)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()


class Fleet:
    """The emulator, the store, one guild per shard and the processes that share the shards."""

    def __init__(self, emu: Emulator, store: Store, workdir: Path, url: str, **discord: Any) -> None:
        self.emu = emu
        self.store = store
        self.app = next(iter(emu.world.applications.values()))
        self.envs = [self._guild(shard) for shard in range(SHARDS)]
        self.procs = [
            SharingProcess(emu, self.app, workdir, url, name=f"p{i}", discord={
                "shard_count": SHARDS, "lease_seconds": LEASE, "global_rate_limit": GLOBAL_RATE_LIMIT, **discord,
            })
            for i in range(SHARDS)
        ]
        self.tables: dict[int, StoredTable] = {}
        self.hands: dict[int, ProcessHands] = {}

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
        await asyncio.gather(*(proc.start() for proc in self.procs))
        await self.until(self.balanced, "three processes with a shard each")

    async def open_games(self) -> None:
        for shard in range(SHARDS):
            await self.open_game(shard)

    async def open_game(self, shard: int) -> None:
        """Seat a table in the shard's guild and start its game (one lobby, ten joins, the start)."""
        env = self.envs[shard]
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
        self.tables[shard] = table
        self.hands[shard] = ProcessHands(env, table, FirstCandidate(shard + 1))

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

    def posts(self, shard: int) -> list[Message]:
        """The bot's messages in the table's channel and its thread, oldest first."""
        env, app = self.envs[shard], self.app
        channels = [env.text.id, int(self.tables[shard].meta.thread or 0)]
        return [m for c in channels if c in self.emu.world.channels
                for m in self.emu.messages(self.emu.world.channels[c]) if m.author_id == app.user.id]

    async def muted_as_wanted(self, shard: int) -> bool:
        """Whether every member at the shard's table is server-muted exactly as its stored game wants."""
        table, env = self.tables[shard], self.envs[shard]
        await table.refresh()
        wanted = desired_mutes(table.game, table.seats, judge_id=env.members[PLAYERS].id)
        return all(env.guild.members[p.id].mute == wanted.get(p.id, False) for p in env.members)

    def muted(self) -> list[int]:
        return [p.id for env in self.envs for p in env.members[:PLAYERS] if env.guild.members[p.id].mute]

    async def stop(self) -> None:
        """Stop every process politely, at once: none takes over the shards another just let go."""
        await asyncio.gather(*(proc.stop() for proc in self.procs))


async def fleet_run(
    tmp_path: Path, url: str, scenario: Callable[[Fleet], Any], *, max_concurrency: int = 16,
) -> Fleet:
    """Run ``scenario`` on a fleet whose games then play to their end, and check what every test checks.

    ``max_concurrency`` is the token's (Discord gives 1, or 16 and more to large bots): with 16
    each shard has its rate-limit key, so only a shard connecting again within 5 s waits its turn.
    """
    async with Emulator(dataclasses.replace(FAST, max_concurrency=max_concurrency)) as emu:
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
            # The processes took turns at IDENTIFY: Discord's max_concurrency was never exceeded.
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
        # Taken because the killed process's liveness lock went free, not because its lease ran out.
        taker = (await fleet.owner(0)).log.read_text(encoding="utf-8", errors="replace")
        assert f"shard 0 is ours now (fence {lease.fence}): its process is gone" in taker
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
        posted_before = {m.id for m in fleet.posts(0)}
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
        await fleet.steps(0, 2)  # and plays on once the old one is awake
        # The woken process answered none of the clicks it was sent while asleep: no post of the
        # table twice (the new owner answered them), and no mute the game does not want.
        since = [m for m in fleet.posts(0) if m.id not in posted_before]
        shown = [(m.content, json.dumps(m.embeds, sort_keys=True), json.dumps(m.components, sort_keys=True))
                 for m in since]
        assert [m.content for m, key in zip(since, shown, strict=True) if shown.count(key) > 1] == []
        await fleet.until(functools.partial(fleet.muted_as_wanted, 0), "shard 0's table muted as its game wants")

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
            await proc.start()  # at once, as a service manager restarts it, while the others take over
            await fleet.until(functools.partial(resumed, fleet, backs), "the stopped process's games resumed elsewhere")
            await fleet.until(fleet.all_held, "every shard held once the process is back")

    # One rate-limit key for every shard, as most bots have: each takeover waits its turn to connect.
    await fleet_run(tmp_path, pg_url, scenario, max_concurrency=1)


DISCORD_LIMIT = 20
"""The token's global limit in the shared-limit test (requests per second): three tables opening at
once in three processes ask for more than that."""
SHARED_LIMIT = 16
"""What the processes are told to keep together: a little under Discord's, since a request reaches
Discord some time after its place was taken, and on a loaded machine that time varies by more than
the window's 10% slack."""
REDIS = "redis://127.0.0.1:6379/0"
REDIS_AWAY = "redis://127.0.0.1:1/0"
"""No Redis answers on port 1: every process falls back to its static share."""


def over_the_limit(emu: Emulator) -> list[str]:
    """The bot's requests Discord refused with a 429: only its global limit is within reach here."""
    app = next(iter(emu.world.applications.values()))
    return [f"{r.method} {r.route}" for r in emu.rest.requests if r.status == 429 and r.app_id == app.id]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("redis", [REDIS, REDIS_AWAY], ids=["shared", "redis-away"])
async def test_processes_that_share_the_token_keep_its_global_limit_together(
    pg_url: str, tmp_path: Path, redis: str,
) -> None:
    """Three processes each given the token's whole limit and one Redis: three tables open at once,
    one per process, and Discord never refuses a request over the limit. With Redis away each
    process keeps a third of the limit (the processes counted by the leases), never the whole."""
    limits = RateLimitConfig(member_edits=(100, 1.0), reactions=(100, 1.0), default_route=(1000, 1.0),
                             global_limit=(DISCORD_LIMIT, 1.0))
    config = EmulatorConfig(rate_limits=limits, max_concurrency=16)
    async with Emulator(config) as emu:
        emu.create_application("mafiabot")
        store = await Store.open(pg_url)
        fleet = Fleet(emu, store, tmp_path, pg_url, global_rate_limit=SHARED_LIMIT, global_limit_redis=redis)
        try:
            await fleet.start()
            await asyncio.gather(*(fleet.open_game(shard) for shard in range(SHARDS)))
            await asyncio.gather(*(fleet.steps(shard, 4) for shard in range(SHARDS)))
            assert over_the_limit(emu) == []
            logs = [p.log.read_text(encoding="utf-8", errors="replace") for p in fleet.procs]
            away = ["Redis is unreachable" in log for log in logs]
            assert away == [redis == REDIS_AWAY] * SHARDS
        finally:
            await fleet.stop()
            await store.close()
        assert_no_spec_violations(emu)
