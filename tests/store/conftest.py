"""Fixtures for the store: every test runs on a SQLite file and on PostgreSQL.

PostgreSQL is looked for at 127.0.0.1:5432, database ``test`` (user root, then postgres), or at
``MAFIABOT_TEST_POSTGRES_URL``. Each test gets a fresh schema that is dropped afterwards, so runs
never see each other's rows. Where no server answers, the PostgreSQL half skips with the reason,
and the summary says so; with ``MAFIABOT_REQUIRE_POSTGRES=1`` (CI) it fails instead.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import pytest
from sqlalchemy import create_engine, make_url, text

from engine import Command, EndSpeech, Game, Phase, Role, Ruleset, StartGame, find_ruleset, to_data
from mafiabot.store import SeatInfo, Store, final_from_game, sqlite_url
from mafiabot.testing.harness import migrated_sqlite

POSTGRES_URL_ENV = "MAFIABOT_TEST_POSTGRES_URL"
REQUIRE_POSTGRES_ENV = "MAFIABOT_REQUIRE_POSTGRES"
POSTGRES_CANDIDATES = (
    "postgresql+psycopg://root@127.0.0.1:5432/test",
    "postgresql+psycopg://postgres@127.0.0.1:5432/test",
)

_probe: dict[str, str | None] = {}


def _find_postgres() -> tuple[str | None, str]:
    if "url" not in _probe:
        env = os.environ.get(POSTGRES_URL_ENV)
        candidates = (env,) if env else POSTGRES_CANDIDATES
        failures = []
        _probe["url"] = None
        for url in candidates:
            engine = create_engine(url, connect_args={"connect_timeout": 3})
            try:
                with engine.connect() as connection:
                    connection.execute(text("SELECT 1"))
            except Exception as exc:
                where = make_url(url)
                failures.append(f"{where.host}:{where.port or 5432} ({where.username}): {str(exc).splitlines()[0]}")
                continue
            finally:
                engine.dispose()
            _probe["url"] = url
            break
        _probe["reason"] = "; ".join(failures)
    return _probe["url"], _probe["reason"] or ""


def postgres_base_url() -> str:
    """The reachable PostgreSQL URL, or skip (fail where CI requires PostgreSQL)."""
    url, reason = _find_postgres()
    if url is None:
        message = f"PostgreSQL is not reachable: {reason}"
        if os.environ.get(REQUIRE_POSTGRES_ENV) == "1":
            pytest.fail(f"{message} ({REQUIRE_POSTGRES_ENV}=1 makes these tests mandatory)")
        pytest.skip(message)
    return url


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if "url" not in _probe:
        return
    url, reason = _probe["url"], _probe.get("reason")
    if url is None:
        terminalreporter.write_line(f"store: PostgreSQL tests SKIPPED, server not reachable: {reason}", yellow=True)
    else:
        terminalreporter.write_line(f"store: PostgreSQL tests ran against {make_url(url).render_as_string()}")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_url(backend: str, tmp_path: Any) -> Iterator[str]:
    """A URL to an empty database of the backend: a new SQLite file or a new PostgreSQL schema."""
    if backend == "sqlite":
        yield sqlite_url(tmp_path / "mafia.db")
        return
    with postgres_schema() as url:
        yield url


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL to a new, empty PostgreSQL schema, dropped afterwards (skips when no server answers)."""
    base = postgres_base_url()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
async def store(store_url: str, backend: str) -> AsyncIterator[Store]:
    """The store of ``store_url``, at the newest schema (a SQLite file is a copy of one migrated once)."""
    if backend == "sqlite":
        migrated_sqlite(Path(str(make_url(store_url).database)))
    opened = await Store.open(store_url)
    try:
        yield opened
    finally:
        await opened.close()


T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
"""A fixed evening: tests never read the clock."""


@dataclass
class Scripted:
    """A game played with the engine and stored command by command, as the runtime will do it."""

    store: Store
    game_id: int
    game: Game
    at: datetime
    seq: int = 0
    applied: list[Command] = field(default_factory=list)

    async def run(self, *commands: Command, actor_id: int | None = None) -> None:
        for command in commands:
            events = self.game.apply(command)
            self.seq += 1
            self.at += timedelta(seconds=1)
            await self.store.append(
                self.game_id, self.seq, to_data(command), [to_data(e) for e in events], actor_id=actor_id, at=self.at
            )
            self.applied.append(command)

    async def end_floors(self) -> None:
        """Everyone who gets the floor says "thank you" at once, until nobody holds it."""
        state = self.game.state
        while state.floor is not None and not state.paused:
            await self.run(EndSpeech(seat=state.floor.seat))

    async def finish(self) -> None:
        await self.store.finish_game(self.game_id, final_from_game(self.game), at=self.at)

    @property
    def phase(self) -> Phase:
        return self.game.state.phase


class StartScripted(Protocol):
    """The ``start_game`` fixture: create, seat and start a game."""

    def __call__(
        self, guild_id: int, ruleset: str | Ruleset, users: Sequence[int], roles: Sequence[Role], *,
        at: datetime = ..., channel_id: int = ...,
    ) -> Awaitable[Scripted]: ...


@pytest.fixture
def start_game(store: Store) -> StartScripted:
    """Create, seat and start a game: ``await start_game(guild, ruleset, users, roles, at=...)``."""

    async def start(
        guild_id: int,
        ruleset: str | Ruleset,
        users: Sequence[int],
        roles: Sequence[Role],
        *,
        at: datetime = T0,
        channel_id: int = 555,
    ) -> Scripted:
        rules = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
        game_id = await store.create_game(
            guild_id=guild_id, channel_id=channel_id, ruleset=rules, judge_id=9, created_at=at
        )
        scripted = Scripted(store, game_id, Game(rules), at)
        await scripted.run(StartGame(players=len(users), roles=tuple(roles)))
        seated = enumerate(zip(users, roles, strict=True), start=1)
        await store.seat_players(game_id, [SeatInfo(i, u, f"Player {u}", role.value) for i, (u, role) in seated])
        return scripted

    return start
