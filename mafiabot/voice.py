"""The voice floor: who should be server-muted, and a reconciler that sends only the difference.

The desired state is derived from the game state alone.

A floor change costs at most two member edits (unmute the new holder first, then mute the old one)
and night fall at most one, because every seated player stays muted except the floor holder.
Every mute the bot makes is written to the ledger before it is sent, so it can be lifted after a
crash, or when a member who was out of voice comes back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine import FloorKind, Game, Phase

log = logging.getLogger(__name__)

SPEAKING_FLOORS = frozenset({FloorKind.SPEECH, FloorKind.LAST_WORD, FloorKind.DEFENSE, FloorKind.TIE_SPEECH,
                             FloorKind.FAREWELL})


class NotInVoiceError(Exception):
    """Discord refused the edit because the member is not connected to voice (code 40032)."""


class MemberEditor(Protocol):
    """Sends member edits to Discord and reads what Discord has."""

    async def set_mute(self, guild_id: int, user_id: int, *, mute: bool) -> None:
        """Server-mute or unmute; raises ``NotInVoiceError`` for a member out of voice."""

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        """The member's server mute as Discord last reported it; None when out of voice."""


class MuteLedger(Protocol):
    """Remembers every mute the bot made, across restarts."""

    async def record_mute(self, guild_id: int, user_id: int, game_id: int) -> None:
        """Note a mute before it is sent."""

    async def clear_mute(self, guild_id: int, user_id: int) -> None:
        """Forget a mute once it is lifted."""


def desired_mutes(
    game: Game | None,
    seats: Sequence[int],
    *,
    judge_id: int | None,
    spectators: Iterable[int] = (),
    mute_spectators: bool = False,
) -> dict[int, bool]:
    """Which members of the table should be server-muted now, keyed by user id.

    Only the table's own people appear: the seated players, and spectators in the table's voice
    channel when the table mutes them. The judge never. After the game nobody is muted.
    """
    running = game is not None and game.state.phase is not Phase.ENDED
    holder: int | None = None
    if running and game is not None:
        floor = game.state.floor
        if floor is not None and floor.kind in SPEAKING_FLOORS:
            holder = seats[floor.seat - 1]
    wanted = {user: running and user != holder for user in seats if user != judge_id}
    for user in spectators:
        if user not in wanted and user != judge_id:
            wanted[user] = running and mute_spectators
    return wanted


@dataclass
class FloorStats:
    """Member edits sent per change of the desired state, for the demo report and benchmarks."""

    edits: dict[int, int] = field(default_factory=dict)
    kinds: dict[int, str] = field(default_factory=dict)
    """What each change was: "start" and "end" touch everyone; "play" is a floor change or nightfall."""

    @property
    def most_in_one_change(self) -> int:
        """The most member edits one change during play needed (game start and end excluded)."""
        return max((n for g, n in self.edits.items() if self.kinds.get(g) == "play"), default=0)


class VoiceReconciler:
    """Brings one table's mutes to the desired state, one change at a time, newest state first."""

    def __init__(self, editor: MemberEditor, ledger: MuteLedger, *, guild_id: int, game_id: int) -> None:
        self.editor = editor
        self.ledger = ledger
        self.guild_id = guild_id
        self.game_id = game_id
        self.stats = FloorStats()
        self._desired: dict[int, bool] = {}
        self._known: dict[int, bool] = {}
        self._generation = 0
        self._failed: set[tuple[int, bool, int]] = set()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        """Start the worker; it runs until ``close``."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"voice-{self.game_id}")

    def update(self, desired: dict[int, bool], *, kind: str = "play") -> None:
        """Replace the desired state; edits still queued for an older state are dropped."""
        if desired == self._desired:
            return
        self._desired = dict(desired)
        self._generation += 1
        self.stats.kinds[self._generation] = kind
        self._idle.clear()
        self._wake.set()

    def observe(self, user_id: int, mute: bool | None) -> None:  # noqa: FBT001
        """Discord reported a member's mute (None: out of voice); re-check the desired state."""
        if mute is None:
            self._known.pop(user_id, None)
        else:
            self._known[user_id] = mute
        if user_id in self._desired:
            self._failed = {f for f in self._failed if f[0] != user_id}
            self._idle.clear()
            self._wake.set()

    async def settled(self) -> None:
        """Wait until every desired change has been sent (or found impossible)."""
        await self._idle.wait()

    async def close(self) -> None:
        """Stop the worker after it finishes the current edit."""
        self._closed = True
        self._wake.set()
        if self._task is not None:
            await self._task

    def _pending(self) -> list[tuple[int, bool]]:
        changes = []
        for user, mute in self._desired.items():
            current = self._known.get(user)
            if current is None:
                current = self.editor.voice_mute(self.guild_id, user)
                if current is None:
                    continue
            if current != mute and (user, mute, self._generation) not in self._failed:
                changes.append((user, mute))
        # Unmutes first: the new floor holder must be able to speak as soon as possible.
        changes.sort(key=lambda change: change[1])
        return changes

    async def _run(self) -> None:
        while not self._closed:
            await self._wake.wait()
            self._wake.clear()
            while not self._closed:
                generation = self._generation
                pending = self._pending()
                if not pending:
                    break
                await asyncio.gather(*(self._send(user, mute, generation) for user, mute in pending))
            if not self._wake.is_set():
                self._idle.set()

    async def _send(self, user: int, mute: bool, generation: int) -> None:  # noqa: FBT001
        if self._desired.get(user) != mute:
            return  # stale: the state moved on while this edit waited
        if mute:
            await self.ledger.record_mute(self.guild_id, user, self.game_id)
        try:
            await self.editor.set_mute(self.guild_id, user, mute=mute)
        except NotInVoiceError:
            self._failed.add((user, mute, generation))
            return
        except Exception:
            log.exception("member edit failed for %s in guild %s", user, self.guild_id)
            self._failed.add((user, mute, generation))
            return
        self._known[user] = mute
        self.stats.edits[generation] = self.stats.edits.get(generation, 0) + 1
        if not mute:
            await self.ledger.clear_mute(self.guild_id, user)
