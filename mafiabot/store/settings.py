"""Each server's settings: language, judge role, default ruleset, timers and the table's manners."""

from __future__ import annotations

import dataclasses

from sqlmodel import col, select

from mafiabot.core.records import GuildSettings
from mafiabot.store.db import Repository
from mafiabot.store.models import GuildSettingsRow, SiteHiddenRow


class SettingsRepo(Repository):
    """A server's settings, saved whole; a server that never saved any has the defaults."""

    async def get_settings(self, guild_id: int, *, default: GuildSettings | None = None) -> GuildSettings:
        """The server's settings; ``default`` (or the built-in defaults) when it never saved any."""
        return await self._db.call(self._get_settings, guild_id, default)

    def _get_settings(self, guild_id: int, default: GuildSettings | None) -> GuildSettings:
        with self._db.read() as s:
            row = s.get(GuildSettingsRow, guild_id)
            if row is None:
                return GuildSettings(guild_id) if default is None else dataclasses.replace(default, guild_id=guild_id)
            return GuildSettings(
                guild_id=row.guild_id,
                language=row.language,
                judge_role_id=row.judge_role_id,
                default_ruleset=row.default_ruleset,
                timers=dict(row.timers),
                vote_window=row.vote_window,
                mute_spectators=row.mute_spectators,
                voice_cues=row.voice_cues,
                results_channel_id=row.results_channel_id,
                strict_tables=row.strict_tables,
                seat_nicknames=row.seat_nicknames,
                judge_sees_roles=row.judge_sees_roles,
                organiser_role_id=row.organiser_role_id,
                site_pages=row.site_pages,
            )

    async def save_settings(self, settings: GuildSettings) -> None:
        """Save the server's settings (already validated by ``GuildSettings`` itself)."""
        row = GuildSettingsRow(
            guild_id=settings.guild_id,
            language=settings.language,
            judge_role_id=settings.judge_role_id,
            default_ruleset=settings.default_ruleset,
            timers=dict(settings.timers),
            vote_window=settings.vote_window,
            mute_spectators=settings.mute_spectators,
            voice_cues=settings.voice_cues,
            results_channel_id=settings.results_channel_id,
            strict_tables=settings.strict_tables,
            seat_nicknames=settings.seat_nicknames,
            judge_sees_roles=settings.judge_sees_roles,
            organiser_role_id=settings.organiser_role_id,
            site_pages=settings.site_pages,
        )
        await self._db.call(self._merge, row)

    def _merge(self, row: GuildSettingsRow) -> None:
        with self._db.write() as s, s.begin():
            s.merge(row)

    async def hide_name(self, guild_id: int, user_id: int, *, hidden: bool = True) -> None:
        """Show the member as their seat on the club's pages (``hidden``), or by name again."""
        await self._db.call(self._hide_name, guild_id, user_id, hidden)

    def _hide_name(self, guild_id: int, user_id: int, hidden: bool) -> None:  # noqa: FBT001 - through _db.call
        with self._db.write() as s, s.begin():
            row = s.get(SiteHiddenRow, (guild_id, user_id))
            if hidden and row is None:
                s.add(SiteHiddenRow(guild_id=guild_id, user_id=user_id))
            elif not hidden and row is not None:
                s.delete(row)

    async def hidden_names(self, guild_id: int) -> frozenset[int]:
        """The members of the server who hid their name from its pages."""
        return await self._db.call(self._hidden_names, guild_id)

    def _hidden_names(self, guild_id: int) -> frozenset[int]:
        with self._db.read() as s:
            return frozenset(s.exec(select(SiteHiddenRow.user_id).where(SiteHiddenRow.guild_id == guild_id)).all())

    async def site_guilds(self) -> list[int]:
        """The servers whose staff turned the club's pages on."""
        return await self._db.call(self._site_guilds)

    def _site_guilds(self) -> list[int]:
        with self._db.read() as s:
            return list(s.exec(select(GuildSettingsRow.guild_id).where(col(GuildSettingsRow.site_pages))).all())
