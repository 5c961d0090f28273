"""The club's pages served by the bot's web server: ``/club/<server id>/<lang>/...``, the static build's paths.

The pages are the static build's own (``mafiabot.host.site.Site``): the same templates, data and
relative links, so a page opens the same from a folder and from this server. Only the root differs:
a folder has no headers to read, so it sends the reader to the server's language; here the root
reads the browser's ``Accept-Language`` first.

Reading a server's pages is one query per game, too slow to do per request in a big league, so a
server's data is read once and kept for ``refresh`` seconds, then read again in the background while
the pages already read are still served. What privacy decides is read on every request instead: the
pages turned off answer 404 at once (exactly as an unknown server, so nothing tells them apart), and
a member who just hid their name has the data read again before any page is shown.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from aiohttp import web

from mafiabot.core.clock import LoopClock, TableClock, wall_now
from mafiabot.host.i18n import LANGUAGES
from mafiabot.host.site import ASSETS, FONTS, Site, holding_league, read_site
from mafiabot.host.site.files import TYPES
from mafiabot.store import Store

log = logging.getLogger(__name__)

REFRESH_SECONDS = 60.0
"""How long a server's pages are served from the data read before, at most, before it is read again."""
MADE_KEPT = 64
SHEET_CSP = "default-src 'none'; style-src 'self'; font-src 'self'; frame-ancestors 'self'"
"""A protocol sheet's own policy: its style sheet and typeface, and shown inside the club's pages only."""
FONT_CACHE = "public, max-age=31536000"
"""The sheets' typeface does not change: a browser keeps it a year (the style sheet naming it, a day)."""
"""How many games' files (sheets, exports) are kept made, across servers."""
SNOWFLAKE_END = 2**63
"""Discord ids are 64-bit snowflakes the database keeps as signed 64-bit integers."""


@dataclass
class _Kept:
    site: Site
    read_at: float
    hidden: frozenset[int]
    holds: frozenset[tuple[int, int]]
    language: str
    refreshing: asyncio.Task[None] | None = None


def pick_language(header: str, fallback: str, languages: tuple[str, ...] = LANGUAGES) -> str:
    """The language of the pages a browser asks for by ``Accept-Language``; ``fallback`` if it names none of them.

    Quality values order the browser's choices (``ru-RU,ru;q=0.9,en;q=0.8``); a region counts as
    its language, ``*`` and ``q=0`` name nothing.
    """
    best: tuple[float, int] | None = None
    chosen = fallback
    for order, item in enumerate(header.split(",")):
        tag, _, params = item.strip().partition(";")
        language = tag.strip().lower().split("-")[0]
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if language not in languages or quality <= 0:
            continue
        if best is None or (quality, -order) > best:
            best, chosen = (quality, -order), language
    return chosen


