"""Tournaments played through their commands on the emulator.

10 players over 2 rounds at 1 table; the issue's 20 players over 4 rounds at 2 tables at once in one
guild; and a restart in the middle of a game and another in a lobby. The organiser announces the
tournament, the players register by button, the schedule is made, each round is opened at the
tables' channels, each judge starts a table as any other, the scripted players play it out, and the
round closes by itself. The standings are checked against a hand computation over the games' facts
with FIIM version 7's numbers (docs/tournaments.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import dataclasses
import io
import json
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from PIL import Image
from pypdf import PdfReader

from cogs.texts.tournament import PAGE_LIMIT, STANDINGS_IMAGE, standings_pages
from engine import Cause, Phase, Result, Standing, Team
from engine.view import GameView
from mafiabot.core.records import StoredTournament, TournamentPlayer
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Channel, ChannelType
from mafiabot.emulator.testing import assert_no_spec_violations, running
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.bot import MafiaBot
from mafiabot.host.i18n import t
from mafiabot.host.pictures.charts import league_size
from mafiabot.host.presenter import custom_id
from mafiabot.testing import Driver, Harness, ScriptedClock, Strategy, harness
from mafiabot.testing.hands import Where
from tests.harness import FAST, admin_of, play_to_the_end, skip_night_zero

D = Decimal
SEED = 3
# FIIM version 7 (docs/tournaments.md): the win, the auto-bonus, the best move, a removal's penalty, Ci's cap.
WIN, AUTO, BEST_TWO, BEST_THREE, REMOVAL, CI_CAP = D(1), D("0.3"), D("0.5"), D("0.7"), D("0.5"), D("0.5")


def hand_points(state: GameView) -> dict[int, Decimal]:
    """Each seat's points for one game, worked out from the game's facts."""
    outcome = state.outcome
    assert outcome is not None
    winners = {Result.RED: Team.RED, Result.BLACK: Team.BLACK}.get(outcome.result)
    points = {}
    for seat in range(1, state.players + 1):
        p = AUTO + (WIN if state.role(seat).team is winners else 0)
        p += sum((D(value) for s, value, _ in state.extra_points if s == seat), D(0))
        p -= sum((REMOVAL for d in state.departures if d.seat == seat and d.cause is not Cause.KILLED
                  and d.cause is not Cause.VOTED_OUT and d.cause is not Cause.LIFTED), D(0))
        points[seat] = p
    shot = shot_first_night(state)
    if shot is not None and state.best_move_seat == shot:
        points[shot] += {3: BEST_THREE, 2: BEST_TWO}.get(state.best_move_black, D(0))
    return points


def shot_first_night(state: GameView) -> int | None:
    """The red seat killed on Night 1, if one was."""
    return next((d.seat for d in state.departures
                 if d.cause is Cause.KILLED and d.at == 2 and state.role(d.seat).team is Team.RED), None)


def hand_standings(games: list[tuple[Table, GameView]]) -> dict[int, Decimal]:
    """Every player's total: their seats' points, plus Ci for each game lost after being shot red on Night 1.

    Ci per such game is ``min(cap · K / round(0.4 · N), cap)``: K the times shot red on Night 1, N games.
    """
    totals: dict[int, Decimal] = defaultdict(D)
    played: dict[int, int] = defaultdict(int)
    shot_times: dict[int, int] = defaultdict(int)
    lost_after_shot: dict[int, int] = defaultdict(int)
    for table, state in games:
        for seat, p in hand_points(state).items():
            player = table.seats[seat - 1]
            totals[player] += p
            played[player] += 1
        shot = shot_first_night(state)
        if shot is not None:
            player = table.seats[shot - 1]
            shot_times[player] += 1
            assert state.outcome is not None
            if state.outcome.result is not Result.RED:
                lost_after_shot[player] += 1
    for player, lost in lost_after_shot.items():
        expected = int((D("0.4") * played[player]).to_integral_value(rounding="ROUND_HALF_UP"))
        ci = CI_CAP if not expected else min(CI_CAP * shot_times[player] / expected, CI_CAP)
        totals[player] += ci.quantize(D("0.001")) * lost
    return dict(totals)


async def command(who: ScriptedUser, h: Harness, command_name: str, /, **options: Any) -> str:
    reply = await who.run_command(h.env.text, command_name, **options)
    return reply.content


def scheduled_seats(csv_text: str, round_number: int) -> list[int]:
    rows = [r for r in csv.DictReader(io.StringIO(csv_text)) if int(r["round"]) == round_number]
    return [int(r["player"]) for r in sorted(rows, key=lambda r: int(r["seat"]))]


async def play_round(h: Harness, admin: ScriptedUser, number: int, seats: list[int], *, judge_acts: bool) -> Table:
    """Open round ``number`` at the guild's table, start it with its scheduled seats, play it to the end."""
    channels: dict[str, Any] = {"text-1": h.env.text, "voice-1": h.env.voice, "judge-1": h.judge}
    reply = await admin.run_command(h.env.text, "mafia tournament round", **channels)
    assert not reply.ephemeral, reply.content
    assert t("en", "tournament.round.title", name="Autumn Cup", round=number, rounds=2) in reply.content
    told = await reply.wait_followups()
    assert told[0].content == t("en", "tournament.round.told_all", round=number)
    for seat, player in enumerate(seats, 1):
        dms = h.user(player).dm_messages(h.env.app)
        assert f"round {number}: you play at table 1, seat {seat}." in dms[-1].content

    for person in [*h.players, h.judge]:
        person.join_voice(h.env.voice)
    lobby = (await h.judge.run_command(h.env.text, "mafia new")).message
    assert lobby is not None
    assert not lobby.ephemeral_for, lobby.content
    assert t("en", "lobby.tournament", table=1, round=number) in lobby.content
    join = custom_id("join", int(lobby.components[0]["components"][0]["custom_id"].split(":")[2]))
    # The admin is not scheduled at this table: the lobby refuses them a seat.
    admin.join_voice(h.env.voice)
    refused = await admin.press(lobby, join)
    assert refused.content == t("en", "error.lobby.not_scheduled", round=number, table=1)
    admin.leave_voice(h.env.guild)
    for player in reversed(seats):  # joined in any order, seated as scheduled
        answer = await h.user(player).press(lobby, join)
        assert not answer.ephemeral, answer.content
    await h.judge.run_command(h.env.text, "mafia start")
    table = h.table()
    assert table is not None
    h.bot.tables.watch(table, h.emu.changed)
    assert table.seats == seats
    if judge_acts:
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        await h.judge.run_command(h.env.text, "mafia points", seat=2, value="0.4", reason="a fine read")
        for _ in range(4):
            await h.judge.run_command(h.env.text, "mafia foul", seat=9)
        await h.wait(lambda: table.game.state.removed(9))
    await play_to_the_end(table, Driver(h, table, Strategy(10 + number)))
    return table


