"""Shard leases: which process runs each gateway shard, until when, with a fencing number.

Revision ID: 0012_leases
Revises: 0011_stream
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_leases"
down_revision: str | None = "0011_stream"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the leases, the processes that take part in them, and the IDENTIFY turns of each rate-limit key."""
    op.create_table(
        "shard_leases",
        sa.Column("shard_id", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("fence", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("shard_id", name=op.f("pk_shard_leases")),
    )
    op.create_table(
        "lease_members",
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner", name=op.f("pk_lease_members")),
    )
    op.create_table(
        "identify_turns",
        sa.Column("key", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_identify_turns")),
    )


def downgrade() -> None:
    """Drop them: processes go back to a fixed ``shard_ids`` each."""
    op.drop_table("identify_turns")
    op.drop_table("lease_members")
    op.drop_table("shard_leases")
