"""The club's pages in a real browser (Chromium through Playwright): no console error, a phone-sized league,
no serious or critical accessibility fault by axe-core on any page, from the built folder and from the bot's
web server.

axe-core comes in a PyPI package (``axe-playwright-python``, the ``dev`` extra) that ships its script, so
nothing is fetched at test time.

Chromium is Debian's (``/usr/bin/chromium``). Where it or Playwright is missing the test skips with
the reason; CI installs both and sets ``MAFIABOT_REQUIRE_BROWSER=1``, which turns that skip into a failure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from mafiabot.core.clock import ManualClock
from mafiabot.host.site import build_site, read_site
from mafiabot.store import Store, sqlite_url
from tests.store.test_site import GUILD, NOW, PLAYERS, _server
from tests.store.test_site_served import _serving

CHROMIUM = Path("/usr/bin/chromium")
SHEET_BOX = "(() => { const box = document.querySelector('figure.sheet object').getBoundingClientRect(); " \
            "return [box.width, box.height]; })()"
SHEET_FONTS = "(() => { const doc = document.querySelector('figure.sheet object').contentDocument; " \
              "return doc.fonts.ready.then(() => [...doc.fonts].filter(f => f.status === 'loaded')" \
              ".map(f => f.family + ' ' + f.weight)); })()"
"""The typefaces the game page's sheet drew its texts in (its SVG is the served page's own, so readable)."""
REQUIRE_BROWSER = os.environ.get("MAFIABOT_REQUIRE_BROWSER") == "1"
SHOTS = os.environ.get("MAFIABOT_SITE_SCREENSHOTS")
"""A folder for the screenshots docs/web.md shows (league, game, player, hall), when set: docs/images/site."""


def _browser_missing() -> str | None:
    try:
        import axe_playwright_python  # noqa: F401
        import playwright  # noqa: F401
    except ImportError as exc:
        return f"the {exc.name} package is not installed (pip install -e '.[dev]')"
    return None if CHROMIUM.is_file() else f"{CHROMIUM} is missing (apt-get install -y chromium)"


def _need_browser() -> None:
    missing = _browser_missing()
    if missing is not None:
        if REQUIRE_BROWSER:
            pytest.fail(f"MAFIABOT_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)


async def _accessibility_faults(axe: Any, page: Any, where: str) -> list[str]:
    """axe-core's serious and critical findings on the open page, one line each."""
    results = await axe.run(page)
    return [f"{where}: {v['id']} ({v['impact']}): {node['target']}"
            for v in results.response["violations"] if v["impact"] in ("serious", "critical")
            for node in v["nodes"]]


def _one_of_each_kind(pages: list[Path], out: Path) -> list[Path]:
    """The first page of each kind (its folder, or its name at a language's root) in each language.

    The pages of a kind are one template over other rows: axe-core reads the markup and the style
    the template gives them all, and a look at each of them took a minute of the suite.
    """
    seen: dict[tuple[str, ...], Path] = {}
    for path in pages:
        parts = path.relative_to(out).parts
        if len(parts) < 2:
            continue  # the root only sends the reader on to a language
        kind = parts[:-1] if len(parts) > 2 else parts
        seen.setdefault(kind, path)
    return sorted(seen.values())