async def test_a_small_tournament_is_played_through_its_commands() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin = admin_of(h)
        player = h.players[0]
        assert await command(player, h, "mafia tournament new", title="Cup", ruleset="fiim", rounds=2,
                             tables=1) == t("en", "error.tournament.not_admin")
        announced = await admin.run_command(h.env.text, "mafia tournament new", title="Autumn Cup", ruleset="fiim",
                                            rounds=2, tables=1)
        message = announced.message
        assert message is not None
        assert not announced.ephemeral
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        assert (tm.scoring, tm.rounds, tm.tables, tm.organiser_id) == ("fiim-7", 2, 1, admin.id)

        for person in h.players:
            pressed = await person.press(message, custom_id("tjoin", tm.id))
            assert pressed.followups or await pressed.wait_followups()
        assert await command(player, h, "mafia tournament join") == t("en", "tournament.already", name="Autumn Cup")
        assert await command(player, h, "mafia tournament leave") == t("en", "tournament.left", name="Autumn Cup")
        assert await command(player, h, "mafia tournament join") == t("en", "tournament.joined", name="Autumn Cup")
        assert await command(player, h, "mafia tournament seat") == t("en", "error.tournament.not_organiser")
        early = await command(admin, h, "mafia tournament round", **{"text-1": h.env.text, "voice-1": h.env.voice})
        assert early.startswith("Registration is still open"), early

        seated = await admin.run_command(h.env.text, "mafia tournament seat")
        final = await seated.wait_final(timeout=60)
        assert t("en", "tournament.quality.title") in final.content
        (schedule_file,) = final.attachments
        assert schedule_file.filename == "schedule.csv"
        schedule = schedule_file.data.decode("utf-8")
        assert await command(h.players[1], h, "mafia tournament join") == t("en", "error.tournament.closed")

        first = await play_round(h, admin, 1, scheduled_seats(schedule, 1), judge_acts=True)
        closed = t("en", "tournament.round.closed", name="Autumn Cup", round=1)
        await h.wait(lambda: any(closed in m.content for m in h.emu.messages(h.env.text)))
        second = await play_round(h, admin, 2, scheduled_seats(schedule, 2), judge_acts=False)
        over = t("en", "tournament.finished", name="Autumn Cup", round=2)
        await h.wait(lambda: any(over in m.content for m in h.emu.messages(h.env.text)))
        assert await command(admin, h, "mafia tournament round", **{"text-1": h.env.text, "voice-1": h.env.voice}) \
            == t("en", "error.tournament.finished")

        expected = hand_standings([(first, first.game.state), (second, second.game.state)])
        assert first.game.state.removed(9)  # the foul penalty is in the hand computation
        exported = await admin.run_command(h.env.text, "mafia tournament export")
        files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments} if exported.message else {}
        lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))
        assert {int(line["player"]): D(line["total"]) for line in lines} == expected
        assert [D(line["total"]) for line in lines] == sorted(expected.values(), reverse=True)
        assert json.loads(files["standings.json"])["standings"][0]["total"] == lines[0]["total"]
        # Every game in order of play, as a rating site takes it and as the FIIM blanks.
        order = [first, second]
        sites = {}
        for fmt in ("mafiaratings", "polemica", "pdf"):
            sent = await admin.run_command(h.env.text, "mafia tournament export", format=fmt)
            assert sent.message is not None
            (file,) = sent.message.attachments
            sites[fmt] = file.data
        rated = json.loads(sites["mafiaratings"])
        assert [(g["tableNum"], g["gameNum"]) for g in rated] == [(1, 1), (1, 2)]
        assert [[p["name"] for p in g["players"]] for g in rated] == [
            [tb.name_at(s) for s in range(1, 11)] for tb in order]
        polemica = json.loads(sites["polemica"])
        assert [g["phase"] for g in polemica] == [1, 2]
        blanks = PdfReader(io.BytesIO(sites["pdf"]))
        assert len(blanks.pages) == 4
        assert "Autumn Cup" in blanks.pages[2].extract_text()
        asked = await player.run_command(h.env.text, "mafia tournament standings")
        shown = await asked.wait_final(timeout=60)  # deferred: replaying the games may outlast Discord's 3 s
        standings = shown.content
        assert t("en", "tournament.standings.final", name="Autumn Cup", rounds=2) in standings
        assert f"1. {lines[0]['name']} — **{D(lines[0]['total']):.3f}**" in standings
        # The same table as an image, one line a player, with its alt text.
        (image,) = shown.attachments
        assert image.filename == STANDINGS_IMAGE
        assert (image.width, image.height) == league_size(len(lines))
        assert image.description == t("en", "chart.standings.alt", count=len(lines), name="Autumn Cup")
        with Image.open(io.BytesIO(image.data)) as png:
            assert png.format == "PNG"
            assert png.size == league_size(len(lines))
        stored = await h.store.get_tournament(tm.id)
        assert stored is not None
        assert stored.status == "finished"
        assert [rt.game_id for rt in stored.round_tables] == [first.id, second.id]
        assert_no_spec_violations(h.emu)


