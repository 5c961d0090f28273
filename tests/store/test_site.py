"""The club's pages, built from a server with played games and a finished tournament (SQLite and PostgreSQL).

Games are played whole by the engine and stored command by command; the pages are then read back as
files and held against the store's own answers: the league of ``/mafia top``, the standings of
``/mafia tournament standings``, every seat of every game, every relative link.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import sys
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest
from markupsafe import escape

import mafiabot.host.site as site_module
from engine import CLASSIC, FIIM, Game, Ruleset, StartGame
from mafiabot.core.protocol import Protocol
from mafiabot.core.records import GuildSettings, LeagueRow, RoundTable, ScheduledSeat, StoredTournament, since
from mafiabot.core.tournaments import standings_of
from mafiabot.host.i18n import catalog, decimal_text, t
from mafiabot.host.site import PERIODS, Site, build_site, read_site, write_files
from mafiabot.store import SeatInfo, Store
from mafiabot.tools.simulate import play_random_game
from tests.store.conftest import T0, Scripted

GUILD = 987_654_321_098_765_432
OTHER = GUILD + 1
PLAYERS = [700_000_000_000_000_000 + i for i in range(1, 13)]
HOSTILE = '<script>alert("x")</script>&amp;\'"'
NAMES = {u: f"Member {i}" for i, u in enumerate(PLAYERS, start=1)} | {PLAYERS[2]: HOSTILE}
HIDDEN = PLAYERS[5]
ROOT = Path(__file__).resolve().parents[2]
NOW = T0 + timedelta(days=3)


async def _play(store: Store, rules: Ruleset, users: list[int], seed: int, *, at: object = T0,
                finish: bool = True) -> int:
    played = play_random_game(rules, len(users), random.Random(seed))
    game_id = await store.create_game(guild_id=GUILD, channel_id=555, ruleset=rules, judge_id=9, created_at=T0)
    table = Scripted(store, game_id, Game(rules), T0 + timedelta(hours=seed))
    roles = played.state.roles
    await table.run(StartGame(players=len(users), roles=tuple(roles)))
    await store.seat_players(game_id, [SeatInfo(i, u, NAMES[u], r.value)
                                       for i, (u, r) in enumerate(zip(users, roles, strict=True), start=1)])
    if finish:
        await table.run(*played.history[1:])
        await table.finish()
    return game_id


async def _server(store: Store) -> tuple[list[int], int, int]:
    """Three league games, a one-round tournament's game, and a game still being played."""
    await store.save_settings(GuildSettings(GUILD, language="ru", site_pages=True))
    await store.hide_name(GUILD, HIDDEN)
    games = [await _play(store, CLASSIC, PLAYERS[i:i + 10], seed) for i, seed in ((0, 1), (1, 2), (2, 3))]
    tm = await store.create_tournament(guild_id=GUILD, name="Cup <b>", ruleset=FIIM, scoring="fiim-7", rounds=1,
                                       tables=1, seed=5, organiser_id=9, at=T0)
    await store.tournaments.add_players(tm.id, tuple((u, NAMES[u]) for u in PLAYERS[:10]))
    await store.tournaments.save_schedule(tm.id, [ScheduledSeat(1, 1, s, u) for s, u in enumerate(PLAYERS[:10], 1)])
    await store.tournaments.open_round(tm.id, 1, [RoundTable(1, 1, 555, 556)])
    cup = await _play(store, FIIM, PLAYERS[:10], 4)
    await store.tournaments.link_game(tm.id, 1, 1, cup)
    await store.tournaments.close_round(tm.id, 1, last=True)
    running = await _play(store, CLASSIC, PLAYERS[2:12], 5, finish=False)
    return [*games, cup], running, tm.id


