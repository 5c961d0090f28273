"""Where a table may live, who holds its powers, whose mutes the bot touches, and bounded input.

The real bot on the emulator, with the moderators, admins, music bots and pranksters every server
has: each refusal is a clear private answer, and nothing the bot did not make is changed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
from pathlib import Path
from typing import Any

import pytest

from engine import Phase, find_ruleset
from mafiabot.emulator.config import FaultRule
from mafiabot.emulator.state import Channel, ChannelType, Message, Overwrite, Permission
from mafiabot.emulator.users import Reply, ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.host.presenter import VOTE_EMOJI, custom_id
from mafiabot.store import Store, sqlite_url
from mafiabot.testing import Driver, Harness, harness, open_table
from tests.harness import FAST, TwoNominees, play_until


def lobby_message(reply: Reply) -> Message:
    message = reply.message
    assert message is not None, reply.content
    assert not reply.ephemeral, reply.content
    return message


def join_id(message: Message) -> str:
    ids = [str(c["custom_id"]) for row in message.components for c in row["components"]]
    return next(cid for cid in ids if ":join:" in cid)


def moderator_mute(h: Harness, user_id: int, *, mute: bool = True) -> None:
    """A moderator's server mute (or unmute), as Discord reports it to the bot."""
    h.env.guild.members[user_id].mute = mute
    h.emu.emit_voice_state(h.env.guild, user_id)


def grant(h: Harness, person: ScriptedUser, name: str, permissions: Permission) -> None:
    """Give a member a role; the emulator computes their permissions from it, as Discord does."""
    role = h.emu.create_role(h.env.guild, name, int(permissions))
    h.env.guild.members[person.id].roles.append(role.id)


def forge(person: ScriptedUser, h: Harness, message: Message, data: dict[str, Any]) -> Any:
    """A component interaction with any data a modified client might send."""
    return person._start(h.env.app, 3, h.emu.world.channels[message.channel_id], data, message)


def forge_command(person: ScriptedUser, h: Harness, name: str, **options: Any) -> Any:
    """``/mafia <name>`` with option values Discord's own client would never send (too long, say)."""
    app = h.env.app
    command = next(c for c in app.guild_commands[h.env.guild.id].values() if c["name"] == "mafia")
    sub = next(o for o in command["options"] if o["name"] == name)
    kinds = {o["name"]: o["type"] for o in sub.get("options", [])}
    opts = [{"type": kinds[k], "name": k, "value": v} for k, v in options.items()]
    data = {"id": command["id"], "name": "mafia", "type": 1, "guild_id": str(h.env.guild.id),
            "options": [{"type": 1, "name": name, "options": opts}]}
    return person._start(app, 2, h.env.text, data, None)


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


# -- 4. where a table may live --------------------------------------------------------------------


async def test_new_is_refused_in_a_voice_chat_a_thread_and_an_announcement_channel() -> None:
    async with harness(6, emulator_config=FAST) as h:
        h.judge.join_voice(h.env.voice)
        news = h.emu.create_channel(h.env.guild, "news", ChannelType.GUILD_ANNOUNCEMENT)
        thread = Channel(id=h.emu.world.ids.next(), type=ChannelType.PUBLIC_THREAD, name="chat",
                         guild_id=h.env.guild.id, parent_id=h.env.text.id, owner_id=h.judge.id,
                         created_at=h.emu.clock.wall())
        h.emu.world.channels[thread.id] = thread
        h.env.guild.channels.append(thread.id)
        h.emu.emit_channel("THREAD_CREATE", thread)
        for place in (h.env.voice, thread, news):
            reply = await h.judge.run_command(place, "mafia new")
            assert reply.ephemeral
            assert "plain text channel" in reply.content
        assert h.bot.tables.lobbies == {}
        reply = await h.judge.run_command(h.env.text, "mafia new")
        assert not reply.ephemeral
        assert "Mafia table" in reply.content


