"""A table's feed: one frame per accepted command, kept in order, each tier reading it at its delay.

The table tells the feed after each accepted command through ``watch`` (the one place that knows
how a table reports its commands, so it can be pointed at another notice without touching the rest).
A frame's id is the number of events the game had when it was made: a replayed game after a restart
counts the same, so a viewer's ``Last-Event-ID`` still means the same moment. Every frame is the
whole picture, so a viewer who missed frames is brought up to date by the newest one alone: no gap,
and a frame is never sent twice to a viewer that has it.

The frame is not drawn inside the table's command: the command applies and returns, and the frame
is drawn in a callback the loop runs right after (the moments coming before it runs are drawn once,
as one frame: each frame is the whole picture). The viewers it wakes are woken a slice at a time, the
loop turning between slices, so another table's command never waits behind a burst of hundreds of
writes.

The delay runs on the feed's clock (the loop's, or a scripted one in tests and the demo): a viewer
at delay *d* sees the newest frame made at least *d* seconds ago.

Frames are derived from the game's log, so what a delayed tier still owes is never lost: a feed
made after a restart (or first opened mid-game) rebuilds the frames of the last *d* seconds from
the table's commands and their stored times (``owe``), and the broadcast tier goes on with the
same delay and no gap. A rebuilt frame's countdown is counted from the log (a timer starts full
when the floor or the step changes and runs while the game is not paused); a judge's extend is not
in the log, so a rebuilt frame's countdown leaves it out.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from engine import Game, Role, Ruleset
from mafiabot.core.clock import Cancellable, TableClock, wall_now
from mafiabot.core.protocol import GameHeader, ProtocolFollower, build_protocol
from mafiabot.core.protocol import Protocol as GameProtocol
from mafiabot.core.runtime import Table
from mafiabot.host.web.frames import Source, Tier, public_frame, secret_frame

log = logging.getLogger(__name__)

ENCODED_KEPT = 64
"""Encoded events kept for viewers woken together; more (ages spread over many joins) start it afresh."""
WAKE_SLICE = 32
"""Viewers woken in one turn of the loop: each writes its stream when it runs, and a table due meanwhile
runs after at most this many writes, not after every viewer of a table with hundreds."""


class Watcher(Protocol):
    """What tells the feed that its table moved: the table manager's ``watch``."""

    def watch(self, table: Table, woken: Callable[[], None], /) -> Callable[[], None]:
        """Call ``woken`` after each command ``table`` accepts; returns what stops it."""


@dataclass(slots=True)
class Moment:
    """The table as it was just after one command of its log: what a rebuilt frame is drawn from."""

    language: str
    ruleset: Ruleset
    game: Game
    names: Sequence[str]
    left: float | None = None

    def name_at(self, seat: int, /) -> str:
        """The seat's display name (names do not change during a game)."""
        return self.names[seat - 1]

    def role_at(self, seat: int, /) -> Role:
        """The seat's card."""
        return self.game.state.role(seat)

    def remaining(self) -> float | None:
        """Seconds left on the timer then, as counted from the log."""
        return self.left


def moments(table: Table, since: datetime) -> Iterator[tuple[int, datetime, Moment]]:
    """The table after each command stored at ``since`` or later, and the one in force at ``since``.

    Each comes as (events so far, when it was stored, the moment); the game is replayed from its
    first command, so the countdown can be counted, and only the owed moments are yielded (the same
    ``Moment`` object, moved on: draw each before taking the next). Nothing for a table whose times
    are not all known.
    """
    history, times = table.game.history, table.moments
    if len(times) != len(history):
        return
    first = max(0, bisect.bisect_left(times, since) - 1)
    moment = Moment(table.language, table.ruleset, Game(table.ruleset), table.names)
    step: int | None = None
    running = False
    last: datetime | None = None
    for index, (command, at) in enumerate(zip(history, times, strict=True)):
        moment.game.apply(command)
        if moment.left is not None and running and last is not None:
            moment.left = max(0.0, moment.left - (at - last).total_seconds())
        waiting = moment.game.waiting()
        if waiting.seconds is None:
            moment.left = None
        elif waiting.timer != step or moment.left is None:
            moment.left = waiting.seconds * table.time_scale
        step, running, last = waiting.timer, not moment.game.state.paused, at
        if index >= first:
            yield len(moment.game.events), at, moment


