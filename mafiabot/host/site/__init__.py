"""The club's pages: the league, players, games and tournaments of one server, as HTML.

Discord-free: it reads the store and the catalogs only, so the static build (``mafiabot site build``)
and a web server can both use it. The numbers are the store's own (``league``, ``player_stats``,
``game_protocol``) and the tournament core's (``standings_of``), never counted again here.

Privacy is decided here, once for every way of publishing: nothing is built for a server whose staff
have not turned the pages on, only ended games are read, and a member who hid their name shows as
their seat in each game and as a hidden player elsewhere, with no page of their own.

Jinja2 renders the templates with autoescaping on: every name comes from Discord members, so
escaping by default leaves no page one forgotten ``html.escape`` away from running a stranger's script.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cache, lru_cache, partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from engine import Result, Role, silent_vote_target, winning_team
from engine.ruleset import CLASSIC, Ruleset
from engine.scoring import Standing
from mafiabot.core import ratings
from mafiabot.core.protocol import Check, Day, Night, Protocol, ProtocolSeat, VoteRound
from mafiabot.core.records import PERIOD_DAYS, LeagueRow, PlayerStats, StoredGame, StoredTournament, since
from mafiabot.core.tournaments import standings_of
from mafiabot.host.i18n import LANGUAGES, decimal_text, has_key, protocol_cause, ruleset_name, t
from mafiabot.host.pictures.fonts import font_file
from mafiabot.host.site import files
from mafiabot.store import Store, make_engine, read_games
from mafiabot.store.projection import Ended

if TYPE_CHECKING:
    from sqlalchemy import Engine

PERIODS = ("all", *PERIOD_DAYS)
"""The league's periods, as ``/mafia top`` offers them."""
RESULTS = ("red", "black", "maniac", "draw", "abandoned")
POINT_PLACES = 2
LAST_GAMES = 20
STYLE = "style.css"
HALL_SCRIPT = "hall.js"
"""The hall screen's reload: a file of the site's own, as the server's policy allows, where a meta refresh
would fail the pages' accessibility check (a page that changes under its reader with no way to stop it)."""
ICON = "icon.svg"
"""The pages' own icon: without one a browser asks the server's root for ``/favicon.ico``, outside the site."""
ASSETS = {STYLE: "text/css", ICON: "image/svg+xml", HALL_SCRIPT: "text/javascript"}
"""The files at the site's root next to the pages, with their types."""
FONTS = {files.FONT_STYLE: "text/css", "fonts/DejaVuSans.ttf": "font/ttf", "fonts/DejaVuSans-Bold.ttf": "font/ttf",
         "fonts/LICENSE-DejaVu.txt": "text/plain"}
"""The protocol sheets' typeface (the pictures' own DejaVu Sans) and its licence, in the site's ``fonts/`` folder."""
HALL_REFRESH = 30
"""Seconds between two reads of a hall screen: a table's result shows within a minute with the served pages' own."""
HALL_PLACES = 20
"""The league's places a hall screen shows: what a TV across a room can still be read at."""
WHOLE_KEPT = 16
"""Whole protocols a site keeps made (each is some 150 objects; the league keeps outlines)."""
LISTS = {"games/index.html": "games.html", "tournaments/index.html": "tournaments.html"}
"""The list pages, by path, and their templates."""


@dataclass
class SiteData:
    """Everything the pages show, read once from the store; the same for every language."""

    guild_id: int
    language: str
    hidden: frozenset[int]
    protocols: dict[int, Protocol]
    """Ended games only, newest first, as outlines: without their nights and days (``games`` has the rest)."""
    rulesets: list[str]
    leagues: dict[tuple[str, str], list[LeagueRow]]
    """By (ruleset key, period): ``all`` or ``r<n>``, the n-th of ``rulesets`` (a club's own name is no file name)."""
    players: dict[int, tuple[str, PlayerStats]]
    tournaments: list[tuple[StoredTournament, list[Standing]]] = field(default_factory=list)
    held: frozenset[int] = frozenset()
    """Ended games of the rounds organisers keep off the pages: counted nowhere here, as if not yet played."""
    games: dict[int, Ended] = field(default_factory=dict)
    """The same games whole, their nights and days kept as the stored text until a page or file asks."""

    def protocol(self, game_id: int) -> Protocol:
        """A game's whole protocol (made from its stored text), or its outline where none is kept."""
        ended = self.games.get(game_id)
        return ended.protocol() if ended is not None else self.protocols[game_id]


