"""A georgian tournament played through its commands on the emulator, in Georgian.

36 players, 3 tables of 12 (the georgian preset: the doctor and the maniac), 2 rounds, on a server
whose language is Georgian. The organiser announces and seats it, each round opens at three tables
that play at once, and the standings the bot exports are checked against a computation made here
from the games the store kept: each game replayed from its stored log, its points worked out by
hand with FIIM version 7's numbers and the three-sided decisions of docs/tournaments.md.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from collections import defaultdict
from decimal import Decimal
from typing import Any

from engine import Cause, Result, Team
from engine.view import GameView
from mafiabot.core import tournaments as tn
from mafiabot.core.records import StoredGame
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Channel, ChannelType
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, Strategy, harness
from tests.bot.test_tournament import TableDriver, command, start_table
from tests.harness import FAST, admin_of, play_to_the_end

D = Decimal
PLAYERS, TABLES, ROUNDS, SEATS = 36, 3, 2, 12
NAME = "თბილისის თასი"
# FIIM version 7 (docs/tournaments.md): the win, the auto-bonus, a removal's penalty, Ci's cap.
WIN, AUTO, REMOVAL, CI_CAP = D(1), D("0.3"), D("0.5"), D("0.5")
# Three sides: a maniac's win pays him alone (docs/tournaments.md, "Georgian tournaments").
WINNERS = {Result.RED: Team.RED, Result.BLACK: Team.BLACK, Result.MANIAC: Team.MANIAC}
Place = tuple[Channel, Channel, ScriptedUser]


def points_by_hand(state: GameView) -> dict[int, Decimal]:
    """Each seat's points for one georgian game, from the game's facts (the preset has no best move)."""
    assert state.outcome is not None
    winners = WINNERS.get(state.outcome.result)
    points = {}
    for seat in range(1, state.players + 1):
        p = AUTO + (WIN if state.role(seat).team is winners else 0)
        p += sum((D(value) for s, value, _ in state.extra_points if s == seat), D(0))
        p -= sum((REMOVAL for d in state.departures if d.seat == seat and d.cause.is_removal), D(0))
        points[seat] = p
    return points


def first_shot(state: GameView) -> int | None:
    """The red seat killed on Night 1, if one was (the doctor may have saved him)."""
    return next((d.seat for d in state.departures
                 if d.cause is Cause.KILLED and d.at == 2 and state.role(d.seat).team is Team.RED), None)


def standings_from_logs(games: list[StoredGame]) -> dict[int, Decimal]:
    """Every player's total over the stored games, each replayed from its log; Ci as the docs give it."""
    totals: dict[int, Decimal] = defaultdict(D)
    played: dict[int, int] = defaultdict(int)
    shot: dict[int, int] = defaultdict(int)
    lost_after_shot: dict[int, int] = defaultdict(int)
    for stored in games:
        state = tn.final_state(stored).state
        player_at = {s.seat: s.user_id for s in stored.seats}
        for seat, p in points_by_hand(state).items():
            totals[player_at[seat]] += p
            played[player_at[seat]] += 1
        victim = first_shot(state)
        if victim is not None:
            shot[player_at[victim]] += 1
            assert state.outcome is not None
            if state.outcome.result in (Result.BLACK, Result.MANIAC):
                lost_after_shot[player_at[victim]] += 1
    for player, lost in lost_after_shot.items():
        expected = int((D("0.4") * played[player]).to_integral_value(rounding="ROUND_HALF_UP"))
        ci = CI_CAP if not expected else min(CI_CAP * shot[player] / expected, CI_CAP)
        totals[player] += ci.quantize(D("0.001")) * lost
    return dict(totals)


