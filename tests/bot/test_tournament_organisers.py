"""The organiser's tools on the emulator: the organiser role, registering members, and channels the bot makes.

A member holding the server's tournament-organiser role runs a tournament as a Manage Server member
does; the organiser registers a club's roster role and a few named members without their clicking;
a round opened with no channels given gets a text and a voice channel per table, made by the bot
under the command's category, or is refused with nothing made when Discord would not let it.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from cogs.texts.tournament import PAGE_LIMIT, announcement
from mafiabot.core.records import StoredTournament, TournamentPlayer
from mafiabot.emulator.rest import MAX_GUILD_CHANNELS
from mafiabot.emulator.state import BOT_PERMISSIONS, ChannelType, Intent, Permission
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, harness
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
        assert await deferred(roster[0], h, "mafia tournament register", role=club) \
            == t("en", "error.tournament.not_organiser")
        assert await deferred(organiser, h, "mafia tournament register") == t("en", "error.tournament.register_whom")
        assert await deferred(organiser, h, "mafia tournament register", role=club) \
            == t("en", "error.tournament.member_list", role=f"<@&{club.id}>")
        await roster[0].run_command(h.env.text, "mafia tournament join")
        h.env.app.privileged_intents |= int(Intent.GUILD_MEMBERS)  # the owner turns the intent on
        assert await deferred(organiser, h, "mafia tournament register", role=club) == "\n".join([
            t("en", "tournament.registered", count=7, name=CUP),
            t("en", "tournament.registered_already", players=f"<@{roster[0].id}>")])
        by_name: dict[str, Any] = {"member-1": named[0], "member-2": named[1]}
        assert await deferred(organiser, h, "mafia tournament register", **by_name) \
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
        assert await deferred(organiser, h, "mafia tournament register", **{"member-1": admin}) \
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


async def deferred(who: ScriptedUser, h: Harness, command_name: str, /, **options: Any) -> str:
    """A command answered after a deferral: its final text."""
    reply = await who.run_command(h.env.text, command_name, **options)
    return (await reply.wait_final(timeout=30)).content


def made_for(h: Harness, category: Any) -> list[Any]:
    """The channels under ``category``, in the emulator's state."""
    return [c for c in (h.emu.world.channels[i] for i in h.env.guild.channels) if c.parent_id == category.id]


