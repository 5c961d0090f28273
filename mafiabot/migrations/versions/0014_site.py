"""The club's pages: whether a server publishes them, and the members who hid their name from them.

Revision ID: 0014_site
Revises: 0013_protests
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_site"
down_revision: str | None = "0013_protests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``site_pages`` (off: nothing is public until the staff turn it on) and ``site_hidden``."""
    with op.batch_alter_table("guild_settings") as batch:
        batch.add_column(sa.Column("site_pages", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "site_hidden",
        sa.Column("guild_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("guild_id", "user_id"),
    )


def downgrade() -> None:
    """Drop both: the pages are off again and every name shows."""
    op.drop_table("site_hidden")
    with op.batch_alter_table("guild_settings") as batch:
        batch.drop_column("site_pages")