class TableDriver(Driver):
    """A driver for a table in a channel of its own (the harness's own channel is table 1's)."""

    def _channel(self, where: Where) -> Channel:
        if where == "text":
            return self.h.emu.world.channels[self.table.channel_id]
        return super()._channel(where)


async def start_table(h: Harness, text: Channel, voice: Channel, judge: ScriptedUser, seats: list[int]) -> Table:
    """The table's players and judge go to its voice channel, the judge opens it, they join, the judge starts."""
    for person in [*(h.user(p) for p in seats), judge]:
        person.join_voice(voice)
    lobby = (await judge.run_command(text, "mafia new")).message
    assert lobby is not None
    assert not lobby.ephemeral_for, lobby.content
    join = lobby.components[0]["components"][0]["custom_id"]
    for player in reversed(seats):
        answer = await h.user(player).press(lobby, join)
        assert not answer.ephemeral, answer.content
    started = await judge.run_command(text, "mafia start")
    table = h.bot.tables.table_in(text.id)
    assert table is not None, started.content
    h.bot.tables.watch(table, h.emu.changed)
    assert table.seats == seats
    return table


Place = tuple[Channel, Channel, ScriptedUser]


async def play_two_tables(
    h: Harness, admin: ScriptedUser, number: int, rows: list[dict[str, str]], places: list[Place],
    clocks: list[ScriptedClock],
) -> list[Table]:
    """Open round ``number`` at both places, start both tables, play them at once, wait for the round's end.

    Each table runs on a scripted clock of its own (``clocks`` gets one per table the bot opens), so
    night 0 lasts until the table's driver moves its clock: the judges' round-1 actions always land in
    it, and the same seed plays the same games however slowly the machine answers.
    """
    (text_1, voice_1, judge_1), (text_2, voice_2, judge_2) = places
    channels: dict[str, Any] = {"text-1": text_1, "voice-1": voice_1, "judge-1": judge_1,
                                "text-2": text_2, "voice-2": voice_2, "judge-2": judge_2}
    opened = await admin.run_command(text_1, "mafia tournament round", **channels)
    assert not opened.ephemeral, opened.content
    seats = [[int(r["player"]) for r in sorted(rows, key=lambda r: int(r["seat"]))
              if (int(r["round"]), int(r["table"])) == (number, table)] for table in (1, 2)]
    tables = [await start_table(h, text, voice, judge, seats[i]) for i, (text, voice, judge) in enumerate(places)]
    table_clocks = clocks[-2:]
    if number == 1:  # extra points and a foul penalty at table 1, an oath's removal at table 2
        await h.wait(lambda: all(tb.game.state.phase is Phase.NIGHT_ZERO for tb in tables))
        await judge_1.run_command(text_1, "mafia points", seat=3, value="0.4", reason="a fine read")
        for _ in range(4):
            await judge_1.run_command(text_1, "mafia foul", seat=8)
        for _ in range(2):
            await judge_2.run_command(text_2, "mafia foul", seat=5, oath=True)
        await h.wait(lambda: tables[0].game.state.removed(8) and tables[1].game.state.removed(5))
    await asyncio.gather(*(play_to_the_end(tb, TableDriver(h, tb, Strategy(100 * number + i), clock=table_clocks[i]))
                           for i, tb in enumerate(tables)))
    done = t("en", "tournament.finished" if number == 4 else "tournament.round.closed", name="Winter Cup",
             round=number)
    await h.wait(lambda: any(done in m.content for m in h.emu.messages(text_2)))
    return tables


