"""Fair play at the table: which of a seated player's lapses the judge hears of, and when.

The Discord side reports what it saw (a camera turned on, a line in the table's chat, a mute lifted
by someone else, a player deafening themselves); ``alert_for`` decides, from the game state alone,
whether that breaks the game now and whether the judge was told already. The engine says what time
it is (``eyes_closed``, ``someone_speaks``); nothing here knows a phase by name. An alert is only
ever for the judge: told in public, it could tell who is awake at night.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from enum import StrEnum

from engine import GameView, Phase, Ruleset, Seat, eyes_closed, presence_required, someone_speaks


class Lapse(StrEnum):
    """What a seated player did that the judge may need to know."""

    CAMERA = "camera"
    """Turned a camera on."""
    STREAM = "stream"
    """Started sharing their screen."""
    MESSAGE = "message"
    """Wrote in the table's text channel."""
    MUTE_LIFTED = "mute_lifted"
    """Someone else (a moderator) lifted the server mute the bot keeps; the bot makes it again."""
    DEAFENED = "deafened"
    """Deafened themselves, so they do not hear the speaker."""
    CAMERA_OFF = "camera_off"
    """Has the camera off while the ruleset's ``presence`` wants it on (an online club's policy)."""


AlertKey = tuple[Lapse, int, Phase, int]
"""What makes two alerts the same one: the kind, the seat, the phase and its night or day."""

_AT_NIGHT = frozenset({Lapse.CAMERA, Lapse.STREAM, Lapse.MESSAGE})
"""What breaks the game only while the town sleeps (by day the whole table sees it anyway)."""
_LEFT_ON = (Lapse.CAMERA, Lapse.STREAM)
"""What a player can have on rather than do once: left on as night falls, it is as bad as turned on."""


@dataclass(frozen=True, slots=True)
class Alert:
    """What the judge is told: who (``seat``) did what, and when (night or day ``number``)."""

    lapse: Lapse
    seat: int
    at_night: bool
    number: int
    """The night's number (0 for night zero) or the day's."""
    phase: Phase

    @property
    def key(self) -> AlertKey:
        """One alert per player, kind and phase: a player toggling a camera all night is told of once."""
        return (self.lapse, self.seat, self.phase, self.number)


def matters(state: GameView, lapse: Lapse) -> bool:
    """Whether ``lapse`` breaks the game at this point of it (the engine says what time it is)."""
    if state.phase in (Phase.NEW, Phase.ENDED):
        return False
    if lapse in _AT_NIGHT:
        return eyes_closed(state)
    if lapse is Lapse.DEAFENED:
        return someone_speaks(state)
    return True  # a mute lifted behind the table's back matters at any time of the game


def left_on(state: GameView, *, camera: bool, stream: bool) -> list[Lapse]:
    """The lapses of a seated player whose camera or screen share is on now, as time moves on.

    A camera turned on by day and kept on into the night shows the table a player awake as much as
    one turned on at night; the Discord side asks after each step of the game, and ``alert_for``
    still gives each alert once per player, kind and phase.
    """
    on = {Lapse.CAMERA: camera, Lapse.STREAM: stream}
    return [lapse for lapse in _LEFT_ON if on[lapse] and matters(state, lapse)]


def unseen(state: GameView, ruleset: Ruleset, seat: Seat, *, camera: bool) -> bool:
    """Whether ``seat``'s camera is off while the ruleset's presence policy wants it on now (the engine says when).

    The opposite of a camera at night: online clubs require a player to confirm his presence by his
    face or gestures while he speaks, or all day.
    """
    return not camera and presence_required(state, ruleset, seat)


def alert_for(state: GameView, seat: int | None, lapse: Lapse, told: Set[AlertKey]) -> Alert | None:
    """The alert the judge gets for seat ``seat`` doing ``lapse`` now, or None.

    None for someone not seated (``seat`` None), for what does not matter now, and for what the
    judge was ``told`` of already in this phase.
    """
    if seat is None or not matters(state, lapse):
        return None
    night = eyes_closed(state)
    alert = Alert(lapse, seat, night, state.night if night else state.day, state.phase)
    return None if alert.key in told else alert


@dataclass
class FairPlayWatch:
    """One table's alerts so far, so each is given once per player, kind and phase."""

    told: set[AlertKey] = field(default_factory=set)
    unseen: dict[int, int] = field(default_factory=dict)
    """Seats whose camera is off now while the rules want it on, each with its fouls when the lapse began."""

    def camera(self, seat: int, *, lapsing: bool, fouls: int) -> bool:
        """Note whether ``seat``'s camera lapse lasts (``fouls``: his fouls now); True when that changed.

        The fouls at the lapse's start tell later whether the judge has answered it with a foul.
        """
        if not lapsing:
            return self.unseen.pop(seat, None) is not None
        if seat in self.unseen:
            return False
        self.unseen[seat] = fouls
        return True

    def unanswered(self, state: GameView) -> tuple[int, ...]:
        """The seats whose camera lapse lasts and has no foul for it yet (a foul taken back counts as none)."""
        return tuple(sorted(seat for seat, fouls in self.unseen.items()
                            if state.is_alive(seat) and state.foul_count(seat) <= fouls))

    def observe(self, state: GameView, seat: int | None, lapse: Lapse) -> Alert | None:
        """The alert to send for what was seen (and remember it as sent), or None."""
        alert = alert_for(state, seat, lapse, self.told)
        if alert is not None:
            self.told.add(alert.key)
        return alert


__all__ = ["Alert", "AlertKey", "FairPlayWatch", "Lapse", "alert_for", "left_on", "matters", "unseen"]
