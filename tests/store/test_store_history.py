from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

import pytest

from engine import (
    CLASSIC,
    FIIM,
    Abandon,
    Disqualify,
    Game,
    GiveFoul,
    MakeBestMove,
    Role,
    Ruleset,
    Shoot,
    Timeout,
    command_from_data,
    event_from_data,
    events,
)
from mafiabot.core.protocol import BestMove, Check, Departure, GameHeader, Moment, Nomination, build_protocol
from mafiabot.store import GameClosedError, GameFinal, Store, export, final_from_game
from mafiabot.tools.simulate import play_random_game

if TYPE_CHECKING:
    from tests.store.conftest import Scripted, StartScripted

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
GUILD = 700
FIIM_ROLES = (Role.DON, Role.MAFIA, Role.MAFIA, Role.SHERIFF, *[Role.CITIZEN] * 6)
ROLES_6 = (Role.DON, Role.MAFIA, Role.SHERIFF, Role.CITIZEN, Role.CITIZEN, Role.CITIZEN)
USERS = list(range(101, 111))


async def _fiim_game(start_game: StartScripted) -> Scripted:
    """Night 1 kills seat 10, who names 1, 2, 4 (two black); seat 3 fouls out, 1 and 2 are disqualified."""
    table = await start_game(GUILD, "fiim", USERS, FIIM_ROLES, at=T0)
    await table.run(Timeout())
    await table.end_floors()
    await table.run(Shoot(seat=1, target=10), Shoot(seat=2, target=10), Shoot(seat=3, target=10), Timeout())
    await table.run(MakeBestMove(seat=10, targets=(1, 2, 4)))
    await table.run(*[GiveFoul(seat=3)] * 4, Disqualify(seat=1, reason="phone"), Disqualify(seat=2))
    await table.finish()
    return table


async def test_protocol_of_a_scripted_game(store: Store, start_game: StartScripted) -> None:
    table = await _fiim_game(start_game)
    protocol = await store.game_protocol(table.game_id)

    assert (protocol.result, protocol.reason) == ("red", "all_black_gone")
    assert (protocol.game.id, protocol.game.guild_id, protocol.game.status) == (table.game_id, GUILD, "finished")
    assert [n.number for n in protocol.nights] == [0, 1]
    night = protocol.nights[1]
    assert night.shots == [Nomination(1, 10), Nomination(2, 10), Nomination(3, 10)]
    assert (night.mafia_target, night.killed, night.healed, night.checks) == (10, (10,), None, [])
    assert night.best_move == BestMove(10, (1, 2, 4), 2)

    assert [d.number for d in protocol.days] == [1, 2]
    day1, day2 = protocol.days
    assert [(s.seat, s.kind, s.ended) for s in day1.speeches] == [(seat, "speech", "thanks") for seat in range(1, 11)]
    assert (day1.nominations, day1.votes, day1.no_vote) == ([], [], "no_nominations")
    assert day2.speeches[0].seat == 10
    assert day2.speeches[0].kind == "last_word"

    assert [(f.seat, f.total, f.at) for f in protocol.fouls] == [(3, n, Moment("day", 2)) for n in (1, 2, 3, 4)]
    assert [(r.seat, r.cause, r.reason) for r in protocol.removals] == [
        (3, "fouls", ""), (1, "disqualified", "phone"), (2, "disqualified", ""),
    ]
    seats = {s.seat: s for s in protocol.seats}
    assert seats[10].departure == Departure("killed", Moment("night", 1))
    assert (seats[3].fouls, seats[3].removed, seats[3].role, seats[3].team) == (4, True, "mafia", "black")
    assert {s.seat: s.points for s in protocol.seats} == {
        1: Decimal("-0.5"), 2: Decimal("-0.5"), 3: Decimal("-0.5"),
        4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: Decimal("1.25"),
    }
    assert [s.won for s in protocol.seats] == [False] * 3 + [True] * 7
    assert [(s.user_id, s.display_name) for s in protocol.seats][:2] == [(101, "Player 101"), (102, "Player 102")]


