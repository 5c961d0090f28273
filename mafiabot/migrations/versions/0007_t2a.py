"""The ``organiser_role_id`` setting: a role whose members run tournaments as Manage Server members do.

Revision ID: 0007_t2a
Revises: 0006_tourney
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_t2a"
down_revision: str | None = "0006_tourney"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """No role for every server, as for a new one: only Manage Server runs tournaments until one is named."""
    with op.batch_alter_table("guild_settings") as batch:
        batch.add_column(sa.Column("organiser_role_id", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Drop the setting."""
    with op.batch_alter_table("guild_settings") as batch:
        batch.drop_column("organiser_role_id")
