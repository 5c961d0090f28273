"""Stream links: who may open which tier of a table's live feed, kept across restarts.

A link is its token; only the token's SHA-256 is stored, so the database alone opens no stream.
Issuing a table's links again revokes the ones before, so a leaked link is closed by handing out
new ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import col, select

from mafiabot.store.db import Repository, aware, now
from mafiabot.store.models import StreamLinkRow


def token_hash(token: str) -> str:
    """What the store keeps of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class StreamLink:
    """One link as the web server needs it."""

    game_id: int
    tier: str
    delay: float
    revoked: bool
    expires_at: datetime | None

    def opens(self, at: datetime) -> bool:
        """Whether the link still opens at ``at``."""
        return not self.revoked and (self.expires_at is None or at < self.expires_at)


class StreamLinkRepo(Repository):
    """The tables' stream links."""

    async def issue_links(self, game_id: int, tokens: Mapping[str, str], delay: float, *,
                          at: datetime | None = None) -> None:
        """Store ``tokens`` (tier to token) for the game, revoking every link it had before."""
        when = aware(at or now(), "at")
        await self._db.call(self._issue, game_id, dict(tokens), delay, when)

    def _issue(self, game_id: int, tokens: dict[str, str], delay: float, when: datetime) -> None:
        with self._db.write() as s, s.begin():
            for row in s.exec(select(StreamLinkRow).where(StreamLinkRow.game_id == game_id,
                                                          col(StreamLinkRow.revoked_at).is_(None))):
                row.revoked_at = when
                s.add(row)
            for tier, token in tokens.items():
                s.add(StreamLinkRow(game_id=game_id, tier=tier, token_hash=token_hash(token),
                                    delay=delay if tier == "broadcast" else 0.0, created_at=when))

    async def revoke_links(self, game_id: int, *, at: datetime | None = None) -> int:
        """Revoke every open link of the game; how many were open."""
        return await self._db.call(self._revoke, game_id, aware(at or now(), "at"))

    def _revoke(self, game_id: int, when: datetime) -> int:
        with self._db.write() as s, s.begin():
            rows = list(s.exec(select(StreamLinkRow).where(StreamLinkRow.game_id == game_id,
                                                           col(StreamLinkRow.revoked_at).is_(None))))
            for row in rows:
                row.revoked_at = when
                s.add(row)
            return len(rows)

    async def expire_links(self, game_id: int, at: datetime) -> None:
        """The game is over: its links open until ``at`` and no longer (an earlier expiry stays)."""
        await self._db.call(self._expire, game_id, aware(at, "at"))

    def _expire(self, game_id: int, at: datetime) -> None:
        with self._db.write() as s, s.begin():
            for row in s.exec(select(StreamLinkRow).where(StreamLinkRow.game_id == game_id)):
                if row.expires_at is None or row.expires_at > at:
                    row.expires_at = at
                    s.add(row)

    async def stream_link(self, token: str) -> StreamLink | None:
        """The link of ``token``, revoked or not; None for a token never issued."""
        return await self._db.call(self._link, token_hash(token))

    def _link(self, digest: str) -> StreamLink | None:
        with self._db.read() as s:
            row = s.exec(select(StreamLinkRow).where(StreamLinkRow.token_hash == digest)).first()
            if row is None:
                return None
            return StreamLink(row.game_id, row.tier, row.delay, row.revoked_at is not None, row.expires_at)
