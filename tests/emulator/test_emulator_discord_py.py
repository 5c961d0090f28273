"""The real discord.py 2.7 client against the emulator: commands, views, reactions, threads, voice."""

from __future__ import annotations

import asyncio

import discord
import pytest

from mafiabot.emulator import ChannelType, Overwrite, Permission
from mafiabot.emulator.testing import Table
from tests.emulator.emulator_bot import MafiaTestBot


async def test_guild_command_sync_registers_the_group(table: Table, bot: MafiaTestBot) -> None:
    commands = table.app.guild_commands[table.guild.id]
    (mafia,) = commands.values()
    assert mafia["name"] == "mafia"
    assert {o["name"] for o in mafia["options"]} == {"new", "card", "slow", "long", "host"}
    assert table.emu.route_counts()["PUT /applications/{application_id}/guilds/{guild_id}/commands"] == 1


async def test_slash_subcommand_with_option_gets_public_answer(table: Table, bot: MafiaTestBot) -> None:
    alice, bob = table.members[:2]
    reply = await alice.run_command(table.text, "mafia new", seats=8)
    assert reply.response_type == 4
    assert reply.content == "table with 8 seats"
    assert not reply.ephemeral
    assert reply.message in bob.visible_messages(table.text)


async def test_ephemeral_answer_is_seen_only_by_the_invoker(table: Table, bot: MafiaTestBot) -> None:
    alice, bob = table.members[:2]
    reply = await alice.run_command(table.text, "mafia card")
    assert reply.ephemeral
    assert reply.message in alice.visible_messages(table.text)
    assert reply.message not in bob.visible_messages(table.text)
    assert alice.ephemeral_messages() == [reply.message]


async def test_deferred_answer_is_edited_and_followed_up(table: Table, bot: MafiaTestBot) -> None:
    reply = await table.members[0].run_command(table.text, "mafia slow")
    assert reply.response_type == 5
    final = await reply.wait_final()
    assert final.content == "thought it over"
    (followup,) = await reply.wait_followups(1)
    assert followup.content == "and one more thing"


async def test_nested_group_command_mutes_a_member_in_voice(table: Table, bot: MafiaTestBot) -> None:
    judge, player = table.members[:2]
    player.join_voice(table.voice)
    reply = await judge.run_command(table.text, "mafia host mute", player=player)
    note = await reply.wait_final()  # a follow-up straight after a deferral takes the thinking message's place
    assert reply.followups == []
    assert note.content == f"muted {player.id}"
    assert note.ephemeral_for == judge.id
    assert table.emu.member(table.guild, player.user).mute


async def test_persistent_view_button_and_select(table: Table, bot: MafiaTestBot) -> None:
    alice = table.members[0]
    panel = (await alice.run_command(table.text, "mafia new")).message
    assert panel is not None
    joined = await alice.press(panel, "mafia:join:1")
    assert joined.ephemeral
    assert joined.content == f"{alice.id} joined"
    picked = await alice.choose(panel, "mafia:seats:1", ["12"])
    assert picked.response_type == 7
    assert panel.content == "seats: 12"
    quiet = await alice.press(panel, "mafia:quiet:1")
    assert quiet.response_type == 6
    (noted,) = await quiet.wait_followups(1)
    assert noted.ephemeral_for == alice.id


async def test_raw_reaction_events_reach_the_bot(table: Table, bot: MafiaTestBot) -> None:
    alice = table.members[0]
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("Vote for #3")
    await sent.add_reaction("✋")
    message = table.emu.world.messages[sent.id]

    added = asyncio.ensure_future(bot.wait_for("raw_reaction_add", check=lambda p: p.user_id == alice.id))
    alice.react(message, "✋")
    payload = await asyncio.wait_for(added, 5)
    assert payload.message_id == sent.id
    assert str(payload.emoji) == "✋"
    assert payload.member is not None

    removed = asyncio.ensure_future(bot.wait_for("raw_reaction_remove", check=lambda p: p.user_id == alice.id))
    alice.unreact(message, "✋")
    await asyncio.wait_for(removed, 5)

    alice.react(message, "✋")
    await sent.remove_reaction("✋", discord.Object(alice.id))
    assert message.reactions["✋"] == [bot.user_id]
    fetched = await channel.fetch_message(sent.id)
    assert [u.id async for u in fetched.reactions[0].users()] == [bot.user_id]


