"""The stream server under load: event to viewer latency, what the viewers cost the tables, the connection caps.

Run: python benchmarks/stream.py [--scenario one|many|both] [--rounds 3] [--step 0.5] [--commands 60] [--no-pin]
(about 7 minutes with the defaults: twelve plays of about 30 s, each in a fresh process; ``--scenario many``
alone, the one the noise test means most for, about 4)

Scenarios: ``one`` is one table watched by 500 viewers; ``many`` is 50 tables watched by 20 each
(``both``, the default, plays these two); ``mixed`` (only when asked for) is 50 tables, one watched
by 500 and the others by 10 each: whether the others' floor changes wait behind the big one's writes.
Each scenario is played ``--rounds`` times with its viewers and as often with nobody watching (no
links, no feeds, no viewers' process), the two kinds alternating (unwatched then watched, then
watched then unwatched, ...) so a change in the machine's load falls on both alike. Every play is
a fresh process, so none inherits another's heap. The spread of the unwatched plays' floor-change
p99 is the noise: the viewers cost the tables nothing measurable when every watched play's p99 is
inside it (no higher than the highest unwatched one), which the last lines state.

Floor-change latency: from the moment a command that passes the floor was due (its place on the
table's schedule) to ``Table.submit`` having applied it, over every table. The tables are the
core's ``Table`` (the runtime the bot runs, with a log, effects and voice that do nothing), each
replaying the commands of a game the ``random`` strategy of ``mafiabot.tools.simulate`` played, one
every ``--step`` seconds (tables offset from each other). The stream server is the bot's own
(``mafiabot.host.web``), its links kept in memory here.

The viewers are another process (``client`` mode of this script), as real viewers are other
machines: one aiohttp session holding every stream, parsing each event. With two cores or more the
server's process is pinned to one core and the viewers' to another (``--no-pin``: both float), so
the viewers do not take the tables' core; the other work on the machine still shares both.
Latency: from just before ``Table.submit`` of a command to the viewer reading the frame it made
(both clocks are the machine's ``time.time()``), over every frame the public tier was sent and
every viewer. Also printed: how late a 50 ms ``call_later`` tick ran in the server's loop during
play (the game loop's own lag), the collector's passes during play (full ones scan every object
the process holds, its thousand connections too), and what a flood of 50 streams on one link got.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import print_table, summary_ms
from engine import CLASSIC, Command, Event, Game
from mafiabot.core.fairplay import Alert
from mafiabot.core.nicks import Blocked, Rename
from mafiabot.core.ports import Reply
from mafiabot.core.records import JSON, GameFinal, SeatInfo
from mafiabot.core.runtime import Lobby, Table
from mafiabot.host.web.server import StreamServer
from mafiabot.store.streams import StreamLink, StreamLinkRepo, token_hash
from mafiabot.tools.simulate import play_random_game

PLAYERS = [(1000 + seat, f"player {seat}") for seat in range(1, 11)]


class NoLog:
    """A game log that keeps nothing: the store is not what is measured."""

    async def append(self, game_id: int, seq: int, command: Mapping[str, JSON], events: Sequence[Mapping[str, JSON]],
                     *, actor_id: int | None, at: datetime) -> None:
        pass

    async def set_timer(self, game_id: int, timer_id: int, deadline: datetime | None, remaining: float | None) -> None:
        pass

    async def seat_players(self, game_id: int, seats: Sequence[SeatInfo], *, muting_in: int | None = None,
                           muting: Sequence[int] | None = None) -> None:
        pass

    async def set_discord_meta(self, game_id: int, meta: Mapping[str, JSON]) -> None:
        pass

    async def finish_game(self, game_id: int, final: GameFinal) -> None:
        pass


class NoEffects:
    """Nothing is shown on Discord."""

    def publish(self, table: Table, events: Sequence[Event], reply: Reply | None = None,
                shown: Callable[[], None] | None = None) -> None:
        if shown is not None:
            shown()

    def warn(self, table: Table, seat: int) -> None:
        pass

    async def finished(self, table: Table) -> None:
        pass


class NoVoice:
    """Every member edit goes through at once."""

    async def set_mute(self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
                       nick: Rename | None = None, table: int | None = None, batch: bool = False) -> bool:
        return True

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        return False

    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        pass

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        pass


class MemoryLinks:
    """The links in memory (the store's ``StreamLinkRepo`` contract, read per request as the bot's is)."""

    def __init__(self) -> None:
        self.links: dict[str, StreamLink] = {}

    async def issue_links(self, game_id: int, tokens: Mapping[str, str], delay: float, *, at: datetime) -> None:
        for tier, token in tokens.items():
            self.links[token_hash(token)] = StreamLink(game_id, tier, delay if tier == "broadcast" else 0.0,
                                                       revoked=False, expires_at=None)

    async def stream_link(self, token: str) -> StreamLink | None:
        return self.links.get(token_hash(token))

    async def expire_links(self, game_id: int, at: datetime) -> None:
        pass


class Tables:
    """The running tables by game id, and the listener each is built with: it wakes the tables' feeds."""

    def __init__(self) -> None:
        self.tables: dict[int, Table] = {}
        self._watchers: dict[int, list[Callable[[], None]]] = {}

    def running(self, game_id: int) -> Table | None:
        return self.tables.get(game_id)

    def watch(self, table: Table, woken: Callable[[], None]) -> Callable[[], None]:
        self._watchers.setdefault(table.id, []).append(woken)
        return lambda: self._watchers[table.id].remove(woken)

    def moved(self, table: Table) -> None:
        for woken in list(self._watchers.get(table.id, ())):
            woken()

    def ended(self, table: Table) -> None:
        pass

    def alert(self, table: Table, alert: Alert) -> None:
        pass

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        pass

    def opening_waits(self, table: Table) -> None:
        pass


