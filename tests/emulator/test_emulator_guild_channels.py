"""Create Guild Channel and List Guild Members as Discord answers them, refusals included.

The real discord.py client makes every request, so each test also shows what the bot would get.
"""

from __future__ import annotations

import discord
import pytest

from mafiabot.emulator import ChannelType, Overwrite
from mafiabot.emulator.rest import MAX_CATEGORY_CHANNELS, MAX_GUILD_CHANNELS
from mafiabot.emulator.state import Intent, Permission
from mafiabot.emulator.testing import Table
from tests.emulator.emulator_bot import MafiaTestBot


def guild_of(bot: MafiaTestBot, table: Table) -> discord.Guild:
    guild = bot.get_guild(table.guild.id)
    assert guild is not None
    return guild


def grant_manage_channels(table: Table) -> None:
    role = table.emu.create_role(table.guild, "channels", int(Permission.MANAGE_CHANNELS))
    table.bot_member.roles.append(role.id)


async def test_without_manage_channels_nothing_is_created(table: Table, bot: MafiaTestBot) -> None:
    before = list(table.guild.channels)
    with pytest.raises(discord.Forbidden) as caught:
        await guild_of(bot, table).create_text_channel("Table 1")
    assert (caught.value.status, caught.value.code) == (403, 50013)
    assert table.guild.channels == before


async def test_with_manage_channels_text_and_voice_are_made_under_a_category(table: Table, bot: MafiaTestBot) -> None:
    grant_manage_channels(table)
    category = table.emu.create_channel(table.guild, "Cup", ChannelType.GUILD_CATEGORY)
    text = await bot.http.create_channel(table.guild.id, 0, name="Table 1", parent_id=category.id)
    voice = await bot.http.create_channel(table.guild.id, 2, name="Стол 1", parent_id=category.id)
    made = table.emu.world.channels
    text_id, voice_id = int(text["id"]), int(voice["id"])
    assert (made[text_id].type, made[text_id].parent_id, made[text_id].name) == (ChannelType.GUILD_TEXT,
                                                                                 category.id, "Table 1")
    assert (made[voice_id].type, made[voice_id].parent_id) == (ChannelType.GUILD_VOICE, category.id)
    assert {text_id, voice_id} <= set(table.guild.channels)


async def test_a_text_channel_is_no_parent(table: Table, bot: MafiaTestBot) -> None:
    grant_manage_channels(table)
    with pytest.raises(discord.HTTPException) as caught:
        await bot.http.create_channel(table.guild.id, 0, name="Table 1", parent_id=table.text.id)
    assert (caught.value.status, caught.value.code) == (400, 50035)


async def test_a_guild_at_its_channel_cap_is_refused(table: Table, bot: MafiaTestBot) -> None:
    grant_manage_channels(table)
    guild = guild_of(bot, table)
    thread = table.emu.create_channel(table.guild, "a thread", ChannelType.PUBLIC_THREAD, parent=table.text)
    while sum(c != thread.id for c in table.guild.channels) < MAX_GUILD_CHANNELS - 1:
        table.emu.create_channel(table.guild, "filler")
    await guild.create_text_channel("the last one")  # threads do not count toward the cap
    with pytest.raises(discord.HTTPException) as caught:
        await guild.create_voice_channel("one too many")
    assert (caught.value.status, caught.value.code) == (400, 30013)
    assert len(table.guild.channels) == MAX_GUILD_CHANNELS + 1


async def test_a_category_holding_fifty_channels_takes_no_more(table: Table, bot: MafiaTestBot) -> None:
    grant_manage_channels(table)
    guild = guild_of(bot, table)
    category = table.emu.create_channel(table.guild, "Cup", ChannelType.GUILD_CATEGORY)
    table.emu.create_channel(table.guild, "a thread", ChannelType.PUBLIC_THREAD, parent=table.text)
    while sum(table.emu.world.channels[c].parent_id == category.id for c in table.guild.channels) \
            < MAX_CATEGORY_CHANNELS - 1:
        table.emu.create_channel(table.guild, "filler", parent=category)
    await bot.http.create_channel(table.guild.id, 2, name="the fiftieth", parent_id=category.id)
    before = list(table.guild.channels)
    with pytest.raises(discord.HTTPException) as caught:
        await bot.http.create_channel(table.guild.id, 0, name="one too many", parent_id=category.id)
    assert (caught.value.status, caught.value.code) == (400, 50035)
    assert caught.value.text == "Invalid Form Body\nIn parent_id: Maximum number of channels in category reached (50)"
    assert table.guild.channels == before
    await guild.create_text_channel("outside it")  # the guild's own cap is far: only the category is full
    assert len(table.guild.channels) == len(before) + 1


# -- List Guild Members needs the application's GUILD_MEMBERS privileged intent ----------------


async def test_the_member_list_needs_the_server_members_intent(table: Table, bot: MafiaTestBot) -> None:
    with pytest.raises(discord.Forbidden) as caught:
        await bot.http.get_members(table.guild.id, 1000, None)
    assert (caught.value.status, caught.value.code) == (403, 50001)
    table.app.privileged_intents |= int(Intent.GUILD_MEMBERS)  # the owner turns it on in the portal
    listed = await bot.http.get_members(table.guild.id, 1000, None)
    assert {int(m["user"]["id"]) for m in listed} == set(table.guild.members)


async def test_a_channel_made_in_a_category_without_overwrites_takes_the_categorys(
    table: Table, bot: MafiaTestBot
) -> None:
    grant_manage_channels(table)
    player, judge = table.members[:2]
    category = table.emu.create_channel(table.guild, "Cup", ChannelType.GUILD_CATEGORY)
    hidden = Overwrite(table.guild.id, 0, 0, int(Permission.VIEW_CHANNEL))
    shown = Overwrite(judge.id, 1, int(Permission.VIEW_CHANNEL), 0)
    guild = guild_of(bot, table)
    cup = await guild.fetch_channel(category.id)
    assert isinstance(cup, discord.CategoryChannel)
    category.overwrites = {hidden.id: hidden, shown.id: shown}
    # discord.py sends an empty list when given no overwrites: Discord syncs the channel with its category.
    synced = await guild.create_text_channel("Table 1", category=cup)
    model = table.emu.world.channels[synced.id]
    assert model.overwrites == category.overwrites
    assert model.overwrites[hidden.id] is not hidden  # a copy: a later change of either is its own
    assert model not in player.visible_channels(table.guild)
    assert model in judge.visible_channels(table.guild)
    mine: dict[discord.Role | discord.Member | discord.Object, discord.PermissionOverwrite] = {
        guild.default_role: discord.PermissionOverwrite(send_messages=False)}
    own = await guild.create_text_channel("Table 2", category=cup, overwrites=mine)
    overwrites = table.emu.world.channels[own.id].overwrites
    assert set(overwrites) == {table.guild.id}
    assert overwrites[table.guild.id].deny == int(Permission.SEND_MESSAGES)
