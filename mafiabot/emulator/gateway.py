"""The gateway: websocket sessions with sequence numbers, a resume buffer and intent filtering.

A session outlives its connection: events are numbered and kept, so a client that RESUMEs with
its last sequence number gets exactly what it missed. Frames are plain-text JSON, which discord.py
accepts although it asks for zlib compression.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import logging
import secrets
from collections.abc import Callable
from typing import Any

from aiohttp import WSMsgType, web

from .config import Address, EmulatorConfig
from .state import JSON, Application, Intent, World

_log = logging.getLogger(__name__)

PRIVILEGED_INTENTS = Intent.GUILD_MEMBERS | (1 << 8) | Intent.MESSAGE_CONTENT


class Op:
    """Gateway opcodes."""

    DISPATCH = 0
    HEARTBEAT = 1
    IDENTIFY = 2
    PRESENCE = 3
    VOICE_STATE = 4
    RESUME = 6
    RECONNECT = 7
    REQUEST_MEMBERS = 8
    INVALID_SESSION = 9
    HELLO = 10
    HEARTBEAT_ACK = 11


@dataclasses.dataclass
class GatewaySession:
    """One IDENTIFY'd session of a bot user; survives dropped connections until invalidated."""

    id: str
    app: Application
    intents: int
    shard_id: int
    shard_count: int
    buffer_size: int
    seq: int = 0
    valid: bool = True
    ws: web.WebSocketResponse | None = None
    identifies: int = 0
    resumes: int = 0
    buffer: collections.deque[tuple[int, str, float]] = dataclasses.field(default_factory=collections.deque)
    wake: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    def handles_guild(self, guild_id: int) -> bool:
        """Whether this session's shard carries the guild's events."""
        return (guild_id >> 22) % self.shard_count == self.shard_id

    def push(self, event: str, data: JSON, ready_at: float) -> None:
        """Number an event, keep it for resumes and wake the writer."""
        self.seq += 1
        frame = json.dumps({"op": Op.DISPATCH, "t": event, "s": self.seq, "d": data}, separators=(",", ":"))
        self.buffer.append((self.seq, frame, ready_at))
        while len(self.buffer) > self.buffer_size:
            self.buffer.popleft()
        self.wake.set()


