"""A tournament's life and standings without Discord or SQL, checked against a hand computation."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from engine import CLASSIC, FIIM, GEORGIAN, Game, find_ruleset, to_data
from engine.ruleset import Ruleset
from mafiabot.core import tournaments as tn
from mafiabot.core.records import SeatInfo, StoredCommand, StoredGame, StoredTournament, TournamentPlayer
from mafiabot.core.runtime import FixedSeats, TableError, deal_seats
from mafiabot.core.seating import quality
from mafiabot.core.tables import Seated
from tests.engine.test_scoring import game_one, game_two
from tests.test_table_manager import VOICE, open_lobby, world

D = Decimal
T0 = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)
PLAYERS = tuple(range(201, 211))
# Each seat's points in the two example games under fiim-7 (docs/tournaments.md, examples 1 and 2).
GAME_ONE = {1: "-0.2", 2: "-0.2", 3: "-0.2", 4: "1.7", 5: "1.3", 6: "1.3", 7: "1.8", 8: "1.3", 9: "1.3", 10: "1.3"}
GAME_TWO = {1: "1.0", 2: "1.3", 3: "1.3", 4: "0.3", 5: "0.3", 6: "0.3", 7: "0.3", 8: "-0.2", 9: "-0.2", 10: "-0.2"}


def registered(players: tuple[int, ...] = PLAYERS, *, rounds: int = 2, tables: int = 1) -> StoredTournament:
    return StoredTournament(
        id=1, guild_id=9, name="Cup", ruleset_name=FIIM.name, ruleset=FIIM.to_dict(), scoring="fiim-7",
        rounds=rounds, tables=tables, seed=42, status=tn.REGISTRATION, current_round=0, organiser_id=7,
        created_at=T0, players=tuple(TournamentPlayer(p, f"P{p}") for p in players),
    )


def seated(t: StoredTournament) -> StoredTournament:
    return dataclasses.replace(t, status=tn.SEATED, schedule=tuple(tn.seats_of(tn.make_seating(t))))


def opened(t: StoredTournament, game_ids: tuple[int | None, ...] = ()) -> StoredTournament:
    number = tn.next_round(t)
    tables = tn.round_tables(t, number, [(1000 + i, 2000 + i) for i in range(t.tables)])
    tables = [dataclasses.replace(rt, game_id=gid) for rt, gid in zip(tables, game_ids, strict=False)] + tables[
        len(game_ids):]
    return dataclasses.replace(t, status=tn.PLAYING, current_round=number, round_tables=t.round_tables + tuple(tables))


def stored_game(game_id: int, game: Game, players: tuple[int, ...], ruleset: Ruleset = FIIM) -> StoredGame:
    log = [StoredCommand(i + 1, to_data(c), [], None, T0) for i, c in enumerate(game.history)]
    return StoredGame(
        id=game_id, guild_id=9, channel_id=1000, voice_channel_id=2000, judge_id=7, ruleset_name=ruleset.name,
        ruleset=ruleset.to_dict(), language="en", status="finished", created_at=T0, finished_at=T0, result=None,
        reason=None, last_seq=len(log), timer_id=None, timer_deadline=None, timer_remaining=None, discord={},
        seats=[SeatInfo(s + 1, p, f"P{p}") for s, p in enumerate(players)], log=log,
    )


def test_a_new_tournament_checks_its_sizes_and_scoring() -> None:
    assert tn.check_new(name="Cup", rounds=4, tables=2, scoring=None, ruleset=FIIM).name == "fiim-7"
    assert tn.check_new(name="Cup", rounds=4, tables=2, scoring="FIIM-3", ruleset=FIIM).name == "fiim-3"
    assert tn.check_new(name="Cup", rounds=1, tables=1, scoring="club", ruleset=CLASSIC).name == "club"
    for kwargs, code in (
        ({"name": " "}, "tournament.name"), ({"name": "x" * 101}, "tournament.name"),
        ({"rounds": 0}, "tournament.rounds"), ({"rounds": 31}, "tournament.rounds"),
        ({"tables": 0}, "tournament.tables"), ({"tables": 6}, "tournament.tables"),
        ({"scoring": "fiim-9"}, "tournament.scoring"),
    ):
        args: dict[str, object] = {"name": "Cup", "rounds": 2, "tables": 1, "scoring": None, "ruleset": FIIM, **kwargs}
        with pytest.raises(tn.TournamentError) as caught:
            tn.check_new(**args)  # type: ignore[arg-type]
        assert caught.value.code == code


def test_a_ruleset_without_a_ten_or_twelve_seat_table_cannot_hold_a_tournament() -> None:
    small = find_ruleset("classic")
    small = small.replace(setups={n: s for n, s in small.setups.items() if n != 10}, default_players=8)
    with pytest.raises(tn.TournamentError) as caught:
        tn.check_new(name="Cup", rounds=1, tables=1, scoring=None, ruleset=small)
    assert caught.value.code == "tournament.players"
    eleven = GEORGIAN.replace(default_players=11)
    with pytest.raises(tn.TournamentError) as caught:
        tn.check_new(name="Cup", rounds=1, tables=1, scoring=None, ruleset=eleven)
    assert caught.value.code == "tournament.players"


def test_a_georgian_tournament_seats_twelve_a_table_and_rotates_its_sit_outs() -> None:
    # 30 players, 2 tables of 12, 5 rounds: 120 seats, 4 games each, 6 sitting out every round.
    assert tn.check_new(name="Cup", rounds=5, tables=2, scoring=None, ruleset=GEORGIAN).name == "fiim-7"
    t = dataclasses.replace(registered(tuple(range(401, 431)), rounds=5, tables=2),
                            ruleset_name=GEORGIAN.name, ruleset=GEORGIAN.to_dict())
    assert tn.table_size(t) == 12
    schedule = tn.make_seating(t)
    assert schedule.seats == 12
    assert all(len(table) == 12 for tables in schedule.rounds for table in tables)
    out = [schedule.sitting_out(r) for r in range(5)]
    assert all(len(o) == 6 for o in out)
    assert sorted(p for o in out for p in o) == list(range(401, 431))  # everyone sits out once
    kept = seated(t)
    assert tn.stored_schedule(kept) == schedule
    assert len(tn.table_seats(kept, 1, 2)) == 12


def test_the_schedule_comes_from_the_stored_seed_and_reads_back_the_same() -> None:
    t = registered(tuple(range(301, 321)), rounds=4, tables=2)
    first = tn.make_seating(t)
    assert tn.make_seating(t) == first
    assert tn.make_seating(dataclasses.replace(t, seed=43)) != first
    kept = seated(t)
    assert tn.stored_schedule(kept) == first
    figures = quality(tn.stored_schedule(kept))
    assert (figures.games_min, figures.games_max) == (4, 4)
    with pytest.raises(tn.TournamentError) as caught:
        tn.make_seating(kept)
    assert caught.value.code == "tournament.closed"


def test_forbidden_pairs_never_share_a_table() -> None:
    t = dataclasses.replace(registered(tuple(range(301, 321)), rounds=4, tables=2), forbidden=((301, 302), (303, 320)))
    kept = seated(t)
    for r in range(1, 5):
        for table in (1, 2):
            seats = set(tn.table_seats(kept, r, table))
            assert not {301, 302} <= seats
            assert not {303, 320} <= seats


def test_too_few_players_is_the_schedules_refusal() -> None:
    with pytest.raises(tn.TournamentError) as caught:
        tn.make_seating(registered(PLAYERS[:9]))
    assert (caught.value.code, caught.value.data) == ("seating.too_few_players", {"players": 9, "needed": 10})
    with pytest.raises(tn.TournamentError) as caught:
        tn.make_seating(registered((*PLAYERS, 211)))
    assert caught.value.code == "seating.uneven_games"


def test_rounds_open_in_order_and_only_when_the_last_one_closed() -> None:
    t = registered()
    with pytest.raises(tn.TournamentError) as caught:
        tn.next_round(t)
    assert caught.value.code == "tournament.not_seated"
    t = seated(t)
    assert tn.next_round(t) == 1
    t = opened(t)
    with pytest.raises(tn.TournamentError) as caught:
        tn.next_round(t)
    assert (caught.value.code, caught.value.data) == ("tournament.round_open", {"round": 1})
    t = dataclasses.replace(t, status=tn.SEATED)
    assert tn.next_round(t) == 2
    t = dataclasses.replace(opened(t), status=tn.FINISHED)
    with pytest.raises(tn.TournamentError) as caught:
        tn.next_round(t)
    assert caught.value.code == "tournament.finished"


def test_a_round_needs_one_pair_of_distinct_channels_per_table() -> None:
    t = seated(registered(tuple(range(301, 321)), rounds=2, tables=2))
    with pytest.raises(tn.TournamentError) as caught:
        tn.round_tables(t, 1, [(1, 2)])
    assert caught.value.data == {"tables": 2, "given": 1}
    for channels in ([(1, 2), (1, 3)], [(1, 2), (3, 2)]):
        with pytest.raises(tn.TournamentError) as caught:
            tn.round_tables(t, 1, channels)
        assert caught.value.code == "tournament.channel_twice"
    tables = tn.round_tables(t, 1, [(1, 2), (3, 4)], judges=[77])
    assert [(rt.table, rt.channel_id, rt.voice_channel_id, rt.judge_id) for rt in tables] == [
        (1, 1, 2, 77), (2, 3, 4, None)]


def test_only_the_scheduled_players_sit_at_a_table_and_at_their_seat() -> None:
    t = opened(seated(registered(tuple(range(301, 321)), rounds=2, tables=2)))
    first, second = tn.current_tables(t)
    for seat, player in enumerate(tn.table_seats(t, 1, 1), start=1):
        assert tn.check_seat(t, first, player) == seat
        with pytest.raises(tn.TournamentError) as caught:
            tn.check_seat(t, second, player)
        assert caught.value.code == "tournament.not_at_table"


def test_a_round_is_complete_when_every_tables_game_has_ended() -> None:
    t = opened(seated(registered(tuple(range(301, 321)), rounds=2, tables=2)), game_ids=(11, None))
    assert not tn.round_complete(t, [11])
    t = dataclasses.replace(t, round_tables=tuple(dataclasses.replace(rt, game_id=rt.game_id or 12)
                                                  for rt in t.round_tables))
    assert not tn.round_complete(t, [11])
    assert tn.round_complete(t, [11, 12])
    assert not tn.round_complete(dataclasses.replace(t, status=tn.SEATED), [11, 12])


def test_standings_equal_the_hand_computation() -> None:
    t = opened(seated(registered()), game_ids=(1,))
    t = opened(dataclasses.replace(t, status=tn.SEATED), game_ids=(2,))
    first, second = tn.table_seats(t, 1, 1), tn.table_seats(t, 2, 1)
    games = {1: stored_game(1, game_one(), first), 2: stored_game(2, game_two(), second)}
    # By hand: each player's two seats' points, plus Ci for the red player shot on Night 1 who lost
    # (game two, seat 5): min(0.5 · K / round(0.4 · 2 games), 0.5) = 0.5.
    expected = {}
    for p in PLAYERS:
        ci = D("0.5") if second.index(p) + 1 == 5 else D(0)
        expected[p] = D(GAME_ONE[first.index(p) + 1]) + D(GAME_TWO[second.index(p) + 1]) + ci
    rows = tn.standings_of(t, games)
    assert {r.player: r.total for r in rows} == expected
    assert [r.total for r in rows] == sorted(expected.values(), reverse=True)
    assert all(r.games == 2 for r in rows)
    assert rows[0].place == 1


def test_a_game_not_yet_ended_counts_nothing_and_everyone_still_has_a_line() -> None:
    t = opened(seated(registered()), game_ids=(1,))
    seats = tn.table_seats(t, 1, 1)
    unfinished = game_one()
    unfinished.history = unfinished.history[:-1]
    rows = tn.standings_of(t, {1: stored_game(1, unfinished, seats)})
    assert sorted(r.player for r in rows) == sorted(PLAYERS)
    assert {r.total for r in rows} == {D(0)}
    assert {r.games for r in rows} == {0}


def test_exports_carry_every_line_with_exact_points() -> None:
    t = opened(seated(registered()), game_ids=(1,))
    rows = tn.standings_of(t, {1: stored_game(1, game_one(), tn.table_seats(t, 1, 1))})
    lines = list(csv.DictReader(io.StringIO(tn.standings_csv(t, rows))))
    assert [line["player"] for line in lines] == [str(r.player) for r in rows]
    assert lines[0]["total"] == "1.80000"  # one machine format: a dot and five decimals
    assert D(lines[0]["total"]) == rows[0].total == D("1.8")
    assert lines[0]["name"] == f"P{rows[0].player}"
    data = json.loads(tn.standings_json(t, rows))
    assert data["tournament"]["scoring"] == "fiim-7"
    assert data["tournament"]["seed"] == 42
    assert data["standings"] == tn.standing_records(t, rows)


async def test_a_tournament_lobby_seats_only_the_schedule_and_in_its_order() -> None:
    w = world()
    scheduled = tuple(range(1, 11))
    fixed = FixedSeats(tournament_id=1, round=2, table=1, players=scheduled)
    lobby = await open_lobby(w, fixed=fixed, ruleset=FIIM, seats=6, ruleset_name="classic")
    assert (lobby.seats, lobby.ruleset, lobby.strict, lobby.tournament) == (10, FIIM, True, True)
    with pytest.raises(TableError) as refused:
        w.manager.join(lobby.id, Seated(11, "stranger", VOICE))
    assert (refused.value.code, refused.value.data) == ("lobby.not_scheduled", {"table": 1, "round": 2})
    for user in reversed(scheduled):
        w.manager.join(lobby.id, Seated(user, f"P{user}", VOICE))
    assert [u for u, _ in lobby.players] == list(reversed(scheduled))
    for order in ("random", "join"):
        assert [u for u, _ in deal_seats(lobby, order=order, seed=5)] == list(scheduled)


def test_a_name_that_looks_like_a_formula_is_written_as_text_in_the_standings() -> None:
    names = ("=cmd|' /C calc'!A0", "+1+1", "-1+1", "@x", "\tx", "\rx", "Ann", "-", "=", "-1.5")
    t = opened(seated(registered()), game_ids=(1,))
    t = dataclasses.replace(t, players=tuple(dataclasses.replace(p, name=names[i]) for i, p in enumerate(t.players)))
    rows = tn.standings_of(t, {1: stored_game(1, game_one(), tn.table_seats(t, 1, 1))})
    by_player = {line["player"]: line["name"] for line in csv.DictReader(io.StringIO(tn.standings_csv(t, rows)))}
    expected = {str(p.user_id): p.name if p.name in ("Ann", "-1.5") else f"'{p.name}" for p in t.players}
    assert by_player == expected
    assert json.loads(tn.standings_json(t, rows))["standings"][0]["name"] in names  # JSON keeps them as they are
