"""Discord's global rate limit, kept by the bot instead of discovered by 429s.

Every token may send Discord about 50 requests per second over all routes (interaction
callbacks and webhooks excepted). discord.py learns the per-route buckets from the headers but
meets the global limit only as a 429, and the member editor sends with its own HTTP session, so
both draw from one ``GlobalLimit`` per token: a burst of messages and mutes queues in the bot for
a few milliseconds instead of drawing 429s whose retries crowd out everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import Any, Generic, Protocol, TypeVar

import aiohttp

log = logging.getLogger(__name__)

EXEMPT_SEGMENTS = frozenset({"interactions", "webhooks"})
"""Path segments of endpoints Discord does not count against the global limit."""

_BULK: ContextVar[bool] = ContextVar("bulk", default=False)


@contextlib.contextmanager
def bulk_requests() -> Iterator[None]:
    """Requests made inside (in this task) may wait behind those of games already running.

    Opening a table costs several requests at once; when many tables open together, tables that are
    already playing should not wait behind all of them.
    """
    token = _BULK.set(True)
    try:
        yield
    finally:
        _BULK.reset(token)


class SharedWindow(Protocol):
    """Places in a window counted over every process of a token."""

    async def take(self, cap: int, window: float) -> float:
        """Take a place if fewer than ``cap`` were taken in the last ``window`` seconds: 0.0, else the wait."""

    async def close(self) -> None:
        """Let go of the connections."""


class GlobalLimit:
    """At most ``limit`` requests in any ``window`` seconds, urgent ones first.

    Urgent requests (member edits: a floor change waits for them) and the others (messages) queue
    apart. The others may fill only ``1 - reserve`` of a window, so an edit finds room even while
    messages crowd the second; when both queues wait, places alternate, so messages still move
    when a whole evening's mutes compete for the same second.

    Bulk requests (opening a table) come after the other non-urgent ones, until one has waited
    ``patience`` seconds: from then on it takes its turn by age, so a long evening cannot starve it.

    The window is stretched by ``slack`` so that jitter between our clock and Discord's (the
    requests arrive a varying half round trip later) cannot push one second over the limit.

    With ``shared`` (the token's window over every process, ``RedisWindow``) the queues and their
    order stay here, and each place is taken from the shared window instead of this process's:
    non-urgent requests there too fill only ``1 - reserve`` of it, so a floor edit of any process
    finds room while the messages of all of them crowd the second.
    """

    BEHIND_WARNING = 10.0
    """Seconds of sending queued at which the token is said to carry more than it may send."""
    WARN_EVERY = 60.0

    def __init__(
        self, limit: int = 50, window: float = 1.0, *, slack: float = 0.1, reserve: float = 0.2,
        patience: float = 30.0, shared: SharedWindow | None = None,
    ) -> None:
        if limit < 1 or window <= 0 or not 0 <= reserve < 1 or patience < 0:
            raise ValueError("a global limit needs limit >= 1, window > 0, 0 <= reserve < 1 and patience >= 0")
        self.limit = limit
        self.patience = patience
        self.other_limit = max(int(limit * (1 - reserve)), 1)
        self.window = window * (1 + slack)
        self.granted = 0
        self.granted_bulk = 0
        """Of ``granted``, the bulk requests."""
        self.waited = 0.0
        """Seconds requests spent queued for the limit, summed."""
        self._sent: deque[float] = deque()
        self._hold_until = 0.0
        self._urgent: deque[tuple[float, asyncio.Future[None]]] = deque()
        self._other: deque[tuple[float, asyncio.Future[None]]] = deque()
        self._bulk: deque[tuple[float, asyncio.Future[None]]] = deque()
        self._urgent_last = False
        self._timer: asyncio.TimerHandle | None = None
        self._warned_at: float | None = None
        self.warnings = 0
        """Times the queue was found a ``BEHIND_WARNING`` of sending long."""
        self.shared = shared
        self._pump: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    @property
    def queued(self) -> int:
        """Requests waiting for a place now."""
        return len(self._urgent) + len(self._other) + len(self._bulk)

    def _free_at(self, now: float, *, urgent: bool) -> float:
        """When the next request of this kind may go (``now``: it may go now)."""
        while self._sent and self._sent[0] <= now - self.window:
            self._sent.popleft()
        cap = self.limit if urgent else self.other_limit
        at = max(now, self._hold_until)
        if len(self._sent) >= cap:
            at = max(at, self._sent[len(self._sent) - cap] + self.window)
        return at

    async def acquire(self, *, urgent: bool = False, bulk: bool = False) -> None:
        """Wait for a place in the window (``bulk``: behind every request of running games)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self.shared is not None:
            await self._acquire_shared(self.shared, loop, now, urgent=urgent, bulk=bulk)
            return
        if urgent:
            ahead, queue = bool(self._urgent), self._urgent
        elif bulk:
            ahead, queue = bool(self._urgent or self._other or self._bulk), self._bulk
        else:
            ahead, queue = bool(self._urgent or self._other), self._other
        if not ahead and self._free_at(now, urgent=urgent) <= now:
            self._grant(now, urgent=urgent, bulk=bulk)
            return
        future: asyncio.Future[None] = loop.create_future()
        queue.append((now, future))
        self._schedule(loop)
        self._warn_if_behind(now)
        await future

    async def _acquire_shared(
        self, shared: SharedWindow, loop: asyncio.AbstractEventLoop, now: float, *, urgent: bool, bulk: bool,
    ) -> None:
        """Queue for the pump, which takes the places from the shared window in the queues' order."""
        future: asyncio.Future[None] = loop.create_future()
        (self._urgent if urgent else self._bulk if bulk else self._other).append((now, future))
        if urgent:  # it may fit where the others wait: the reserve is its alone
            self._wake.set()
        if self._pump is None or self._pump.done():
            self._pump = loop.create_task(self._run_pump(shared))
        self._warn_if_behind(now)
        await future

    async def _run_pump(self, shared: SharedWindow) -> None:
        """Hand out places from ``shared`` while requests wait: the urgent and the others in turn."""
        loop = asyncio.get_running_loop()
        while self._urgent or self._other or self._bulk:
            self._wake.clear()
            now = loop.time()
            if self._hold_until > now:
                await self._nap(self._hold_until - now)
                continue
            wait = await self._take_one(shared, loop, now)
            if wait:
                await self._nap(wait)

    def _kinds_in_turn(self) -> list[bool]:
        """The kinds waiting (urgent: True), whose turn first; drops the heads whose requests were cancelled."""
        for queue in (self._urgent, self._other, self._bulk):
            while queue and queue[0][1].done():
                queue.popleft()
        kinds = [urgent for urgent, queued in ((True, self._urgent), (False, self._other or self._bulk)) if queued]
        if len(kinds) == 2 and self._urgent_last:
            kinds.reverse()
        return kinds

    async def _take_one(self, shared: SharedWindow, loop: asyncio.AbstractEventLoop, now: float) -> float:
        """Grant the head of the first kind in turn that gets a place (0.0), else the shortest wait for one."""
        waits = []
        for urgent in self._kinds_in_turn():
            queue = self._urgent if urgent else self._next_other(now)
            wait = await shared.take(self.limit if urgent else self.other_limit, self.window)
            if wait > 0:
                waits.append(wait)
                continue
            queued, future = queue.popleft()
            if not future.done():
                future.set_result(None)
            self._grant(now, urgent=urgent, bulk=queue is self._bulk)
            self.waited += loop.time() - queued
            return 0.0
        return min(waits, default=0.0)

    async def _nap(self, seconds: float) -> None:
        """Wait ``seconds``, or less if a request or a hold comes meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def close(self) -> None:
        """Let go of the shared window's connections (its owner calls this once no request will come)."""
        if self._pump is not None:
            self._pump.cancel()
        if self.shared is not None:
            await self.shared.close()

    def _warn_if_behind(self, now: float) -> None:
        """Tell the operator, once a minute at most, that the queue holds many seconds of sending.

        The bot then stays correct but its messages come late: the token carries more tables than
        Discord lets it serve (split them over shards with their own tokens, or add helper tokens).
        """
        behind = self.queued * self.window / self.limit
        if behind < self.BEHIND_WARNING:
            return
        if self._warned_at is not None and now - self._warned_at < self.WARN_EVERY:
            return
        self._warned_at = now
        self.warnings += 1
        log.warning("global rate limit: %d requests queued, about %.0f s of sending; this token carries more "
                    "than Discord lets it send", self.queued, behind)

    def hold(self, seconds: float) -> None:
        """Discord answered a global 429: send nothing for ``seconds``."""
        loop = asyncio.get_running_loop()
        self._hold_until = max(self._hold_until, loop.time() + seconds)
        self._wake.set()
        if self._timer is not None:  # wake up after the hold, not before
            self._timer.cancel()
            self._timer = None
            self._schedule(loop)

    def _grant(self, now: float, *, urgent: bool, bulk: bool = False) -> None:
        if self.shared is None:
            self._sent.append(now)
        self.granted += 1
        if bulk:
            self.granted_bulk += 1
        self._urgent_last = urgent

    def _next_release(self, now: float) -> float:
        times = []
        if self._urgent:
            times.append(self._free_at(now, urgent=True))
        if self._other or self._bulk:
            times.append(self._free_at(now, urgent=False))
        return min(times)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is None and (self._urgent or self._other or self._bulk):
            self._timer = loop.call_at(self._next_release(loop.time()), self._release, loop)

    def _next_other(self, now: float) -> deque[tuple[float, asyncio.Future[None]]]:
        """The non-urgent queue whose head goes next: running games first, overdue bulk by age."""
        if not self._bulk:
            return self._other
        if not self._other:
            return self._bulk
        oldest = self._bulk[0][0]
        return self._bulk if now - oldest >= self.patience and oldest < self._other[0][0] else self._other

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = loop.time()
        while True:
            urgent_ok = bool(self._urgent) and self._free_at(now, urgent=True) <= now
            other_ok = bool(self._other or self._bulk) and self._free_at(now, urgent=False) <= now
            if not urgent_ok and not other_ok:
                break
            urgent = urgent_ok and (not other_ok or not self._urgent_last)
            queue = self._urgent if urgent else self._next_other(now)
            queued, future = queue.popleft()
            if future.done():
                continue  # its request was cancelled while it waited
            future.set_result(None)
            self._grant(now, urgent=urgent, bulk=queue is self._bulk)
            self.waited += now - queued
        self._schedule(loop)


def counts_toward_global(url: Any) -> bool:
    """Whether a request to ``url`` (a ``yarl.URL``) counts against the bot's global limit."""
    parts = url.path.split("/")
    return "api" in parts and not EXEMPT_SEGMENTS.intersection(parts)


def global_limit_trace(limit: GlobalLimit) -> aiohttp.TraceConfig:
    """An aiohttp trace that makes every REST request of a session (retries too) wait for ``limit``.

    Handed to discord.py as ``http_trace``: aiohttp awaits ``on_request_start`` before it sends.
    """

    async def on_start(_session: aiohttp.ClientSession, _context: Any, params: aiohttp.TraceRequestStartParams) -> None:
        if counts_toward_global(params.url):
            await limit.acquire(bulk=_BULK.get())

    async def on_end(_session: aiohttp.ClientSession, _context: Any, params: aiohttp.TraceRequestEndParams) -> None:
        response = params.response
        if response.status == 429 and response.headers.get("X-RateLimit-Global", "").lower() == "true":
            limit.hold(retry_seconds(response.headers))

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_start)
    trace.on_request_end.append(on_end)
    return trace


