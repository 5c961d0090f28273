"""The sample pictures the docs show, drawn again by one command: ``mafiabot pictures samples docs/images``.

Each preset plays a club game (the simulator's ``club`` strategy, seeded) through the engine, and
the renderer attaches its pictures command by command, as it does for the bot: so a sample named
``morning`` is the very card the bot posts with the morning's news. Per preset and language it
writes the last card of each kind (``start`` at night zero, ``morning``, ``vote``, ``lift``: by
then the table has the most to show) and the protocol sheet; then the two charts ``docs/playing.md``
shows. The same seed draws the same bytes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from engine import Game, find_ruleset
from engine import events as ev
from mafiabot.host.render import Picture, TableView, render
from mafiabot.tools.simulate import play_club_game

PRESETS = (("classic", 10), ("georgian", 12), ("fiim", 10))
LANGUAGES = ("en", "ru", "ka")
KINDS = ("start", "morning", "vote", "lift")
"""The moments the bot posts the table card at."""
NAMES = ("Анна", "Giorgi", "ნინო", "Дмитрий Соколов", "Lasha", "Мария", "თამარ ბერიძე", "Alex", "Сергей",
         "ლევანი", "Olga Petrova", "Nika")
"""Sample names in the three scripts, some long enough to be cut."""
LEAGUE_NAMES = ("ნინო ბერიძე", "გიორგი კაპანაძე", "თამარ ლომიძე", "ლევან ჩხეიძე", "ანა გელაშვილი",
                "დავით მამულაშვილი", "მარიამ წიკლაური", "ირაკლი ხარაიშვილი", "ეკა ნოზაძე", "საბა ქავთარაძე")
LEAGUE_SEASON = ((7, "0.5"), (7, "0.25"), (6, "0.5"), (6, "0"), (5, "0.25"), (5, "0"), (4, "0.5"), (4, "0.25"),
                 (3, "0"), (2, "0.25"))
"""Wins and extra points of the sample league, already in league order."""
SEASON_START = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
SEEDS = 400
"""Seeds tried for a game that has every kind of card (a lift vote is rare): the first such one is drawn."""


def club_game(preset: str, players: int, seed: int) -> Game:
    """A finished game of the club strategy."""
    return play_club_game(find_ruleset(preset), players, random.Random(seed))


def posted(game: Game, language: str, game_id: int = 1) -> list[Picture]:
    """Every picture the bot posts over ``game``, in order: rendered command by command as the table does."""
    replayed = Game(game.ruleset)
    players = game.state.players
    view = TableView(id=game_id, language=language, ruleset=game.ruleset, seats=tuple(range(101, 101 + players)),
                     names=NAMES[:players], game=replayed, deadline=None)
    pictures: list[Picture] = []
    for command in game.history:
        first = len(replayed.events)
        replayed.apply(command)
        for message in render(view, replayed.events[first:], first=first).messages:
            pictures += [p for p in message.pictures if p.filename not in {q.filename for q in pictures}]
    return pictures


def kind(picture: Picture) -> str:
    """``morning`` of ``table-day-2-morning.png``, ``protocol`` of the sheet."""
    stem = picture.filename.removesuffix(".png")
    return "protocol" if stem.startswith("protocol-") else stem.rsplit("-", 1)[-1]


def _full_game(preset: str, players: int) -> Game:
    """The first seeded game with a card of every kind (one with a lift vote), else the first game."""
    for seed in range(1, SEEDS + 1):
        game = club_game(preset, players, seed)
        if any(isinstance(e, ev.LiftVoteStarted) for e in game.events):
            return game
    return club_game(preset, players, 1)


def game_samples() -> dict[str, Callable[[], bytes]]:
    """The cards and sheets, by file name, each drawn when called."""
    found: dict[str, Callable[[], bytes]] = {}
    for preset, players in PRESETS:
        game = _full_game(preset, players)
        for language in LANGUAGES:
            for picture in posted(game, language):
                name = (f"sheet-{preset}-{language}.png" if kind(picture) == "protocol"
                        else f"card-{preset}-{language}-{kind(picture)}.png")
                found[name] = picture.draw  # the last of a kind wins
    return found


def chart_samples() -> dict[str, Callable[[], bytes]]:
    """The ``/mafia stats`` chart of a Russian member and a Georgian ``/mafia top``, as the commands draw them.

    The charts' words come from the commands' own module (the tools sit above the cogs).
    """
    from cogs.texts import history
    from mafiabot.host.pictures.charts import draw_league, draw_stats
    from mafiabot.store import LeagueRow, PlayerStats, RatingPoint, WinCount

    rulesets = ("classic", "classic", "fiim", "classic", "fiim", "classic", "classic")
    ratings = (1485.0, 1497.5, 1510.0, 1503.25, 1521.0, 1490.0, 1512.5)
    points = [RatingPoint(100 + i, ruleset, SEASON_START + timedelta(days=i), rating)
              for i, (ruleset, rating) in enumerate(zip(rulesets, ratings, strict=True))]
    by_role = {"don": WinCount(2, 1), "sheriff": WinCount(1, 1), "citizen": WinCount(4, 2)}
    games, wins = sum(c.games for c in by_role.values()), sum(c.wins for c in by_role.values())
    stats = PlayerStats(guild_id=1, user_id=7, ruleset=None, games=games, wins=wins, draws=0, losses=games - wins,
                        win_rate=wins / games, points=Decimal(wins), extra_points=Decimal(0), fouls=0, removals=0,
                        best_moves=0, best_move_black=0, by_role=by_role, by_team={}, ratings={})
    rows = [LeagueRow(rank=i, user_id=i, display_name=name, games=8, wins=wins, points=wins + Decimal(extra),
                      extra_points=Decimal(extra), win_rate=wins / 8)
            for i, (name, (wins, extra)) in enumerate(zip(LEAGUE_NAMES, LEAGUE_SEASON, strict=True), start=1)]
    chart = history.stats_chart("ru", "Алиса Ёжикова", stats, points)
    table = history.league_chart("ka", rows, "month", "georgian")
    if chart is None or table is None:
        raise ValueError("the sample member and league must have something to chart")
    return {"chart-stats-ru.png": lambda: draw_stats(chart).png, "chart-top-ka.png": lambda: draw_league(table).png}


def write_samples(folder: Path, *, only: Sequence[str] = ()) -> list[Path]:
    """Draw every sample into ``folder`` (or those whose names start with one of ``only``); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in {**game_samples(), **chart_samples()}.items():
        if only and not name.startswith(tuple(only)):
            continue
        path = folder / name
        path.write_bytes(draw())
        written.append(path)
    return written
