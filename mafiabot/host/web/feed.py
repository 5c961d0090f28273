"""A table's feed: one frame per accepted command, kept in order, each tier reading it at its delay.

The table tells the feed after each accepted command through ``watch`` (the one place that knows
how a table reports its commands, so it can be pointed at another notice without touching the rest).
A frame's id is the number of events the game had when it was made: a replayed game after a restart
counts the same, so a viewer's ``Last-Event-ID`` still means the same moment. Every frame is the
whole picture, so a viewer who missed frames is brought up to date by the newest one alone: no gap,
and a frame is never sent twice to a viewer that has it.

The delay runs on the feed's clock (the loop's, or a scripted one in tests and the demo): a viewer
at delay *d* sees the newest frame made at least *d* seconds ago.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from mafiabot.core.clock import Cancellable, TableClock
from mafiabot.core.protocol import GameHeader, build_protocol
from mafiabot.core.runtime import Table
from mafiabot.host.web.frames import Tier, public_frame, secret_frame

log = logging.getLogger(__name__)

ENCODED_KEPT = 64
"""Encoded events kept for viewers woken together; more (ages spread over many joins) start it afresh."""


class Watcher(Protocol):
    """What tells the feed that its table moved: the table manager's ``watch``."""

    def watch(self, table: Table, woken: Callable[[], None], /) -> Callable[[], None]:
        """Call ``woken`` after each command ``table`` accepts; returns what stops it."""


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


class Feed:
    """The frames of one table and the viewers reading them."""

    def __init__(self, table: Table, clock: TableClock, watcher: Watcher) -> None:
        self.table = table
        self.game_id = table.id
        self.language = table.language
        self._clock = clock
        self.frames: list[Frame] = []
        self.viewers: set[Viewer] = set()
        self._timers: list[Cancellable] = []
        self._encoded: dict[tuple[int, str, str], bytes] = {}
        self._stop = watcher.watch(table, self.update)
        self.update()

    def update(self) -> None:
        """The table moved (or may have): make its frame, wake the live viewers, time the delayed ones.

        Called inside the table's command: a failure here is logged and never reaches the game.
        """
        try:
            self._update()
        except Exception:
            log.exception("table %s: its stream frame could not be made", self.game_id)

    def _update(self) -> None:
        table = self.table
        count = len(table.game.events)
        protocol = build_protocol(GameHeader(), (), table.game.events)
        public = json.dumps(public_frame(table, protocol), ensure_ascii=False, separators=(",", ":"))
        secret = json.dumps(secret_frame(table, protocol), ensure_ascii=False, separators=(",", ":"))
        if self.frames and self.frames[-1].public == public and self.frames[-1].secret == secret:
            return
        # A frame whose events did not change (the time left was re-read) still gets an id of its own.
        last_id = self.frames[-1].id if self.frames else -1
        frame_id = max(count * 1000, last_id + 1)
        same = bool(self.frames) and self.frames[-1].public == public
        now = self._clock.time()
        first = self.frames[-1] if same else None
        frame = Frame(frame_id, now, public, secret, first.public_id if first else frame_id,
                      first.public_at if first else now)
        self.frames.append(frame)
        for delay in {viewer.delay for viewer in self.viewers if viewer.tier != "public" or not same}:
            self._wake(delay) if delay <= 0 else self._timers.append(self._clock.call_later(delay, self._wake, delay))

    def _wake(self, delay: float) -> None:
        for viewer in self.viewers:
            if viewer.delay == delay:
                viewer.wake.set()

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
        """Stop listening to the table and drop the pending wake-ups."""
        self._stop()
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
