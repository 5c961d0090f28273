"""The bot keeps Discord's global rate limit itself, for discord.py's requests and its member edits alike."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import discord
import pytest
import yarl
from multidict import CIMultiDict

from mafiabot.emulator import EmulatorConfig, RateLimitConfig
from mafiabot.emulator.testing import emulated_guild, running
from mafiabot.host.bot import MafiaBot
from mafiabot.host.ratelimit import GlobalLimit, bulk_requests, counts_toward_global, global_limit_trace
from mafiabot.store import Store, sqlite_url
from mafiabot.tools.config import parse_config

# -- the limit, without Discord ----------------------------------------------------------------------


async def granted_times(limit: GlobalLimit, count: int, *, urgent: bool = False) -> list[float]:
    loop = asyncio.get_running_loop()
    times: list[float] = []

    async def one() -> None:
        await limit.acquire(urgent=urgent)
        times.append(loop.time())

    await asyncio.gather(*(one() for _ in range(count)))
    return times


async def test_no_window_ever_holds_more_than_the_limit() -> None:
    limit = GlobalLimit(3, 0.05, slack=0.0)
    times = await granted_times(limit, 10)
    assert len(times) == 10
    assert limit.granted == 10
    for first, fourth in zip(times, times[3:], strict=False):
        assert fourth - first >= 0.05 - 1e-9
    assert limit.waited > 0


async def take(limit: GlobalLimit, order: list[str], name: str, *, urgent: bool, bulk: bool = False) -> None:
    """Wait for a place, then note ``name`` in the order the places were granted."""
    await limit.acquire(urgent=urgent, bulk=bulk)
    order.append(name)


async def test_an_urgent_request_overtakes_the_queue_and_order_is_kept_otherwise() -> None:
    limit = GlobalLimit(1, 0.02, slack=0.0)
    order: list[str] = []

    await limit.acquire()  # the window is now full: everything below queues
    tasks = [asyncio.create_task(take(limit, order, f"message {i}", urgent=False)) for i in range(3)]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(take(limit, order, "mute", urgent=True)))
    await asyncio.gather(*tasks)
    assert order == ["mute", "message 0", "message 1", "message 2"]


@pytest.mark.parametrize(("patience", "expected"), [(10.0, ["floor", "opening 0", "opening 1"]),
                                                   (0.0, ["opening 0", "floor", "opening 1"])])
async def test_opening_requests_wait_behind_running_games_until_they_are_overdue(
    patience: float, expected: list[str],
) -> None:
    limit = GlobalLimit(1, 0.02, slack=0.0, patience=patience)
    order: list[str] = []
    await limit.acquire()  # the window is full: everything below queues
    tasks = [asyncio.create_task(take(limit, order, "opening 0", urgent=False, bulk=True))]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(take(limit, order, "floor", urgent=False)))
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(take(limit, order, "opening 1", urgent=False, bulk=True)))
    await asyncio.gather(*tasks)
    assert order == expected  # overdue, an opening request goes by age; never starved
    assert limit.granted_bulk == 2


async def test_requests_made_inside_bulk_requests_are_bulk() -> None:
    seen: list[bool] = []

    class Recording(GlobalLimit):
        async def acquire(self, *, urgent: bool = False, bulk: bool = False) -> None:
            seen.append(bulk)

    on_start = global_limit_trace(Recording()).on_request_start[0]
    params = aiohttp.TraceRequestStartParams(
        "POST", yarl.URL("https://discord.com/api/v10/channels/1/messages"), CIMultiDict()
    )
    async with aiohttp.ClientSession() as session:
        context = SimpleNamespace()
        await on_start(session, context, params)
        with bulk_requests():
            await on_start(session, context, params)
        await on_start(session, context, params)
    assert seen == [False, True, False]


async def test_a_queue_of_many_seconds_warns_the_operator_once(caplog: pytest.LogCaptureFixture) -> None:
    limit = GlobalLimit(2, 1.0, slack=0.0)
    await limit.acquire()
    await limit.acquire()  # the window is full: everything below queues, half a second each
    waiting = [asyncio.create_task(limit.acquire()) for _ in range(19)]
    await asyncio.sleep(0)
    assert limit.queued == 19  # 9.5 s behind: not yet
    assert limit.warnings == 0
    waiting += [asyncio.create_task(limit.acquire()) for _ in range(5)]
    with caplog.at_level("WARNING", logger="mafiabot.host.ratelimit"):
        await asyncio.sleep(0)
    assert limit.queued == 24
    assert limit.warnings == 1  # once, not for each request over the mark
    assert [r.getMessage() for r in caplog.records] == [
        "global rate limit: 20 requests queued, about 10 s of sending; this token carries more than Discord "
        "lets it send"
    ]
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)


async def test_when_both_queues_wait_places_alternate_so_messages_are_not_starved() -> None:
    limit = GlobalLimit(1, 0.02, slack=0.0)
    order: list[str] = []

    await limit.acquire()
    tasks = [asyncio.create_task(take(limit, order, f"message {i}", urgent=False)) for i in range(3)]
    tasks += [asyncio.create_task(take(limit, order, f"mute {i}", urgent=True)) for i in range(4)]
    await asyncio.gather(*tasks)
    assert order == ["mute 0", "message 0", "mute 1", "message 1", "mute 2", "message 2", "mute 3"]


async def test_messages_leave_a_reserve_that_only_urgent_requests_may_use() -> None:
    limit = GlobalLimit(5, 10.0, slack=0.0, reserve=0.4)
    waiting = [asyncio.create_task(limit.acquire()) for _ in range(4)]
    await asyncio.sleep(0)
    assert limit.granted == 3  # the others' share of the window: 3 of 5
    assert limit.queued == 1
    await limit.acquire(urgent=True)  # from the reserve, at once, past the waiting message
    await limit.acquire(urgent=True)
    assert limit.granted == 5
    for task in waiting:
        task.cancel()


async def test_a_cancelled_wait_gives_its_place_to_the_next() -> None:
    limit = GlobalLimit(1, 0.02, slack=0.0)
    await limit.acquire()
    doomed = asyncio.create_task(limit.acquire())
    survivor = asyncio.create_task(limit.acquire())
    await asyncio.sleep(0)
    doomed.cancel()
    await survivor
    assert limit.granted == 2


async def test_a_global_429_holds_every_request() -> None:
    limit = GlobalLimit(100, 1.0)
    loop = asyncio.get_running_loop()
    await limit.acquire()
    limit.hold(0.05)
    held_at = loop.time()
    await limit.acquire()
    assert loop.time() - held_at >= 0.05 - 1e-3


def test_interactions_webhooks_and_the_gateway_are_not_counted() -> None:
    base = "http://127.0.0.1:1/api/v10"
    assert counts_toward_global(yarl.URL(f"{base}/channels/1/messages"))
    assert counts_toward_global(yarl.URL(f"{base}/guilds/1/members/2"))
    assert not counts_toward_global(yarl.URL(f"{base}/interactions/1/tok/callback"))
    assert not counts_toward_global(yarl.URL(f"{base}/webhooks/1/tok"))
    assert not counts_toward_global(yarl.URL("ws://127.0.0.1:1/?v=10&encoding=json"))


def test_a_nonsense_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        GlobalLimit(0)
    with pytest.raises(ValueError, match="reserve"):
        GlobalLimit(50, reserve=1.0)


# -- the real bot against the emulator ---------------------------------------------------------------

GLOBAL = 10
MESSAGES = 25


async def burst(tmp_path: Path, rate: int, *, redis: str = "") -> list[int]:
    """The bot sends 25 messages and mutes 4 players at once; the statuses Discord answered.

    ``redis``: the bot takes its places from the token's window there, as its processes would share it.
    """
    limits = RateLimitConfig(global_limit=(GLOBAL, 1.0), default_route=(100, 1.0), member_edits=(50, 1.0))
    async with emulated_guild(members=4, config=EmulatorConfig(rate_limits=limits)) as env:
        for person in env.members:
            person.join_voice(env.voice)
        store = await Store.open(sqlite_url(tmp_path / f"g{rate}.sqlite3"))
        config = parse_config({"discord": {"sync_commands": False, "global_rate_limit": rate,
                                           "global_limit_redis": redis}})
        bot = MafiaBot(config, store, guild_ready_timeout=0.05)
        assert (bot.global_limit.shared is not None) == bool(redis)
        try:
            async with running(bot, env):
                guild = bot.get_guild(env.guild.id)
                assert guild is not None

                def everyone_in_voice() -> bool:
                    return all((m := guild.get_member(p.id)) is not None and m.voice for p in env.members)

                await env.emu.wait_for(everyone_in_voice)
                channel = bot.get_channel(env.text.id)
                assert isinstance(channel, discord.TextChannel)
                env.emu.requests.clear()
                await asyncio.gather(
                    *(channel.send(f"message {i}") for i in range(MESSAGES)),
                    *(bot.editor.set_mute(env.guild.id, p.id, mute=True) for p in env.members),
                )
                assert len(env.emu.messages(env.text)) >= MESSAGES
                assert all(env.guild.members[p.id].mute for p in env.members)
                return [r.status for r in env.emu.requests]
        finally:
            await store.close()


@pytest.mark.parametrize("redis", ["", "redis://127.0.0.1:6379/0"])
async def test_a_burst_of_messages_and_mutes_stays_under_the_global_limit(tmp_path: Path, redis: str) -> None:
    statuses = await burst(tmp_path, rate=GLOBAL, redis=redis)
    assert len(statuses) == MESSAGES + 4
    assert 429 not in statuses


async def test_without_the_bot_keeping_the_limit_the_same_burst_draws_429s(tmp_path: Path) -> None:
    statuses = await burst(tmp_path, rate=1000)
    assert 429 in statuses