async def test_new_is_refused_for_a_stage_channel() -> None:
    async with harness(6, emulator_config=FAST) as h:
        stage = h.emu.create_channel(h.env.guild, "stage", ChannelType.GUILD_STAGE_VOICE)
        await asyncio.wait_for(h.bot.wait_for("guild_channel_create", check=lambda c: c.id == stage.id), 5)
        h.judge.join_voice(stage)
        reply = await h.judge.run_command(h.env.text, "mafia new")
        assert reply.ephemeral
        assert reply.content == "A table needs a voice channel, not a stage channel."
        assert h.bot.tables.lobbies == {}


async def test_new_needs_the_creator_in_that_voice_channel() -> None:
    async with harness(6, emulator_config=FAST) as h:
        other = h.emu.create_channel(h.env.guild, "other voice", ChannelType.GUILD_VOICE)
        await asyncio.wait_for(h.bot.wait_for("guild_channel_create", check=lambda c: c.id == other.id), 5)
        h.judge.join_voice(h.env.voice)
        reply = await h.judge.run_command(h.env.text, "mafia new", voice=other)
        assert reply.ephemeral
        assert "Join the voice channel" in reply.content
        assert h.bot.tables.lobbies == {}


async def test_two_concurrent_new_for_one_voice_channel_give_one_table() -> None:
    async with harness(6, emulator_config=FAST) as h:
        second = h.emu.create_channel(h.env.guild, "table-2")
        await asyncio.wait_for(h.bot.wait_for("guild_channel_create", check=lambda c: c.id == second.id), 5)
        other = h.players[0]
        for person in (h.judge, other):
            person.join_voice(h.env.voice)
        claims: list[int] = []
        claim = h.store.open_lobby

        async def counted(**fields: Any) -> int:
            claims.append(fields["voice_channel_id"])
            return await claim(**fields)

        h.store.open_lobby = counted  # type: ignore[method-assign]
        replies = [h.judge.command(h.env.text, "mafia new"), other.command(second, "mafia new")]
        await h.wait(lambda: all(r.acknowledged for r in replies))
        # Both got past the bot's own bookkeeping: the database's unique index chose.
        assert claims == [h.env.voice.id, h.env.voice.id]
        opened = [r for r in replies if not r.ephemeral]
        refused = [r.content for r in replies if r.ephemeral]
        assert len(opened) == 1
        assert refused == ["That voice channel already has a table."]
        assert len(h.bot.tables.lobbies) == 1
        with h.store.engine.connect() as connection:
            rows = connection.exec_driver_sql("SELECT status FROM games").all()
        assert [r[0] for r in rows] == ["lobby"]


async def test_two_concurrent_starts_give_one_game_and_no_seatless_one() -> None:
    async with harness(6, emulator_config=FAST) as h:
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        lobby = lobby_message(await h.judge.run_command(h.env.text, "mafia new", seats=6))
        for person in h.players:
            assert not (await person.press(lobby, join_id(lobby))).ephemeral
        starts = [h.judge.command(h.env.text, "mafia start"), h.judge.command(h.env.text, "mafia start")]
        await h.wait(lambda: all(r.acknowledged for r in starts))
        contents = sorted(r.content for r in starts)
        assert contents == ["Dealing the cards (rules: Classic).", "The cards are being dealt; wait a moment."]
        assert len(h.bot.tables.tables) == 1
        with h.store.engine.connect() as connection:
            rows = connection.exec_driver_sql("SELECT status, last_seq FROM games").all()
        assert len(rows) == 1
        assert rows[0][0] == "open"
        assert rows[0][1] >= 1


async def test_cancel_frees_a_channel_a_failed_start_left_behind() -> None:
    async with harness(6, emulator_config=FAST) as h:
        await h.bot.tables.recovered.wait()
        # What a start that failed half-way leaves: an open game with no seats and no command.
        await h.store.create_game(guild_id=h.env.guild.id, channel_id=h.env.text.id,
                                  voice_channel_id=h.env.voice.id, ruleset=find_ruleset("classic"))
        h.judge.join_voice(h.env.voice)
        blocked = await h.judge.run_command(h.env.text, "mafia new")
        assert blocked.ephemeral
        assert "already has a table" in blocked.content
        cancelled = await h.judge.run_command(h.env.text, "mafia cancel")
        assert "closed" in cancelled.content
        assert not (await h.judge.run_command(h.env.text, "mafia new")).ephemeral