@pytest.mark.parametrize(("ruleset", "seed"), [(CLASSIC, 3), (FIIM, 11)])
async def test_protocol_of_a_whole_random_game_agrees_with_the_engine(
    store: Store, start_game: StartScripted, ruleset: Ruleset, seed: int,
) -> None:
    played = play_random_game(ruleset, 10, random.Random(seed))
    table = await start_game(GUILD, ruleset, USERS, played.state.roles, at=T0)
    await table.run(*played.history[1:])
    await table.finish()
    protocol = await store.game_protocol(table.game_id)
    state = played.state

    assert state.outcome is not None
    assert (protocol.result, protocol.reason) == (state.outcome.result.value, state.outcome.reason.value)
    assert {s.seat: s.points for s in protocol.seats} == played.points()
    departed = {s.seat: s.departure.cause for s in protocol.seats if s.departure is not None}
    assert departed == {d.seat: d.cause.value for d in state.departures}
    nominated = [e for e in played.events if isinstance(e, events.Nominated)]
    assert sum(len(d.nominations) for d in protocol.days) == len(nominated)
    closed = [e for e in played.events if isinstance(e, events.VotingClosed)]
    rounds = [v for d in protocol.days for v in d.votes]
    assert len(rounds) == len(closed)
    for vote, event in zip(rounds, closed, strict=True):
        assert vote.closed
        assert sum(t.total for t in vote.tally) == sum(len(v) for _, v in event.tally) + len(event.silent)
    killed = [seat for n in protocol.nights for seat in n.killed]
    assert killed == [seat for e in played.events if isinstance(e, events.NightResolved) for seat in e.killed]
    checks = [c for n in protocol.nights for c in n.checks]
    assert all(isinstance(c, Check) and c.by in ("don", "sheriff") for c in checks)


def test_protocol_builds_from_a_live_game_without_the_store() -> None:
    played = play_random_game(CLASSIC, 10, random.Random(5))
    protocol = build_protocol(
        header=GameHeader(ruleset_name="classic"),
        seats=[],
        events=played.events,
        points=played.points(),
    )
    assert [s.role for s in protocol.seats] == [r.value for r in played.state.roles]
    assert played.state.outcome is not None
    assert protocol.result == played.state.outcome.result.value


async def test_recent_games_newest_first_on_this_server_only(store: Store, start_game: StartScripted) -> None:
    tables = [await start_game(GUILD, "classic", USERS[:6], ROLES_6, at=T0 + timedelta(days=day), channel_id=555 + day)
              for day in range(3)]
    ids = [table.game_id for table in tables]
    await start_game(GUILD + 1, "classic", USERS[:6], ROLES_6, at=T0 + timedelta(days=9), channel_id=600)
    await store.finish_game(ids[0], GameFinal("abandoned", "abandoned"), at=T0 + timedelta(hours=1))
    await tables[2].run(Timeout())  # night 0 ends: day 1
    await tables[2].end_floors()
    assert tables[2].game.state.day == 1

    recent = await store.recent_games(GUILD, limit=2)
    assert [g.days for g in recent] == [1, 0]  # counted in SQL, without loading the logs
    assert [g.id for g in recent] == [ids[2], ids[1]]
    assert all((g.players, g.status, g.ruleset_name, g.judge_id) == (6, "open", "classic", 9) for g in recent)
    everything = await store.recent_games(GUILD)
    assert [g.id for g in everything] == ids[::-1]
    assert (everything[-1].status, everything[-1].result) == ("abandoned", "abandoned")


async def test_a_game_is_finished_once(store: Store, start_game: StartScripted) -> None:
    table = await start_game(GUILD, "classic", USERS[:6], ROLES_6, at=T0)
    await table.run(Timeout(), Disqualify(seat=1), Disqualify(seat=2))
    await table.finish()
    with pytest.raises(GameClosedError):
        await table.finish()
    with pytest.raises(GameClosedError):
        await store.finish_game(table.game_id, GameFinal("abandoned", "abandoned"))
    assert (await store.get_game(table.game_id)).status == "finished"
    assert await store.open_games() == []


