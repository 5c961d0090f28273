"""Finals that count more, the announcement closed with registration, and a round message in whole pages.

The finals are the tournament's own setting (``/mafia tournament new`` ``finals`` ``finals-weight``):
the standings weigh the final rounds' points by it, checked against a hand computation over the
games played, and against the worked example of docs/tournaments.md.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from cogs.texts.tournament import PAGE_LIMIT, round_text
from engine import Result
from engine.scoring import FIIM_LATEST, standings, tournament_game
from engine.view import GameView
from mafiabot.core import tournaments as tn
from mafiabot.core.records import RoundTable, ScheduledSeat, StoredTournament, TournamentPlayer
from mafiabot.core.runtime import Table
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.i18n import t
from mafiabot.host.presenter import custom_id
from mafiabot.testing import harness
from tests.bot.test_tournament import CI_CAP, command, hand_points, play_round, scheduled_seats, shot_first_night
from tests.engine.test_scoring import GAME_ONE_PLAYERS, GAME_TWO_PLAYERS, doc_standings, game_one, game_two
from tests.harness import FAST, admin_of

D = Decimal


def weighted_hand_standings(games: list[tuple[Table, GameView, Decimal]]) -> dict[int, Decimal]:
    """Every player's total with each game's points and Ci times its round's weight (docs/tournaments.md)."""
    totals: dict[int, Decimal] = defaultdict(D)
    played: dict[int, int] = defaultdict(int)
    shot_times: dict[int, int] = defaultdict(int)
    lost_after_shot: dict[int, list[Decimal]] = defaultdict(list)
    for table, state, weight in games:
        for seat, p in hand_points(state).items():
            totals[table.seats[seat - 1]] += p * weight
            played[table.seats[seat - 1]] += 1
        shot = shot_first_night(state)
        if shot is not None:
            player = table.seats[shot - 1]
            shot_times[player] += 1
            assert state.outcome is not None
            if state.outcome.result is not Result.RED:
                lost_after_shot[player].append(weight)
    for player, weights in lost_after_shot.items():
        expected = int((D("0.4") * played[player]).to_integral_value(rounding="ROUND_HALF_UP"))
        ci = CI_CAP if not expected else min(CI_CAP * shot_times[player] / expected, CI_CAP)
        totals[player] += sum((ci.quantize(D("0.001")) * w for w in weights), D(0))
    return dict(totals)


async def test_bad_finals_are_refused_and_nothing_is_stored() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin = admin_of(h)
        base: dict[str, Any] = {"title": "Autumn Cup", "ruleset": "fiim", "rounds": 2, "tables": 1}
        cases: list[tuple[dict[str, Any], str]] = [
            ({"finals": 3}, t("en", "error.tournament.finals", rounds=2)),
            *(({"finals": 1, "finals-weight": bad},
               t("en", "error.tournament.finals_weight", weight=bad, limit=tn.MAX_FINALS_WEIGHT))
              for bad in ("abc", "0.5", "1.555", "NaN", "Infinity", "6", "-1.5")),
        ]
        for options, refusal in cases:
            assert await command(admin, h, "mafia tournament new", **base, **options) == refusal
        assert await h.store.guild_tournaments(h.env.guild.id) == []


async def test_a_final_round_counts_more_and_registration_closes_the_announcement() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin = admin_of(h)
        options: dict[str, Any] = {"title": "Autumn Cup", "ruleset": "fiim", "rounds": 2, "tables": 1, "finals": 1,
                                   "finals-weight": "1,5"}  # a comma, as ru and ka write it
        announced = await admin.run_command(h.env.text, "mafia tournament new", **options)
        message = announced.message
        assert message is not None
        assert t("en", "tournament.finals_info", count=1, weight="1.50") in message.content
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        assert (tm.finals, tm.finals_weight) == (1, D("1.5"))
        for person in h.players:
            await person.press(message, custom_id("tjoin", tm.id))
        assert message.components  # Join and Leave, while registration is open

        seated = await admin.run_command(h.env.text, "mafia tournament seat")
        final = await seated.wait_final(timeout=60)
        schedule = final.attachments[0].data.decode("utf-8")
        await h.wait(lambda: announced.message is not None and not announced.message.components)
        assert seated.followups == []  # the announcement was closed: nothing to tell the organiser
        message = announced.message
        assert message is not None
        assert (await h.store.guild_tournaments(h.env.guild.id))[0].announcement == (h.env.text.id, message.id)
        assert t("en", "tournament.registration_closed") in message.content
        assert all(f"<@{p.id}>" in message.content for p in h.players)

        first = await play_round(h, admin, 1, scheduled_seats(schedule, 1), judge_acts=True)
        closed = t("en", "tournament.round.closed", name="Autumn Cup", round=1)
        await h.wait(lambda: any(closed in m.content for m in h.emu.messages(h.env.text)))
        second = await play_round(h, admin, 2, scheduled_seats(schedule, 2), judge_acts=False)
        over = t("en", "tournament.finished", name="Autumn Cup", round=2)
        await h.wait(lambda: any(over in m.content for m in h.emu.messages(h.env.text)))

        expected = weighted_hand_standings([(first, first.game.state, D(1)),
                                            (second, second.game.state, D("1.5"))])
        unweighted = weighted_hand_standings([(first, first.game.state, D(1)), (second, second.game.state, D(1))])
        assert expected != unweighted  # the final's weight moved somebody's total
        exported = await admin.run_command(h.env.text, "mafia tournament export")
        assert exported.message is not None
        files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments}
        lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))
        assert {int(line["player"]): D(line["total"]) for line in lines} == expected
        exported_tm = json.loads(files["standings.json"])["tournament"]
        assert (exported_tm["finals"], exported_tm["finals_weight"]) == (1, "1.50")
        assert_no_spec_violations(h.emu)