async def test_a_seatless_game_an_older_version_left_is_closed_at_start(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "old.sqlite3")
    store = await Store.open(url)
    try:
        async with harness(6, emulator_config=FAST, database=url) as h:
            await h.bot.tables.recovered.wait()
            game = await store.create_game(guild_id=h.env.guild.id, channel_id=h.env.text.id,
                                           voice_channel_id=h.env.voice.id, ruleset=find_ruleset("classic"))
        async with harness(6, emulator_config=FAST, database=url) as h:
            await h.bot.tables.recovered.wait()
            assert (await store.get_game(game)).status == "abandoned"
    finally:
        await store.close()


async def test_an_idle_lobby_expires_and_frees_its_channels() -> None:
    async with harness(6, emulator_config=FAST, config={"game": {"lobby_idle_minutes": 0.005}}) as h:
        h.judge.join_voice(h.env.voice)
        lobby = lobby_message(await h.judge.run_command(h.env.text, "mafia new"))
        await h.wait(lambda: "closed" in lobby.content)
        assert h.bot.tables.lobbies == {}
        assert not lobby.components
        assert not (await h.judge.run_command(h.env.text, "mafia new")).ephemeral


# -- 5. powers at the table -----------------------------------------------------------------------


async def test_the_judge_cannot_take_a_seat() -> None:
    async with harness(6, emulator_config=FAST) as h:
        h.judge.join_voice(h.env.voice)
        lobby = lobby_message(await h.judge.run_command(h.env.text, "mafia new"))
        reply = await h.judge.press(lobby, join_id(lobby))
        assert reply.ephemeral
        assert reply.content == "The judge cannot take a seat at their own table."


async def test_a_seated_admin_holds_no_judge_power() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        admin = h.players[0]
        grant(h, admin, "admins", Permission.MANAGE_GUILD | Permission.ADMINISTRATOR)
        table = await open_table(h, "classic", 6)
        commands: list[tuple[str, dict[str, Any]]] = [("mafia clock pause", {}), ("mafia foul", {"seat": 2}),
                                                      ("mafia cancel", {}), ("mafia end", {})]
        for name, options in commands:
            reply = await admin.run_command(h.env.text, name, **options)
            assert reply.ephemeral
            assert reply.content == "A seated player cannot act as the judge during their own game."
        assert not table.game.state.paused
        assert table.game.state.phase is not Phase.ENDED


async def test_a_manage_threads_holder_is_named_at_a_table_and_refused_at_a_strict_one() -> None:
    async with harness(6, emulator_config=FAST) as h:
        mod = h.players[0]
        grant(h, mod, "moderators", Permission.MANAGE_THREADS)
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        # Another may mute members in the table's voice channel (a member overwrite there).
        lifter = h.players[2]
        h.env.voice.overwrites[lifter.id] = Overwrite(id=lifter.id, type=1, allow=int(Permission.MUTE_MEMBERS))
        updated = asyncio.ensure_future(
            h.bot.wait_for("guild_channel_update", check=lambda _before, after: after.id == h.env.voice.id))
        h.emu.emit_channel("CHANNEL_UPDATE", h.env.voice)
        await asyncio.wait_for(updated, 5)
        lobby = lobby_message(await h.judge.run_command(h.env.text, "mafia new"))
        assert not (await mod.press(lobby, join_id(lobby))).ephemeral
        assert not (await lifter.press(lobby, join_id(lobby))).ephemeral
        notice = next(line for line in lobby.content.splitlines() if "mafia's room" in line)
        assert notice == f"⚠ Could read the mafia's room: <@{mod.id}>."
        lifters = next(line for line in lobby.content.splitlines() if "own server mute" in line)
        assert lifters == f"⚠ Can lift their own server mute: <@{lifter.id}>."
        await h.judge.run_command(h.env.text, "mafia cancel")

        admin = h.players[1]
        grant(h, admin, "admins", Permission.MANAGE_GUILD)
        saved = await admin.run_command(h.env.text, "mafia settings", strict_tables=True)
        assert "Strict tables (no seat for who could read the mafia's room or unmute themselves): on" in saved.content
        assert (await h.store.get_settings(h.env.guild.id)).strict_tables
        lobby = lobby_message(await h.judge.run_command(h.env.text, "mafia new"))
        reply = await mod.press(lobby, join_id(lobby))
        assert reply.ephemeral
        assert "strict" in reply.content
        assert "manage threads" in reply.content
        assert (opened := h.bot.tables.lobby_in(h.env.text.id)) is not None
        assert not h.bot.tables.lobby(opened.id).players


