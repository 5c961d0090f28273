"""One table per text and per voice channel; lobbies in the database; the ``strict_tables`` setting.

Before this revision two ``/mafia new`` at once could bind two tables to one voice channel, and a
double ``/mafia start`` could leave an open game with no seats that blocked its channel after a
restart. The upgrade first closes what that left behind (open games that never started, then every
open game but the newest of a channel), so the unique indexes can be built.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HOLDS = "status IN ('lobby', 'open')"


def upgrade() -> None:
    """Close the leftovers, then let the database keep one live table per channel."""
    games = sa.table("games", sa.column("id", sa.Integer()), sa.column("status", sa.String()),
                     sa.column("last_seq", sa.Integer()), sa.column("channel_id", sa.BigInteger()),
                     sa.column("voice_channel_id", sa.BigInteger()), sa.column("reason", sa.String()))
    op.execute(games.update().where(games.c.status == "open", games.c.last_seq == 0)
               .values(status="abandoned", reason="never_started"))
    for column in ("channel_id", "voice_channel_id"):
        newer = games.alias("newer")
        shadowed = sa.exists().where(
            newer.c.status == "open", newer.c[column] == games.c[column], newer.c.id > games.c.id
        )
        op.execute(games.update().where(games.c.status == "open", games.c[column].is_not(None), shadowed)
                   .values(status="abandoned", reason="shared_channel"))
    for column in ("channel_id", "voice_channel_id"):
        op.create_index(f"uq_games_live_{column}", "games", [column], unique=True,
                        sqlite_where=sa.text(_HOLDS), postgresql_where=sa.text(_HOLDS))
    with op.batch_alter_table("guild_settings") as batch:
        batch.add_column(sa.Column("strict_tables", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    """Drop the indexes and the setting; lobbies are forgotten (the old bot kept them in memory)."""
    with op.batch_alter_table("guild_settings") as batch:
        batch.drop_column("strict_tables")
    op.drop_index("uq_games_live_voice_channel_id", table_name="games")
    op.drop_index("uq_games_live_channel_id", table_name="games")
    op.execute("DELETE FROM games WHERE status = 'lobby'")