async def test_every_page_opens_without_an_error_and_the_league_fits_a_phone(tmp_path: Path) -> None:
    _need_browser()
    from axe_playwright_python.async_playwright import Axe
    from playwright.async_api import ConsoleMessage, ViewportSize, async_playwright

    store = await Store.open(sqlite_url(tmp_path / "mafia.db"))
    try:
        await _server(store)
        out = tmp_path / "site"
        assert await build_site(store, GUILD, out, now=NOW)
    finally:
        await store.close()

    errors: list[str] = []
    wide: list[str] = []
    faults: list[str] = []
    sheets: list[tuple[Path, list[float]]] = []
    axe = Axe()
    pages = sorted(out.rglob("*.html"))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        page = await browser.new_page(viewport=ViewportSize(width=360, height=740))  # a phone

        def console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(f"{page.url}: {message.text}")

        page.on("console", console)
        page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))
        for path in pages:
            await page.goto(path.as_uri())
            if path.parent == out:  # the root only sends the reader on to the server's language
                await page.wait_for_url("**/ru/index.html")
            elif path.parent.name == "games" and path.name[0].isdigit():
                sheets.append((path, await page.evaluate(SHEET_BOX)))
            elif "league" in path.parts or path.name == "index.html":
                overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                if overflow > 0:
                    wide.append(f"{path.relative_to(out)}: {overflow}px")

        checked = await browser.new_page(viewport=ViewportSize(width=360, height=740))
        for path in _one_of_each_kind(pages, out):  # apart: axe-core's look at the style sheet is refused from file://
            await checked.goto(path.as_uri())
            faults += await _accessibility_faults(axe, checked, str(path.relative_to(out)))
        if SHOTS:
            await page.goto((out / "ru" / "index.html").as_uri())
            await page.screenshot(path=str(Path(SHOTS) / "league.png"), full_page=True)
            await page.set_viewport_size(ViewportSize(width=800, height=900))
            await page.goto(min((out / "en" / "games").glob("[0-9]*.html")).as_uri())
            height = await page.evaluate("document.documentElement.scrollHeight")
            await page.set_viewport_size(ViewportSize(width=800, height=height))  # a full-page shot leaves
            await page.screenshot(path=str(Path(SHOTS) / "game.png"))  # the sheet's frame below the fold blank
            await page.goto((out / "en" / "players" / f"{PLAYERS[0]}.html").as_uri())
            await page.screenshot(path=str(Path(SHOTS) / "player.png"), clip={"x": 0, "y": 0, "width": 800,
                                                                                "height": 620})
            await page.set_viewport_size(ViewportSize(width=1280, height=720))  # a hall's TV
            await page.goto(min((out / "ru" / "hall" / "tournaments").glob("*.html")).as_uri())
            await page.screenshot(path=str(Path(SHOTS) / "hall.png"))
        await browser.close()
    assert len(pages) > 50
    assert len(sheets) > 3
    for path, (width, height) in sheets:  # the SVG opened: the box has its shape, not an empty object's 300 by 150
        svg = ElementTree.parse(path.parent / re.findall(r'<object data="([^"]+)"', path.read_text("utf-8"))[0])  # noqa: S314
        ratio = float(svg.getroot().attrib["height"]) / float(svg.getroot().attrib["width"])
        assert width > 0
        assert abs(height - width * ratio) < 2, (path, width, height, ratio)
    assert errors == []
    assert wide == []
    assert faults == []


async def test_the_served_league_opens_without_an_error_under_the_servers_policy(tmp_path: Path) -> None:
    """The server's Content-Security-Policy allows the pages' own style sheet and nothing they lack."""
    _need_browser()
    from playwright.async_api import ConsoleMessage, async_playwright

    store = await Store.open(sqlite_url(tmp_path / "mafia.db"))
    errors: list[str] = []
    try:
        await _server(store)
        data = await read_site(store, GUILD, now=NOW)
        assert data is not None
        async with _serving(store, ManualClock(NOW)) as (base, _club, _http), async_playwright() as p:
            browser = await p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
            context = await browser.new_context(locale="ka-GE")
            page = await context.new_page()

            def console(message: ConsoleMessage) -> None:
                if message.type in ("error", "warning"):  # a refused style sheet is reported as an error
                    errors.append(f"{page.url}: {message.text}")

            page.on("console", console)
            page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))
            response = await page.goto(f"{base}/club/{GUILD}/")
            assert response is not None
            assert response.status == 200
            assert page.url == f"{base}/club/{GUILD}/ka/index.html"  # the browser's language
            # The style sheet was let in: the body has its width (60rem), not the browser's own (none).
            assert await page.evaluate("getComputedStyle(document.body).maxWidth") == "960px"
            await page.goto(f"{base}/club/{GUILD}/ka/hall/index.html")  # its reload script is let in too
            loaded = await page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
            assert f"{base}/club/{GUILD}/hall.js" in loaded
            game = min(data.protocols)
            await page.goto(f"{base}/club/{GUILD}/ka/games/{game}.html")  # the sheet is let in, and its typeface
            assert sorted(await page.evaluate(SHEET_FONTS)) == ["SheetSans bold", "SheetSans normal"]
            await browser.close()
    finally:
        await store.close()
    assert errors == []
