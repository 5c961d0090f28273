"""The renderer: one command's events and a read-only view of its table, as the messages they make.

Pure: no Discord, no I/O, no clock. What it returns is plain data (texts, button and menu specs with
their custom ids, where each message goes, which one opens a vote window) that the sender turns
into Discord calls. Secret events (shots, checks, saves) render nothing: the night controls answer
their owner privately instead, and the checks are told only in the end summary.

The batching that keeps requests few is decided here, since it is a question of which texts go in
which message: a command's texts ride with its next message that has controls, and the start
message's controls wait for the texts that follow them in the same command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from functools import partial
from typing import Protocol, assert_never

from engine import (
    Act,
    Event,
    GameView,
    Phase,
    Role,
    Ruleset,
    is_speech,
    legal_targets,
    lift_votes_needed,
    nominations_open,
    shot_targets,
    silent_vote_target,
    vote_totals,
)
from engine import events as ev
from engine.public import PublicTable, public_table
from engine.state import replay_events
from mafiabot.core.meta import LIFT
from mafiabot.core.protocol import GameHeader, build_protocol
from mafiabot.core.records import SeatInfo
from mafiabot.core.room import black_seats
from mafiabot.host import i18n
from mafiabot.host.i18n import POINT_PLACES, countdown, decimal_text, join_list, ruleset_name, t
from mafiabot.host.pictures import card, sheet

ZERO_WIDTH = "\u200b"
"""The text of a message that has only controls (Discord refuses an empty one)."""
OPTION_LIMIT = 25
"""Options Discord accepts in one menu."""
LABEL_LIMIT = 100
"""Characters Discord accepts in an option's label."""


class Style(StrEnum):
    """A button's colour."""

    PRIMARY = "primary"
    SUCCESS = "success"


@dataclass(frozen=True)
class Button:
    """A button; its click is handled by custom id, also after a restart."""

    label: str
    custom_id: str
    style: Style = Style.PRIMARY


@dataclass(frozen=True)
class Option:
    """One choice of a menu."""

    label: str
    value: str


@dataclass(frozen=True)
class Menu:
    """A select menu (a nomination, the mafia's shot)."""

    placeholder: str
    custom_id: str
    options: tuple[Option, ...]


Control = Button | Menu


class Route(StrEnum):
    """Where a message goes."""

    CHANNEL = "channel"
    """The table's channel; as the click's follow-ups when a public click caused the command."""
    RESULTS = "results"
    """A copy for the server's results channel, when it has one besides the table's."""
    ROOM = "room"
    """The mafia's private room."""
    JUDGE = "judge"
    """A direct message to the judge (the table's channel if their DMs are closed)."""


@dataclass(frozen=True)
class VoteWindow:
    """The message opens a vote window: its ✋ is seeded and its id kept as this round's.

    A candidate's window goes out once per round, also across a restart (by its nonce): when the
    round already shows it, only ``heading`` is sent, if any.
    """

    target: int | str
    """A candidate seat, or :data:`LIFT`."""
    round_no: int
    heading: str = ""
    """The command's texts that ride with the window."""
    new_round: bool = False
    """The window starts the round: the messages kept for an older round are forgotten."""


@dataclass(frozen=True)
class RoomOpening:
    """The mafia's room, created while the message that carries this goes out."""

    name: str
    members: tuple[int, ...]
    """User ids."""
    welcome: str


@dataclass(frozen=True)
class Picture:
    """An image sent with a message; drawn off the event loop by the sender (drawing takes tens of ms)."""

    filename: str
    description: str
    """Alt text, at most 1024 characters."""
    draw: Callable[[], bytes]
    """Pure and thread-safe: the same bytes every call."""


@dataclass(frozen=True)
class Outgoing:
    """One message."""

    text: str
    controls: tuple[Control, ...] = ()
    route: Route = Route.CHANNEL
    vote: VoteWindow | None = None
    room: RoomOpening | None = None
    pictures: tuple[Picture, ...] = ()
    """Images sent as the message's files, in the table's channel and the results channel (other routes
    go as text); a message with pictures is never folded into an edit."""


