"""Stream links: the tiers of a table's live feed, each a link whose token's hash is kept.

Revision ID: 0011_stream
Revises: 0010_restart
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_stream"
down_revision: str | None = "0010_restart"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``stream_links``; a game's links go with the game."""
    op.create_table(
        "stream_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(length=16), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("delay", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_stream_links_game_id_games"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stream_links")),
    )
    op.create_index("ix_stream_links_game_id", "stream_links", ["game_id"])
    op.create_index("uq_stream_links_token_hash", "stream_links", ["token_hash"], unique=True)


def downgrade() -> None:
    """Drop them: every link handed out stops opening."""
    op.drop_index("uq_stream_links_token_hash", table_name="stream_links")
    op.drop_index("ix_stream_links_game_id", table_name="stream_links")
    op.drop_table("stream_links")