class _Page(HTMLParser):
    """The links, the text and the tables' rows of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [v for k, v in attrs if k in ("href", "src", "data") and v]
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


async def test_the_pages_show_what_the_commands_show(store: Store, tmp_path: Path) -> None:
    games, running, tid = await _server(store)
    out = tmp_path / "site"
    written = await build_site(store, GUILD, out, now=NOW)
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert written == len(files)
    assert 'content="0; url=ru/index.html"' in (out / "index.html").read_text(encoding="utf-8")  # the server's own

    broken = []
    for path in files:
        if path.suffix != ".html":
            continue
        for link in _read(path).links:
            assert "://" not in link, (path, link)  # nothing from elsewhere
            assert not link.startswith("/"), (path, link)  # relative
            if not (path.parent / link).resolve().is_file():
                broken.append((path.relative_to(out), link))
    assert broken == []

    for language in ("en", "ru", "ka"):
        here = out / language
        for gid in games:
            page = _read(here / "games" / f"{gid}.html")
            protocol = await store.game_protocol(gid)
            names = [row[1] for row in page.rows[1:len(protocol.seats) + 1]]
            assert names == [t(language, "site.seat", seat=s.seat) if s.user_id == HIDDEN else s.display_name
                             for s in protocol.seats]
            html = (here / "games" / f"{gid}.html").read_text(encoding="utf-8")
            rounds = [vote for day in protocol.days for vote in day.votes]
            assert html.count('<table class="votes">') == len(rounds)
            silent = [vote for vote in rounds if vote.silent]
            assert silent  # the random games leave hands down: where they went is on the page
            assert all(", ".join(f"#{seat}" for seat in vote.silent) in html for vote in silent)
        assert not (here / "games" / f"{running}.html").exists()
        assert f"/{running}.html" not in "".join(_read(here / "games" / "index.html").links)

        rulesets = sorted({(await store.game_protocol(g)).game.ruleset_name for g in games})
        for key, ruleset in [("all", None), *((f"r{i}", name) for i, name in enumerate(rulesets))]:
            for period in PERIODS:
                path = here / ("index.html" if (key, period) == ("all", "all") else f"league/{key}-{period}.html")
                top = await store.league(GUILD, since=since(period, NOW), ruleset=ruleset)
                shown = _read(path).rows[1:]
                assert shown == [[str(r.rank), t(language, "site.hidden") if r.user_id == HIDDEN else r.display_name,
                                  decimal_text(language, r.points, 2), str(r.wins), str(r.games),
                                  decimal_text(language, r.extra_points, 2)] for r in top]

        tm = await store.get_tournament(tid)
        assert tm is not None
        expected = standings_of(tm, {g: await store.get_game(g) for g in games[3:]})
        assert any(s.games for s in expected)
        rows = _read(here / "tournaments" / f"{tid}.html").rows
        registered = {p.user_id: p.name for p in tm.players}
        assert rows[1:len(expected) + 1] == [
            [str(s.place), t(language, "site.hidden") if s.player == HIDDEN else registered[s.player],
             decimal_text(language, s.total, 2), str(s.wins), str(s.games)] for s in expected]

        assert not (here / "players" / f"{HIDDEN}.html").exists()
        stats = await store.player_stats(GUILD, PLAYERS[0])
        first = _read(here / "players" / f"{PLAYERS[0]}.html").rows
        assert (here / "players" / f"{PLAYERS[0]}.html").read_text(encoding="utf-8").count('class="rivals"') == 1
        assert [stats.games, stats.wins] == [int(r[1]) for r in first[:2]]
        rivals = {row[0]: row[1:] for row in first[-11:]}
        assert NAMES[PLAYERS[1]] in rivals
        assert t(language, "site.hidden") not in rivals  # a hidden member's record stays hidden here too
        together, same, opposite, wins, their = map(int, rivals[NAMES[PLAYERS[1]]])
        shared = [s for g in (games[0], games[3]) for s in (await store.game_protocol(g)).seats
                  if s.user_id in PLAYERS[:2]]
        assert together == 2  # the first league game and the cup's
        assert same + opposite == together
        assert (wins, their) == (sum(bool(s.won) for s in shared if s.user_id == PLAYERS[0]),
                                 sum(bool(s.won) for s in shared if s.user_id == PLAYERS[1]))

    assert not [p for p in files if p.suffix != ".ttf" and NAMES[HIDDEN] in p.read_text(encoding="utf-8-sig")]
    everything = "".join(p.read_text(encoding="utf-8") for p in files if p.suffix == ".html")
    assert NAMES[HIDDEN] not in everything  # hidden everywhere, not only where a seat shows
    assert "<script>" not in everything  # the hall screen's script is a file of the site's own, not inline
    assert "<script" not in "".join(p.read_text(encoding="utf-8") for p in files
                                    if p.suffix == ".html" and "hall" not in p.parts)
    assert "<b>" not in everything
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;amp;&#39;&#34;" in everything


async def test_each_game_page_shows_its_sheet_and_links_its_files_and_a_build_draws_only_what_changed(
        store: Store, tmp_path: Path) -> None:
    games, running, _tid = await _server(store)
    out = tmp_path / "site"
    assert await build_site(store, GUILD, out, now=NOW)
    for language in ("en", "ru", "ka"):
        for gid in games:
            page = out / language / "games" / f"{gid}.html"
            html = page.read_text(encoding="utf-8")
            links = [link for link in _read(page).links if f"/{gid}-" in link or link.startswith(f"{gid}-")]
            sheet = [link for link in links if link.endswith(".svg")]
            assert sheet, (language, gid)
            protocol = await store.game_protocol(gid)
            _assert_sheet(page.parent / sheet[0], protocol, language)
            assert f'<object data="{sheet[0]}" type="image/svg+xml"' in html
            assert f'aria-label="{t(language, "sheet.title", id=gid, ruleset="")[:8]}' in html  # the sheet in words
            data = json.loads((page.parent / next(x for x in links if x.endswith(".json"))).read_text("utf-8"))
            assert (data["format"], data["game"]["id"]) == ("mafiabot.game/1", gid)
            assert [s["seat"] for s in data["seats"]] == [s.seat for s in protocol.seats]
            seats = (page.parent / next(x for x in links if x.endswith("-seats.csv"))).read_text("utf-8-sig")
            assert len(seats.splitlines()) == len(protocol.seats) + 1
            log = (page.parent / next(x for x in links if x.endswith("-log.csv"))).read_text("utf-8-sig")
            assert log.startswith("game_id,seq,")
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.suffix in (".json", ".csv"))
    assert str(HIDDEN).encode() not in everything  # neither the id of one who hid their name
    assert NAMES[HIDDEN].encode() not in everything  # nor their name
    assert f'"{NAMES[PLAYERS[0]]}"'.encode() in everything
    assert not list(out.rglob(f"{running}-*"))  # a game still being played has no files

    assert not list(out.rglob("*.png"))  # the pictures are the bot's: a build draws none
    drawn = {p: p.stat().st_mtime_ns for p in out.rglob("games/*.svg")}
    for p in drawn:
        os.utime(p, ns=(1, 1))  # a later build that wrote them again would show it here
    assert await build_site(store, GUILD, out, now=NOW)
    assert {p: p.stat().st_mtime_ns for p in out.rglob("games/*.svg")} == dict.fromkeys(drawn, 1)

    await store.hide_name(GUILD, PLAYERS[0])  # sat in the first league game and the cup's
    assert await build_site(store, GUILD, out, now=NOW)
    again = {p.name for p in out.rglob("games/*.svg")}
    assert len(again) == len(drawn)  # the old files are gone
    changed = {int(name.split("-")[0]) for name in again - {p.name for p in drawn}}
    assert changed == {games[0], games[3]}
    kept = b"".join(p.read_bytes() for p in out.rglob("*") if p.suffix in (".json", ".csv"))
    assert str(PLAYERS[0]).encode() not in kept
    assert f'"{NAMES[PLAYERS[0]]}"'.encode() not in kept  # as JSON quotes a name ("Member 1" is in "Member 10")


def _assert_sheet(path: Path, protocol: Protocol, language: str) -> None:
    """The sheet is an SVG document whose typeface is the site's own and every seat's name is text, escaped."""
    text = path.read_text(encoding="utf-8")
    root = ElementTree.fromstring(text.encode("utf-8"))  # noqa: S314 - the build's own file: well-formed, whatever the names hold
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert '<?xml-stylesheet type="text/css" href="../../fonts/sheet.css"?>' in text
    assert (path.parent / "../../fonts/sheet.css").is_file()
    texts = [element.text for element in root.iter("{http://www.w3.org/2000/svg}text")]
    for seat in protocol.seats:
        hidden = seat.user_id == HIDDEN or seat.user_id is None
        name = t(language, "site.seat", seat=seat.seat) if hidden else NAMES[seat.user_id or 0]
        assert name in texts, (language, seat.seat)  # a name is one text, as the PNG draws it
    assert "<script" not in text  # the hostile name is text: ``texts`` holds it whole


async def test_a_players_page_charts_their_rating_after_each_game_as_the_store_replays_it(
        store: Store, tmp_path: Path) -> None:
    await _server(store)
    out = tmp_path / "site"
    assert await build_site(store, GUILD, out, now=NOW)
    for user_id in PLAYERS[:3]:
        history = await store.rating_history(GUILD, user_id)
        rulesets = sorted({point.ruleset_name for point in history})
        html = (out / "en" / "players" / f"{user_id}.html").read_text(encoding="utf-8")
        charts = re.findall(r'<svg viewBox="0 0 (\d+) (\d+)" role="img".*?<polyline points="([^"]+)"', html, re.S)
        assert len(charts) == len(rulesets)
        for ruleset, (_width, _height, points) in zip(rulesets, charts, strict=True):
            curve = [point.rating for point in history if point.ruleset_name == ruleset]
            ys = [float(pair.split(",")[1]) for pair in points.split()][1:]  # after where every rating starts
            assert len(ys) == len(curve)
            # the highest rating is drawn highest, the lowest lowest, each game in its order
            assert [ys.index(min(ys)), ys.index(max(ys))] == [curve.index(max(curve)), curve.index(min(curve))]
            assert decimal_text("en", curve[-1], 0) in html
        assert "<script" not in html  # drawn as the server's policy lets a page draw
        assert "style=" not in html


async def test_a_hall_screen_shows_the_standings_in_large_type_and_reads_them_again_by_itself(
        store: Store, tmp_path: Path) -> None:
    games, _running, tid = await _server(store)
    out = tmp_path / "site"
    assert await build_site(store, GUILD, out, now=NOW)
    tm = await store.get_tournament(tid)
    assert tm is not None
    expected = standings_of(tm, {g: await store.get_game(g) for g in games[3:]})
    top = await store.league(GUILD, since=None, ruleset=None)
    for language in ("en", "ru", "ka"):
        for path, rows in ((f"hall/tournaments/{tid}.html", [(s.place, s.player, s.total) for s in expected]),
                           ("hall/index.html", [(r.rank, r.user_id, r.points) for r in top])):
            page = out / language / path
            html = page.read_text(encoding="utf-8")
            assert f'<script src="{"../" * path.count("/")}../hall.js" defer></script>' in html  # the site's own
            assert '<body class="hall" data-refresh="30">' in html
            shown = _read(page).rows[1:]
            assert [(row[0], row[2]) for row in shown] == [(str(place), decimal_text(language, points, 2))
                                                          for place, _user, points in rows]
            assert [row[1] == t(language, "site.hidden") for row in shown] == [u == HIDDEN for _p, u, _t in rows]
        league = (out / language / "index.html").read_text(encoding="utf-8")
        assert 'href="../en/hall/index.html"'.replace("en", language) in league
        assert f'href="../../{language}/hall/tournaments/{tid}.html"' in (
            out / language / "tournaments" / f"{tid}.html").read_text(encoding="utf-8")


async def held_final(store: Store) -> tuple[StoredTournament, list[int]]:
    """A two-round tournament whose final has ended but is held off the pages (``site-hide rounds:1``)."""
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    tm = await store.create_tournament(guild_id=GUILD, name="Final", ruleset=FIIM, scoring="fiim-7", rounds=2,
                                       tables=1, seed=5, organiser_id=9, at=T0)
    await store.tournaments.add_players(tm.id, tuple((u, NAMES[u]) for u in PLAYERS[:10]))
    await store.tournaments.save_schedule(tm.id, [ScheduledSeat(r, 1, s, u) for r in (1, 2)
                                                  for s, u in enumerate(PLAYERS[:10], 1)])
    played = []
    for number, seed in ((1, 4), (2, 7)):
        await store.tournaments.open_round(tm.id, number, [RoundTable(number, 1, 555, 556)])
        played.append(await _play(store, FIIM, PLAYERS[:10], seed))
        await store.tournaments.link_game(tm.id, number, 1, played[-1])
        if number == 1:
            await store.tournaments.close_round(tm.id, 1, last=False)
    await store.tournaments.set_site_hidden_rounds(tm.id, 1)
    stored = await store.get_tournament(tm.id)
    assert stored is not None
    assert stored.status == "playing"
    return stored, played


async def test_the_last_rounds_stay_off_the_pages_until_the_tournament_ends(store: Store, tmp_path: Path) -> None:
    tm, played = await held_final(store)

    async def shown(label: str) -> tuple[Path, list[list[str]]]:
        out = tmp_path / label
        assert await build_site(store, GUILD, out, now=NOW)
        return out, _read(out / "en" / "tournaments" / f"{tm.id}.html").rows

    out, rows = await shown("playing")
    first = standings_of(tm, {played[0]: await store.get_game(played[0])})
    both = standings_of(tm, {g: await store.get_game(g) for g in played})
    assert first != both
    assert rows[1:11] == [[str(s.place), NAMES[s.player],
                           decimal_text("en", s.total, 2), str(s.wins), str(s.games)] for s in first]
    page = (out / "en" / "tournaments" / f"{tm.id}.html").read_text(encoding="utf-8")
    held = str(escape(t("en", "site.rounds_hidden", count=1)))
    assert held in page
    assert held in (out / "en" / "hall" / "tournaments" / f"{tm.id}.html").read_text(encoding="utf-8")
    assert f"games/{played[0]}.html" in page
    assert f"games/{played[1]}.html" not in page
    assert not list(out.rglob(f"{played[1]}*"))  # no page, sheet or file of the final anywhere
    assert f"/{played[1]}.html" not in (out / "en" / "games" / "index.html").read_text(encoding="utf-8")
    top = await store.league(GUILD, leave_out={played[1]})  # the league and the players' totals leave it out too
    assert top != await store.league(GUILD)
    assert league_rows(out / "en" / "index.html") == top_rows(top)
    assert [row[:5] for row in top_rows(top)] == _read(out / "en" / "hall" / "index.html").rows[1:]
    note = held_note()
    for page in ("index.html", "hall/index.html", f"players/{PLAYERS[0]}.html"):
        assert note in (out / "en" / page).read_text(encoding="utf-8")
    for user in PLAYERS[:10]:
        record = _read(out / "en" / "players" / f"{user}.html").rows
        by_role = record[record.index([t("en", "site.role"), t("en", "site.wins"), t("en", "site.games_count")]) + 1:
                         record.index(["#", t("en", "site.wins"), t("en", "site.games_count")])]
        assert (record[0][1], sum(int(row[2]) for row in by_role)) == ("1", 1)
        seats = record.index(["#", t("en", "site.wins"), t("en", "site.games_count")])
        last = next(i for i, row in enumerate(record) if row[:2] == ["#", t("en", "site.date")])
        rivals = next(i for i, row in enumerate(record) if row[0] == t("en", "site.rival"))
        assert sum(int(row[2]) for row in record[seats + 1:last]) == 1  # by seat
        assert [row[0] for row in record[last + 1:rivals]] == [str(played[0])]  # the last games
        assert {row[1] for row in record[rivals + 1:]} == {"1"}  # head-to-head: one game together
    assert not [p for p in out.rglob("*.html") if f"games/{played[1]}.html" in p.read_text(encoding="utf-8")]

    await store.tournaments.close_round(tm.id, 2, last=True)
    stored = await store.get_tournament(tm.id)
    assert stored is not None
    out, rows = await shown("finished")
    assert [row[0:3] for row in rows[1:11]] == [
        [str(s.place), NAMES[s.player], decimal_text("en", s.total, 2)] for s in both]
    assert (out / "en" / "games" / f"{played[1]}.html").is_file()
    assert league_rows(out / "en" / "index.html") == top_rows(await store.league(GUILD))
    assert held_note() not in (out / "en" / "index.html").read_text(encoding="utf-8")


def held_note() -> str:
    """What the league and a player's page say while a tournament's rounds are held: that Discord counts them."""
    return str(escape(t("en", "site.held_games", top="/mafia top", stats="/mafia stats")))


def league_rows(path: Path) -> list[list[str]]:
    return _read(path).rows[1:]


def top_rows(top: list[LeagueRow]) -> list[list[str]]:
    """``/mafia top``'s rows as the English league page writes them (no name hidden)."""
    return [[str(r.rank), NAMES[r.user_id], decimal_text("en", r.points, 2), str(r.wins), str(r.games),
             decimal_text("en", r.extra_points, 2)] for r in top]