@dataclass(frozen=True)
class LockRoom:
    """The room is locked (the day) or unlocked (the night)."""

    locked: bool


@dataclass(frozen=True)
class PostPicker:
    """The mafia's target menu for ``night``, drawn from the state when it is posted (see :func:`night_picker`)."""

    night: int


@dataclass(frozen=True)
class DropFromRoom:
    """A departing seat; red or black, so the room's jobs tell nothing of who is who."""

    seat: int


@dataclass(frozen=True)
class ReturnToRoom:
    """A seat whose removal the judge took back; red or black, like :class:`DropFromRoom`."""

    seat: int


RoomJob = LockRoom | PostPicker | DropFromRoom | ReturnToRoom


@dataclass(frozen=True)
class Rendered:
    """A command's messages, in order, and the room's changes that follow them."""

    messages: tuple[Outgoing, ...]
    room: tuple[RoomJob, ...] = ()


class GameLike(Protocol):
    """What the renderer reads of a game: the engine's ``Game`` is one."""

    @property
    def state(self) -> GameView:
        """The engine's state, read-only."""

    @property
    def events(self) -> Sequence[Event]:
        """Every event of the game so far."""

    def points(self) -> Mapping[int, Decimal]:
        """Each seat's points."""


class Seating(Protocol):
    """What the plain text helpers read of a table."""

    @property
    def language(self) -> str:
        """The table's language."""

    @property
    def ruleset(self) -> Ruleset:
        """The table's rules."""

    @property
    def seats(self) -> Sequence[int]:
        """User ids by seat."""


@dataclass(frozen=True)
class TableView:
    """What the renderer may read of a table."""

    id: int
    language: str
    ruleset: Ruleset
    seats: tuple[int, ...]
    """User ids by seat (seat 1 first)."""
    names: tuple[str, ...]
    """Display names by seat, already safe to echo (see ``mafiabot.host.presenter.plain``)."""
    game: GameLike
    deadline: datetime | None
    """When the running timer ends, as the command left it."""
    time_scale: float = 1.0
    channel_id: int = 0

    def label(self, seat: int) -> str:
        """``#3 Name``: how the bot names a player at the table."""
        return seat_label(self.language, seat, self.names[seat - 1])

    def user(self, seat: int) -> str:
        """A mention of the player in ``seat``."""
        return f"<@{self.seats[seat - 1]}>"


def custom_id(action: str, table_id: int, arg: str = "") -> str:
    """The custom id of a table control; the table and action are parsed back from it."""
    return f"mafia:{action}:{table_id}" + (f":{arg}" if arg else "")


def seat_label(language: str, seat: int, safe_name: str) -> str:
    """``#3 Name`` in ``language``."""
    return t(language, "seat.label", seat=seat, name=safe_name)


def seat_list(seats: Sequence[int]) -> str:
    """Seats as ``#2, #5`` (or a dash when there are none)."""
    return ", ".join(f"#{seat}" for seat in seats) if seats else "—"


def role_name(table: Seating, role: Role) -> str:
    """The role's name in the table's language (the georgian Sheriff is the Detective)."""
    return i18n.role_name(table.language, table.ruleset, role)


def night_zero_lines(table: Seating) -> list[str]:
    """Night 0 in words: the mafia meet, and whoever the ruleset wakes meets the host."""
    lang = table.language
    lines = [t(lang, "night.zero")]
    meeters = table.ruleset.meets_host(len(table.seats))
    if meeters:
        names = [t(lang, "night.zero.role", role=role_name(table, role)) for role in meeters]
        lines.append(t(lang, "night.zero.meet", roles=join_list(lang, names)))
    return lines


