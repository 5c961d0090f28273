"""The renderer alone: each engine event, in each language, as the messages and controls it draws.

No network, no emulator, no Discord: a tiny engine game and a read-only view of its table.
"""

from __future__ import annotations

import ast
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from engine import (
    Act,
    Cause,
    FloorKind,
    Game,
    NoVoteReason,
    Phase,
    Result,
    StartGame,
    Timeout,
    VoteKind,
    WinReason,
    legal_targets,
)
from engine import events as ev
from engine.events import Event, Turn
from engine.ruleset import find_ruleset
from engine.view import GameView
from mafiabot.core.meta import LIFT
from mafiabot.core.room import desired_room
from mafiabot.host.i18n import POINT_PLACES, countdown, decimal_text, t
from mafiabot.host.render import (
    Button,
    DropFromRoom,
    Menu,
    Outgoing,
    PostPicker,
    Rendered,
    ReturnToRoom,
    Route,
    Style,
    TableView,
    VoteWindow,
    night_picker,
    render,
    resumed,
)

LANGUAGES = ("en", "ru", "ka")
TABLE = 7
USERS = tuple(range(101, 111))
NAMES = tuple(f"P{seat}" for seat in range(1, 11))
BLACK = (7, 9, 10)
"""The black seats of the classic game dealt with seed 1."""
DEADLINE = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class _Game:
    """A game as the renderer reads it: a real state, and the events the case needs before its own."""

    state: GameView
    events: Sequence[Event]

    def points(self) -> Mapping[int, Decimal]:
        return {seat: Decimal(seat) / 10 for seat in range(1, self.state.players + 1)}


def _started(*, day: bool = False) -> Game:
    game = Game(find_ruleset("classic"))
    game.apply(StartGame(players=10, seed=1))
    if day:
        game.apply(Timeout())  # night zero ends: seat 1 speaks, nominations are open
    return game


def view(language: str, *, day: bool = False, before: Sequence[Event] = ()) -> TableView:
    game = _started(day=day)
    return TableView(id=TABLE, language=language, ruleset=game.ruleset, seats=USERS, names=NAMES,
                     game=_Game(game.state, [*game.events, *before]), deadline=DEADLINE, channel_id=55)


def label(language: str, seat: int) -> str:
    return t(language, "seat.label", seat=seat, name=NAMES[seat - 1])


def text(drawn: Rendered) -> str:
    return "\n".join(m.text for m in drawn.messages)


def ids(drawn: Rendered) -> list[str]:
    return [c.custom_id for m in drawn.messages for c in m.controls]


def _one_message_with(drawn: Rendered, *keys: str, language: str, **fields: object) -> None:
    assert len(drawn.messages) == 1
    for key in keys:
        assert t(language, key, **fields) in drawn.messages[0].text


# -- one case per event type: what it draws in a given language ---------------------------------------

Case = Callable[[str], None]
CASES: dict[type, list[Case]] = {}


def case(kind: type) -> Callable[[Case], Case]:
    def add(check: Case) -> Case:
        CASES.setdefault(kind, []).append(check)
        return check

    return add


@case(ev.GameStarted)
def _game_started(lang: str) -> None:
    v = view(lang)
    drawn = render(v, [ev.GameStarted(roles=v.game.state.roles), ev.NightFell(night=0)])
    (start,) = drawn.messages
    assert t(lang, "game.started", count=10, ruleset=t(lang, "ruleset.classic")) in start.text
    assert t(lang, "game.seat", seat=3, user="<@103>") in start.text
    assert t(lang, "night.zero") in start.text  # the night's texts ride with the held card button
    assert start.controls == (Button(t(lang, "button.card"), f"mafia:card:{TABLE}"),)
    assert start.room is not None
    assert start.room.members == tuple(USERS[s - 1] for s in BLACK)
    assert start.room.welcome == t(lang, "thread.welcome", seats="#7, #9, #10")
    # The public start ties no card to a seat: the black seats are only in the room's own welcome.
    assert all(label(lang, seat) not in start.text for seat in range(1, 11))
    assert "#7, #9, #10" not in start.text