async def test_a_seated_players_mute_lifted_by_someone_else_is_made_again_and_the_judge_is_told() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        victim = table.user_at(2)
        await h.wait(lambda: h.env.guild.members[victim].mute)
        moderator_mute(h, victim, mute=False)
        await h.wait(lambda: h.env.guild.members[victim].mute)
        note = await h.wait(lambda: h.judge.dm_messages(h.env.app))
        assert "#2" in note[-1].content
        assert "muted them again" in note[-1].content


async def test_a_judge_who_takes_no_dms_hears_of_a_lifted_mute_in_the_table_channel() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        h.judge.close_dms()
        table = await open_table(h, "classic", 6)
        victim = table.user_at(3)
        await h.wait(lambda: h.env.guild.members[victim].mute)
        moderator_mute(h, victim, mute=False)
        await h.wait(lambda: h.env.guild.members[victim].mute)
        notice = await h.wait(lambda: h.latest(h.env.text, lambda m: "muted them again" in m.content))
        assert "#3" in notice.content
        assert notice.ephemeral_for is None


# -- 6. mutes the bot did not make ----------------------------------------------------------------


async def test_a_moderators_mute_and_a_music_bot_are_left_alone() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        spectator = h.emu.create_scripted_user("spectator", h.env.guild)
        music = h.emu.scripted(h.emu.create_user("music", bot=True))
        h.emu.add_member(h.env.guild, music.user)
        for person in (spectator, music):
            person.join_voice(h.env.voice)
        moderator_mute(h, spectator.id)
        # A player a moderator muted before the deal: muted at the table, but by the moderator.
        punished = h.players[0]
        punished.join_voice(h.env.voice)
        moderator_mute(h, punished.id)
        # The gateway delivers these voice states before the interactions that open the table.
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: all(h.env.guild.members[u].mute for u in table.seats))
        owed = {m.user_id for m in await h.store.owed_mutes(h.env.guild.id)}
        assert owed == set(table.seats) - {punished.id}  # the ledger holds only the bot's own mutes
        await h.judge.run_command(h.env.text, "mafia end")
        await h.wait(table.done.is_set)
        edits = [r for r in h.emu.requests if r.method == "PATCH" and "/members/" in r.path]
        touched = {int(r.path.rsplit("/", 1)[1]) for r in edits}
        assert h.env.guild.members[spectator.id].mute
        assert h.env.guild.members[punished.id].mute
        assert touched.isdisjoint({spectator.id, music.id, punished.id})
        assert not any(h.env.guild.members[u].mute for u in table.seats if u != punished.id)
        assert await h.store.owed_mutes(h.env.guild.id) == []


async def test_a_spectator_made_judge_is_unmuted() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        spectator = h.emu.create_scripted_user("spectator", h.env.guild)
        spectator.join_voice(h.env.voice)
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: h.env.guild.members[spectator.id].mute)
        reply = await h.judge.run_command(h.env.text, "mafia judge pass", member=spectator)
        assert not reply.ephemeral, reply.content
        await h.wait(lambda: not h.env.guild.members[spectator.id].mute)
        assert table.judge_id == spectator.id


# -- 7. bounded input ------------------------------------------------------------------------------