def check_lines(table: Seating, checks: Sequence[ev.DonChecked | ev.SheriffChecked]) -> list[str]:
    """The night checks of a game, in the ruleset's words (the Detective's "mafia / not mafia")."""
    lang, rules = table.language, table.ruleset
    lines = []
    for check in checks:
        if isinstance(check, ev.DonChecked):
            key = f"end.check.don_yes.{rules.checker}" if check.sheriff else f"end.check.don_no.{rules.checker}"
            lines.append(t(lang, key, seat=check.seat, target=check.target))
        else:
            result = t(lang, f"check.result.{rules.check_result(black=check.black)}")
            lines.append(t(lang, f"end.check.{rules.checker}", seat=check.seat, target=check.target, result=result))
    return lines


def vote_round(events: Sequence[Event], upto: int | None = None) -> int:
    """Which vote round of the game the table is in (after ``upto`` events): 1 for the first."""
    return sum(isinstance(e, ev.VotingStarted | ev.LiftVoteStarted) for e in events[:upto])


def round_votes(events: Iterable[Event], round_no: int) -> dict[int, int | str]:
    """The hands counted in vote round ``round_no``: seat → candidate (or :data:`LIFT`)."""
    counted: dict[int, int | str] = {}
    seen = 0
    for event in events:
        if isinstance(event, ev.VotingStarted | ev.LiftVoteStarted):
            seen += 1
        elif seen == round_no and isinstance(event, ev.VoteCast):
            counted[event.seat] = event.candidate
        elif seen == round_no and isinstance(event, ev.LiftVoteCast) and event.yes:
            counted[event.seat] = LIFT
    return counted


def summary(view: TableView) -> list[str]:
    """The end of the game: the result, every role, departures, checks, fouls and points."""
    lang = view.language
    state = view.game.state
    outcome = state.outcome
    lines = [t(lang, f"end.result.{outcome.result.value}" if outcome else "end.result.abandoned")]
    points = view.game.points()
    lines.append(t(lang, "end.roles_title"))
    for seat in range(1, state.players + 1):
        lines.append(t(lang, "end.role_line", player=view.label(seat), role=role_name(view, state.role(seat)),
                       points=decimal_text(lang, points[seat], POINT_PLACES),
                       count=state.foul_count(seat)))
    if state.departures:
        lines.append(t(lang, "end.departures_title"))
        lines.extend(t(lang, f"end.departure.{d.cause.value}", player=view.label(d.seat)) for d in state.departures)
    checks = [e for e in view.game.events if isinstance(e, ev.DonChecked | ev.SheriffChecked)]
    if checks:
        lines.append(t(lang, "end.checks_title"))
        lines.extend(check_lines(view, checks))
    return lines


def result_copy(view: TableView) -> Outgoing:
    """The summary as the server's results channel gets it."""
    header = t(view.language, "results.header", channel=f"<#{view.channel_id}>")
    return Outgoing("\n".join([header, *summary(view)]), route=Route.RESULTS)


def public_at(view: TableView, upto: int) -> PublicTable:
    """The public table after the game's first ``upto`` events (the game may have gone on since)."""
    events = view.game.events
    if upto >= len(events):
        return public_table(view.game.state)
    return public_table(replay_events(events[:upto]))


def picture_name(safe_name: str) -> str:
    r"""A name as a picture draws it: the escapes that keep it inert in a message taken out again.

    >>> picture_name("\\*star\\* @\u200beveryone")
    '*star* @everyone'
    """
    return re.sub(r"\\(.)", r"\1", safe_name.replace(ZERO_WIDTH, ""))


def table_card(view: TableView, upto: int, kind: str) -> Picture:
    """The table card after the game's first ``upto`` events: drawn from the public table alone."""
    public = public_at(view, upto)
    drawn = card.CardInput(public, tuple(picture_name(name) for name in view.names), view.language)
    when, number = card.moment(public)
    return Picture(f"table-{when}-{number}-{kind}.png", card.alt_text(drawn), partial(card.draw_card, drawn))


