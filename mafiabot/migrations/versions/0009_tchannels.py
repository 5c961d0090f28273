"""Tournaments: the channels the bot made for each table, kept so every round plays in the same ones.

Revision ID: 0009_tchannels
Revises: 0008_t2b
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_tchannels"
down_revision: str | None = "0008_t2b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """One row per table the bot made channels for: its text and its voice channel."""
    op.create_table(
        "tournament_channels",
        sa.Column("tournament_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("table_no", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("voice_channel_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_tournament_channels_tournament_id_tournaments"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", "table_no", name=op.f("pk_tournament_channels")),
    )


def downgrade() -> None:
    """Forget them: the channels stay on Discord, and a next round makes new ones."""
    op.drop_table("tournament_channels")
