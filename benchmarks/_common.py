"""Shared parts of the bot benchmarks: the emulator process, the bot in this process, scripted players.

The emulator runs in its own process (``emulator_proc.py``) with the round-trip latency and
Discord's rate limits; the real bot runs in the benchmark process, so its tables and voice
reconcilers can be read directly. Players act only through the emulator's control API, as people
act through Discord: they click the bot's buttons, pick in its menus and react to its votes.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import discord
from discord.ext import commands

from mafiabot.core.runtime import Table
from mafiabot.host.bot import MafiaBot, make_bot, point_at
from mafiabot.host.presenter import VOTE_EMOJI, current_vote_message, custom_id
from mafiabot.store import Store, sqlite_url
from mafiabot.testing import UPDATE_MESSAGE
from mafiabot.testing.hands import Hands, Menu, Strategy, Where
from mafiabot.tools.config import parse_config

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STEP_TIMEOUT = 60.0


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``; nan for none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summary_ms(values: list[float]) -> dict[str, float]:
    """p50/p95/p99/max of seconds, in milliseconds."""
    return {k: round(percentile(values, q) * 1000, 1) for k, q in (("p50", 50), ("p95", 95), ("p99", 99),
                                                                     ("max", 100))} | {"n": len(values)}


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    """A plain fixed-width table."""
    print(title)
    widths = [max(len(str(x)) for x in [h, *(r[i] for r in rows)]) for i, h in enumerate(header)]
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths, strict=True)))
    for row in rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths, strict=True)))
    print()


class EmulatorProcess:
    """``emulator_proc.py`` in another process; ``info`` is the world it printed."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.proc: subprocess.Popen[str] | None = None
        self.info: dict[str, Any] = {}

    def __enter__(self) -> EmulatorProcess:
        argv = [sys.executable, str(HERE / "emulator_proc.py")]
        for key, value in self.options.items():
            if value is True:
                argv.append(f"--{key.replace('_', '-')}")
            elif value not in (None, False):
                argv += [f"--{key.replace('_', '-')}", str(value)]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)  # noqa: S603
        assert self.proc.stdout is not None  # noqa: S101
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the emulator did not start")
        self.info = json.loads(line)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


class Control:
    """The emulator's control API, as the players' hands."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64))

    async def act(self, user: int, action: str, **body: Any) -> dict[str, Any]:
        async with self.session.post(f"{self.url}/_emulator/users/{user}/act",
                                     json={"action": action, **body}) as response:
            data: dict[str, Any] = await response.json(content_type=None)
            return data

    async def get(self, path: str) -> Any:
        async with self.session.get(f"{self.url}/_emulator/{path}") as response:
            return await response.json(content_type=None)

    async def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        async with self.session.post(f"{self.url}/_emulator/{path}", json=body or {}) as response:
            return await response.json(content_type=None)

    async def close(self) -> None:
        await self.session.close()


class MessageIndex:
    """The newest bot message carrying each control, per channel, kept from the bot's own gateway events."""

    def __init__(self, bot: commands.Bot) -> None:
        self.latest: dict[tuple[int, str], int] = {}
        self.changed = asyncio.Event()
        bot.add_listener(self.on_message, "on_message")

    async def on_message(self, message: discord.Message) -> None:
        for row in message.components:
            for item in getattr(row, "children", [row]):
                cid = getattr(item, "custom_id", None)
                if cid:
                    self.latest[(message.channel.id, cid)] = message.id
        self.changed.set()
        self.changed = asyncio.Event()

    async def wait(self, channel_id: int, cid: str, timeout: float = STEP_TIMEOUT) -> int:  # noqa: ASYNC109
        deadline = time.monotonic() + timeout
        while (channel_id, cid) not in self.latest:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no message with {cid} in {channel_id}")
            waiter = self.changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.wait(), left)
        return self.latest[(channel_id, cid)]


@dataclass
class BotRun:
    """The bot running in this process against the emulator process."""

    bot: MafiaBot
    store: Store
    control: Control
    index: MessageIndex
    task: asyncio.Task[None]
    tmp: tempfile.TemporaryDirectory[str] | None = None

    async def close(self) -> None:
        await self.bot.close()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
            await asyncio.wait_for(self.task, 10)
        await self.store.close()
        await self.control.close()
        if self.tmp is not None:
            self.tmp.cleanup()


