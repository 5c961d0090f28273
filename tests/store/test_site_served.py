"""The club's pages served by the bot's web server, from a store with played games (SQLite and PostgreSQL).

A real server on a free loopback port and a real HTTP client: the pages are crawled from the
league's root by their own links and held against the static build of the same store, so the two
ways of publishing cannot drift apart.
"""

from __future__ import annotations

import gc
import re
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import aiohttp

from engine import CLASSIC
from mafiabot.core.clock import ManualClock
from mafiabot.core.records import GuildSettings
from mafiabot.core.runtime import Table
from mafiabot.host.site import FONTS, build_pages, build_site, read_site, write_pages
from mafiabot.host.web.club import FONT_CACHE, SHEET_CSP, ClubPages, pick_language
from mafiabot.host.web.server import CSP, StreamServer
from mafiabot.store import Store
from tests.store.test_site import (
    GUILD,
    HIDDEN,
    NAMES,
    NOW,
    OTHER,
    PLAYERS,
    _Page,
    _play,
    _server,
    held_final,
    held_note,
    top_rows,
)

REFRESH = 60.0


class _NoTables:
    """No table runs in this process: only the pages are asked for."""

    def running(self, game_id: int, /) -> Table | None:
        return None

    def watch(self, table: Table, woken: Callable[[], None], /) -> Callable[[], None]:
        raise AssertionError("no stream is opened here")


@asynccontextmanager
async def _serving(store: Store, clock: ManualClock) -> AsyncIterator[tuple[str, ClubPages, aiohttp.ClientSession]]:
    club = ClubPages(store, clock=clock, refresh=REFRESH)
    server = StreamServer(store.streams, _NoTables(), clock=clock, club=club)
    port = await server.start("127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as http:
            yield f"http://127.0.0.1:{port}", club, http
    finally:
        await server.close()


async def test_every_served_page_is_the_built_page_and_every_link_opens(store: Store, tmp_path: Path) -> None:
    games, running, _tid = await _server(store)
    clock = ManualClock(NOW)
    data = await read_site(store, GUILD, now=NOW)
    assert data is not None
    built = build_pages(data)
    async with _serving(store, clock) as (base, _club, http):
        root = f"{base}/club/{GUILD}/"
        async with http.get(root, headers={"Accept-Language": "en-GB,en;q=0.9"}) as response:
            assert response.status == 200
            assert str(response.url) == f"{root}en/index.html"
            assert response.headers["Content-Security-Policy"] == CSP
        seen: dict[str, str] = {}
        made: dict[str, bytes] = {}
        queue = [f"{root}en/index.html"]
        broken = []
        while queue:
            url = queue.pop()
            if url in seen or url in made:
                continue
            async with http.get(url, allow_redirects=False) as response:
                if response.status != 200:
                    broken.append((url, response.status))
                    continue
                drawn = urlsplit(url).path.endswith(".svg") and "/games/" in url
                assert response.headers["Content-Security-Policy"] == (SHEET_CSP if drawn else CSP)
                if urlsplit(url).path.endswith((".svg", ".json", ".csv")) and "/games/" in url:
                    made[url] = await response.read()
                    continue
                seen[url] = await response.text()
            if not url.endswith(".html"):
                continue
            page = _Page()
            page.feed(seen[url])
            for link in page.links:
                assert "://" not in link, (url, link)
                assert not link.startswith("/"), (url, link)  # relative, as in the folder
                target = urljoin(url, link)
                assert urlsplit(target).path.startswith(f"/club/{GUILD}/"), (url, link)
                queue.append(target)
        assert broken == []
        served = {url.removeprefix(root): text for url, text in seen.items()}
        expected = {path: text for path, text in built.items() if path != "index.html"}  # the root redirects here
        assert served == expected  # every page, each one the same as the static build's
        out = tmp_path / "site"
        assert await build_site(store, GUILD, out, now=NOW)
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
                 if p.suffix in (".svg", ".json", ".csv") and p.parent.name == "games"}
        assert {url.removeprefix(root): content for url, content in made.items()} == files  # sheets and exports
        assert len(files) == len(games) * 6
        for language in ("en", "ru", "ka"):
            assert all(f"{language}/games/{gid}.html" in served for gid in games)
        sheet = next(url for url in made if url.endswith(".svg"))
        style = urljoin(sheet, re.findall(r'<\?xml-stylesheet type="text/css" href="([^"]+)"', made[sheet].decode())[0])
        async with http.get(style) as response:
            assert response.status == 200
            css = await response.text()
            assert response.content_type == "text/css"
        fonts = [urljoin(style, name) for name in re.findall(r'url\("([^"]+)"\)', css)]
        assert len(fonts) == 2  # regular and bold
        for font in [*fonts, urljoin(style, "LICENSE-DejaVu.txt")]:
            async with http.get(font) as response:
                assert response.status == 200
                assert response.headers["Cache-Control"] == FONT_CACHE  # once for good, not with every sheet
                assert await response.read() == (out / "fonts" / font.rsplit("/", 1)[-1]).read_bytes()
        async with http.get(f"{root}en/games/{running}.html") as response:
            assert response.status == 404  # a game still being played has no page
        async with http.get(f"{root}en/players/{HIDDEN}.html") as response:
            assert response.status == 404
    assert NAMES[HIDDEN] not in "".join(served.values())


