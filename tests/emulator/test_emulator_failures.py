"""Rate limits, dropped gateway connections, injected faults and the spec check."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import aiohttp
import discord
import pytest

from mafiabot.emulator import Emulator, EmulatorConfig, FaultRule, ManualClock, RateLimitConfig, SpecValidator
from mafiabot.emulator.ratelimit import RateLimiter
from mafiabot.emulator.state import ChannelType
from mafiabot.emulator.testing import Table, emulated_guild, require_spec, running
from tests.emulator.emulator_bot import MafiaTestBot


async def test_429_is_retried_by_discord_py(table: Table, bot: MafiaTestBot) -> None:
    alice = table.members[0]
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("vote")
    message = table.emu.world.messages[sent.id]
    alice.react(message, "✋")
    # Add and remove-other share Discord's per-channel reaction bucket but are different routes to
    # discord.py, so sent together one of them meets a 429, sleeps Retry-After and succeeds.
    await asyncio.gather(sent.add_reaction("👍"), sent.remove_reaction("✋", discord.Object(alice.id)))
    statuses = [r.status for r in table.emu.requests if "/reactions/" in r.path]
    assert statuses.count(429) == 1
    assert statuses.count(204) == 2
    assert message.reactions == {"👍": [bot.user_id]}


async def test_429_carries_discord_headers_and_body(table: Table, bot: MafiaTestBot) -> None:
    url = f"{table.emu.api_url}/channels/{table.text.id}/messages"
    headers = {"Authorization": f"Bot {table.token}"}
    table.emu.limiter.config.default_route = (1, 30.0)
    async with aiohttp.ClientSession() as http:
        async with http.get(url, headers=headers) as first:
            assert first.status == 200
            assert first.headers["Content-Type"] == "application/json"
            assert first.headers["X-RateLimit-Remaining"] == "0"
        async with http.get(url, headers=headers) as limited:
            body = await limited.json()
            assert limited.status == 429
            assert limited.headers["Via"]
            assert int(limited.headers["Retry-After"]) >= 1
            assert limited.headers["X-RateLimit-Limit"] == "1"
            assert body["global"] is False
            assert body["retry_after"] > 0
            assert body["message"] == "You are being rate limited."
            assert "code" not in body  # Discord's docs: a route's 429 names no error code
            assert limited.headers["X-RateLimit-Scope"] == "user"


def test_buckets_follow_a_manual_clock() -> None:
    clock = ManualClock()
    limiter = RateLimiter(RateLimitConfig(member_edits=(2, 5.0)), clock)
    route = "/guilds/{guild_id}/members/{user_id}"

    def edit(token: str, guild: str) -> bool:
        return limiter.check(token, "PATCH", route, {"guild_id": guild}, exempt_global=False).allowed

    assert [edit("a", "1"), edit("a", "1"), edit("a", "1")] == [True, True, False]
    assert edit("a", "2"), "another guild has its own bucket"
    assert edit("helper", "1"), "another token has its own bucket"
    clock.advance(5.0)
    assert edit("a", "1")


async def test_member_edits_of_every_table_in_a_guild_share_one_bucket_per_token(table: Table) -> None:
    """One PATCH bucket per guild and token, whichever member (or voice channel) an edit is for."""
    config = table.emu.limiter.config
    config.member_edits = (2, 30.0)
    other_voice = table.emu.create_channel(table.guild, "Table 2", ChannelType.GUILD_VOICE)
    first, second = table.members[0], table.members[1]
    first.join_voice(table.voice)
    second.join_voice(other_voice)
    headers = {"Authorization": f"Bot {table.token}", "Content-Type": "application/json"}
    base = f"{table.emu.api_url}/guilds/{table.guild.id}/members"
    async with aiohttp.ClientSession() as http:
        answers = []
        for user in (first, second, second):
            async with http.patch(f"{base}/{user.id}", headers=headers, json={"mute": True}) as answer:
                answers.append((answer.status, dict(answer.headers), await answer.json(content_type=None)))
    assert [status for status, _, _ in answers] == [200, 200, 429]
    _, second_headers, _ = answers[1]
    _, limited, body = answers[2]
    assert second_headers["X-RateLimit-Remaining"] == "0"
    assert limited["X-RateLimit-Limit"] == "2"
    assert limited["X-RateLimit-Remaining"] == "0"
    assert limited["X-RateLimit-Scope"] == "user"
    assert limited["X-RateLimit-Bucket"] == second_headers["X-RateLimit-Bucket"]
    assert 0 < float(limited["X-RateLimit-Reset-After"]) <= 30.0
    assert int(limited["Retry-After"]) == math.ceil(float(limited["X-RateLimit-Reset-After"]))
    assert body == {"message": "You are being rate limited.", "retry_after": body["retry_after"], "global": False}
    assert body["retry_after"] == pytest.approx(float(limited["X-RateLimit-Reset-After"]), abs=0.01)
    assert table.emu.world.guilds[table.guild.id].members[second.id].mute is True


def test_global_limit_counts_every_route_of_a_token() -> None:
    limiter = RateLimiter(RateLimitConfig(global_limit=(2, 1.0)), ManualClock())
    verdicts = [
        limiter.check("a", "GET", f"/channels/{{channel_id}}/x{i}", {"channel_id": "1"}, exempt_global=False)
        for i in range(3)
    ]
    assert [v.allowed for v in verdicts] == [True, True, False]
    assert verdicts[2].is_global


async def test_resume_after_a_dropped_connection_replays_missed_events(table: Table, bot: MafiaTestBot) -> None:
    alice = table.members[0]
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("vote")
    (session,) = table.emu.gateway.connected(table.app)
    resumed = asyncio.ensure_future(bot.wait_for("resumed"))
    missed = asyncio.ensure_future(bot.wait_for("raw_reaction_add", check=lambda p: p.user_id == alice.id))

    assert await table.emu.drop_gateway(table.app, resumable=True) == 1
    alice.react(table.emu.world.messages[sent.id], "✋")
    await asyncio.wait_for(resumed, 10)
    await asyncio.wait_for(missed, 5)
    assert (session.identifies, session.resumes) == (1, 1)
    assert table.emu.gateway.connected(table.app) == [session]


# Discord's one IDENTIFY per 5 s would refuse the fresh IDENTIFY for the rest of the 5 s after the first.
@pytest.mark.parametrize("emulator_config", [EmulatorConfig(identify_window=0.0)])
async def test_non_resumable_drop_leads_to_a_fresh_identify(table: Table, bot: MafiaTestBot) -> None:
    (old,) = table.emu.gateway.connected(table.app)
    await table.emu.drop_gateway(table.app, resumable=False)
    new = await table.emu.wait_for(lambda: table.emu.gateway.connected(table.app), timeout=10)
    assert new[0] is not old
    assert not old.valid
    assert new[0].identifies == 1
    player = table.members[0]
    joined = asyncio.ensure_future(bot.wait_for("voice_state_update", check=lambda m, b, a: m.id == player.id))
    player.join_voice(table.voice)
    await asyncio.wait_for(joined, 5)


async def test_injected_5xx_reaches_the_client(table: Table, bot: MafiaTestBot) -> None:
    table.emu.inject_fault(FaultRule(method="POST", route="/channels/{channel_id}/messages", status=503))
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    with pytest.raises(discord.DiscordServerError):
        await channel.send("lost")
    assert (await channel.send("delivered")).content == "delivered"


@pytest.mark.spec_violations_expected
async def test_spec_check_records_a_malformed_request(table: Table) -> None:
    player = table.members[0]
    player.join_voice(table.voice)
    url = f"{table.emu.api_url}/guilds/{table.guild.id}/members/{player.id}"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bot {table.token}"}) as http:
        async with http.patch(url, json={"mute": "yes please"}):
            pass
        async with http.get(f"{table.emu.api_url}/guilds/{table.guild.id}/no-such-route"):
            pass
    malformed, unknown = table.emu.violations
    assert malformed.route == "/guilds/{guild_id}/members/{user_id}"
    assert "mute" in malformed.reason
    assert unknown.reason == "unknown route"


def test_spec_check_is_skipped_with_a_reason_without_the_file(tmp_path: Path) -> None:
    validator = SpecValidator(tmp_path / "missing.json")
    assert not validator.available
    assert "missing.json" in (validator.skip_reason or "")
    assert validator.check("PATCH", "/anything", {"x": 1}, has_body=True) is None


async def test_shards_get_only_their_guilds_events() -> None:
    emu = Emulator(EmulatorConfig(max_concurrency=2))  # both shards identify at once, as a large bot's may
    await emu.start()
    try:
        app = emu.create_application()
        guilds = [emu.create_guild(f"g{i}") for i in range(4)]
        for guild in guilds:
            emu.add_bot(guild, app)
        assert {(g.id >> 22) % 2 for g in guilds} == {0, 1}
        client = discord.AutoShardedClient(intents=discord.Intents.default(), shard_count=2, guild_ready_timeout=0.05)
        async with running(client, emu, app.token):
            await emu.wait_for(lambda: len(emu.gateway.connected(app)) == 2)
            assert {g.id for g in client.guilds} == {g.id for g in guilds}
            for guild in guilds:
                cached = client.get_guild(guild.id)
                assert cached is not None
                assert cached.shard_id == (guild.id >> 22) % 2
    finally:
        await emu.close()


async def test_control_api_drives_a_separate_emulator() -> None:
    async with emulated_guild(members=0) as table, aiohttp.ClientSession(base_url=table.emu.url) as http:
        async with http.post("/_emulator/setup", json={"members": 3}) as response:
            setup = await response.json()
        user_id, channel_id = setup["user_ids"][0], setup["voice_channel_id"]
        action = {"action": "join_voice", "channel_id": channel_id}
        async with http.post(f"/_emulator/users/{user_id}/act", json=action) as response:
            assert response.status == 200
        async with http.get(f"/_emulator/guilds/{setup['guild_id']}/voice") as response:
            assert (await response.json())[user_id]["channel_id"] == channel_id
        require_spec(table.emu.spec)
        async with http.get("/_emulator/violations") as response:
            assert (await response.json())["violations"] == []


def test_spec_path_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from mafiabot.emulator.spec import SPEC_ENV, default_spec_path

    monkeypatch.setenv(SPEC_ENV, str(tmp_path / "openapi.json"))
    assert default_spec_path() == tmp_path / "openapi.json"
    monkeypatch.delenv(SPEC_ENV)
    assert default_spec_path().parts[-3:] == ("shared", "discord-api-spec", "openapi.json")
