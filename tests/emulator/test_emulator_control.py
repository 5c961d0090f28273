"""The control API's ``act``: every action a scripted user takes over plain HTTP, and the refusals.

Benchmarks drive the emulator in another process through it, so each action must do what the
in-process ``ScriptedUser`` does and an action it cannot do is a 400 that says so.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from mafiabot.emulator.testing import Table
from tests.emulator.emulator_bot import MafiaTestBot


async def _act(http: aiohttp.ClientSession, user: int, action: str, **body: Any) -> tuple[int, Any]:
    async with http.post(f"/_emulator/users/{user}/act", json={"action": action, **body}) as response:
        return response.status, await response.json()


async def test_act_plays_commands_clicks_and_picks_and_waits_for_the_answer(table: Table, bot: MafiaTestBot) -> None:
    alice = table.members[0].id
    async with aiohttp.ClientSession(base_url=table.emu.url) as http:
        status, opened = await _act(
            http, alice, "command", channel_id=str(table.text.id), name="mafia new", options={"seats": 8},
        )
        assert (status, opened["message"]["content"]) == (200, "table with 8 seats")
        panel = opened["message"]["id"]
        status, joined = await _act(http, alice, "click", message_id=panel, custom_id="mafia:join:1")
        assert (status, joined["message"]["content"]) == (200, f"{alice} joined")
        status, picked = await _act(
            http, alice, "select", message_id=panel, custom_id="mafia:seats:1", values=["12"],
        )
        assert (status, picked["message"]["content"]) == (200, "seats: 12")
        status, unwaited = await _act(http, alice, "click", message_id=panel, custom_id="mafia:join:1", wait=False)
        assert (status, sorted(unwaited)) == (200, ["interaction_id", "message", "response_type"])


async def test_act_sends_reacts_and_moves_in_voice(table: Table) -> None:
    alice = table.members[0].id
    world, guild = table.emu.world, table.guild
    async with aiohttp.ClientSession(base_url=table.emu.url) as http:
        status, sent = await _act(http, alice, "send", channel_id=str(table.text.id), content="hello")
        message = world.messages[int(sent["message_id"])]
        assert (status, message.content) == (200, "hello")
        assert await _act(http, alice, "react", message_id=str(message.id), emoji="✋") == (200, {})
        assert message.reactions == {"✋": [alice]}
        assert await _act(http, alice, "unreact", message_id=str(message.id), emoji="✋") == (200, {})
        assert message.reactions.get("✋", []) == []
        assert await _act(http, alice, "join_voice", channel_id=str(table.voice.id), self_mute=True) == (200, {})
        assert guild.voice_states[alice].self_mute
        assert await _act(http, alice, "self_mute", guild_id=str(guild.id), muted=False) == (200, {})
        assert not guild.voice_states[alice].self_mute
        assert await _act(http, alice, "leave_voice", guild_id=str(guild.id)) == (200, {})
        assert alice not in guild.voice_states
        assert await _act(http, alice, "close_dms") == (200, {})


async def test_act_refuses_an_unknown_action_or_one_without_its_channel(table: Table) -> None:
    alice = table.members[0].id
    async with aiohttp.ClientSession(base_url=table.emu.url) as http:
        for action, body in (("dance", {}), ("join_voice", {}), ("leave_voice", {}), ("send", {"content": "x"})):
            status, refused = await _act(http, alice, action, **body)
            assert (status, refused["message"]) == (400, f"unknown or incomplete action {action!r}")
        status, refused = await _act(http, alice, "react", message_id="1", emoji="✋")
        assert (status, refused["message"]) == (400, "unknown message")
