"""``/mafia settings``, ``/mafia rules`` and how a server's settings shape its next table."""

from __future__ import annotations

import asyncio

from engine import Phase
from mafiabot.core.records import GuildSettings
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Channel
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, harness
from tests.harness import FAST, admin_of


async def new_channel(h: Harness, name: str) -> Channel:
    channel = h.emu.create_channel(h.env.guild, name)
    await asyncio.wait_for(h.bot.wait_for("guild_channel_create", check=lambda c: c.id == channel.id), 5)
    return channel


async def start_default_table(h: Harness, seats: int) -> Table:
    """``/mafia new`` with no ruleset: the server's default ruleset, timers and language apply."""
    for person in [*h.players, h.judge]:
        person.join_voice(h.env.voice)
    reply = await h.judge.run_command(h.env.text, "mafia new", seats=seats)
    assert reply.message is not None, reply.content
    join = next(c["custom_id"] for row in reply.message.components for c in row["components"]
                if ":join:" in c["custom_id"])
    for person in h.players:
        await person.press(reply.message, join)
    await h.judge.run_command(h.env.text, "mafia start")
    table = h.table()
    assert table is not None
    h.bot.tables.watch(table, h.emu.changed)
    return table


async def test_settings_need_manage_server() -> None:
    async with harness(2, emulator_config=FAST) as h:
        reply = await h.players[0].run_command(h.env.text, "mafia settings", vote_window=5)
        assert reply.ephemeral
        assert reply.content == "Only members with Manage Server may see or change the settings."
        assert (await h.store.get_settings(h.env.guild.id)).vote_window is None


async def test_settings_are_validated_stored_and_shown_back() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin = admin_of(h)
        referees = h.emu.create_role(h.env.guild, "referees")
        results = await new_channel(h, "results")

        shown = await admin.run_command(h.env.text, "mafia settings")
        assert shown.ephemeral
        assert shown.content.startswith("Server settings:")
        assert "Spectators muted: on" in shown.content

        bad = await admin.run_command(h.env.text, "mafia settings", vote_window=61)
        assert bad.content == "Not saved: the vote window takes a whole number of seconds from 1 to 60."
        bad = await admin.run_command(h.env.text, "mafia settings", timer="speech_seconds", seconds=4000)
        assert bad.content == "Not saved: the speech timer takes a whole number of seconds from 1 to 3600."
        half = await admin.run_command(h.env.text, "mafia settings", timer="speech_seconds")
        assert "Give both a timer and its seconds" in half.content
        assert await h.store.get_settings(h.env.guild.id) == GuildSettings(h.env.guild.id)

        saved = await admin.run_command(
            h.env.text, "mafia settings", ruleset="georgian", judge_role=referees, timer="speech_seconds",
            seconds=45, vote_window=5, mute_spectators=False, voice_cues=False, results_channel=results,
        )
        assert saved.content.startswith("Saved.")
        for line in ("Default ruleset: Georgian", f"Judge role: <@&{referees.id}>", "Timers: speech: 45",
                     "Vote window (seconds): 5", "Spectators muted: off", "Voice cues: off",
                     f"Results channel: <#{results.id}>"):
            assert line in saved.content, line
        stored = await h.store.get_settings(h.env.guild.id)
        assert (stored.default_ruleset, stored.judge_role_id, stored.timers, stored.vote_window) == (
            "georgian", referees.id, {"speech_seconds": 45}, 5)
        assert (stored.mute_spectators, stored.voice_cues, stored.results_channel_id) == (False, False, results.id)

        cleared = await admin.run_command(h.env.text, "mafia settings", clear="judge_role", timer="speech_seconds",
                                          seconds=0)
        assert "Judge role: none" in cleared.content
        stored = await h.store.get_settings(h.env.guild.id)
        assert stored.judge_role_id is None
        assert stored.timers == {}

        await admin.run_command(h.env.text, "mafia settings", language="ka")
        assert (await h.store.get_settings(h.env.guild.id)).language == "ka"
        bad = await admin.run_command(h.env.text, "mafia settings", vote_window=61)
        assert bad.content == "არ შეინახა: კენჭისყრის დროს სჭირდება წამების მთელი რიცხვი 1-დან 60-მდე."