@case(ev.NightFell)
def _night_zero(lang: str) -> None:
    drawn = render(view(lang), [ev.NightFell(night=0)])
    _one_message_with(drawn, "night.zero", language=lang)
    assert drawn.room == ()


@case(ev.NightFell)
def _night(lang: str) -> None:
    drawn = render(view(lang), [ev.NightFell(night=2)])
    _one_message_with(drawn, "night.falls", language=lang, night=2)
    assert ids(drawn) == [f"mafia:act:{TABLE}"]
    assert drawn.room == (PostPicker(2),)


def _secret(event: Event) -> Case:
    def check(lang: str) -> None:
        drawn = render(view(lang), [event])
        assert drawn == Rendered(())  # nothing public: no text, no control, no room change

    return check


case(ev.ShotFired)(_secret(ev.ShotFired(seat=9, target=3)))
case(ev.DonChecked)(_secret(ev.DonChecked(seat=7, target=6, sheriff=True)))
case(ev.SheriffChecked)(_secret(ev.SheriffChecked(seat=6, target=9, black=True)))
case(ev.Healed)(_secret(ev.Healed(seat=4, target=3)))
case(ev.ManiacActed)(_secret(ev.ManiacActed(seat=5, target=None)))


@case(ev.NightResolved)
def _killed(lang: str) -> None:
    drawn = render(view(lang), [ev.NightResolved(night=1, mafia_target=3, maniac_target=None, healed=None,
                                                 killed=(3,))])
    _one_message_with(drawn, "morning.title", language=lang, day=2)
    assert t(lang, "morning.killed", player=label(lang, 3)) in text(drawn)
    assert drawn.room == (DropFromRoom(3),)


@case(ev.NightResolved)
def _missed(lang: str) -> None:
    drawn = render(view(lang), [ev.NightResolved(night=1, mafia_target=None, maniac_target=None, healed=None,
                                                 killed=())])
    _one_message_with(drawn, "morning.title", "morning.nobody_hurt", language=lang, day=2)
    assert drawn.room == ()


@case(ev.BestMoveAsked)
def _best_move_asked(lang: str) -> None:
    drawn = render(view(lang), [ev.BestMoveAsked(seat=4)])
    _one_message_with(drawn, "best_move.asked", language=lang, player=label(lang, 4))
    assert drawn.messages[0].controls == (Button(t(lang, "button.best_move"), f"mafia:bestmove:{TABLE}"),)


@case(ev.BestMoveMade)
def _best_move_made(lang: str) -> None:
    drawn = render(view(lang), [ev.BestMoveMade(seat=4, targets=(7, 9, 2), black=2)])
    _one_message_with(drawn, "best_move.made", language=lang, player=label(lang, 4), seats="#7, #9, #2")


@case(ev.DayStarted)
def _first_day(lang: str) -> None:
    drawn = render(view(lang), [ev.DayStarted(day=1, opener=1, vote_cancelled=False)])
    _one_message_with(drawn, "day.first", language=lang, opener=label(lang, 1))


@case(ev.DayStarted)
def _later_day(lang: str) -> None:
    assert render(view(lang), [ev.DayStarted(day=2, opener=2, vote_cancelled=False)]) == Rendered(())
    drawn = render(view(lang), [ev.DayStarted(day=2, opener=2, vote_cancelled=True)])
    _one_message_with(drawn, "day.vote_cancelled", language=lang)


@case(ev.CriticalFoulsAnnounced)
def _critical(lang: str) -> None:
    drawn = render(view(lang), [ev.CriticalFoulsAnnounced(seats=(2, 5))])
    _one_message_with(drawn, "morning.critical", language=lang, seats="#2, #5")


