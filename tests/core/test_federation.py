"""Played games exported to the rating sites' formats, checked field by field against their definitions.

The definitions are written from the sites' sources in ``federation_formats`` (which names each file).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import jsonschema
import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    AwardPoints,
    DeclareDraw,
    Game,
    GiveFoul,
    Leave,
    MakeBestMove,
    Phase,
    RevokeFoul,
    TakeBack,
    Timeout,
    to_data,
)
from mafiabot.core.federation import (
    ExportRefusedError,
    Placement,
    federation_json,
    mafiaratings_game,
    polemica_game,
    rules_code,
)
from mafiabot.core.protocol import Protocol
from mafiabot.core.records import SeatInfo, StoredCommand, StoredGame
from mafiabot.store.history import protocol_of
from tests.core.federation_formats import MAFIARATINGS, POLEMICA, mafiaratings_problems, polemica_kicked
from tests.engine.helpers import (
    CLASSIC_DOCTOR,
    TEN,
    TEN_DOCTOR,
    TWELVE,
    advance,
    end_floors,
    kill,
    lift,
    play_day,
    play_night,
    speeches,
    start,
    to_speeches,
    vote,
)

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
ALL = range(1, 11)


def stored(game: Game) -> tuple[StoredGame, Protocol]:
    """``game`` as the store keeps it (each command with its events, ten seconds apart) and its protocol."""
    replay = Game(game.ruleset)
    log = [StoredCommand(i + 1, to_data(c), [to_data(e) for e in replay.apply(c)], None, T0 + timedelta(seconds=10 * i))
           for i, c in enumerate(game.history)]
    seats = game.state.players
    record = StoredGame(
        id=1, guild_id=9, channel_id=1, voice_channel_id=2, judge_id=7, ruleset_name=game.ruleset.name,
        ruleset=game.ruleset.to_dict(), language="ru", status="finished", created_at=T0, finished_at=log[-1].at,
        result=None, reason=None, last_seq=len(log), timer_id=None, timer_deadline=None, timer_remaining=None,
        discord={}, seats=[SeatInfo(s, 100 + s, f"Игрок {s}") for s in range(1, seats + 1)], log=log,
    )
    return record, protocol_of(record, game.points())


def mr_data(record: StoredGame, protocol: Protocol, place: Placement | None = None) -> Any:
    """The mafiaratings export as plain JSON, as the site reads it."""
    return json.loads(json.dumps(mafiaratings_game(record, protocol, place)))


def pl_data(record: StoredGame, protocol: Protocol, place: Placement | None = None) -> Any:
    """The Polemica export as plain JSON, as the site reads it."""
    return json.loads(json.dumps(polemica_game(record, protocol, place)))


def others(*seats: int) -> list[int]:
    return [s for s in ALL if s not in seats]


def vote_kill_and_best_move() -> Game:
    """FIIM: 2 voted out on day 1, 5 shot on night 1 names 1 3 6, the Sheriff checks the Don; red wins."""
    game = start(FIIM, TEN)  # D#1 M#2 M#3 S#4
    game.apply(Timeout())
    play_day(game, {5: 2, 6: 7}, {2: others(2), 7: [2]})
    play_night(game, shots={1: 5, 3: 5}, checks={4: 1, 1: 4})
    game.apply(GiveFoul(seat=8))  # while the best move is being made
    game.apply(MakeBestMove(seat=5, targets=(1, 3, 6)))
    game.apply(AwardPoints(seat=4, value="0.4", reason="found the Don"))
    play_day(game, {6: 3}, {3: [1, 4, 6, 7, 8, 9, 10]})
    kill(game, 6)
    play_day(game, {7: 1}, {1: [4, 7, 8, 9, 10]})
    assert game.state.outcome is not None
    return game


def car_crash_and_fouls() -> Game:
    """FIIM: day 1 ties 2 and 7 twice and the table lifts both; 8 is removed for four fouls; black wins."""
    game = start(FIIM, TEN)
    game.apply(Timeout())
    speeches(game, {5: 2, 6: 7})
    vote(game, {2: [1, 3, 4, 5, 6], 7: [2, 8, 9, 10]})  # the silent 7 goes to 7: five each
    end_floors(game, Phase.TIE_SPEECHES)
    game.apply(GiveFoul(seat=10))  # during the revote
    vote(game, {2: [1, 3, 4, 5, 6], 7: [2, 8, 9, 10]})
    lift(game, (1, 3, 4, 5, 6, 8))
    end_floors(game, Phase.FAREWELL)
    kill(game, 4)
    speeches(game, {5: 9})
    for _ in range(4):
        game.apply(GiveFoul(seat=8))
    end_floors(game, Phase.SPEECHES)
    if game.state.phase is Phase.VOTING:
        vote(game, {9: [1, 3, 5, 6, 10]})
    end_floors(game, Phase.FAREWELL)
    kill(game, 6)
    assert game.state.outcome is not None
    return game


def declared_draw() -> Game:
    """Classic: a night kill, a player who leaves, then the judge declares a draw."""
    game = start(CLASSIC, TEN)
    game.apply(Timeout())
    play_day(game)
    kill(game, 9)
    advance(game, lambda s: s.phase is Phase.SPEECHES)
    game.apply(GiveFoul(seat=10))
    game.apply(Leave(seat=7))
    game.apply(DeclareDraw())
    return game


def quiet_draw() -> Game:
    """FIIM's own draw: three nights and two days in a row with nobody leaving the table."""
    game = start(FIIM, TEN)
    advance(game, lambda s: s.outcome is not None)
    return game