async def test_private_thread_membership_lock_and_archive(table: Table, bot: MafiaTestBot) -> None:
    don, sheriff = table.members[:2]
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    thread = await channel.create_thread(
        name="mafia", type=discord.ChannelType.private_thread, invitable=False, auto_archive_duration=60
    )
    model = table.emu.world.channels[thread.id]
    assert model.type == ChannelType.PRIVATE_THREAD
    assert model.invitable is False
    assert thread not in sheriff.visible_channels(table.guild)

    await thread.add_user(discord.Object(don.id))
    assert table.emu.thread_members(model) == {bot.user_id, don.id}
    assert model in don.visible_channels(table.guild)
    assert model not in sheriff.visible_channels(table.guild)
    don.send(model, "kill #4")
    assert [m.content for m in sheriff.visible_messages(model)] == []

    await thread.remove_user(discord.Object(don.id))
    assert model not in don.visible_channels(table.guild)

    await thread.edit(locked=True)
    assert model.locked
    await thread.edit(archived=True)
    assert model.archived
    with pytest.raises(discord.HTTPException) as caught:
        await thread.send("too late")
    assert caught.value.code == 50083


async def test_server_mute_sends_voice_state_update(table: Table, bot: MafiaTestBot) -> None:
    player = table.members[0]
    joined = asyncio.ensure_future(bot.wait_for("voice_state_update", check=lambda m, b, a: m.id == player.id))
    player.join_voice(table.voice)
    await asyncio.wait_for(joined, 5)
    guild = bot.get_guild(table.guild.id)
    assert guild is not None
    member = guild.get_member(player.id)
    assert member is not None

    muted = asyncio.ensure_future(bot.wait_for("voice_state_update", check=lambda m, b, a: a.mute))
    await member.edit(mute=True)
    _, before, after = await asyncio.wait_for(muted, 5)
    assert not before.mute
    assert after.mute
    assert table.emu.member(table.guild, player.user).mute


async def test_mute_out_of_voice_is_40032(table: Table, bot: MafiaTestBot) -> None:
    guild = bot.get_guild(table.guild.id)
    assert guild is not None
    member = await guild.fetch_member(table.members[0].id)
    with pytest.raises(discord.HTTPException) as caught:
        await member.edit(mute=True)
    assert caught.value.status == 400
    assert caught.value.code == 40032


async def test_missing_permission_is_403_50013(table: Table, bot: MafiaTestBot) -> None:
    role_id = table.bot_member.roles[0]
    table.guild.roles[role_id].permissions &= ~Permission.MUTE_MEMBERS
    player = table.members[0]
    player.join_voice(table.voice)
    guild = bot.get_guild(table.guild.id)
    assert guild is not None
    member = await guild.fetch_member(player.id)
    with pytest.raises(discord.Forbidden) as caught:
        await member.edit(mute=True)
    assert caught.value.code == 50013
    assert not table.emu.member(table.guild, player.user).mute


async def test_removing_others_reactions_needs_manage_messages(table: Table, bot: MafiaTestBot) -> None:
    alice = table.members[0]
    table.text.overwrites[table.app.user.id] = discord_overwrite(table.app.user.id, deny=Permission.MANAGE_MESSAGES)
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("vote")
    alice.react(table.emu.world.messages[sent.id], "✋")
    with pytest.raises(discord.Forbidden):
        await sent.remove_reaction("✋", discord.Object(alice.id))


def discord_overwrite(target: int, *, deny: int) -> Overwrite:

    return Overwrite(target, 1, 0, int(deny))


async def test_dm_to_user_with_closed_dms_is_403_50007(table: Table, bot: MafiaTestBot) -> None:
    alice, bob = table.members[:2]
    user = await bot.fetch_user(alice.id)
    await user.send("your role: citizen")
    assert [m.content for m in alice.dm_messages(table.app)] == ["your role: citizen"]
    bob.close_dms()
    other = await bot.fetch_user(bob.id)
    with pytest.raises(discord.Forbidden) as caught:
        await other.send("hello")
    assert caught.value.code == 50007


async def test_a_repeated_nonce_answers_with_the_first_message(table: Table, bot: MafiaTestBot) -> None:
    channel = bot.get_partial_messageable(table.text.id)
    first = await channel.send("window for #4", nonce="v1.1.4")
    again = await channel.send("window for #4", nonce="v1.1.4")
    other = await channel.send("window for #5", nonce="v1.1.5")
    assert again.id == first.id
    assert other.id != first.id
    assert [m.content for m in table.emu.messages(table.text)].count("window for #4") == 1