async def read_site(store: Store, guild_id: int, *, now: datetime) -> SiteData | None:
    """What the server's pages show, or None while its staff have not turned the pages on."""
    settings = await store.get_settings(guild_id)
    if not settings.site_pages:
        return None
    hidden = await store.hidden_names(guild_id)
    stored = await store.guild_tournaments(guild_id)
    all_ended = await store.ended_games(guild_id)
    held = frozenset(gid for gid in _held(stored) if gid in all_ended)
    ended = {gid: e for gid, e in all_ended.items() if gid not in held}
    protocols = {gid: e.outline for gid, e in ended.items()}
    rulesets = sorted({p.game.ruleset_name for p in protocols.values()})
    keys = {"all": None, **{f"r{i}": name for i, name in enumerate(rulesets)}}
    leagues = {(key, period): await store.league(guild_id, since=since(period, now), ruleset=name, leave_out=held)
               for key, name in keys.items() for period in PERIODS}
    players = {row.user_id: (row.display_name, await store.player_stats(guild_id, row.user_id, leave_out=held))
               for row in leagues["all", "all"] if row.user_id not in hidden}
    tournaments = await _tournaments(store, stored, protocols)
    return SiteData(guild_id, settings.language, hidden, protocols, rulesets, leagues, players, tournaments, held,
                    games=ended)


FULL_PASSES_OFF = 1 << 30
"""The collector's oldest-generation threshold while a league is read: no full pass in the meantime."""
_holding = 0
_threshold = gc.get_threshold()


@contextmanager
def holding_league() -> Iterator[None]:
    """Read (and count) a league in here: the collector makes no full pass meanwhile.

    A full pass of the collector walks every live object, holding the interpreter meanwhile. While a
    league was being read, its growing heap made one pass after another, each up to half a second
    at 1000 games (the tables' event loop waited through them) and more at 10,000. The young
    generations are still collected as ever; the full passes wait until the read is over. (What a
    league then keeps is small for the collector: each game's outline, the rest as one string.)
    """
    global _holding, _threshold
    if _holding == 0:
        _threshold = gc.get_threshold()
        gc.set_threshold(_threshold[0], _threshold[1], FULL_PASSES_OFF)
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if _holding == 0:
            gc.set_threshold(*_threshold)


def _held(tournaments: Sequence[StoredTournament]) -> set[int]:
    """The games of the rounds organisers keep off the pages until their tournament ends (finals told live)."""
    return {rt.game_id for tm in tournaments for rt in tm.round_tables
            if rt.game_id is not None and rt.round > tm.site_rounds()}


async def _tournaments(store: Store, stored: Sequence[StoredTournament],
                       protocols: Mapping[int, Protocol]) -> list[tuple[StoredTournament, list[Standing]]]:
    """Each tournament with the standings ``/mafia tournament standings`` shows, over its ended games.

    The rounds the organiser keeps hidden until the end have no game in ``protocols``, so the
    standings stop at the rounds before them.
    """
    tournaments = []
    for tm in stored:
        ids = sorted({rt.game_id for rt in tm.round_tables if rt.game_id is not None and rt.game_id in protocols})
        games: dict[int, StoredGame] = {gid: await store.get_game(gid) for gid in ids}
        tournaments.append((tm, standings_of(tm, games)))
    return tournaments


@cache
def _font_file(path: str) -> bytes:
    name = path.removeprefix("fonts/")
    if path == files.FONT_STYLE:
        return (resources.files("mafiabot.host.site") / name).read_bytes()
    return font_file(name)


