"""The token's global limit shared by several processes through Redis (the real one at 127.0.0.1:6379).

Each ``RedisWindow`` stands for one process. The windows' times come from a clock the test moves,
so admissions are counted, never timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from mafiabot.host.leased import LeasedProcess
from mafiabot.host.ratelimit import GlobalLimit
from mafiabot.host.settings import DiscordSettings
from mafiabot.host.shared_limit import RedisWindow, token_key, token_limit
from mafiabot.store import Store, sqlite_url
from mafiabot.tools.check import Report, check_global_limit_redis
from mafiabot.tools.config import parse_config

REDIS = "redis://127.0.0.1:6379/0"
UNUSED = "redis://127.0.0.1:1/0"


class Clock:
    """Wall-clock seconds that move only when the test says."""

    def __init__(self, at: float = 1_000_000.0) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


@pytest.fixture
async def key() -> AsyncIterator[str]:
    name = f"test:global:{uuid.uuid4().hex}"
    yield name
    client = Redis.from_url(REDIS)
    await client.delete(name)
    await client.aclose()


@contextlib.asynccontextmanager
async def windows(*urls: str, key: str, clock: Clock, processes: int = 1) -> AsyncIterator[list[RedisWindow]]:
    made = [RedisWindow(url, key, now=clock, processes=lambda: processes, retry_every=5.0) for url in urls]
    try:
        yield made
    finally:
        for window in made:
            await window.close()


async def admitted(window: RedisWindow, tries: int, *, cap: int = 10, span: float = 1.0) -> int:
    return sum([await window.take(cap, span) == 0.0 for _ in range(tries)])


async def test_two_processes_together_never_take_more_than_the_limit_in_a_window(key: str) -> None:
    clock = Clock()
    async with windows(REDIS, REDIS, key=key, clock=clock) as (first, second):
        total = 0
        for _ in range(6):  # they take turns asking, each wants more than the whole limit
            total += await admitted(first, 3) + await admitted(second, 3)
        assert total == 10
        assert await first.take(10, 1.0) == pytest.approx(1.0)  # the oldest place frees a window later

        clock.at += 0.5  # half a window on: still full
        assert await admitted(second, 5) == 0
        clock.at += 0.5  # every place of the first moment has left the window
        assert await admitted(first, 8) + await admitted(second, 8) == 10
        assert first.shared
        assert second.shared


async def test_a_smaller_cap_leaves_the_rest_of_the_window_to_the_urgent(key: str) -> None:
    clock = Clock()
    async with windows(REDIS, REDIS, key=key, clock=clock) as (first, second):
        assert await admitted(first, 10, cap=8) == 8  # messages fill their part
        assert await admitted(second, 5, cap=10) == 2  # the reserve is still there for another's edits


async def test_a_floor_edit_of_one_process_goes_while_the_messages_of_another_fill_the_window(key: str) -> None:
    async with windows(REDIS, REDIS, key=key, clock=Clock()) as (first, second):
        messages = GlobalLimit(5, 60.0, slack=0.0, reserve=0.2, shared=first)  # 4 places for messages
        edits = GlobalLimit(5, 60.0, slack=0.0, reserve=0.2, shared=second)
        for _ in range(4):
            await messages.acquire()
        fifth = asyncio.create_task(messages.acquire())
        await asyncio.wait_for(edits.acquire(urgent=True), 30)  # a window of the clock never passes
        assert not fifth.done()
        assert messages.granted == 4
        assert edits.granted == 1
        fifth.cancel()


async def test_a_floor_edit_overtakes_the_queued_messages_of_its_own_process(key: str) -> None:
    # The wall clock: the pump waits out the window on the loop's. The window is long enough that
    # the mute is queued before it frees however loaded the machine (at 20 ms a stall let a message
    # through first).
    window = RedisWindow(REDIS, key)
    limit = GlobalLimit(1, 0.5, slack=0.0, shared=window)
    order: list[str] = []

    async def take(name: str, *, urgent: bool) -> None:
        await limit.acquire(urgent=urgent)
        order.append(name)

    await limit.acquire()  # the shared window is full: everything below queues
    tasks = [asyncio.create_task(take(f"message {i}", urgent=False)) for i in range(2)]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(take("mute", urgent=True)))
    await asyncio.gather(*tasks)
    await window.close()
    assert order == ["mute", "message 0", "message 1"]


async def test_with_redis_away_a_process_keeps_its_static_share_never_no_limit(key: str) -> None:
    clock = Clock()
    async with windows(UNUSED, key=key, clock=clock, processes=2) as (window,):
        assert await admitted(window, 20) == 5  # half of 10: two processes share the token
        assert not window.shared
        assert window.fallbacks == 1
        assert await admitted(window, 5, cap=8) == 0  # the messages' smaller part is counted too
        clock.at += 1.0
        assert await admitted(window, 20) == 5
        assert window.fallbacks == 1  # said once, not at every retry


class Proxy:
    """A TCP relay to the real Redis that the test can cut and restore: Redis away, then back."""

    def __init__(self) -> None:
        self.server: asyncio.Server | None = None
        self.port = 0
        self.links: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.links):
            writer.close()
        await self.server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", 6379)
        self.links.update({writer, up_writer})

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer), return_exceptions=True)
        self.links.difference_update({writer, up_writer})


async def test_when_redis_comes_back_the_processes_share_again(key: str) -> None:
    proxy = Proxy()
    await proxy.start()
    clock = Clock()
    url = f"redis://127.0.0.1:{proxy.port}/0"
    async with windows(url, REDIS, key=key, clock=clock, processes=2) as (cut, other):
        assert await admitted(cut, 4) == 4
        assert cut.shared
        await proxy.stop()
        clock.at += 1.0
        assert await admitted(cut, 20) == 5  # away: the static share
        assert not cut.shared
        await proxy.start()
        clock.at += 1.0
        assert await admitted(cut, 20) == 5  # still inside the wait before the next try
        clock.at += 5.0
        assert await admitted(cut, 6) + await admitted(other, 6) == 10  # shared again, over both
        assert cut.shared
    await proxy.stop()


def test_the_key_is_the_tokens_application_not_the_token() -> None:
    assert token_key("MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.secret") == "mafiabot:global:123456789012345678"
    hashed = token_key("not-a-token")
    assert hashed.startswith("mafiabot:global:")
    assert "not-a-token" not in hashed


async def test_the_config_shares_the_bots_and_the_helpers_limits_and_its_shard_ids_give_the_static_share() -> None:
    settings = DiscordSettings(global_rate_limit=40, global_limit_redis=UNUSED, shard_count=4, shard_ids=[1])
    assert token_limit(DiscordSettings(), "MTIz.a.b").shared is None
    limit = token_limit(settings, "MTIz.a.b")
    window = limit.shared
    assert isinstance(window, RedisWindow)
    assert window.key == "mafiabot:global:123"
    assert window.processes() == 4  # one shard of four: a quarter of the limit while Redis is away
    assert await admitted(window, 20, cap=limit.limit) == 10
    await window.close()


async def test_a_leased_process_falls_back_to_its_share_of_the_processes_alive(tmp_path: Path) -> None:
    store = await Store.open(sqlite_url(tmp_path / "leases.sqlite3"))
    try:
        config = parse_config({"discord": {"global_rate_limit": 30, "global_limit_redis": UNUSED, "shard_count": 4},
                               "database": {"url": "postgresql+psycopg://unused/unused"}})
        process = LeasedProcess(config, store, store.leases)
        window = process.global_limit.shared
        assert isinstance(window, RedisWindow)
        process.keeper.members = 3  # as the last beat counted them
        assert await admitted(window, 20, cap=30) == 10
        await process.global_limit.close()
    finally:
        await store.close()


async def test_mafiabot_check_says_whether_the_shared_limits_redis_answers() -> None:
    reports = []
    for url in (REDIS, UNUSED, ""):
        report = Report()
        await check_global_limit_redis(report, parse_config({"discord": {"global_limit_redis": url}}))
        reports.append([(f.topic, f.kind) for f in report.findings])
    assert reports == [[("global_limit_redis", "ok")], [("global_limit_redis", "warning")], []]
