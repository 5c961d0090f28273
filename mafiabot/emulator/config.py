"""What an emulator is configured with, where it listens, and what it records of REST traffic.

These are plain data shared by the gateway, REST and the `Emulator` that wires them together.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from .ratelimit import RateLimitConfig


@dataclasses.dataclass
class EmulatorConfig:
    """Knobs of one emulator instance.

    Attributes:
        latency_ms: Added round trip: REST answers wait this long, gateway frames half of it.
        heartbeat_interval_ms: What HELLO asks clients for.
        rate_limits: Bucket sizes and windows.
        spec_path: OpenAPI file; ``None`` means the env var or the default location.
        resume_buffer: Events kept per session for RESUME.
        interaction_ack_seconds: How long an interaction may wait for its first answer.
        interaction_token_seconds: How long follow-ups stay possible.
        max_concurrency: IDENTIFYs allowed per rate-limit key (``shard_id % max_concurrency``) per
            ``identify_window`` seconds (``GET /gateway/bot``'s ``session_start_limit``).
        identify_window: Discord's 5 s.
    """

    latency_ms: float = 0.0
    heartbeat_interval_ms: int = 41_250
    rate_limits: RateLimitConfig = dataclasses.field(default_factory=RateLimitConfig)
    spec_path: Path | None = None
    resume_buffer: int = 5000
    interaction_ack_seconds: float = 3.0
    interaction_token_seconds: float = 900.0
    max_concurrency: int = 1
    identify_window: float = 5.0

    def frame_delay(self) -> float:
        """Seconds a gateway frame waits: half the round trip."""
        return self.latency_ms / 2000


@dataclasses.dataclass
class Address:
    """Where the emulator listens; known once it has started (port 0 picks a free one)."""

    host: str = "127.0.0.1"
    port: int = 0

    @property
    def url(self) -> str:
        """Base HTTP URL, e.g. ``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def api_url(self) -> str:
        """What discord.py's ``Route.BASE`` must be."""
        return f"{self.url}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The websocket URL, also sent as ``resume_gateway_url``."""
        return f"ws://{self.host}:{self.port}/"


@dataclasses.dataclass(frozen=True)
class RequestRecord:
    """One REST request as the emulator saw it."""

    method: str
    path: str
    route: str | None
    status: int
    app_id: int | None
    body: Any


@dataclasses.dataclass
class FaultRule:
    """A failure to inject into matching REST requests.

    Attributes:
        method: HTTP method to match, or ``None`` for any.
        route: Route template (``/channels/{channel_id}/messages``) or ``None`` for any.
        status: Status to answer with, when neither hang nor disconnect nor headers is set.
        code: Discord's JSON error code in that answer (60003, 50013, ...; 0 for a server error).
        message: The error's message; a generic one when empty.
        hang: Seconds to stall before answering normally (a client-side timeout).
        disconnect: Drop the TCP connection without answering.
        headers: Serve the request normally but overwrite these answer headers: rate-limit
            headers that lie (a wrong ``X-RateLimit-Bucket``, a wrong ``X-RateLimit-Remaining``),
            as Discord has been seen to send. The real limits still apply.
        times: How many requests it hits before it is used up.
    """

    method: str | None = None
    route: str | None = None
    status: int = 500
    code: int = 0
    message: str = ""
    hang: float | None = None
    disconnect: bool = False
    headers: dict[str, str] | None = None
    times: int = 1

    def matches(self, method: str, route: str | None) -> bool:
        """Whether this rule applies to the request."""
        return self.times > 0 and self.method in (None, method) and self.route in (None, route)
