"""Discord-style rate limits: buckets per route and major parameter, plus a global limit per token.

Windows are fixed: a bucket opens on its first request and resets ``window`` seconds later, which is
what Discord's ``X-RateLimit-Reset-After`` header describes. Time comes from a clock the emulator
owns, so tests can use a manual clock instead of waiting.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    """Where the emulator reads time from."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back."""
        ...

    def wall(self) -> float:
        """Unix time, for timestamps and ``X-RateLimit-Reset``."""
        ...


class RealClock:
    """The machine's clocks."""

    def monotonic(self) -> float:
        """Return ``time.monotonic()``."""
        return time.monotonic()

    def wall(self) -> float:
        """Return ``time.time()``."""
        return time.time()


class ManualClock:
    """A clock that only moves when told to, for rate-limit tests without waiting."""

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self._now = start

    def monotonic(self) -> float:
        """Return the current virtual time."""
        return self._now

    def wall(self) -> float:
        """Return the current virtual time as unix time."""
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self._now += seconds


@dataclasses.dataclass(frozen=True)
class BucketRule:
    """Routes that share one bucket, keyed by one major parameter.

    Attributes:
        name: Bucket name, hashed into ``X-RateLimit-Bucket``.
        limit: Requests allowed per window.
        window: Window length in seconds.
        match: Predicate on ``(method, route template)``.
        major: Path parameter that splits the bucket (``guild_id``, ``channel_id``…).
    """

    name: str
    limit: int
    window: float
    match: Callable[[str, str], bool]
    major: str | None = None


def _member_edit(method: str, route: str) -> bool:
    return route.startswith("/guilds/{guild_id}/members/") and method in ("PATCH", "PUT", "DELETE")


def _reaction(method: str, route: str) -> bool:
    return "/reactions" in route and method in ("PUT", "DELETE")


@dataclasses.dataclass
class RateLimitConfig:
    """Limits of one emulator; defaults are the numbers Discord was observed to apply."""

    member_edits: tuple[int, float] = (5, 5.0)
    reactions: tuple[int, float] = (1, 0.25)
    global_limit: tuple[int, float] = (50, 1.0)
    default_route: tuple[int, float] = (50, 1.0)
    extra_rules: list[BucketRule] = dataclasses.field(default_factory=list)
    enabled: bool = True

    def rules(self) -> list[BucketRule]:
        """Every bucket rule, the specific ones first."""
        return [
            *self.extra_rules,
            BucketRule("member_edit", *self.member_edits, _member_edit, "guild_id"),
            BucketRule("reactions", *self.reactions, _reaction, "channel_id"),
        ]


@dataclasses.dataclass
class _Window:
    count: int = 0
    reset_at: float = 0.0


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What the limiter says about one request."""

    allowed: bool
    headers: dict[str, str]
    retry_after: float = 0.0
    is_global: bool = False


class RateLimiter:
    """Counts requests per (token, bucket, major parameter) and per token globally."""

    def __init__(self, config: RateLimitConfig, clock: Clock) -> None:
        self.config = config
        self.clock = clock
        self._windows: dict[tuple[str, ...], _Window] = {}

    def _take(self, key: tuple[str, ...], limit: int, window: float) -> tuple[bool, _Window]:
        now = self.clock.monotonic()
        state = self._windows.setdefault(key, _Window())
        if now >= state.reset_at:
            state.count, state.reset_at = 0, now + window
        if state.count >= limit:
            return False, state
        state.count += 1
        return True, state

    def check(self, token: str, method: str, route: str, params: dict[str, str], *, exempt_global: bool) -> Verdict:
        """Account one request and say whether it may pass, with the headers to send."""
        if not self.config.enabled:
            return Verdict(allowed=True, headers={})
        now = self.clock.monotonic()
        if not exempt_global:
            limit, window = self.config.global_limit
            ok, state = self._take((token, "global"), limit, window)
            if not ok:
                retry = state.reset_at - now
                return Verdict(
                    allowed=False,
                    headers={"X-RateLimit-Global": "true", "X-RateLimit-Scope": "global"},
                    retry_after=retry,
                    is_global=True,
                )
        rule = next((r for r in self.config.rules() if r.match(method, route)), None)
        major: str | None = None
        if rule is None:
            name, (limit, window) = f"{method} {route}", self.config.default_route
            for candidate in ("guild_id", "channel_id", "webhook_id", "interaction_id"):
                if candidate in params:
                    major = candidate
                    break
        else:
            name, limit, window, major = rule.name, rule.limit, rule.window, rule.major
        major_value = params.get(major, "") if major else ""
        ok, state = self._take((token, name, major_value), limit, window)
        reset_after = max(state.reset_at - now, 0.0)
        headers = {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(max(limit - state.count, 0)),
            "X-RateLimit-Reset": f"{self.clock.wall() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:16],
        }
        if ok:
            return Verdict(allowed=True, headers=headers)
        headers["X-RateLimit-Scope"] = "user"
        return Verdict(allowed=False, headers=headers, retry_after=reset_after)


def parse_limit(text: str) -> tuple[int, float]:
    """``"LIMIT/SECONDS"`` (a command-line limit such as ``5/5``) as a (limit, window) pair."""
    limit, _, window = text.partition("/")
    return int(limit), float(window)


def retry_after_header(seconds: float) -> str:
    """Discord's ``Retry-After`` header is whole seconds, rounded up."""
    return str(max(math.ceil(seconds), 0))