async def start_bot(
    info: dict[str, Any], *, helpers: int = 0, time_scale: float = 0.1, database: str | None = None,
    extra: dict[str, Any] | None = None, max_messages: int = 5000,
) -> BotRun:
    """Log the real bot in to the emulator process and wait until every guild is ready."""
    point_at(info["api"], info["gateway"])
    tmp = None
    if database is None:
        tmp = tempfile.TemporaryDirectory()
        database = sqlite_url(Path(tmp.name) / "bench.sqlite3")
    store = await Store.open(database)
    settings: dict[str, Any] = {
        "discord": {"api_base": info["api"], "gateway_url": info["gateway"], "sync_commands": True,
                    # The bot keeps the emulator's global limit, as it keeps Discord's 50 per second.
                    "global_rate_limit": max(int(info["global_per_second"]), 1)},
        "game": {"time_scale": time_scale, "seat_order": "join"},
        "voice": {"helper_tokens": info["helper_tokens"][:helpers]},
    }
    for section, values in (extra or {}).items():
        settings.setdefault(section, {}).update(values)
    bot = make_bot(parse_config(settings), store, guild_ready_timeout=0.05, max_messages=max_messages)

    async def identify_now(shard_id: int | None, *, initial: bool = False) -> None:
        return None

    bot.before_identify_hook = identify_now  # type: ignore[method-assign]
    index = MessageIndex(bot)
    await bot.login(info["token"])
    task = asyncio.create_task(bot.connect(reconnect=True))
    await asyncio.wait_for(bot.wait_until_ready(), 120)
    return BotRun(bot, store, Control(info["url"]), index, task, tmp)


@dataclass
class GuildInfo:
    """One guild of the emulator's world: its channels, 12 players and a judge."""

    guild_id: int
    text: int
    voice: int
    players: list[int]
    judge: int

    @classmethod
    def of(cls, data: dict[str, Any], players: int = 12) -> GuildInfo:
        users = [int(u) for u in data["user_ids"]]
        return cls(int(data["guild_id"]), int(data["text_channel_id"]), int(data["voice_channel_id"]),
                   users[:players], users[players])


async def open_table(run: BotRun, g: GuildInfo, *, ruleset: str = "classic") -> Table:
    """Everyone sits in voice, the judge opens a table, the players join, the judge starts."""
    control = run.control
    await asyncio.gather(*(control.act(u, "join_voice", channel_id=str(g.voice)) for u in [*g.players, g.judge]))
    guild = run.bot.get_guild(g.guild_id)
    for _ in range(200):
        if guild is not None and all((m := guild.get_member(u)) and m.voice for u in g.players):
            break
        await asyncio.sleep(0.05)
    reply = await control.act(g.judge, "command", channel_id=str(g.text), name="mafia new",
                              options={"ruleset": ruleset, "seats": len(g.players)}, timeout=30)
    lobby = reply["message"]
    join = next(c["custom_id"] for row in lobby["components"] for c in row["components"] if ":join:" in c["custom_id"])
    for user in g.players:
        await control.act(user, "click", message_id=lobby["id"], custom_id=join, timeout=30)
    await control.act(g.judge, "command", channel_id=str(g.text), name="mafia start", timeout=30)
    for _ in range(600):
        table = run.bot.tables.table_in(g.text)
        if table is not None:
            return table
        await asyncio.sleep(0.05)
    raise RuntimeError("the table did not start")


@dataclass
class Pace:
    """How long a speaker holds the floor before saying "Thank you"."""

    speech: float = 10.0
    """Seconds for a day speech (and every other floor)."""
    instant_first: int = 0
    """This many floors, from the first speech of day 1, are passed the instant they arrive."""
    first_holds: float = 0.0
    """The first of those floors is held this long before its "Thank you" (the rest stay instant)."""