async def test_nothing_is_built_until_the_staff_turn_the_pages_on(store: Store, tmp_path: Path) -> None:
    await _server(store)
    await store.save_settings(GuildSettings(GUILD))
    assert await build_site(store, GUILD, tmp_path / "off", now=NOW) is None
    assert not (tmp_path / "off").exists()
    assert await build_site(store, OTHER, tmp_path / "other", now=NOW) is None  # a server that never said
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    await store.hide_name(GUILD, HIDDEN, hidden=False)
    assert await build_site(store, GUILD, tmp_path / "on", now=NOW)
    assert (tmp_path / "on" / "en" / "players" / f"{HIDDEN}.html").is_file()


async def _site_cli(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "mafiabot", "site", "build", *args], capture_output=True, text=True,
        check=False, timeout=120, env=environment)


async def test_mafiabot_site_build_writes_the_pages_only_once_they_are_on(
        store: Store, store_url: str, tmp_path: Path) -> None:
    await _server(store)
    await store.save_settings(GuildSettings(GUILD))
    off = await _site_cli(str(tmp_path / "off"), "--guild", str(GUILD), "--database", store_url)
    assert off.returncode == 1
    assert "pages are off" in off.stderr
    assert not (tmp_path / "off").exists()  # not even the folder
    await store.save_settings(GuildSettings(GUILD, site_pages=True))
    on = await _site_cli(str(tmp_path / "on"), "--guild", str(GUILD), "--database", store_url)
    assert on.returncode == 0, on.stderr
    files = [p for p in (tmp_path / "on").rglob("*") if p.is_file()]
    assert on.stdout.strip() == f"{len(files)} files in {tmp_path / 'on'}"
    assert (tmp_path / "on" / "ka" / "tournaments" / "index.html").is_file()
    (tmp_path / "file").write_text("", encoding="utf-8")
    blocked = await _site_cli(str(tmp_path / "file" / "site"), "--guild", str(GUILD), "--database", store_url)
    assert blocked.returncode == 4  # cannot write: one line, no crash log
    assert blocked.stderr.count("\n") == 1
    assert "cannot write the pages" in blocked.stderr