async def test_an_overlong_reason_and_unbounded_points_are_refused() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        table = await open_table(h, "classic", 6)
        before = len(table.game.history)
        long = forge_command(h.judge, h, "remove", seat=2, reason="x" * 2500)
        await h.wait(lambda: long.acknowledged)
        assert long.ephemeral
        assert "at most 200 characters" in long.content
        for value in ("1e5000", "NaN", "inf", "-11", "0.125"):
            reply = await h.judge.run_command(h.env.text, "mafia points", seat=2, value=value, reason="x")
            assert reply.ephemeral
            assert ("from -10 to +10" in reply.content or "other than zero" in reply.content)
        assert len(table.game.history) == before
        echoed = await h.judge.run_command(h.env.text, "mafia foul", seat=3, reason="@everyone **loud**")
        assert "@\u200beveryone" in echoed.content
        assert "\\*\\*loud\\*\\*" in echoed.content
        top = await h.judge.run_command(h.env.text, "mafia top")
        assert top.ephemeral


async def test_malformed_and_forged_controls_get_private_answers_and_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gc.collect()  # an earlier test's unclosed HTTP session, collected now, is not this test's traceback
    caplog.set_level(logging.INFO)
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        await h.bot.tables.recovered.wait()
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        player = h.user(table.user_at(1))
        card = await h.wait(lambda: h.latest(h.env.text, lambda m: any(
            c.get("custom_id") == custom_id("card", table.id) for row in m.components for c in row["components"])))
        forged: list[tuple[str, dict[str, Any]]] = [
            ("garbage custom id", {"custom_id": "garbage", "component_type": 2}),
            ("unknown action", {"custom_id": f"mafia:zzz:{table.id}", "component_type": 2}),
            ("another table", {"custom_id": custom_id("act", table.id + 999), "component_type": 2}),
            ("huge id", {"custom_id": "mafia:act:" + "9" * 40, "component_type": 2}),
            ("no values", {"custom_id": custom_id("nominate", table.id), "component_type": 3, "values": []}),
            ("word value", {"custom_id": custom_id("nominate", table.id), "component_type": 3, "values": ["abc"]}),
            ("huge value", {"custom_id": custom_id("shoot", table.id), "component_type": 3, "values": ["9" * 5000]}),
            ("two values", {"custom_id": custom_id("heal", table.id), "component_type": 3, "values": ["1", "2"]}),
            ("bad best move", {"custom_id": custom_id("bestpick", table.id), "component_type": 3,
                               "values": ["1", "x", "3"]}),
            ("stale lobby", {"custom_id": custom_id("join", 12345), "component_type": 2}),
            ("values not a list", {"custom_id": custom_id("check", table.id), "component_type": 3, "values": "1"}),
        ]
        before = len(table.game.history)
        for what, data in forged:
            reply = forge(player, h, card, data)
            await h.wait(lambda: reply.acknowledged)  # noqa: B023 -- awaited before the loop moves on
            assert reply.ephemeral, what
        await h.judge.run_command(h.env.text, "mafia end")
        await h.wait(table.done.is_set)
        finished = forge(player, h, card, {"custom_id": custom_id("card", table.id), "component_type": 2})
        await h.wait(lambda: finished.acknowledged)
        assert finished.ephemeral
        assert len(table.game.history) == before + 1  # only the judge's end
    assert tracebacks(caplog) == []


async def test_a_strangers_reactions_cost_one_request_each_and_one_dm() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.2) as h:
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, TwoNominees(1))
        await driver.look_at_cards()
        await play_until(driver, table, lambda: table.game.state.phase is Phase.VOTING)
        message = await h.wait(lambda: driver.vote_message(4))
        stranger = h.emu.create_scripted_user("prankster", h.env.guild)
        start = len(h.emu.requests)
        for emoji in (VOTE_EMOJI, "\N{THUMBS UP SIGN}", "\N{SMILING FACE WITH SUNGLASSES}", "blob:1234567890"):
            stranger.react(message, emoji)
            await h.wait(lambda: stranger.id not in message.reactions.get(emoji, []))  # noqa: B023 -- awaited here
        await h.wait(lambda: stranger.dm_messages(h.env.app))
        routes = [f"{r.method} {r.route}" for r in h.emu.requests[start:] if r.app_id == h.env.app.id]
        removals = [r for r in routes if "reactions" in r and r.startswith("DELETE")]
        lookups = [r for r in routes if r.startswith("GET /users/")]
        assert len(removals) == 4
        assert lookups == []
        assert len(stranger.dm_messages(h.env.app)) == 1


