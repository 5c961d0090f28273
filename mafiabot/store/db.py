"""Engines, migrations and the ``Database`` every repository shares: how the store reaches SQLite or PostgreSQL.

SQLite is the default and runs in WAL mode, so readers never wait for the writer. Python's
sqlite3 module opens transactions lazily and only before DML, which would leave DDL outside any
transaction and let a read-then-write transaction deadlock instead of waiting; so the driver's own
transaction handling is switched off and every transaction starts with an explicit ``BEGIN`` —
``BEGIN IMMEDIATE`` for writers, so a second process waits (``busy_timeout``) rather than failing.

Migrations run in code, from the ``mafiabot/migrations`` folder next to this package, so an
installed bot upgrades its database with no ``alembic.ini`` anywhere. Alembic (with the mako and
pygments it pulls in) is imported only when a migration must run: a start on a database already
at the newest schema reads its revision with one query and compares it with the newest file's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeAlias, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.pool import ConnectionPoolEntry
from sqlmodel import Session

from mafiabot.core.errors import GameNotFoundError, StoreError, StoreUnavailableError
from mafiabot.store.models import GameRow, ProtestRow

if TYPE_CHECKING:
    from alembic.config import Config

    from mafiabot.core.leases import Fences

P = ParamSpec("P")
T = TypeVar("T")

GuildFilter: TypeAlias = Callable[[int], bool]
"""Which guilds a call is about (True keeps one): each shard takes only its own."""

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
"""The Alembic environment shipped inside the package."""

READ_ONLY = "mafiabot_read_only"
"""Execution option: this connection only reads, so SQLite may start it with a plain ``BEGIN``."""

BUSY_TIMEOUT_MS = 5000
MIGRATION_LOCK = 0x6D61666961
"""PostgreSQL advisory lock key ("mafia") that serialises migrations of processes starting together."""


def sqlite_url(path: str | Path) -> str:
    """The store URL for a SQLite file at ``path``."""
    return f"sqlite:///{Path(path)}"


def make_engine(url: str) -> Engine:
    """An engine for ``url`` with the settings the store relies on.

    Raises:
        ValueError: the URL names neither SQLite nor PostgreSQL, or an in-memory SQLite database
            (each connection would see its own empty database).
    """
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise ValueError("the store needs a SQLite file, not an in-memory database")
        engine = create_engine(parsed)
        event.listen(engine, "do_connect", functools.partial(_private_sqlite_file, Path(parsed.database)))
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if backend == "postgresql":
        return create_engine(parsed, pool_pre_ping=True)
    raise ValueError(f"unsupported database {backend!r}: use sqlite:///path or postgresql+psycopg://...")


def _private_sqlite_file(path: Path, *_args: object) -> None:
    """Create the SQLite file for its owner only (0600) before SQLite would create it by the umask.

    It holds the server's members and games. SQLite gives the ``-wal`` and ``-shm`` files the mode
    of the database file, so they follow. An existing file keeps the mode its host gave it; any
    other failure (a missing or closed folder) is left for SQLite to report as it always does.
    """
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _sqlite_connect(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    # Switch off the driver's implicit BEGIN; _sqlite_begin issues an explicit one instead.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")  # durable across crashes of the process, which WAL keeps
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    read_only = connection.get_execution_options().get(READ_ONLY, False)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def alembic_config(connection: Connection | None = None, url: str | None = None) -> Config:
    """An Alembic configuration built in code; the migration runs on ``connection`` when given."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


_REVISION = re.compile(r'^revision(?:: [^=]+)? = "([^"]+)"$', re.MULTILINE)
_DOWN_REVISION = re.compile(r'^down_revision(?:: [^=]+)? = (?:None|"([^"]+)")$', re.MULTILINE)


def listed_head() -> str | None:
    """The newest revision as the migration files name it, read as text: no alembic import.

    None when the files do not make one plain chain (a merge, a second head, a line this reading
    does not know): the caller then asks alembic. A test keeps it equal to alembic's head.
    """
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(source), _DOWN_REVISION.search(source)
        if revision is None or down is None:
            return None
        revisions.add(revision[1])
        if down[1] is not None:
            parents.add(down[1])
    heads = revisions - parents
    return next(iter(heads)) if len(heads) == 1 and parents <= revisions else None


def head_revision() -> str | None:
    """The newest revision of the shipped migrations (None: there are none)."""
    listed = listed_head()
    if listed is not None:
        return listed
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def stored_revisions(connection: Connection) -> tuple[str, ...]:
    """The revisions the database on ``connection`` is at (none for an empty database).

    One read of ``alembic_version``, the table alembic keeps them in, without importing alembic.
    """
    if not inspect(connection).has_table("alembic_version"):
        return ()
    return tuple(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())


