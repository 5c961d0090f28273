"""Each process's liveness lock: a killed process's shards are taken over at once, not at lease expiry.

Revision ID: 0016_fleet_liveness
Revises: 0015_site_hide
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_fleet_liveness"
down_revision: str | None = "0015_site_hide"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``lease_members.lock_key`` (NULL: a process without one, taken over at lease expiry as before)."""
    with op.batch_alter_table("lease_members") as batch:
        batch.add_column(sa.Column("lock_key", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop it: every takeover waits for the lease to run out again."""
    with op.batch_alter_table("lease_members") as batch:
        batch.drop_column("lock_key")
