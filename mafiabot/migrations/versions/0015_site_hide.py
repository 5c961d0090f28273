"""A tournament's last rounds kept off the club's pages until it ends, as finals are announced live.

Revision ID: 0015_site_hide
Revises: 0014_site
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_site_hide"
down_revision: str | None = "0014_site"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``site_hidden_rounds`` (0: every round shows, as before)."""
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("site_hidden_rounds", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    """Drop it: every round shows again."""
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("site_hidden_rounds")
