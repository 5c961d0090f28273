"""A finished game's protocol stored once, so the club's pages read rows instead of replaying every log.

Revision ID: 0017_site_protocols
Revises: 0016_fleet_liveness
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_site_protocols"
down_revision: str | None = "0016_fleet_liveness"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``protocols``, empty: games that ended before are stored the first time their league is read."""
    op.create_table(
        "protocols",
        sa.Column("game_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("shape", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_protocols_game_id_games"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_protocols")),
    )


def downgrade() -> None:
    """Drop it: protocols are built from the logs again."""
    op.drop_table("protocols")