async def test_twenty_players_four_rounds_two_tables_at_once_in_one_guild() -> None:
    # A fixed seed seats and deals the same way every run, so the games hold what the last checks need.
    clocks: list[ScriptedClock] = []

    def table_clock() -> ScriptedClock:
        clocks.append(ScriptedClock())
        return clocks[-1]

    async with harness(20, emulator_config=FAST, seed=SEED, time_scale=1.0, rate_scale=0.02, clock=table_clock) as h:
        admin = admin_of(h)
        second_judge = h.emu.create_scripted_user("judge2", h.env.guild)
        text_2 = h.emu.create_channel(h.env.guild, "table-2")
        voice_2 = h.emu.create_channel(h.env.guild, "Table 2 voice", ChannelType.GUILD_VOICE)
        places = [(h.env.text, h.env.voice, h.judge), (text_2, voice_2, second_judge)]
        await admin.run_command(h.env.text, "mafia tournament new", title="Winter Cup", ruleset="fiim", rounds=4,
                                tables=2)
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        for person in h.players:
            assert await command(person, h, "mafia tournament join") == t("en", "tournament.joined", name="Winter Cup")
        final = await (await admin.run_command(h.env.text, "mafia tournament seat")).wait_final(timeout=120)
        schedule = final.attachments[0].data.decode("utf-8")
        rows = list(csv.DictReader(io.StringIO(schedule)))
        assert len(rows) == 4 * 2 * 10
        tm_seated = await h.store.get_tournament(tm.id)
        one: dict[str, Any] = {"text-1": h.env.text, "voice-1": h.env.voice}
        for extra, refusal in (
            ({}, t("en", "error.tournament.no_manage_channels", tables="2")),  # nor may the bot make them
            ({"text-2": text_2}, t("en", "error.tournament.channel_pair", table=2)),
            ({"text-2": text_2, "voice-2": h.env.voice}, t("en", "error.tournament.channel_twice")),
        ):
            assert await command(admin, h, "mafia tournament round", **one, **extra) == refusal
        assert (await h.store.get_tournament(tm.id)) == tm_seated  # a refused round changes nothing
        games: list[tuple[Table, GameView]] = []
        for number in range(1, 5):
            tables = await play_two_tables(h, admin, number, rows, places, clocks)
            games += [(tb, tb.game.state) for tb in tables]

        expected = hand_standings(games)
        assert len(expected) == 20
        exported = await admin.run_command(h.env.text, "mafia tournament export")
        assert exported.message is not None
        files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments}
        lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))
        assert {int(line["player"]): D(line["total"]) for line in lines} == expected
        assert all(int(line["games"]) == 4 for line in lines)
        # The hand computation had each of the federation's parts to get right.
        assert any(shot_first_night(state) is not None and state.best_move_black >= 2 for _, state in games)
        assert any(D(line["ci"]) > 0 for line in lines)
        stored = await h.store.get_tournament(tm.id)
        assert stored is not None
        assert stored.status == "finished"
        assert len({rt.game_id for rt in stored.round_tables}) == 8
        assert_no_spec_violations(h.emu)