async def test_a_new_table_uses_the_server_settings_and_posts_its_result() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        admin = admin_of(h)
        results = await new_channel(h, "results")
        rules = await h.players[0].run_command(h.env.text, "mafia rules")
        assert rules.content.startswith("Rules: Classic")
        await admin.run_command(h.env.text, "mafia settings", timer="speech_seconds", seconds=45, vote_window=5,
                                mute_spectators=False, results_channel=results)
        table = await start_default_table(h, 6)
        assert table.ruleset.name == "classic"
        assert table.ruleset.speech_seconds == 45
        assert table.ruleset.vote_window_seconds == 5
        assert table.mute_spectators is False
        rules = await h.players[0].run_command(h.env.text, "mafia rules")
        assert "speech 45" in rules.content
        assert "vote window 5" in rules.content
        assert "6 players: Citizen 3, Sheriff 1, Mafia 1, Don 1." in rules.content

        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        await h.judge.run_command(h.env.text, "mafia end")
        await table.done.wait()
        posted = await h.wait(lambda: h.emu.last_message(results))
        assert f"<#{h.env.text.id}>" in posted.content
        assert "abandoned" in posted.content
        assert_no_spec_violations(h.emu)


async def test_server_language_and_spectator_muting_reach_the_table() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        admin = admin_of(h)
        await admin.run_command(h.env.text, "mafia settings", language="ka")
        spectator = h.emu.create_scripted_user("spectator", h.env.guild)
        spectator.join_voice(h.env.voice)
        table = await start_default_table(h, 6)
        assert table.language == "ka"
        # Muting spectators is on by default: someone in the table's voice channel who is not
        # seated (and not the judge) is muted while the game runs, and unmuted after it.
        await h.wait(lambda: h.env.guild.members[spectator.id].mute)
        assert not h.env.guild.members[h.judge.id].mute
        await h.judge.run_command(h.env.text, "mafia end")
        await table.done.wait()
        await h.wait(lambda: not h.env.guild.members[spectator.id].mute)


async def test_a_server_without_settings_speaks_the_configured_language_until_it_chooses_one() -> None:
    async with harness(2, emulator_config=FAST, config={"game": {"language": "ru"}}) as h:
        admin = admin_of(h)
        refused = await h.players[0].run_command(h.env.text, "mafia settings", vote_window=5)
        assert refused.content == t("ru", "error.settings.not_admin")
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        lobby = await h.judge.run_command(h.env.text, "mafia new")
        assert lobby.message is not None
        assert (opened := h.bot.tables.lobby_in(h.env.text.id)) is not None
        assert opened.language == "ru"
        await h.judge.run_command(h.env.text, "mafia cancel")
        await admin.run_command(h.env.text, "mafia settings", language="en")
        assert (await h.store.get_settings(h.env.guild.id)).language == "en"
        refused = await h.players[0].run_command(h.env.text, "mafia settings", vote_window=5)
        assert refused.content == t("en", "error.settings.not_admin")


async def test_the_club_pages_are_turned_on_by_staff_and_any_member_hides_their_name() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin, member, guild = admin_of(h), h.players[0], h.env.guild.id
        refused = await member.run_command(h.env.text, "mafia settings", site_pages=True)
        assert refused.content == "Only members with Manage Server may see or change the settings."
        assert not (await h.store.get_settings(guild)).site_pages
        saved = await admin.run_command(h.env.text, "mafia settings", site_pages=True)
        assert t("en", "settings.site_pages", value=t("en", "settings.on")) in saved.content
        assert (await h.store.get_settings(guild)).site_pages

        mixed = await member.run_command(h.env.text, "mafia settings", hide_my_name=True, vote_window=5)
        assert mixed.content == "Only members with Manage Server may see or change the settings."
        assert await h.store.hidden_names(guild) == frozenset()
        hidden = await member.run_command(h.env.text, "mafia settings", hide_my_name=True)
        assert hidden.ephemeral
        assert hidden.content == t("en", "settings.name_hidden")
        assert await h.store.hidden_names(guild) == {member.id}
        shown = await member.run_command(h.env.text, "mafia settings", hide_my_name=False)
        assert shown.content == t("en", "settings.name_shown")
        assert await h.store.hidden_names(guild) == frozenset()