def protocol_sheet(view: TableView) -> Picture:
    """The protocol sheet of the ended game."""
    seats = [SeatInfo(seat, user, picture_name(name))
             for seat, (user, name) in enumerate(zip(view.seats, view.names, strict=True), 1)]
    header = GameHeader(id=view.id, ruleset_name=view.ruleset.name, ruleset=view.ruleset, status="finished")
    drawn = sheet.SheetInput(build_protocol(header, seats, view.game.events, view.game.points()), view.language)
    return Picture(f"protocol-{view.id}.png", sheet.alt_text(drawn), partial(sheet.draw_sheet, drawn))


def night_controls(view: TableView) -> tuple[Control, ...]:
    """The night's one public button: each owner is answered privately."""
    return (Button(t(view.language, "button.night_action"), custom_id("act", view.id)),)


def floor(view: TableView, turn: ev.Turn, *, heading: str = "") -> Outgoing:
    """Someone has the floor: the Thank you button, and the nomination menu while nominations are open."""
    lang = view.language
    text = t(lang, f"floor.{turn.kind.value}", seat=turn.seat, user=view.user(turn.seat), count=turn.seconds,
             countdown=countdown(lang, view.deadline))
    controls: list[Control] = [Button(t(lang, "button.thanks"), custom_id("thanks", view.id), Style.SUCCESS)]
    state = view.game.state
    # Drawn ahead of its turn's end (``now=False``): the floor may have moved on when it is shown.
    targets = legal_targets(state, view.ruleset, Act.NOMINATE, turn.seat, now=False)
    if is_speech(turn.kind) and nominations_open(state) and targets:
        options = tuple(Option(view.label(s)[:LABEL_LIMIT], str(s)) for s in targets)
        controls.append(Menu(t(lang, "select.nominate"), custom_id("nominate", view.id), options[:OPTION_LIMIT]))
    return Outgoing(f"{heading}\n{text}" if heading else text, tuple(controls))


def vote_window(view: TableView, candidate: int, round_no: int, *, heading: str = "", new_round: bool = False,
                ) -> Outgoing:
    """A candidate's vote window (see :class:`VoteWindow`)."""
    text = t(view.language, "vote.window", target=view.label(candidate),
             countdown=countdown(view.language, view.deadline))
    return Outgoing(f"{heading}\n{text}" if heading else text,
                    vote=VoteWindow(candidate, round_no, heading, new_round))


def night_picker(view: TableView, night: int) -> Outgoing:
    """The mafia's target menu, posted in their room."""
    options = tuple(Option(view.label(s)[:LABEL_LIMIT], str(s)) for s in shot_targets(view.game.state))
    menu = Menu(t(view.language, "select.target"), custom_id("shoot", view.id), options[:OPTION_LIMIT])
    return Outgoing(t(view.language, "thread.night", night=night), (menu,), Route.ROOM)


def room_opening(view: TableView) -> RoomOpening:
    """The mafia's room as the game opens: its black players, welcomed by seat."""
    black = black_seats(view.game.state)
    return RoomOpening(t(view.language, "thread.name"), tuple(view.seats[s - 1] for s in black),
                       t(view.language, "thread.welcome", seats=seat_list(black)))


def ten_seconds(language: str, seat: int) -> Outgoing:
    """The floor holder's last ten seconds."""
    return Outgoing(t(language, "floor.ten_seconds", seat=seat))


def resumed(view: TableView) -> list[Outgoing]:
    """After a restart: the host is back, heading the current phase's controls in one message.

    A restart with many open games then costs one message per game against the global limit, not two.
    """
    state = view.game.state
    back = t(view.language, "game.resumed")
    if state.floor is not None:
        return [floor(view, state.floor, heading=back)]
    if state.phase is Phase.NIGHT:
        return [Outgoing(f"{back}\n{t(view.language, 'night.falls', night=state.night)}", night_controls(view))]
    shown = [Outgoing(back)]
    if state.phase is Phase.VOTING and state.vote is not None:
        candidate = state.vote.candidates[state.vote.index]
        shown.append(vote_window(view, candidate, vote_round(view.game.events), new_round=True))
    return shown