@case(ev.StageStarted)
def _stage(lang: str) -> None:
    assert render(view(lang), [ev.StageStarted(phase=Phase.SPEECHES)]) == Rendered(())
    drawn = render(view(lang), [ev.StageStarted(phase=Phase.FINAL_WORDS)])
    _one_message_with(drawn, "end.final_words", language=lang)


@case(ev.FloorGiven)
def _floor(lang: str) -> None:
    v = view(lang, day=True)
    drawn = render(v, [ev.Nominated(seat=2, target=5), ev.FloorGiven(turn=Turn(seat=1, kind=FloorKind.SPEECH,
                                                                                   seconds=60))])
    (floor,) = drawn.messages  # the nomination's text rides with the floor's controls: one message
    assert t(lang, "nomination.accepted", target=label(lang, 5), seat=2) in floor.text
    assert t(lang, "floor.speech", seat=1, user="<@101>", count=60, countdown=countdown(lang, DEADLINE)) in floor.text
    thanks, menu = floor.controls
    assert thanks == Button(t(lang, "button.thanks"), f"mafia:thanks:{TABLE}", Style.SUCCESS)
    assert isinstance(menu, Menu)
    assert menu.custom_id == f"mafia:nominate:{TABLE}"
    assert menu.placeholder == t(lang, "select.nominate")
    targets = legal_targets(v.game.state, v.ruleset, Act.NOMINATE, 1, now=False)
    assert len(targets) > 5
    assert [o.value for o in menu.options] == [str(s) for s in targets]
    assert menu.options[0].label == label(lang, targets[0])


@case(ev.FloorGiven)
def _floor_without_nominations(lang: str) -> None:
    drawn = render(view(lang, day=True), [ev.FloorGiven(turn=Turn(seat=3, kind=FloorKind.LAST_WORD, seconds=60))])
    assert ids(drawn) == [f"mafia:thanks:{TABLE}"]  # a last word is no speech: no nominations


@case(ev.TurnSkipped)
def _skipped(lang: str) -> None:
    drawn = render(view(lang), [ev.TurnSkipped(seat=6, reason="fouls")])
    _one_message_with(drawn, "floor.skipped_fouls", language=lang, player=label(lang, 6))
    assert render(view(lang), [ev.TurnSkipped(seat=6, reason="dead")]) == Rendered(())


def _silent(event: Event) -> Case:
    def check(lang: str) -> None:
        assert render(view(lang), [event]) == Rendered(())

    return check


case(ev.SpeechPenaltyServed)(_silent(ev.SpeechPenaltyServed(seat=3, mode="skip")))
case(ev.FloorEnded)(_silent(ev.FloorEnded(seat=3, reason="timeout")))
case(ev.VoteCast)(_silent(ev.VoteCast(seat=3, candidate=5)))
case(ev.LiftVoteCast)(_silent(ev.LiftVoteCast(seat=3, yes=True)))


@case(ev.Nominated)
def _nominated(lang: str) -> None:
    drawn = render(view(lang), [ev.Nominated(seat=2, target=5)])
    _one_message_with(drawn, "nomination.accepted", language=lang, target=label(lang, 5), seat=2)


@case(ev.NomineesRecapped)
def _recap(lang: str) -> None:
    drawn = render(view(lang), [ev.NomineesRecapped(seats=(5, 8))])
    _one_message_with(drawn, "nomination.recap", language=lang, seats="#5, #8")


@case(ev.VotingStarted)
def _voting_started(lang: str) -> None:
    started = ev.VotingStarted(kind=VoteKind.MAIN, candidates=(5, 8))
    drawn = render(view(lang, before=[started]), [started], first=len(_started().events))
    (window,) = drawn.messages  # the start's text heads the first window
    assert t(lang, "vote.started.main", seats="#5, #8") in window.text
    assert t(lang, "vote.window", target=label(lang, 5), countdown=countdown(lang, DEADLINE)) in window.text
    assert window.vote == VoteWindow(5, 1, t(lang, "vote.started.main", seats="#5, #8"), new_round=True)
    assert window.controls == ()