@cache
def _environment() -> Environment:
    """One per process: its templates are compiled once, not again with each read of a league."""
    return Environment(loader=PackageLoader("mafiabot.host.site", "templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       auto_reload=False)  # the package's templates do not change under a running process


ROLES = frozenset(Role)


@lru_cache(maxsize=1 << 16)
def _figure(language: str, value: Decimal | float, places: int) -> str:
    """``decimal_text``, kept: a league writes the same few point values tens of thousands of times."""
    return decimal_text(language, value, places)


@lru_cache(maxsize=1024)
def _card(language: str, card: str, role: str) -> str:
    return t(language, f"role.{card}") if has_key(f"role.{card}") else role


class _Words:
    """The templates' view of one language: catalog lookups and the club's ways of writing figures."""

    def __init__(self, language: str, data: SiteData) -> None:
        self.language = language
        self._data = data

    def points(self, value: Decimal) -> str:
        return _figure(self.language, value, POINT_PLACES)

    def rate(self, value: float) -> str:
        return _figure(self.language, value * 100, 1)

    def rating(self, value: float) -> str:
        return decimal_text(self.language, value, 0)

    def ruleset(self, name: str) -> str:
        return ruleset_name(self.language, name)

    def role(self, role: str | None, rules: Ruleset | None = None) -> str:
        if role is None:
            return "—"
        card = (rules or CLASSIC).card_name(Role(role)) if role in ROLES else role
        return _card(self.language, card, role)

    def result(self, result: str | None) -> str:
        if result not in RESULTS:
            return result or "—"
        return t(self.language, {"red": "history.result.red", "black": "history.result.black",
                                 "maniac": "history.result.maniac", "draw": "history.result.draw",
                                 "abandoned": "history.result.abandoned"}[result])

    def date(self, when: datetime | None) -> str:
        return when.strftime("%Y-%m-%d") if when is not None else "—"

    def cause(self, cause: str) -> str:
        return protocol_cause(self.language, cause)

    def check(self, check: Check, rules: Ruleset) -> str:
        """A night's check as the judge's sheet words it, in the ruleset's terms (its Sheriff may be the Detective)."""
        seat, target = check.seat, check.target
        if check.by == "don":
            key = f"end.check.don_yes.{rules.checker}" if check.found else f"end.check.don_no.{rules.checker}"
            return t(self.language, key, seat=seat, target=target)
        result = t(self.language, f"check.result.{rules.check_result(black=check.found)}")
        return t(self.language, f"end.check.{rules.checker}", seat=seat, target=target, result=result)

    def player(self, user_id: int | None, name: str) -> str:
        """A member's name, or the words for a hidden one."""
        if user_id is not None and user_id in self._data.hidden:
            return t(self.language, "site.hidden")
        return name

    def seat_name(self, protocol: Protocol, seat: int) -> str:
        """The name at a seat of a game: a hidden member is the seat alone."""
        for s in protocol.seats:
            if s.seat == seat:
                if s.user_id is not None and s.user_id in self._data.hidden:
                    return t(self.language, "site.seat", seat=seat)
                return f"{seat} · {s.display_name}"
        return str(seat)

    @staticmethod
    def timeline(protocol: Protocol) -> list[tuple[str, Night | Day]]:
        """Nights and days in the order they were played: night 0, day 1, night 1, day 2 and so on."""
        parts: list[tuple[int, str, Night | Day]] = [(2 * n.number, "night", n) for n in protocol.nights]
        parts += [(2 * d.number - 1, "day", d) for d in protocol.days]
        return [(kind, part) for _order, kind, part in sorted(parts, key=lambda x: x[0])]

    def silent(self, vote: VoteRound) -> str:
        """Where a round's silent hands went (the engine's rule: to the last nominee), or nothing."""
        if not vote.silent or not vote.tally:
            return ""
        last = silent_vote_target([row.candidate for row in vote.tally])
        return t(self.language, "vote.silent", target=f"#{last}", seats=", ".join(f"#{s}" for s in vote.silent))

    def has_page(self, user_id: int | None) -> bool:
        return user_id is not None and user_id in self._data.players


class Site:
    """One server's pages, each rendered when asked for: the static build asks for all, a web server for one.

    Pages are known by their path under a language (``index.html``, ``games/12.html``); what each
    path shows is decided here once, so the built files and the served pages cannot differ.
    """

    def __init__(self, data: SiteData, languages: Sequence[str] = LANGUAGES) -> None:
        self.data = data
        self.languages = tuple(languages)
        self.first = data.language if data.language in languages else languages[0]
        """The server's language where it is one of the pages', else the first of them."""
        self._env = _environment()
        self._views: dict[int, dict[str, Any]] | None = None
        self._shared: dict[tuple[str, str], str] = {}
        self._whole: dict[int, Protocol] = {}
        self._keys = ["all", *(f"r{i}" for i in range(len(data.rulesets)))]
        self._games = {f"games/{gid}.html": gid for gid in data.protocols}
        self._players = {f"players/{uid}.html": uid for uid in data.players}
        self._tournaments = {f"tournaments/{tm.id}.html": (tm, standing) for tm, standing in data.tournaments}
        self._halls = {"hall/index.html": None, **{f"hall/{path}": made for path, made in self._tournaments.items()}}
        self._digests: dict[int, str] = {}
        """Each game's files' digest, made when first asked for: a league's take seconds, a page needs one."""
        self._files: dict[str, tuple[int, files.Kind, str]] | None = None
        self._leagues = {("index.html" if (key, period) == ("all", "all") else f"league/{key}-{period}.html"):
                         (key, period) for key in self._keys for period in PERIODS}

    def prepare(self) -> None:
        """Count every player's games, seats and head-to-head, compile the templates and render the shared pages.

        The league tables and the lists are the pages every reader opens and the slowest to render
        (the games list names every game): they are rendered here once per language, before any
        reader asks, and kept with the rest of what was read.
        """
        self._count()
        for template in ("league.html", "game.html", "player.html", "tournament.html", "hall.html",
                         *LISTS.values()):
            self._env.get_template(template)  # compiled now, once per process
        for language in self.languages:
            for path in (*self._leagues, *LISTS):
                page = self._shared.get((language, path)) or self._render(language, path)
                assert page is not None  # noqa: S101 - every listed path has a page
                self._shared[language, path] = page

    def _count(self) -> dict[int, dict[str, Any]]:
        if self._views is None:
            self._views = _player_views(self.data)
        return self._views

    def paths(self) -> list[str]:
        """Every page's path under a language, leagues first."""
        return [*self._leagues, *self._games, *self._players, *self._tournaments,
                *LISTS, *self._halls]

    def game_files(self) -> dict[str, tuple[int, files.Kind, str]]:
        """Every game's files beside the pages (sheet, JSON, CSV), by path from the site's root."""
        if self._files is None:
            self._files = {path: made for gid in self.data.protocols
                           for path, made in files.paths(gid, self._digest(gid), self.languages).items()}
        return self._files

    def game_file(self, path: str) -> tuple[int, files.Kind, str] | None:
        """The game file at ``path`` from the site's root (game, kind, language), or None; one game's digest only."""
        game = path.rsplit("/", 1)[-1].split("-", 1)[0]
        if not (game.isascii() and game.isdigit()) or int(game) not in self.data.protocols:
            return None
        return files.paths(int(game), self._digest(int(game)), self.languages).get(path)

    def _digest(self, game_id: int) -> str:
        digest = self._digests.get(game_id)
        if digest is None:
            digest = self._digests[game_id] = files.digest(self.protocol(game_id), self.data.hidden)
        return digest

    def protocol(self, game_id: int) -> Protocol:
        """A game's whole protocol; the last few made are kept (a game's page is asked for in each language)."""
        made = self._whole.get(game_id)
        if made is None:
            made = self.data.protocol(game_id)
            while len(self._whole) >= WHOLE_KEPT:
                self._whole.pop(next(iter(self._whole)))
            self._whole[game_id] = made
        return made

    def file_name(self, game_id: int, kind: files.Kind, language: str) -> str:
        """A game file's name in its folder, as the game's page links to it."""
        return files.name(game_id, self._digest(game_id), kind, language)

    async def file(self, store: Store, path: str) -> bytes | None:
        """The file at ``path`` from the site's root, made now (a sheet is drawn off the loop), or None."""
        made = self.game_file(path)
        if made is None:
            return None
        game_id, kind, language = made
        protocol = self.protocol(game_id)
        if kind == "sheet":
            return files.sheet(protocol, self.data.hidden, language)  # a millisecond or two
        game = await store.get_game(game_id)
        return files.exports(game, protocol, self.data.hidden)[kind]

    @staticmethod
    def asset(name: str) -> str:
        """The style sheet or the icon every page links to at the site's root (one of ``ASSETS``)."""
        return (resources.files("mafiabot.host.site") / name).read_text(encoding="utf-8")

    @staticmethod
    def font_file(path: str) -> bytes:
        """A file of the sheets' typeface, by its path from the site's root (one of ``FONTS``)."""
        return _font_file(path)

    def redirect(self) -> str:
        """The root page: sends the reader on to the server's language (a static site has no headers to read)."""
        return self._env.get_template("redirect.html").render(first=self.first, languages=self.languages,
                                                              title=t(self.first, "site.nav"))

    def render(self, language: str, path: str) -> str | None:
        """The page at ``path`` in ``language``, or None where there is no such page."""
        if language not in self.languages:
            return None
        kept = self._shared.get((language, path))
        return kept if kept is not None else self._render(language, path)

    def _render(self, language: str, path: str) -> str | None:
        data = self.data
        if path in self._leagues:
            key, period = self._leagues[path]
            name = None if key == "all" else data.rulesets[int(key[1:])]
            return self._page(language, path, "league.html", rows=data.leagues[key, period], key=key, period=period,
                              ruleset=name, keys=self._keys)
        if path in self._games:
            protocol = self.protocol(self._games[path])
            gid = self._games[path]
            return self._page(language, path, "game.html", p=protocol, rules=protocol.rules(),
                              sheet=self.file_name(gid, "sheet", language),
                              alt=files.sheet_alt(files.sheet_protocol(protocol, data.hidden, language), language),
                              exports={kind: self.file_name(gid, kind, "") for kind in files.EXPORTS})
        if path in self._players:
            user_id = self._players[path]
            name, stats = data.players[user_id]
            return self._page(language, path, "player.html", user_id=user_id, name=name, stats=stats,
                              **self._count()[user_id])
        if path in self._tournaments:
            tm, standing = self._tournaments[path]
            return self._page(language, path, "tournament.html", tm=tm, standings=standing,
                              names={p.user_id: p.name for p in tm.players})
        if path in LISTS:
            return self._page(language, path, LISTS[path])
        if path in self._halls:
            return self._hall(language, path)
        return None

    def _hall(self, language: str, path: str) -> str:
        """A tournament's standings, or the league's first places, in large type for a hall's screen."""
        shown = self._halls[path]
        if shown is None:
            rows = [(r.rank, r.user_id, r.display_name, r.points, r.wins, r.games)
                    for r in self.data.leagues["all", "all"][:HALL_PLACES]]
            title, tm = t(language, "site.league"), None
        else:
            tm, standing = shown
            names = {p.user_id: p.name for p in tm.players}
            rows = [(s.place, s.player, names.get(s.player, ""), s.total, s.wins, s.games) for s in standing]
            title = tm.name
        return self._page(language, path, "hall.html", rows=rows, title=title, refresh=HALL_REFRESH, tm=tm)

    def _page(self, language: str, path: str, template: str, **values: Any) -> str:
        depth = path.count("/") + 1
        return self._env.get_template(template).render(
            _=partial(t, language), w=_Words(language, self.data), languages=self.languages, here=language,
            data=self.data, periods=PERIODS, root="../" * depth, path=path, **values)


def build_pages(data: SiteData, languages: Sequence[str] = LANGUAGES) -> dict[str, str]:
    """Every page, by its path relative to the site's root; links between them are relative too."""
    site = Site(data, languages)
    pages = {**{name: site.asset(name) for name in ASSETS}, "index.html": site.redirect()}
    for language in site.languages:
        for path in site.paths():
            page = site.render(language, path)
            assert page is not None  # noqa: S101 - every listed path has a page
            pages[f"{language}/{path}"] = page
    return pages


def _player_views(data: SiteData) -> dict[int, dict[str, Any]]:
    """Each member's games, wins by seat, head-to-head and rating charts, once for every language."""
    seated: dict[int, list[tuple[Protocol, ProtocolSeat]]] = {}
    for protocol in data.protocols.values():  # newest first, so each member's list is too
        for seat in protocol.seats:
            if seat.user_id is not None:
                seated.setdefault(seat.user_id, []).append((protocol, seat))
    curves = _rating_curves(data.protocols.values())
    return {user_id: {**_player_games(data, user_id, seated.get(user_id, [])),
                      "charts": [RatingChart.of(name, curve)
                                 for name, curve in sorted(curves.get(user_id, {}).items())]}
            for user_id in data.players}


def _rating_curves(protocols: Iterable[Protocol]) -> dict[int, dict[str, list[float]]]:
    """Every member's rating after each of their games, per ruleset: ``Store.rating_history`` for all at once.

    Only the current rating is stored, so the curves are replayed as the store replays one member's
    (every finished game in the order it finished, through ``ratings.updated``), here once for the whole league.
    """
    current: dict[str, dict[int, float]] = {}
    curves: dict[int, dict[str, list[float]]] = {}
    ordered = sorted(protocols, key=lambda p: (p.game.finished_at is None, p.game.finished_at or 0, p.game.id or 0))
    for protocol in ordered:
        ruleset = protocol.game.ruleset_name
        teams = {s.user_id: s.team or "" for s in protocol.seats if s.user_id is not None}
        winner = winning_team(Result(protocol.result)) if protocol.result is not None else None
        after = ratings.updated(current.setdefault(ruleset, {}), teams, winner.value if winner else None)
        current[ruleset].update(after)
        for user_id, rating in after.items():
            curves.setdefault(user_id, {}).setdefault(ruleset, []).append(rating)
    return curves


@dataclass(frozen=True)
class RatingChart:
    """One ruleset's rating curve as an SVG polyline: numbers only, so the page draws it with no script."""

    ruleset: str
    points: str
    """``x,y`` pairs in the chart's box (``WIDTH`` by ``HEIGHT``): the starting rating, then each game's."""
    first: float
    last: float
    low: float
    high: float
    games: int
    start_y: float
    """Where the starting rating runs across."""

    WIDTH = 600
    HEIGHT = 160
    PAD = 8

    @classmethod
    def of(cls, ruleset: str, curve: Sequence[float]) -> RatingChart:
        """The chart of ``curve``: ratings after each game, oldest first, drawn from where every rating starts."""
        start = ratings.DEFAULT_RATING
        curve = [start, *curve]  # one game is a line too
        low, high = min(curve), max(curve)
        span = high - low or 1.0
        room_x, room_y = cls.WIDTH - 2 * cls.PAD, cls.HEIGHT - 2 * cls.PAD
        step = room_x / max(len(curve) - 1, 1)

        def y(value: float) -> float:
            return round(cls.PAD + room_y * (high - value) / span, 1)

        points = " ".join(f"{round(cls.PAD + i * step, 1)},{y(v)}" for i, v in enumerate(curve))
        return cls(ruleset, points, start, curve[-1], low, high, len(curve) - 1, y(start))


def _player_games(data: SiteData, user_id: int, played: list[tuple[Protocol, ProtocolSeat]]) -> dict[str, Any]:
    """A member's last games, wins by seat and head-to-head, from the protocols of the games they sat in.

    Head-to-head leaves out members who hid their name: a row of theirs would still be their record.
    """
    by_seat: dict[int, list[int]] = {}
    rivals: dict[int, Rival] = {}
    for protocol, me in played:
        games_wins = by_seat.setdefault(me.seat, [0, 0])
        games_wins[0] += 1
        games_wins[1] += int(bool(me.won))
        for other in protocol.seats:
            if other.user_id is None or other.user_id == user_id or other.user_id in data.hidden:
                continue
            rival = rivals.setdefault(other.user_id, Rival(other.user_id, other.display_name))
            rival.count(same_team=me.team == other.team, won=bool(me.won), they_won=bool(other.won))
    ordered = sorted(rivals.values(), key=lambda r: (-r.together, r.name, r.user_id))
    return {"last": played[:LAST_GAMES], "by_seat": sorted(by_seat.items()), "rival_rows": _rival_rows(ordered, data)}


def _rival_rows(rivals: Iterable[Rival], data: SiteData) -> Markup:
    """The head-to-head table's rows, made once for every language: only numbers, names and links.

    A member of a 10,000-game league met most of the 500 others, so this table is most of their
    page; its links are relative to the players' folder, so the same rows serve each language, and
    the league keeps one string per member instead of a few hundred rivals each.
    """
    return Markup("".join(  # noqa: S704 - counts and _linked's escaped name
        f'<tr><td>{_linked(r, data.players)}</td><td>{r.together}</td><td>{r.same_team}</td><td>{r.opposite}</td>'
        f"<td>{r.wins}</td><td>{r.their_wins}</td></tr>" for r in rivals))


def _linked(rival: Rival, players: Mapping[int, object]) -> Markup:
    """A rival's name, a link to their page where they have one (in the same folder as the page it is on)."""
    name = escape(rival.name)
    return Markup(f'<a href="{rival.user_id}.html">{name}</a>') if rival.user_id in players else name  # noqa: S704


@dataclass
class Rival:
    """Two members' games at the same table: together, on one team, against each other, and each one's wins."""

    user_id: int
    name: str
    """The name at the latest game they shared (protocols come newest first)."""
    together: int = 0
    same_team: int = 0
    opposite: int = 0
    wins: int = 0
    their_wins: int = 0

    def count(self, *, same_team: bool, won: bool, they_won: bool) -> None:
        """Add one shared game."""
        self.together += 1
        self.same_team += int(same_team)
        self.opposite += int(not same_team)
        self.wins += int(won)
        self.their_wins += int(they_won)


def write_pages(data: SiteData, out: Path, *, workers: int | None = None,
                languages: Sequence[str] = LANGUAGES) -> int:
    """Render every page of ``build_pages`` into files under ``out``; the number written (``write_site_pages``)."""
    return write_site_pages(Site(data, languages), out, workers=workers)


def write_site_pages(site: Site, out: Path, *, workers: int | None = None) -> int:
    """Render every page of ``site`` straight into files under ``out``; the number written.

    A page is written as soon as it is rendered, so a league of 10,000 games never holds its
    30,000 pages in memory at once. Rendering is Python work, one core's worth per process: with
    ``workers`` above one (by default one more than the machine's cores, at most ``MAX_WORKERS``) forked
    processes render a share of the pages each; they inherit what was read, so nothing is sent to them,
    and send back only the games' file digests they made for the pages' links (``write_files`` names the files by them).
    """
    site.prepare()
    fixed = {**{name: site.asset(name) for name in ASSETS}, "index.html": site.redirect()}
    written = write_site(fixed, out) + write_fonts(out)
    # A page's languages go to the same process: its game's digest (for the files' names) is made once.
    jobs = [(language, path) for path in site.paths() for language in site.languages]
    count = _worker_count(workers, len(jobs))
    if count <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return written + _render_share(site, jobs, out)[0]
    step = len(site.languages)
    shares = [[job for start in range(i * step, len(jobs), count * step) for job in jobs[start:start + step]]
              for i in range(count)]
    with _forking(site), ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork")) as pool:
        for rendered, digests in pool.map(_render_forked, [(share, out) for share in shares]):
            written += rendered
            site._digests.update(digests)
        return written


MAX_WORKERS = 8
_forked: Site | None = None


def _worker_count(workers: int | None, jobs: int) -> int:
    """The processes to fork for ``jobs``: ``workers``, or by default one more than the cores.

    The processes write tens of thousands of files and wait on the disk meanwhile: with one process
    per core a first build of 10,000 games kept the two cores here 72% busy in its files step (62.3 s
    in all), with one more 94% (56.3 s; ``benchmarks/site.py`` and ``--workers``).
    """
    return min(workers if workers is not None else (os.cpu_count() or 1) + 1, MAX_WORKERS, jobs)


@contextmanager
def _forking(site: Site) -> Iterator[None]:
    """Processes forked in here inherit ``site``; the parent's objects are kept out of the collector meanwhile.

    What was read is shared with the forked processes: a collector's pass would walk (and so copy into
    each process) every page of memory the league's millions of objects sit in. Frozen only while
    the pool lives: frozen for good, every league a process built would stay in memory.
    """
    global _forked
    _forked = site
    gc.freeze()
    try:
        yield
    finally:
        _forked = None
        gc.unfreeze()


def _render_forked(share: tuple[list[tuple[str, str]], Path]) -> tuple[int, dict[int, str]]:
    assert _forked is not None  # noqa: S101 - set before the pool forked
    return _render_share(_forked, *share)


def _render_share(site: Site, jobs: list[tuple[str, str]], out: Path) -> tuple[int, dict[int, str]]:
    folders: set[Path] = set()
    for language, path in jobs:
        page = site.render(language, path)
        assert page is not None  # noqa: S101 - every listed path has a page
        target = out / language / path
        if target.parent not in folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            folders.add(target.parent)
        target.write_text(page, encoding="utf-8")
    return len(jobs), site._digests


def write_fonts(out: Path) -> int:
    """The sheets' typeface and its licence under ``out/fonts``, where missing or not the same; how many files."""
    for path in FONTS:
        content = _font_file(path)
        target = out / path
        if not (target.is_file() and target.read_bytes() == content):
            _write_file(target, content)
    return len(FONTS)


def write_site(pages: Mapping[str, str], out: Path) -> int:
    """Write the pages under ``out`` (made if missing); the number of files written."""
    for path, text in pages.items():
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return len(pages)


async def write_files(store: Store, site: Site, out: Path, *, workers: int | None = None) -> int:
    """Write the games' files the folder lacks and delete those no page links to; how many files it keeps.

    Files are named by what they hold, so one already there from an earlier build is still right:
    each folder is listed once, and only a game with a file missing is read or drawn. A first build
    makes every game's: the logs are read from the store here, ``FILE_CHUNK`` games to a query, while
    ``workers`` forked processes (as the pages are rendered) write the sheets and turn the logs into
    the exports, a chunk at a time.
    """
    wanted = site.game_files()
    missing = _missing(site, out)
    chunks = [list(missing.items())[start:start + FILE_CHUNK] for start in range(0, len(missing), FILE_CHUNK)]
    count = _worker_count(workers, len(chunks))
    if count <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for chunk in chunks:
            logged = _logged(site, chunk)
            _make_files(site, _FileChunk(chunk, {g.id: g for g in await store.get_games(logged)} if logged else {}),
                        out)
        return len(wanted)
    loop = asyncio.get_running_loop()
    with _forking(site), ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork")) as pool:
        await asyncio.gather(*(loop.run_in_executor(pool, _make_files_forked, _FileChunk(chunk, None, store.url), out)
                               for chunk in chunks))
    return len(wanted)


def _missing(site: Site, out: Path) -> dict[int, list[str]]:
    """The files the folder lacks, by game; those no page links to any more are deleted."""
    wanted = site.game_files()
    there: set[str] = set()
    for folder in (out / "games", *(out / language / "games" for language in site.languages)):
        for old in files.stale(folder, {p.rsplit("/", 1)[-1] for p in wanted}, (*files.TYPES, *files.FORMER)):
            old.unlink()
        if folder.is_dir():
            there.update(p.relative_to(out).as_posix() for p in folder.iterdir())
    missing: dict[int, list[str]] = {}
    for name in wanted:
        if name not in there:
            missing.setdefault(wanted[name][0], []).append(name)
    return missing


FILE_CHUNK = 50
"""Games whose files a forked process makes at a time (their logs read from the store in one go)."""


@dataclass
class _FileChunk:
    """Some games' missing files, by name, and the logs of those among them with an export to write.

    Read here, or (``games`` None) by the forked process that makes the files, through a connection
    of its own to ``url``: sent from here, the logs cost more to pickle and unpickle than to read.
    """

    names: list[tuple[int, list[str]]]
    games: dict[int, StoredGame] | None
    url: str = ""


def _logged(site: Site, names: list[tuple[int, list[str]]]) -> list[int]:
    """The games of ``names`` with an export to write (which is made from the game's log)."""
    wanted = site.game_files()
    return [gid for gid, made in names if any(wanted[name][1] != "sheet" for name in made)]


_engines: dict[str, Engine] = {}
"""A forked process's own engine, by the database's address: made on its first chunk, kept for the next."""


def _make_files(site: Site, job: _FileChunk, out: Path) -> int:
    """Write a chunk's files: each sheet drawn as SVG, each game's exports made once for its three files."""
    wanted = site.game_files()
    games = job.games
    if games is None:
        logged = _logged(site, job.names)
        engine = _engines.get(job.url) or _engines.setdefault(job.url, make_engine(job.url))
        games = {game.id: game for game in read_games(engine, logged)} if logged else {}
    for folder in (out / "games", *(out / language / "games" for language in site.languages)):
        folder.mkdir(parents=True, exist_ok=True)  # once a chunk, not once a file
    for game_id, names in job.names:
        protocol = site.protocol(game_id)
        exports: dict[files.Kind, bytes] | None = None
        for name in names:
            _gid, kind, language = wanted[name]
            if kind == "sheet":
                _write_into(out / name, files.sheet(protocol, site.data.hidden, language))
                continue
            if exports is None:
                exports = files.exports(games[game_id], protocol, site.data.hidden)
            _write_into(out / name, exports[kind])
    return sum(len(names) for _gid, names in job.names)


def _write_file(target: Path, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_into(target, content)


def _write_into(target: Path, content: bytes) -> None:
    """Write ``target`` into its folder, whole or not at all: a stopped build leaves no half file to keep."""
    temporary = f"{target.parent}/.{target.name}.part"
    with open(temporary, "wb") as file:  # a first build writes 60,000: no Path made for each
        file.write(content)
    os.replace(temporary, target)


def _make_files_forked(job: _FileChunk, out: Path) -> int:
    assert _forked is not None  # noqa: S101 - set before the pool forked
    return _make_files(_forked, job, out)


async def build_site(store: Store, guild_id: int, out: Path, *, now: datetime,
                     workers: int | None = None) -> int | None:
    """Build and write the server's pages (``write_site_pages``) and the games' files (``write_files``).

    None (and nothing written) while the pages are off.
    """
    with holding_league():
        data = await read_site(store, guild_id, now=now)
    if data is None:
        return None
    site = Site(data)
    written = await asyncio.to_thread(write_site_pages, site, out, workers=workers)
    return written + await write_files(store, site, out, workers=workers)
