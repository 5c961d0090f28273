"""What a table keeps of Discord beyond the game: its room, this round's vote messages, refusals told.

Stored as the game row's ``discord`` JSON (see ``GameLog.set_discord_meta``), so a restarted bot
finds its messages again. The JSON has the shape older versions wrote: a key is left out until it
has a value, message ids are string keys of ``votes``, and keys this version does not know are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LIFT = "lift"
"""A lift vote's target (the others are candidate seats)."""

VoteTarget = int | str
"""A candidate seat, or :data:`LIFT`."""


@dataclass
class TableMeta:
    """A table's Discord ids and notes, as the host keeps them across a restart."""

    thread: int | None = None
    """The mafia's room."""
    votes: dict[int, VoteTarget] = field(default_factory=dict)
    """Every vote message of the game: message id → its target."""
    round: list[int] = field(default_factory=list)
    """The vote messages of the current round."""
    round_no: int | None = None
    """Which vote round ``round`` belongs to."""
    refused: list[str] = field(default_factory=list)
    """Kinds of refusal the judge was told of (once each)."""
    judge: int | None = None
    """A judge handed over with ``/mafia judge pass``."""
    judges: list[int] = field(default_factory=list)
    """Side judges added with ``/mafia judge add``: the same powers as the judge, and never muted."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of another version, written back as they were."""
    order: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """The stored row's keys in its order, kept so a row written back reads as it did."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TableMeta:
        """The meta an older or newer version stored."""
        known = {"thread", "votes", "round", "round_no", "refused", "judge", "judges"}
        thread, round_no, judge = data.get("thread"), data.get("round_no"), data.get("judge")
        return cls(
            thread=None if thread is None else int(thread),
            votes={int(m): target for m, target in dict(data.get("votes") or {}).items()},
            round=[int(m) for m in data.get("round") or []],
            round_no=None if round_no is None else int(round_no),
            refused=[str(kind) for kind in data.get("refused") or []],
            judge=None if judge is None else int(judge),
            judges=[int(user) for user in data.get("judges") or []],
            extra={key: value for key, value in data.items() if key not in known},
            order=tuple(data),
        )

    def to_json(self) -> dict[str, Any]:
        """The stored form (see the module's docstring).

        Keys come in the stored row's order, then in the order a game first sets them.
        """
        values = dict(self.extra)
        if self.thread is not None:
            values["thread"] = self.thread
        if self.round or self.round_no is not None:
            values["round"] = list(self.round)
        if self.round_no is not None:
            values["round_no"] = self.round_no
        if self.votes:
            values["votes"] = {str(m): target for m, target in self.votes.items()}
        if self.refused:
            values["refused"] = list(self.refused)
        if self.judge is not None:
            values["judge"] = self.judge
        if self.judges:
            values["judges"] = list(self.judges)
        data = {key: values.pop(key) for key in self.order if key in values}
        data.update(values)
        return data

    def start_round(self, round_no: int) -> None:
        """The messages kept are for vote round ``round_no`` from now on (forgotten if they were of another)."""
        if self.round_no != round_no:
            self.round, self.round_no = [], round_no

    def add_window(self, message_id: int, target: VoteTarget) -> None:
        """A vote window of the current round went out."""
        self.votes[message_id] = target
        self.round.append(message_id)

    def open_lift(self, message_id: int, round_no: int) -> None:
        """The lift vote's one window went out: the round is just that message."""
        self.votes[message_id] = LIFT
        self.round, self.round_no = [message_id], round_no

    def shows(self, target: VoteTarget, round_no: int) -> bool:
        """Whether vote round ``round_no`` already has a window for ``target``."""
        return self.round_no == round_no and any(self.votes.get(m) == target for m in self.round)

    def window(self, target: VoteTarget, round_no: int | None) -> int | None:
        """The window of ``target`` in the current round, if ``round_no`` is it (or unknown)."""
        if self.round_no not in (None, round_no):
            return None  # the round's first window is not shown yet
        ids = [m for m in self.round if self.votes.get(m) == target]
        return max(ids) if ids else None