@case(ev.VoteWindowClosed)
def _next_window(lang: str) -> None:
    started = ev.VotingStarted(kind=VoteKind.MAIN, candidates=(5, 8))
    v = view(lang, before=[started, ev.VoteWindowClosed(candidate=5)])
    (window,) = render(v, [ev.VoteWindowClosed(candidate=5)], first=len(v.game.events) - 1).messages
    assert window.text == t(lang, "vote.window", target=label(lang, 8), countdown=countdown(lang, DEADLINE))
    assert window.vote == VoteWindow(8, 1)
    last = ev.VoteWindowClosed(candidate=8)
    assert render(view(lang, before=[started, last]), [last]) == Rendered(())  # no one after the last


@case(ev.VotingClosed)
def _voting_closed(lang: str) -> None:
    drawn = render(view(lang), [ev.VotingClosed(kind=VoteKind.MAIN, tally=((5, (1, 2)), (8, (3,))), silent=(4,))])
    _one_message_with(drawn, "vote.result_title", language=lang)
    assert t(lang, "vote.result_line", target="#5", count=2, voters="#1, #2") in text(drawn)
    voters = "; ".join(["#3", t(lang, "vote.result_silent", seats="#4")])
    assert t(lang, "vote.result_line", target="#8", count=2, voters=voters) in text(drawn)
    assert t(lang, "vote.silent", target="#8", seats="#4") in text(drawn)


@case(ev.TieDeclared)
def _tie(lang: str) -> None:
    drawn = render(view(lang), [ev.TieDeclared(seats=(5, 8))])
    _one_message_with(drawn, "vote.tie", language=lang, seats="#5, #8")


@case(ev.LiftVoteStarted)
def _lift_started(lang: str) -> None:
    started = ev.LiftVoteStarted(seats=(5, 8))
    drawn = render(view(lang, before=[started]), [started], first=len(_started().events))
    (window,) = drawn.messages
    assert t(lang, "vote.lift", seats="#5, #8", count=6) in window.text
    assert window.vote is not None
    assert (window.vote.target, window.vote.round_no) == (LIFT, 1)


@case(ev.LiftVoteClosed)
def _lift_closed(lang: str) -> None:
    drawn = render(view(lang), [ev.LiftVoteClosed(yes=(1, 2), alive=10, passed=False)])
    _one_message_with(drawn, "vote.lift_failed", language=lang, count=2, seats="#1, #2")


@case(ev.NoVoteHeld)
def _no_vote(lang: str) -> None:
    drawn = render(view(lang), [ev.NoVoteHeld(reason=NoVoteReason.NO_NOMINATIONS)])
    _one_message_with(drawn, "vote.none.no_nominations", language=lang)


@case(ev.VoteCancelled)
def _vote_cancelled(lang: str) -> None:
    _one_message_with(render(view(lang), [ev.VoteCancelled()]), "vote.cancelled", language=lang)


@case(ev.PlayersVotedOut)
def _lone_nominee(lang: str) -> None:
    drawn = render(view(lang), [ev.PlayersVotedOut(seats=(5,), cause=Cause.VOTED_OUT)])
    _one_message_with(drawn, "vote.lone_nominee", language=lang, player=label(lang, 5))
    assert drawn.room == (DropFromRoom(5),)


@case(ev.PlayersVotedOut)
def _voted_out(lang: str) -> None:
    closed = ev.VotingClosed(kind=VoteKind.MAIN, tally=((5, (1, 2)),), silent=())
    drawn = render(view(lang), [closed, ev.PlayersVotedOut(seats=(5,), cause=Cause.VOTED_OUT)])
    assert t(lang, "vote.out", player=label(lang, 5)) in text(drawn)
    assert t(lang, "vote.lone_nominee", player=label(lang, 5)) not in text(drawn)
    assert drawn.room == (DropFromRoom(5),)