def render(view: TableView, events: Sequence[Event], *, first: int = 0) -> Rendered:
    """The messages of one command's ``events``, which start at index ``first`` of the game's events."""
    batch = _Batch(view, events, first)
    for index, event in enumerate(events):
        batch.index = index
        _event(batch, event)
    batch.flush()
    return Rendered(tuple(batch.out), tuple(batch.room))


@dataclass
class _Batch:
    """The messages of a command as they are drawn: the texts wait for the next message with controls."""

    view: TableView
    events: Sequence[Event]
    first: int
    index: int = 0
    lines: list[str] = field(default_factory=list)
    held: list[Outgoing] = field(default_factory=list)
    """Controls whose message waits for the texts that follow them in this command."""
    out: list[Outgoing] = field(default_factory=list)
    room: list[RoomJob] = field(default_factory=list)
    pictures: list[Picture] = field(default_factory=list)
    """Pictures that ride with the texts so far."""

    @property
    def lang(self) -> str:
        return self.view.language

    def announce(self, key: str, **fields: object) -> None:
        self.lines.append(t(self.lang, key, **fields))

    def take(self) -> str:
        text = "\n".join(self.lines)
        self.lines.clear()
        return text

    def flush(self, controls: tuple[Control, ...] = (), *, vote: VoteWindow | None = None) -> None:
        """Send the texts so far: with the held message, with ``controls``, or alone.

        ``vote`` marks the message that the flush ends with (there is one: the caller said something).
        """
        if self.held:
            held = self.held.pop()
            self.out.append(Outgoing(self.take() or ZERO_WIDTH, held.controls, room=held.room,
                                     pictures=self.take_pictures()))
            if not controls:
                self._mark(vote)
                return
        if not self.lines and not controls:
            return
        self.out.append(Outgoing(self.take() or ZERO_WIDTH, controls, pictures=self.take_pictures()))
        self._mark(vote)

    def _mark(self, vote: VoteWindow | None) -> None:
        if vote is not None:
            last = self.out[-1]
            self.out[-1] = replace(last, vote=vote)

    def take_pictures(self) -> tuple[Picture, ...]:
        pictures = tuple(self.pictures)
        self.pictures.clear()
        return pictures

    def emit(self, message: Outgoing) -> None:
        """Append a message that carries the texts so far (its heading), and the pictures that go with them."""
        self.out.append(replace(message, pictures=(*message.pictures, *self.take_pictures())))

    def table_card(self, kind: str) -> None:
        """The table card rides with the texts so far: the table as this command leaves it."""
        self.pictures.append(table_card(self.view, self.first + len(self.events), kind))

    def heading(self) -> str:
        """The texts that ride with the next message, which has controls: one request instead of two."""
        if self.held:
            self.flush()
        return self.take()

    def round_after(self) -> int:
        """The vote round the game is in after the current event."""
        return vote_round(self.view.game.events, self.first + self.index + 1)

    def later(self) -> Sequence[Event]:
        return self.events[self.index + 1:]

    def earlier(self) -> Sequence[Event]:
        return self.events[:self.index]


def _event(batch: _Batch, event: Event) -> None:
    """Dispatch by the event's part of the game; each part's match covers its own events."""
    match event:
        case (ev.GameStarted() | ev.NightFell() | ev.ShotFired() | ev.DonChecked() | ev.SheriffChecked()
              | ev.Healed() | ev.ManiacActed() | ev.NightResolved()):
            _night(batch, event)
        case (ev.BestMoveAsked() | ev.BestMoveMade() | ev.DayStarted() | ev.CriticalFoulsAnnounced()
              | ev.StageStarted() | ev.FloorGiven() | ev.TurnSkipped() | ev.SpeechPenaltyServed() | ev.FloorEnded()
              | ev.Nominated() | ev.NomineesRecapped()):
            _day(batch, event)
        case (ev.VotingStarted() | ev.VoteCast() | ev.VoteWindowClosed() | ev.VotingClosed() | ev.TieDeclared()
              | ev.LiftVoteStarted() | ev.LiftVoteCast() | ev.LiftVoteClosed() | ev.NoVoteHeld()
              | ev.VoteCancelled() | ev.PlayersVotedOut()):
            _vote(batch, event)
        case (ev.FoulGiven() | ev.FoulRevoked() | ev.SpeechLost() | ev.SpeechRestored() | ev.PlayerRemoved()
              | ev.Paused() | ev.Resumed() | ev.PointsAwarded() | ev.GameEnded() | ev.ActionTakenBack()):
            _judge(batch, event)
        case _:
            assert_never(event)