def technical_fouls() -> Game:
    """FIIM with technical fouls: in 1's speech on day 1, 9 takes a technical and an ordinary foul and 8
    two technical fouls, which remove him; then 5, 6 and 7 are shot and black wins."""
    game = start(FIIM.replace(technical_fouls=True), TEN)
    game.apply(Timeout())
    to_speeches(game)
    game.apply(GiveFoul(seat=9, technical=True))
    game.apply(GiveFoul(seat=9))
    for _ in range(2):
        game.apply(GiveFoul(seat=8, technical=True))
    for target in (5, 6, 7):
        advance(game, lambda s: s.phase is Phase.NIGHT)
        kill(game, target)
    advance(game, lambda s: s.outcome is not None)
    return game


GAMES = {"vote_kill_best_move": vote_kill_and_best_move, "car_crash_fouls": car_crash_and_fouls,
         "draw": declared_draw, "quiet_draw": quiet_draw, "technical_fouls": technical_fouls}


@pytest.mark.parametrize("name", list(GAMES))
def test_every_field_of_a_mafiaratings_export_is_one_the_site_defines(name: str) -> None:
    record, protocol = stored(GAMES[name]())
    data = mr_data(record, protocol, Placement(club_id=1, event_id=2, moderator_id=3))
    jsonschema.Draft202012Validator(MAFIARATINGS, format_checker=jsonschema.FormatChecker()).validate(data)
    assert mafiaratings_problems(data) == []


@pytest.mark.parametrize("name", list(GAMES))
def test_every_field_of_a_polemica_export_is_one_the_model_defines(name: str) -> None:
    record, protocol = stored(GAMES[name]())
    data = pl_data(record, protocol)
    jsonschema.Draft202012Validator(POLEMICA).validate(data)
    expected = {}
    for seat in protocol.seats:
        if seat.departure is not None:
            how = {"killed": "kill", "voted_out": "voting", "lifted": "voting"}.get(seat.departure.cause, "disqual")
            expected[seat.seat] = how
    assert polemica_kicked(data) == expected


