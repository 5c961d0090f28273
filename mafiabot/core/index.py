"""The running tables, found by game, text channel, voice channel or guild without a scan.

Every voice change, click and command looks its table up; with hundreds of tables in one process
a scan of all of them per lookup was a measurable share of the bot's CPU (``docs/performance.md``).
A table's guild and channels never change while it runs, so the side indexes are set on ``add``
and dropped on ``pop``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table


def _first(tables: dict[int, Table] | None) -> Table | None:
    return next(iter(tables.values()), None) if tables else None


class TableIndex(Mapping[int, "Table"]):
    """Running tables by game id, with lookups by channel, voice channel and guild.

    A finished table may still be tracked while a new one opens in its channel; as a scan in
    insertion order did, a lookup by channel gives the older one until it is dropped.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, Table] = {}
        self._by_channel: dict[int, dict[int, Table]] = {}
        self._by_voice: dict[int, dict[int, Table]] = {}
        self._by_guild: dict[int, dict[int, Table]] = {}

    def __getitem__(self, game_id: int) -> Table:
        return self._by_id[game_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._by_id)

    def __len__(self) -> int:
        return len(self._by_id)

    def _keys(self, table: Table) -> tuple[tuple[dict[int, dict[int, Table]], int], ...]:
        return (self._by_channel, table.channel_id), (self._by_voice, table.voice_channel_id), \
            (self._by_guild, table.guild_id)

    def add(self, table: Table) -> None:
        """Track a table (replacing one of the same game id)."""
        self.pop(table.id)
        self._by_id[table.id] = table
        for index, key in self._keys(table):
            index.setdefault(key, {})[table.id] = table

    def pop(self, game_id: int) -> Table | None:
        """Stop tracking a game's table; the table, or None if there was none."""
        table = self._by_id.pop(game_id, None)
        if table is None:
            return None
        for index, key in self._keys(table):
            group = index.get(key, {})
            group.pop(table.id, None)
            if not group:
                index.pop(key, None)
        return table

    def in_channel(self, channel_id: int) -> Table | None:
        """The table of a text channel."""
        return _first(self._by_channel.get(channel_id))

    def in_voice(self, voice_channel_id: int) -> Table | None:
        """The table that uses a voice channel."""
        return _first(self._by_voice.get(voice_channel_id))

    def in_guild(self, guild_id: int) -> list[Table]:
        """The guild's tables, in the order they were added."""
        return list(self._by_guild.get(guild_id, {}).values())
