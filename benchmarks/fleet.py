"""Processes that share the shards, for real: failover, IDENTIFYs, the global limit and the leases' load.

Run: python benchmarks/fleet.py [--kills 20] [--processes 3] [--shards 3] [--lease 6]
     [--redis redis://127.0.0.1:6379/0] [--url postgresql+psycopg://root@127.0.0.1:5432/test]

``--processes`` real ``mafiabot run`` processes with the same config (no ``shard_ids``) against one
emulator (in this process, Discord's limits: 50 requests per second per token, one IDENTIFY per
5 s, ``max_concurrency`` 1) and a fresh schema of the PostgreSQL at ``--url``, the global limit
shared through the Redis at ``--redis``. Before they start, each shard's guild gets an open game
in the database, played partway (as ``benchmarks/recovery.py`` fills it), with its clocks far off.

- start: every process at once; the IDENTIFYs the emulator saw in each 5 s window until every
  shard is connected once (Discord refuses a second one per window).
- failover, ``--kills`` times, each at least one IDENTIFY turn (5.5 s) after the last connect, as
  a crash in a running fleet comes: SIGKILL the process that holds shard 0; the time until the game of
  each shard it held says "The host is back" from another process (the kill seen, claim, IDENTIFY
  turn, connect and resume), and where it goes: when the lease would have run out, when another
  process held it, when the emulator let its IDENTIFY through; then start the killed process
  again (it stands by or takes its share).
- the leases' database load: with every shard held and nothing happening, PostgreSQL's own counts
  of statements on the lease tables (``pg_stat_user_tables``: index and sequential scans, rows
  written) over ``--idle`` seconds, per second per process.
- over the limit: the requests the emulator refused with a 429 over the whole run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text

from benchmarks._common import GuildInfo, percentile, throwaway_schema
from benchmarks.recovery import fill
from mafiabot.emulator import Emulator, EmulatorConfig
from mafiabot.emulator.ratelimit import RateLimitConfig
from mafiabot.emulator.state import Application, ChannelType
from mafiabot.emulator.testing import BOT_PERMISSIONS
from mafiabot.store import GuildSettings, Store

DEFAULT_URL = "postgresql+psycopg://root@127.0.0.1:5432/test"
LEASE_TABLES = ("shard_leases", "lease_members", "identify_turns")
FAR = 3600
TURN = 5.5
"""Seconds between two IDENTIFYs of one rate-limit key (``IdentifyTurns.window``)."""


class Process:
    """One ``mafiabot run`` with the fleet's config."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config = config
        self.log = log
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
        with self.log.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "mafiabot", "run", "--config", str(self.config),
                stdout=log, stderr=asyncio.subprocess.STDOUT, env=env,
            )

    def joined(self) -> int:
        """How many times this process has started sharing (its log says so once its leases run)."""
        return self.log.read_text(encoding="utf-8", errors="replace").count("sharing ") if self.log.exists() else 0

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.returncode is None else None

    async def kill(self) -> None:
        assert self.proc is not None  # noqa: S101
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                await self.kill()


class Fleet:
    def __init__(self, emu: Emulator, app: Application, store: Store, shards: int) -> None:
        self.emu = emu
        self.app = app
        self.store = store
        self.shards = shards
        self.guilds: list[GuildInfo] = []
        for shard in range(shards):
            while True:
                guild = emu.create_guild(f"Club {shard}")
                if (guild.id >> 22) % shards == shard:
                    break
            textc = emu.create_channel(guild, "table")
            voice = emu.create_channel(guild, "Table voice", ChannelType.GUILD_VOICE)
            people = [emu.create_scripted_user(f"s{shard}p{i + 1}", guild) for i in range(11)]
            emu.add_bot(guild, app, BOT_PERMISSIONS)
            self.guilds.append(GuildInfo(guild.id, textc.id, voice.id, [p.id for p in people[:10]], people[10].id))

    def host_back(self, shard: int) -> int:
        channel = self.emu.world.channels[self.guilds[shard].text]
        return sum(1 for m in self.emu.messages(channel) if "The host is back" in m.content)

    def sessions(self, shard: int) -> int:
        return sum(1 for s in self.emu.gateway.connected(self.app) if s.shard_id == shard)

    async def owners(self) -> list[int | None]:
        return [int(lease.owner.split(":")[-2]) if lease.owner else None for lease in await self.store.leases.leases()]

    async def until(self, check: object) -> None:
        deadline = time.monotonic() + 120.0
        while time.monotonic() < deadline:
            result = check() if callable(check) else check
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(0.02)
        raise TimeoutError("the fleet never got there")