NightEvent = (ev.GameStarted | ev.NightFell | ev.ShotFired | ev.DonChecked | ev.SheriffChecked | ev.Healed
              | ev.ManiacActed | ev.NightResolved)
DayEvent = (ev.BestMoveAsked | ev.BestMoveMade | ev.DayStarted | ev.CriticalFoulsAnnounced | ev.StageStarted
            | ev.FloorGiven | ev.TurnSkipped | ev.SpeechPenaltyServed | ev.FloorEnded | ev.Nominated
            | ev.NomineesRecapped)
VoteEvent = (ev.VotingStarted | ev.VoteCast | ev.VoteWindowClosed | ev.VotingClosed | ev.TieDeclared
             | ev.LiftVoteStarted | ev.LiftVoteCast | ev.LiftVoteClosed | ev.NoVoteHeld | ev.VoteCancelled
             | ev.PlayersVotedOut)
JudgeEvent = (ev.FoulGiven | ev.FoulRevoked | ev.SpeechLost | ev.SpeechRestored | ev.PlayerRemoved | ev.Paused
              | ev.Resumed | ev.PointsAwarded | ev.GameEnded | ev.ActionTakenBack)


def _night(batch: _Batch, event: NightEvent) -> None:
    view, lang = batch.view, batch.lang
    match event:
        case ev.GameStarted():
            batch.announce("game.started", count=len(view.seats), ruleset=ruleset_name(lang, view.ruleset))
            batch.lines.extend(t(lang, "game.seat", seat=s, user=f"<@{u}>") for s, u in enumerate(view.seats, 1))
            card = Button(t(lang, "button.card"), custom_id("card", view.id))
            batch.held.append(Outgoing("", (card,), room=room_opening(view)))
        case ev.NightFell(night=0):
            batch.lines.extend(night_zero_lines(view))
            batch.table_card("start")
        case ev.NightFell(night=night):
            batch.announce("night.falls", night=night)
            batch.flush(night_controls(view))
            batch.room.append(PostPicker(night))
        case ev.NightResolved(killed=killed):
            batch.announce("morning.title", day=event.night + 1)
            if killed:
                batch.lines.extend(t(lang, "morning.killed", player=view.label(s)) for s in killed)
                batch.room.extend(DropFromRoom(s) for s in killed)
            else:
                batch.announce(f"morning.{view.ruleset.miss_announcement}")
            if not any(isinstance(e, ev.GameEnded) for e in batch.later()):  # else the sheet says it all
                batch.table_card("morning")
        case ev.ShotFired() | ev.DonChecked() | ev.SheriffChecked() | ev.Healed() | ev.ManiacActed():
            pass  # secret: told to nobody in public
        case _:
            assert_never(event)