class Gateway:
    """Accepts websocket connections and runs the HELLO / IDENTIFY / RESUME dance."""

    def __init__(
        self, world: World, config: EmulatorConfig, address: Address, changed: Callable[[], None]
    ) -> None:
        self.world = world
        self.config = config
        self.address = address
        self._changed = changed
        """Wakes the emulator's waiters after each state change."""
        self.sessions: dict[str, GatewaySession] = {}
        self._writers: set[asyncio.Task[None]] = set()
        self._identified: dict[tuple[int, int], float] = {}
        """(application, rate-limit key): when its last IDENTIFY was let through."""
        self.identifies: list[tuple[float, int, int]] = []
        """Every IDENTIFY let through: (loop time, application id, shard id)."""
        self.identify_refusals = 0
        """IDENTIFYs refused for coming too soon after another of their rate-limit key."""

    def live_sessions(self) -> list[GatewaySession]:
        """Valid sessions, connected or waiting for a resume."""
        return [s for s in self.sessions.values() if s.valid]

    def connected(self, app: Application | None = None) -> list[GatewaySession]:
        """Sessions with an open connection, optionally of one application."""
        return [
            s
            for s in self.sessions.values()
            if s.valid and s.ws is not None and not s.ws.closed and (app is None or s.app is app)
        ]

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        """Serve one websocket connection."""
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        await ws.prepare(request)
        interval = self.config.heartbeat_interval_ms
        await ws.send_str(json.dumps({"op": Op.HELLO, "d": {"heartbeat_interval": interval}}))
        session: GatewaySession | None = None
        writer: asyncio.Task[None] | None = None
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                payload = json.loads(msg.data)
                op = payload.get("op")
                data = payload.get("d")
                if op == Op.HEARTBEAT:
                    await ws.send_str(json.dumps({"op": Op.HEARTBEAT_ACK}))
                elif op == Op.IDENTIFY and session is None:
                    session = await self._identify(ws, data)
                    if session is not None:
                        writer = self._start_writer(session, ws, 0)
                elif op == Op.RESUME and session is None:
                    session = await self._resume(ws, data)
                    if session is not None:
                        writer = self._start_writer(session, ws, int(data.get("seq") or 0))
                        session.push("RESUMED", {}, self._ready_at())
                        self._changed()
        finally:
            if writer is not None:
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await writer
            if session is not None and session.ws is ws:
                session.ws = None
            self._changed()
        return ws

    def _ready_at(self) -> float:
        return asyncio.get_running_loop().time() + self.config.frame_delay()

    async def _identify(self, ws: web.WebSocketResponse, data: Any) -> GatewaySession | None:
        app = self.world.app_by_token(str(data.get("token", "")).removeprefix("Bot "))
        if app is None:
            await ws.close(code=4004, message=b"Authentication failed.")
            return None
        intents = int(data.get("intents", 0))
        if intents & PRIVILEGED_INTENTS & ~app.privileged_intents:
            await ws.close(code=4014, message=b"Disallowed intent(s).")
            return None
        shard_id, shard_count = data.get("shard") or (0, 1)
        if not 0 <= shard_id < shard_count:
            await ws.close(code=4010, message=b"Invalid shard.")
            return None
        if not self._may_identify(app.id, shard_id):
            # Discord: beyond max_concurrency per 5 s an IDENTIFY gets Invalid Session (not resumable).
            self.identify_refusals += 1
            await ws.send_str(json.dumps({"op": Op.INVALID_SESSION, "d": False}))
            return None
        session = GatewaySession(
            id=secrets.token_hex(16),
            app=app,
            intents=intents,
            shard_id=shard_id,
            shard_count=shard_count,
            buffer_size=self.config.resume_buffer,
            ws=ws,
            identifies=1,
        )
        self.sessions[session.id] = session
        world = self.world
        guilds = [g for g in world.guilds.values() if app.user.id in g.members and session.handles_guild(g.id)]
        ready = {
            "v": 10,
            "user": {**app.user.to_json(), "verified": True, "mfa_enabled": app.owner_mfa, "email": None},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.address.gateway_url,
            "shard": [shard_id, shard_count],
            "application": {"id": str(app.id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": ["local"],
            "user_settings": {},
            "auth": {},
            "_trace": ["mafiabot-emulator"],
        }
        session.push("READY", ready, self._ready_at())
        with_members = bool(intents & Intent.GUILD_MEMBERS)
        for guild in guilds:
            session.push(
                "GUILD_CREATE",
                world.guild_create_json(guild, app.user.id, with_all_members=with_members),
                self._ready_at(),
            )
        self._changed()
        return session

    def _may_identify(self, app_id: int, shard_id: int) -> bool:
        """One IDENTIFY per rate-limit key (``shard_id % max_concurrency``) per ``identify_window``."""
        now = asyncio.get_running_loop().time()
        key = (app_id, shard_id % max(1, self.config.max_concurrency))
        last = self._identified.get(key)
        if last is not None and now - last < self.config.identify_window:
            return False
        self._identified[key] = now
        self.identifies.append((now, app_id, shard_id))
        return True

    async def _resume(self, ws: web.WebSocketResponse, data: Any) -> GatewaySession | None:
        session = self.sessions.get(str(data.get("session_id")))
        token = str(data.get("token", "")).removeprefix("Bot ")
        seq = int(data.get("seq") or 0)
        oldest = session.buffer[0][0] if session is not None and session.buffer else 1
        if session is None or not session.valid or session.app.token != token or seq < oldest - 1:
            await ws.send_str(json.dumps({"op": Op.INVALID_SESSION, "d": False}))
            return None
        if session.ws is not None and not session.ws.closed:
            await session.ws.close(code=4000)
        session.ws = ws
        session.resumes += 1
        return session

    def _start_writer(self, session: GatewaySession, ws: web.WebSocketResponse, after: int) -> asyncio.Task[None]:
        task = asyncio.create_task(self._write(session, ws, after))
        self._writers.add(task)
        task.add_done_callback(self._writers.discard)
        return task

    async def _write(self, session: GatewaySession, ws: web.WebSocketResponse, after: int) -> None:
        loop = asyncio.get_running_loop()
        sent = after
        while not ws.closed:
            session.wake.clear()
            for seq, frame, ready_at in list(session.buffer):
                if seq <= sent:
                    continue
                delay = ready_at - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if ws.closed or session.ws is not ws:
                    return
                await ws.send_str(frame)
                sent = seq
            self._changed()
            await session.wake.wait()

    async def drop(self, app: Application | None = None, *, resumable: bool = True) -> int:
        """Cut connections (close code 4000); when not resumable the session is invalidated too.

        Returns:
            How many connections were dropped.
        """
        dropped = 0
        for session in self.connected(app):
            ws = session.ws
            if not resumable:
                session.valid = False
            session.ws = None
            if ws is not None:
                await ws.close(code=4000, message=b"Dropped by the emulator.")
                dropped += 1
        self._changed()
        return dropped

    async def reconnect(self, app: Application | None = None) -> None:
        """Ask clients to reconnect and resume (op 7), as Discord does before maintenance."""
        for session in self.connected(app):
            if session.ws is not None:
                await session.ws.send_str(json.dumps({"op": Op.RECONNECT, "d": None}))

    async def close(self) -> None:
        """Close every connection."""
        for session in self.sessions.values():
            if session.ws is not None and not session.ws.closed:
                await session.ws.close(code=1001)
        for task in list(self._writers):
            task.cancel()