@dataclass
class Driver(Hands[int]):
    """Plays one table to its end through the control API (the demo's scripted strategy)."""

    run: BotRun
    g: GuildInfo
    table: Table
    strategy: Strategy
    pace: Pace = field(default_factory=Pace)
    floors: int = 0
    pass_times: list[float] = field(default_factory=list)
    _moved: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.run.bot.tables.watch(self.table, self._moved.set)

    async def until(self, predicate: Callable[[], bool], timeout: float = STEP_TIMEOUT) -> None:  # noqa: ASYNC109
        """Wait until ``predicate()`` holds, woken by the table; fail with its state after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                state = self.table.game.state
                raise TimeoutError(f"table {self.table.id} did not move: {state.phase} floor={state.floor} "
                                   f"paused={state.paused} waiting={self.table.game.waiting()}")
            self._moved.clear()
            if predicate():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._moved.wait(), min(left, 1.0))

    async def play(self, max_steps: int = 3000) -> None:
        """Act until the game is over."""
        for _ in range(max_steps):
            if self.table.over:
                return
            marker = len(self.table.game.events)
            await self.act()
            await self.until(self.moved_since(marker))
        raise RuntimeError("the game did not end")

    def moved_since(self, marker: int) -> Callable[[], bool]:
        """Whether the table has moved past ``marker`` events (or is over)."""
        table = self.table
        return lambda: len(table.game.events) != marker or table.over

    def user(self, seat: int) -> int:
        return self.table.user_at(seat)

    async def speak(self, seat: int, kind: str) -> None:
        """The floor holder nominates and speaks for the pace's time, or passes at once (``Pace.instant_first``)."""
        table = self.table
        thanks = custom_id("thanks", table.id)
        message = await self.control("text", thanks)
        instant = self.floors < self.pace.instant_first and table.game.state.day == 1
        self.floors += 1
        if instant:
            if self.floors == 1 and self.pace.first_holds:
                await asyncio.sleep(self.pace.first_holds)
            self.pass_times.append(time.monotonic())
            await self.run.control.act(self.user(seat), "click", message_id=str(message), custom_id=thanks,
                                       wait=False)
            return
        started = time.monotonic()
        await self.nominate(seat, kind)
        await asyncio.sleep(max(0.0, self.pace.speech - (time.monotonic() - started)))
        if self.holds_floor(seat):
            await self.click(seat, message, thanks)

    # -- the hands: the players' clicks, picks and reactions through the control API --

    def _channel(self, where: Where) -> int:
        return self.g.text if where == "text" else int(self.table.meta.thread or 0)

    def latest(self, where: Where, cid: str) -> int | None:
        return self.run.index.latest.get((self._channel(where), cid))

    async def control(self, where: Where, cid: str) -> int:
        return await self.run.index.wait(self._channel(where), cid)

    async def click(self, seat: int, message: int, cid: str) -> Menu[int] | None:
        reply = await self.run.control.act(self.user(seat), "click", message_id=str(message), custom_id=cid)
        menu = reply.get("message")
        if not menu or not menu.get("components"):
            return None
        return Menu(int(menu["id"]), menu["components"][0]["components"][0]["custom_id"])

    async def select(self, seat: int, message: int, cid: str, values: Sequence[str]) -> bool:
        reply = await self.run.control.act(self.user(seat), "select", message_id=str(message), custom_id=cid,
                                           values=list(values))
        return bool(reply.get("response_type") == UPDATE_MESSAGE)

    async def react(self, seat: int, message: int) -> None:
        await self.run.control.act(self.user(seat), "react", message_id=str(message), emoji=VOTE_EMOJI)

    async def wait_vote_message(self, target: int | str) -> int:
        deadline = time.monotonic() + STEP_TIMEOUT
        while (found := current_vote_message(self.table, target)) is None:
            if time.monotonic() > deadline:
                raise TimeoutError("no vote message")
            await asyncio.sleep(0.02)
        return found


def routes_per_game(counts: dict[str, int], games: int) -> dict[str, float]:
    """Requests per game by route, most first."""
    ordered = collections.Counter(counts).most_common()
    return {route: round(n / max(games, 1), 1) for route, n in ordered}


# -- bot-side players and process figures (benchmarks 4 and 5) -------------------------------------


class LoopLag:
    """A ticker on the running loop: every ``interval`` s a ``call_later`` tick records how late it fired."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.lags: list[float] = []
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._due = loop.time() + self.interval
        self._handle = loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.lags.append(max(0.0, now - self._due))
        self._due = now + self.interval
        self._handle = loop.call_at(self._due, self._tick)

    def stop(self) -> list[float]:
        if self._handle is not None:
            self._handle.cancel()
        lags, self.lags = self.lags, []
        return lags


def rss_bytes() -> int:
    """This process's resident memory."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def join_voice_all(run: BotRun, guilds: list[GuildInfo], *, judge: bool = True) -> None:
    """Every player (and judge) of ``guilds`` joins its guild's voice channel; wait until the bot saw it."""
    control = run.control
    users = [(u, g) for g in guilds for u in [*g.players, *([g.judge] if judge else [])]]
    sem = asyncio.Semaphore(64)

    async def join(user: int, g: GuildInfo) -> None:
        async with sem:
            await control.act(user, "join_voice", channel_id=str(g.voice))

    await asyncio.gather(*(join(u, g) for u, g in users))
    deadline = time.monotonic() + STEP_TIMEOUT
    while time.monotonic() < deadline:
        if all((o := run.bot.get_guild(g.guild_id)) is not None and (m := o.get_member(u)) is not None and m.voice
               for u, g in users):
            return
        await asyncio.sleep(0.1)
    raise TimeoutError("the bot did not see every player in voice")


@dataclass(frozen=True)
class Schema:
    """A throwaway PostgreSQL schema: its name, a URL whose connections use it, and an engine outside it."""

    name: str
    url: str
    admin: Any


@contextlib.contextmanager
def throwaway_schema(url: str) -> Iterator[Schema]:
    """A fresh schema of the database at ``url`` for one benchmark run, dropped afterwards whatever happens."""
    from sqlalchemy import create_engine, make_url, text

    name = f"bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
    scoped = make_url(url).update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(
        hide_password=False)
    try:
        yield Schema(name, scoped, admin)
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
        admin.dispose()