@case(ev.FoulGiven)
def _foul(lang: str) -> None:
    drawn = render(view(lang), [ev.FoulGiven(seat=2, oath=False, total=3)])
    _one_message_with(drawn, "foul.given", language=lang, player=label(lang, 2), count=3)
    oath = render(view(lang), [ev.FoulGiven(seat=2, oath=True, total=1)])
    _one_message_with(oath, "foul.oath", language=lang, player=label(lang, 2), count=1)


@case(ev.FoulRevoked)
def _foul_revoked(lang: str) -> None:
    drawn = render(view(lang), [ev.FoulRevoked(seat=2, total=1)])
    _one_message_with(drawn, "foul.revoked", language=lang, player=label(lang, 2), count=1)


@case(ev.SpeechLost)
def _speech_lost(lang: str) -> None:
    drawn = render(view(lang), [ev.SpeechLost(seat=2, day=3)])
    _one_message_with(drawn, "foul.speech_lost", language=lang, player=label(lang, 2), day=3)


@case(ev.SpeechRestored)
def _speech_restored(lang: str) -> None:
    drawn = render(view(lang), [ev.SpeechRestored(seat=2)])
    _one_message_with(drawn, "foul.speech_restored", language=lang, player=label(lang, 2))


@case(ev.PlayerRemoved)
def _removed(lang: str) -> None:
    drawn = render(view(lang), [ev.PlayerRemoved(seat=9, cause=Cause.DISQUALIFIED, cancels="")])
    _one_message_with(drawn, "removal.disqualified", language=lang, player=label(lang, 9))
    assert drawn.room == (DropFromRoom(9),)


@case(ev.ActionTakenBack)
def _foul_taken_back(lang: str) -> None:
    drawn = render(view(lang), [ev.ActionTakenBack(kind="foul", seat=4, total=2)])
    _one_message_with(drawn, "takeback.foul", language=lang, player=label(lang, 4), count=2)
    assert ids(drawn) == []
    assert drawn.room == ()


@case(ev.ActionTakenBack)
def _removal_taken_back(lang: str) -> None:
    drawn = render(view(lang), [ev.ActionTakenBack(kind="removal", seat=9, total=3)])
    _one_message_with(drawn, "takeback.removal", language=lang, player=label(lang, 9))
    assert drawn.room == (ReturnToRoom(9),)  # the room's job decides whether the seat is black


@case(ev.ActionTakenBack)
def _skip_taken_back(lang: str) -> None:
    turn = Turn(seat=1, kind=FloorKind.SPEECH, seconds=23)
    drawn = render(view(lang, day=True), [ev.ActionTakenBack(kind="skip", seat=1, total=0, floor=turn)])
    (floor,) = drawn.messages  # the correction heads the floor given back, with its controls
    assert t(lang, "takeback.skip", player=label(lang, 1)) in floor.text
    assert t(lang, "floor.speech", seat=1, user="<@101>", count=23, countdown=countdown(lang, DEADLINE)) in floor.text
    assert ids(drawn) == [f"mafia:thanks:{TABLE}", f"mafia:nominate:{TABLE}"]


@case(ev.Paused)
def _paused(lang: str) -> None:
    _one_message_with(render(view(lang), [ev.Paused(seat=None)]), "pause.judge", language=lang)
    drawn = render(view(lang), [ev.Paused(seat=4)])
    _one_message_with(drawn, "pause.technical", language=lang, player=label(lang, 4), count=120)


@case(ev.Resumed)
def _resumed(lang: str) -> None:
    _one_message_with(render(view(lang), [ev.Resumed()]), "pause.resumed", language=lang)