def test_every_word_the_templates_ask_for_is_in_every_catalog() -> None:
    templates = ROOT / "mafiabot" / "host" / "site" / "templates"
    asked = {key for path in templates.glob("*.html")
             for key in re.findall(r"_\('([a-z_.]+)'", path.read_text(encoding="utf-8"))}
    assert "site.league" in asked
    ends = {"cmd.top.period.": PERIODS, "protocol.moment.": ("day", "night"),
            "site.tournament_status.": ("registration", "seated", "playing", "finished")}
    assert {key for key in asked if key.endswith(".")} == set(ends)  # a prefix joined to a value in the template
    asked = {key for key in asked if not key.endswith(".")} | {f"{key}{end}" for key in ends for end in ends[key]}
    missing = sorted(f"{language}: {key}" for language in ("en", "ru", "ka") for key in asked
                     if key not in catalog(language))
    assert missing == []


async def test_the_games_files_are_the_same_made_in_one_process_or_in_forked_ones_reading_the_store(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked processes read the games' logs through connections of their own, a chunk of games at a time."""
    await _server(store)
    data = await read_site(store, GUILD, now=NOW)
    assert data is not None
    made = {}
    monkeypatch.setattr(site_module, "FILE_CHUNK", 1)  # a chunk per game: both processes get some
    for workers in (1, 2):
        out = tmp_path / str(workers)
        assert await write_files(store, Site(data), out, workers=workers) > 0
        made[workers] = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert made[1] == made[2]
    assert len([name for name in made[2] if name.endswith(".json")]) == len(data.protocols)
