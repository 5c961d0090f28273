"""Protests: a player's protest of a game and the judge's ruling on it.

Revision ID: 0013_protests
Revises: 0012_leases
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_protests"
down_revision: str | None = "0012_leases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``protests``: a protest may come after the game is over, when its log takes no more commands."""
    op.create_table(
        "protests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("filed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("during_game", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("ruled_by", sa.BigInteger(), nullable=True),
        sa.Column("ruled_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_protests_game_id_games"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_protests")),
    )
    op.create_index("ix_protests_game_id", "protests", ["game_id"], unique=False)


def downgrade() -> None:
    """Drop the protests with their rulings."""
    op.drop_index("ix_protests_game_id", table_name="protests")
    op.drop_table("protests")