async def test_every_round_plays_in_the_channels_made_for_its_table_and_the_organiser_removes_them() -> None:
    async with harness(10, emulator_config=FAST,
                       bot_permissions=BOT_PERMISSIONS | int(Permission.MANAGE_CHANNELS)) as h:
        emu, guild = h.emu, h.env.guild
        admin = admin_of(h)
        await admin.run_command(h.env.text, "mafia tournament new", title=CUP, ruleset="fiim", rounds=3, tables=1)
        for person in h.players:
            await person.run_command(h.env.text, "mafia tournament join")
        seated = await (await admin.run_command(h.env.text, "mafia tournament seat")).wait_final(timeout=60)
        schedule = list(csv.DictReader(io.StringIO(seated.attachments[0].data.decode("utf-8"))))
        category = emu.create_channel(guild, "Autumn Cup", ChannelType.GUILD_CATEGORY)
        desk = emu.create_channel(guild, "organisers-desk", parent=category)
        await h.wait(lambda: h.bot.get_channel(desk.id) is not None)
        judged: dict[str, Any] = {"judge-1": h.judge}
        assert await command(admin, h, "mafia tournament remove-channels") \
            == t("en", "error.tournament.no_channels_made")
        played: list[tuple[int, int]] = []
        for number in (1, 2, 3):
            if number == 3:  # someone deletes the table's voice channel: only it is made again
                gone = played[-1][1]
                emu.delete_channel(emu.world.channels[gone])
                await h.wait(lambda: h.bot.get_channel(gone) is None)  # noqa: B023  (awaited here)
            await (await admin.run_command(desk, "mafia tournament round", **judged)).wait_final(timeout=30)
            stored = await h.store.get_tournament(1)
            assert stored is not None
            rt = stored.round_tables[-1]
            played.append((rt.channel_id, rt.voice_channel_id))
            assert len(made_for(h, category)) == 3  # the desk and one table's two channels, every round
            if number == 2:
                assert await command(admin, h, "mafia tournament remove-channels") \
                    == t("en", "error.tournament.round_open", round=2)
            await h.wait(lambda: h.bot.get_channel(rt.voice_channel_id) is not None)  # noqa: B023
            text, voice = emu.world.channels[rt.channel_id], emu.world.channels[rt.voice_channel_id]
            seats = [int(r["player"]) for r in sorted(schedule, key=lambda r: int(r["seat"]))
                     if r["round"] == str(number)]
            await start_table(h, text, voice, h.judge, seats)
            await h.judge.run_command(text, "mafia draw")
            key = "tournament.finished" if number == 3 else "tournament.round.closed"
            closed = t("en", key, name=CUP, round=number)
            await h.wait(lambda: any(closed in m.content for m in emu.messages(text)))  # noqa: B023
        assert played[0] == played[1]
        assert played[2][0] == played[0][0]
        assert played[2][1] != played[0][1]
        finished = await h.store.get_tournament(1)
        assert finished is not None
        assert [(m.table, m.channel_id, m.voice_channel_id) for m in finished.made_channels] == [(1, *played[2])]

        assert await command(h.players[0], h, "mafia tournament remove-channels") \
            == t("en", "error.tournament.not_organiser")
        removed = await admin.run_command(h.env.text, "mafia tournament remove-channels")
        assert (await removed.wait_final(timeout=30)).content == t("en", "tournament.channels_removed", count=1,
                                                                    tables="1")
        assert made_for(h, category) == [desk]
        tidied = await h.store.get_tournament(1)
        assert tidied is not None
        assert tidied.made_channels == ()
        assert [rt.game_id is not None for rt in tidied.round_tables] == [True, True, True]
        assert_no_spec_violations(h.emu)


async def test_a_full_category_refuses_the_round_with_its_own_message_and_keeps_nothing() -> None:
    async with harness(10, emulator_config=FAST,
                       bot_permissions=BOT_PERMISSIONS | int(Permission.MANAGE_CHANNELS)) as h:
        emu, guild = h.emu, h.env.guild
        await seated_cup(h)
        (tm,) = await h.store.guild_tournaments(guild.id)
        category = emu.create_channel(guild, "Autumn Cup", ChannelType.GUILD_CATEGORY)
        desk = emu.create_channel(guild, "organisers-desk", parent=category)
        while len(made_for(h, category)) < 49:  # room for table 1's text channel, not its voice
            emu.create_channel(guild, "filler", parent=category)
        await h.wait(lambda: h.bot.get_channel(guild.channels[-1]) is not None)
        before = list(guild.channels)
        refused = await admin_of(h).run_command(desk, "mafia tournament round")
        (final,) = await refused.wait_followups(1, timeout=30)  # private, in place of the public "thinking"
        assert final.ephemeral_for is not None
        assert final.content == t("en", "error.tournament.category_full", tables="1", category="Autumn Cup")
        assert guild.channels == before  # the text channel made before Discord refused is gone again
        assert await h.store.get_tournament(tm.id) == tm


async def test_a_table_with_no_judge_is_opened_only_by_the_organiser_or_staff() -> None:
    async with harness(10, emulator_config=FAST) as h:
        emu, guild = h.emu, h.env.guild
        admin = admin_of(h)
        organisers = emu.create_role(guild, "organisers")
        organiser = emu.create_scripted_user("organiser", guild, roles=[organisers])
        await command(admin, h, "mafia settings", organiser_role=organisers)
        await seated_cup(h)
        places: dict[str, Any] = {"text-1": h.env.text, "voice-1": h.env.voice}
        opened = await admin.run_command(h.env.text, "mafia tournament round", **places)
        assert not opened.ephemeral, opened.content
        (tm,) = await h.store.guild_tournaments(guild.id)
        scheduled = h.players[0]
        for person in (scheduled, h.judge):  # a player of that table, and a member with no say in the tournament
            person.join_voice(h.env.voice)
            assert await command(person, h, "mafia new") == t("en", "error.tournament.table_unjudged", table=1)
        assert h.bot.tables.lobby_in(h.env.text.id) is None
        assert await h.store.get_tournament(tm.id) == tm  # no claim stored
        organiser.join_voice(h.env.voice)
        lobby = await organiser.run_command(h.env.text, "mafia new")
        assert not lobby.ephemeral, lobby.content
        linked = await h.store.get_tournament(tm.id)
        assert linked is not None
        assert linked.round_tables[0].judge_id == organiser.id