async def test_an_abandoned_game_counts_for_nothing(store: Store, start_game: StartScripted) -> None:
    table = await start_game(GUILD, "classic", USERS[:6], ROLES_6, at=T0)
    await table.run(Timeout(), GiveFoul(seat=4))
    await table.run(Abandon())
    final = final_from_game(table.game)
    assert final.abandoned
    assert final.seats == ()
    await table.finish()
    game = await store.get_game(table.game_id)
    assert (game.status, game.result) == ("abandoned", "abandoned")
    assert await store.league(GUILD) == []
    assert (await store.player_stats(GUILD, USERS[3])).games == 0
    assert await store.ratings(GUILD, "classic") == []
    assert all(s.points is None for s in (await store.game_protocol(table.game_id)).seats)


async def test_json_export_parses_back_and_replays(store: Store, start_game: StartScripted) -> None:
    table = await _fiim_game(start_game)
    data = json.loads(await store.export_json(table.game_id))
    assert data["format"] == "mafiabot.game/1"
    assert data["game"]["id"] == table.game_id
    assert data["game"]["result"] == "red"
    assert datetime.fromisoformat(data["game"]["finished_at"]) == table.at
    assert [s["user_id"] for s in data["seats"]] == USERS
    commands = [command_from_data(c["command"]) for c in data["log"]]
    assert commands == table.applied
    assert Game.replay(FIIM, commands).state.to_data() == table.game.state.to_data()
    assert [event_from_data(e) for c in data["log"] for e in c["events"]] == table.game.events
    seats = data["protocol"]["seats"]
    assert [Decimal(s["points"]) for s in seats] == [table.game.points()[s] for s in range(1, 11)]
    assert data["protocol"]["nights"][1]["best_move"] == {"seat": 10, "targets": [1, 2, 4], "black": 2}


async def test_csv_exports_parse_back(store: Store, start_game: StartScripted) -> None:
    table = await _fiim_game(start_game)
    rows = list(csv.DictReader(io.StringIO(await store.export_csv(table.game_id))))
    assert [int(r["seat"]) for r in rows] == list(range(1, 11))
    assert [int(r["user_id"]) for r in rows] == USERS
    assert sum(Decimal(r["points"]) for r in rows) == Decimal("5.75")  # 7 wins + 0.25 - 3 * 0.5
    assert rows[9]["left_cause"] == "killed"
    assert rows[9]["left_at"] == "night 1"
    assert (rows[2]["role"], rows[2]["fouls"], rows[2]["removed"], rows[2]["won"]) == ("mafia", "4", "1", "0")

    log = list(csv.DictReader(io.StringIO(await store.export_csv(table.game_id, table="log"))))
    assert len(log) == sum(max(1, len(c.events)) for c in await store.load_log(table.game_id))
    assert [json.loads(r["event"]) for r in log if r["event"]] == [
        e for c in await store.load_log(table.game_id) for e in c.events
    ]


FORMULAS = ("=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tTab", "\rCR")


async def test_a_name_that_looks_like_a_formula_is_written_as_text(store: Store, start_game: StartScripted) -> None:
    # OWASP's CSV injection advice: a cell starting with = + - @ tab or CR is quoted with a leading '.
    table = await _fiim_game(start_game)
    protocol = await store.game_protocol(table.game_id)
    named = tuple(dataclasses.replace(s, display_name=FORMULAS[i % len(FORMULAS)])
                  for i, s in enumerate(protocol.seats))
    rows = list(csv.DictReader(io.StringIO(export.seats_csv(dataclasses.replace(protocol, seats=named)))))
    assert [r["display_name"] for r in rows] == [f"'{FORMULAS[i % len(FORMULAS)]}" for i in range(10)]
    assert sum(Decimal(r["points"]) for r in rows) == Decimal("5.75")  # negative points stay numbers
    assert any(r["points"].startswith("-") for r in rows)
    log = list(csv.reader(io.StringIO(await store.export_csv(table.game_id, table="log"))))
    assert not [cell for row in log for cell in row if cell[:1] in ("=", "+", "@", "\t", "\r")]