@case(ev.PointsAwarded)
def _points(lang: str) -> None:
    drawn = render(view(lang), [ev.PointsAwarded(seat=4, value="0.5", reason="")])
    # A figure as the table's language writes it: "+0.50", "+0,50" (never the judge's "0.5" as typed).
    value = decimal_text(lang, Decimal("0.5"), POINT_PLACES, signed=True)
    assert value == {"en": "+0.50"}.get(lang, "+0,50")
    _one_message_with(drawn, "points.awarded", language=lang, player=label(lang, 4), value=value)


@case(ev.GameEnded)
def _ended(lang: str) -> None:
    drawn = render(view(lang), [ev.PointsAwarded(seat=4, value="0.5", reason=""),
                                ev.GameEnded(result=Result.RED, reason=WinReason.ALL_BLACK_GONE)])
    said, summary, copy = drawn.messages  # what came before, the summary alone, the results channel's copy
    half = decimal_text(lang, Decimal("0.5"), POINT_PLACES, signed=True)
    assert said.text == t(lang, "points.awarded", player=label(lang, 4), value=half)
    assert t(lang, "end.roles_title") in summary.text
    don = t(lang, "end.role_line", player=label(lang, 7), role=t(lang, "role.don"),
            points=decimal_text(lang, Decimal("0.7"), POINT_PLACES), count=0)
    assert don in summary.text  # the end reveals every card
    assert copy.route is Route.RESULTS
    assert copy.text == "\n".join([t(lang, "results.header", channel="<#55>"), summary.text])


# -- the tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("check", [c for cases in CASES.values() for c in cases], ids=lambda c: c.__name__)
def test_each_event_renders_as_its_localized_lines_and_controls(check: Case, language: str) -> None:
    check(language)


def test_every_event_type_of_the_engine_has_a_case() -> None:
    union = set(typing.get_args(Event))
    assert len(union) > 30
    assert union - set(CASES) == set()


def test_texts_ride_with_the_next_message_that_has_controls() -> None:
    v = view("en", day=True)
    turn = Turn(seat=1, kind=FloorKind.SPEECH, seconds=60)
    drawn = render(v, [ev.FoulGiven(seat=3, oath=False, total=1), ev.FloorEnded(seat=1, reason="thanks"),
                       ev.FloorGiven(turn=turn)])
    assert len(drawn.messages) == 1
    assert drawn.messages[0].text.startswith(t("en", "foul.given", player=label("en", 3), count=1) + "\n")


def test_the_night_picker_offers_the_shot_targets_in_the_room() -> None:
    picker = night_picker(view("ru"), 1)
    assert picker.route is Route.ROOM
    (menu,) = picker.controls
    assert isinstance(menu, Menu)
    assert menu.custom_id == f"mafia:shoot:{TABLE}"
    assert len(menu.options) == 10


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_resumed_table_heads_the_current_controls_with_the_host_being_back(language: str) -> None:
    (night,) = resumed(view(language))  # night zero: no floor, not the night's phase
    assert night == Outgoing(t(language, "game.resumed"))
    (day,) = resumed(view(language, day=True))
    assert day.text.startswith(t(language, "game.resumed") + "\n")
    assert [c.custom_id for c in day.controls] == [f"mafia:thanks:{TABLE}", f"mafia:nominate:{TABLE}"]


def test_the_room_has_the_living_black_players_and_is_open_only_at_night() -> None:
    game = _started()
    assert desired_room(game.state).members == frozenset(BLACK)
    assert desired_room(game.state).locked is False  # night zero: the mafia meet
    game.apply(Timeout())
    assert desired_room(game.state).locked is True


def test_the_renderer_imports_no_discord_and_does_no_io() -> None:
    tree = ast.parse((ROOT / "mafiabot" / "host" / "render.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {name for name in imported if name.split(".")[0] in {"discord", "asyncio", "aiohttp", "sqlalchemy"}}
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.AsyncFunctionDef | ast.Await)]