async def test_a_roster_of_two_thousand_is_deferred_read_in_pages_and_announced_in_one_whole_message() -> None:
    async with harness(10, emulator_config=FAST) as h:
        emu, guild = h.emu, h.env.guild
        admin = admin_of(h)
        announced = await admin.run_command(h.env.text, "mafia tournament new", title=CUP, ruleset="fiim", rounds=1,
                                            tables=1)
        club = emu.create_role(guild, "club")
        roster = [emu.create_user(f"member {i}") for i in range(2100)]
        for user in roster:
            emu.add_member(guild, user, roles=[club])
        h.env.app.privileged_intents |= int(Intent.GUILD_MEMBERS)
        asked = len(emu.requests)
        reply = await admin.run_command(h.env.text, "mafia tournament register", role=club)
        assert reply.response_type == 5  # deferred before the first page is read
        final = await reply.wait_final(timeout=60)
        assert final.content == t("en", "tournament.registered", count=2100, name=CUP)
        routes = [f"{r.method} {r.route}" for r in emu.requests[asked:]]
        callback = routes.index("POST /interactions/{interaction_id}/{interaction_token}/callback")
        pages = [i for i, r in enumerate(routes) if r == "GET /guilds/{guild_id}/members"]
        assert len(pages) == 3  # 1,000 a page: 2,100 holders and the table's people
        assert callback < pages[0]
        (tm,) = await h.store.guild_tournaments(guild.id)
        assert {p.user_id for p in tm.players} == {u.id for u in roster}

        def shown() -> str:
            return announced.message.content if announced.message is not None else ""

        await h.wait(lambda: "2100" in shown())
        text = shown()
        assert len(text) <= 2000
        mentions = re.findall(r"<@(\d+)>", text)
        assert mentions == [str(u.id) for u in roster[:len(mentions)]]  # the first registered, each whole
        assert text.endswith(t("en", "tournament.players_more", count=2100 - len(mentions)))
        assert text.count("<@") == len(mentions)
        assert_no_spec_violations(h.emu)


def test_a_big_field_is_announced_in_one_message_naming_the_first_and_counting_the_rest() -> None:
    players = tuple(TournamentPlayer(10**19 + i, f"player {i}") for i in range(500))  # the longest ids
    for status in ("registration", "seated"):
        tm = StoredTournament(id=1, guild_id=1, name="Большой кубок Тбилиси " * 4, ruleset_name="fiim", ruleset={},
                              scoring="fiim-7", rounds=10, tables=5, seed=1, status=status, current_round=0,
                              organiser_id=1, created_at=datetime(2026, 12, 1, tzinfo=UTC), players=players,
                              finals=2, finals_weight=Decimal("1.5"))
        for lang in ("en", "ru", "ka"):
            text = announcement(lang, tm)
            assert len(text) <= PAGE_LIMIT
            assert "…" not in text
            named = re.findall(r"<@(\d+)>", text)
            assert text.count("<@") == len(named) > 0
            assert named == [str(p.user_id) for p in players[:len(named)]]
            assert text.endswith(t(lang, "tournament.players_more", count=500 - len(named)))
    assert re.findall(r"<@(\d+)>", announcement("en", dataclasses.replace(tm, players=players[:3]))) == [
        str(p.user_id) for p in players[:3]]  # a small field is named whole
