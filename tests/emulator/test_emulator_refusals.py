"""What Discord refuses, the emulator refuses, with Discord's status and code (each from Discord's docs).

The real discord.py client makes every request, so each test also shows what the bot would get.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import discord
import pytest
from discord.http import Route

from mafiabot.emulator import ChannelType, EmulatorConfig, FaultRule, RateLimitConfig
from mafiabot.emulator.limits import valid_reaction_emoji
from mafiabot.emulator.state import BOT_PERMISSIONS, Permission
from mafiabot.emulator.testing import Table, emulated_guild, require_spec, running
from tests.emulator.emulator_bot import MafiaTestBot


async def refused(request: Any) -> discord.HTTPException:
    """Await a discord.py request that must fail; return what it raised."""
    with pytest.raises(discord.HTTPException) as caught:
        await request
    return caught.value


def new_thread(bot: MafiaTestBot, channel_id: int, body: dict[str, Any]) -> Any:
    return bot.http.request(Route("POST", "/channels/{channel_id}/threads", channel_id=channel_id), json=body)


def post(bot: MafiaTestBot, channel_id: int, body: dict[str, Any]) -> Any:
    return bot.http.request(Route("POST", "/channels/{channel_id}/messages", channel_id=channel_id), json=body)


# -- threads ----------------------------------------------------------------------------------


async def test_private_threads_only_in_text_channels(table: Table, bot: MafiaTestBot) -> None:
    emu = table.emu
    announcements = emu.create_channel(table.guild, "news", ChannelType.GUILD_ANNOUNCEMENT)
    forum = emu.create_channel(table.guild, "posts", ChannelType.GUILD_FORUM)
    stage = emu.create_channel(table.guild, "stage", ChannelType.GUILD_STAGE_VOICE)
    thread = await new_thread(bot, table.text.id, {"name": "room", "type": 12})
    assert thread["type"] == 12
    # Discord's default type is still PRIVATE_THREAD when the body names none.
    assert (await new_thread(bot, table.text.id, {"name": "no type"}))["type"] == 12
    for parent in (table.voice.id, stage.id, int(thread["id"]), announcements.id, forum.id):
        error = await refused(new_thread(bot, parent, {"name": "room", "type": 12}))
        assert (error.status, error.code) == (400, 50024), parent
    # A forum post is a public thread with its first message; without one it is an invalid body.
    error = await refused(new_thread(bot, forum.id, {"name": "post"}))
    assert (error.status, error.code) == (400, 50035)
    made = await new_thread(bot, forum.id, {"name": "post", "message": {"content": "hello"}})
    assert made["type"] == 11
    assert made["message"]["content"] == "hello"
    error = await refused(new_thread(bot, made["id"], {"name": "nested", "type": 11}))
    assert error.code == 50024
    # An announcement channel makes announcement threads only.
    assert (await new_thread(bot, announcements.id, {"name": "news", "type": 10}))["type"] == 10


async def test_a_message_has_one_thread_at_most(table: Table, bot: MafiaTestBot) -> None:
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    message = await channel.send("start here")
    await message.create_thread(name="first")
    error = await refused(message.create_thread(name="second"))
    assert (error.status, error.code) == (400, 160004)


async def test_an_archived_thread_is_edited_only_while_being_unarchived(table: Table, bot: MafiaTestBot) -> None:
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    thread = await channel.create_thread(name="room", type=discord.ChannelType.private_thread)
    model = table.emu.world.channels[thread.id]
    table.emu.auto_archive(model)
    # discord.py drops an archived thread from its cache: it is fetched again to be edited.
    await table.emu.wait_for(lambda: bot.get_channel(thread.id) is None)
    fetched = await bot.fetch_channel(thread.id)
    assert isinstance(fetched, discord.Thread)
    thread = fetched
    assert thread.archived
    for change in ({"locked": True}, {"name": "renamed"}, {"archived": True, "locked": True}):
        error = await refused(thread.edit(**change))
        assert (error.status, error.code) == (400, 50083), change
    assert model.archived
    assert not model.locked
    assert model.name == "room"
    await thread.edit(archived=False, locked=True)
    assert not model.archived
    assert model.locked


async def test_an_archived_threads_members_change_only_once_it_is_unarchived(table: Table, bot: MafiaTestBot) -> None:
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    thread = await channel.create_thread(name="room", type=discord.ChannelType.private_thread)
    model = table.emu.world.channels[thread.id]
    inside, outside = table.members[0], table.members[1]
    await thread.add_user(discord.Object(id=inside.id))
    table.emu.auto_archive(model)
    await table.emu.wait_for(lambda: bot.get_channel(thread.id) is None)
    fetched = await bot.fetch_channel(thread.id)
    assert isinstance(fetched, discord.Thread)
    for change in (fetched.add_user(discord.Object(id=outside.id)), fetched.remove_user(discord.Object(id=inside.id)),
                   fetched.leave()):
        error = await refused(change)
        assert (error.status, error.code) == (400, 50083)
    assert set(model.thread_members) == {bot.user.id if bot.user else 0, inside.id}
    await fetched.edit(archived=False)
    await fetched.remove_user(discord.Object(id=inside.id))
    await fetched.add_user(discord.Object(id=outside.id))
    assert inside.id not in model.thread_members
    assert outside.id in model.thread_members


async def test_thread_edits_need_manage_threads_except_the_creators_own(table: Table, bot: MafiaTestBot) -> None:
    rest, world = table.emu.rest, table.emu.world
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    thread = await channel.create_thread(name="room", type=discord.ChannelType.public_thread)
    model = world.channels[thread.id]
    member = table.members[0]
    model.thread_members[member.id] = 0.0
    # A plain member: no lock, no rename of someone else's thread, but may unarchive an unlocked one.
    for body in ({"locked": True}, {"name": "mine now"}, {"archived": True}):
        with pytest.raises(Exception) as caught:
            rest._check_thread_edit(member.id, model, body)
        assert getattr(caught.value, "code", None) == 50013, body
    model.archived = True
    rest._check_thread_edit(member.id, model, {"archived": False})
    model.locked = True
    with pytest.raises(Exception) as caught:
        rest._check_thread_edit(member.id, model, {"archived": False})
    assert getattr(caught.value, "code", None) == 50013
    assert world.permissions(table.app.user.id, model) & Permission.MANAGE_THREADS


# -- server-wide 2FA --------------------------------------------------------------------------


async def test_a_2fa_guild_voids_a_bot_owner_without_2fa_elevated_permissions(table: Table, bot: MafiaTestBot) -> None:
    emu, guild = table.emu, table.guild
    player = table.members[0]
    player.join_voice(table.voice)
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    mine = await channel.send("vote here")
    player.react(emu.world.messages[mine.id], "✋")
    theirs = player.send(table.text, "hello")
    thread = await channel.create_thread(name="room", type=discord.ChannelType.private_thread)

    table.app.owner_mfa = False
    emu.require_mfa(guild)
    await emu.wait_for(lambda: bot.the_guild(guild.id).mfa_level == discord.MFALevel.require_2fa)

    refusals: list[Callable[[], Awaitable[Any]]] = [
        lambda: mine.remove_reaction("✋", discord.Object(id=player.id)),  # MANAGE_MESSAGES
        lambda: channel.get_partial_message(theirs.id).delete(),  # MANAGE_MESSAGES
        lambda: thread.edit(locked=True),  # MANAGE_THREADS
        lambda: channel.set_permissions(channel.guild.default_role, add_reactions=False),  # MANAGE_ROLES
    ]
    for request in refusals:
        error = await refused(request())
        assert (error.status, error.code) == (403, 60003)
        assert isinstance(error, discord.Forbidden)
    assert emu.world.messages[mine.id].reactions["✋"] == [player.id]
    assert not emu.world.messages[theirs.id].deleted
    # What needs no elevated permission still works: its own thread, its own reaction, voice.
    await thread.edit(archived=True)
    await mine.add_reaction("✋")
    member = bot.the_guild(guild.id).get_member(player.id)
    assert member is not None
    await member.edit(mute=True)
    assert guild.members[player.id].mute

    table.app.owner_mfa = True
    await mine.remove_reaction("✋", discord.Object(id=player.id))
    assert player.id not in emu.world.messages[mine.id].reactions.get("✋", [])


async def test_without_the_permission_at_all_it_is_still_50013(table: Table, bot: MafiaTestBot) -> None:
    role = next(r for r in table.guild.roles.values() if r.managed)
    role.permissions &= ~Permission.MANAGE_MESSAGES
    table.app.owner_mfa = False
    table.emu.require_mfa(table.guild)
    theirs = table.members[0].send(table.text, "hello")
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    error = await refused(channel.get_partial_message(theirs.id).delete())
    assert (error.status, error.code) == (403, 50013)


async def test_a_person_without_2fa_loses_administrator_in_a_2fa_guild(table: Table) -> None:
    emu, guild = table.emu, table.guild
    admin = emu.create_role(guild, "admins", Permission.ADMINISTRATOR)
    person = emu.create_scripted_user("admin", guild, [admin])
    emu.require_mfa(guild)
    assert emu.world.permissions(person.id, table.text) & Permission.MANAGE_MESSAGES
    person.user.mfa_enabled = False
    perms = emu.world.permissions(person.id, table.text)
    assert not perms & Permission.MANAGE_MESSAGES
    assert not perms & Permission.ADMINISTRATOR
    assert perms & Permission.SEND_MESSAGES


async def test_the_control_api_sets_2fa() -> None:
    async with emulated_guild(members=1) as table, aiohttp.ClientSession(base_url=table.emu.url) as http:
        async with http.post(f"/_emulator/guilds/{table.guild.id}/mfa", json={"required": True}) as response:
            assert (await response.json()) == {"mfa_level": 1}
        async with http.post(f"/_emulator/applications/{table.app.id}/owner_mfa", json={"enabled": False}) as response:
            assert response.status == 200
        assert table.emu.world.lacks_mfa(table.guild, table.app.user.id)


async def test_the_testing_helper_builds_a_2fa_guild() -> None:
    async with emulated_guild(members=1, require_mfa=True, owner_mfa=False) as table:
        assert table.guild.mfa_level == 1
        assert not table.app.owner_mfa
        assert not table.emu.world.permissions(table.app.user.id, table.text) & Permission.MANAGE_MESSAGES


# -- message limits ---------------------------------------------------------------------------


def button(custom_id: str, label: str = "ok") -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": label, "custom_id": custom_id}


def row(*children: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(children)}


def select(custom_id: str, options: int) -> dict[str, Any]:
    return {"type": 3, "custom_id": custom_id, "options": [{"label": str(i), "value": str(i)} for i in range(options)]}


TOO_MUCH: dict[str, dict[str, Any]] = {
    "content over 2000": {"content": "x" * 2001},
    "6 action rows": {"components": [row(button(f"b{i}")) for i in range(6)]},
    "6 buttons in a row": {"components": [row(*(button(f"b{i}") for i in range(6)))]},
    "a select beside a button": {"components": [row(select("s", 2), button("b"))]},
    "26 select options": {"components": [row(select("s", 26))]},
    "custom_id over 100": {"components": [row(button("c" * 101))]},
    "button label over 80": {"components": [row(button("b", "l" * 81))]},
    "duplicate custom_id": {"components": [row(button("same"), button("same"))]},
    "11 embeds": {"embeds": [{"title": "t"}] * 11},
    "embed title over 256": {"embeds": [{"title": "t" * 257}]},
    "embeds over 6000 in all": {"embeds": [{"description": "d" * 4000}, {"description": "d" * 2001}]},
}


@pytest.mark.spec_violations_expected
@pytest.mark.parametrize("name", list(TOO_MUCH))
async def test_a_message_over_discords_limits_is_refused(table: Table, bot: MafiaTestBot, name: str) -> None:
    error = await refused(post(bot, table.text.id, TOO_MUCH[name]))
    assert (error.status, error.code) == (400, 50035)
    assert table.emu.messages(table.text) == []


async def test_a_message_at_discords_limits_is_accepted(table: Table, bot: MafiaTestBot) -> None:
    body = {
        "content": "x" * 2000,
        "components": [row(*(button(f"r{r}b{i}", "l" * 80) for i in range(5))) for r in range(4)]
        + [row(select("s" * 100, 25))],
        "embeds": [{"title": "t" * 256, "description": "d" * 334}] * 10,
    }
    await post(bot, table.text.id, body)
    (message,) = table.emu.messages(table.text)
    assert len(message.content) == 2000


@pytest.mark.spec_violations_expected
async def test_an_edit_over_the_limit_is_refused_and_changes_nothing(table: Table, bot: MafiaTestBot) -> None:
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    message = await channel.send("short")
    error = await refused(message.edit(content="x" * 2001))
    assert (error.status, error.code) == (400, 50035)
    assert "content" in str(error)
    assert table.emu.world.messages[message.id].content == "short"


@pytest.mark.spec_violations_expected
async def test_interaction_answers_follow_ups_and_edits_over_the_limit_are_refused(
    table: Table, bot: MafiaTestBot
) -> None:
    reply = await table.members[0].run_command(table.text, "mafia long")
    assert reply.response_type == 5
    note = await reply.wait_final()  # the first follow-up after the deferral fills in the thinking message
    assert note.content == "refused [50035, 50035, 50035]"
    assert all(len(m.content) <= 2000 for m in table.emu.messages(table.text))


# -- reaction emoji ---------------------------------------------------------------------------


# Nine reactions: at the fixture's one per 0.5 s they would wait 4 s for nothing this test is about.
@pytest.mark.parametrize("emulator_config", [EmulatorConfig(rate_limits=RateLimitConfig(reactions=(20, 1.0)))])
async def test_reaction_emoji_must_be_unicode_or_name_colon_id(table: Table, bot: MafiaTestBot) -> None:
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    message = await channel.send("react")
    for bad in ("<:blob:123>", "garbage", "blob", ":blob:", "blob:abc"):
        error = await refused(bot.http.add_reaction(channel.id, message.id, bad))
        assert (error.status, error.code) == (400, 10014), bad
    await bot.http.add_reaction(channel.id, message.id, "blob:123")
    await message.add_reaction("👍")
    model = table.emu.world.messages[message.id]
    assert set(model.reactions) == {"blob:123", "👍"}
    # A PartialEmoji, as the gateway hands it over, is written the way the route wants.
    await message.remove_reaction(discord.PartialEmoji(name="blob", id=123), discord.Object(id=table.app.user.id))
    assert set(model.reactions) == {"👍"}
    error = await refused(bot.http.remove_reaction(channel.id, message.id, "<:blob:123>", table.members[0].id))
    assert error.code == 10014


def test_emoji_forms() -> None:
    for good in ("👍", "✋", "❤️", "👍🏽", "1️⃣", "🇬🇪", "blob:123", "a_b:1"):
        assert valid_reaction_emoji(good), good
    for bad in ("", "x", "<:blob:123>", "<a:blob:123>", "👍👍x", "blob:"):
        assert not valid_reaction_emoji(bad), bad


# -- stages -----------------------------------------------------------------------------------


async def test_a_stage_seats_newcomers_in_the_audience(table: Table, bot: MafiaTestBot) -> None:
    emu, guild = table.emu, table.guild
    stage = emu.create_channel(guild, "Stage", ChannelType.GUILD_STAGE_VOICE)
    player = table.members[0]
    await emu.wait_for(lambda: bot.get_channel(stage.id) is not None)
    seen = asyncio.ensure_future(bot.wait_for("voice_state_update", check=lambda m, b, a: a.channel is not None))
    player.join_voice(stage)
    _, _, after = await asyncio.wait_for(seen, 5)
    assert isinstance(after.channel, discord.StageChannel)
    assert after.suppress
    assert not after.mute
    assert not player.can_speak(guild)  # not server-muted, and still nobody hears them

    player.request_to_speak(guild)
    member = bot.the_guild(guild.id).get_member(player.id)
    assert member is not None
    await emu.wait_for(lambda: member.voice is not None and member.voice.requested_to_speak_at is not None)
    await member.edit(suppress=False)  # a stage moderator's invitation: MUTE_MEMBERS
    await emu.wait_for(lambda: member.voice is not None and not member.voice.suppress)
    assert player.can_speak(guild)
    # Off a stage there is nothing to suppress.
    error = await refused(bot.http.edit_voice_state(guild.id, player.id, {"channel_id": table.voice.id}))
    assert error.status == 400
    player.join_voice(table.voice)
    assert not guild.voice_states[player.id].suppress
    error = await refused(bot.http.edit_voice_state(guild.id, player.id, {"suppress": False}))
    assert (error.status, error.code) == (400, 50035)


async def test_unsuppressing_on_a_stage_needs_mute_members(table: Table, bot: MafiaTestBot) -> None:
    emu, guild = table.emu, table.guild
    stage = emu.create_channel(guild, "Stage", ChannelType.GUILD_STAGE_VOICE)
    role = next(r for r in guild.roles.values() if r.managed)
    role.permissions &= ~Permission.MUTE_MEMBERS
    player = table.members[0]
    player.join_voice(stage)
    error = await refused(bot.http.edit_voice_state(guild.id, player.id, {"suppress": False}))
    assert (error.status, error.code) == (403, 50013)
    assert guild.voice_states[player.id].suppress


# -- rate-limit headers that lie --------------------------------------------------------------


@pytest.mark.parametrize(
    "lies",
    [{"X-RateLimit-Remaining": "49"}, {"X-RateLimit-Bucket": "0123456789abcdef", "X-RateLimit-Remaining": "9"}],
    ids=["remaining", "bucket"],
)
async def test_lying_rate_limit_headers_cost_429s_but_lose_and_repeat_nothing(lies: dict[str, str]) -> None:
    config = EmulatorConfig(rate_limits=RateLimitConfig(default_route=(2, 0.2)))
    async with emulated_guild(members=1, config=config) as table:
        require_spec(table.emu.spec)
        table.emu.inject_fault(FaultRule(headers=lies, times=1000))
        bot = MafiaTestBot(table.guild.id)
        async with running(bot, table):
            channel = bot.get_channel(table.text.id)
            assert isinstance(channel, discord.TextChannel)
            await asyncio.gather(*(channel.send(f"message {i}") for i in range(8)))
        sent = [m.content for m in table.emu.messages(table.text)]
        assert sorted(sent) == sorted(f"message {i}" for i in range(8))
        statuses = [r.status for r in table.emu.requests if r.route == "/channels/{channel_id}/messages"]
        assert statuses.count(200) == 8
        assert 0 < statuses.count(429) <= 8 * 3
        assert table.emu.violations == []


# -- nicknames --------------------------------------------------------------------------------


async def test_a_refused_nickname_fails_the_whole_member_edit_with_400_50035_naming_nick() -> None:
    """Discord's name rules are not all published (Usernames and Nicknames): a test arms one, and a
    nickname over 32 characters is refused as documented. The mute in the same edit falls with it."""
    renaming = int(BOT_PERMISSIONS | Permission.MANAGE_NICKNAMES)
    async with emulated_guild(members=2, bot_permissions=renaming) as table:
        client = MafiaTestBot(table.guild.id)
        first, second = table.members
        for person in table.members:
            person.join_voice(table.voice)
        async with running(client, table), aiohttp.ClientSession(base_url=table.emu.url) as http:
            arm = {"pattern": "Bad", "message": "Not this one."}
            async with http.post("/_emulator/nicknames/refuse", json=arm) as response:
                assert response.status == 200
            async with http.post("/_emulator/nicknames/refuse", json={"pattern": "("}) as response:
                assert response.status == 400  # not a regular expression: refused, nothing armed
            for nick, said in (("1 · Bad", "Not this one."), ("1 · " + "x" * 29, "Must be 32 or fewer in length.")):
                error = await refused(client.http.edit_member(table.guild.id, first.id, mute=True, nick=nick))
                assert (error.status, error.code) == (400, 50035)
                assert error.text.endswith(f"In nick: {said}")  # discord.py reads the field from the errors tree
                assert not table.guild.members[first.id].mute
                assert table.guild.members[first.id].nick is None
            await client.http.edit_member(table.guild.id, second.id, mute=True, nick="2 · Good")
            assert (table.guild.members[second.id].nick, table.guild.members[second.id].mute) == ("2 · Good", True)
            async with http.post("/_emulator/nicknames/refuse", json={"clear": True}) as response:
                assert response.status == 200
            await client.http.edit_member(table.guild.id, first.id, mute=True, nick="1 · Bad")
            assert table.guild.members[first.id].nick == "1 · Bad"


# -- Discord's three seconds ------------------------------------------------------------------


async def test_an_interaction_not_acknowledged_in_time_is_unknown(table: Table, bot: MafiaTestBot) -> None:
    # Every answer is late when the window is nothing: Discord has invalidated the interaction by then.
    table.emu.config.interaction_ack_seconds = 0.0
    reply = table.members[0].command(table.text, "mafia card")
    callback = "/interactions/{interaction_id}/{interaction_token}/callback"
    await table.emu.wait_for(lambda: any(r.route == callback for r in table.emu.requests))
    assert [r.status for r in table.emu.requests if r.route == callback] == [404]
    assert not reply.acknowledged
    assert table.emu.messages(table.text) == []
