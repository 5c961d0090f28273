"""The files a game or a tournament is exported as, the same from ``/mafia`` and from the command line.

``json`` and ``csv`` are the bot's own format (``mafiabot.store.export``); ``mafiaratings`` and
``polemica`` the rating sites' (``mafiabot.core.federation``, refused with the reason for a game they
cannot hold); ``pdf`` the FIIM protocol blank (``mafiabot.host.pictures.form``). A tournament's
file holds every played game in order of play. docs/federation.md says which site takes which.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal, get_args

from mafiabot.core.federation import Format, Placement, federation_json, seat_lines, tournament_order
from mafiabot.core.ports import History
from mafiabot.core.protocol import Protocol
from mafiabot.core.records import StoredGame, StoredTournament
from mafiabot.host.i18n import t
from mafiabot.host.pictures.form import FormGame, draw_form
from mafiabot.store.export import to_data

GameFormat = Literal["json", "csv", "mafiaratings", "polemica", "pdf"]
GAME_FORMATS: tuple[GameFormat, ...] = get_args(GameFormat)
TournamentFormat = Literal["json", "mafiaratings", "polemica", "pdf"]
TOURNAMENT_FORMATS: tuple[TournamentFormat, ...] = get_args(TournamentFormat)
Files = list[tuple[str, bytes]]
Named = Callable[[int | None], str]
"""A judge's name from his Discord id ("" when unknown); the blank's signature line."""


def _nobody(_user_id: int | None) -> str:
    return ""


Record = tuple[StoredGame, Protocol, Placement]


def _files(records: Sequence[Record], fmt: GameFormat | TournamentFormat, stem: str, language: str,
           judge: Named) -> Files:
    """The export of ``records`` in ``fmt`` (not ``csv``: that is one game's sheets)."""
    if fmt in ("mafiaratings", "polemica"):
        site: Format = "mafiaratings" if fmt == "mafiaratings" else "polemica"
        return [(f"{stem}-{fmt}.json", federation_json(site, records).encode("utf-8"))]
    if fmt == "pdf":
        games = [FormGame(protocol, seat_lines(game), tournament=place.tournament, stage=place.stage,
                          table=place.table, number=place.number, judge=judge(game.judge_id))
                 for game, protocol, place in records]
        return [(f"{stem}-fiim.pdf", draw_form(games, language))]
    data = [to_data(game, protocol) for game, protocol, _place in records]
    text = json.dumps(data[0] if len(data) == 1 else data, ensure_ascii=False, indent=2)
    return [(f"{stem}.json", text.encode("utf-8"))]


async def game_files(history: History, game_id: int, fmt: GameFormat, *, language: str = "en",
                     judge: Named = _nobody, place: Placement | None = None) -> Files:
    """The files ``/mafia game format:`` attaches and ``mafiabot export --game`` writes.

    Raises:
        GameNotFoundError: no such game.
        ExportRefusedError: a rating site's format cannot hold the game.
    """
    stem = f"mafia-game-{game_id}"
    if fmt == "json":
        return [(f"{stem}.json", (await history.export_json(game_id)).encode("utf-8"))]
    if fmt == "csv":
        seats = await history.export_csv(game_id, table="seats")
        log = await history.export_csv(game_id, table="log")
        # A byte order mark, so spreadsheets read Cyrillic and Georgian names.
        return [(f"{stem}-seats.csv", seats.encode("utf-8-sig")), (f"{stem}-log.csv", log.encode("utf-8-sig"))]
    game, protocol = await history.game_record(game_id)
    record = (game, protocol, place or Placement())
    return await asyncio.to_thread(_files, [record], fmt, stem, language, judge)


async def tournament_files(history: History, tm: StoredTournament, fmt: TournamentFormat, *, language: str = "en",
                           judge: Named = _nobody, place: Placement | None = None) -> Files:
    """Every played game of ``tm`` in order of play, as one file in ``fmt``.

    ``place`` carries the site's ids the organiser gave (club, event...), for every game.

    Raises:
        ExportRefusedError: a rating site's format cannot hold one of the games (the first).
    """
    records = []
    for game_id, numbers in tournament_order(tm):
        game, protocol = await history.game_record(game_id)
        if protocol.result is None:
            continue  # still being played: its roles are not ours to show
        if protocol.result == "abandoned" and fmt in ("mafiaratings", "polemica"):
            continue  # no result to rate; it counts nowhere in the standings either
        stage = t(language, "form.round", round=numbers.round)
        merged = replace(place or Placement(), tournament=numbers.tournament, stage=stage, round=numbers.round,
                         table=numbers.table, number=numbers.number, factor=numbers.factor)
        records.append((game, protocol, merged))
    return await asyncio.to_thread(_files, records, fmt, f"tournament-{tm.id}", language, judge)