Gate = Callable[[], Awaitable[bool]]
"""Whether a request may go out now (waiting until that is known): a shard's lease, confirmed or lost."""


class GateClosedError(RuntimeError):
    """A request was refused before it left: the process may no longer act for this shard."""


def gate_trace(gate: Gate) -> aiohttp.TraceConfig:
    """An aiohttp trace that holds every request until ``gate`` answers and refuses it when the answer is False."""

    async def on_start(_session: aiohttp.ClientSession, _context: Any, _params: Any) -> None:
        if not await gate():
            raise GateClosedError("this process no longer holds the shard's lease")

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_start)
    return trace


def retry_seconds(headers: Any) -> float:
    """The wait a 429 asks for: ``Retry-After`` (seconds, maybe fractional), else one second."""
    try:
        return max(float(headers.get("Retry-After", "1")), 0.0)
    except ValueError:
        return 1.0


T = TypeVar("T")


class FairQueue(Generic[T]):
    """Waiting member edits of one guild: by lane, then round-robin between tables, oldest first in a table.

    Lane 0 goes before lane 1 (a floor change before the edits of a game's start or end): the
    table waits for the former, the latter are many at once. Within a lane the tables take turns,
    one item each, so a table's batch of twelve never holds another table's batch behind all of
    it. Once a later lane's oldest item has waited ``patience`` seconds the lanes alternate, one
    item each, until it has caught up: a stream of floor changes cannot starve a batch, and an
    overdue backlog of batches takes half the places, never all of them. Pure: time is handed in.
    """

    def __init__(self, lanes: int = 2, *, patience: float = 30.0) -> None:
        if lanes < 1 or patience < 0:
            raise ValueError("a fair queue needs at least one lane and patience >= 0")
        self.patience = patience
        self._lanes: list[OrderedDict[Hashable, deque[tuple[float, T]]]] = [OrderedDict() for _ in range(lanes)]
        self._size = 0
        self._last: int | None = None
        """The lane the last item was taken from."""

    def __len__(self) -> int:
        return self._size

    def push(self, item: T, *, lane: int, table: Hashable, at: float, front: bool = False) -> None:
        """Queue ``item`` of ``table`` at ``at`` (``front``: ahead of the table's others, as a retry)."""
        tables = self._lanes[lane]
        queue = tables.get(table)
        if queue is None:
            queue = tables[table] = deque()
        if front:
            queue.appendleft((at, item))
        else:
            queue.append((at, item))
        self._size += 1

    def _next_lane(self, now: float) -> int:
        """The lane whose turn it is: the first that holds anything, every other turn an overdue one's."""
        heads = [(lane, min(q[0][0] for q in tables.values())) for lane, tables in enumerate(self._lanes) if tables]
        if not heads:
            raise IndexError("the fair queue is empty")
        overdue = next((lane for lane, at in heads[1:] if now - at >= self.patience), None)
        return overdue if overdue is not None and self._last != overdue else heads[0][0]

    def peek(self, now: float) -> T:
        """The item that goes next.

        Raises:
            IndexError: the queue is empty.
        """
        tables = self._lanes[self._next_lane(now)]
        return next(iter(tables.values()))[0][1]

    def pop(self, now: float) -> T:
        """Take the item ``peek`` names; its table goes to the back of its lane's turn.

        Raises:
            IndexError: the queue is empty.
        """
        self._last = lane = self._next_lane(now)
        tables = self._lanes[lane]
        table, queue = next(iter(tables.items()))
        _, item = queue.popleft()
        if queue:
            tables.move_to_end(table)
        else:
            del tables[table]
        self._size -= 1
        return item

    def waiting(self, lane: int) -> int:
        """Items queued in ``lane``."""
        return sum(len(q) for q in self._lanes[lane].values())
