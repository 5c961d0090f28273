"""Tournaments: finals and their weight, and where the registration announcement is.

Revision ID: 0008_t2b
Revises: 0007_t2a
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_t2b"
down_revision: str | None = "0007_t2a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the finals (how many last rounds, their multiplier as exact decimal text) and the announcement."""
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("finals", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("finals_weight", sa.String(length=16), nullable=False, server_default="1"))
        batch.add_column(sa.Column("announcement_channel_id", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("announcement_message_id", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Drop them: every round counts once again, and the announcement is forgotten."""
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("announcement_message_id")
        batch.drop_column("announcement_channel_id")
        batch.drop_column("finals_weight")
        batch.drop_column("finals")
