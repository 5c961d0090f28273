"""The running tables' index: each lookup answers what a scan of every table in insertion order did."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from mafiabot.core.index import TableIndex

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table


@dataclass
class FakeTable:
    """The four ids the index reads."""

    id: int
    guild_id: int
    channel_id: int
    voice_channel_id: int


def scan(tables: list[FakeTable], **wanted: int) -> list[int]:
    """The ids of the tables a scan in insertion order finds."""
    return [tb.id for tb in tables if all(getattr(tb, k) == v for k, v in wanted.items())]


def first(found: list[int]) -> int | None:
    return found[0] if found else None


def ident(table: Table | None) -> int | None:
    return None if table is None else table.id


def test_lookups_match_a_scan_through_adds_and_drops() -> None:
    rng = random.Random(7)
    index, live = TableIndex(), list[FakeTable]()
    for step in range(2000):
        if live and rng.random() < 0.4:
            gone = live.pop(rng.randrange(len(live)))
            assert index.pop(gone.id) is cast("Table", gone)
        else:
            # Few guilds and channels, so finished and new tables often share a channel.
            table = FakeTable(step, rng.randrange(3), rng.randrange(5), rng.choice([0, 11, 12]))
            index.add(cast("Table", table))
            live.append(table)
        assert list(index) == [tb.id for tb in live]
        for key in range(6):
            assert ident(index.in_channel(key)) == first(scan(live, channel_id=key))
            voice = key + 10 if key else 0
            assert ident(index.in_voice(voice)) == first(scan(live, voice_channel_id=voice))
        for guild in range(4):
            assert [tb.id for tb in index.in_guild(guild)] == scan(live, guild_id=guild)


def test_a_table_added_again_is_tracked_once_and_dropping_an_unknown_game_is_harmless() -> None:
    index = TableIndex()
    table = cast("Table", FakeTable(1, 1, 1, 1))
    index.add(table)
    index.add(table)
    assert len(index) == 1
    assert index.in_guild(1) == [table]
    assert index.pop(2) is None
    assert index.pop(1) is table
    assert index.in_channel(1) is None
    assert index.in_guild(1) == []
