"""Games: when the process running each open game was last known alive.

Revision ID: 0010_restart
Revises: 0009_tchannels
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_restart"
down_revision: str | None = "0009_tchannels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``seen_at``: a restart keeps the time left on the clock as it was at this moment."""
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("seen_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Drop it: a restart counts the time the bot was down as spent again."""
    with op.batch_alter_table("games") as batch:
        batch.drop_column("seen_at")