async def test_a_forged_option_gets_a_private_answer_and_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with harness(6, emulator_config=FAST) as h:
        await h.bot.tables.recovered.wait()
        h.judge.join_voice(h.env.voice)
        # Discord's client offers only voice channels for voice:; a modified one may send any channel.
        reply = await h.judge.run_command(h.env.text, "mafia new", voice=h.env.text)
        assert reply.ephemeral
        assert "not one this command takes" in reply.content
        assert h.bot.tables.lobbies == {}
    assert tracebacks(caplog) == []


async def test_a_strict_table_checks_every_seat_again_at_the_deal() -> None:
    """Powers granted between Join and ``/mafia start`` are seen at the deal: a strict table does not start."""
    async with harness(6, emulator_config=FAST) as h:
        settings = await h.store.get_settings(h.env.guild.id)
        await h.store.save_settings(dataclasses.replace(settings, strict_tables=True))
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        lobby = lobby_message(await h.judge.run_command(h.env.text, "mafia new", seats=6))
        for person in h.players:
            assert not (await person.press(lobby, join_id(lobby))).ephemeral
        mod, owner, first_owner = h.players[1], h.players[4], h.env.guild.owner_id
        # No gateway event tells the bot (no Server Members intent): Discord would not either.
        grant(h, mod, "moderators", Permission.MANAGE_THREADS)
        h.env.guild.owner_id = owner.id
        h.emu.emit_guild_update(h.env.guild)
        await h.wait(lambda: h.bot.get_guild(h.env.guild.id).owner_id == owner.id)  # type: ignore[union-attr]
        reply = await h.judge.run_command(h.env.text, "mafia start")
        assert reply.ephemeral
        assert h.table() is None
        assert f"<@{mod.id}> (manage threads (and read the mafia's room))" in reply.content
        assert f"<@{owner.id}> (read every channel as the server's owner)" in reply.content
        assert "take that permission away" in reply.content
        opened = h.bot.tables.lobby_in(h.env.text.id)
        assert opened is not None
        assert len(opened.players) == 6
        assert not opened.starting

        h.env.guild.members[mod.id].roles.pop()
        h.env.guild.owner_id = first_owner
        h.emu.emit_guild_update(h.env.guild)
        await h.wait(lambda: h.bot.get_guild(h.env.guild.id).owner_id == first_owner)  # type: ignore[union-attr]
        started = await h.judge.run_command(h.env.text, "mafia start")
        assert h.table() is not None, started.content


async def test_a_strict_table_whose_seats_discord_cannot_check_now_is_not_started() -> None:
    """Discord failing to answer for a seat at the deal refuses the start (try again), never waves it through."""
    async with harness(6, emulator_config=FAST) as h:
        settings = await h.store.get_settings(h.env.guild.id)
        await h.store.save_settings(dataclasses.replace(settings, strict_tables=True))
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        lobby = lobby_message(await h.judge.run_command(h.env.text, "mafia new", seats=6))
        for person in h.players:
            assert not (await person.press(lobby, join_id(lobby))).ephemeral
        grant(h, h.players[2], "moderators", Permission.MANAGE_THREADS)
        fault = h.emu.inject_fault(FaultRule(method="GET", route="/guilds/{guild_id}/members/{user_id}", status=503))
        reply = await h.judge.run_command(h.env.text, "mafia start")
        assert fault.times == 0
        assert reply.ephemeral
        assert reply.content == t("en", "error.lobby.strict_unchecked", **h.bot.commands_text(h.env.guild.id))
        assert h.table() is None
        again = await h.judge.run_command(h.env.text, "mafia start")
        assert f"<@{h.players[2].id}>" in again.content
        assert h.table() is None