def test_a_vote_out_a_night_kill_and_a_best_move_in_mafiaratings_terms() -> None:
    data = mr_data(*stored(vote_kill_and_best_move()))
    players = data["players"]
    assert data["winner"] == "civ"
    assert data["rules"] == "0002000010000"  # FIIM: no three tied lifted at nine, a best move, a last word
    assert [p["role"] for p in players] == ["don", "maf", "maf", "sheriff"] + ["civ"] * 6
    assert players[1]["death"] == {"round": 0, "type": "day"}  # voted out on the first day: round 0
    assert players[4]["death"] == {"round": 1, "type": "night"}
    assert players[4]["legacy"] == [1, 3, 6]
    assert players[5]["death"] == {"round": 2, "type": "night"}
    assert players[0]["sheriff"] == 1
    assert players[3]["don"] == 1
    assert players[0]["shooting"] == [5, 6]
    assert players[2]["shooting"] == [5]
    assert players[3]["bonus"] == 0.4
    assert players[3]["comment"] == "found the Don"
    assert players[4]["nominating"] == [2]
    assert players[6]["nominating"] == [None, None, 1]
    assert players[1]["voting"] == [7]  # the silent 2 goes to the last nominee
    assert players[9]["voting"] == [2, 3, 1]
    assert players[7]["warnings"] == [{"round": 1, "time": "night kill speaking", "speaker": 5}]
    pl = pl_data(*stored(vote_kill_and_best_move()))
    assert pl["players"][7]["fouls"][0]["stage"] == {"type": "guess", "day": 1, "player": 5}


def test_a_car_crash_and_a_removal_for_fouls_in_mafiaratings_terms() -> None:
    data = mr_data(*stored(car_crash_and_fouls()))
    players = data["players"]
    assert data["winner"] == "maf"
    assert players[1]["death"] == {"round": 0, "type": "day"}
    assert players[6]["death"] == {"round": 0, "type": "day"}
    assert players[0]["voting"][0] == [2, 2, True]  # main vote, revote, yes to lifting both
    assert players[1]["voting"][0] == [7, 7, False]
    removed = players[7]
    assert removed["death"]["type"] == "warnings"
    assert removed["death"]["round"] == 1
    assert len(removed["warnings"]) == 4
    assert players[9]["warnings"] == [{"round": 0, "time": "voting", "votingRound": 1}]  # the revote
    assert "time" not in removed["death"]  # the site reads it from the fourth warning


def test_the_rules_own_draw_is_a_tie_with_nobody_dead() -> None:
    data = mr_data(*stored(quiet_draw()))
    assert data["winner"] == "tie"
    assert all("death" not in p for p in data["players"])
    assert pl_data(*stored(quiet_draw()))["result"] is None


def test_a_draw_and_a_player_who_left_in_both_formats() -> None:
    record, protocol = stored(declared_draw())
    mr = mr_data(record, protocol)
    assert mr["winner"] == "tie"
    assert mr["players"][6]["death"]["type"] == "giveUp"
    assert mr["players"][9]["warnings"] == [{"round": 1, "time": "speaking", "speaker": 2}]
    pl = pl_data(record, protocol)
    assert pl["result"] is None  # Polemica's result has no draw
    assert pl["players"][6]["disqual"] == {"type": "speech", "day": 2, "player": 2}
    assert pl["players"][9]["fouls"][0]["stage"] == {"type": "speech", "day": 2, "player": 2}


def test_polemica_numbers_nominations_rounds_and_the_lift_vote() -> None:
    pl = pl_data(*stored(car_crash_and_fouls()), Placement(round=2, table=1, number=5))
    day_one = [v for v in pl["votes"] if v["day"] == 1]
    assert [(v["voter"], v["candidate"]) for v in day_one if v.get("num") == 0] == [(5, 2), (6, 7)]
    assert {v["num"] for v in day_one if "num" in v} == {0, 1, 2}
    assert sorted(v["voter"] for v in day_one if "num" not in v) == [1, 3, 4, 5, 6, 8]
    assert pl["result"] == 1
    assert (pl["phase"], pl["table"], pl["num"]) == (2, 1, 5)
    assert [p["role"] for p in pl["players"][:4]] == [0, 1, 1, 3]
    assert pl["players"][9]["fouls"][0]["stage"] == {"type": "voting", "day": 1, "voting": 2}