def _day(batch: _Batch, event: DayEvent) -> None:
    view = batch.view
    match event:
        case ev.DayStarted(day=1):
            batch.announce("day.first", opener=view.label(event.opener))
        case ev.DayStarted(vote_cancelled=cancelled):
            if cancelled:
                batch.announce("day.vote_cancelled")
        case ev.CriticalFoulsAnnounced(seats=seats):
            batch.announce("morning.critical", seats=seat_list(seats))
        case ev.BestMoveAsked(seat=seat):
            batch.announce("best_move.asked", player=view.label(seat))
            batch.flush((Button(t(batch.lang, "button.best_move"), custom_id("bestmove", view.id)),))
        case ev.BestMoveMade(seat=seat, targets=targets):
            batch.announce("best_move.made", player=view.label(seat), seats=seat_list(targets))
        case ev.FloorGiven(turn=turn):
            batch.emit(floor(view, turn, heading=batch.heading()))
        case ev.TurnSkipped(seat=seat, reason="fouls"):
            batch.announce("floor.skipped_fouls", player=view.label(seat))
        case ev.Nominated(seat=seat, target=target):
            batch.announce("nomination.accepted", target=view.label(target), seat=seat)
        case ev.NomineesRecapped(seats=seats):
            batch.announce("nomination.recap", seats=seat_list(seats))
        case ev.StageStarted(phase=Phase.FINAL_WORDS):
            batch.announce("end.final_words")
        case ev.StageStarted() | ev.TurnSkipped() | ev.SpeechPenaltyServed() | ev.FloorEnded():
            pass  # shown by what follows them (the floor, the vote)
        case _:
            assert_never(event)


def _vote(batch: _Batch, event: VoteEvent) -> None:
    view = batch.view
    match event:
        case ev.VotingStarted(kind=kind, candidates=candidates):
            batch.announce(f"vote.started.{kind.value}", seats=seat_list(candidates))
            batch.table_card("vote")
            batch.emit(vote_window(view, candidates[0], batch.round_after(), heading=batch.heading(),
                                   new_round=True))
        case ev.VoteWindowClosed(candidate=candidate):
            _next_window(batch, candidate)
        case ev.VotingClosed(tally=tally, silent=silent):
            batch.lines.extend(tally_lines(batch.lang, tally, silent))
        case ev.TieDeclared(seats=seats):
            batch.announce("vote.tie", seats=seat_list(seats))
        case ev.LiftVoteStarted(seats=seats):
            batch.announce("vote.lift", seats=seat_list(seats), count=lift_votes_needed(view.game.state))
            batch.table_card("lift")
            batch.flush(vote=VoteWindow(LIFT, batch.round_after(), new_round=True))
        case ev.LiftVoteClosed(yes=yes, passed=passed):
            batch.announce("vote.lift_passed" if passed else "vote.lift_failed", count=len(yes), seats=seat_list(yes))
        case ev.PlayersVotedOut(seats=seats):
            _voted_out(batch, seats)
        case ev.NoVoteHeld(reason=reason):
            batch.announce(f"vote.none.{reason.value}")
        case ev.VoteCancelled():
            batch.announce("vote.cancelled")
        case ev.VoteCast() | ev.LiftVoteCast():
            pass  # the ✋ on the window is the vote's own record
        case _:
            assert_never(event)


def _voted_out(batch: _Batch, seats: Sequence[int]) -> None:
    """Who the day's vote sends out; the day's only nominee leaves without one (no vote closed in this command)."""
    view = batch.view
    lone = len(seats) == 1 and not any(isinstance(e, ev.VotingClosed | ev.LiftVoteClosed) for e in batch.earlier())
    if lone:
        batch.announce("vote.lone_nominee", player=view.label(seats[0]))
    else:
        batch.lines.extend(t(batch.lang, "vote.out", player=view.label(s)) for s in seats)
    batch.room.extend(DropFromRoom(s) for s in seats)


def _next_window(batch: _Batch, closed: int) -> None:
    """The next candidate's window, unless the vote closed in the same command."""
    if any(isinstance(e, ev.VotingClosed) for e in batch.later()):
        return
    candidates = current_candidates(batch.view.game.events)
    if closed in candidates and candidates.index(closed) + 1 < len(candidates):
        batch.out.append(vote_window(batch.view, candidates[candidates.index(closed) + 1], batch.round_after()))


