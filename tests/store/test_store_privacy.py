"""Forgetting a member, and a whole server (SQLite and PostgreSQL).

The server of the club pages' tests (three league games, a finished tournament, a game still being
played) is forgotten in part or whole; every row of every table is then read back and searched for
the member's id and name, and the league, the standings and each game's protocol are held against
what they were before.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import select

from engine import CLASSIC
from mafiabot.core.records import GuildSettings
from mafiabot.core.tournaments import standings_of
from mafiabot.host.site import build_site
from mafiabot.store import SeatInfo, Store
from mafiabot.store.models import metadata
from mafiabot.store.privacy import FORGOTTEN
from tests.store.conftest import T0
from tests.store.test_site import GUILD, HIDDEN, NAMES, NOW, OTHER, PLAYERS, ROOT, _server

GONE = PLAYERS[0]
"""Sat at the first league game and the tournament's, and finished both."""


def _rows(store: Store) -> list[tuple[str, dict[str, Any]]]:
    with store.engine.connect() as connection:
        return [(table.name, dict(row._mapping)) for table in metadata.sorted_tables
                for row in connection.execute(select(table))]


def _mentions(rows: Iterable[tuple[str, dict[str, Any]]], *needles: object) -> list[tuple[str, dict[str, Any]]]:
    """The rows that hold any of ``needles`` whole (an id inside a longer number is another id)."""
    found = re.compile("|".join(rf"(?<![0-9]){re.escape(str(n))}(?![0-9])" for n in needles))
    return [(name, row) for name, row in rows if found.search(repr(row))]


async def _numbers(store: Store, tournament_id: int, games: list[int]) -> tuple[Any, ...]:
    league = [(r.games, r.wins, r.points, r.extra_points) for r in await store.league(GUILD)]
    tm = await store.get_tournament(tournament_id)
    assert tm is not None
    stored = {gid: await store.get_game(gid) for gid in games[-1:]}
    standings = [(s.place, s.games, s.wins, s.total, s.extra) for s in standings_of(tm, stored)]
    protocols = []
    for gid in games:
        p = await store.game_protocol(gid)
        # The whole protocol, every night, vote and point of it, but for who sat at each seat.
        protocols.append(dataclasses.replace(p, seats=tuple(dataclasses.replace(s, user_id=None, display_name="")
                                                            for s in p.seats)))
    return sorted(league), standings, protocols


async def test_a_forgotten_member_leaves_no_trace_and_no_sum_changes(store: Store, tmp_path: Path) -> None:
    games, _running, tournament_id = await _server(store)
    await store.set_discord_meta(games[0], {"judges": [GONE], "votes": {str(GONE): 3}})  # as a table notes them
    others = {u: await store.player_stats(GUILD, u) for u in PLAYERS[1:]}
    before = await _numbers(store, tournament_id, games)
    assert _mentions(_rows(store), GONE, NAMES[GONE])  # the search below can find them

    done = await store.forget_member(GUILD, GONE)

    assert done.refused is None
    assert done.games == 2
    assert _mentions(_rows(store), GONE, NAMES[GONE]) == []
    assert await _numbers(store, tournament_id, games) == before
    assert {u: await store.player_stats(GUILD, u) for u in PLAYERS[1:]} == others
    ghosts = {s.user_id for s in (await store.game_protocol(games[0])).seats if s.display_name == FORGOTTEN}
    assert len(ghosts) == 1
    ghost = next(iter(ghosts))
    assert ghost is not None
    assert ghost < 0
    assert ghosts <= await store.hidden_names(GUILD)
    await build_site(store, GUILD, tmp_path / "site", now=NOW)
    text = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html"))
    assert _mentions([("site", {"text": text})], GONE, NAMES[GONE]) == []
    assert not list((tmp_path / "site").rglob(f"{ghost}.html"))


async def test_a_member_at_a_running_game_is_refused_and_nothing_changes(store: Store) -> None:
    await _server(store)
    rows = _rows(store)

    done = await store.forget_member(GUILD, HIDDEN)  # seated at the game still being played

    assert done.refused == "playing"
    assert _rows(store) == rows


async def test_a_stranger_or_another_server_changes_nothing(store: Store) -> None:
    await _server(store)
    rows = _rows(store)

    assert (await store.forget_member(GUILD, 123)).rows == 0
    assert (await store.forget_member(OTHER, GONE)).rows == 0
    assert _rows(store) == rows


async def test_forgetting_a_server_deletes_its_rows_and_only_its(store: Store) -> None:
    await _server(store)
    await store.save_settings(GuildSettings(OTHER, site_pages=True))
    await store.hide_name(OTHER, GONE)
    elsewhere = await store.create_game(guild_id=OTHER, channel_id=777, ruleset=CLASSIC, judge_id=9, created_at=T0)
    await store.seat_players(elsewhere, [SeatInfo(i, u, NAMES[u], None) for i, u in enumerate(PLAYERS[:10], 1)])
    kept = _mentions(_rows(store), OTHER)
    assert len(kept) == 3

    deleted = await store.forget_guild(GUILD)

    assert deleted > 0
    assert _mentions(_rows(store), GUILD) == []
    assert _mentions(_rows(store), OTHER) == kept
    assert len([name for name, _row in _rows(store) if name == "seats"]) == 10
    assert await store.forget_guild(GUILD) == 0


async def _forget_cli(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "mafiabot", "forget-guild", *args], capture_output=True, text=True,
        check=False, timeout=120, env=environment)


async def test_mafiabot_forget_guild_deletes_only_when_told_yes(store: Store, store_url: str) -> None:
    await _server(store)
    rows = _rows(store)

    unsure = await _forget_cli(str(GUILD), "--database", store_url)
    assert unsure.returncode == 2, unsure.stderr
    assert "--yes" in unsure.stderr
    assert _rows(store) == rows
    bad = await _forget_cli("0", "--yes", "--database", store_url)
    assert bad.returncode == 2, bad.stderr
    assert _rows(store) == rows

    done = await _forget_cli(str(GUILD), "--yes", "--database", store_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{len(rows)} rows of server {GUILD} deleted\n"
    assert _rows(store) == []