def test_technical_fouls_and_a_removal_by_them_in_both_formats() -> None:
    record, protocol = stored(technical_fouls())
    mr = mr_data(record, protocol)
    assert mr["rules"] == "0002000010001"  # 9.6.2: technical fouls, the second removes
    speaking = {"round": 0, "time": "speaking", "speaker": 1}
    removed, fouled = mr["players"][7], mr["players"][8]
    assert removed["death"] == {"round": 0, "type": "techFouls"}  # the site reads its time from the second
    assert removed["techFouls"] == [speaking, speaking]
    assert "warnings" not in removed
    assert fouled["techFouls"] == [speaking]
    assert fouled["warnings"] == [speaking]
    pl = pl_data(record, protocol)
    stage = {"type": "speech", "day": 1, "player": 1}
    assert [f["stage"] for f in pl["players"][7]["techs"]] == [stage, stage]
    assert pl["players"][7]["fouls"] == []
    assert pl["players"][7]["disqual"] == stage
    assert [f["stage"] for f in pl["players"][8]["techs"]] == [stage]
    assert [f["stage"] for f in pl["players"][8]["fouls"]] == [stage]
    assert pl["players"][8]["techs"][0]["time"] < pl["players"][8]["fouls"][0]["time"]


def test_technical_fouls_taken_back_leave_the_exports() -> None:
    game = start(FIIM.replace(technical_fouls=True), TEN)
    game.apply(Timeout())
    to_speeches(game)
    game.apply(GiveFoul(seat=9))
    game.apply(GiveFoul(seat=9, technical=True))
    game.apply(RevokeFoul(seat=9))  # the technical one, the last given
    game.apply(GiveFoul(seat=4, technical=True))
    game.apply(TakeBack())
    game.apply(DeclareDraw())
    record, protocol = stored(game)
    mr = mr_data(record, protocol)
    assert "techFouls" not in mr["players"][8]
    assert len(mr["players"][8]["warnings"]) == 1
    assert "techFouls" not in mr["players"][3]
    pl = pl_data(record, protocol)
    assert (pl["players"][8]["techs"], len(pl["players"][8]["fouls"])) == ([], 1)
    assert pl["players"][3]["techs"] == []


def test_the_rules_code_names_the_three_foul_penalty_and_technical_fouls() -> None:
    assert rules_code(FIIM)[11:] == "00"
    assert rules_code(FIIM.replace(three_foul_penalty="short_speech", technical_fouls=True))[11:] == "11"
    assert rules_code(FIIM.replace(three_foul_penalty="none"))[11:] == "20"


@pytest.mark.parametrize(("ruleset", "seating", "code"), [(GEORGIAN, TWELVE, "export.seats"),
                                                          (CLASSIC_DOCTOR, TEN_DOCTOR, "export.roles")])
def test_a_game_the_sites_do_not_know_is_refused_with_the_reason(ruleset: Any, seating: str, code: str) -> None:
    game = start(ruleset, seating)
    game.apply(DeclareDraw())
    record, protocol = stored(game)
    for export in (mafiaratings_game, polemica_game):
        with pytest.raises(ExportRefusedError) as caught:
            export(record, protocol)
        assert caught.value.code == code


def test_a_tournament_is_one_file_with_its_games_in_order() -> None:
    first, second = stored(vote_kill_and_best_move()), stored(declared_draw())
    text = federation_json("mafiaratings", [(*first, Placement(number=1)), (*second, Placement(number=2))])
    data = json.loads(text)
    assert [g["gameNum"] for g in data] == [1, 2]
    assert [g["winner"] for g in data] == ["civ", "tie"]
