"""Each server's uploaded rulesets, as rows; ``mafiabot.core.rulesets`` is the catalog that reads them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func
from sqlmodel import col, select

from engine import Ruleset
from mafiabot.core.records import StoredRuleset
from mafiabot.core.rulesets import SaveOutcome
from mafiabot.store.db import Repository, aware, now
from mafiabot.store.models import GuildRulesetRow


class GuildRulesetRepo(Repository):
    """A server's own rulesets by lookup name, with the TOML each came from."""

    async def save_guild_ruleset(
        self, *, guild_id: int, key: str, ruleset: Ruleset, source: str, uploaded_by: int, limit: int,
        at: datetime | None = None,
    ) -> SaveOutcome:
        """Keep a server's ruleset under ``key``, replacing one of that key.

        ``full`` (nothing written) when the server already has ``limit`` others. Games keep their
        own copy, so a replacement changes only tables opened after it.
        """
        row = GuildRulesetRow(
            guild_id=guild_id, key=key, name=ruleset.name, source=source, ruleset=ruleset.to_dict(),
            uploaded_by=uploaded_by, uploaded_at=aware(at or now(), "at"),
        )
        return await self._db.call(self._save_guild_ruleset, row, limit)

    def _save_guild_ruleset(self, row: GuildRulesetRow, limit: int) -> SaveOutcome:
        with self._db.write() as s, s.begin():
            existing = s.get(GuildRulesetRow, (row.guild_id, row.key))
            if existing is None:
                count = s.exec(select(func.count()).select_from(GuildRulesetRow)
                               .where(col(GuildRulesetRow.guild_id) == row.guild_id)).one()
                if count >= limit:
                    return "full"
            s.merge(row)
            return "saved" if existing is None else "replaced"

    async def guild_rulesets(self, guild_id: int) -> list[StoredRuleset]:
        """A server's rulesets, by lookup name."""
        return await self._db.call(self._guild_rulesets, guild_id)

    def _guild_rulesets(self, guild_id: int) -> list[StoredRuleset]:
        with self._db.read() as s:
            rows = s.exec(select(GuildRulesetRow).where(col(GuildRulesetRow.guild_id) == guild_id)
                          .order_by(col(GuildRulesetRow.key))).all()
            return [_stored(row) for row in rows]

    async def get_guild_ruleset(self, guild_id: int, key: str) -> StoredRuleset | None:
        """A server's ruleset by lookup name, if it has one."""
        return await self._db.call(self._get_guild_ruleset, guild_id, key)

    def _get_guild_ruleset(self, guild_id: int, key: str) -> StoredRuleset | None:
        with self._db.read() as s:
            row = s.get(GuildRulesetRow, (guild_id, key))
            return None if row is None else _stored(row)

    async def remove_guild_ruleset(self, guild_id: int, key: str) -> bool:
        """Forget a server's ruleset; False when it had none of that name. Finished games keep theirs."""
        return await self._db.call(self._remove_guild_ruleset, guild_id, key)

    def _remove_guild_ruleset(self, guild_id: int, key: str) -> bool:
        with self._db.write() as s, s.begin():
            row = s.get(GuildRulesetRow, (guild_id, key))
            if row is None:
                return False
            s.delete(row)
            return True


def _stored(row: GuildRulesetRow) -> StoredRuleset:
    return StoredRuleset(
        guild_id=row.guild_id, key=row.key, name=row.name, source=row.source, data=dict(row.ruleset),
        uploaded_by=row.uploaded_by, uploaded_at=row.uploaded_at,
    )
