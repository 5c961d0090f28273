"""The voice floor: who should be server-muted, and a reconciler that sends only the difference.

The desired state is derived from the game state alone.

A floor change costs at most two member edits (unmute the new holder first, then mute the old one)
and night fall at most one, because every seated player stays muted except the floor holder.
Every mute the bot makes is written to the ledger before it is sent, so it can be lifted after a
crash, or when a member who was out of voice comes back (``mafiabot.core.mutes`` does that). A mute
the bot did not make is not the bot's: a member already server-muted when the table first sees them
(a moderator's doing) is left as they are, and never unmuted by the bot.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Collection, Container, Iterable, Sequence
from dataclasses import dataclass, field

from engine import FloorKind, Game, Phase
from mafiabot.core.clock import LoopClock, TableClock
from mafiabot.core.nicks import NickRefusedError, Rename, Renames
from mafiabot.core.ports import EditRefusedError, MemberEditor, MuteLedger, refused

log = logging.getLogger(__name__)

SPEAKING_FLOORS = frozenset({FloorKind.SPEECH, FloorKind.LAST_WORD, FloorKind.DEFENSE, FloorKind.TIE_SPEECH,
                             FloorKind.FAREWELL})


class NotInVoiceError(Exception):
    """Discord refused the edit because the member is not connected to voice (code 40032)."""


def desired_mutes(
    game: Game | None,
    seats: Sequence[int],
    *,
    judge_id: int | None,
    spectators: Iterable[int] = (),
    mute_spectators: bool = False,
    judges: Collection[int] = (),
) -> dict[int, bool]:
    """Which members of the table should be server-muted now, keyed by user id.

    Only the table's own people appear: the seated players, and spectators in the table's voice
    channel (the caller leaves bots out). The judge and the side judges (``judges``) are never
    muted: a judge in the channel is wanted unmuted, so a spectator made judge speaks again. After
    the game nobody is muted.
    """
    running = game is not None and game.state.phase is not Phase.ENDED
    holder: int | None = None
    if running and game is not None:
        floor = game.state.floor
        if floor is not None and floor.kind in SPEAKING_FLOORS:
            holder = seats[floor.seat - 1]
    wanted = {user: running and user != holder for user in seats if user != judge_id and user not in judges}
    for user in spectators:
        if user not in wanted:
            wanted[user] = running and mute_spectators and user != judge_id and user not in judges
    return wanted


@dataclass
class FloorStats:
    """Member edits and latency per change of the desired state, for the demo report and benchmarks.

    A change is "done" when every edit it needed (its diff against what Discord had or was being
    told) is acknowledged; its latency runs from ``update`` to that last acknowledgement.
    """

    edits: dict[int, int] = field(default_factory=dict)
    kinds: dict[int, str] = field(default_factory=dict)
    """What each change was: "start" and "end" touch everyone; "play" is a floor change or nightfall."""
    latencies: dict[int, float] = field(default_factory=dict)
    """Seconds from each change to the acknowledgement of the last edit it needed."""
    _began: dict[int, tuple[float, set[tuple[int, bool]]]] = field(default_factory=dict, repr=False)

    @property
    def most_in_one_change(self) -> int:
        """The most member edits one change during play needed (game start and end excluded)."""
        return max((n for g, n in self.edits.items() if self.kinds.get(g) == "play"), default=0)

    def latencies_of(self, kind: str) -> list[float]:
        """The latencies of every finished change of one kind, in seconds."""
        return [s for g, s in self.latencies.items() if self.kinds.get(g) == kind]

    def begin(self, generation: int, at: float, needed: set[tuple[int, bool]]) -> None:
        """A change at ``at`` (loop time) needs these (member, mute) edits acknowledged."""
        if needed:
            self._began[generation] = (at, needed)

    def acknowledged(self, user: int, mute: bool, at: float) -> None:  # noqa: FBT001
        """Discord answered an edit at ``at``: every change waiting only for it is done."""
        for generation, (began, needed) in list(self._began.items()):
            needed.discard((user, mute))
            if not needed:
                del self._began[generation]
                self.latencies[generation] = at - began

    def abandon(self, user: int) -> None:
        """An edit for ``user`` failed for good: changes waiting for it will never finish."""
        for generation, (_, needed) in list(self._began.items()):
            if any(u == user for u, _ in needed):
                del self._began[generation]


FIRST_GUESS = 5
"""Member edits a token may spend in a guild before Discord's headers have said how many: the
smallest bucket Discord was observed to give. Replaced by ``X-RateLimit-Limit`` after the first
answer; a wrong guess costs one 429, after which the edit moves to another token."""


@dataclass
class _Window:
    limit: int
    remaining: int
    reset_at: float
    inflight: int = 0


class EditBudget:
    """What each token may still spend on member edits in each guild, read from Discord's headers.

    Every token (the bot's own and each helper) has its own member-edit bucket per guild. Picking,
    for each edit, the token with the most budget left spreads a mass mute over all tokens at once,
    so nothing waits for a window to reset while another token still has room.
    """

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self._limit: list[int | None] = [None] * tokens
        self._windows: dict[tuple[int, int], _Window] = {}
        self._in_guild: dict[int, dict[int, _Window]] = {}
        """The same windows by guild, then token: ``pick`` reads a guild's without a scan of all guilds."""
        self._barred: set[tuple[int, int]] = set()

    def _window(self, token: int, guild_id: int, now: float) -> _Window:
        window = self._windows.get((token, guild_id))
        limit = self._limit[token] or FIRST_GUESS
        if window is None:
            window = self._windows[(token, guild_id)] = _Window(limit, limit, 0.0)
            self._in_guild.setdefault(guild_id, {})[token] = window
        if now >= window.reset_at and window.remaining < window.limit:
            window.remaining, window.reset_at = window.limit, 0.0
        return window

    def available(self, token: int, guild_id: int, now: float) -> int:
        """Edits ``token`` can send in ``guild_id`` now without a 429."""
        if (token, guild_id) in self._barred:
            return 0
        window = self._window(token, guild_id, now)
        return window.remaining - window.inflight

    def pick(
        self, guild_id: int, now: float, skip: Collection[int] = (), *, busy: Container[int] = (),
    ) -> int | float:
        """The token to use now (an int), or how many seconds until one has budget (a float).

        ``skip``: tokens this edit may not go with (helpers Discord refused a rename to). Tokens in
        ``busy`` (their global limit has a queue) are taken only when no other has budget.
        """
        best, room = -1, (False, 0)
        # On a tie a helper goes first: the bot's own token also carries every message.
        for token in [*range(1, self.tokens), 0]:
            if token in skip:
                continue
            left = (token not in busy, self.available(token, guild_id, now))
            if left[1] > 0 and left > room:
                best, room = token, left
        if best >= 0:
            self._window(best, guild_id, now).inflight += 1
            return best
        resets = [
            w.reset_at for t, w in self._in_guild.get(guild_id, {}).items()
            if (t, guild_id) not in self._barred and t not in skip
        ]
        if not resets:
            raise LookupError(f"no token may edit members in guild {guild_id}")
        return max(min(resets) - now, 0.001)

    def next_reset(self, guild_id: int, now: float) -> float | None:
        """Seconds until the first known window of ``guild_id`` resets; None when only answers still due will say."""
        resets = [w.reset_at - now for t, w in self._in_guild.get(guild_id, {}).items()
                  if (t, guild_id) not in self._barred and w.reset_at > now]
        return min(resets, default=None)

    def answered(
        self, token: int, guild_id: int, now: float, *, limit: int | None, remaining: int | None,
        reset_after: float | None,
    ) -> None:
        """An edit sent with ``pick`` came back with these rate-limit headers (None: header absent)."""
        window = self._window(token, guild_id, now)
        window.inflight = max(window.inflight - 1, 0)
        if limit is not None:
            self._limit[token] = window.limit = limit
        if remaining is None or reset_after is None:
            return
        reset_at = now + reset_after
        if reset_at > window.reset_at + reset_after / 2 or window.reset_at <= now:
            window.remaining, window.reset_at = remaining, reset_at  # a new window
        else:
            window.remaining = min(window.remaining, remaining)

    def bar(self, token: int, guild_id: int) -> None:
        """``token`` cannot edit members of ``guild_id`` (not invited, or no Mute Members)."""
        self._barred.add((token, guild_id))


BATCH_KINDS = frozenset({"start", "end", "stop"})
"""Changes that touch the whole table at once: their edits wait behind the floor changes of the guild's tables."""
RELEASE_KINDS = frozenset({"end", "stop"})
"""Changes after which the bot keeps nobody muted: "stop" is the bot stopping politely mid-game (the
table resumes at the next start and mutes again), which unlike "end" keeps the seat nicknames."""

ECHO_SECONDS = 10.0
"""How long the gateway's report of one of our own edits may lag its acknowledgement."""


class VoiceReconciler:
    """Brings one table's mutes to the desired state, newest state first, edits in parallel.

    Each needed edit goes out as soon as the state asks for it, without waiting for the edits of
    an older state to come back: with several tokens (``[voice] helper_tokens``) a mass mute or
    a burst of passes costs one round trip. Only a member's own edits wait for each other (one on
    the wire at a time), since Discord may apply two requests in flight in either order. An edit
    that a newer state made pointless before it was sent is dropped. The gateway later reports
    each of our edits back; those echoes are matched to the edits so an old echo does not undo a
    newer acknowledged edit.
    """

    def __init__(
        self, editor: MemberEditor, ledger: MuteLedger, *, guild_id: int, game_id: int, clock: TableClock | None = None,
    ) -> None:
        self.editor = editor
        self.clock: TableClock = clock or LoopClock()
        """What edit latencies and echo ages are read on: Discord's round trips, in real time by default
        even when the table's own timers run on a manual clock."""
        self.ledger = ledger
        self.guild_id = guild_id
        self.game_id = game_id
        self.stats = FloorStats()
        self._desired: dict[int, bool] = {}
        self._known: dict[int, bool] = {}
        self._inflight: dict[int, bool] = {}
        """The value of the newest edit sent for a member and not answered yet."""
        self._sent: dict[int, int] = {}
        self._echoes: dict[int, deque[tuple[bool, float]]] = {}
        self._generation = 0
        self._failed: set[tuple[int, bool, int]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._ledger: dict[int, asyncio.Future[None]] = {}
        """Members this table has put in the mute ledger, each with the write that did it.

        A member stays in the ledger from their first mute to the game's end, unmuted while they
        hold the floor or not: a floor change then costs no ledger write, and a crash in between
        leaves at worst an unmute that changes nothing."""
        self._ending = False
        self._releasing = False
        """The desired unmutes lift the bot's mutes for good (the game's end, the bot stopping): each clears its row."""
        self._cleared: set[int] = set()
        """Members taken off the ledger at the game's end."""
        self._seen: set[int] = set()
        """Members whose mute the table has seen once in voice (and so sorted into ours or not)."""
        self._foreign: set[int] = set()
        """Members whose server mute (or unmute) someone else made: the bot leaves them as they are."""
        self.seats: frozenset[int] = frozenset()
        """The seated players: someone else lifting their mute is undone, not respected."""
        self.on_lifted: Callable[[int], None] | None = None
        """Called when someone else lifted a seated player's mute the bot keeps (it is made again)."""
        self.renames: Renames | None = None
        """The table's seat nicknames, when the server has them on: each rides on the member's next edit."""
        self._renaming: set[int] = set()
        """Members whose nickname (the seat's, or the old one back) is being sent by an edit of its own."""
        self._rename_failed: set[tuple[int, int]] = set()
        """(member, state) whose numbering edit failed without a refusal: tried again at the next state."""
        self._unsent_cleared = False
        self._giving_back: dict[int, Rename] = {}
        """The old nickname each end unmute carries back: told from a seat nickname by the edit, not by the name."""

    def start(self) -> None:
        """Start the worker; it runs until ``close``."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"voice-{self.game_id}")

    def update(self, desired: dict[int, bool], *, kind: str = "play") -> None:
        """Replace the desired state; edits not yet sent for an older state are dropped."""
        if desired == self._desired:
            return
        for user in desired:
            self._first_sight(user, self._current(user))
        self._desired = dict(desired)
        self._generation += 1
        self._ending = kind == "end"
        self._releasing = kind in RELEASE_KINDS
        self.stats.kinds[self._generation] = kind
        needed = {(user, mute) for user, mute in desired.items() if self._current(user) not in (None, mute)}
        self.stats.begin(self._generation, self.clock.time(), needed)
        self._idle.clear()
        self._wake.set()

    def release(self) -> None:
        """The bot is stopping politely: lift every mute it keeps, each ledger row cleared once Discord answers."""
        self.update(dict.fromkeys(self._desired, False), kind="stop")

    def observe(self, user_id: int, mute: bool | None) -> None:  # noqa: FBT001
        """Discord reported a member's mute (None: out of voice); re-check the desired state."""
        ours = self._echo_of_ours(user_id, mute)
        if ours is None:
            return  # the echo of an older edit of ours; a newer one is acknowledged already
        if mute is None:
            self._known.pop(user_id, None)
        else:
            before = self._known.get(user_id)
            if user_id not in self._seen:
                self._first_sight(user_id, mute)
            elif not ours and before is not None and before != mute:
                self._changed_by_someone_else(user_id, mute=mute)
            self._known[user_id] = mute
        if user_id in self._desired:
            self._failed = {f for f in self._failed if f[0] != user_id}
            self._idle.clear()
            self._wake.set()

    def _echo_of_ours(self, user: int, mute: bool | None) -> bool | None:  # noqa: FBT001
        """Whether a reported mute is one of the bot's own edits coming back from the gateway.

        None: it is the echo of an older edit while a newer one is still to come back, so it says
        nothing new. Echoes older than ``ECHO_SECONDS`` are dropped; one that does not match clears them all.
        """
        ours = mute is not None and self._inflight.get(user) == mute
        echoes = self._echoes.get(user)
        if not echoes:
            return ours
        if mute is not None:
            now = self.clock.time()
            while echoes and echoes[0][1] < now:
                echoes.popleft()
            if echoes and echoes[0][0] == mute:
                echoes.popleft()
                return None if echoes else True
        echoes.clear()
        return ours

    def _first_sight(self, user: int, mute: bool | None) -> None:  # noqa: FBT001
        """The first mute seen of a member in voice: one the ledger does not know is someone else's."""
        if mute is None or user in self._seen:
            return
        self._seen.add(user)
        if mute and user not in self._ledger:
            self._foreign.add(user)

    def _changed_by_someone_else(self, user: int, *, mute: bool) -> None:
        """A moderator (or the member's own power) changed a server mute the bot did not send now."""
        if not mute and user in self.seats and user not in self._foreign and self._desired.get(user):
            # A seated player unmuted behind the table's back: mute again, and let the judge know.
            if self.on_lifted is not None:
                self.on_lifted(user)
            return
        if not mute and user in self._foreign and user in self.seats:
            self._foreign.discard(user)  # the moderator's mute is gone: the table's own mutes apply again
            return
        self._foreign.add(user)
        if user in self._ledger:
            self._ledger.pop(user, None)
            task = asyncio.get_running_loop().create_task(self._clear([user]))
            self._tasks.add(task)

    def unmuted_now(self, user_id: int) -> bool:
        """Whether Discord reports the member in voice and not server-muted (so a mute would be the bot's)."""
        return self._current(user_id) is False

    def is_foreign(self, user_id: int) -> bool:
        """Whether the member's mute is someone else's, so the bot leaves it alone."""
        return user_id in self._foreign

    def recorded_already(self, user_ids: Iterable[int]) -> None:
        """These members were put on the ledger by the caller (with their seats): their mutes need no write."""
        for user in user_ids:
            done = asyncio.get_running_loop().create_future()
            done.set_result(None)
            self._ledger[user] = done

    def keeps_muted(self, user_id: int) -> bool:
        """Whether the table wants the member muted now (a seated player, or a spectator in its channel)."""
        return self._desired.get(user_id) is True

    def adopt(self, user_id: int) -> None:
        """A mute the ledger holds for the member is this table's: it keeps it, and lifts it at the end."""
        self.recorded_already([user_id])
        self._foreign.discard(user_id)
        self._idle.clear()
        self._wake.set()

    def forget(self, user_id: int) -> None:
        """The bot lifted an owed mute outside this table: record their next mute again, and look at them anew."""
        self._ledger.pop(user_id, None)
        self._known.pop(user_id, None)
        self._seen.discard(user_id)
        self._foreign.discard(user_id)

    @property
    def idle(self) -> bool:
        """Whether every desired change has been sent (or found impossible): what ``settled`` waits for."""
        return self._idle.is_set()

    async def settled(self) -> None:
        """Wait until every desired change has been sent (or found impossible)."""
        await self._idle.wait()

    async def close(self) -> None:
        """Stop the worker after the edits already sent are answered."""
        self._closed = True
        self._wake.set()
        if self._task is not None:
            await self._task
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._idle.set()  # nothing more will be sent: let anyone still waiting for ``settled`` go

    def _current(self, user: int) -> bool | None:
        if user in self._inflight:
            return self._inflight[user]
        current = self._known.get(user)
        if current is None:
            current = self.editor.voice_mute(self.guild_id, user)
        return current

    def _pending(self) -> list[tuple[int, bool]]:
        changes = []
        for user, mute in self._desired.items():
            if user in self._foreign or user in self._inflight:
                # One edit of a member on the wire at a time: Discord applies two in flight in
                # either order, and an unmute overtaken by the mute before it leaves them muted.
                # The answer wakes the worker, which then sends what is still needed.
                continue
            current = self._current(user)
            if current is not None and current != mute and (user, mute, self._generation) not in self._failed:
                changes.append((user, mute))
        # Unmutes first: the new floor holder must be able to speak as soon as possible.
        changes.sort(key=lambda change: change[1])
        return changes

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._closed:
            await self._wake.wait()
            self._wake.clear()
            if self._closed:
                break
            pending = self._pending()
            new = [user for user, mute in pending if mute and user not in self._ledger]
            if new:  # one ledger write for every first mute of this state; each of them waits for it
                write = loop.create_task(self.ledger.record_mutes(self.guild_id, new, self.game_id))
                self._ledger.update(dict.fromkeys(new, write))
            if self._releasing:
                self._forget_unmuted(loop)
            for user, mute in pending:
                self._dispatch(loop, user, mute)
            if self._ending and self.renames is not None:
                self._give_back_alone(loop, self.renames, {user for user, _ in pending})
            elif self.renames is not None:
                self._number_alone(loop, self.renames)
            if not self._tasks and not self._wake.is_set():
                self._idle.set()

    def _forget_unmuted(self, loop: asyncio.AbstractEventLoop) -> None:
        """At the game's end, take off the ledger the members who are unmuted already."""
        done = [u for u in self._desired if self._desired[u] is False and u not in self._inflight
                and u not in self._cleared and self._current(u) is False]
        if done:
            for user in done:
                self._ledger.pop(user, None)
            self._cleared.update(done)
            task = loop.create_task(self._clear(done))
            self._tasks.add(task)

    def _dispatch(self, loop: asyncio.AbstractEventLoop, user: int, mute: bool) -> None:  # noqa: FBT001
        """Send one needed edit in a task of its own, with the rename it carries, if any."""
        self._inflight[user] = mute
        self._sent[user] = number = self._sent.get(user, 0) + 1
        recorded = self._ledger.get(user) if mute else None
        rename = None
        if self.renames is not None and user not in self._renaming:
            rename = self.renames.to_send(user, ending=self._ending)
            if rename is not None and self._ending:
                self._giving_back[user] = rename
        task = loop.create_task(self._send(user, mute, self._generation, number, recorded, rename))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _number_alone(self, loop: asyncio.AbstractEventLoop, renames: Renames) -> None:
        """During the game, give the seat nickname by an edit of its own to each player no mute edit carries it to.

        The player is muted already (a restart found them so), out of voice, or muted by someone else:
        the reconciler wants the nickname as it wants the mute, whatever edit brings it.
        """
        busy = {*self._inflight, *self._renaming, *(u for u, g in self._rename_failed if g == self._generation)}
        for user in renames.due_alone(busy.__contains__):
            self._renaming.add(user)
            task = loop.create_task(self._number(renames, user, self._generation))
            self._tasks.add(task)

    async def _number(self, renames: Renames, user: int, generation: int) -> None:
        rename = Rename(renames.numbered[user])
        try:
            await renames.editor.set_nick(self.guild_id, user, rename.nick)
            renames.sent(user, rename)
        except EditRefusedError as exc:
            if refused(exc):
                await renames.refuse_numbering(user)
            else:
                log.warning("seat nickname of %s in guild %s not taken: %s", user, self.guild_id, exc)
                self._rename_failed.add((user, generation))
        except Exception:
            log.exception("could not give %s in guild %s their seat nickname", user, self.guild_id)
            self._rename_failed.add((user, generation))
        finally:
            self._renaming.discard(user)
            self._tasks.discard(asyncio.current_task())
            self._wake.set()

    def _give_back_alone(self, loop: asyncio.AbstractEventLoop, renames: Renames, sending: set[int]) -> None:
        """At the game's end, give back each old nickname no unmute carries (already unmuted, out of voice, ...)."""
        busy = {*sending, *self._inflight, *self._renaming}
        for user in renames.owed_alone(busy.__contains__):
            self._renaming.add(user)
            task = loop.create_task(self._rename_alone(renames, user))
            self._tasks.add(task)
        if not self._unsent_cleared:
            self._unsent_cleared = True
            unsent = renames.never_sent()
            if unsent:
                renames.given_back.update(unsent)
                task = loop.create_task(self._clear_nicks(renames, unsent))
                self._tasks.add(task)

    async def _rename_alone(self, renames: Renames, user: int) -> None:
        try:
            await renames.editor.set_nick(self.guild_id, user, renames.old[user])
            renames.given_back.add(user)  # even an old name that reads like the seat's: it is back
            await renames.ledger.clear_nicks(self.guild_id, [user])
        except Exception:
            log.exception("could not give back the nickname of %s in guild %s", user, self.guild_id)
            renames.refused.add(user)  # the ledger keeps it: a restart tries again
        finally:
            self._renaming.discard(user)
            self._tasks.discard(asyncio.current_task())
            self._wake.set()

    async def _clear_nicks(self, renames: Renames, users: list[int]) -> None:
        try:
            await renames.ledger.clear_nicks(self.guild_id, users)
        except Exception:
            log.exception("could not clear the nickname ledger in guild %s", self.guild_id)
        finally:
            self._tasks.discard(asyncio.current_task())
            self._wake.set()

    async def _clear(self, users: list[int]) -> None:
        try:
            await self.ledger.clear_mutes(self.guild_id, users)
        except Exception:
            log.exception("could not clear the mute ledger in guild %s", self.guild_id)
        finally:
            self._tasks.discard(asyncio.current_task())
            self._wake.set()

    async def _send(
        self, user: int, mute: bool, generation: int, number: int, recorded: asyncio.Future[None] | None,  # noqa: FBT001
        rename: Rename | None = None,
    ) -> None:
        ok = False
        try:
            ok = await self._edit(user, mute, generation, recorded, rename)
        finally:
            self._tasks.discard(asyncio.current_task())
            if self._sent.get(user) == number:
                self._inflight.pop(user, None)
            if not ok and self._sent.get(user) == number:
                self.stats.abandon(user)
            self._wake.set()

    async def _edit(
        self, user: int, mute: bool, generation: int, recorded: asyncio.Future[None] | None,  # noqa: FBT001
        rename: Rename | None = None,
    ) -> bool:
        try:
            if recorded is not None:
                try:
                    await asyncio.shield(recorded)
                except Exception:
                    if self._ledger.get(user) is recorded:
                        del self._ledger[user]  # the next mute writes it again
                    raise
            if self._desired.get(user) != mute:
                return True  # stale: the state moved on before this edit went out
            sent = await self._set_mute(user, mute, rename, batch=self.stats.kinds.get(generation) in BATCH_KINDS)
            if not sent:
                return True  # went stale while it waited for budget: nothing was sent
        except NotInVoiceError:
            self._failed.add((user, mute, generation))
            return False
        except Exception:
            log.exception("member edit failed for %s in guild %s", user, self.guild_id)
            self._failed.add((user, mute, generation))
            return False
        now = self.clock.time()
        self._known[user] = mute
        self._echoes.setdefault(user, deque()).append((mute, now + ECHO_SECONDS))
        self.stats.edits[generation] = self.stats.edits.get(generation, 0) + 1
        self.stats.acknowledged(user, mute, now)
        if not mute and self._releasing and self._desired.get(user) is False:
            self._ledger.pop(user, None)
            self._cleared.add(user)
            await self.ledger.clear_mutes(self.guild_id, [user])
        return True

    async def _set_mute(self, user: int, mute: bool, rename: Rename | None, *, batch: bool) -> bool:  # noqa: FBT001
        """One member edit, the rename it carries booked (and its ledger row cleared once the old name is back).

        ``batch``: one of a game's start or end, which waits behind the guild's floor changes.
        """
        try:
            sent = await self.editor.set_mute(
                self.guild_id, user, mute=mute, still_wanted=lambda: self._desired.get(user) == mute, nick=rename,
                table=self.game_id, batch=batch,
            )
        except NickRefusedError as refusal:
            if self.renames is not None and rename is not None:
                if self._ending or user in self.renames.applied:
                    self.renames.refuse(user)
                else:
                    await self.renames.refuse_numbering(user)
            return refusal.sent
        if sent and rename is not None and self.renames is not None:
            if self._giving_back.get(user) is rename:
                self.renames.given_back.add(user)  # the old name back, even one that reads like the seat's
            else:
                self.renames.sent(user, rename)
            if user in self.renames.given_back:
                await self.renames.ledger.clear_nicks(self.guild_id, [user])
        return sent
