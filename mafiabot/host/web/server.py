"""The stream server: aiohttp's web server, in the bot's own process and event loop.

aiohttp is already here (discord.py talks to Discord through its client), it is well kept, and
its server runs in the loop the tables run in, so a table's frame reaches a viewer with no thread,
queue or process between them. Server-Sent Events, not WebSockets: the feed goes one way, every
browser and OBS's browser source reconnect by themselves and send back the last id they had, and
a reverse proxy passes them as a plain response.

Each request's link is read from the store, so a revoked or expired link stops opening at once,
and its open streams are closed by ``revoke``. The overlay is static files with no inline script,
sent under a Content-Security-Policy that allows only this server's own files.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from datetime import timedelta
from importlib import resources
from typing import Protocol

from aiohttp import web

from mafiabot.core.clock import LoopClock, TableClock, wall_now
from mafiabot.core.runtime import Table
from mafiabot.host.i18n import t
from mafiabot.host.web.club import ClubPages
from mafiabot.host.web.feed import Feed, Viewer, Watcher, wake_in_slices
from mafiabot.host.web.frames import TIERS, Tier
from mafiabot.store.streams import StreamLink, StreamLinkRepo, token_hash

log = logging.getLogger(__name__)

TOKEN_BYTES = 24
"""192 random bits per link: unguessable, and short enough for a URL."""
LINGER = timedelta(hours=1)
"""How long a link still shows the result after the game is over."""
HEARTBEAT_SECONDS = 15.0
"""A comment line this often keeps proxies from closing an idle stream (loop time: no game depends on it).

One timer of the server ticks three times as often and wakes only the streams sent nothing for the
rest of the interval: a timer per wait would arm and drop one per frame and viewer, thousands a
second, that linger in the loop's heap long enough to reach the collector's oldest generation,
whose full collections then stall every table at once; and waking every stream at each tick would
write to a thousand viewers in one go, when the tables' frames keep them alive anyway."""
HEARTBEAT_TICK = HEARTBEAT_SECONDS / 3
RETRY_MS = 2000
"""How soon a browser tries again after the stream broke (the bot restarting, a proxy timing out)."""
LAYOUTS = ("circle", "strip")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; font-src 'self'; connect-src 'self'; "
       "img-src 'self'; object-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
"""Every response's policy, unless it brings its own (a protocol sheet, shown in its game's page: ``club``)."""
STATIC_TYPES = {".css": "text/css", ".js": "text/javascript", ".ttf": "font/ttf", ".html": "text/html"}
STRINGS = ("day", "night", "floor", "vote", "lift", "nominees", "paused", "waiting", "closed", "shots", "checks",
           "saves", "best_move")
"""The catalog strings (``stream.*``) the overlay draws itself; the rest comes in the frames, already in words."""
PLACEHOLDERS = {name: "{" + name + "}" for name in ("day", "night", "seat", "name")}
"""Left in the strings for the overlay to fill in (as text)."""


class Tables(Watcher, Protocol):
    """Where the server finds a running table by its game id and follows it (the table manager)."""

    def running(self, game_id: int, /) -> Table | None:
        """The running table of ``game_id``, if this process runs it."""