def windows(stamps: list[float], width: float = 5.0) -> list[int]:
    """IDENTIFYs per consecutive ``width``-second window from the first."""
    if not stamps:
        return []
    first = stamps[0]
    counts = [0] * (int((stamps[-1] - first) // width) + 1)
    for stamp in stamps:
        counts[int((stamp - first) // width)] += 1
    return counts


def busiest(stamps: list[float], width: float = 5.0) -> int:
    """The most IDENTIFYs in any ``width``-second span."""
    return max((sum(1 for t in stamps if s <= t < s + width) for s in stamps), default=0)


def lease_statements(admin: object, schema: str) -> int:
    with admin.begin() as connection:  # type: ignore[attr-defined]
        row = connection.execute(text(
            "SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0) + n_tup_ins + n_tup_upd"
            " + n_tup_del), 0) "
            "FROM pg_stat_user_tables WHERE schemaname = :schema AND relname = ANY(:tables)"),
            {"schema": schema, "tables": list(LEASE_TABLES)}).one()
    return int(row[0])


async def run(args: argparse.Namespace, url: str, schema: str, admin: object, workdir: Path) -> dict[str, object]:
    limits = RateLimitConfig(global_limit=(50, 1.0))
    async with Emulator(EmulatorConfig(rate_limits=limits, max_concurrency=1)) as emu:
        emu.spec.skip_reason = "a load benchmark"
        app = emu.create_application("mafiabot")
        store = await Store.open(url)
        fleet = Fleet(emu, app, store, args.shards)
        timers = dict.fromkeys(("speech_seconds", "night_seconds", "defense_seconds", "last_word_seconds"), FAR)
        for g in fleet.guilds:
            await store.save_settings(GuildSettings(g.guild_id, timers=timers))
        lengths, _ = await fill(url, fleet.guilds, 12, args.seed, muted=False)
        for game_id in lengths:
            game = await store.get_game(game_id)
            if game.timer_id is not None:  # the clock of the phase left far off: the game waits for the kills
                await store.set_timer(game_id, game.timer_id, datetime.now(UTC) + timedelta(seconds=FAR))
        lines = ["[discord]", f"token = {json.dumps(app.token)}", f"api_base = {json.dumps(emu.api_url)}",
                 f"gateway_url = {json.dumps(emu.gateway_url)}", f"shard_count = {args.shards}",
                 f"lease_seconds = {args.lease}", "global_rate_limit = 50",
                 f"global_limit_redis = {json.dumps(args.redis)}",
                 "[database]", f"url = {json.dumps(url)}"]
        procs = []
        for i in range(args.processes):
            config = workdir / f"p{i}.toml"
            config.write_text("\n".join(lines) + "\n", encoding="utf-8")
            config.chmod(0o600)
            procs.append(Process(config, workdir / f"p{i}.log"))
        try:
            # Start: every process at once, until every shard is connected once.
            began = emu.gateway.identifies[-1][0] if emu.gateway.identifies else None
            await asyncio.gather(*(p.start() for p in procs))
            await fleet.until(lambda: all(fleet.host_back(s) >= 1 and fleet.sessions(s) == 1
                                          for s in range(args.shards)))
            start_ids = [t for t, *_ in emu.gateway.identifies if began is None or t > began]
            # Idle: the leases' statements while nothing else happens.
            await asyncio.sleep(2.0)  # a moment for the start's statistics to reach PostgreSQL
            before = lease_statements(admin, schema)
            await asyncio.sleep(args.idle)  # the span measured: the load is its rate
            idle_rate = (lease_statements(admin, schema) - before) / args.idle / args.processes
            # Failover.
            times: list[float] = []
            parts: dict[str, list[float]] = {"expiry": [], "claim": [], "identify": [],
                                           "resumed after IDENTIFY": []}
            firsts: list[float] = []
            held_counts: list[int] = []
            for _ in range(args.kills):
                # A crash in a running fleet comes long after the last connect: the IDENTIFY turn is
                # free. Back to back, the first game would also wait for the turn the previous took.
                last = max((t for t, *_ in emu.gateway.identifies), default=0.0)
                await asyncio.sleep(max(0.0, last + TURN - time.monotonic()))
                leases = await store.leases.leases()
                owners = [int(lease.owner.split(":")[-2]) if lease.owner else None for lease in leases]
                victim = next(p for p in procs if p.pid == owners[0])
                victim_pid = victim.pid
                held = [s for s, o in enumerate(owners) if o == victim_pid]
                backs = {s: fleet.host_back(s) for s in held}
                held_counts.append(len(held))
                killed_at = time.monotonic()
                killed_wall = datetime.now(UTC)
                await victim.kill()
                for s in held:
                    parts["expiry"].append((leases[s].expires_at - killed_wall).total_seconds())
                pending, unclaimed = set(held), set(held)
                while pending:
                    now = time.monotonic()
                    if unclaimed:
                        current = await fleet.owners()
                        for s in list(unclaimed):
                            if current[s] != victim_pid:
                                parts["claim"].append(now - killed_at)
                                unclaimed.discard(s)
                    for s in list(pending):
                        if fleet.host_back(s) > backs[s]:
                            if len(pending) == len(held):
                                firsts.append(now - killed_at)
                            times.append(now - killed_at)
                            pending.discard(s)
                            ids = [t for t, _app, shard in emu.gateway.identifies if shard == s and t > killed_at]
                            parts["identify"].append(ids[0] - killed_at if ids else math.nan)
                            parts["resumed after IDENTIFY"].append(now - ids[0] if ids else math.nan)
                    if now - killed_at > 120:
                        raise TimeoutError("a killed process's games never resumed")
                    await asyncio.sleep(0.01)
                joined = victim.joined()
                await victim.start()  # back as a standby before the next kill, as a service manager restarts it
                await fleet.until(lambda: victim.joined() > joined  # noqa: B023
                                  and all(fleet.sessions(s) == 1 for s in range(args.shards)))
            over = sum(1 for r in emu.rest.requests if r.status == 429 and r.app_id == app.id)
            requests = sum(1 for r in emu.rest.requests if r.app_id == app.id)
        finally:
            await asyncio.gather(*(p.stop() for p in procs))
            await store.close()
    return {"start_identifies": windows(start_ids), "start_busiest": busiest(start_ids),
            "refusals": emu.gateway.identify_refusals, "idle_rate": idle_rate, "failover": times,
            "over": over, "requests": requests, "parts": parts,
            "firsts": firsts, "held": held_counts}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_URL)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--lease", type=float, default=6.0)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds over which the leases' load is counted")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with throwaway_schema(args.url) as schema, tempfile.TemporaryDirectory() as workdir:
        result = await run(args, schema.url, schema.name, schema.admin, Path(workdir))
    times = list(result["failover"])  # type: ignore[call-overload]
    print(f"{args.processes} processes, {args.shards} shards, lease_seconds = {args.lease:g}, "
          f"global limit 50/s shared through {args.redis or 'nothing (each keeps its whole limit)'}")
    print(f"start: IDENTIFYs per 5 s window {result['start_identifies']}, at most {result['start_busiest']} "
          f"in any 5 s; refused over the whole run: {result['refusals']}")
    print(f"failover over {len(times)} games of {args.kills} kills (SIGKILL to 'The host is back' elsewhere): "
          f"p50 {percentile(times, 50):.1f} s, p99 {percentile(times, 99):.1f} s, max {max(times):.1f} s, "
          f"mean {statistics.mean(times):.1f} s")
    firsts = list(result["firsts"])  # type: ignore[call-overload]
    held = list(result["held"])  # type: ignore[call-overload]
    print(f"the killed process held {', '.join(f'{n} shards {held.count(n)} times' for n in sorted(set(held)))}; "
          f"the first of its games back: p50 {percentile(firsts, 50):.1f} s, p99 {percentile(firsts, 99):.1f} s, "
          f"max {max(firsts):.1f} s (the others wait one IDENTIFY turn, 5.5 s, each)")
    parts: dict[str, list[float]] = result["parts"]  # type: ignore[assignment]
    print("where it goes, from the SIGKILL (p50 / p99): " + ", ".join(
        f"{name} {percentile(values, 50):.1f} / {percentile(values, 99):.1f} s"
        for name, values in parts.items()) + " (expiry: the lease's, as the killed process last renewed it; "
          "claim: another process holds it; identify: the emulator let its IDENTIFY through)")
    print(f"lease statements (scans and rows written on {', '.join(LEASE_TABLES)}) while idle: "
          f"{result['idle_rate']:.2f} per second per process")
    print(f"requests over the global limit (429s): {result['over']} of {result['requests']}")


if __name__ == "__main__":
    asyncio.run(main())