async def test_the_written_files_are_the_built_pages_in_one_process_or_several(store: Store, tmp_path: Path) -> None:
    await _server(store)
    data = await read_site(store, GUILD, now=NOW)
    assert data is not None
    built = build_pages(data)
    for workers in (1, 2):
        out = tmp_path / str(workers)
        assert write_pages(data, out, workers=workers) == len(built) + len(FONTS)
        files = {path.relative_to(out).as_posix(): path.read_text(encoding="utf-8")
                 for path in out.rglob("*") if path.is_file() and path.parent.name != "fonts"}
        assert files == built
        assert {f"fonts/{p.name}" for p in (out / "fonts").iterdir()} == set(FONTS)


async def test_the_browser_language_opens_first_and_the_server_language_when_it_names_none(store: Store) -> None:
    await _server(store)  # the server's language is Russian
    async with _serving(store, ManualClock(NOW)) as (base, _club, http):
        for header, language in [("ka", "ka"), ("ru-RU,ru;q=0.9,en;q=0.8", "ru"), ("en-US", "en"),
                                 ("de-DE,fr;q=0.9", "ru"), ("", "ru"), ("*", "ru"), ("en;q=0.3, ka;q=0.7", "ka"),
                                 ("ka;q=0, en;q=0.1", "en")]:
            async with http.get(f"{base}/club/{GUILD}", headers={"Accept-Language": header}) as response:
                assert response.status == 200, header
                assert str(response.url) == f"{base}/club/{GUILD}/{language}/index.html", header
                assert f'<html lang="{language}">' in await response.text()
                assert response.history[-1].headers["Vary"] == "Accept-Language"
        async with http.get(f"{base}/club/{GUILD}/ka/index.html", headers={"Accept-Language": "en"}) as response:
            assert '<html lang="ka">' in await response.text()  # the switch link's language wins over the header
    assert pick_language("ru;q=0.5,ka;q=0.5", "en") == "ru"  # a tie: the browser's order


async def test_pages_off_answer_exactly_as_an_unknown_server(store: Store) -> None:
    await _server(store)
    async with _serving(store, ManualClock(NOW)) as (base, _club, http):

        async def answer(path: str) -> tuple[int, str, dict[str, str]]:
            async with http.get(f"{base}{path}", allow_redirects=False) as response:
                headers = {k: v for k, v in response.headers.items() if k not in ("Date", "Content-Length")}
                return response.status, await response.text(), headers

        on = await answer(f"/club/{GUILD}/en/index.html")
        assert on[0] == 200
        unknown = await answer(f"/club/{OTHER}/en/index.html")
        assert unknown[0] == 404
        assert unknown[2]["Content-Security-Policy"] == CSP
        # nothing but the id itself opens the pages
        for guild in ("not-a-server", "9" * 30, "9" * 5000, f"{GUILD:_}", f"+{GUILD}", "-1"):
            assert await answer(f"/club/{guild}/en/index.html") == unknown, guild
        await store.save_settings(GuildSettings(GUILD, language="ru"))  # the staff turn them off: at once
        for path in ("en/index.html", f"en/players/{PLAYERS[0]}.html", "style.css", "", "index.html"):
            assert await answer(f"/club/{GUILD}/{path}") == unknown, path
        assert await answer(f"/club/{GUILD}") == unknown


