"""Engines and migrations: how the store reaches SQLite or PostgreSQL.

SQLite is the default and runs in WAL mode, so readers never wait for the writer. Python's
sqlite3 module opens transactions lazily and only before DML, which would leave DDL outside any
transaction and let a read-then-write transaction deadlock instead of waiting; so the driver's own
transaction handling is switched off and every transaction starts with an explicit ``BEGIN`` —
``BEGIN IMMEDIATE`` for writers, so a second process waits (``busy_timeout``) rather than failing.

Migrations run in code, from the ``mafiabot/migrations`` folder next to this package, so an
installed bot upgrades its database with no ``alembic.ini`` anywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry

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
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if backend == "postgresql":
        return create_engine(parsed, pool_pre_ping=True)
    raise ValueError(f"unsupported database {backend!r}: use sqlite:///path or postgresql+psycopg://...")


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
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade_engine(engine: Engine, revision: str = "head") -> None:
    """Migrate the database behind ``engine`` to ``revision`` in one transaction."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        command.upgrade(alembic_config(connection), revision)


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at ``url`` to ``revision`` (``mafiabot db upgrade``); it blocks."""
    engine = make_engine(url)
    try:
        upgrade_engine(engine, revision)
    finally:
        engine.dispose()


def current_revision(engine: Engine) -> Any:
    """The revision the database is at, or None for an empty database."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        connection.execution_options(**{READ_ONLY: True})
        return MigrationContext.configure(connection).get_current_revision()