class ClubPages:
    """The routes of the club's pages, on the web server's app, read from the store."""

    def __init__(self, store: Store, *, clock: TableClock | None = None,
                 refresh: float = REFRESH_SECONDS) -> None:
        self.store = store
        self.clock: TableClock = clock or LoopClock()
        """The clock of ``refresh`` and of the league's periods (the last 7, 30, 365 days)."""
        self.refresh = refresh
        self._kept: dict[int, _Kept] = {}
        self._reading: dict[int, asyncio.Lock] = {}
        self._made: dict[str, bytes] = {}
        self._warming: asyncio.Task[None] | None = None
        """The games' files made lately, oldest first (a sheet takes a good part of a second to draw)."""

    def routes(self) -> list[web.RouteDef]:
        """What the web app serves for the pages."""
        return [
            web.get("/club/{guild}", self.root_without_slash),
            web.get("/club/{guild}/", self.root),
            web.get("/club/{guild}/index.html", self.root),
            *(web.get(f"/club/{{guild}}/{name}", self.asset) for name in ASSETS),
            *(web.get(f"/club/{{guild}}/{path}", self.font) for path in FONTS),
            web.get("/club/{guild}/{language}/{path:.+}", self.page),
        ]

    async def site(self, guild: str) -> Site:
        """The server's pages as last read, or 404 when they are off, the server unknown or the id not one."""
        if not (guild.isascii() and guild.isdigit() and len(guild) <= 19 and 0 < int(guild) < SNOWFLAKE_END):
            raise web.HTTPNotFound  # only a snowflake's own digits: no second address for a page, no database error
        guild_id = int(guild)
        settings = await self.store.get_settings(guild_id)
        if not settings.site_pages:
            self._drop(guild_id)
            raise web.HTTPNotFound
        hidden = await self.store.hidden_names(guild_id)
        holds = await self.store.site_holds(guild_id)
        kept = self._kept.get(guild_id)
        if kept is None or kept.hidden != hidden or kept.holds != holds or kept.language != settings.language:
            kept = await self._read(guild_id, kept)
        elif self.clock.time() - kept.read_at >= self.refresh and kept.refreshing is None:
            kept.refreshing = asyncio.get_running_loop().create_task(self._refresh(guild_id, kept))
        return kept.site

    async def _read(self, guild_id: int, before: _Kept | None) -> _Kept:
        lock = self._reading.setdefault(guild_id, asyncio.Lock())
        async with lock:  # a burst of first requests reads the league once
            kept = self._kept.get(guild_id)
            if kept is not None and kept is not before:
                return kept
            read_at = self.clock.time()
            holds = await self.store.site_holds(guild_id)  # before the read: a change meanwhile reads again
            with holding_league():  # no full pass of the collector through a big league: the loop would wait on it
                data = await read_site(self.store, guild_id, now=self._now())
                if data is None:  # turned off while reading
                    self._drop(guild_id)
                    raise web.HTTPNotFound
                site = Site(data)
                await asyncio.to_thread(site.prepare)  # a big league's counting leaves the tables' loop free
            kept = self._kept[guild_id] = _Kept(site, read_at, data.hidden, holds, data.language)
            return kept

    def warm(self) -> asyncio.Task[None]:
        """Read every server whose pages are on, one after another in the background, so no reader waits for it."""
        self._warming = asyncio.get_running_loop().create_task(self._warm())
        return self._warming

    async def close(self) -> None:
        """Stop reading in the background (the server stops serving)."""
        tasks = [t for t in (self._warming, *(k.refreshing for k in self._kept.values())) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _warm(self) -> None:
        for guild_id in await self.store.site_guilds():
            try:
                await self.site(str(guild_id))
            except web.HTTPNotFound:
                pass  # turned off meanwhile
            except Exception:  # a reader's request tries again
                log.exception("club pages: could not read server %s", guild_id)

    async def _refresh(self, guild_id: int, kept: _Kept) -> None:
        try:
            await self._read(guild_id, kept)
        except web.HTTPNotFound:
            pass
        except Exception:  # the pages read before stay; the next request tries again
            log.exception("club pages: could not read server %s again", guild_id)
        finally:
            kept.refreshing = None

    def refreshing(self, guild_id: int) -> asyncio.Task[None] | None:
        """The background read of the server's pages under way, if one is."""
        kept = self._kept.get(guild_id)
        return kept.refreshing if kept is not None else None

    def _drop(self, guild_id: int) -> None:
        self._kept.pop(guild_id, None)

    def _now(self) -> datetime:
        return wall_now(self.clock)

    async def root_without_slash(self, request: web.Request) -> web.Response:
        """The address without its last slash: on to the root, whose links are relative to it."""
        await self.site(request.match_info["guild"])
        raise web.HTTPFound(f"{request.match_info['guild']}/")

    async def root(self, request: web.Request) -> web.Response:
        """The root: on to the league in the browser's language, else the server's."""
        site = await self.site(request.match_info["guild"])
        language = pick_language(request.headers.get("Accept-Language", ""), site.first, site.languages)
        raise web.HTTPFound(f"{language}/index.html", headers={"Vary": "Accept-Language"})

    async def _file(self, site: Site, path: str) -> web.Response:
        """A game's sheet or export: named by what it holds, so one made before is still right."""
        kept = f"{site.data.guild_id}/{path}"
        content = self._made.get(kept)
        if content is None:
            content = await site.file(self.store, path)
            assert content is not None  # noqa: S101 - one of the site's files
            while len(self._made) >= MADE_KEPT:
                self._made.pop(next(iter(self._made)))
            self._made[kept] = content
        suffix = path[path.rindex("."):]
        headers = {"Content-Security-Policy": SHEET_CSP} if suffix == ".svg" else None
        return web.Response(body=content, content_type=TYPES[suffix], headers=headers)

    async def asset(self, request: web.Request) -> web.Response:
        """The style sheet or the icon every page links to."""
        site = await self.site(request.match_info["guild"])
        name = request.path.rsplit("/", 1)[-1]
        return web.Response(text=site.asset(name), content_type=ASSETS[name])

    async def font(self, request: web.Request) -> web.Response:
        """The sheets' typeface, its style sheet or its licence (one of ``FONTS``)."""
        await self.site(request.match_info["guild"])
        path = request.path.split("/", 3)[-1]
        cache = "public, max-age=86400" if FONTS[path] == "text/css" else FONT_CACHE
        return web.Response(body=Site.font_file(path), content_type=FONTS[path], headers={"Cache-Control": cache},
                            charset="utf-8" if FONTS[path].startswith("text/") else None)

    async def page(self, request: web.Request) -> web.Response:
        """A page in the language its address names (the pages' own switch links lead there), or a game's file."""
        site = await self.site(request.match_info["guild"])
        path = f"{request.match_info['language']}/{request.match_info['path']}"
        if site.game_file(path) is not None:
            return await self._file(site, path)
        html = site.render(request.match_info["language"], request.match_info["path"])
        if html is None:
            raise web.HTTPNotFound
        return web.Response(text=html, content_type="text/html", charset="utf-8")