async def play_round(h: Harness, admin: ScriptedUser, number: int, rows: list[dict[str, str]],
                     places: list[Place]) -> list[Table]:
    """Open round ``number`` at the three places, start the three tables, play them at once to the round's end."""
    channels: dict[str, Any] = {}
    for i, (text, voice, judge) in enumerate(places, 1):
        channels |= {f"text-{i}": text, f"voice-{i}": voice, f"judge-{i}": judge}
    opened = await admin.run_command(places[0][0], "mafia tournament round", **channels)
    assert not opened.ephemeral, opened.content
    assert t("ka", "tournament.round.title", name=NAME, round=number, rounds=ROUNDS) in opened.content
    seats = [[int(r["player"]) for r in sorted(rows, key=lambda r: int(r["seat"]))
              if (int(r["round"]), int(r["table"])) == (number, table)] for table in range(1, TABLES + 1)]
    assert all(len(s) == SEATS for s in seats)
    (told,) = await opened.wait_followups()
    assert told.content == t("ka", "tournament.round.told_all", round=number)
    dms = h.user(seats[2][11]).dm_messages(h.env.app)
    assert t("ka", "tournament.round.dm", name=NAME, round=number, table=3, seat=12, channel=f"<#{places[2][0].id}>",
             voice=f"<#{places[2][1].id}>") in dms[-1].content
    tables = [await start_table(h, text, voice, judge, seats[i]) for i, (text, voice, judge) in enumerate(places)]
    assert all(tb.game.state.players == SEATS and tb.language == "ka" for tb in tables)
    await asyncio.gather(*(play_to_the_end(tb, TableDriver(h, tb, Strategy(40 * number + i)))
                           for i, tb in enumerate(tables)))
    key = "tournament.finished" if number == ROUNDS else "tournament.round.closed"
    done = t("ka", key, name=NAME, round=number)
    await h.wait(lambda: all(any(done in m.content for m in h.emu.messages(text)) for text, _, _ in places))
    return tables


async def test_a_georgian_tournament_of_36_at_three_tables_is_played_in_georgian() -> None:
    async with harness(PLAYERS, emulator_config=FAST, seed=7) as h:
        admin = admin_of(h)
        await admin.run_command(h.env.text, "mafia settings", language="ka")
        places: list[Place] = [(h.env.text, h.env.voice, h.judge)]
        for n in (2, 3):
            places.append((h.emu.create_channel(h.env.guild, f"table-{n}"),
                           h.emu.create_channel(h.env.guild, f"Table {n} voice", ChannelType.GUILD_VOICE),
                           h.emu.create_scripted_user(f"judge{n}", h.env.guild)))
        announced = await command(admin, h, "mafia tournament new", title=NAME, ruleset="georgian", rounds=ROUNDS,
                                  tables=TABLES)
        assert t("ka", "tournament.title", name=NAME) in announced
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        assert (tm.ruleset_name, tn.table_size(tm)) == ("georgian", SEATS)
        for person in h.players:
            assert await command(person, h, "mafia tournament join") == t("ka", "tournament.joined", name=NAME)
        final = await (await admin.run_command(h.env.text, "mafia tournament seat")).wait_final(timeout=120)
        assert t("ka", "tournament.quality.title") in final.content
        rows = list(csv.DictReader(io.StringIO(final.attachments[0].data.decode("utf-8"))))
        assert len(rows) == ROUNDS * TABLES * SEATS

        played: list[Table] = []
        for number in range(1, ROUNDS + 1):
            played += await play_round(h, admin, number, rows, places)

        stored = await h.store.get_tournament(tm.id)
        assert stored is not None
        assert stored.status == tn.FINISHED
        game_ids = [rt.game_id for rt in stored.round_tables]
        assert game_ids == [tb.id for tb in played]
        games = [await h.store.get_game(gid) for gid in game_ids if gid is not None]
        expected = standings_from_logs(games)
        assert len(expected) == PLAYERS
        exported = await admin.run_command(h.env.text, "mafia tournament export")
        assert exported.message is not None
        files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments}
        lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))
        assert {int(line["player"]): D(line["total"]) for line in lines} == expected
        assert [D(line["total"]) for line in lines] == sorted(expected.values(), reverse=True)
        assert all(int(line["games"]) == ROUNDS for line in lines)
        # The rating sites know ten seats: a georgian table's games stay in the bot's own format, and the
        # organiser hears why in the server's language.
        refused = await admin.run_command(h.env.text, "mafia tournament export", format="mafiaratings")
        seats = len(games[0].seats)
        assert (await refused.wait_final(timeout=60)).content == t(
            "ka", "error.export.seats", format="mafiaratings", seats=seats, size=10)
        own = await admin.run_command(h.env.text, "mafia tournament export", format="json")
        assert own.message is not None
        assert len(json.loads(own.message.attachments[0].data)) == len(games)
        asked = await h.players[0].run_command(h.env.text, "mafia tournament standings")
        shown = (await asked.wait_final(timeout=60)).content
        assert t("ka", "tournament.standings.final", name=NAME, rounds=ROUNDS) in shown
        assert not re.search(r"\d\.\d", shown)  # Georgian writes a decimal comma: 1,300
        best = lines[0]
        assert f"**{D(best['total']):.3f}**".replace(".", ",") in shown
        assert_no_spec_violations(h.emu)