def current_candidates(events: Sequence[Event]) -> tuple[int, ...]:
    """The candidates of the game's latest vote."""
    for event in reversed(events):
        if isinstance(event, ev.VotingStarted):
            return event.candidates
    return ()


def tally_lines(lang: str, tally: Sequence[tuple[int, Sequence[int]]], silent: Sequence[int]) -> list[str]:
    """A vote's result: each candidate's voters and count, the silent hands going to the last one."""
    lines = [t(lang, "vote.result_title")]
    last = silent_vote_target([candidate for candidate, _voters in tally])
    for (candidate, voters), (_candidate, count) in zip(tally, vote_totals(tally, silent), strict=True):
        quiet = silent if candidate == last else ()
        shown = [seat_list(voters)] if voters or not quiet else []
        if quiet:
            shown.append(t(lang, "vote.result_silent", seats=seat_list(quiet)))
        lines.append(t(lang, "vote.result_line", target=f"#{candidate}", count=count, voters="; ".join(shown)))
    if silent:
        lines.append(t(lang, "vote.silent", target=f"#{last}", seats=seat_list(silent)))
    return lines


def _foul(batch: _Batch, event: ev.FoulGiven | ev.FoulRevoked | ev.SpeechLost) -> None:
    """A foul given or taken back, technical ones in their own words, and what the third one costs."""
    label = batch.view.label(event.seat)
    match event:
        case ev.FoulGiven(total=total, oath=oath, technical=technical):
            key = "foul.technical" if technical else "foul.oath" if oath else "foul.given"
            batch.announce(key, player=label, count=total)
        case ev.FoulRevoked(total=total, technical=technical):
            batch.announce("foul.technical_revoked" if technical else "foul.revoked", player=label, count=total)
        case ev.SpeechLost(day=day, short=short):
            batch.announce("foul.speech_short" if short else "foul.speech_lost", player=label, day=day,
                           seconds=batch.view.ruleset.short_speech_seconds if short else 0)


def _judge(batch: _Batch, event: JudgeEvent) -> None:
    view = batch.view
    match event:
        case ev.FoulGiven() | ev.FoulRevoked() | ev.SpeechLost():
            _foul(batch, event)
        case ev.SpeechRestored(seat=seat):
            batch.announce("foul.speech_restored", player=view.label(seat))
        case ev.PlayerRemoved(seat=seat, cause=cause):
            batch.announce(f"removal.{cause.value}", player=view.label(seat))
            batch.room.append(DropFromRoom(seat))
        case ev.Paused(seat=seat):
            if seat is None:
                batch.announce("pause.judge")
            else:
                seconds = round(view.ruleset.technical_pause_seconds * view.time_scale)
                batch.announce("pause.technical", player=view.label(seat), count=seconds)
        case ev.Resumed():
            batch.announce("pause.resumed")
        case ev.PointsAwarded(seat=seat, value=value):
            batch.announce("points.awarded", player=view.label(seat),
                           value=decimal_text(view.language, Decimal(value), POINT_PLACES, signed=True))
        case ev.GameEnded():
            batch.flush()
            batch.lines.extend(summary(view))
            sheet_picture = protocol_sheet(view)
            batch.pictures.append(sheet_picture)
            batch.flush()
            batch.out.append(replace(result_copy(view), pictures=(sheet_picture,)))
        case ev.ActionTakenBack():
            _taken_back(batch, event)
        case _:
            assert_never(event)


def _taken_back(batch: _Batch, event: ev.ActionTakenBack) -> None:
    """The correction, said in public; a floor given back comes with its controls again."""
    view = batch.view
    player = view.label(event.seat)
    if event.kind == "removal":
        batch.announce("takeback.removal", player=player, count=event.total)
        batch.room.append(ReturnToRoom(event.seat))
    elif event.kind == "skip":
        batch.announce("takeback.skip", player=player)
    else:
        batch.announce("takeback.foul", player=player, count=event.total)
    if event.floor is not None:
        batch.out.append(floor(view, event.floor, heading=batch.heading()))
