from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from mafiabot.store import Store, make_engine, upgrade
from mafiabot.store.db import alembic_config, current_revision, listed_head, sqlite_url
from mafiabot.store.models import metadata


def _head() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def test_fresh_database_upgrades_to_head_and_matches_the_models(store_url: str) -> None:
    upgrade(store_url)
    upgrade(store_url)  # a second run at head changes nothing
    engine = make_engine(store_url)
    try:
        assert current_revision(engine) == _head()
        with engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}), metadata)
            tables = set(inspect(connection).get_table_names())
            columns = {c["name"] for c in inspect(connection).get_columns("results")}
    finally:
        engine.dispose()
    assert diff == []
    assert tables == set(metadata.tables) | {"alembic_version"}
    assert {"points", "extra_points", "best_move_black", "removed", "display_name"} <= columns


def test_downgrade_to_base_and_up_again(store_url: str) -> None:
    from alembic import command

    engine = make_engine(store_url)
    try:
        upgrade(store_url)
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "base")
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        upgrade(store_url)
        assert set(inspect(engine).get_table_names()) == set(metadata.tables) | {"alembic_version"}
    finally:
        engine.dispose()


async def test_open_migrates_and_uses_wal_on_sqlite(store_url: str, backend: str) -> None:
    store = await Store.open(store_url)
    try:
        assert store.dialect == {"sqlite": "sqlite", "postgres": "postgresql"}[backend]
        if backend == "sqlite":
            with store.engine.connect() as connection:
                assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
                assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert current_revision(store.engine) == _head()
    finally:
        await store.close()


def test_the_head_read_from_the_files_is_alembics_head() -> None:
    """A start skips alembic when the database is at the head read from the files: it must be alembic's."""
    assert listed_head() == _head()


def test_a_start_on_a_database_at_the_newest_schema_imports_no_alembic(tmp_path: Path) -> None:
    """Alembic, mako and pygments cost each start of the bot over a second: only a migration needs them."""
    url = sqlite_url(tmp_path / "mafia.sqlite3")
    upgrade(url)
    script = f"""
import asyncio, sys
import mafiabot.host.process, mafiabot.tools.cli
from mafiabot.store import Store
from mafiabot.tools.cli import database_ready

async def main() -> None:
    await (await Store.open({url!r})).close()

print(database_ready({url!r}))
asyncio.run(main())
print(sorted(m for m in sys.modules if m.split(".")[0] in ("alembic", "mako", "pygments")))
"""
    done = subprocess.run(  # noqa: S603 (our own interpreter, our own code)
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True,
    )
    assert done.stdout.splitlines()[-2:] == [f"{url}: at the newest schema ({_head()})", "[]"]