async def test_an_announcement_that_cannot_be_edited_is_told_and_changes_nothing_else() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin = admin_of(h)
        announced = await admin.run_command(h.env.text, "mafia tournament new", title="Autumn Cup", ruleset="fiim",
                                            rounds=1, tables=1)
        message = announced.message
        assert message is not None
        for person in h.players:
            await person.run_command(h.env.text, "mafia tournament join")
        h.emu.create_scripted_user("moderator", h.env.guild).delete(message)  # someone tidied the channel
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        seated = await admin.run_command(h.env.text, "mafia tournament seat")
        final = await seated.wait_final(timeout=60)
        assert t("en", "tournament.quality.title") in final.content
        (told,) = await seated.wait_followups()
        link = f"https://discord.com/channels/{h.env.guild.id}/{h.env.text.id}/{message.id}"
        assert told.content == t("en", "tournament.announcement_stale", link=link)
        assert told.ephemeral_for == admin.id
        stored = await h.store.get_tournament(tm.id)
        assert stored is not None
        assert stored.status == tn.SEATED
        assert len(stored.schedule) == 10
        assert_no_spec_violations(h.emu)


def test_the_docs_worked_example_is_a_tournament_with_one_final_at_one_and_a_half() -> None:
    tm = StoredTournament(id=1, guild_id=1, name="Docs Cup", ruleset_name="fiim", ruleset={}, scoring="fiim-7",
                          rounds=2, tables=1, seed=1, status="finished", current_round=2, organiser_id=1,
                          created_at=datetime(2026, 12, 1, tzinfo=UTC), finals=1, finals_weight=D("1.5"))
    count, weight = tn.check_finals(finals=1, weight="1.5", rounds=2)
    assert (count, weight) == (tm.finals, tm.finals_weight)
    assert tn.multipliers(tm) == {2: D("1.5")}
    games = [tournament_game(game_one().state, FIIM_LATEST, round_number=1, players=GAME_ONE_PLAYERS),
             tournament_game(game_two().state, FIIM_LATEST, round_number=2, players=GAME_TWO_PLAYERS)]
    rows = standings(games, tn.multipliers(tm), version=tn.scoring_of(tm))
    assert [(r.place, r.player, r.total, r.extra + r.penalty + r.best_move, r.wins) for r in rows] == doc_standings()


def test_finals_weights_are_read_exactly() -> None:
    assert tn.check_finals(finals=None, weight=None, rounds=4) == (0, D(1))
    assert tn.check_finals(finals=2, weight=" 1,25 ", rounds=4) == (2, D("1.25"))
    assert tn.check_finals(finals=1, weight="2.00", rounds=4) == (1, D(2))
    assert tn.check_finals(finals=0, weight="2", rounds=4) == (0, D(1))  # no finals: every round counts once
    assert tn.multipliers(StoredTournament(
        id=1, guild_id=1, name="Cup", ruleset_name="fiim", ruleset={}, scoring="fiim-7", rounds=4, tables=1, seed=1,
        status="seated", current_round=0, organiser_id=1, created_at=datetime(2026, 12, 1, tzinfo=UTC), finals=2,
        finals_weight=D("1.25"))) == {3: D("1.25"), 4: D("1.25")}


def test_a_round_of_fifty_players_is_posted_in_whole_messages() -> None:
    players = tuple(TournamentPlayer(10**18 + i, f"player {i}") for i in range(150))
    schedule = tuple(ScheduledSeat(1, table, seat, players[(table - 1) * 10 + seat - 1].user_id)
                     for table in range(1, 6) for seat in range(1, 11))
    tables = [RoundTable(1, n, 10**18 + 100 + n, 10**18 + 200 + n, 10**18 + 300 + n) for n in range(1, 6)]
    tm = StoredTournament(id=1, guild_id=1, name="Большой кубок Тбилиси", ruleset_name="fiim", ruleset={},
                          scoring="fiim-7", rounds=10, tables=5, seed=1, status="playing", current_round=1,
                          organiser_id=1, created_at=datetime(2026, 12, 1, tzinfo=UTC), players=players,
                          schedule=schedule, round_tables=tuple(tables))
    commands = {"cmd_new": "</mafia new:1>", "cmd_start": "</mafia start:1>"}
    for lang in ("en", "ru", "ka"):
        pages = round_text(lang, tm, 1, tables, commands)
        assert len(pages) > 1
        assert all(len(page) <= PAGE_LIMIT for page in pages)
        text = "\n".join(pages)
        assert "…" not in text
        for seat in schedule:
            assert t(lang, "tournament.round.seat", seat=seat.seat, user=f"<@{seat.user_id}>") in text
        assert all(f"<@{p.user_id}>" in text for p in players[50:])  # the hundred who sit this round out