def make_table(game_id: int, listener: Tables) -> Table:
    lobby = Lobby(id=game_id, guild_id=game_id, channel_id=game_id, voice_channel_id=game_id, judge_id=1,
                  ruleset=CLASSIC, language="en", seats=len(PLAYERS), players=list(PLAYERS))
    voice = NoVoice()
    return Table(game_id=game_id, lobby=lobby, seats=PLAYERS, game=Game(CLASSIC), log_store=NoLog(),
                 effects=NoEffects(), editor=voice, ledger=voice, time_scale=1.0, listener=listener)


async def lag_probe(lags: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        start = loop.time()
        await asyncio.sleep(0.05)
        lags.append(max(0.0, loop.time() - start - 0.05))


class GcWatch:
    """The collector's passes while ``armed``: how many of each generation, and how long each took."""

    def __init__(self) -> None:
        self.armed = False
        self.counts = [0, 0, 0]
        self.pauses: list[list[float]] = [[], [], []]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        elif self.armed:
            generation = info["generation"]
            self.counts[generation] += 1
            self.pauses[generation].append(time.perf_counter() - self._start)


async def play(table: Table, commands: Sequence[Command], step: float, offset: float,
               sent: dict[tuple[int, int], float], floor: list[float]) -> None:
    """Submit a command every ``step`` seconds on a fixed schedule; note when each was sent and floor changes' latency.

    A frame's id is the number of the game's events when it was made, times 1000: ``sent`` keys each
    command's submit time by the id of the frame that shows the table just after it.
    """
    loop = asyncio.get_running_loop()
    start = loop.time() + offset
    for index, command in enumerate(commands):
        due = start + index * step
        await asyncio.sleep(max(0.0, due - loop.time()))
        holder = table.game.state.floor
        before = time.time()
        await table.submit(command)
        if table.game.state.floor is not None and table.game.state.floor != holder:
            floor.append(loop.time() - due)
        sent[(table.id, len(table.game.events) * 1000)] = before


async def flood(url: str, count: int) -> dict[int, int]:
    """``count`` streams opened at once on one link: how many got each status."""
    statuses: dict[int, int] = {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        responses = await asyncio.gather(*(session.get(url + "/events") for _ in range(count)),
                                         return_exceptions=True)
        for response in responses:
            status = response.status if isinstance(response, aiohttp.ClientResponse) else -1
            statuses[status] = statuses.get(status, 0) + 1
            if isinstance(response, aiohttp.ClientResponse):
                response.close()
    return statuses


async def one_play(counts: Sequence[int], args: argparse.Namespace) -> dict[str, Any]:
    """One play of a table for each of ``counts``, with that many viewers (0: nobody, nothing of the stream made)."""
    tables, viewers = len(counts), sum(counts)
    links = MemoryLinks()
    registry = Tables()
    server = StreamServer(cast("StreamLinkRepo", links), registry, per_link=max(counts) + 10, total=viewers + 100)
    port = await server.start("127.0.0.1", 0)
    server.base_url = f"http://127.0.0.1:{port}"
    urls: list[str] = []
    games = []
    rng = random.Random(args.seed)
    for game_id in range(1, tables + 1):
        table = make_table(game_id, registry)
        registry.tables[game_id] = table
        if viewers:
            tokens = await server.issue(game_id, 0.0)
            urls += [server.url(tokens["public"])] * counts[game_id - 1]
        games.append((table, list(play_random_game(CLASSIC, 10, rng).history)[: args.commands]))
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "received.json"
        client = None
        if viewers:
            (Path(tmp) / "urls.json").write_text(json.dumps(urls))
            client = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "client", str(Path(tmp) / "urls.json"), str(out), str(args.viewers_core))
            # The viewers connect from another process: nothing here could signal it.
            while sum(len(feed.viewers) for feed in server.feeds.values()) < len(urls):  # noqa: ASYNC110
                await asyncio.sleep(0.1)
        gc.collect()
        forced = time.perf_counter()
        gc.collect()  # what one full pass costs now: it scans every object the process holds
        result["full_gc"] = round((time.perf_counter() - forced) * 1000, 1)
        result["objects"] = len(gc.get_objects())
        watch = GcWatch()
        gc.callbacks.append(watch)
        lags: list[float] = []
        stop = asyncio.Event()
        probe = asyncio.ensure_future(lag_probe(lags, stop))
        sent: dict[tuple[int, int], float] = {}
        floor: list[float] = []
        started = time.time()
        watch.armed = True
        await asyncio.gather(*(play(table, commands, args.step, args.step * i / tables, sent, floor)
                               for i, (table, commands) in enumerate(games)))
        await asyncio.sleep(1.0 if viewers else 0.0)
        watch.armed = False
        stop.set()
        await probe
        result |= {"seconds": round(time.time() - started, 1), "floor": floor, "lag_p99": summary_ms(lags)["p99"],
                   "gc": watch.counts, "gc_pauses": watch.pauses}
        if client is not None:
            result["flood"] = await flood(urls[0], 50)
        await server.close()
        if client is not None:
            await asyncio.wait_for(client.wait(), 120)
            shown = {(feed.game_id, frame.id) for feed in server.feeds.values() for frame in feed.frames
                     if frame.public_id == frame.id and (feed.game_id, frame.id) in sent}
            received = json.loads(out.read_text())
            result["latencies"] = [at - sent[(game_id, frame)] for game_id, frame, at in received
                                   if (game_id, frame) in shown]
            result["expected"] = sum(counts[game_id - 1] for game_id, _ in shown)
            result["frames"] = len(shown)
    return result


async def client(urls: list[str]) -> list[tuple[int, int, float]]:
    """Hold every stream, note each frame's arrival (game id, frame id, time) until the server ends them."""
    received: list[tuple[int, int, float]] = []
    game_of = {url: i for i, url in enumerate(dict.fromkeys(urls), 1)}

    async def one(session: aiohttp.ClientSession, url: str) -> None:
        async with session.get(url + "/events") as response:
            pending = b""
            async for chunk in response.content.iter_any():
                now = time.time()
                pending += chunk
                while b"\n\n" in pending:
                    block, pending = pending.split(b"\n\n", 1)
                    for line in block.split(b"\n"):
                        if line.startswith(b"id: "):
                            received.append((game_of[url], int(line[4:]), now))

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        await asyncio.gather(*(one(session, url) for url in urls), return_exceptions=True)
    return received


def pin(core: int) -> str:
    """Pin this process to ``core`` (-1: leave it to the system); the cores it may run on, as text."""
    if core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    return ",".join(map(str, cores))


SCENARIOS = {"one": [500], "many": [20] * 50, "mixed": [500] + [10] * 49}
"""Each scenario's tables, as the viewers each has when watched."""
TOLD = {"one": "1 table, 500 viewers", "many": "50 tables, 20 viewers each",
        "mixed": "50 tables, one with 500 viewers and 49 with 10 each"}


def run_play(name: str, watched: int, args: argparse.Namespace) -> dict[str, Any]:
    """One play, watched (1) or not (0), in a fresh process (this script's ``play`` mode): its result."""
    argv = [sys.executable, __file__, "play", name, str(watched), "--step", str(args.step),
            "--commands", str(args.commands), "--seed", str(args.seed)] + (["--no-pin"] if args.no_pin else [])
    done = subprocess.run(argv, check=False, capture_output=True, text=True)  # noqa: S603
    if done.returncode:
        sys.exit(f"a play failed ({' '.join(argv[2:])}):\n{done.stderr}")
    return cast("dict[str, Any]", json.loads(done.stdout.splitlines()[-1]))


def rank_p(higher: list[float], lower: list[float]) -> float:
    """The exact one-sided p of the Mann-Whitney test that ``higher`` is higher: the share of all splits of the
    pooled values into groups of these sizes whose first group is at least as far above the second."""
    def above(a: Sequence[float], b: Sequence[float]) -> float:
        return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)

    pooled = higher + lower
    seen = above(higher, lower)
    splits = list(itertools.combinations(range(len(pooled)), len(higher)))
    count = sum(above([pooled[i] for i in pick], [pooled[i] for i in range(len(pooled)) if i not in pick]) >= seen
                for pick in splits)
    return count / len(splits)