def new_token() -> str:
    """A fresh link token."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def _static(name: str) -> bytes:
    return resources.files("mafiabot.host.web").joinpath("static", name).read_bytes()


def _font(name: str) -> bytes:
    return resources.files("mafiabot.host.pictures").joinpath("data", name).read_bytes()


@web.middleware
async def _headers(request: web.Request, handler: Callable[[web.Request], object]) -> web.StreamResponse:
    try:
        response = await handler(request)  # type: ignore[misc]
    except web.HTTPException as refused:  # a 404 or a redirect carries the same headers as a page
        _secure(refused)
        raise
    assert isinstance(response, web.StreamResponse)  # noqa: S101
    if not response.prepared:
        _secure(response)
    return response


def _secure(response: web.StreamResponse) -> None:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"  # the token is in the address
    response.headers.setdefault("Cache-Control", "no-store")  # the club's fonts are kept a year


class StreamServer:
    """The feeds of this process's tables, the links that open them, and the web app serving both."""

    def __init__(self, links: StreamLinkRepo, tables: Tables, *, base_url: str = "",
                 clock: TableClock | None = None, per_link: int = 50, total: int = 2000,
                 club: ClubPages | None = None) -> None:
        self.links = links
        self.tables = tables
        self.base_url = base_url.rstrip("/")
        self.clock: TableClock = clock or LoopClock()
        """The clock of the broadcast tier's delay and of the links' expiry."""
        self.per_link = per_link
        self.total = total
        self.feeds: dict[int, Feed] = {}
        self._open: dict[str, set[Viewer]] = {}
        self._beat: asyncio.TimerHandle | None = None
        self._runner: web.AppRunner | None = None
        self.app = web.Application(middlewares=[_headers])
        self.app.add_routes([
            web.get("/s/{token}/{layout}", self.overlay),
            web.get("/s/{token}/{layout}/events", self.events),
            web.get("/s/{token}/{layout}/strings.json", self.strings),
            web.get("/static/{name}", self.static),
        ])
        self.club = club
        if club is not None:
            self.app.add_routes(club.routes())

    # -- links ------------------------------------------------------------------------------------

    async def issue(self, game_id: int, delay: float) -> dict[Tier, str]:
        """Fresh links for every tier of the game (the ones before are revoked and closed); tier to token."""
        tokens: dict[Tier, str] = {tier: new_token() for tier in TIERS}
        self._close_game(game_id)
        self.feed(game_id, owed=delay)  # the frames the broadcast tier's delay holds back, and every one from now on
        await self.links.issue_links(game_id, {str(k): v for k, v in tokens.items()}, delay, at=wall_now(self.clock))
        return tokens

    async def revoke(self, game_id: int) -> int:
        """Revoke every link of the game and close its streams now; how many links were open."""
        count = await self.links.revoke_links(game_id, at=wall_now(self.clock))
        self._close_game(game_id)
        return count

    def _close_game(self, game_id: int) -> None:
        feed = self.feeds.get(game_id)
        if feed is not None:
            feed.close_all()

    def url(self, token: str, layout: str = "circle") -> str:
        """The link a streamer opens."""
        return f"{self.base_url}/s/{token}/{layout}"

    def ended(self, table: Table) -> None:
        """The game is over: its links show the result a while longer, then stop opening.

        A game nobody streamed from this process has no feed: its links (if any) cannot open without
        the running table anyway, so nothing is written for it.
        """
        if table.id not in self.feeds:
            return
        until = wall_now(self.clock) + LINGER
        task = asyncio.get_running_loop().create_task(self.links.expire_links(table.id, until))
        task.add_done_callback(_log_failure)
        self.clock.call_later(LINGER.total_seconds(), self._drop, table.id)

    def _drop(self, game_id: int) -> None:
        feed = self.feeds.pop(game_id, None)
        if feed is not None:
            feed.close_all()
            feed.stop()

    # -- requests ---------------------------------------------------------------------------------

    async def _link(self, request: web.Request) -> tuple[str, StreamLink, Feed]:
        token = request.match_info["token"]
        if request.match_info["layout"] not in LAYOUTS:
            raise web.HTTPNotFound
        link = await self.links.stream_link(token)
        if link is None or link.tier not in TIERS:
            raise web.HTTPNotFound
        if not link.opens(wall_now(self.clock)):
            raise web.HTTPGone
        feed = self.feed(link.game_id, owed=link.delay if link.tier == "broadcast" else 0.0)
        if feed is None:
            raise web.HTTPGone
        return token_hash(token), link, feed

    def feed(self, game_id: int, *, owed: float = 0.0) -> Feed | None:
        """The game's feed, started the first time it is asked for while this process runs the table.

        ``owed``: the delay of the tier about to read it, whose frames of that long ago the feed
        rebuilds from the game's log when it was not running then (a restart, a link opened mid-game).
        """
        feed = self.feeds.get(game_id)
        if feed is None:
            table = self.tables.running(game_id)
            if table is None:
                return None
            feed = self.feeds[game_id] = Feed(table, self.clock, self.tables, owed=owed)
        feed.owe(owed)
        return feed

    async def overlay(self, request: web.Request) -> web.Response:
        """The overlay page: the same static file for every link (the script reads the address)."""
        await self._link(request)
        return web.Response(body=_static("overlay.html"), content_type="text/html", charset="utf-8")

    async def strings(self, request: web.Request) -> web.Response:
        """The catalog strings the overlay draws, in the table's language."""
        _, _, feed = await self._link(request)
        data = {f"stream.{key}": t(feed.language, f"stream.{key}", **PLACEHOLDERS) for key in STRINGS}
        return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False))

    async def static(self, request: web.Request) -> web.Response:
        """The overlay's script, style sheet and fonts (shipped in the package)."""
        name = request.match_info["name"]
        suffix = name[name.rfind("."):] if "." in name else ""
        if suffix not in STATIC_TYPES or "/" in name or name.startswith("."):
            raise web.HTTPNotFound
        try:
            body = _font(name) if suffix == ".ttf" else _static(name)
        except (FileNotFoundError, IsADirectoryError):
            raise web.HTTPNotFound from None
        return web.Response(body=body, content_type=STATIC_TYPES[suffix])

    async def events(self, request: web.Request) -> web.StreamResponse:
        """The tier's stream: the newest frame it may show, then each newer one as it becomes due."""
        digest, link, feed = await self._link(request)
        viewers = self._open.setdefault(digest, set())
        if len(viewers) >= self.per_link or sum(map(len, self._open.values())) >= self.total:
            raise web.HTTPServiceUnavailable(headers={"Retry-After": "5"})
        last = _last_id(request.headers, request.query)
        viewer = feed.join(link.tier, link.delay if link.tier == "broadcast" else 0.0, last)  # type: ignore[arg-type]
        viewers.add(viewer)
        if self._beat is None:
            self._beat = asyncio.get_running_loop().call_later(HEARTBEAT_TICK, self._heartbeat)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"})
        _secure(response)
        try:
            await response.prepare(request)
            await response.write(f"retry: {RETRY_MS}\n\n".encode())
            await self._pump(response, feed, viewer)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            feed.leave(viewer)
            viewers.discard(viewer)
            if not viewers:
                self._open.pop(digest, None)
        return response

    def _heartbeat(self) -> None:
        """Wake the streams sent nothing lately: one with nothing new sends a comment line, so no proxy closes it.

        A slice at a time, as a frame's viewers: a thousand streams of paused tables fall quiet together.
        """
        self._beat = None
        if not self._open:
            return
        loop = asyncio.get_running_loop()
        quiet = loop.time() - (HEARTBEAT_SECONDS - HEARTBEAT_TICK)
        wake_in_slices([viewer for viewers in self._open.values() for viewer in viewers if viewer.written <= quiet])
        self._beat = loop.call_later(HEARTBEAT_TICK, self._heartbeat)

    async def _pump(self, response: web.StreamResponse, feed: Feed, viewer: Viewer) -> None:
        loop = asyncio.get_running_loop()
        while True:
            viewer.written = loop.time()
            await viewer.wake.wait()
            viewer.wake.clear()
            if viewer.ending:
                return
            if viewer.closed:
                await response.write(b"event: closed\ndata: {}\n\n")
                return
            frame = feed.frame_for(viewer.tier, viewer.delay)
            if frame is None or frame.id_for(viewer.tier) == viewer.last:
                await response.write(b": ok\n\n")
                continue
            viewer.last = frame.id_for(viewer.tier)
            # How long the frame has been due: a viewer who joins mid-speech counts the floor's time from there.
            age = max(0.0, self.clock.time() - viewer.delay - frame.made(viewer.tier))
            await response.write(feed.encoded(frame, viewer.tier, f"{age:.1f}"))

    # -- running ----------------------------------------------------------------------------------

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host``:``port`` (0: any free port); the port it listens on."""
        self._runner = web.AppRunner(self.app, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        addresses = self._runner.addresses  # port 0 took a free port: read back which
        return int(addresses[0][1]) if addresses else port

    async def close(self) -> None:
        """End every stream and stop listening."""
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None
        for feed in self.feeds.values():
            feed.close_all(revoked=False)
            feed.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.club is not None:
            await self.club.close()


def _last_id(headers: Mapping[str, str], query: Mapping[str, str]) -> int:
    """The id the browser had: its ``Last-Event-ID``, or ``last`` in the address after the page reloaded."""
    raw = headers.get("Last-Event-ID") or query.get("last") or ""
    try:
        return int(raw)
    except ValueError:
        return -1


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("stream links: could not set their expiry", exc_info=task.exception())


def links_text(server: StreamServer, tokens: Mapping[Tier, str]) -> dict[str, str]:
    """Each tier's two links (circle and strip), for the judge's message."""
    return {f"{tier}_{layout}": server.url(token, layout) for tier, token in tokens.items() for layout in LAYOUTS}