@dataclass(frozen=True, slots=True)
class Frame:
    """One moment of the table, as each kind of tier sees it, already serialized."""

    id: int
    at: float
    """When it was made, on the feed's clock."""
    public: str
    secret: str
    public_id: int
    """The id of the first frame with this public body: a night's shot or check changes only the secret
    body, and a public viewer must not be sent anything then, or the timing would tell someone acted."""
    public_at: float
    """When that first frame was made: the public body's own time."""

    def id_for(self, tier: Tier) -> int:
        """The frame's id as the tier knows it."""
        return self.public_id if tier == "public" else self.id

    def made(self, tier: Tier) -> float:
        """When what the tier is sent of it was made."""
        return self.public_at if tier == "public" else self.at


@dataclass(eq=False)
class Viewer:
    """One open stream: its tier and delay, the id it has, and a wake-up for news."""

    tier: Tier
    delay: float
    last: int = -1
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    """Its link was revoked: the overlay is told so and stops."""
    ending: bool = False
    """The server stops: the stream just ends, and the browser comes back once the bot is up again."""
    written: float = 0.0
    """When its stream was last written to (loop time): one fed since the last heartbeat needs none."""


def _bodies(source: Source, protocol: GameProtocol | None = None) -> tuple[str, str]:
    """The public and the secret body of a frame of ``source``, serialized (``protocol``: its game's, if at hand)."""
    protocol = protocol or build_protocol(GameHeader(), (), source.game.events)
    shown = public_frame(source, protocol)
    public = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    secret = json.dumps(secret_frame(source, protocol, shown), ensure_ascii=False, separators=(",", ":"))
    return public, secret


def _append(frames: list[Frame], count: int, at: float, public: str, secret: str) -> Frame | None:
    """Add the frame of a game with ``count`` events, made at ``at``, unless it shows nothing new; the frame added."""
    if frames and frames[-1].public == public and frames[-1].secret == secret:
        return None
    # A frame whose events did not change (the time left was re-read) still gets an id of its own.
    last_id = frames[-1].id if frames else -1
    frame_id = max(count * 1000, last_id + 1)
    first = frames[-1] if frames and frames[-1].public == public else None
    frame = Frame(frame_id, at, public, secret, first.public_id if first else frame_id,
                  first.public_at if first else at)
    frames.append(frame)
    return frame


def wake_in_slices(viewers: list[Viewer], start: int = 0) -> None:
    """Wake ``viewers`` from ``start``, a slice; the rest in the loop's next turn, after whatever came due."""
    end = start + WAKE_SLICE
    for viewer in viewers[start:end]:
        viewer.wake.set()
    if end < len(viewers):
        asyncio.get_running_loop().call_soon(wake_in_slices, viewers, end)