async def test_a_hidden_name_leaves_at_once_and_a_new_game_shows_after_the_refresh(store: Store) -> None:
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    await _play(store, CLASSIC, PLAYERS[:10], 1)
    clock = ManualClock(NOW)
    async with _serving(store, clock) as (base, club, http):
        league = f"{base}/club/{GUILD}/en/index.html"
        async with http.get(league) as response:
            assert f">{NAMES[PLAYERS[0]]}<" in await response.text()
        await store.hide_name(GUILD, PLAYERS[0])
        async with http.get(league) as response:
            assert f">{NAMES[PLAYERS[0]]}<" not in await response.text()
        async with http.get(f"{base}/club/{GUILD}/en/players/{PLAYERS[0]}.html") as response:
            assert response.status == 404

        new = await _play(store, CLASSIC, PLAYERS[1:11], 6)
        page = f"{base}/club/{GUILD}/en/games/{new}.html"
        async with http.get(page) as response:
            assert response.status == 404  # the pages read before, until the refresh
        assert club.refreshing(GUILD) is None
        clock.advance(REFRESH)
        async with http.get(page) as response:
            assert response.status == 404  # served at once from what was read; the read goes on behind
        task = club.refreshing(GUILD)
        assert task is not None
        await task
        async with http.get(page) as response:
            assert response.status == 200


async def test_the_served_league_and_players_leave_out_a_held_final_as_the_build_does(store: Store) -> None:
    _tm, played = await held_final(store)
    top = top_rows(await store.league(GUILD, leave_out={played[1]}))
    async with _serving(store, ManualClock(NOW)) as (base, _club, http):
        async with http.get(f"{base}/club/{GUILD}/en/index.html") as response:
            league = await response.text()
        async with http.get(f"{base}/club/{GUILD}/en/players/{PLAYERS[0]}.html") as response:
            player = await response.text()
        async with http.get(f"{base}/club/{GUILD}/en/games/{played[1]}.html") as response:
            assert response.status == 404
    page = _Page()
    page.feed(league)
    assert page.rows[1:] == top
    assert held_note() in league
    assert held_note() in player


async def test_a_final_held_back_after_it_was_read_is_off_the_served_pages_at_once(store: Store) -> None:
    tm, played = await held_final(store)
    await store.tournaments.set_site_hidden_rounds(tm.id, 0)  # the final shown, and read so
    async with _serving(store, ManualClock(NOW)) as (base, _club, http):  # the clock never reaches a refresh
        async with http.get(f"{base}/club/{GUILD}/en/games/{played[1]}.html") as response:
            assert response.status == 200
        await store.tournaments.set_site_hidden_rounds(tm.id, 1)  # the organiser: /mafia tournament site-hide rounds:1
        async with http.get(f"{base}/club/{GUILD}/en/games/{played[1]}.html") as response:
            assert response.status == 404
        async with http.get(f"{base}/club/{GUILD}/en/index.html") as response:
            assert held_note() in await response.text()


async def test_the_pages_are_read_in_the_background_when_the_server_starts(store: Store) -> None:
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    await store.save_settings(GuildSettings(OTHER))  # pages off: not read
    first = await _play(store, CLASSIC, PLAYERS[:10], 1)
    assert await store.site_guilds() == [GUILD]
    async with _serving(store, ManualClock(NOW)) as (base, club, http):
        await club.warm()  # what the bot starts with its web server
        later = await _play(store, CLASSIC, PLAYERS[1:11], 6)
        for game, status in ((first, 200), (later, 404)):  # the first reader is served what was read at the start
            async with http.get(f"{base}/club/{GUILD}/en/games/{game}.html") as response:
                assert response.status == status, game


async def test_a_league_read_again_leaves_nothing_of_the_one_before(store: Store) -> None:
    games, _running, _tid = await _server(store)
    clock = ManualClock(NOW)
    async with _serving(store, clock) as (base, club, http):
        for path in ("en/index.html", "ru/games/index.html", f"ka/games/{games[0]}.html",
                     f"en/players/{PLAYERS[0]}.html"):
            async with http.get(f"{base}/club/{GUILD}/{path}") as response:
                assert response.status == 200, path
        before = weakref.ref((await club.site(str(GUILD))).data)
        clock.advance(REFRESH)
        await club.site(str(GUILD))
        task = club.refreshing(GUILD)
        assert task is not None
        await task
        gc.collect()
        assert before() is None  # a bot reading its league every minute would keep every one it read