def upgrade_engine(engine: Engine, revision: str = "head") -> None:
    """Migrate the database behind ``engine`` to ``revision`` in one transaction.

    A database already at the newest revision is left as it is without importing alembic.
    """
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        if revision == "head" and (head := listed_head()) is not None and stored_revisions(connection) == (head,):
            return
        from alembic import command

        command.upgrade(alembic_config(connection), revision)


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at ``url`` to ``revision`` (``mafiabot db upgrade``); it blocks."""
    engine = make_engine(url)
    try:
        upgrade_engine(engine, revision)
    finally:
        engine.dispose()


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for an empty database."""
    with engine.connect() as connection:
        connection.execution_options(**{READ_ONLY: True})
        revisions = stored_revisions(connection)
        if len(revisions) <= 1:
            return revisions[0] if revisions else None
        from alembic.runtime.migration import MigrationContext  # several: alembic says what is wrong

        return MigrationContext.configure(connection).get_current_revision()


def now() -> datetime:
    """The current time in UTC, for rows the caller gave no time for."""
    return datetime.now(UTC)


def aware(value: datetime, what: str) -> datetime:
    """``value`` in UTC; a naive time is refused, since nobody could tell which zone it meant.

    Raises:
        ValueError: ``value`` has no time zone.
    """
    if value.tzinfo is None:
        raise ValueError(f"{what} must carry a time zone: {value!r}")
    return value.astimezone(UTC)


def game_row(s: Session, game_id: int) -> GameRow:
    """The game's row.

    Raises:
        GameNotFoundError: no such game.
    """
    row = s.get(GameRow, game_id)
    if row is None:
        raise GameNotFoundError(game_id)
    return row


def row_id(row: GameRow | ProtestRow) -> int:
    """The id of a game or protest row read back from the database (which always has one)."""
    assert row.id is not None  # noqa: S101  (a row read back from the database has its id)
    return row.id


class Database:
    """One engine, its read-only twin, and the one worker thread every statement runs on.

    One thread keeps the bot's writes in the order it issued them (an append is never overtaken by
    a later one), never blocks the event loop, and needs no async driver, so SQLite and PostgreSQL
    behave the same way. Every repository of the store shares one ``Database``.
    """

    def __init__(self, engine: Engine, executor: ThreadPoolExecutor) -> None:
        """Wrap an engine already migrated; ``open`` is the way to get one."""
        self.engine = engine
        """The synchronous engine; only for tools and tests, never from the event loop."""
        self._reader = engine.execution_options(**{READ_ONLY: True})
        self._executor = executor
        self._closed = False
        self.fencing: Callable[[], Fences] | None = None
        """The shard leases this process holds, when processes share the shards (``mafiabot.core.leases``):
        every write of a game's log or mutes is then refused unless its shard's lease is still ours."""

    def fences(self) -> Fences | None:
        """The leases to check a write against now (read on the event loop), or None: no leases in use."""
        return None if self.fencing is None else self.fencing()

    @classmethod
    async def open(cls, url: str, *, migrate: bool = True) -> Database:
        """Connect to ``url`` and (unless told not to) migrate it to the newest schema.

        Raises:
            ValueError: the URL names an unsupported database.
        """
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mafiabot-store")
        try:
            engine = await asyncio.get_running_loop().run_in_executor(executor, _connect, url, migrate)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(engine, executor)

    async def close(self) -> None:
        """Finish the queued work and release every connection."""
        if self._closed:
            return
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(self._executor, self.engine.dispose)
        self._executor.shutdown(wait=False)

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn`` on the worker thread; a lost or refused connection becomes ``StoreUnavailableError``.

        Raises:
            StoreError: the store is closed.
            StoreUnavailableError: the database could not be reached or dropped the connection.
        """
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._executor, functools.partial(fn, *args, **kwargs)
            )
        except (OperationalError, InterfaceError) as exc:
            raise StoreUnavailableError(str(exc.orig or exc).strip()) from exc

    def write(self) -> Session:
        """A session for a transaction that writes (``BEGIN IMMEDIATE`` on SQLite)."""
        return Session(self.engine, expire_on_commit=False)

    def read(self) -> Session:
        """A session that only reads, so SQLite never makes it wait for the writer."""
        return Session(self._reader, expire_on_commit=False)


class Repository:
    """The base of the store's repositories: each one is a concern of the store over the shared ``Database``."""

    def __init__(self, db: Database) -> None:
        self._db = db


def _connect(url: str, migrate: bool) -> Engine:  # noqa: FBT001  (positional for run_in_executor)
    engine = make_engine(url)
    try:
        if migrate:
            upgrade_engine(engine)
    except BaseException:
        engine.dispose()
        raise
    return engine
