"""The Alembic environment of the store; ``mafiabot.store.db.upgrade`` runs it in code."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from mafiabot.store.db import make_engine
from mafiabot.store.models import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def _online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database: pass a connection or set sqlalchemy.url")
    engine = make_engine(url)
    try:
        with engine.begin() as own:
            _run(own)
    finally:
        engine.dispose()


if context.is_offline_mode():
    _offline()
else:
    _online()