class Feed:
    """The frames of one table and the viewers reading them."""

    def __init__(self, table: Table, clock: TableClock, watcher: Watcher, *, owed: float = 0.0) -> None:
        """``owed``: the longest delay a viewer may read it at, whose frames are rebuilt from the log first."""
        self.table = table
        self.game_id = table.id
        self.language = table.language
        self._clock = clock
        self.frames: list[Frame] = []
        self.viewers: set[Viewer] = set()
        self._timers: list[Cancellable] = []
        self._encoded: dict[tuple[int, str, str], bytes] = {}
        self._owed = 0.0
        self._moved: float | None = None
        """When the table last moved with its frame not drawn yet (feed clock); None: nothing to draw."""
        self._drawing: asyncio.Handle | None = None
        self._protocol = ProtocolFollower()
        """The table's protocol, fed each command's events once, not the whole log per frame."""
        self.owe(owed)  # before the frame of now, so the last command's own frame keeps its time
        self._stop = watcher.watch(table, self.update)
        self._moved = clock.time()
        self.draw()

    def owe(self, seconds: float) -> None:
        """A viewer at delay ``seconds`` may open: rebuild from the log the frames of the last ``seconds`` not here.

        Frames made in this process are kept as they were; only older ones are added before them. A
        failure is logged: the viewer then waits for new frames, as before this feed rebuilt any.
        """
        if seconds <= self._owed:
            return
        self._owed = seconds
        try:
            self._rebuild(seconds)
        except Exception:
            log.exception("table %s: its owed stream frames could not be rebuilt", self.game_id)

    def _rebuild(self, seconds: float) -> None:
        table = self.table
        now, now_wall = self._clock.time(), wall_now(table.clock)
        before = self.frames[0].id if self.frames else None
        rebuilt: list[Frame] = []
        for count, at, moment in moments(table, now_wall - timedelta(seconds=seconds)):
            if before is not None and count * 1000 >= before:
                break
            made = now - (now_wall - at).total_seconds()  # the log's age, placed on the feed's clock
            _append(rebuilt, count, made, *_bodies(moment))
        self.frames[:0] = rebuilt

    def update(self) -> None:
        """The table moved (or may have): its frame is drawn just after the command, not inside it.

        Called inside the table's command, which then returns at once: the frame is drawn by the next
        turn of the loop, with the time of the last move before it (what it shows was there from then).
        Without a running loop it is drawn now.
        """
        self._moved = self._clock.time()
        if self._drawing is not None:
            return
        try:
            self._drawing = asyncio.get_running_loop().call_soon(self.draw)
        except RuntimeError:
            self.draw()

    def draw(self) -> None:
        """Draw the frame of the table's last move, if not drawn yet; wake the live viewers, time the delayed ones.

        A failure is logged and never reaches the game.
        """
        self._drawing = None
        at, self._moved = self._moved, None
        if at is None:
            return
        try:
            self._draw(at)
        except Exception:
            log.exception("table %s: its stream frame could not be made", self.game_id)

    def _draw(self, at: float) -> None:
        last = self.frames[-1].public if self.frames else None
        events = self.table.game.events
        if _append(self.frames, len(events), at, *_bodies(self.table, self._protocol.protocol(events))) is None:
            return
        same = self.frames[-1].public == last
        now = self._clock.time()
        for delay in {viewer.delay for viewer in self.viewers if viewer.tier != "public" or not same}:
            due = at + delay - now
            self._wake(delay) if due <= 0 else self._timers.append(self._clock.call_later(due, self._wake, delay))

    def _wake(self, delay: float) -> None:
        wake_in_slices([viewer for viewer in self.viewers if viewer.delay == delay])

    def frame_for(self, tier: Tier, delay: float) -> Frame | None:
        """The newest frame a viewer at ``delay`` may see now, if any is old enough."""
        due = self._clock.time() - delay
        for frame in reversed(self.frames):
            if frame.at <= due:
                return frame
        return None

    @staticmethod
    def body(frame: Frame, tier: Tier) -> str:
        """What of ``frame`` the tier is sent."""
        return frame.public if tier == "public" else frame.secret

    def encoded(self, frame: Frame, tier: Tier, age: str) -> bytes:
        """The server-sent event of ``frame`` for ``tier``, ``age`` seconds after it was due.

        Encoded once for all the viewers woken together (they share the age): a table with hundreds
        of viewers costs one encoding per frame, not one per viewer.
        """
        key = (frame.id, tier, age)
        event = self._encoded.get(key)
        if event is None:
            if len(self._encoded) > ENCODED_KEPT:
                self._encoded.clear()
            body = f'{{"age":{age},"frame":{self.body(frame, tier)}}}'
            event = self._encoded[key] = f"id: {frame.id_for(tier)}\ndata: {body}\n\n".encode()
        return event

    def join(self, tier: Tier, delay: float, last: int) -> Viewer:
        """A viewer opens the feed, having frame ``last`` already (-1: none)."""
        viewer = Viewer(tier, delay, last)
        self.viewers.add(viewer)
        now = self._clock.time()
        for frame in self.frames:  # frames made but not yet due for this viewer: wake it when they are
            if frame.at > now - delay:
                self._timers.append(self._clock.call_later(frame.at + delay - now, self._wake, delay))
        viewer.wake.set()
        return viewer

    def leave(self, viewer: Viewer) -> None:
        """The viewer's stream ended."""
        self.viewers.discard(viewer)

    def close_all(self, *, revoked: bool = True) -> None:
        """End every stream: its links were revoked (the overlay stops), or the server stops (it comes back)."""
        for viewer in list(self.viewers):
            if revoked:
                viewer.closed = True
            else:
                viewer.ending = True
            viewer.wake.set()

    def stop(self) -> None:
        """Stop listening to the table and drop the pending wake-ups and drawing."""
        self._stop()
        if self._drawing is not None:
            self._drawing.cancel()
            self._drawing = None
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
