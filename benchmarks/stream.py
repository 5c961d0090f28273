"""The stream server under load: event to viewer latency on loopback, and the connection caps.

Run: python benchmarks/stream.py [--scenario one|many|both] [--step 0.5] [--commands 60]

Scenarios: ``one`` is one table watched by 500 viewers; ``many`` is 50 tables watched by 20 each.
Each is run twice in the same process, with its viewers and with none (no stream links, no feeds),
to print what the viewers cost the tables themselves: the floor-change latency, from the moment a
command that passes the floor was due (its place on the table's schedule) to ``Table.submit``
having applied it (the feed's frames, when there are viewers, are made inside it).
The tables are the core's ``Table`` (the runtime the bot runs, with a log, effects and voice that
do nothing), each replaying the commands of a game the ``random`` strategy of
``mafiabot.tools.simulate`` played, one every ``--step`` seconds (tables offset from each other).
The stream server is the bot's own (``mafiabot.host.web``), its links kept in memory here.

The viewers are another process (``client`` mode of this script): one aiohttp session holding
every stream, parsing each event. Latency: from just before ``Table.submit`` of a command to the
viewer reading the frame it made (both clocks are the machine's ``time.time()``), over every
frame and every viewer. Also printed: how late a 50 ms ``call_later`` tick ran in the server's
loop during play (the game loop's own lag), and what a flood of connections to one link got.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
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


async def play(table: Table, commands: Sequence[Command], step: float, offset: float,
               sent: dict[tuple[int, int], float], server: StreamServer, floor: list[float]) -> None:
    """Submit a command every ``step`` seconds on a fixed schedule; note frames sent and floor changes' latency."""
    loop = asyncio.get_running_loop()
    start = loop.time() + offset
    feed = server.feeds.get(table.id)
    for index, command in enumerate(commands):
        due = start + index * step
        await asyncio.sleep(max(0.0, due - loop.time()))
        holder = table.game.state.floor
        before = time.time()
        await table.submit(command)
        if table.game.state.floor is not None and table.game.state.floor != holder:
            floor.append(loop.time() - due)
        if feed is None:
            continue
        frame = feed.frames[-1]
        if frame.public_id == frame.id:  # a command that changed what the public tier shows (not a night's act)
            sent[(table.id, frame.id)] = before


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


async def scenario(name: str, tables: int, viewers: int, args: argparse.Namespace) -> list[Any]:
    links = MemoryLinks()
    registry = Tables()
    server = StreamServer(cast("StreamLinkRepo", links), registry, per_link=viewers + 10,
                          total=tables * viewers + 100)
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
            urls += [server.url(tokens["public"])] * viewers
        games.append((table, list(play_random_game(CLASSIC, 10, rng).history)[: args.commands]))
    if not viewers:
        return await unwatched(name, tables, games, server, args)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "received.json"
        (Path(tmp) / "urls.json").write_text(json.dumps(urls))
        client = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "client", str(Path(tmp) / "urls.json"), str(out))
        # The viewers connect from another process: nothing here could signal it.
        while sum(len(feed.viewers) for feed in server.feeds.values()) < len(urls):  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        lags: list[float] = []
        stop = asyncio.Event()
        probe = asyncio.ensure_future(lag_probe(lags, stop))
        sent: dict[tuple[int, int], float] = {}
        floor: list[float] = []
        started = time.time()
        await asyncio.gather(*(play(table, commands, args.step, args.step * i / tables, sent, server, floor)
                               for i, (table, commands) in enumerate(games)))
        await asyncio.sleep(1.0)
        stop.set()
        await probe
        played = time.time() - started
        capped = await flood(urls[0], 50)
        await server.close()
        await asyncio.wait_for(client.wait(), 120)
        received = json.loads(out.read_text())
    latencies = [at - sent[(game_id, frame)] for game_id, frame, at in received if (game_id, frame) in sent]
    frames = len(sent)
    expected = frames * viewers
    late = summary_ms(latencies)
    turns = summary_ms(floor)
    return [name, tables, viewers, frames, f"{len(latencies)}/{expected}", late["p50"], late["p99"], late["max"],
            summary_ms(lags)["p99"], len(floor), turns["p50"], turns["p99"], round(played, 1), json.dumps(capped)]


async def unwatched(name: str, tables: int, games: list[tuple[Table, list[Command]]], server: StreamServer,
                    args: argparse.Namespace) -> list[Any]:
    """The same tables and commands with nobody watching: no links, no feeds, no viewers' process."""
    lags: list[float] = []
    stop = asyncio.Event()
    probe = asyncio.ensure_future(lag_probe(lags, stop))
    floor: list[float] = []
    started = time.time()
    await asyncio.gather(*(play(table, commands, args.step, args.step * i / tables, {}, server, floor)
                           for i, (table, commands) in enumerate(games)))
    stop.set()
    await probe
    played = time.time() - started
    await server.close()
    turns = summary_ms(floor)
    return [name, tables, 0, "-", "-", "-", "-", "-", summary_ms(lags)["p99"], len(floor), turns["p50"],
            turns["p99"], round(played, 1), "-"]


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


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "client":
        received = asyncio.run(client(json.loads(Path(sys.argv[2]).read_text())))
        Path(sys.argv[3]).write_text(json.dumps(received))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenario", choices=["one", "many", "both"], default="both")
    parser.add_argument("--step", type=float, default=0.5, help="seconds between a table's commands")
    parser.add_argument("--commands", type=int, default=60, help="commands each table plays")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = []
    if args.scenario in ("one", "both"):
        rows.append(asyncio.run(scenario("one", 1, 500, args)))
        rows.append(asyncio.run(scenario("one, unwatched", 1, 0, args)))
    if args.scenario in ("many", "both"):
        rows.append(asyncio.run(scenario("many", 50, 20, args)))
        rows.append(asyncio.run(scenario("many, unwatched", 50, 0, args)))
    print(f"stream server on loopback, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end; "
          "latency from submit to a viewer reading the frame; floor change from due to applied")
    print_table("", ["scenario", "tables", "viewers/table", "frames", "received", "p50 ms", "p99 ms", "max ms",
                     "loop lag p99 ms", "floor changes", "floor p50 ms", "floor p99 ms", "seconds",
                     "flood of 50 on one link (status: count)"], rows)


if __name__ == "__main__":
    main()
