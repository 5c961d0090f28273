"""Seat numbers in nicknames: the ``seat_nicknames`` setting and the nickname ledger.

The ledger keeps, for every member the bot renamed to "5 · Anya", the nickname to give back (NULL:
they had none), written before the rename is sent, so a crash never leaves a seat in someone's name.

Revision ID: 0004_fairplay
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_fairplay"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the setting (off) and create ``nick_ledger``."""
    with op.batch_alter_table("guild_settings") as batch:
        batch.add_column(sa.Column("seat_nicknames", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "nick_ledger",
        sa.Column("guild_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("nick", sa.String(length=32), nullable=True),
        sa.Column("renamed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_nick_ledger_game_id_games"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("guild_id", "user_id", name=op.f("pk_nick_ledger")),
    )


def downgrade() -> None:
    """Drop the ledger and the setting (nicknames still owed then stay as they are)."""
    op.drop_table("nick_ledger")
    with op.batch_alter_table("guild_settings") as batch:
        batch.drop_column("seat_nicknames")
