"""The token's global limit shared by every process that sends with it, through Redis.

Discord counts a token's requests over all its connections, so processes that split the shards
would otherwise each keep a static share (``global_rate_limit / processes``) and a busy process
could not use the room an idle one leaves. Here each process's ``GlobalLimit`` keeps its own
queues and priorities (floor edits first) and asks one sliding window in Redis, kept by a Lua
script so that the check and the count are one atomic step, for each place.

If Redis cannot be reached or errs, the process falls back to its static share of the limit,
never to no limit, says so once in the log, and tries Redis again every ``retry_every`` seconds.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import logging
import math
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mafiabot.host.ratelimit import GlobalLimit

if TYPE_CHECKING:
    from mafiabot.host.settings import DiscordSettings

log = logging.getLogger(__name__)

KEY_PREFIX = "mafiabot:global:"

# A sliding window log: the sorted set holds one member per place granted, scored by its time.
# ARGV: now, window (seconds), cap (places in the window for this kind of request), member.
# Returns {1, "0"} when a place was taken, else {0, wait}: the seconds until one frees (a string,
# since Redis would cut a Lua number to an integer).
WINDOW_SCRIPT = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < cap then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, math.ceil(window * 1000) + 1000)
  return {1, '0'}
end
local oldest = redis.call('ZRANGE', key, count - cap, count - cap, 'WITHSCORES')
return {0, tostring(tonumber(oldest[2]) + window - now)}
"""


class LocalWindow:
    """A sliding window log kept in this process alone. Pure: time is handed in."""

    def __init__(self) -> None:
        self._sent: deque[float] = deque()

    def take(self, now: float, cap: int, window: float) -> float:
        """Take a place at ``now`` if the window holds fewer than ``cap``: 0.0, else the seconds until one frees."""
        while self._sent and self._sent[0] <= now - window:
            self._sent.popleft()
        if len(self._sent) < cap:
            self._sent.append(now)
            return 0.0
        return max(self._sent[len(self._sent) - cap] + window - now, 1e-3)


def token_key(token: str) -> str:
    """The Redis key of a token's window: its application's id (a token's first part), never the token.

    A token whose first part is not an id gets a hash of itself instead.
    """
    first = token.split(".", 1)[0]
    try:
        decoded = base64.b64decode(first + "=" * (-len(first) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        decoded = ""
    if decoded.isdigit():
        return KEY_PREFIX + decoded
    return KEY_PREFIX + hashlib.sha256(token.encode()).hexdigest()[:24]


class RedisWindow:
    """The token's window in Redis, or this process's static share of it while Redis is away.

    ``now``: wall-clock seconds, the same on every machine (NTP), since the window's times are
    compared across processes; ``processes``: how many processes share the token now (the static
    share is ``cap // processes``).
    """

    def __init__(
        self, url: str, key: str, *, now: Callable[[], float] = time.time,
        processes: Callable[[], int] = lambda: 1, retry_every: float = 5.0, timeout: float = 0.5,
    ) -> None:
        try:
            from redis.asyncio import Redis
        except ImportError as exc:
            raise RuntimeError("[discord] global_limit_redis needs the redis client: "
                               "pip install 'mafiabot[redis]'") from exc

        self.key = key
        self._now = now
        self._processes = processes
        self.retry_every = retry_every
        self._client: Any = Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._script: Any = self._client.register_script(WINDOW_SCRIPT)
        self._names = (f"{uuid.uuid4().hex[:12]}:{n}" for n in itertools.count())
        self._local = LocalWindow()
        self._retry_at: float | None = None
        """While Redis is away: when to try it again (None: it is in use)."""
        self.fallbacks = 0
        """Times Redis was found away and the static share taken instead."""

    @property
    def shared(self) -> bool:
        """Whether places come from Redis now (else from the static share)."""
        return self._retry_at is None

    async def take(self, cap: int, window: float) -> float:
        """A place from Redis, or from the static share while Redis is away (0.0), else the wait."""
        now = self._now()
        if self._retry_at is None or now >= self._retry_at:
            try:
                granted, wait = await self._script(keys=[self.key], args=[repr(now), repr(window), cap,
                                                                           next(self._names)])
            except Exception as exc:  # whatever goes wrong there, the static share holds
                if self._retry_at is None:
                    self.fallbacks += 1
                    log.warning("global rate limit: Redis is unreachable (%s); this process keeps 1/%d of the "
                                "limit until it is back", exc, self.processes())
                self._retry_at = now + self.retry_every
            else:
                if self._retry_at is not None:
                    log.warning("global rate limit: Redis is back; the processes share the limit again")
                    self._retry_at = None
                return 0.0 if int(granted) else max(float(wait), 1e-3)
        return self._local.take(now, max(cap // self.processes(), 1), window)

    def processes(self) -> int:
        """The processes sharing the token, as last counted (at least 1)."""
        return max(self._processes(), 1)

    async def close(self) -> None:
        """Close the connections to Redis."""
        await self._client.aclose()


def fixed_processes(settings: DiscordSettings) -> int:
    """The processes a token is split over when each runs fixed ``shard_ids``: as many as hold this many shards."""
    if not settings.shard_ids:
        return 1
    return math.ceil(settings.shard_count / len(settings.shard_ids))


def token_limit(settings: DiscordSettings, token: str, *, processes: Callable[[], int] | None = None) -> GlobalLimit:
    """The global limit of ``token`` in this process: shared through Redis if ``global_limit_redis`` names one.

    ``processes`` counts the processes that share the token (the live lease members), for the static
    share while Redis is away; without it the share follows ``shard_ids``.
    """
    if not settings.global_limit_redis:
        return GlobalLimit(settings.global_rate_limit)
    count = processes or (lambda: fixed_processes(settings))
    window = RedisWindow(settings.global_limit_redis, token_key(token), processes=count)
    return GlobalLimit(settings.global_rate_limit, shared=window)


__all__ = ["LocalWindow", "RedisWindow", "fixed_processes", "token_key", "token_limit"]
