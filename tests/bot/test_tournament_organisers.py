"""The organiser's tools on the emulator: the organiser role, registering members, and channels the bot makes.

A member holding the server's tournament-organiser role runs a tournament as a Manage Server member
does; the organiser registers a club's roster role and a few named members without their clicking;
a round opened with no channels given gets a text and a voice channel per table, made by the bot
under the command's category, or is refused with nothing made when Discord would not let it.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from mafiabot.emulator.rest import MAX_GUILD_CHANNELS
from mafiabot.emulator.state import BOT_PERMISSIONS, ChannelType, Intent, Permission
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.i18n import t
from mafiabot.tools.demo import Harness, harness
from tests.bot.test_tournament import command, start_table
from tests.harness import FAST, admin_of

CUP = "Autumn Cup"


async def seated_cup(h: Harness, tables: int = 1) -> None:
    """An admin announces the cup, the players register, the schedule is made."""
    admin = admin_of(h)
    await admin.run_command(h.env.text, "mafia tournament new", title=CUP, ruleset="fiim", rounds=1, tables=tables)
    for person in h.players:
        await person.run_command(h.env.text, "mafia tournament join")
    await (await admin.run_command(h.env.text, "mafia tournament seat")).wait_final(timeout=60)


async def test_the_organiser_role_registers_a_roster_and_the_bot_makes_the_round_channels() -> None:
    async with harness(10, emulator_config=FAST,
                       bot_permissions=BOT_PERMISSIONS | int(Permission.MANAGE_CHANNELS)) as h:
        emu, guild = h.emu, h.env.guild
        admin = admin_of(h)
        organisers = emu.create_role(guild, "organisers")
        organiser = emu.create_scripted_user("organiser", guild, roles=[organisers])
        assert await command(organiser, h, "mafia tournament new", title=CUP, ruleset="fiim", rounds=1,
                             tables=1) == t("en", "error.tournament.not_admin")
        saved = await command(admin, h, "mafia settings", organiser_role=organisers)
        assert t("en", "settings.organiser_role", value=f"<@&{organisers.id}>") in saved
        assert (await h.store.get_settings(guild.id)).organiser_role_id == organisers.id
        announced = await organiser.run_command(h.env.text, "mafia tournament new", title=CUP, ruleset="fiim",
                                                rounds=1, tables=1)
        assert not announced.ephemeral, announced.content
        (tm,) = await h.store.guild_tournaments(guild.id)
        assert tm.organiser_id == organiser.id

        club = emu.create_role(guild, "club")
        roster, named = h.players[:8], h.players[8:]
        for person in roster:
            guild.members[person.id].roles.append(club.id)
        h.env.bot_member.roles.append(club.id)  # a bot holding the role is no player
        assert await command(roster[0], h, "mafia tournament register", role=club) \
            == t("en", "error.tournament.not_organiser")
        assert await command(organiser, h, "mafia tournament register") == t("en", "error.tournament.register_whom")
        assert await command(organiser, h, "mafia tournament register", role=club) \
            == t("en", "error.tournament.member_list", role=f"<@&{club.id}>")
        await roster[0].run_command(h.env.text, "mafia tournament join")
        h.env.app.privileged_intents |= int(Intent.GUILD_MEMBERS)  # the owner turns the intent on
        assert await command(organiser, h, "mafia tournament register", role=club) == "\n".join([
            t("en", "tournament.registered", count=7, name=CUP),
            t("en", "tournament.registered_already", players=f"<@{roster[0].id}>")])
        by_name: dict[str, Any] = {"member-1": named[0], "member-2": named[1]}
        assert await command(organiser, h, "mafia tournament register", **by_name) \
            == t("en", "tournament.registered", count=2, name=CUP)
        listed = await h.store.get_tournament(tm.id)
        assert listed is not None
        assert sorted(p.user_id for p in listed.players) == sorted(p.id for p in h.players)
        # The announcement shows the list as it stands, with its buttons still on it.
        await h.wait(lambda: announced.message is not None
                     and all(f"<@{p.id}>" in announced.message.content for p in h.players))
        assert announced.message is not None
        assert announced.message.components

        seated = await organiser.run_command(h.env.text, "mafia tournament seat")
        schedule = (await seated.wait_final(timeout=60)).attachments[0].data.decode("utf-8")
        assert await command(organiser, h, "mafia tournament register", **{"member-1": admin}) \
            == t("en", "error.tournament.closed")

        # The round is opened from a channel in the tournament's category, with no channel given.
        category = emu.create_channel(guild, "Autumn Cup", ChannelType.GUILD_CATEGORY)
        desk = emu.create_channel(guild, "organisers-desk", parent=category)
        await h.wait(lambda: h.bot.get_channel(desk.id) is not None)
        before = set(guild.channels)
        judged: dict[str, Any] = {"judge-1": h.judge}
        opened = await organiser.run_command(desk, "mafia tournament round", **judged)
        final = await opened.wait_final(timeout=30)
        made = [emu.world.channels[c] for c in guild.channels if c not in before]
        assert sorted((c.type, c.name, c.parent_id) for c in made) == [
            (ChannelType.GUILD_TEXT, "Table 1 · Autumn Cup", category.id),
            (ChannelType.GUILD_VOICE, "Table 1 · Autumn Cup", category.id)]
        text = next(c for c in made if c.type == ChannelType.GUILD_TEXT)
        voice = next(c for c in made if c.type == ChannelType.GUILD_VOICE)
        made_line = t("en", "tournament.round.made", count=1, tables=t(
            "en", "tournament.round.made_table", table=1, text=f"<#{text.id}>", voice=f"<#{voice.id}>"))
        assert final.content.startswith(made_line + "\n"), final.content
        assert t("en", "tournament.round.title", name=CUP, round=1, rounds=1) in final.content
        stored = await h.store.get_tournament(tm.id)
        assert stored is not None
        (rt,) = stored.round_tables
        assert (rt.channel_id, rt.voice_channel_id, rt.judge_id) == (text.id, voice.id, h.judge.id)
        assert stored.status == "playing"

        # The made channels hold the table as given ones do: its judge starts it there.
        await h.wait(lambda: h.bot.get_channel(voice.id) is not None)
        rows = [r for r in csv.DictReader(io.StringIO(schedule)) if r["round"] == "1"]
        seats = [int(r["player"]) for r in sorted(rows, key=lambda r: int(r["seat"]))]
        table = await start_table(h, text, voice, h.judge, seats)
        assert table.channel_id == text.id
        assert_no_spec_violations(h.emu)


async def test_without_manage_channels_a_round_with_no_channels_is_refused_and_changes_nothing() -> None:
    async with harness(10, emulator_config=FAST) as h:
        await seated_cup(h)
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        before = list(h.env.guild.channels)
        admin = admin_of(h)
        assert await command(admin, h, "mafia tournament round") \
            == t("en", "error.tournament.no_manage_channels", tables="1")
        assert h.emu.route_counts()["POST /guilds/{guild_id}/channels"] == 0  # refused before asking Discord
        assert h.env.guild.channels == before
        assert await h.store.get_tournament(tm.id) == tm


async def test_a_guild_at_its_channel_limit_refuses_the_round_and_keeps_no_half_made_table() -> None:
    async with harness(20, emulator_config=FAST,
                       bot_permissions=BOT_PERMISSIONS | int(Permission.MANAGE_CHANNELS)) as h:
        emu, guild = h.emu, h.env.guild
        await seated_cup(h, tables=2)
        (tm,) = await h.store.guild_tournaments(guild.id)
        text_2 = emu.create_channel(guild, "table-2")
        voice_2 = emu.create_channel(guild, "Table 2", ChannelType.GUILD_VOICE)
        while len(guild.channels) < MAX_GUILD_CHANNELS - 1:  # room for table 1's text channel, not its voice
            emu.create_channel(guild, "filler")
        await h.wait(lambda: h.bot.get_channel(guild.channels[-1]) is not None)
        before = list(guild.channels)
        admin = admin_of(h)
        second: dict[str, Any] = {"text-2": text_2, "voice-2": voice_2}
        refused = await admin.run_command(h.env.text, "mafia tournament round", **second)
        (final,) = await refused.wait_followups(1, timeout=30)  # private, in place of the public "thinking"
        assert final.ephemeral_for is not None
        assert final.content == t("en", "error.tournament.channel_limit", tables="1")
        assert guild.channels == before  # the text channel made before Discord refused is gone again
        assert await h.store.get_tournament(tm.id) == tm


async def test_manage_channels_taken_away_unseen_is_discords_refusal_and_the_round_stays_closed() -> None:
    async with harness(10, emulator_config=FAST,
                       bot_permissions=BOT_PERMISSIONS | int(Permission.MANAGE_CHANNELS)) as h:
        await seated_cup(h)
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        # The permission goes with no event the bot hears: it believes it may, Discord answers 403/50013.
        for role_id in h.env.bot_member.roles:
            role = h.env.guild.roles[role_id]
            role.permissions &= ~int(Permission.MANAGE_CHANNELS)
        before = list(h.env.guild.channels)
        refused = await admin_of(h).run_command(h.env.text, "mafia tournament round")
        (final,) = await refused.wait_followups(1, timeout=30)  # private, in place of the public "thinking"
        assert final.ephemeral_for is not None
        assert final.content == t("en", "error.tournament.no_manage_channels", tables="1")
        assert h.emu.route_counts()["POST /guilds/{guild_id}/channels"] == 1  # asked, and Discord said no
        assert h.env.guild.channels == before
        assert await h.store.get_tournament(tm.id) == tm


async def test_a_server_requiring_2fa_of_a_bot_whose_owner_lacks_it_refuses_the_channels() -> None:
    async with harness(10, emulator_config=FAST,
                       bot_permissions=BOT_PERMISSIONS | int(Permission.MANAGE_CHANNELS)) as h:
        await seated_cup(h)
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        h.env.app.owner_mfa = False
        h.emu.require_mfa(h.env.guild)  # Manage Channels is a moderation permission: Discord answers 60003
        before = list(h.env.guild.channels)
        refused = await admin_of(h).run_command(h.env.text, "mafia tournament round")
        (final,) = await refused.wait_followups(1, timeout=30)  # private, in place of the public "thinking"
        assert final.ephemeral_for is not None
        assert final.content == t("en", "error.tournament.channels_mfa", tables="1")
        assert h.env.guild.channels == before
        assert await h.store.get_tournament(tm.id) == tm
