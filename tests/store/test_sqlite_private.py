"""The SQLite file holds the server's members and games: only the bot's user may read it."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mafiabot.store import Store, make_engine, sqlite_url, upgrade
from mafiabot.store.db import current_revision, head_revision
from mafiabot.testing import migrated_sqlite


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that lets everyone read new files, as on most hosts."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def modes(db: Path) -> dict[str, int]:
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    return {f.name: stat.S_IMODE(f.stat().st_mode) for f in files if f.exists()}


@pytest.mark.usefixtures("open_umask")
async def test_the_store_creates_its_sqlite_file_and_its_wal_for_the_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    store = await Store.open(sqlite_url(db))
    try:
        await store.guild_rulesets(1)  # the store is open and has read: the file, its -wal and -shm exist
        found = modes(db)
        assert set(found) == {"bot.sqlite3", "bot.sqlite3-wal", "bot.sqlite3-shm"}
        assert found == dict.fromkeys(found, 0o600)
    finally:
        await store.close()


@pytest.mark.usefixtures("open_umask")
def test_db_upgrade_creates_it_for_the_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    upgrade(sqlite_url(db))
    assert modes(db)["bot.sqlite3"] == 0o600


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    upgrade(sqlite_url(db))
    db.chmod(0o640)  # a host who shares it with a backup group on purpose
    upgrade(sqlite_url(db))
    assert modes(db)["bot.sqlite3"] == 0o640


@pytest.mark.usefixtures("open_umask")
def test_the_tests_copy_of_a_migrated_store_is_at_the_newest_schema_and_the_owners_only(tmp_path: Path) -> None:
    """The harness and the store tests start from a copy of one migrated file instead of migrating each."""
    db = tmp_path / "copy.sqlite3"
    url = migrated_sqlite(db)
    assert url == sqlite_url(db)
    assert modes(db) == {"copy.sqlite3": 0o600}
    engine = make_engine(url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
    with pytest.raises(FileExistsError):
        migrated_sqlite(db)  # never over a store a test already has