def ms(values: list[float]) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def report(name: str, plays: list[tuple[int, bool, dict[str, Any]]]) -> None:
    """Each play's row, then whether the watched plays' floor p99 stays inside the unwatched plays' spread."""
    viewers = sum(SCENARIOS[name])
    rows = []
    for index, watched, r in plays:
        turns = summary_ms(r["floor"])
        full = [p * 1000 for p in r["gc_pauses"][2]]
        late = summary_ms(r.get("latencies", []))
        rows.append([index, viewers if watched else "none", r.get("frames", "-"),
                     f"{len(r['latencies'])}/{r['expected']}" if watched else "-",
                     late["p50"] if watched else "-", late["p99"] if watched else "-", late["max"] if watched else "-",
                     len(r["floor"]), turns["p50"], turns["p99"], turns["max"], r["lag_p99"],
                     "/".join(map(str, r["gc"])), f"{sum(full):.0f}/{max(full, default=0):.0f}", r["objects"],
                     r["full_gc"],
                     r["seconds"], json.dumps(r["flood"]) if watched else "-"])
    print_table(f"{name}: {TOLD[name]} when watched", [
        "play", "viewers", "frames", "received", "p50 ms", "p99 ms", "max ms", "floor changes", "floor p50 ms",
        "floor p99 ms", "floor max ms", "loop lag p99 ms", "gc passes 0/1/2", "full gc ms total/max",
        "objects", "one full gc ms", "seconds", "flood of 50 on one link (status: count)"], rows)
    quiet = [summary_ms(r["floor"])["p99"] for _, watched, r in plays if not watched]
    loud = [summary_ms(r["floor"])["p99"] for _, watched, r in plays if watched]
    pooled_quiet = summary_ms([x for _, watched, r in plays if not watched for x in r["floor"]])["p99"]
    pooled_loud = summary_ms([x for _, watched, r in plays if watched for x in r["floor"]])["p99"]
    latencies = summary_ms([x for _, watched, r in plays if watched for x in r["latencies"]])
    inside = max(loud) <= max(quiet)
    p = rank_p(loud, quiet)
    print(f"{name}: floor p99 unwatched {ms(quiet)} ms (the noise: {min(quiet):.1f}-{max(quiet):.1f}); "
          f"watched {ms(loud)} ms; pooled over the plays {pooled_quiet:.1f} unwatched, {pooled_loud:.1f} watched")
    print(f"{name}: every watched floor p99 at most the highest unwatched: {'yes' if inside else 'no'}; "
          f"watched higher by an exact one-sided rank test over the plays: p = {p:.3f} "
          f"(the smallest possible is {1 / math.comb(len(plays), len(loud)):.3f}: every watched above every unwatched)")
    print(f"{name}: the viewers' cost to the floor changes is within noise: {'YES' if inside and p > 0.05 else 'NO'} "
          "(both: inside the spread, and p > 0.05)")
    changes = min(len(r["floor"]) for _, _, r in plays)
    if changes < 100:
        print(f"{name}: only {changes} floor changes a play: their p99 is the slowest one, which one hiccup of the "
              "machine decides; the floor p50 column says more")
    print(f"{name}: event to viewer over every watched play: p50 {latencies['p50']:.1f} ms, "
          f"p99 {latencies['p99']:.1f} ms, max {latencies['max']:.1f} ms "
          f"({'within' if latencies['p99'] <= 250 else 'OVER'} the 250 ms goal)")
    print()


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "client":
        pin(int(sys.argv[4]))
        received = asyncio.run(client(json.loads(Path(sys.argv[2]).read_text())))
        Path(sys.argv[3]).write_text(json.dumps(received))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("mode", nargs="*", help=argparse.SUPPRESS)  # ``play <scenario> <0|1>``: one play
    parser.add_argument("--scenario", choices=["one", "many", "mixed", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=3, help="plays of each kind (watched, unwatched) per scenario")
    parser.add_argument("--step", type=float, default=0.5, help="seconds between a table's commands")
    parser.add_argument("--commands", type=int, default=60, help="commands each table plays")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-pin", action="store_true", help="leave the server and the viewers on any core")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    split = not args.no_pin and cores >= 2 and hasattr(os, "sched_setaffinity")
    args.viewers_core = 1 if split else -1
    if args.mode:
        name, watched = args.mode[1], int(args.mode[2])
        pin(0 if split else -1)
        print(json.dumps(asyncio.run(one_play([n * watched for n in SCENARIOS[name]], args))))
        return
    began, load = time.time(), os.getloadavg()
    print(f"stream server on loopback; {cores} cores; server's process on core(s) {0 if split else 'any'}, "
          f"viewers' process on core(s) {1 if split else 'any'}; every play a fresh process; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start")
    print("latency: from submit to a viewer reading the frame it made; floor change: from due to applied; "
          "gc: the collector's passes of each generation during play")
    print()
    for name in ("one", "many") if args.scenario == "both" else (args.scenario,):
        plays: list[tuple[int, bool, dict[str, Any]]] = []
        for round_ in range(args.rounds):
            for watched in (False, True) if round_ % 2 == 0 else (True, False):
                plays.append((len(plays) + 1, watched, run_play(name, int(watched), args)))
        report(name, plays)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end; {time.time() - began:.0f} s in all")


if __name__ == "__main__":
    main()