@contextlib.asynccontextmanager
async def restarted(h: Harness) -> AsyncIterator[Harness]:
    """The bot closes and a new one starts on the same database, as after a restart of the process."""
    await h.bot.close()
    bot = MafiaBot(h.bot.config, h.store, guild_ready_timeout=0.05)
    async with running(bot, h.env):
        yield dataclasses.replace(h, bot=bot)
        await bot.close()


async def test_a_restart_mid_round_and_in_a_lobby_loses_nothing() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin = admin_of(h)
        await admin.run_command(h.env.text, "mafia tournament new", title="Autumn Cup", ruleset="fiim", rounds=2,
                                tables=1)
        for person in h.players:
            await person.run_command(h.env.text, "mafia tournament join")
        final = await (await admin.run_command(h.env.text, "mafia tournament seat")).wait_final(timeout=60)
        schedule = final.attachments[0].data.decode("utf-8")
        channels: dict[str, Any] = {"text-1": h.env.text, "voice-1": h.env.voice, "judge-1": h.judge}
        closed_dms = h.players[4]
        closed_dms.close_dms()  # Discord refuses the bot a DM: the organiser is told, the round opens anyway
        opened = await admin.run_command(h.env.text, "mafia tournament round", **channels)
        (told,) = await opened.wait_followups()
        assert told.content == t("en", "tournament.round.told_some", round=1, players=f"<@{closed_dms.id}>")
        assert closed_dms.dm_messages(h.env.app) == []
        assert f"<@{closed_dms.id}>" in opened.content
        first = await start_table(h, h.env.text, h.env.voice, h.judge, scheduled_seats(schedule, 1))
        await skip_night_zero(h, first)

        async with restarted(h) as again:
            # The game goes on where it was, still the tournament's, and its end closes the round.
            resumed = await again.wait(lambda: again.bot.tables.table_in(h.env.text.id))
            assert resumed is not first
            again.bot.tables.watch(resumed, h.emu.changed)
            await play_to_the_end(resumed, Driver(again, resumed, Strategy(21)))
            closed = t("en", "tournament.round.closed", name="Autumn Cup", round=1)
            await again.wait(lambda: any(closed in m.content for m in h.emu.messages(h.env.text)))
            await admin.run_command(h.env.text, "mafia tournament round", **channels)
            for person in h.players:
                person.join_voice(h.env.voice)
            h.judge.join_voice(h.env.voice)
            lost = (await h.judge.run_command(h.env.text, "mafia new")).message
            assert lost is not None
            assert t("en", "lobby.tournament", table=1, round=2) in lost.content

            async with restarted(again) as third:
                # The lobby was lost with the process; the judge opens the table again.
                second = await start_table(third, h.env.text, h.env.voice, h.judge, scheduled_seats(schedule, 2))
                await play_to_the_end(second, Driver(third, second, Strategy(22)))
                over = t("en", "tournament.finished", name="Autumn Cup", round=2)
                await third.wait(lambda: any(over in m.content for m in h.emu.messages(h.env.text)))
                exported = await admin.run_command(h.env.text, "mafia tournament export")
                assert exported.message is not None
                files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments}
                lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))
                expected = hand_standings([(resumed, resumed.game.state), (second, second.game.state)])
                assert {int(line["player"]): D(line["total"]) for line in lines} == expected
                stored = await h.store.get_tournament(1)
                assert stored is not None
                assert stored.status == "finished"
                assert [rt.game_id for rt in stored.round_tables] == [first.id, second.id]
        assert_no_spec_violations(h.emu)


def test_fifty_players_standings_fit_discords_messages_whole() -> None:
    players = tuple(TournamentPlayer(900 + i, f"Player with a long club name {i:02}") for i in range(50))
    tm = StoredTournament(id=1, guild_id=1, name="Big Cup", ruleset_name="fiim", ruleset={}, scoring="fiim-7",
                          rounds=10, tables=5, seed=1, status="seated", current_round=3, organiser_id=1,
                          created_at=datetime(2026, 12, 1, tzinfo=UTC), players=players)
    nil = D(0)
    rows = [Standing(place=i + 1, player=p.user_id, games=3, wins=2, special_role_wins=0, shot_first_night=0,
                     total=D("2.750"), win=D(2), best_move=nil, extra=D("0.750"), penalty=nil, ci=nil)
            for i, p in enumerate(players)]
    pages = standings_pages("ru", tm, rows)
    assert len(pages) > 1
    assert all(len(page) <= PAGE_LIMIT for page in pages)
    text = "\n".join(pages)
    assert all(p.name in text for p in players)
    assert text.splitlines()[0] == t("ru", "tournament.standings.title", name="Big Cup", round=3, rounds=10)
